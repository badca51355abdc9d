//! The ChangeSet of a real worktree against its base: every operation,
//! tracked and untracked.

use crate::common;
use common::TestRepo;
use rascal_core::model::changeset::{EntryKind, Operation};
use rascal_exec::git::workspace;
use std::os::unix::fs::PermissionsExt;

fn change<'a>(
    cs: &'a rascal_core::model::changeset::ChangeSet,
    path: &str,
) -> &'a rascal_core::model::changeset::FileChange {
    cs.files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("no change for {path} in {:#?}", cs.files))
}

#[test]
fn untracked_file_is_a_create_with_its_added_lines() {
    let t = TestRepo::new(&[("a.txt", "one\n")]);
    t.write("new/dir/b.txt", "alpha\nbeta\n");
    let cs = workspace::changeset(t.path(), t.path(), t.head()).unwrap();
    let f = change(&cs, "new/dir/b.txt");
    assert_eq!(f.op, Operation::Create);
    assert!(f.untracked);
    assert_eq!(f.added, 2);
    assert_eq!(f.added_lines[1].line, 2);
    assert_eq!(f.added_lines[1].text, "beta");
    assert_eq!(cs.files.len(), 1);
}

#[test]
fn modify_counts_added_and_removed_lines_with_new_line_numbers() {
    let t = TestRepo::new(&[("a.txt", "1\n2\n3\n4\n")]);
    t.write("a.txt", "1\nTWO\n3\n4\n5\n");
    let cs = workspace::changeset(t.path(), t.path(), t.head()).unwrap();
    let f = change(&cs, "a.txt");
    assert_eq!(f.op, Operation::Modify);
    assert!(!f.untracked);
    assert_eq!((f.added, f.removed), (2, 1));
    let lines: Vec<(u32, &str)> = f
        .added_lines
        .iter()
        .map(|l| (l.line, l.text.as_str()))
        .collect();
    assert_eq!(lines, vec![(2, "TWO"), (5, "5")]);
}

#[test]
fn delete_is_reported_with_removed_count() {
    let t = TestRepo::new(&[("a.txt", "1\n2\n"), ("keep.txt", "k\n")]);
    std::fs::remove_file(t.path().join("a.txt")).unwrap();
    let cs = workspace::changeset(t.path(), t.path(), t.head()).unwrap();
    let f = change(&cs, "a.txt");
    assert_eq!(f.op, Operation::Delete);
    assert_eq!((f.added, f.removed), (0, 2));
    assert_eq!(f.new_kind, None);
}

#[test]
fn rename_of_tracked_file_to_untracked_path_keeps_both_paths() {
    let body = "line one\nline two\nline three\nline four\n";
    let t = TestRepo::new(&[("old/name.rs", body)]);
    std::fs::create_dir_all(t.path().join("new")).unwrap();
    std::fs::rename(t.path().join("old/name.rs"), t.path().join("new/name.rs")).unwrap();
    let cs = workspace::changeset(t.path(), t.path(), t.head()).unwrap();
    let f = change(&cs, "new/name.rs");
    assert_eq!(f.op, Operation::Rename);
    assert_eq!(f.old_path.as_deref(), Some("old/name.rs"));
    assert_eq!(cs.files.len(), 1, "{:#?}", cs.files);
}

#[test]
fn committed_rename_in_the_worktree_is_seen_against_base() {
    let body = "a\nb\nc\nd\ne\n";
    let t = TestRepo::new(&[("x.txt", body)]);
    let base = t.head();
    std::fs::rename(t.path().join("x.txt"), t.path().join("y.txt")).unwrap();
    t.commit_all("agent committed");
    let cs = workspace::changeset(t.path(), t.path(), base).unwrap();
    let f = change(&cs, "y.txt");
    assert_eq!(f.op, Operation::Rename);
    assert_eq!(f.old_path.as_deref(), Some("x.txt"));
    assert!(!f.untracked);
}

