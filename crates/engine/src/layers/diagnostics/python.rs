//! pytest and Python: pytest's failure sections (`____ test_x ____`, their
//! `E   assert …` lines and `tests/test_a.py:12: AssertionError` places),
//! `--tb=line` lines, plain tracebacks (`File "x.py", line 3`), and, when
//! nothing else was printed, the short summary's `FAILED tests/t.py::test_x`.

use super::{number, Diagnostic, Location};
use regex::Regex;
use std::sync::LazyLock;

static HEADER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^_{3,} (.+?) _{3,}\s*$").unwrap());
static RULE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^={3,}.*={3,}\s*$").unwrap());
static PLACE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S[^:]*\.py):(\d+):(?: (.*))?$").unwrap());
static E_LINE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^E\s+(.*)$").unwrap());
static FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"^\s+File "(.+?)", line (\d+)"#).unwrap());
static SUMMARY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(FAILED|ERROR) ([^\s:]+)(?:::(\S+))?(?: - (.*))?$").unwrap());

pub(super) fn parse(lines: &[&str]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut failures = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if RULE.is_match(line) {
            failures = line.contains(" FAILURES ") || line.contains(" ERRORS ");
            i += 1;
            continue;
        }
        if let Some(c) = HEADER.captures(line) {
            let mut end = i + 1;
            while end < lines.len() && !HEADER.is_match(lines[end]) && !RULE.is_match(lines[end]) {
                end += 1;
            }
            out.push(section(c[1].trim(), &lines[i + 1..end], i..end));
            i = end;
            continue;
        }
        if line.starts_with("Traceback (most recent call last):") {
            let mut at = Vec::new();
            let mut end = i + 1;
            while end < lines.len()
                && (lines[end].starts_with([' ', '\t']) || lines[end].is_empty())
            {
                if let Some(f) = FRAME.captures(lines[end]) {
                    at.push(Location::new(&f[1], number(&f[2]), None));
                }
                end += 1;
            }
            let message = lines.get(end).map(|l| l.trim()).unwrap_or("").to_string();
            at.reverse();
            out.push(Diagnostic {
                at,
                message: if message.is_empty() {
                    "Python traceback".into()
                } else {
                    message
                },
                lines: i..(end + 1).min(lines.len()),
            });
            i = end + 1;
            continue;
        }
        if failures {
            if let Some(c) = PLACE.captures(line) {
                out.push(Diagnostic {
                    at: vec![Location::new(&c[1], number(&c[2]), None)],
                    message: c.get(3).map_or("", |m| m.as_str()).trim().to_string(),
                    lines: i..i + 1,
                });
            }
        }
        i += 1;
    }
    if out.is_empty() {
        for (i, line) in lines.iter().enumerate() {
            if let Some(c) = SUMMARY.captures(line) {
                if !c[2].ends_with(".py") {
                    continue;
                }
                out.push(Diagnostic {
                    at: vec![Location::new(&c[2], None, None)],
                    message: line.trim().to_string(),
                    lines: i..i + 1,
                });
            }
        }
    }
    out
}

/// One pytest failure section: `title`, its `body` lines.
fn section(title: &str, body: &[&str], lines: std::ops::Range<usize>) -> Diagnostic {
    let mut at = Vec::new();
    let mut last_words = None;
    let mut said = None;
    for l in body {
        if let Some(c) = PLACE.captures(l) {
            at.push(Location::new(&c[1], number(&c[2]), None));
            last_words = c.get(3).map(|m| m.as_str().trim().to_string());
        } else if let Some(c) = E_LINE.captures(l) {
            said.get_or_insert_with(|| c[1].trim().to_string());
        } else if let Some(f) = FRAME.captures(l) {
            at.push(Location::new(&f[1], number(&f[2]), None));
        }
    }
    // The innermost place first: where it was raised.
    at.reverse();
    let what = said.or(last_words.filter(|w| !w.is_empty() && !w.starts_with("in ")));
    Diagnostic {
        at,
        message: match what {
            Some(w) => format!("{title}: {w}"),
            None => title.to_string(),
        },
        lines,
    }
}
