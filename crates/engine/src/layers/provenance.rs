//! Where a combined candidate's code came from (`rascal combine`): every
//! line it adds is traced, after whitespace normalisation, to the
//! candidates it was combined from (a line one of them added) or to the
//! base (a line the base already had in that file). A line in none of
//! them is **new code**: the combining agent wrote it. New code is listed
//! by file and line in the `provenance` report (so in the detail view,
//! `show`, `--json` and the PR body), and a candidate with new code is
//! never the automatic pick (docs/configuration.md, "Combining
//! candidates"). With `combine.allow_new: glue`, new lines that are only
//! glue — an import, a module declaration, or punctuation that joins two
//! hunks (braces, brackets, commas) — are allowed. Pure.

use rascal_core::model::verdict::{Issue, Layer, Report, Severity};
use std::collections::{BTreeMap, BTreeSet};

/// The `provenance` report's check name (layer `agent`).
pub const PROVENANCE: &str = "provenance";
/// The rule of each new line.
pub const RULE_NEW_CODE: &str = "combine/new-code";

/// One line a diff adds: its file, its line in the new file, its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Added {
    pub file: String,
    pub line: u32,
    pub text: String,
}

/// The lines a unified diff (`git diff` form) adds, with their line
/// numbers in the new file. Deleted files add nothing.
pub fn added_lines(diff: &str) -> Vec<Added> {
    let mut out = Vec::new();
    let mut file: Option<String> = None;
    let mut in_hunk = false;
    let mut line = 0u32;
    for l in diff.lines() {
        if l.starts_with("diff --git ") {
            file = None;
            in_hunk = false;
            continue;
        }
        if !in_hunk {
            if let Some(p) = l.strip_prefix("+++ ") {
                file = p.strip_prefix("b/").map(str::to_string);
            } else if let Some(h) = l.strip_prefix("@@ ") {
                in_hunk = true;
                line = hunk_start(h);
            }
            continue;
        }
        if let Some(h) = l.strip_prefix("@@ ") {
            line = hunk_start(h);
        } else if let Some(t) = l.strip_prefix('+') {
            if let Some(f) = &file {
                out.push(Added {
                    file: f.clone(),
                    line,
                    text: t.to_string(),
                });
            }
            line += 1;
        } else if l.starts_with(' ') || l.is_empty() {
            line += 1;
        }
    }
    out
}

/// The binary files a diff changes, each with the new blob's (possibly
/// abbreviated) id from its `index` line: they have no lines to trace.
pub fn binary_files(diff: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut blob = String::new();
    for l in diff.lines() {
        if let Some(ix) = l.strip_prefix("index ") {
            blob = ix
                .split_whitespace()
                .next()
                .and_then(|r| r.split("..").nth(1))
                .unwrap_or("")
                .to_string();
        } else if let Some(rest) = l.strip_prefix("Binary files ") {
            if let Some(path) = rest
                .strip_suffix(" differ")
                .and_then(|r| r.rsplit_once(" and "))
                .and_then(|(_, b)| b.strip_prefix("b/"))
            {
                out.push((path.to_string(), std::mem::take(&mut blob)));
            }
        }
    }
    out
}

/// The new file's first line in a hunk header's rest (`-a,b +c,d @@`).
fn hunk_start(h: &str) -> u32 {
    h.split_whitespace()
        .find_map(|w| w.strip_prefix('+'))
        .and_then(|w| w.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
}

/// A line as provenance compares it: its words joined by single spaces.
pub fn normalise(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Glue: an import or module declaration, or punctuation alone.
pub fn is_glue(line: &str) -> bool {
    let t = normalise(line);
    let t = t.as_str();
    if t.chars()
        .all(|c| "{}()[];,".contains(c) || c.is_whitespace())
    {
        return true;
    }
    let import = ["use ", "pub use ", "mod ", "pub mod ", "extern crate "]
        .iter()
        .any(|p| t.starts_with(p) && t.ends_with(';'))
        || t.starts_with("import ")
        || (t.starts_with("from ") && t.contains(" import "))
        || t.starts_with("#include ")
        || (t.starts_with("const ") && t.contains("= require(") && t.ends_with(';'));
    // A Go import block's entry: one quoted path.
    let go_entry = t.len() > 2
        && t.starts_with('"')
        && t.ends_with('"')
        && !t[1..t.len() - 1].contains(['"', ' ']);
    import || go_entry
}

/// One added line of the combined change that no source and not the base
/// has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLine {
    pub file: String,
    pub line: u32,
    pub text: String,
    pub glue: bool,
}

/// What tracing a combined change found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Traced {
    /// Non-blank lines the combined change adds.
    pub added: usize,
    /// How many of them each source (and `base`) also has.
    pub from: BTreeMap<String, usize>,
    /// The lines in no source and not in the base.
    pub new: Vec<NewLine>,
}

