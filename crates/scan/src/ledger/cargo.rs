//! cargo test: libtest's terse listing (`tests::adds: test`) and its stable
//! per-test lines (`test tests::adds ... ok`), read with cargo's own
//! `Running …` and `Doc-tests …` lines in the same stream so that each name
//! carries its target (`alpha:src/lib.rs tests::adds`): two binaries may
//! well both have a `tests::adds`.

use super::{Listing, Outcome, Parsed, Results};
use regex::Regex;
use std::sync::OnceLock;

/// The listing's arguments: the guardrail's, with libtest's output options
/// swapped for `--list --format terse`.
pub(super) fn listing_args(args: &[String]) -> Vec<String> {
    let (cargo, libtest) = split_at_dashes(args);
    let mut out: Vec<String> = cargo.to_vec();
    out.push("--".into());
    let mut i = 0;
    while i < libtest.len() {
        let a = libtest[i].as_str();
        match a {
            "--format" | "--logfile" | "-Z" => i += 2,
            "-q" | "--quiet" | "--nocapture" | "--no-capture" | "--show-output" | "--list"
            | "--report-time" | "--ensure-time" => i += 1,
            _ if a.starts_with("--format=")
                || a.starts_with("--logfile=")
                || a.starts_with("-Z") =>
            {
                i += 1
            }
            _ => {
                out.push(a.to_string());
                i += 1;
            }
        }
    }
    out.extend(["--list", "--format", "terse"].map(String::from));
    out
}

/// Whether libtest would print dots instead of one line per test.
pub(super) fn quiet(args: &[String]) -> bool {
    let (cargo, libtest) = split_at_dashes(args);
    let is_quiet = |a: &String| a == "-q" || a == "--quiet";
    cargo.iter().any(is_quiet)
        || libtest.iter().any(is_quiet)
        || libtest.iter().any(|a| a == "--format=terse")
        || libtest
            .windows(2)
            .any(|w| w[0] == "--format" && w[1] == "terse")
}

fn split_at_dashes(args: &[String]) -> (&[String], &[String]) {
    match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[]),
    }
}

/// The target label a cargo line announces: `Running unittests src/lib.rs
/// (target/debug/deps/alpha-0123abcd…)` → `alpha:src/lib.rs`; `Doc-tests
/// alpha` → `alpha:doc`.
fn target_label(line: &str) -> Option<String> {
    static RUNNING: OnceLock<Regex> = OnceLock::new();
    let running = RUNNING.get_or_init(|| {
        Regex::new(r"^Running (?:unittests )?(?:(.+?) )?\(?([^()\s]+)\)?$").unwrap()
    });
    let t = line.trim();
    if let Some(krate) = t.strip_prefix("Doc-tests ") {
        return Some(format!("{}:doc", krate.trim()));
    }
    let caps = running.captures(t)?;
    let path = caps.get(2)?.as_str();
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let file = file.strip_suffix(".exe").unwrap_or(file);
    let stem = match file.rsplit_once('-') {
        Some((stem, hash)) if hash.len() >= 8 && hash.bytes().all(|c| c.is_ascii_hexdigit()) => {
            stem
        }
        _ => file,
    };
    Some(match caps.get(1) {
        Some(src) => format!("{stem}:{}", src.as_str()),
        None => stem.to_string(),
    })
}

fn labelled(label: &Option<String>, name: &str) -> String {
    match label {
        Some(l) => format!("{l} {name}"),
        None => name.to_string(),
    }
}

/// A line cargo itself prints about a failure to build or run.
fn cargo_error(line: &str) -> Option<&str> {
    let t = line.trim_start();
    t.strip_prefix("error: could not compile ")
        .or_else(|| t.strip_prefix("error: could not execute process "))
        .or_else(|| t.strip_prefix("error: failed to run "))
}

