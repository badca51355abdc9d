//! go test: `-list` prints each package's top-level test names followed by
//! that package's `ok` line; `-json` (test2json) reports every test and
//! subtest as `Package` + `Test`. Names are `pkg.TestX`, subtests
//! `pkg.TestX/case`, and a subtest is checked against its top-level test,
//! the only one `-list` knows.

use super::{Listing, Outcome, Parsed, Results};
use serde::Deserialize;
use std::collections::{BTreeSet, HashMap};

/// `go test` flags that take a value when written without `=`.
const VALUE_FLAGS: &[&str] = &[
    "run",
    "skip",
    "bench",
    "benchtime",
    "count",
    "cpu",
    "parallel",
    "timeout",
    "tags",
    "p",
    "o",
    "exec",
    "ldflags",
    "gcflags",
    "asmflags",
    "gccgoflags",
    "mod",
    "modfile",
    "overlay",
    "pkgdir",
    "coverprofile",
    "covermode",
    "coverpkg",
    "cpuprofile",
    "memprofile",
    "memprofilerate",
    "blockprofile",
    "blockprofilerate",
    "mutexprofile",
    "mutexprofilefraction",
    "outputdir",
    "trace",
    "fuzz",
    "fuzztime",
    "fuzzminimizetime",
    "shuffle",
    "vet",
    "toolexec",
    "compiler",
    "C",
    "pgo",
    "installsuffix",
    "buildmode",
    "list",
];

/// Flags that change what is built, kept for the listing so that it sees
/// the same test files.
const BUILD_FLAGS: &[&str] = &[
    "tags",
    "mod",
    "modfile",
    "overlay",
    "ldflags",
    "gcflags",
    "asmflags",
    "gccgoflags",
    "race",
    "msan",
    "asan",
    "trimpath",
    "buildvcs",
    "exec",
    "toolexec",
    "compiler",
    "C",
    "pkgdir",
    "installsuffix",
    "buildmode",
    "linkshared",
    "pgo",
];

/// `go test -list REGEXP [build flags] PACKAGES [-args …]`, the regexp from
/// the guardrail's `-run` (its top-level part) or `.`.
pub(super) fn listing_args(args: &[String]) -> Vec<String> {
    let mut pattern = ".".to_string();
    let mut kept = Vec::new();
    let mut packages = Vec::new();
    let mut binary_args: Option<Vec<String>> = None;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "-args" || a == "--args" {
            binary_args = Some(args[i + 1..].to_vec());
            break;
        }
        if !a.starts_with('-') || a == "-" {
            packages.push(a.clone());
            i += 1;
            continue;
        }
        let flag = a.trim_start_matches('-');
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (flag, None),
        };
        let takes_value = inline.is_none() && VALUE_FLAGS.contains(&name);
        let value = inline.or_else(|| {
            if takes_value {
                args.get(i + 1).cloned()
            } else {
                None
            }
        });
        let width = if takes_value { 2 } else { 1 };
        if name == "run" {
            if let Some(v) = &value {
                pattern = top_pattern(v);
            }
        } else if BUILD_FLAGS.contains(&name) {
            kept.extend(args[i..(i + width).min(args.len())].iter().cloned());
        }
        i += width;
    }
    let mut out = vec!["-list".to_string(), pattern];
    out.extend(kept);
    out.extend(packages);
    if let Some(b) = binary_args {
        out.push("-args".into());
        out.extend(b);
    }
    out
}

/// `-run` matches `Top/sub/…` level by level; `-list` knows the top only.
fn top_pattern(run: &str) -> String {
    let mut depth = 0i32;
    for (i, c) in run.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '/' if depth == 0 => return run[..i].to_string(),
            _ => {}
        }
    }
    if run.is_empty() {
        ".".into()
    } else {
        run.to_string()
    }
}

