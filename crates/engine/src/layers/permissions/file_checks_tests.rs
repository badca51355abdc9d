//! The checks on one changed file (`file_checks.rs`), as unit tests: each
//! rule fires where it must and nowhere else, so that a mutant of the
//! checks (a `!` dropped, an `||` made `&&`, a branch gone) changes what a
//! test sees. `tests/it/permissions.rs` has the hostile tables; these are
//! what a `--lib` mutation run builds.

use super::*;

pub(super) fn policy(yaml: &str) -> Permissions {
    let cfg: PermissionsConfig =
        rascal_core::config::parse("test.yaml", yaml).expect("test config");
    Permissions::compile(&cfg).expect("compile")
}

pub(super) fn set(files: Vec<FileChange>) -> ChangeSet {
    ChangeSet {
        files,
        ..ChangeSet::default()
    }
}

/// The rules `p` reports for `files` (without `permissions/`), sorted.
pub(super) fn rules(p: &Permissions, files: Vec<FileChange>) -> Vec<String> {
    let mut r: Vec<String> = p
        .check(&set(files))
        .into_iter()
        .map(|i| i.rule.trim_start_matches("permissions/").to_string())
        .collect();
    r.sort();
    r
}

fn kind(mut f: FileChange, old: Option<EntryKind>, new: Option<EntryKind>) -> FileChange {
    f.old_kind = old;
    f.new_kind = new;
    f
}

fn rename(old: &str, new: &str) -> FileChange {
    let mut f = FileChange::new(new, Operation::Rename);
    f.old_path = Some(old.to_string());
    f
}

fn symlink(path: &str, target: Option<&str>) -> FileChange {
    let mut f = kind(
        FileChange::new(path, Operation::Create),
        None,
        Some(EntryKind::Symlink),
    );
    f.symlink_target = target.map(str::to_string);
    f
}

const ALL_OPS: &str = "denied_operations: [create, modify, delete, rename, mode]";

/// The operations one change amounts to, as `denied_operations` sees them:
/// (operation, path it applies to, reported as part of a rename).
fn ops(f: FileChange) -> Vec<(String, String, bool)> {
    let mut ops: Vec<(String, String, bool)> = policy(ALL_OPS)
        .check(&set(vec![f]))
        .into_iter()
        .filter(|i| i.rule == "permissions/operation-denied")
        .map(|i| {
            let m = &i.message;
            let start = m.find("operation `").expect(m) + "operation `".len();
            let end = start + m[start..].find('`').expect(m);
            let part = m.contains("(as part of a rename)");
            (m[start..end].to_string(), i.path.unwrap(), part)
        })
        .collect();
    ops.sort();
    ops
}

fn op(name: &str, path: &str, part: bool) -> (String, String, bool) {
    (name.to_string(), path.to_string(), part)
}

#[test]
fn a_plain_change_is_its_own_operation() {
    assert_eq!(
        ops(FileChange::new("a", Operation::Modify).with_lines(&["x"])),
        [op("modify", "a", false)]
    );
    assert_eq!(
        ops(FileChange::new("a", Operation::Create)),
        [op("create", "a", false)]
    );
    assert_eq!(
        ops(FileChange::new("a", Operation::Delete)),
        [op("delete", "a", false)]
    );
}

/// A rename deletes its old path and creates its new one; with any change
/// of content (by count or by lines) it also modifies it.
#[test]
fn a_rename_is_a_delete_and_a_create() {
    let moved = [
        op("create", "new", true),
        op("delete", "old", true),
        op("rename", "new", false),
    ];
    assert_eq!(ops(rename("old", "new")), moved);
    let mut added = rename("old", "new");
    added.added = 1;
    let mut removed = rename("old", "new");
    removed.removed = 1;
    let mut lines = rename("old", "new").with_lines(&["x"]);
    lines.added = 0;
    for edited in [added, removed, lines] {
        let mut with_modify = moved.to_vec();
        with_modify.insert(2, op("modify", "new", true));
        assert_eq!(ops(edited), with_modify);
    }
}

/// A mode change with content is also a modify; a modify whose kind
/// changed is also a mode change; kinds that say a side is missing win
/// over the operation word.
#[test]
fn kinds_and_content_add_operations() {
    let exe = Some(EntryKind::Executable);
    let file = Some(EntryKind::File);
    let chmod = kind(FileChange::new("a", Operation::Mode), file, exe);
    assert_eq!(ops(chmod.clone()), [op("mode", "a", false)]);
    assert_eq!(
        ops(chmod.with_lines(&["x"])),
        [op("mode", "a", false), op("modify", "a", false)]
    );
    let edit = || FileChange::new("a", Operation::Modify).with_lines(&["x"]);
    assert_eq!(
        ops(kind(edit(), file, exe)),
        [op("mode", "a", false), op("modify", "a", false)]
    );
    assert_eq!(
        ops(kind(edit(), file, None)),
        [op("delete", "a", false), op("modify", "a", false)]
    );
    assert_eq!(
        ops(kind(edit(), None, file)),
        [op("create", "a", false), op("modify", "a", false)]
    );
}