/// Trace `combined` (a diff) to `sources` (each candidate's id and diff)
/// and to the base (`base_file(path)`: that file's text at the base).
pub fn trace(
    combined: &str,
    sources: &[(String, String)],
    base_file: &dyn Fn(&str) -> Option<String>,
) -> Traced {
    let of: Vec<(&String, BTreeSet<String>)> = sources
        .iter()
        .map(|(id, d)| {
            (
                id,
                added_lines(d).iter().map(|a| normalise(&a.text)).collect(),
            )
        })
        .collect();
    let mut base: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut t = Traced::default();
    for a in added_lines(combined) {
        let n = normalise(&a.text);
        if n.is_empty() {
            continue;
        }
        t.added += 1;
        let mut found = false;
        for (id, lines) in &of {
            if lines.contains(&n) {
                *t.from.entry((*id).clone()).or_default() += 1;
                found = true;
            }
        }
        let in_base = base
            .entry(a.file.clone())
            .or_insert_with(|| {
                base_file(&a.file)
                    .map(|s| s.lines().map(normalise).collect())
                    .unwrap_or_default()
            })
            .contains(&n);
        if in_base {
            *t.from.entry("base".into()).or_default() += 1;
        }
        if !found && !in_base {
            t.new.push(NewLine {
                glue: is_glue(&a.text),
                file: a.file,
                line: a.line,
                text: a.text,
            });
        }
    }
    // A binary file is traced whole: the same blob at the same path in a
    // source, or it is new.
    let binaries: Vec<(String, String)> =
        sources.iter().flat_map(|(_, d)| binary_files(d)).collect();
    for (path, blob) in binary_files(combined) {
        t.added += 1;
        let same = |(p, b): &(String, String)| {
            *p == path && !blob.is_empty() && (b.starts_with(&blob) || blob.starts_with(b.as_str()))
        };
        if !binaries.iter().any(same) {
            t.new.push(NewLine {
                file: path,
                line: 0,
                text: "(a binary file)".into(),
                glue: false,
            });
        }
    }
    t
}

/// The `provenance` report of a combined candidate: where its lines came
/// from; each new line an issue at its file and line (a warning: a human
/// must choose such a candidate). Glue lines are allowed (listed, not
/// issues) when `allow_glue`.
pub fn report(t: &Traced, allow_glue: bool) -> Report {
    let mut r = Report::new(Layer::Agent, PROVENANCE);
    r.required = false;
    let from: Vec<String> = t.from.iter().map(|(id, n)| format!("{id} {n}")).collect();
    let blocking: Vec<&NewLine> = t.new.iter().filter(|l| !(allow_glue && l.glue)).collect();
    let glue = t.new.len() - blocking.len();
    r.output = format!(
        "{} added; traced to: {}{}{}",
        rascal_core::text::plural(t.added as u64, "line"),
        if from.is_empty() {
            "nothing".to_string()
        } else {
            from.join(", ")
        },
        if t.new.is_empty() {
            String::new()
        } else {
            format!(
                "; new code (in no candidate, not in the base): {}",
                t.new.len()
            )
        },
        if glue > 0 {
            format!(" ({glue} of them glue, allowed by `combine.allow_new: glue`)")
        } else {
            String::new()
        }
    );
    r.issues = blocking
        .iter()
        .map(|l| {
            Issue::new(
                RULE_NEW_CODE,
                Severity::Warning,
                format!(
                    "new code in no candidate: `{}`",
                    rascal_core::text::ellipsis(l.text.trim(), 160)
                ),
            )
            .at(&l.file, (l.line > 0).then_some(l.line))
        })
        .collect();
    r.finish()
}

/// How many lines of new code a candidate's reports name (0 for a
/// candidate that was not combined).
pub fn new_code(reports: &[Report]) -> usize {
    reports
        .iter()
        .filter(|r| r.layer == Layer::Agent && r.check == PROVENANCE)
        .flat_map(|r| &r.issues)
        .filter(|i| i.rule == RULE_NEW_CODE)
        .count()
}

