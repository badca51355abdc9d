//! `test-integrity/test-data-changed` findings: items only tests use (tables
//! of cases, helpers) and files only tests read, changed or removed.

use super::compare::Finding;
use super::{is_test_path, test_only_items, FileVersions, Words, MAX_FILE_BYTES, RULE_TEST_DATA};
use rascal_core::model::verdict::Issue;
use rascal_core::model::verdict::Severity;

/// `test-integrity/test-data-changed`: an item of a Rust or Python source
/// file that only test code uses (a table of cases, a helper) changed or
/// removed, or a file only test code reads.
pub(super) fn test_data_findings(files: &[FileVersions], words: &Words, out: &mut Vec<Finding>) {
    // The words of the code (not the tests) the change's files have now:
    // code that now names an item only tests used at the base can read or
    // change what the tests check it against (skip the cases it fails,
    // truncate the table at import, pop a row when called).
    // Counted against the same files at the base: a name the code had
    // there as often (a `#[cfg(test)]` item's own definition, a top-level
    // `#[test]` function, which the word count does not tell from code) is
    // not a new use.
    let mut now_words = Words::default();
    let mut base_words = Words::default();
    for f in files {
        if is_test_path(f.path) {
            continue;
        }
        if let Some(n) = f.new.filter(|n| n.len() <= MAX_FILE_BYTES) {
            now_words.add(f.path, n);
        }
        if let Some(b) = f.base.filter(|b| b.len() <= MAX_FILE_BYTES) {
            base_words.add(f.path, b);
        }
    }
    for f in files {
        let Some(base) = f.base else { continue };
        if words.test_only_file(f.path) && f.new != Some(base) && !is_test_path(f.path) {
            // Lines removed is cases removed: an error; lines changed is
            // for a human, as an edited expected value is (the base-tests
            // run judges it by execution with the base's file).
            let (what, severity) = match f.new {
                None => ("removes", Severity::Error),
                Some(n) if n.lines().count() < base.lines().count() => {
                    ("removes lines of", Severity::Error)
                }
                Some(_) => ("changes", Severity::Warning),
            };
            let mut issue = Issue::new(
                RULE_TEST_DATA,
                severity,
                format!(
                    "the change {what} `{}`, a file only test code reads (or whose examples run as doctests): test data is part of the tests, and changing it weakens them like an edited assertion — the base's tests run with the base's version (`allow_test_changes` names data the task may change)",
                    f.path
                ),
            );
            issue.path = Some(f.path.to_string());
            out.push(Finding::file(issue, &[f.path]));
            continue;
        }
        if super::test_data::syntax_of(f.path).is_none() || is_test_path(f.path) {
            continue;
        }
        let items = test_only_items(f.path, base, words);
        let now = f.new.unwrap_or("");
        for it in &items {
            // More uses in the code than the base's code had: its own
            // definition is in both; a second one (`CASES = CASES[:2]`) or
            // a new reference is new.
            let count = |w: &Words| w.code.get(&it.name).copied().unwrap_or(0);
            if count(&now_words) > count(&base_words) {
                out.push(data_finding(
                    f.path,
                    it,
                    Severity::Error,
                    format!(
                        "code under test now names `{}` ({}:{}), which only test code used at the base: the code can read or change what the tests check it against",
                        it.name, f.path, it.line
                    ),
                ));
            }
        }
        for (it, gone) in super::test_data::changed(f.path, base, now, &items) {
            // Cases removed (the item, or rows of its table) are an error;
            // an item changed otherwise is for a human, as an edited
            // expected value is (the base-tests run judges it by execution
            // with the base's version).
            let (what, severity) = if gone {
                ("removes", Severity::Error)
            } else if super::test_data::shrinks(f.path, base, now, it) {
                ("removes cases from", Severity::Error)
            } else {
                ("changes", Severity::Warning)
            };
            out.push(data_finding(
                f.path,
                it,
                severity,
                format!(
                    "the change {what} `{}` ({}:{}), which only test code uses: test data is part of the tests, and changing it weakens them like an edited assertion — the base's tests run with the base's version",
                    it.name, f.path, it.line
                ),
            ));
        }
    }
}

/// A `test-integrity/test-data-changed` finding on item `it` of `path`
/// (an allowance naming the item or the path turns it into information).
pub(super) fn data_finding(
    path: &str,
    it: &super::test_data::Item,
    severity: Severity,
    why: String,
) -> Finding {
    let mut issue = Issue::new(
        RULE_TEST_DATA,
        severity,
        format!("{why} (`allow_test_changes` names data the task may change)"),
    );
    issue.path = Some(path.to_string());
    issue.line = Some(it.line);
    let mut finding = Finding::file(issue, &[path]);
    finding.tests.push((it.name.clone(), it.name.clone()));
    finding
}