#[test]
fn allowed_operations_admit_only_theirs() {
    let p = policy("allowed_operations: [modify]");
    let edit = FileChange::new("a", Operation::Modify).with_lines(&["x"]);
    assert!(rules(&p, vec![edit]).is_empty());
    assert_eq!(
        rules(&p, vec![FileChange::new("a", Operation::Create)]),
        ["operation-not-allowed"]
    );
    let p = policy("{allowed_operations: [delete], denied_operations: [delete]}");
    assert_eq!(
        rules(&p, vec![FileChange::new("a", Operation::Delete)]),
        ["operation-denied"],
        "denied wins, reported once"
    );
}

#[test]
fn paths_inside_and_outside_the_allowed_and_denied_ones() {
    let p = policy("{allowed_paths: ['src/**'], denied_paths: ['src/secret/**']}");
    let edit = |path: &str| FileChange::new(path, Operation::Modify).with_lines(&["x"]);
    assert!(rules(&p, vec![edit("src/a.rs")]).is_empty());
    assert_eq!(rules(&p, vec![edit("Makefile")]), ["outside-allowed-paths"]);
    assert_eq!(rules(&p, vec![edit("src/secret/k")]), ["denied-path"]);
    let found = p.check(&set(vec![edit("src/secret/k")]));
    assert_eq!(found[0].severity, Severity::Error);
    assert!(
        found[0].message.starts_with("changed path `src/secret/k`"),
        "{}",
        found[0].message
    );
    // Case is folded unless the config says otherwise.
    let p = policy("denied_paths: ['.github/**']");
    assert_eq!(rules(&p, vec![edit(".GitHub/ci.yml")]), ["denied-path"]);
    let p = policy("{denied_paths: ['.github/**'], case_sensitive: true}");
    assert!(rules(&p, vec![edit(".GitHub/ci.yml")]).is_empty());
    // A narrowed policy allows what every list allows.
    let repo: PermissionsConfig =
        rascal_core::config::parse("test.yaml", "allowed_paths: ['src/**']").unwrap();
    let task: PermissionsConfig =
        rascal_core::config::parse("test.yaml", "allowed_paths: ['src/a/**']").unwrap();
    let p = Permissions::compile(&repo.narrow(&task)).unwrap();
    assert!(rules(&p, vec![edit("src/a/x.rs")]).is_empty());
    assert_eq!(rules(&p, vec![edit("src/b.rs")]), ["outside-allowed-paths"]);
}

#[test]
fn escapes_protected_directories_and_suspicious_names() {
    let p = policy("{}");
    let edit = |path: &str| FileChange::new(path, Operation::Modify).with_lines(&["x"]);
    assert_eq!(rules(&p, vec![edit("../x")]), ["path-escape"]);
    assert_eq!(
        rules(&p, vec![edit(".rascal/config.yaml")]),
        ["self-protection"]
    );
    assert_eq!(rules(&p, vec![edit(".RASCAL/x")]), ["self-protection"]);
    assert_eq!(rules(&p, vec![edit(".git/hooks/pre-commit")]), ["git-dir"]);
    let own = policy("allow_self_edit: true");
    assert!(rules(&own, vec![edit(".rascal/config.yaml")]).is_empty());
    assert_eq!(rules(&own, vec![edit(".git/config")]), ["git-dir"]);
    let found = p.check(&set(vec![edit("src\\x.rs")]));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].rule, "permissions/suspicious-path");
    assert_eq!(found[0].severity, Severity::Warning);
    assert_eq!(found[0].confidence, Confidence::Medium);
}

/// Both sides of a rename are judged, and named as such; a rename onto its
/// own path is judged once.
#[test]
fn both_sides_of_a_rename_are_judged() {
    let p = policy("denied_paths: ['.github/**']");
    let out = p.check(&set(vec![rename(".github/ci.yml", "ci.yml")]));
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].path.as_deref(), Some(".github/ci.yml"));
    assert!(out[0].message.starts_with("old path"), "{}", out[0].message);
    let out = p.check(&set(vec![rename("ci.yml", ".github/ci.yml")]));
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(out[0].message.starts_with("new path"), "{}", out[0].message);
    let out = p.check(&set(vec![rename(".github/a", ".github/a")]));
    assert_eq!(out.len(), 1, "{out:?}");
    // A modify that carries an old path is a rename too.
    let mut moved = FileChange::new(".github/b", Operation::Modify);
    moved.old_path = Some("b".into());
    let out = p.check(&set(vec![moved]));
    assert!(out[0].message.starts_with("new path"), "{}", out[0].message);
    // And a rename without one still says `new`.
    let out = p.check(&set(vec![FileChange::new(".github/c", Operation::Rename)]));
    assert!(out[0].message.starts_with("new path"), "{}", out[0].message);
}