fn is_test_name(s: &str) -> bool {
    ["Test", "Benchmark", "Example", "Fuzz"]
        .iter()
        .any(|p| s.starts_with(p))
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

pub(super) fn parse_listing(out: &str) -> Listing {
    let mut tests = Vec::new();
    let mut pending: Vec<&str> = Vec::new();
    let mut complete = true;
    let mut saw_package = false;
    for line in out.lines() {
        let line = line.trim_end_matches('\r');
        let mut fields = line.split_whitespace();
        match fields.next() {
            Some("ok") => {
                if let Some(pkg) = fields.next() {
                    tests.extend(pending.drain(..).map(|t| format!("{pkg}.{t}")));
                    saw_package = true;
                }
            }
            Some("?") => {
                saw_package = true;
                pending.clear();
            }
            Some("FAIL") => {
                complete = false;
                pending.clear();
            }
            Some(word) if is_test_name(word) && fields.next().is_none() => pending.push(word),
            _ => {}
        }
    }
    if !pending.is_empty() || !saw_package {
        complete = false;
    }
    Listing {
        tests,
        complete,
        files_only: false,
    }
}

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Package", default)]
    package: Option<String>,
    #[serde(rename = "ImportPath", default)]
    import_path: Option<String>,
    #[serde(rename = "Test", default)]
    test: Option<String>,
    #[serde(rename = "FailedBuild", default)]
    failed_build: Option<String>,
}

pub(super) fn parse_results(out: &str) -> Parsed {
    let mut entries = Vec::new();
    let mut results = Results::default();
    let mut started: BTreeSet<String> = BTreeSet::new();
    let mut finished: BTreeSet<String> = BTreeSet::new();
    let mut failed_tests: HashMap<String, usize> = HashMap::new();
    let mut failed_packages = Vec::new();
    let mut broken: BTreeSet<String> = BTreeSet::new();
    let mut json_lines = 0usize;
    for line in out.lines() {
        let line = line.trim_end_matches('\r');
        let Ok(ev) = serde_json::from_str::<Event>(line) else {
            // Go before 1.24 prints build failures as text between the events.
            let mut f = line.split_whitespace();
            if f.next() == Some("FAIL") {
                if let (Some(pkg), Some(why)) = (f.next(), f.next()) {
                    if why.starts_with('[') {
                        broken.insert(pkg.to_string());
                    }
                }
            }
            continue;
        };
        json_lines += 1;
        let pkg = ev.package.clone().unwrap_or_default();
        if ev.action == "build-fail" {
            if let Some(p) = ev.import_path.or(ev.package) {
                broken.insert(p.split_whitespace().next().unwrap_or_default().to_string());
            }
            continue;
        }
        if pkg.is_empty() {
            continue;
        }
        match (&ev.test, ev.action.as_str()) {
            (Some(t), "pass" | "fail" | "skip") => {
                let outcome = match ev.action.as_str() {
                    "pass" => Outcome::Passed,
                    "fail" => Outcome::Failed,
                    _ => Outcome::Ignored,
                };
                if outcome == Outcome::Failed {
                    *failed_tests.entry(pkg.clone()).or_default() += 1;
                }
                entries.push((format!("{pkg}.{t}"), outcome));
            }
            (None, "start" | "run" | "output") => {
                started.insert(pkg);
            }
            (Some(_), _) => {
                started.insert(pkg);
            }
            (None, "pass" | "skip") => {
                finished.insert(pkg);
            }
            (None, "fail") => {
                if ev.failed_build.is_some() {
                    broken.insert(pkg.clone());
                }
                failed_packages.push(pkg.clone());
                finished.insert(pkg);
            }
            _ => {}
        }
    }
    // A package that failed with no failing test: it panicked, timed out or
    // did not build; the tests it did not report have no result.
    for pkg in failed_packages {
        if !failed_tests.contains_key(&pkg) {
            broken.insert(pkg);
        }
    }
    for pkg in started.difference(&finished) {
        results.notes.push(format!(
            "{pkg}: no final pass or fail; the test binary stopped early"
        ));
    }
    results.broken = broken.into_iter().collect();
    results.complete = json_lines > 0 && started.is_subset(&finished);
    if json_lines == 0 {
        results
            .notes
            .push("no test2json events in the output".into());
    }
    (entries, results)
}

/// `pkg.TestX/sub/case` → `pkg.TestX`: the name `-list` would print. The
/// package path may itself hold dots (`gopkg.in/yaml.v3`), so the split is
/// at the first `.` followed by a test function's name.
pub(super) fn top_level(name: &str) -> &str {
    for (p, _) in name.match_indices('.') {
        let rest = &name[p + 1..];
        let end = rest.find('/').unwrap_or(rest.len());
        if is_test_name(&rest[..end]) && !name[..p].is_empty() {
            return &name[..p + 1 + end];
        }
    }
    name
}
