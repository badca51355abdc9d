//! pytest: `--collect-only -q` prints one node id a line
//! (`tests/test_x.py::TestC::test_m[1-2]`) and a summary; the junit XML of a
//! run names each case by dotted `classname` and `name`, turned back into
//! the node id through the listing, or the xunit1 `file` attribute, or
//! (last) the convention that classes start with a capital.

use super::{Listing, Outcome, Parsed, Results};
use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};
use std::collections::HashMap;

/// Tests only pytest runs: a test function at the top of the module
/// (unittest finds only `TestCase` methods), or pytest imported.
pub fn pytest_style(code: &str) -> bool {
    code.lines().any(|l| {
        l.starts_with("def test")
            || l.starts_with("async def test")
            || l.starts_with("import pytest")
            || l.starts_with("from pytest ")
    })
}

/// `--collect-only -q` and the guardrail's arguments less those that
/// change the listing's shape (verbosity, xdist, reports, coverage).
pub(super) fn listing_args(args: &[String]) -> Vec<String> {
    let mut out = vec!["--collect-only".to_string(), "-q".to_string()];
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "-q" | "--quiet" | "-v" | "--verbose" | "--collect-only" | "--co" => i += 1,
            "-n" | "--numprocesses" | "--dist" | "--junitxml" | "--junit-xml" | "--cov-report"
            | "--html" | "--result-log" | "--durations" => i += 2,
            _ if [
                "--numprocesses=",
                "--dist=",
                "--junitxml=",
                "--junit-xml=",
                "--cov",
                "--html=",
                "--durations=",
            ]
            .iter()
            .any(|p| a.starts_with(p)) =>
            {
                i += 1
            }
            _ if a.starts_with("-n")
                && a[2..].chars().all(|c| c.is_ascii_digit())
                && a.len() > 2 =>
            {
                i += 1
            }
            "-nauto" | "-nlogical" => i += 1,
            // A cluster of short switches (`-xvs`): keep all but the verbosity.
            _ if a.starts_with('-')
                && !a.starts_with("--")
                && a.len() > 2
                && a[1..].chars().all(|c| "xsqvl".contains(c)) =>
            {
                let kept: String = a[1..].chars().filter(|c| *c != 'q' && *c != 'v').collect();
                if !kept.is_empty() {
                    out.push(format!("-{kept}"));
                }
                i += 1;
            }
            _ => {
                out.push(a.to_string());
                i += 1;
            }
        }
    }
    out
}

/// `path::Class::name[id]` split at the `::` outside brackets.
fn node_parts(id: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let b = id.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'[' => depth += 1,
            b']' => depth -= 1,
            b':' if depth == 0 && b.get(i + 1) == Some(&b':') => {
                parts.push(&id[start..i]);
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(&id[start..]);
    parts
}

/// Whether the node id `name` is a doctest's: its last part (parameters
/// aside) is a dotted object path, where a test function's is a name.
pub(super) fn is_doctest(name: &str) -> bool {
    let last = name.rsplit("::").next().unwrap_or(name);
    name.contains("::") && last.split('[').next().unwrap_or(last).contains('.')
}

pub(super) fn file_of(name: &str) -> &str {
    node_parts(name)[0]
}

pub(super) fn parse_listing(out: &str) -> Listing {
    let mut tests = Vec::new();
    let mut files = Vec::new();
    let mut summary = None;
    let mut error = false;
    let mut in_list = true;
    for line in out.lines() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            if !tests.is_empty() || !files.is_empty() {
                in_list = false;
            }
            continue;
        }
        let t = line.trim();
        if t.starts_with("ERROR ") || t.starts_with("ERROR:") || t.contains("Interrupted:") {
            error = true;
        }
        if is_summary(t) {
            if t.contains(" error") {
                error = true;
            }
            summary = Some(t.to_string());
            continue;
        }
        if !in_list || line.starts_with(char::is_whitespace) {
            continue;
        }
        let excluded = ["=", "_", "!", "<", "ERROR", "FAILED", "E ", "warnings"];
        if excluded.iter().any(|p| line.starts_with(p)) {
            continue;
        }
        if line.contains("::") {
            tests.push(line.to_string());
        } else if let Some((file, count)) = line.rsplit_once(": ") {
            // `-qq`: `tests/test_x.py: 3`, files only.
            if count.chars().all(|c| c.is_ascii_digit()) && !count.is_empty() {
                files.push(file.to_string());
            }
        }
    }
    if tests.is_empty() && !files.is_empty() {
        return Listing {
            tests: files,
            complete: summary.is_some() && !error,
            files_only: true,
        };
    }
    Listing {
        tests,
        complete: summary.is_some() && !error,
        files_only: false,
    }
}

/// `14 tests collected in 0.01s`, `3/14 tests collected (11 deselected)`,
/// `15 tests collected, 1 error in 0.29s`, `no tests collected in 0.01s`.
fn is_summary(t: &str) -> bool {
    let t = t.trim_matches(|c| c == '=' || c == ' ');
    let first = t.split_whitespace().next().unwrap_or("");
    let counted = first == "no"
        || first
            .split('/')
            .all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    counted && (t.contains(" collected") || t.contains(" selected") || t.contains(" deselected"))
}

#[derive(Default)]
struct Case {
    classname: String,
    name: String,
    file: Option<String>,
    outcome: Option<Outcome>,
    collection_error: bool,
}