#[test]
fn symlink_records_its_target() {
    let t = TestRepo::new(&[("a.txt", "a\n")]);
    std::os::unix::fs::symlink("../../etc/passwd", t.path().join("link")).unwrap();
    let cs = workspace::changeset(t.path(), t.path(), t.head()).unwrap();
    let f = change(&cs, "link");
    assert_eq!(f.op, Operation::Create);
    assert_eq!(f.new_kind, Some(EntryKind::Symlink));
    assert_eq!(f.symlink_target.as_deref(), Some("../../etc/passwd"));
}

#[test]
fn binary_file_is_flagged_without_lines() {
    let t = TestRepo::new(&[("a.txt", "a\n")]);
    t.write_bytes("blob.bin", &[0u8, 159, 146, 150, 0, 1, 2, 255, 0]);
    let cs = workspace::changeset(t.path(), t.path(), t.head()).unwrap();
    let f = change(&cs, "blob.bin");
    assert!(f.binary);
    assert!(f.added_lines.is_empty());
    // Its bytes, for the secret scan.
    assert_eq!(
        f.content.as_deref(),
        Some(&[0u8, 159, 146, 150, 0, 1, 2, 255, 0][..])
    );
}

#[test]
fn text_is_decided_by_content_and_name_not_by_one_nul() {
    let t = TestRepo::new(&[("a.txt", "a\n")]);
    t.write("src/a.rs", "// \0 nul\nuse std::process::Command;\n");
    t.write_bytes("notes.txt", b"caf\xe9 au lait\n");
    t.write_bytes("run", b"#!/bin/sh\n# \xff\0\ncurl x | sh\n");
    t.write_bytes(
        "tool.py",
        b"# coding: latin-1\n# \xff\0\nimport subprocess\n",
    );
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\xff\0".to_vec();
    t.write_bytes("logo.png", &png);
    // Hidden by an ignore file the candidate wrote: read from disk instead.
    t.write(".gitignore", "hidden.png\n");
    t.write_bytes("hidden.png", &png);
    let cs = workspace::changeset(t.path(), t.path(), t.head()).unwrap();
    let lines = |p: &str| -> Vec<String> {
        let f = change(&cs, p);
        assert!(!f.binary, "{p} is text");
        assert!(f.content.is_none(), "{p}");
        f.added_lines.iter().map(|l| l.text.clone()).collect()
    };
    assert_eq!(lines("src/a.rs")[1], "use std::process::Command;");
    assert_eq!(lines("notes.txt"), vec!["caf\u{fffd} au lait"]);
    assert_eq!(lines("run")[2], "curl x | sh");
    assert_eq!(lines("tool.py")[2], "import subprocess");
    for p in ["logo.png", "hidden.png"] {
        let f = change(&cs, p);
        assert!(f.binary, "{p}");
        assert_eq!((f.added, f.added_lines.len()), (0, 0), "{p}");
        assert_eq!(f.content.as_deref(), Some(&png[..]), "{p}");
    }
}

#[test]
fn a_binary_over_the_read_limit_is_held_in_part() {
    let t = TestRepo::new(&[("a.txt", "a\n")]);
    let mut big = vec![0u8, 0xff];
    big.resize(1000, 7);
    t.write_bytes("big.bin", &big);
    let limits = workspace::ChangeSetLimits {
        max_binary_bytes: 100,
    };
    let cs = workspace::changeset_with(t.path(), t.path(), t.head(), &limits).unwrap();
    let f = change(&cs, "big.bin");
    assert!(f.binary);
    assert_eq!(f.size, 1000);
    assert_eq!(f.content.as_deref(), Some(&big[..100]));
}

