//! Test helpers shared by the test-integrity unit tests: run the check on in-
//! memory files and read back rules.

use super::*;

pub fn check_files(files: &[FileVersions]) -> Vec<Issue> {
    check(&Input {
        files,
        test_commands: &[],
        allow: &[],
        ledger: None,
        crate_words: None,
    })
}

/// The `test-data-changed` messages of a change of one file from
/// `base` to `now`, with the crate's words at the base.
pub fn data_findings(path: &str, base: &str, now: &str, words: &Words) -> Vec<String> {
    let files = [FileVersions {
        path,
        old_path: None,
        base: Some(base),
        new: Some(now),
    }];
    check(&Input {
        files: &files,
        test_commands: &[],
        allow: &[],
        ledger: None,
        crate_words: Some(words),
    })
    .into_iter()
    .filter(|i| i.rule == RULE_TEST_DATA)
    .map(|i| i.message)
    .collect()
}

pub fn check_one(path: &str, base: Option<&str>, new: Option<&str>) -> Vec<Issue> {
    check_files(&[FileVersions {
        path,
        old_path: None,
        base,
        new,
    }])
}

/// `base` with the first `from` replaced by `to` (which must be there).
pub fn edited(base: &str, from: &str, to: &str) -> String {
    assert!(base.contains(from), "fixture lacks {from:?}");
    base.replacen(from, to, 1)
}

/// Each edit of `base` at `path` gives only required skip-marker errors.
pub fn each_is_a_skip_marker(path: &str, base: &str, edits: &[(&str, &str)]) {
    for (from, to) in edits {
        let now = edited(base, from, to);
        let issues = check_one(path, Some(base), Some(&now));
        assert!(!issues.is_empty(), "{to}");
        assert!(
            issues
                .iter()
                .all(|i| i.rule == RULE_SKIP && i.severity == Severity::Error),
            "{to}: {issues:?}"
        );
    }
}

/// One edit of a language's test file and the rules it must give:
/// `(from, to, rules)` (none for a harmless edit).
pub type Edit<'a> = (&'a str, &'a str, &'a [(&'a str, Severity)]);

/// Each edit of `base` at `path` gives exactly its rules: the cases
/// every language shares (an early return, an assertion removed, an
/// expected value changed) written once, as a table per language.
pub fn each_edit_gives(path: &str, base: &str, edits: &[Edit]) {
    for (from, to, want) in edits {
        let now = edited(base, from, to);
        let issues = check_one(path, Some(base), Some(&now));
        assert_eq!(rules(&issues), *want, "{from:?} → {to:?}");
    }
}

pub fn rules(issues: &[Issue]) -> Vec<(&str, Severity)> {
    issues
        .iter()
        .map(|i| (i.rule.as_str(), i.severity))
        .collect()
}
