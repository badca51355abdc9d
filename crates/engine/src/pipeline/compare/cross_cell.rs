//! What one cross-test cell is: a test another candidate wrote, run on a
//! target's code, either shows something about that code or does not.
//! It does not when the test leans on a word only its author's change
//! added — a name, a constant, a message, a file the base never had and
//! the target never wrote (`test_integrity::only_theirs`): the target
//! never defined it, so the test is "–" there, whatever it did. Anything
//! else a test does on the target is the target's: a failed assertion, a
//! test that no longer builds because the target changed or removed what
//! the base had, a process that died, a test that reported no result
//! (skipped, aborted) — each a failure, with a note saying which, so that
//! evading another author's test never reads as "not applicable".

use rascal_core::model::changeset::ChangeSet;
use rascal_exec::exec::place::Place;
use rascal_scan::test_integrity::{self, Corpus};
use std::collections::BTreeSet;

/// Text files larger than this are not read into a corpus.
const MAX_FILE: usize = 1024 * 1024;
/// At most this much of the base is read into its corpus.
const MAX_BASE: usize = 32 * 1024 * 1024;

/// The base's text, every file of its tree up to [`MAX_BASE`] (but
/// `.rascal/`, rascal's configuration, which is no code of the project).
pub fn base_corpus(origin: &std::path::Path, base: &str) -> Corpus {
    let mut c = Corpus::default();
    let Ok(base) = git2::Oid::from_str(base) else {
        return c;
    };
    for (path, text) in
        crate::pipeline::compare::base_text::text_files(origin, base, MAX_FILE, MAX_BASE)
    {
        c.add(&path);
        c.add(&text);
    }
    c
}

/// The text of a candidate's change: its changed paths, and each changed
/// file after the change — with `code_only`, its code alone (test files,
/// their paths too, left out; Rust test modules cut out of sources).
pub fn change_corpus(place: &Place, changes: &ChangeSet, code_only: bool) -> Corpus {
    let files = place.files_reader();
    let mut c = Corpus::default();
    for f in &changes.files {
        let p = f.path.as_str();
        let test_file = test_integrity::is_test_path(p);
        if code_only && test_file {
            continue;
        }
        for p in f.paths() {
            c.add(p);
        }
        let Some(text) = files
            .read(p)
            .filter(|b| b.len() <= MAX_FILE)
            .and_then(|b| String::from_utf8(b).ok())
        else {
            continue;
        };
        if code_only {
            c.add(&test_integrity::code_of(p, &text));
        } else {
            c.add(&text);
        }
    }
    c
}

/// An author's test files (`listed`: path and text), read once for all
/// its tests' words.
pub fn test_texts(place: &Place, listed: &[String]) -> Vec<(String, String)> {
    let files = place.files_reader();
    listed
        .iter()
        .filter_map(|p| {
            let b = files.read(p).filter(|b| b.len() <= MAX_FILE)?;
            Some((p.clone(), String::from_utf8(b).ok()?))
        })
        .collect()
}

/// The words test `name` reads, from its author's test files `texts`
/// (those that define it; all of them when none does).
pub fn words_of(texts: &[(String, String)], name: &str) -> BTreeSet<String> {
    let found: Vec<BTreeSet<String>> = texts
        .iter()
        .filter_map(|(p, t)| test_integrity::test_words(p, t, name))
        .collect();
    if !found.is_empty() {
        return found.into_iter().flatten().collect();
    }
    texts
        .iter()
        .flat_map(|(_, t)| t.split(|c: char| !(c.is_alphanumeric() || c == '_')))
        .filter(|w| w.len() >= 3)
        .map(str::to_string)
        .collect()
}

/// Why a test says nothing about the target: the words only its author
/// has, as a note (None: it applies).
pub fn not_applicable(
    words: &BTreeSet<String>,
    author: (&str, &Corpus),
    base: &Corpus,
    target: &Corpus,
) -> Option<String> {
    let theirs = test_integrity::only_theirs(words, author.1, base, target);
    if theirs.is_empty() {
        return None;
    }
    let shown: Vec<String> = theirs.iter().take(3).map(|w| format!("`{w}`")).collect();
    Some(format!(
        "uses {}, which only {}'s change has: says nothing about this code",
        shown.join(", "),
        author.0
    ))
}

/// What the runner said of failing test `name` in `text` (its output):
/// the lines that say what was expected and what came (`assertion `left
/// == right` failed · left: 0 · right: -2`, `AssertionError: 2 != 3`),
/// at most three, each cut short. None when the output has no such block.
pub fn failure_excerpt(text: &str, name: &str) -> Option<String> {
    let short = name
        .rsplit([':', '.', '/'])
        .next()
        .unwrap_or(name)
        .split('[')
        .next()
        .unwrap_or(name);
    if short.is_empty() {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let headers = [
        format!("---- {name} stdout ----"),
        format!("=== RUN   {short}"),
        format!("FAIL: {short} ("),
        format!("ERROR: {short} ("),
        format!("--- FAIL: {short}"),
        format!(" {short} _"),
    ];
    let start = lines
        .iter()
        .position(|l| headers.iter().any(|h| l.contains(h.as_str())))
        .or_else(|| lines.iter().rposition(|l| l.contains(short)))?;
    let said: Vec<String> = lines[start + 1..]
        .iter()
        .take(40)
        .take_while(|l| !l.starts_with("---- ") && !l.starts_with("====="))
        .map(|l| l.trim())
        .filter(|l| {
            let low = l.to_ascii_lowercase();
            [
                "left:",
                "right:",
                "assertion",
                "assert ",
                "error:",
                "expected",
                "got ",
                "want",
                "!=",
                "panicked at '",
            ]
            .iter()
            .any(|k| low.contains(k))
                && !low.starts_with("traceback")
                && !low.starts_with("file \"")
        })
        .map(|l| rascal_core::text::cut(l, 100))
        .take(3)
        .collect();
    (!said.is_empty()).then(|| said.join(" · "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_says_what_was_expected_and_what_came() {
        let cargo = "running 2 tests\ntest tests::negs ... FAILED\n\nfailures:\n\n---- tests::negs stdout ----\n\nthread 'tests::negs' panicked at src/lib.rs:12:5:\nassertion `left == right` failed\n  left: 0\n right: -2\nnote: run with `RUST_BACKTRACE=1`\n\n\nfailures:\n    tests::negs\n";
        assert_eq!(
            failure_excerpt(cargo, "tests::negs").as_deref(),
            Some("assertion `left == right` failed · left: 0 · right: -2")
        );
        let unittest = "F\n======================================================================\nFAIL: test_one_two (test_more.TestMore.test_one_two)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"/x/test_more.py\", line 7, in test_one_two\n    self.assertEqual(add(1, 2), 3)\nAssertionError: 2 != 3\n\n";
        assert_eq!(
            failure_excerpt(unittest, "test_more.TestMore.test_one_two").as_deref(),
            Some("AssertionError: 2 != 3")
        );
        let go = "=== RUN   TestAddZero\n    calc_test.go:8: add(0, 5) = 0, want 5\n--- FAIL: TestAddZero (0.00s)\n";
        assert!(failure_excerpt(go, "calc.TestAddZero").is_some_and(|e| e.contains("want 5")));
        assert_eq!(failure_excerpt("all fine\n", "tests::negs"), None);
    }
}