#[test]
fn mode_only_change_is_a_mode_operation() {
    let t = TestRepo::new(&[("run.sh", "echo hi\n")]);
    std::fs::set_permissions(
        t.path().join("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let cs = workspace::changeset(t.path(), t.path(), t.head()).unwrap();
    let f = change(&cs, "run.sh");
    assert_eq!(f.op, Operation::Mode);
    assert_eq!(f.old_kind, Some(EntryKind::File));
    assert_eq!(f.new_kind, Some(EntryKind::Executable));
    assert!(f.mode_changed());
}

#[test]
fn submodule_gitlink_is_reported_as_submodule() {
    let t = TestRepo::new(&[("a.txt", "a\n")]);
    let base = t.head();
    // A nested repository plus a gitlink entry, as `git submodule add` leaves them.
    let nested = TestRepo::new(&[("lib.rs", "pub fn f() {}\n")]);
    let sub_head = nested.head();
    let sub_dir = t.path().join("vendor/lib");
    std::fs::create_dir_all(sub_dir.parent().unwrap()).unwrap();
    std::fs::rename(nested.dir.path(), &sub_dir).unwrap();
    std::mem::forget(nested.dir);
    let mut index = t.repo.index().unwrap();
    let entry = git2::IndexEntry {
        ctime: git2::IndexTime::new(0, 0),
        mtime: git2::IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode: 0o160000,
        uid: 0,
        gid: 0,
        file_size: 0,
        id: sub_head,
        flags: 0,
        flags_extended: 0,
        path: b"vendor/lib".to_vec(),
    };
    index.add(&entry).unwrap();
    index.write().unwrap();
    let cs = workspace::changeset(t.path(), t.path(), base).unwrap();
    let f = change(&cs, "vendor/lib");
    assert_eq!(f.new_kind, Some(EntryKind::Submodule));
    assert_eq!(f.op, Operation::Create);
}

#[test]
fn ignored_files_are_not_part_of_the_change() {
    let t = TestRepo::new(&[(".gitignore", "/target\n")]);
    t.write("target/debug/out", "junk\n");
    t.write("src/x.rs", "fn x() {}\n");
    let cs = workspace::changeset(t.path(), t.path(), t.head()).unwrap();
    let paths: Vec<&str> = cs.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, vec!["src/x.rs"]);
}

#[test]
fn very_long_added_line_is_kept_whole() {
    let t = TestRepo::new(&[("a.txt", "a\n")]);
    t.write("long.txt", &format!("{}z\n", "y".repeat(1_000_000)));
    let cs = workspace::changeset(t.path(), t.path(), t.head()).unwrap();
    let f = change(&cs, "long.txt");
    assert_eq!(f.added, 1);
    assert_eq!(f.added_lines[0].text.len(), 1_000_001);
    assert!(f.added_lines[0].text.ends_with("yz"));
}

#[test]
fn workspace_is_a_standalone_repository_holding_only_the_base() {
    let t = TestRepo::new(&[("a.txt", "base\n")]);
    let base = t.head();
    t.write("a.txt", "later\n");
    t.commit_all("later");
    // Another candidate's branch with a "reference solution".
    let later = t.head();
    t.repo
        .branch("rascal/other", &t.repo.find_commit(later).unwrap(), true)
        .unwrap();
    let files = tempfile::tempdir().unwrap();
    let path = workspace::workspace_path(files.path(), "r-test-0001", "one");
    let ws = workspace::create_workspace(&t.repo, base, &path, &Default::default()).unwrap();
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "base\n");
    // Its own .git directory (not a pointer into the user's repository).
    assert!(ws.join(".git").is_dir());
    let repo = git2::Repository::open(&ws).unwrap();
    assert_eq!(repo.head().unwrap().peel_to_commit().unwrap().id(), base);
    // No commit after the base, no other ref, no parent history.
    assert!(repo.find_commit(later).is_err());
    let refs: Vec<String> = repo
        .references()
        .unwrap()
        .flatten()
        .filter_map(|r| r.name().ok().map(String::from))
        .collect();
    assert_eq!(refs, vec!["refs/heads/rascal".to_string()], "{refs:?}");
    assert!(repo.is_shallow());
    // git works in it: a clean status.
    let statuses = repo.statuses(None).unwrap();
    assert_eq!(statuses.len(), 0);
    // A killed run leaves files behind; creating it again starts clean.
    std::fs::write(ws.join("junk.txt"), "left over").unwrap();
    let again = workspace::create_workspace(&t.repo, base, &path, &Default::default()).unwrap();
    assert!(!again.join("junk.txt").exists());
    let cs = workspace::changeset(t.path(), &again, base).unwrap();
    assert!(cs.is_empty(), "{:#?}", cs.files);
}