#[test]
fn submodules_added_removed_or_configured() {
    let sub = Some(EntryKind::Submodule);
    let changes = [
        kind(FileChange::new("vendor/lib", Operation::Create), None, sub),
        kind(FileChange::new("vendor/lib", Operation::Delete), sub, None),
        FileChange::new(".gitmodules", Operation::Modify).with_lines(&["x"]),
        FileChange::new("./.gitmodules", Operation::Create),
        rename(".gitmodules", "modules.txt"),
        rename("./x/../.gitmodules", "modules.txt"),
    ];
    let strict = policy("{}");
    let allowing = policy("allow_submodules: true");
    for f in changes {
        assert_eq!(rules(&strict, vec![f.clone()]), ["submodule"], "{f:?}");
        assert!(rules(&allowing, vec![f.clone()]).is_empty(), "{f:?}");
    }
    for plain in [
        FileChange::new("src/a.rs", Operation::Modify).with_lines(&["x"]),
        rename("a.txt", "b.txt"),
        rename("../x", "b.txt"),
    ] {
        assert!(
            !rules(&strict, vec![plain.clone()]).contains(&"submodule".to_string()),
            "{plain:?}"
        );
    }
}

#[test]
fn files_made_executable_outside_executable_paths() {
    let exe = Some(EntryKind::Executable);
    let file = Some(EntryKind::File);
    let new_tool = |path: &str| kind(FileChange::new(path, Operation::Create), None, exe);
    let nowhere = policy("{}");
    let bin = policy("executable_paths: ['bin/**']");
    let found = nowhere.check(&set(vec![new_tool("bin/tool")]));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].rule, "permissions/executable");
    assert_eq!(found[0].severity, Severity::Warning);
    assert!(rules(&bin, vec![new_tool("bin/tool")]).is_empty());
    assert!(rules(&bin, vec![new_tool("BIN/tool")]).is_empty(), "folded");
    assert_eq!(rules(&bin, vec![new_tool("scripts/x")]), ["executable"]);
    // Made executable by an edit, or moved while executable.
    let edit = || FileChange::new("scripts/x", Operation::Modify).with_lines(&["x"]);
    assert_eq!(rules(&bin, vec![kind(edit(), file, exe)]), ["executable"]);
    assert!(rules(&bin, vec![kind(edit(), exe, exe)]).is_empty());
    let moved = kind(rename("bin/x", "scripts/x"), exe, exe);
    assert_eq!(rules(&bin, vec![moved]), ["executable"]);
    assert!(rules(&bin, vec![kind(edit(), exe, file)]).is_empty());
    // A narrowed policy: every list must allow it.
    let repo: PermissionsConfig =
        rascal_core::config::parse("test.yaml", "executable_paths: ['bin/**']").unwrap();
    let task: PermissionsConfig =
        rascal_core::config::parse("test.yaml", "executable_paths: ['bin/own/**']").unwrap();
    let p = Permissions::compile(&repo.narrow(&task)).unwrap();
    assert!(rules(&p, vec![new_tool("bin/own/x")]).is_empty());
    assert_eq!(rules(&p, vec![new_tool("bin/x")]), ["executable"]);
    // Everywhere, as the built-in policy says.
    let anywhere = Permissions::compile(&PermissionsConfig::built_in()).unwrap();
    assert!(rules(&anywhere, vec![new_tool("scripts/x")]).is_empty());
}

#[test]
fn symlinks_that_stay_inside_pass() {
    let p = policy("denied_paths: ['secrets/**']");
    for (link, target) in [
        ("src/link", "lib.rs"),
        ("src/up", "../docs/a.md"),
        ("docs", "src"),
        ("l", "ab:c"),
    ] {
        assert!(
            rules(&p, vec![symlink(link, Some(target))]).is_empty(),
            "{link} -> {target}"
        );
    }
    // A file that is not a link is not judged as one.
    let mut file = FileChange::new("f", Operation::Modify).with_lines(&["x"]);
    file.symlink_target = Some("/etc/passwd".into());
    assert!(rules(&p, vec![file]).is_empty());
    // Nor is a link being deleted.
    let mut gone = symlink("old", Some("/etc/passwd"));
    gone.op = Operation::Delete;
    assert!(rules(&p, vec![gone]).is_empty());
    let own = policy("allow_self_edit: true");
    assert!(rules(&own, vec![symlink("l", Some(".rascal/config.yaml"))]).is_empty());
}

