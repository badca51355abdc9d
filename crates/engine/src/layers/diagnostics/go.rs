//! go: build and vet errors (`./x.go:12:3: undefined: foo`), failing tests
//! (`--- FAIL: TestX` with their `x_test.go:12: …` lines, which name the
//! file relative to the test's package, found by the `FAIL\tpkg` line that
//! closes it) and panics in tests (placed by their stack). `go test -json`
//! events are unwrapped into the lines they carry first.

use super::{number, Diagnostic, Location};
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::LazyLock;

static BUILD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:vet: )?([^\s:][^\s:]*\.go):(\d+)(?::(\d+))?: (.+)$").unwrap()
});
static LOG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\s+)([^\s:][^\s:]*\.go):(\d+): ?(.*)$").unwrap());
static FAIL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*--- FAIL: (\S+)(?: \(|$)").unwrap());
static OTHER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*--- (?:PASS|SKIP): (\S+)").unwrap());
static RUN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^=== (?:RUN|CONT|PAUSE|NAME)\s+(\S+)").unwrap());
static PACKAGE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:FAIL|ok)\s+([^\s\[]+)").unwrap());
static FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\t(/\S+\.go):(\d+)(?: \+0x[0-9a-f]+)?\s*$").unwrap());

/// A failing test as the output tells it.
#[derive(Default)]
struct Failed {
    /// The `--- FAIL` line.
    line: usize,
    /// Its `file.go:N: message` lines: (first line, last line, location, message).
    logs: Vec<(usize, usize, Location, String)>,
    /// A panic: its first lines, message and stack.
    panic: Option<(usize, usize, String, Vec<Location>)>,
    package: Option<String>,
}

pub(super) fn parse(lines: &[&str]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut failed: Vec<(String, Failed)> = Vec::new();
    let mut logs: BTreeMap<String, Vec<(usize, usize, Location, String)>> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut seen = std::collections::BTreeSet::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(c) = BUILD.captures(line) {
            let mut end = i + 1;
            while end < lines.len() && lines[end].starts_with('\t') {
                end += 1;
            }
            out.push(Diagnostic {
                at: vec![Location::new(
                    &c[1],
                    number(&c[2]),
                    c.get(3).and_then(|m| number(m.as_str())),
                )],
                message: c[4].trim().to_string(),
                lines: i..end,
            });
            i = end;
            continue;
        }
        if let Some(c) = FAIL.captures(line) {
            let name = c[1].to_string();
            if seen.insert(name.clone()) {
                failed.push((
                    name.clone(),
                    Failed {
                        line: i,
                        ..Default::default()
                    },
                ));
            }
            current = Some(name);
        } else if let Some(c) = OTHER.captures(line).or_else(|| RUN.captures(line)) {
            current = Some(c[1].to_string());
        } else if let (Some(c), Some(test)) = (LOG.captures(line), &current) {
            let indent = c[1].len();
            let mut end = i + 1;
            while end < lines.len() && continues(lines[end], indent) {
                end += 1;
            }
            logs.entry(test.clone()).or_default().push((
                i,
                end,
                Location::new(&c[2], number(&c[3]), None),
                c[4].trim().to_string(),
            ));
            i = end;
            continue;
        } else if let Some(msg) = line.strip_prefix("panic: ") {
            if let Some((_, f)) = failed.last_mut().filter(|(_, f)| f.panic.is_none()) {
                let mut end = i + 1;
                while end < lines.len() && lines[end].starts_with('\t') {
                    end += 1;
                }
                let mut frames = Vec::new();
                let mut j = end;
                while j < lines.len() && !PACKAGE.is_match(lines[j]) && lines[j] != "FAIL" {
                    if let Some(f) = FRAME.captures(lines[j]) {
                        frames.push(Location::new(&f[1], number(&f[2]), None));
                    }
                    j += 1;
                }
                let msg = msg.trim_end_matches(" [recovered]").trim().to_string();
                f.panic = Some((i, end, msg, frames));
                i = j;
                continue;
            }
        } else if let Some(c) = PACKAGE.captures(line) {
            for (_, f) in failed.iter_mut().filter(|(_, f)| f.package.is_none()) {
                f.package = Some(c[1].to_string());
            }
            current = None;
        }
        i += 1;
    }
    // A test whose subtests failed fails with them: it is not an error
    // of its own unless it says something itself.
    let parents: std::collections::BTreeSet<&str> = failed
        .iter()
        .flat_map(|(n, _)| n.match_indices('/').map(move |(i, _)| &n[..i]))
        .collect();
    let parents: std::collections::BTreeSet<String> =
        parents.into_iter().map(str::to_string).collect();
    for (name, mut f) in failed {
        f.logs = logs.remove(&name).unwrap_or_default();
        let parent = parents.contains(&name);
        if parent && f.logs.is_empty() && f.panic.is_none() {
            continue;
        }
        out.push(test_diagnostic(&name, f));
    }
    out
}

/// A log line's continuation: indented deeper, and not a result line.
fn continues(line: &str, indent: usize) -> bool {
    let own = line.len() - line.trim_start().len();
    !line.trim().is_empty() && own > indent && !FAIL.is_match(line) && !OTHER.is_match(line)
}

fn test_diagnostic(name: &str, f: Failed) -> Diagnostic {
    if let Some((start, end, msg, frames)) = f.panic {
        return Diagnostic {
            at: frames,
            message: format!("FAIL {name}: panic: {msg}"),
            lines: f.line.min(start)..end,
        };
    }
    match f.logs.first() {
        Some((first, _, _, msg)) => {
            let last = f.logs.iter().map(|l| l.1).max().unwrap_or(first + 1);
            // The result line next to its logs (before them without -v,
            // after them with -v), unless other tests' lines lie between.
            let start = if *first > f.line && first - f.line <= 2 {
                f.line
            } else {
                *first
            };
            let end = if f.line >= last && f.line - last <= 2 {
                f.line + 1
            } else {
                last
            };
            let at = f
                .logs
                .iter()
                .map(|(_, _, l, _)| Location {
                    package: f.package.clone(),
                    ..l.clone()
                })
                .collect();
            Diagnostic {
                at,
                message: format!("FAIL {name}: {msg}"),
                lines: start..end,
            }
        }
        None => Diagnostic {
            at: Vec::new(),
            message: format!("FAIL {name}"),
            lines: f.line..f.line + 1,
        },
    }
}

/// A line of `go test -json` as the output line(s) it carries: None for
/// an event that carries none; any other line as it is.
pub(super) fn unwrap_json(line: &str) -> Option<std::borrow::Cow<'_, str>> {
    let t = line.trim_start();
    if !(t.starts_with("{\"Time\"") || t.starts_with("{\"Action\"")) {
        return Some(line.into());
    }
    let Ok(v) = serde_json::from_str::<serde_json::Value>(t) else {
        return Some(line.into());
    };
    if v.get("Action").and_then(|a| a.as_str()).is_none() {
        return Some(line.into());
    }
    let output = v.get("Output").and_then(|o| o.as_str())?;
    let output = output.strip_suffix('\n').unwrap_or(output);
    Some(output.to_string().into())
}