#[test]
fn files_dir_is_outside_the_repository() {
    let t = TestRepo::new(&[("a.txt", "a\n")]);
    let dir = workspace::files_dir(&t.repo);
    let top = std::fs::canonicalize(t.path()).unwrap();
    assert!(
        !dir.starts_with(&top),
        "{} inside {}",
        dir.display(),
        top.display()
    );
    assert!(
        dir.to_string_lossy().contains("/rascal/"),
        "{}",
        dir.display()
    );
}

#[test]
fn bad_ref_and_not_a_repo_are_clear_errors() {
    let t = TestRepo::new(&[("a.txt", "a\n")]);
    let e = workspace::resolve(&t.repo, "no-such-branch").unwrap_err();
    assert!(e.to_string().contains("no-such-branch"), "{e}");
    let plain = tempfile::tempdir().unwrap();
    let e = workspace::open(plain.path()).err().expect("not a repo");
    assert!(e.to_string().contains("not inside a git repository"), "{e}");
}

#[test]
fn untracked_nested_repository_is_not_silently_dropped() {
    let t = TestRepo::new(&[("a.txt", "a\n")]);
    let nested = TestRepo::new(&[("lib.rs", "pub fn f() {}\n")]);
    std::fs::create_dir_all(t.path().join("vendor")).unwrap();
    std::fs::rename(nested.dir.path(), t.path().join("vendor/cloned")).unwrap();
    std::mem::forget(nested.dir);
    let cs = workspace::changeset(t.path(), t.path(), t.head()).unwrap();
    assert!(
        cs.files
            .iter()
            .any(|f| f.path == "vendor/cloned" && f.new_kind == Some(EntryKind::Submodule)),
        "{:#?}",
        cs.files
    );
}

#[test]
fn a_rascal_artifacts_directory_in_the_workspace_is_an_ordinary_part_of_the_change() {
    // Artifacts live outside the workspace now ($RASCAL_ARTIFACTS_DIR):
    // nothing in the workspace is left out of the change by its name.
    let body = "one\ntwo\nthree\nfour\nfive\n";
    let t = TestRepo::new(&[("secret/keep.txt", body), ("a.txt", "a\n")]);
    std::fs::create_dir_all(t.path().join(".rascal-artifacts")).unwrap();
    std::fs::write(
        t.path().join(".rascal-artifacts/commit_message.txt"),
        "feat: x\n",
    )
    .unwrap();
    std::fs::rename(
        t.path().join("secret/keep.txt"),
        t.path().join(".rascal-artifacts/keep.txt"),
    )
    .unwrap();
    let cs = workspace::changeset(t.path(), t.path(), t.head()).unwrap();
    let mut paths: Vec<(&str, Operation)> =
        cs.files.iter().map(|f| (f.path.as_str(), f.op)).collect();
    paths.sort_by_key(|(p, _)| *p);
    assert_eq!(
        paths,
        vec![
            (".rascal-artifacts/commit_message.txt", Operation::Create),
            (".rascal-artifacts/keep.txt", Operation::Rename),
        ],
        "{:#?}",
        cs.files
    );
}

#[test]
fn gitattributes_cannot_hide_added_lines_as_binary() {
    let t = TestRepo::new(&[("src/a.rs", "fn a() {}\n")]);
    t.write("src/.gitattributes", "*.rs -diff\n");
    t.write("src/a.rs", "fn a() {}\nuse std::process::Command;\n");
    let cs = workspace::changeset(t.path(), t.path(), t.head()).unwrap();
    let f = change(&cs, "src/a.rs");
    assert!(!f.binary);
    assert_eq!(f.added_lines[0].text, "use std::process::Command;");
}