pub(super) fn parse_listing(out: &str) -> Listing {
    let mut label = None;
    let mut tests = Vec::new();
    let mut saw_cargo = false;
    let mut error = false;
    for line in out.lines() {
        let line = line.trim_end_matches('\r');
        if let Some(l) = target_label(line) {
            label = Some(l);
            saw_cargo = true;
            continue;
        }
        let t = line.trim_start();
        if t.starts_with("Finished ") || t.starts_with("Compiling ") {
            saw_cargo = true;
            continue;
        }
        if t.starts_with("error") {
            error = true;
            continue;
        }
        if let Some((name, kind)) = line.rsplit_once(": ") {
            if matches!(kind, "test" | "bench" | "benchmark")
                && !name.is_empty()
                && !name.starts_with(' ')
            {
                tests.push(labelled(&label, name));
            }
        }
    }
    Listing {
        complete: !error && (saw_cargo || !tests.is_empty()),
        files_only: false,
        tests,
    }
}

fn status(s: &str) -> Option<Outcome> {
    match s {
        "ok" => Some(Outcome::Passed),
        "FAILED" => Some(Outcome::Failed),
        "ignored" => Some(Outcome::Ignored),
        _ if s.starts_with("ignored, ") => Some(Outcome::Ignored),
        _ => None,
    }
}

#[derive(Default)]
struct Section {
    label: Option<String>,
    announced: usize,
    seen: usize,
    summarised: bool,
    /// Ended by its summary or by cargo's error line after a crash.
    closed: bool,
}

struct State {
    label: Option<String>,
    sections: Vec<Section>,
    /// A test whose `test NAME ... ` line has no status yet: libtest runs
    /// single-threaded and prints the status after the test's own output.
    pending: Option<String>,
    /// The test most recently reported: a bare status line with nothing
    /// pending belongs to it.
    current: Option<String>,
    entries: Vec<(String, Outcome)>,
}

impl State {
    fn record(&mut self, name: String, outcome: Outcome) {
        if let Some(s) = self.sections.last_mut() {
            s.seen += 1;
        }
        self.entries.push((name, outcome));
    }

    fn forget(&mut self) {
        self.pending = None;
        self.current = None;
    }

    /// One line of test output that is not cargo's: a result, the start of
    /// one, or a bare status. While a test is pending, whole result lines
    /// are its own output: they are recorded (to be cross-checked) but do
    /// not take the status that follows. `depth` bounds the
    /// `test a ... test b ... ok` lines a test's output makes.
    fn line(&mut self, s: &str, depth: usize) {
        if let Some(rest) = s.strip_prefix("test ") {
            let split = rest
                .split_once(" ... ")
                .or_else(|| rest.strip_suffix(" ...").map(|n| (n, "")));
            if let Some((name, after)) = split {
                let name = name.strip_suffix(" - should panic").unwrap_or(name);
                let full = labelled(&self.label, name);
                match status(after.trim_end()) {
                    Some(o) => {
                        if self.pending.is_none() {
                            self.current = Some(full.clone());
                        }
                        self.record(full, o);
                    }
                    None => {
                        self.pending = Some(full.clone());
                        self.current = Some(full);
                        if !after.trim().is_empty() && depth < 8 {
                            self.line(after, depth + 1);
                        }
                    }
                }
                return;
            }
        }
        let Some(o) = status(s.trim_end()) else {
            return;
        };
        if let Some(p) = self.pending.take() {
            self.current = Some(p);
        }
        if let Some(cur) = self.current.clone() {
            self.record(cur, o);
        }
    }
}