fn attrs(e: &BytesStart) -> Case {
    let mut case = Case::default();
    for a in e.attributes().flatten() {
        let value = a
            .normalized_value(XmlVersion::Implicit1_0)
            .map(|v| v.into_owned())
            .unwrap_or_default();
        match a.key.as_ref() {
            "classname" => case.classname = value,
            "name" => case.name = value,
            "file" => case.file = Some(value),
            _ => {}
        }
    }
    case
}

/// The dotted form junit gives a node id: `tests/unit/test_x.py::TestC::test_m`
/// → (`tests.unit.test_x.TestC`, `test_m`).
fn junit_form(id: &str) -> Option<(String, String)> {
    let parts = node_parts(id);
    let (name, rest) = parts.split_last()?;
    let (file, classes) = rest.split_first()?;
    let mut classname = module_of(file);
    for c in classes {
        classname.push('.');
        classname.push_str(c);
    }
    Some((classname, name.to_string()))
}

fn module_of(file: &str) -> String {
    let f = file.strip_prefix("./").unwrap_or(file);
    let f = f.strip_suffix(".py").unwrap_or(f);
    f.replace(['/', '\\'], ".")
}

/// The node id of a junit case.
fn node_id(case: &Case, from_listing: &HashMap<(String, String), String>) -> String {
    if let Some(id) = from_listing.get(&(case.classname.clone(), case.name.clone())) {
        return id.clone();
    }
    if let Some(file) = &case.file {
        let module = module_of(file);
        if let Some(rest) = case.classname.strip_prefix(&module) {
            if rest.is_empty() || rest.starts_with('.') {
                let mut id = file.clone();
                for c in rest.split('.').filter(|c| !c.is_empty()) {
                    id.push_str("::");
                    id.push_str(c);
                }
                return format!("{id}::{}", case.name);
            }
        }
    }
    let parts: Vec<&str> = case.classname.split('.').collect();
    let split = parts
        .iter()
        .position(|p| p.starts_with(|c: char| c.is_uppercase()))
        .unwrap_or(parts.len());
    let mut id = format!("{}.py", parts[..split].join("/"));
    for c in &parts[split..] {
        id.push_str("::");
        id.push_str(c);
    }
    format!("{id}::{}", case.name)
}

pub(super) fn parse_results(xml: &str, listing: Option<&Listing>) -> Parsed {
    let mut from_listing = HashMap::new();
    if let Some(l) = listing.filter(|l| !l.files_only) {
        for id in &l.tests {
            if let Some(form) = junit_form(id) {
                from_listing.insert(form, id.clone());
            }
        }
    }
    let mut entries = Vec::new();
    let mut results = Results::default();
    let mut reader = Reader::from_str(xml);
    let mut current: Option<Case> = None;
    let mut declared = 0usize;
    let mut cases = 0usize;
    let mut finished = false;
    let mut finish = |case: Case, entries: &mut Vec<(String, Outcome)>, results: &mut Results| {
        cases += 1;
        if case.collection_error {
            let file = case
                .file
                .clone()
                .unwrap_or_else(|| format!("{}.py", case.name.replace('.', "/")));
            results.broken.push(file);
        } else {
            entries.push((
                node_id(&case, &from_listing),
                case.outcome.unwrap_or(Outcome::Passed),
            ));
        }
    };
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) | Ok(Event::Empty(e)) if e.name().as_ref() == "testsuite" => {
                for a in e.attributes().flatten() {
                    if a.key.as_ref() == "tests" {
                        let v = a
                            .normalized_value(XmlVersion::Implicit1_0)
                            .unwrap_or_default();
                        declared += v.parse::<usize>().unwrap_or(0);
                    }
                }
            }
            Ok(Event::Start(e)) if e.name().as_ref() == "testcase" => current = Some(attrs(&e)),
            Ok(Event::Empty(e)) if e.name().as_ref() == "testcase" => {
                finish(attrs(&e), &mut entries, &mut results)
            }
            Ok(Event::Start(e)) | Ok(Event::Empty(e)) => {
                if let Some(case) = current.as_mut() {
                    let outcome = match e.name().as_ref() {
                        "failure" | "error" => Some(Outcome::Failed),
                        "skipped" => Some(Outcome::Ignored),
                        _ => None,
                    };
                    if let Some(o) = outcome {
                        case.outcome = Some(case.outcome.map_or(o, |prev| prev.max(o)));
                        if e.name().as_ref() == "error" && case.classname.is_empty() {
                            case.collection_error = true;
                        }
                    }
                }
            }
            Ok(Event::End(e)) if e.name().as_ref() == "testcase" => {
                if let Some(case) = current.take() {
                    finish(case, &mut entries, &mut results);
                }
            }
            Ok(Event::End(e)) if matches!(e.name().as_ref(), "testsuites" | "testsuite") => {
                finished = true
            }
            Ok(Event::Eof) => break,
            Err(e) => {
                results
                    .notes
                    .push(format!("the junit XML stopped parsing: {e}"));
                finished = false;
                break;
            }
            _ => {}
        }
    }
    if declared != cases && finished {
        results.notes.push(format!(
            "the junit XML declares {declared} tests and holds {cases}"
        ));
    }
    results.complete = finished;
    (entries, results)
}