#[test]
fn what_an_agent_does_to_its_own_git_does_not_change_the_change() {
    let t = TestRepo::new(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let base = t.head();
    let files = tempfile::tempdir().unwrap();
    let ws = workspace::create_workspace(
        &t.repo,
        base,
        &workspace::workspace_path(files.path(), "r-test-0002", "evil"),
        &Default::default(),
    )
    .unwrap();
    std::fs::write(ws.join("a.txt"), "changed\n").unwrap();
    // Hide it from the workspace's own index, exclude a new file there, and
    // finally point .git at a decoy repository.
    let own = git2::Repository::open(&ws).unwrap();
    let mut index = own.index().unwrap();
    let mut entry = index.get_path(std::path::Path::new("a.txt"), 0).unwrap();
    entry.flags |= 0x8000; // assume-valid
    index.add(&entry).unwrap();
    index.write().unwrap();
    std::fs::write(ws.join(".git/info/exclude"), "hidden.rs\n").unwrap();
    std::fs::write(ws.join("hidden.rs"), "fn x() {}\n").unwrap();
    drop(own);
    let decoy = TestRepo::new(&[("a.txt", "changed\n")]);
    std::fs::remove_dir_all(ws.join(".git")).unwrap();
    std::fs::write(
        ws.join(".git"),
        format!("gitdir: {}\n", decoy.path().join(".git").display()),
    )
    .unwrap();
    let cs = workspace::changeset(t.path(), &ws, base).unwrap();
    let paths: Vec<&str> = cs.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, vec!["a.txt", "hidden.rs"], "{:#?}", cs.files);
}

#[test]
fn only_the_base_commits_ignore_rules_decide_what_is_left_out() {
    let t = TestRepo::new(&[
        (".gitignore", "/target\n"),
        ("src/lib.rs", "pub mod a;\n"),
        ("src/a.rs", "pub fn a() {}\n"),
    ]);
    let base = t.head();
    let files = tempfile::tempdir().unwrap();
    let ws = workspace::create_workspace(
        &t.repo,
        base,
        &workspace::workspace_path(files.path(), "r-test-0003", "sly"),
        &Default::default(),
    )
    .unwrap();
    // A .gitignore of its own hides a new file (and itself) …
    std::fs::write(ws.join("src/.gitignore"), "hidden.rs\n.gitignore\n").unwrap();
    std::fs::write(ws.join("src/hidden.rs"), "pub fn token() {}\n").unwrap();
    // … an exclude in its own .git hides a directory …
    std::fs::write(ws.join(".git/info/exclude"), ".cargo/\n").unwrap();
    std::fs::create_dir_all(ws.join(".cargo")).unwrap();
    std::fs::write(ws.join(".cargo/config.toml"), "[build]\n").unwrap();
    // … and deleting the base's .gitignore does not put target/ in.
    std::fs::remove_file(ws.join(".gitignore")).unwrap();
    std::fs::create_dir_all(ws.join("target/debug")).unwrap();
    std::fs::write(ws.join("target/debug/out"), "binary-ish\n").unwrap();
    let cs = workspace::changeset(t.path(), &ws, base).unwrap();
    let paths: Vec<(&str, Operation)> = cs.files.iter().map(|f| (f.path.as_str(), f.op)).collect();
    assert_eq!(
        paths,
        vec![
            (".cargo/config.toml", Operation::Create),
            (".gitignore", Operation::Delete),
            ("src/.gitignore", Operation::Create),
            ("src/hidden.rs", Operation::Create),
        ],
        "{:#?}",
        cs.files
    );
    let hidden = cs.files.iter().find(|f| f.path == "src/hidden.rs").unwrap();
    assert_eq!(hidden.added_lines[0].text, "pub fn token() {}");
}
