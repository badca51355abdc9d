//! rustc and cargo: `error[E0308]: …` followed by `--> src/lib.rs:11:5`
//! (the human form cargo prints), and libtest's panics
//! (`thread 'tests::x' panicked at src/lib.rs:11:9:` then the message).

use super::{number, Diagnostic, Location};
use regex::Regex;
use std::sync::LazyLock;

static HEADER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^error(\[[A-Z]+\d+\])?: (.+)$").unwrap());
static ARROW: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*--> (.+?):(\d+):(\d+)\s*$").unwrap());
/// Rust 1.73 and later: the message on the lines that follow.
static PANIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^thread '([^']*)'(?: \(\d+\))? panicked at (.+?):(\d+):(\d+):\s*$").unwrap()
});
/// Before Rust 1.73: `panicked at 'message', path:line:col`.
static PANIC_OLD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^thread '([^']*)'(?: \(\d+\))? panicked at '(.*)', (.+?):(\d+):(\d+)\s*$").unwrap()
});
static SECTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^---- (.+) stdout ----\s*$").unwrap());

/// cargo's closing words about errors already shown.
const SUMMARIES: &[&str] = &[
    "could not compile",
    "aborting due to",
    "test failed, to rerun pass",
    "build failed",
    "could not document",
    "Some errors have detailed explanations",
    "For more information about",
    "process didn't exit successfully",
    "1 target failed",
];

/// How many lines of a panic's message go into its one line.
const MESSAGE_LINES: usize = 3;

pub(super) fn parse(lines: &[&str]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut section: Option<usize> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if SECTION.is_match(line) {
            section = Some(i);
            i += 1;
            continue;
        }
        if let Some(c) = HEADER.captures(line) {
            let text = c[2].trim();
            let end = block_end(lines, i);
            if !SUMMARIES.iter().any(|s| text.starts_with(s)) {
                let at = lines[i + 1..end]
                    .iter()
                    .find_map(|l| ARROW.captures(l))
                    .map(|a| vec![Location::new(&a[1], number(&a[2]), number(&a[3]))])
                    .unwrap_or_default();
                out.push(Diagnostic {
                    at,
                    message: format!("error{}: {text}", c.get(1).map_or("", |m| m.as_str())),
                    lines: i..end,
                });
            }
            i = end.max(i + 1);
            continue;
        }
        let panic = PANIC
            .captures(line)
            .map(|c| {
                (
                    c[1].to_string(),
                    None,
                    c[2].to_string(),
                    c[3].to_string(),
                    c[4].to_string(),
                )
            })
            .or_else(|| {
                PANIC_OLD.captures(line).map(|c| {
                    (
                        c[1].to_string(),
                        Some(c[2].to_string()),
                        c[3].to_string(),
                        c[4].to_string(),
                        c[5].to_string(),
                    )
                })
            });
        if let Some((thread, inline, path, l, col)) = panic {
            let mut end = i + 1;
            let mut said: Vec<String> = inline.into_iter().collect();
            while end < lines.len() && !ends_panic(lines[end]) {
                if said.len() < MESSAGE_LINES {
                    said.push(lines[end].trim().to_string());
                }
                end += 1;
            }
            let start = section.take().filter(|s| i - s <= 3).unwrap_or(i);
            let who = if start < i {
                format!("test {thread}")
            } else {
                format!("thread '{thread}'")
            };
            out.push(Diagnostic {
                at: vec![Location::new(&path, number(&l), number(&col))],
                message: format!("{who} panicked: {}", said.join("; ")),
                lines: start..end,
            });
            i = end;
            continue;
        }
        i += 1;
    }
    out
}

/// Where a compiler diagnostic that starts at `start` ends: at a blank
/// line or the next diagnostic.
fn block_end(lines: &[&str], start: usize) -> usize {
    let mut end = start + 1;
    while end < lines.len() {
        let l = lines[end];
        if l.trim().is_empty() || l.starts_with("error") || l.starts_with("warning") {
            break;
        }
        end += 1;
    }
    end
}

fn ends_panic(line: &str) -> bool {
    let t = line.trim();
    t.is_empty()
        || t.starts_with("note: ")
        || t.starts_with("stack backtrace:")
        || SECTION.is_match(line)
        || line.starts_with("thread '")
        || line.starts_with("failures:")
}