#[test]
fn symlinks_that_leave_or_reach_the_protected_fail() {
    let p = policy("denied_paths: ['secrets/**']");
    for (target, why) in [
        (Some("/etc/passwd"), "outside the repository"),
        (Some("\\\\server\\share"), "outside the repository"),
        (Some("~/.ssh/id_rsa"), "outside the repository"),
        (Some("C:/Windows"), "a drive path"),
        (Some("a\0b"), "NUL"),
        (Some(""), "an empty target"),
        (None, "no recorded target"),
        (Some("."), "the repository root"),
        (Some("src/.."), "the repository root"),
        (Some("../../etc"), "outside the repository"),
        (Some(".rascal/config.yaml"), "protected"),
        (Some(".RASCAL"), "protected"),
        (Some(".git/config"), "the git directory"),
        (Some("secrets/key"), "a denied path"),
        (Some("Secrets/key"), "a denied path"),
    ] {
        let found = p.check(&set(vec![symlink("l", target)]));
        assert_eq!(found.len(), 1, "{target:?}: {found:?}");
        assert_eq!(found[0].rule, "permissions/symlink-escape", "{target:?}");
        assert_eq!(found[0].severity, Severity::Error);
        assert!(found[0].message.contains(why), "{}", found[0].message);
    }
    // Through another link of the same change (which alone stays inside).
    let chain = vec![
        symlink("a", Some("d/e/up/../..")),
        symlink("d/e/up", Some("..")),
    ];
    let found = p.check(&set(chain));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].path.as_deref(), Some("a"));
    // A link whose own path escapes is reported as that, once.
    assert_eq!(
        rules(&p, vec![symlink("../l", Some("/etc"))]),
        ["path-escape"]
    );
}

#[test]
fn forbidden_imports_are_reported_on_their_line() {
    let p = policy("forbidden_imports: ['subprocess', ' ', 'os.path']");
    let f = FileChange::new("tool.py", Operation::Create).with_lines(&[
        "import json",
        "import subprocess",
        "from os.path import join",
    ]);
    let found = p.check(&set(vec![f.clone()]));
    let at: Vec<(&str, Option<&str>, Option<u32>)> = found
        .iter()
        .map(|i| (i.rule.as_str(), i.path.as_deref(), i.line))
        .collect();
    assert_eq!(
        at,
        [
            ("permissions/forbidden-import", Some("tool.py"), Some(2)),
            ("permissions/forbidden-import", Some("tool.py"), Some(3)),
        ]
    );
    assert!(found[0].message.contains("`subprocess`"), "{found:?}");
    assert_eq!(p.import_issues(&f), found);
    let clean = FileChange::new("tool.py", Operation::Create).with_lines(&["import json"]);
    assert!(p.check(&set(vec![clean])).is_empty());
}

/// The kinds as git records them in a real repository: a file made
/// executable, a link out of the tree and one inside it, a new
/// `.gitmodules`.
#[cfg(unix)]
#[test]
fn a_real_repositorys_change_is_judged_by_its_kinds() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let repo = git2::Repository::init(root).unwrap();
    let mut index = repo.index().unwrap();
    for (path, text) in [("run.sh", "echo hi\n"), ("README", "hi\n")] {
        std::fs::write(root.join(path), text).unwrap();
        index.add_path(std::path::Path::new(path)).unwrap();
    }
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@example.com").unwrap();
    let base = repo
        .commit(Some("HEAD"), &sig, &sig, "base", &tree, &[])
        .unwrap();
    let run = root.join("run.sh");
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o755)).unwrap();
    symlink("/etc/passwd", root.join("passwd")).unwrap();
    symlink("README", root.join("readme-link")).unwrap();
    std::fs::write(root.join(".gitmodules"), "[submodule \"x\"]\n").unwrap();
    let changes = rascal_exec::git::workspace::changeset(root, root, base).unwrap();
    let mut found: Vec<(String, String)> = policy("{}")
        .check(&changes)
        .into_iter()
        .map(|i| (i.path.unwrap(), i.rule))
        .collect();
    found.sort();
    let expected = [
        (".gitmodules", "permissions/submodule"),
        ("passwd", "permissions/symlink-escape"),
        ("run.sh", "permissions/executable"),
    ]
    .map(|(p, r)| (p.to_string(), r.to_string()));
    assert_eq!(found, expected);
}