pub(super) fn parse_results(out: &str) -> Parsed {
    static RUNNING: OnceLock<Regex> = OnceLock::new();
    let running_n = RUNNING.get_or_init(|| Regex::new(r"^running (\d+) tests?$").unwrap());
    let mut st = State {
        label: None,
        sections: Vec::new(),
        pending: None,
        current: None,
        entries: Vec::new(),
    };
    let mut results = Results::default();
    let mut doc = DocFailures::default();
    for line in out.lines() {
        let line = line.trim_end_matches('\r');
        doc.line(&st.label, line);
        let open = st.sections.last().is_some_and(|s| !s.closed);
        // Cargo announces a target only between binaries; the same words
        // while a binary runs are its tests' output.
        if let (false, Some(l)) = (open, target_label(line)) {
            st.label = Some(l);
            st.forget();
            continue;
        }
        if line.starts_with("error: test failed") || line.starts_with("error: doctest failed") {
            if let Some(s) = st.sections.last_mut() {
                s.closed = true;
            }
            continue;
        }
        if let Some(what) = cargo_error(line) {
            results.broken.push(what.trim_matches('`').to_string());
            continue;
        }
        if let Some(caps) = running_n.captures(line) {
            let announced = caps[1].parse().unwrap_or(usize::MAX);
            st.sections.push(Section {
                label: st.label.clone(),
                announced,
                ..Section::default()
            });
            st.forget();
            continue;
        }
        if line.starts_with("test result: ") {
            if let Some(s) = st.sections.last_mut() {
                s.summarised = true;
                s.closed = true;
            }
            continue;
        }
        st.line(line, 0);
    }
    for s in &st.sections {
        let label = s.label.as_deref().unwrap_or("a test binary");
        if s.seen > s.announced {
            results.notes.push(format!(
                "{label}: {} results for {} tests announced; a test printed result lines",
                s.seen, s.announced
            ));
        }
        if !s.summarised {
            results.notes.push(format!(
                "{label}: no `test result:` line; the binary stopped before it finished"
            ));
        }
    }
    results.complete = !st.sections.is_empty() && st.sections.iter().all(|s| s.summarised);
    let unbuilt = doc.unbuilt();
    let mut entries = st.entries;
    entries.retain(|(name, o)| !(*o == Outcome::Failed && unbuilt.contains(name)));
    for name in &unbuilt {
        results
            .notes
            .push(format!("{name}: the doc test did not compile"));
    }
    (entries, results)
}

/// The failure sections of doc tests (`---- NAME stdout ----`): a doc
/// test whose every section says rustdoc could not compile it, and none
/// that its executable ran, did not build — it has no result, like a test
/// of a binary that does not build. A test's own output is printed after
/// rustdoc's `Test executable failed` line of its section, so a section it
/// forges for another name leaves that name's real section saying it ran.
#[derive(Default)]
struct DocFailures {
    current: Option<String>,
    /// Name → (a section said it did not compile, a section said it ran).
    seen: std::collections::BTreeMap<String, (bool, bool)>,
}

impl DocFailures {
    fn line(&mut self, label: &Option<String>, line: &str) {
        if let Some(name) = line
            .strip_prefix("---- ")
            .and_then(|r| r.strip_suffix(" stdout ----"))
        {
            let full = labelled(label, name);
            let is_doc = doc_line(&full).is_some();
            self.current = is_doc.then_some(full);
            if let Some(n) = &self.current {
                self.seen.entry(n.clone()).or_default();
            }
            return;
        }
        let Some(n) = &self.current else { return };
        let e = self.seen.entry(n.clone()).or_default();
        if line.starts_with("Couldn't compile the test.") {
            e.0 = true;
        } else if line.starts_with("Test executable") {
            e.1 = true;
        } else if line == "failures:" {
            self.current = None;
        }
    }

    fn unbuilt(&self) -> Vec<String> {
        (self.seen.iter())
            .filter(|(_, (compile, ran))| *compile && !*ran)
            .map(|(n, _)| n.clone())
            .collect()
    }
}

/// The `N` of a doc test's `(line N)`; None for any other test.
pub(super) fn doc_line(name: &str) -> Option<u64> {
    if !name.contains(" - ") {
        return None;
    }
    let (_, tail) = name.rsplit_once(" (line ")?;
    tail.strip_suffix(')')?.parse().ok()
}

/// A doc test's name without its `(line N)`, which moves with every line
/// added above it.
pub(super) fn without_line(name: &str) -> String {
    static LINE: OnceLock<Regex> = OnceLock::new();
    let re = LINE.get_or_init(|| Regex::new(r" \(line \d+\)").unwrap());
    if name.contains(" - ") {
        re.replace_all(name, "").into_owned()
    } else {
        name.to_string()
    }
}
