//! The rest of the layer (`permissions.rs`) as unit tests: imports read
//! while a change was streamed, Unicode look-alikes of the protected and
//! denied names, the policy's mode.

use super::file_checks_tests::{policy, rules, set};
use super::*;
use std::collections::BTreeMap;

fn streamed(path: &str, lines: &[&str]) -> FileChange {
    let mut f = FileChange::new(path, Operation::Create).with_lines(lines);
    f.release_content(None);
    f
}

/// A streamed file's imports are what was found as it was read; one not
/// read is an error; a policy without forbidden imports reads nothing.
#[test]
fn imports_found_while_streaming_are_used_once() {
    let p = policy("forbidden_imports: ['subprocess']");
    assert!(p.reads_content());
    assert!(!policy("{}").reads_content());
    let before = FileChange::new("t.py", Operation::Create).with_lines(&["import subprocess"]);
    let found = p.import_issues(&before);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(policy("{}").import_issues(&before).is_empty());
    let read: BTreeMap<String, Vec<Issue>> = [
        ("t.py".to_string(), found.clone()),
        ("clean.py".to_string(), Vec::new()),
    ]
    .into();
    // Twice: a file handed over in two parts is one file.
    let files = vec![
        streamed("t.py", &["import subprocess"]),
        streamed("t.py", &["import subprocess"]),
        streamed("clean.py", &["import json"]),
    ];
    assert_eq!(p.check_read(&set(files.clone()), &read), found);
    let unread = p.check_read(&set(vec![streamed("other.py", &[])]), &read);
    assert_eq!(unread.len(), 1, "{unread:?}");
    assert_eq!(unread[0].rule, "permissions/unread");
    assert_eq!(unread[0].severity, Severity::Error);
    // Not streamed and not read: its lines are read now.
    let fresh = FileChange::new("new.py", Operation::Create).with_lines(&["import subprocess"]);
    assert_eq!(
        rules(&p, vec![fresh.clone()]),
        ["forbidden-import"],
        "no entry"
    );
    let at = p.check_read(&set(vec![fresh]), &read);
    assert_eq!(at.len(), 1, "{at:?}");
    assert_eq!(at[0].path.as_deref(), Some("new.py"));
    // Nothing to look for: a streamed file is not missed.
    assert!(policy("{}").check_read(&set(files), &read).is_empty());
}

/// (rule, severity, confidence, message) of each issue for `paths`.
fn look_alikes(p: &Permissions, paths: &[&str]) -> Vec<String> {
    let files = paths
        .iter()
        .map(|path| FileChange::new(*path, Operation::Create))
        .collect();
    p.check(&set(files))
        .into_iter()
        .map(|i| {
            assert_eq!(i.rule, "permissions/look-alike");
            assert_eq!(i.severity, Severity::Warning);
            assert_eq!(i.confidence, Confidence::Medium);
            i.message
        })
        .collect()
}

#[test]
fn look_alike_names_are_reported_once_each() {
    let p = policy("denied_paths: ['cool/**', 'src/secret/**']");
    // Cyrillic і (U+0456) in `.github`, twice under it: one warning.
    let found = look_alikes(&p, &[".g\u{456}thub/ci.yml", ".g\u{456}thub/other.yml"]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("`.g\u{456}thub/…` looks like `.github` (non-ASCII: U+0456);"),
        "{}",
        found[0]
    );
    // The name alone, and a look-alike of `.rascal` (Cyrillic а).
    let found = look_alikes(&p, &[".g\u{456}thub", ".r\u{430}scal/config.yaml"]);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with("`.g\u{456}thub` looks like"),
        "{}",
        found[0]
    );
    assert!(found[1].contains("looks like `.rascal`"), "{}", found[1]);
    // A denied glob's first component, by plain ASCII letters.
    let found = look_alikes(&p, &["coo1/x"]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("`coo1/…` looks like `cool`; a look-alike"),
        "{}",
        found[0]
    );
    // The names themselves, and plain names, are not look-alikes.
    for path in [".github/ci.yml", ".GitHub/ci.yml", "src/a.rs", "docs"] {
        assert!(look_alikes(&p, &[path]).is_empty(), "{path}");
    }
}

#[test]
fn the_mode_is_advisory_only_when_the_config_says_so() {
    assert!(policy("mode: advisory").advisory());
    assert!(!policy("mode: strict").advisory());
    assert!(!policy("{}").advisory());
}