/// Why choosing candidate `id` needs a human's reason: the lines of new
/// code its reports name. None when it has none.
pub fn needs_reason(id: &str, reports: &[Report]) -> Option<String> {
    let n = new_code(reports);
    (n > 0).then(|| {
        format!(
            "candidate `{id}` has {} of new code in no candidate it was combined from",
            rascal_core::text::plural(n as u64, "line")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "diff --git a/src/b.rs b/src/b.rs\n--- a/src/b.rs\n+++ b/src/b.rs\n@@ -1,2 +1,3 @@\n fn a() {}\n+fn b() -> u32 {  41 + 1 }\n fn c() {}\n";
    const B: &str = "diff --git a/src/b.rs b/src/b.rs\n--- a/src/b.rs\n+++ b/src/b.rs\n@@ -1,2 +1,3 @@\n fn a() {}\n+fn d() {}\n fn c() {}\n";

    #[test]
    fn added_lines_carry_their_file_and_new_line_number() {
        let d = "diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ b/x\n@@ -0,0 +1,2 @@\n+one\n+two\ndiff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -3,3 +3,3 @@\n c\n-old\n+new\n c\n@@ -20,1 +20,2 @@\n c\n++plus\ndiff --git a/gone b/gone\ndeleted file mode 100644\n--- a/gone\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n";
        let got: Vec<(String, u32, String)> = added_lines(d)
            .into_iter()
            .map(|a| (a.file, a.line, a.text))
            .collect();
        assert_eq!(
            got,
            [
                ("x".into(), 1, "one".into()),
                ("x".into(), 2, "two".into()),
                ("y".into(), 4, "new".into()),
                ("y".into(), 21, "+plus".into()),
            ]
        );
    }

    #[test]
    fn lines_from_sources_and_base_are_traced_and_the_rest_is_new() {
        let combined = "diff --git a/src/b.rs b/src/b.rs\n--- a/src/b.rs\n+++ b/src/b.rs\n@@ -1,2 +1,7 @@\n fn a() {}\n+fn b() -> u32 { 41 + 1 }\n+fn d() {}\n+\n+fn c() {}\n+fn e() { if x == 7 { return 0 } }\n+}\n fn c() {}\n";
        let sources = [
            ("alder".to_string(), A.to_string()),
            ("birch".to_string(), B.to_string()),
        ];
        let base = |p: &str| (p == "src/b.rs").then(|| "fn a() {}\nfn c() {}\n".to_string());
        let t = trace(combined, &sources, &base);
        assert_eq!(t.added, 5, "the blank line is not counted");
        assert_eq!(t.from["alder"], 1, "whitespace does not matter");
        assert_eq!(t.from["birch"], 1);
        assert_eq!(t.from["base"], 1);
        let new: Vec<(u32, bool)> = t.new.iter().map(|l| (l.line, l.glue)).collect();
        assert_eq!(new, [(6, false), (7, true)]);

        let strict = report(&t, false);
        assert_eq!(strict.issues.len(), 2);
        assert_eq!(strict.status, rascal_core::model::verdict::Status::Warn);
        assert_eq!(strict.issues[0].path.as_deref(), Some("src/b.rs"));
        assert_eq!(strict.issues[0].line, Some(6));
        assert_eq!(new_code(&[strict]), 2);
        let glue = report(&t, true);
        assert_eq!(glue.issues.len(), 1, "the brace is glue");
        assert!(glue.output.contains("1 of them glue"), "{}", glue.output);

        let honest = trace(A, &sources, &base);
        let r = report(&honest, false);
        assert!(honest.new.is_empty());
        assert_eq!(r.status, rascal_core::model::verdict::Status::Pass);
        assert_eq!(new_code(&[r]), 0);
    }

    #[test]
    fn a_binary_file_is_new_unless_a_source_has_the_same_blob() {
        let bin = |blob: &str| {
            format!("diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..{blob}\nBinary files /dev/null and b/logo.png differ\n")
        };
        assert_eq!(
            binary_files(&bin("abc1234")),
            [("logo.png".to_string(), "abc1234".to_string())]
        );
        let sources = [("alder".to_string(), bin("abc1234"))];
        let none = |_: &str| None;
        assert!(trace(&bin("abc1234"), &sources, &none).new.is_empty());
        let t = trace(&bin("def5678"), &sources, &none);
        assert_eq!(t.new.len(), 1);
        assert_eq!(
            report(&t, true).issues[0].line,
            None,
            "whole file, glue or not"
        );
    }

    #[test]
    fn glue_is_imports_modules_and_punctuation_only() {
        for g in [
            "use std::fmt;",
            "pub mod parse;",
            "import os",
            "from a import b",
            "#include <stdio.h>",
            "const fs = require('fs');",
            "    \"fmt\"",
            "  });",
            "}",
        ] {
            assert!(is_glue(g), "{g}");
        }
        for not in [
            "if x == 7 { return 0 }",
            "use_it();",
            "return 0;",
            "\"a b\"",
            "let x = 1;",
        ] {
            assert!(!is_glue(not), "{not}");
        }
    }
}
