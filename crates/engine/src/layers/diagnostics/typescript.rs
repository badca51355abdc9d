//! tsc: `src/a.ts(3,5): error TS2322: …` (plain, as in CI) and
//! `src/a.ts:3:5 - error TS2322: …` (`--pretty`), with the message's
//! indented continuation lines.

use super::{number, Diagnostic, Location};
use regex::Regex;
use std::sync::LazyLock;

static PLAIN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S.*?)\((\d+),(\d+)\): error (TS\d+): (.*)$").unwrap());
static PRETTY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S.*?):(\d+):(\d+) - error (TS\d+): (.*)$").unwrap());

pub(super) fn parse(lines: &[&str]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(c) = PLAIN.captures(line).or_else(|| PRETTY.captures(line)) else {
            continue;
        };
        let mut end = i + 1;
        while end < lines.len()
            && lines[end].starts_with([' ', '\t'])
            && !lines[end].trim().is_empty()
        {
            end += 1;
        }
        out.push(Diagnostic {
            at: vec![Location::new(&c[1], number(&c[2]), number(&c[3]))],
            message: format!("error {}: {}", &c[4], c[5].trim()),
            lines: i..end,
        });
    }
    out
}
