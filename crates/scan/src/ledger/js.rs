//! jest and vitest: jest can list only test files (`--listTests`), vitest
//! lists tests (`vitest list`: `src/a.test.ts > suite > name`); both write
//! the same JSON results (`testResults[].assertionResults[]`). Names are
//! `file > describe… > title`, the file as the runner printed it (absolute
//! in JSON and jest's listing: see `relative_to`).

use super::{Listing, Outcome, Parsed, Results};
use serde_json::Value;

/// Flags that only shape a run's output or watch: left out of listings.
fn output_only(a: &str) -> (bool, usize) {
    const ALONE: &[&str] = &[
        "--coverage",
        "--json",
        "--watch",
        "--watchAll",
        "--verbose",
        "--run",
        "--passWithNoTests",
        "--silent",
        "--useStderr",
        "--ci",
    ];
    const WITH_VALUE: &[&str] = &[
        "--outputFile",
        "--reporter",
        "--reporters",
        "--coverageReporters",
        "--testTimeout",
    ];
    if ALONE.contains(&a) || a.starts_with("--coverage.") || a.starts_with("--coverage=") {
        return (true, 1);
    }
    if let Some((flag, _)) = a.split_once('=') {
        if WITH_VALUE.contains(&flag) || flag.starts_with("--outputFile.") {
            return (true, 1);
        }
    }
    if WITH_VALUE.contains(&a) {
        return (true, 2);
    }
    (false, 1)
}

fn filtered(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let (skip, width) = output_only(&args[i]);
        if !skip {
            out.push(args[i].clone());
        }
        i += width;
    }
    out
}

pub(super) fn jest_listing_args(args: &[String]) -> Vec<String> {
    let mut out = filtered(args);
    out.push("--listTests".into());
    out
}

pub(super) fn vitest_listing_args(args: &[String]) -> Vec<String> {
    filtered(args)
}

/// `file > describe > title` → `file`.
pub(super) fn file_of(name: &str) -> &str {
    name.split(" > ").next().unwrap_or(name)
}

/// `--listTests`: absolute paths, one a line, or with `--json` one array.
pub(super) fn parse_jest_listing(out: &str) -> Listing {
    let trimmed = out.trim();
    if trimmed.starts_with('[') {
        if let Ok(files) = serde_json::from_str::<Vec<String>>(trimmed) {
            return Listing {
                tests: files,
                complete: true,
                files_only: true,
            };
        }
    }
    let mut tests = Vec::new();
    let mut other = false;
    for line in out.lines() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if looks_like_file(t) {
            tests.push(t.to_string());
        } else {
            other = true;
        }
    }
    Listing {
        complete: !other,
        tests,
        files_only: true,
    }
}

fn looks_like_file(t: &str) -> bool {
    let absolute = t.starts_with('/') || t.get(1..3) == Some(":\\");
    let ext = t.rsplit('.').next().unwrap_or("");
    absolute && !ext.is_empty() && ext.len() <= 6 && ext.chars().all(|c| c.is_ascii_alphanumeric())
}

/// `vitest list`: `file > suite > test` a line, `[project] ` before it in
/// a workspace. Skipped tests are not listed.
pub(super) fn parse_vitest_listing(out: &str) -> Listing {
    let mut tests = Vec::new();
    let mut other = false;
    for line in out.lines() {
        let mut t = line.trim_end_matches('\r');
        if t.trim().is_empty() {
            continue;
        }
        if t.starts_with('[') {
            if let Some((_, rest)) = t.split_once("] ") {
                t = rest;
            }
        }
        let file = file_of(t);
        let has_ext = file
            .rsplit_once('.')
            .is_some_and(|(_, e)| !e.is_empty() && e.len() <= 6);
        if t.contains(" > ") && has_ext && !file.starts_with(' ') {
            tests.push(t.to_string());
        } else {
            other = true;
        }
    }
    Listing {
        complete: !other,
        tests,
        files_only: false,
    }
}

/// The JSON both write: jest's `--json --outputFile`, vitest's json reporter.
pub(super) fn parse_results(json: &str) -> Parsed {
    let mut entries = Vec::new();
    let mut results = Results::default();
    let root: Value = match serde_json::from_str(json) {
        Ok(v) => v,
        Err(e) => {
            results
                .notes
                .push(format!("the results JSON did not parse: {e}"));
            return (entries, results);
        }
    };
    let Some(files) = root.get("testResults").and_then(Value::as_array) else {
        results
            .notes
            .push("the results JSON has no testResults".into());
        return (entries, results);
    };
    let mut count = 0usize;
    for f in files {
        let file = f.get("name").and_then(Value::as_str).unwrap_or("?");
        let cases = f
            .get("assertionResults")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let suite_failed = f.get("status").and_then(Value::as_str) == Some("failed");
        if cases.is_empty()
            && (suite_failed || f.get("testExecError").is_some_and(|e| !e.is_null()))
        {
            results.broken.push(file.to_string());
            continue;
        }
        for c in cases {
            count += 1;
            let mut name = file.to_string();
            for a in c
                .get("ancestorTitles")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or(&[])
            {
                name.push_str(" > ");
                name.push_str(a.as_str().unwrap_or("?"));
            }
            name.push_str(" > ");
            let title = c.get("title").and_then(Value::as_str);
            name.push_str(
                title
                    .or_else(|| c.get("fullName").and_then(Value::as_str))
                    .unwrap_or("?"),
            );
            let outcome = match c.get("status").and_then(Value::as_str) {
                Some("passed") => Outcome::Passed,
                Some("failed") => Outcome::Failed,
                Some("pending" | "skipped" | "todo" | "disabled") => Outcome::Ignored,
                other => {
                    results.notes.push(format!(
                        "{name}: unknown status {other:?}, counted as ignored"
                    ));
                    Outcome::Ignored
                }
            };
            entries.push((name, outcome));
        }
    }
    if let Some(total) = root.get("numTotalTests").and_then(Value::as_u64) {
        if total as usize != count {
            results.notes.push(format!(
                "the results JSON counts {total} tests and lists {count}"
            ));
        }
    }
    results.complete = true;
    (entries, results)
}
