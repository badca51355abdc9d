//! The ChangeSet read as a stream (`rascal check`): each file's content is
//! handed to the checks once, then let go. Streaming must not open a
//! hiding place: on a hostile change (renames, mode changes, symlinks,
//! submodules, binary and huge files, files the change's own ignore rules
//! hide, CRLF, no final newline, a `-diff` attribute) the checks see
//! exactly what the ChangeSet held whole shows them, and a check that was
//! not fed the stream fails instead of passing on empty content.

use crate::common;
use common::{code, stderr, stdout, TestRepo};
use rascal_core::config::Config;
use rascal_core::model::changeset::{ChangeSet, FileChange};
use rascal_core::model::verdict::Status;
use rascal_engine::layers::evaluate_pure;
use rascal_engine::layers::Permissions;
use rascal_exec::git::workspace::{self, ChangeSetLimits};
use rascal_scan::secrets::SecretScanner;
use std::os::unix::fs::PermissionsExt;

/// A change that tries every way of being different.
fn hostile() -> TestRepo {
    let t = TestRepo::new(&[
        (".gitignore", "/target\n"),
        ("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n"),
        ("src/old_name.rs", "pub fn moved() {}\n// a\n// b\n// c\n"),
        ("gone.txt", "bye\n"),
        ("run.sh", "echo hi\n"),
        ("src/a.rs", "fn a() {}\n"),
    ]);
    // modify, delete, rename, mode change
    t.write(
        "src/lib.rs",
        "pub fn one() -> u32 {\n    2\n}\nuse std::process::Command;\n",
    );
    std::fs::remove_file(t.path().join("gone.txt")).unwrap();
    std::fs::rename(
        t.path().join("src/old_name.rs"),
        t.path().join("src/new_name.rs"),
    )
    .unwrap();
    std::fs::set_permissions(
        t.path().join("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    // symlink out of the repository
    std::os::unix::fs::symlink("../../etc/passwd", t.path().join("link")).unwrap();
    // binary, and a binary bigger than the read limit
    t.write_bytes("blob.bin", &[0u8, 159, 146, 150, 0, 1, 2, 255, 0]);
    let mut big = vec![0u8, 0xff];
    big.resize(5000, b'A');
    t.write_bytes("big.bin", &big);
    // a text file far bigger than the binary read limit, the payload last
    let mut huge = "// filler line of a huge file\n".repeat(20_000);
    huge.push_str("fn late() { dbg!(1); }\n");
    t.write("src/huge.rs", &huge);
    // CRLF, no final newline, empty, a lone newline
    t.write("crlf.txt", "one\r\ntwo\r\n\r\n");
    t.write("no_newline.rs", "use std::process::exit;");
    t.write("empty.txt", "");
    t.write("newline.txt", "\n");
    // `-diff` must not hide lines
    t.write("src/.gitattributes", "*.rs -diff\n");
    t.write("src/a.rs", "fn a() {}\nuse std::process::Command;\n");
    // hidden by an ignore file the change wrote (and ignored by the base)
    t.write("cfg/.gitignore", "hidden.rs\n");
    t.write("cfg/hidden.rs", "fn h() { dbg!(2); }\n");
    t.write("target/debug/out", "base-ignored\n");
    // an untracked nested repository
    let nested = TestRepo::new(&[("lib.rs", "pub fn f() {}\n")]);
    std::fs::create_dir_all(t.path().join("vendor")).unwrap();
    std::fs::rename(nested.dir.path(), t.path().join("vendor/cloned")).unwrap();
    std::mem::forget(nested.dir);
    t
}

/// The ChangeSet whole, streamed, and the files as the stream showed them.
fn both(t: &TestRepo, limits: &ChangeSetLimits) -> (ChangeSet, ChangeSet, Vec<FileChange>) {
    let whole = workspace::changeset_with(t.path(), t.path(), t.head(), limits).unwrap();
    let mut seen = Vec::new();
    let streamed = workspace::changeset_streamed(
        t.path(),
        t.path(),
        t.head(),
        limits,
        Some(&mut |f| seen.push(f.clone())),
    )
    .unwrap();
    // Counted only (no check reads content): the same change.
    let counted =
        workspace::changeset_streamed(t.path(), t.path(), t.head(), limits, None).unwrap();
    assert_eq!(counted, streamed, "counting gives what streaming gives");
    (whole, streamed, assembled(seen))
}

/// The windows the stream handed out (`FileChange::part`), put back
/// together: one FileChange per file, as the checks saw it over all its
/// windows (a binary window's overlap with the one before left out).
fn assembled(seen: Vec<FileChange>) -> Vec<FileChange> {
    let mut out: Vec<FileChange> = Vec::new();
    for mut f in seen {
        let part = f.part.take();
        match (part, out.last_mut()) {
            (Some(p), Some(prev)) if !p.first() && prev.path == f.path => {
                prev.added_lines.append(&mut f.added_lines);
                if let (Some(c), Some(pc)) = (f.content.take(), prev.content.take()) {
                    let mut v = pc.to_vec();
                    let skip = (v.len() as u64 - p.offset) as usize;
                    v.extend_from_slice(&c[skip..]);
                    prev.content = Some(v.into());
                }
                prev.added = f.added;
                prev.removed = f.removed;
            }
            _ => out.push(f),
        }
    }
    out
}

#[test]
fn the_stream_shows_every_file_exactly_as_the_whole_change_holds_it() {
    let t = hostile();
    // (The stream reads every byte of a binary file, in windows; the
    // whole change holds one up to the limit, here all of big.bin.)
    let limits = ChangeSetLimits::default();
    let (whole, streamed, seen) = both(&t, &limits);
    let paths: Vec<&str> = whole.files.iter().map(|f| f.path.as_str()).collect();
    for p in [
        "blob.bin",
        "big.bin",
        "cfg/.gitignore",
        "cfg/hidden.rs",
        "crlf.txt",
        "empty.txt",
        "gone.txt",
        "link",
        "newline.txt",
        "no_newline.rs",
        "run.sh",
        "src/.gitattributes",
        "src/a.rs",
        "src/huge.rs",
        "src/lib.rs",
        "src/new_name.rs",
        "vendor/cloned",
    ] {
        assert!(paths.contains(&p), "{p} is part of the change: {paths:?}");
    }
    assert!(!paths.iter().any(|p| p.starts_with("target/")));
    // Every file reached the checks once, in ChangeSet order, whole.
    assert_eq!(seen.len(), whole.files.len());
    for (s, w) in seen.iter().zip(&whole.files) {
        let short = |f: &FileChange| {
            let mut f = f.clone();
            f.content = None;
            f.added_lines.truncate(3);
            f
        };
        assert_eq!(short(s), short(w), "{}", w.path);
        assert_eq!(s, w, "the stream shows what the whole holds: {}", w.path);
    }
    // What stays is the same change without its content.
    assert_eq!(streamed.files.len(), whole.files.len());
    for (s, w) in streamed.files.iter().zip(&whole.files) {
        assert!(
            s.added_lines.is_empty() && s.content.is_none(),
            "{}",
            s.path
        );
        let mut released = w.clone();
        released.release_content(None);
        assert_eq!(s, &released);
        assert_eq!(s.content_digest(), w.content_digest(), "{}", s.path);
    }
    assert!(streamed.is_streamed() && !whole.is_streamed());
    assert_eq!(streamed.fingerprint(), whole.fingerprint());
    assert_eq!(streamed.lines_changed(), whole.lines_changed());
    // The huge text file is there whole, its last line included.
    let huge = seen.iter().find(|f| f.path == "src/huge.rs").unwrap();
    assert_eq!(huge.added, 20_001);
    assert_eq!(
        huge.added_lines.last().map(|l| (l.line, l.text.as_str())),
        Some((20_001, "fn late() { dbg!(1); }"))
    );
    let line = |p: &str| -> Vec<String> {
        let f = seen.iter().find(|f| f.path == p).unwrap();
        f.added_lines.iter().map(|l| l.text.clone()).collect()
    };
    assert_eq!(line("crlf.txt"), vec!["one", "two", ""]);
    assert_eq!(line("no_newline.rs"), vec!["use std::process::exit;"]);
    assert_eq!(line("newline.txt"), vec![""]);
    assert!(line("empty.txt").is_empty());
    assert_eq!(line("src/a.rs"), vec!["use std::process::Command;"]);
}

#[test]
fn content_changes_change_the_fingerprint_of_a_streamed_change() {
    let t = TestRepo::new(&[("a.txt", "a\n")]);
    t.write("new.rs", "fn one() {}\n");
    let (_, first, _) = both(&t, &Default::default());
    t.write("new.rs", "fn two() {}\n");
    let (_, second, _) = both(&t, &Default::default());
    assert_ne!(first.fingerprint(), second.fingerprint());
}

const CONFIG: &str = "guardrails:\n  - { name: secrets, builtin: secrets }\n  - { name: banned, patterns: ['dbg!\\('], scope: diff-only }\n";
const NO_PROCESS: &str = "permissions:\n  forbidden_imports: ['std::process']\n";

#[test]
fn a_check_not_fed_the_stream_fails_instead_of_passing_on_nothing() {
    let t = hostile();
    // Streamed to nobody: the content is gone.
    let streamed = workspace::changeset_streamed(
        t.path(),
        t.path(),
        t.head(),
        &Default::default(),
        Some(&mut |_| {}),
    )
    .unwrap();
    let cfg = Config::from_texts(None, Some(CONFIG), Some(NO_PROCESS)).unwrap();
    let place = rascal_exec::exec::place::Place::InPlace {
        origin: t.path().to_path_buf(),
    };
    for g in cfg.guardrails.as_deref().unwrap() {
        let r = evaluate_pure(g, &streamed, &place, "").unwrap();
        assert_eq!(r.status, Status::Fail, "{}: {r:#?}", g.name);
        assert!(
            r.errored.as_deref().unwrap_or("").contains("streamed"),
            "{r:#?}"
        );
    }
    let p = Permissions::compile(cfg.permissions.as_ref().unwrap()).unwrap();
    let issues = p.check(&streamed);
    assert!(
        issues
            .iter()
            .any(|i| i.rule == "permissions/unread" && i.path.as_deref() == Some("src/lib.rs")),
        "{issues:#?}"
    );
    let scanner = SecretScanner::new(&Default::default()).unwrap();
    let issues = scanner.scan(&streamed);
    assert!(
        issues.iter().any(|i| i.rule == "secrets/unscanned"
            && i.severity >= rascal_core::model::verdict::Severity::Error
            && i.path.as_deref() == Some("src/huge.rs")),
        "{issues:#?}"
    );
}

#[test]
fn rascal_check_reads_a_big_change_file_by_file_and_misses_nothing() {
    let t = TestRepo::new(&[
        ("README.md", "# x\n"),
        (".rascal/guardrails.yaml", CONFIG),
        (".rascal/permissions.yaml", NO_PROCESS),
    ]);
    for i in 0..300 {
        t.write(
            &format!("src/m{}/f{i}.rs", i % 7),
            &format!("pub fn f{i}() -> u32 {{\n    {i}\n}}\n").repeat(20),
        );
    }
    // The last file in path order, at its last line: a banned pattern and
    // a forbidden import; a binary with a key; a hidden file with a pattern.
    t.write(
        "src/zz/last.rs",
        &format!(
            "{}use std::process::Command;\nfn z() {{ dbg!(3); }}\n",
            "// pad\n".repeat(5000)
        ),
    );
    let key = format!(
        "AKIA{}",
        common::rnd(7, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    );
    let mut bin = b"\x89PNG\r\n\x1a\n\0\0\0\x1ftEXtComment\0".to_vec();
    bin.extend_from_slice(key.as_bytes());
    bin.extend_from_slice(b"\xde\xad\xbe\xef\0\0\0\0IEND\xaeB`\x82\xff");
    t.write_bytes("assets/blob.bin", &bin);
    t.write("gen/.gitignore", "out.rs\n");
    t.write("gen/out.rs", "fn g() { dbg!(4); }\n");
    let out = t.rascal(&["check", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&out), stderr(&out)));
    assert_eq!(code(&out), 1, "{json:#}");
    assert_eq!(json["files_changed"], 304, "{json:#}");
    let issues: Vec<(String, String, Option<u64>)> = json["layers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|l| l["issues"].as_array().cloned().unwrap_or_default())
        .map(|i| {
            (
                i["rule"].as_str().unwrap_or("").to_string(),
                i["path"].as_str().unwrap_or("").to_string(),
                i["line"].as_u64(),
            )
        })
        .collect();
    let has = |rule: &str, path: &str, line: Option<u64>| {
        assert!(
            issues
                .iter()
                .any(|(r, p, l)| r == rule && p == path && (line.is_none() || *l == line)),
            "{rule} at {path}:{line:?} in {issues:#?}"
        )
    };
    has("guardrails/banned", "src/zz/last.rs", Some(5002));
    has("guardrails/banned", "gen/out.rs", Some(1));
    has("permissions/forbidden-import", "src/zz/last.rs", Some(5001));
    assert!(
        issues
            .iter()
            .any(|(r, p, _)| r == "secrets/aws-access-key-id" && p == "assets/blob.bin"),
        "{issues:#?}"
    );
    assert!(!stdout(&out).contains(&key), "no secret in the report");
}

#[test]
fn a_new_directorys_own_gitignore_hides_nothing() {
    // Regression: files hidden by a `.gitignore` inside a directory that is
    // itself new were left out of the ChangeSet (git shows the new
    // directory as one entry and never lists what it ignores).
    let t = TestRepo::new(&[("a.txt", "a\n")]);
    t.write("new/dir/.gitignore", "*.rs\n");
    t.write("new/dir/payload.rs", "fn p() { dbg!(1); }\n");
    let (whole, streamed, _) = both(&t, &Default::default());
    for cs in [&whole, &streamed] {
        let paths: Vec<&str> = cs.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["new/dir/.gitignore", "new/dir/payload.rs"]);
    }
    assert_eq!(whole.files[1].added_lines[0].text, "fn p() { dbg!(1); }");
}

/// `seen` (the files as the stream showed them) without the comparator's
/// likeness, which only a candidate's stream keeps.
fn plain(files: Vec<FileChange>) -> Vec<FileChange> {
    let mut files = assembled(files);
    for f in &mut files {
        f.likeness = None;
    }
    files
}

#[test]
fn a_candidates_change_is_the_same_stream_and_its_tree_is_what_the_checks_read() {
    let t = hostile();
    let limits = ChangeSetLimits::default();
    let whole = workspace::changeset_with(t.path(), t.path(), t.head(), &limits).unwrap();
    let mut seen = Vec::new();
    let holdout = rascal_exec::git::holdout::Holdout::default();
    let cs = workspace::candidate_change(
        t.path(),
        t.path(),
        t.head(),
        &limits,
        &holdout,
        Some(&mut |f| seen.push(f.clone())),
    )
    .unwrap();
    assert_eq!(plain(seen), whole.files, "the checks see what they saw");
    assert!(cs.files.iter().all(|f| f.likeness.is_some()));
    assert!(cs.is_streamed());
    // The tree written as the files were read is the tree written from
    // the whole change afterwards, file by file.
    let again =
        rascal_exec::git::tree::write_change_tree(t.path(), t.path(), t.head(), &whole).unwrap();
    assert_eq!(cs.tree, again.to_string());
    assert_eq!(cs.fingerprint(), again.to_string());
    // Without a reader (no check reads content): the same change and tree.
    let counted =
        workspace::candidate_change(t.path(), t.path(), t.head(), &limits, &holdout, None).unwrap();
    assert_eq!(counted.tree, cs.tree);
    assert_eq!(counted.files.len(), cs.files.len());
}

#[test]
fn a_file_rewritten_while_the_change_is_read_is_committed_as_the_checks_saw_it() {
    // A process the agent left behind rewrites files while rascal reads
    // the change. Each file is read once: the checks, the digest and the
    // change tree (what every receipt names and finalize commits) all have
    // the bytes of that one read, never a later one.
    let t = TestRepo::new(&[("src/lib.rs", "pub fn one() {}\n")]);
    t.write("src/lib.rs", "pub fn one() {}\npub fn two() {}\n");
    t.write("src/new.rs", "fn new() {}\n");
    let mut seen: Vec<(String, Vec<String>)> = Vec::new();
    let dir = t.path().to_path_buf();
    let cs = workspace::candidate_change(
        t.path(),
        t.path(),
        t.head(),
        &Default::default(),
        &Default::default(),
        Some(&mut |f: &FileChange| {
            seen.push((
                f.path.clone(),
                f.added_lines.iter().map(|l| l.text.clone()).collect(),
            ));
            // Behind the reader's back, after it has seen the file.
            std::fs::write(dir.join(&f.path), "fn evil() { dbg!(1); }\n").unwrap();
        }),
    )
    .unwrap();
    assert_eq!(
        seen,
        vec![
            (
                "src/lib.rs".to_string(),
                vec!["pub fn two() {}".to_string()]
            ),
            ("src/new.rs".to_string(), vec!["fn new() {}".to_string()]),
        ]
    );
    let repo = git2::Repository::open(t.path()).unwrap();
    let tree = repo
        .find_tree(git2::Oid::from_str(&cs.tree).unwrap())
        .unwrap();
    let blob = |p: &str| -> String {
        let id = tree.get_path(std::path::Path::new(p)).unwrap().id();
        String::from_utf8(repo.find_blob(id).unwrap().content().to_vec()).unwrap()
    };
    assert_eq!(blob("src/lib.rs"), "pub fn one() {}\npub fn two() {}\n");
    assert_eq!(blob("src/new.rs"), "fn new() {}\n");
}

/// How many times a process and its children opened each of `paths`
/// (under `dir`) for reading, from strace's log at `log`.
fn opens(log: &std::path::Path, dir: &std::path::Path, paths: &[&str]) -> Vec<usize> {
    let text = std::fs::read_to_string(log).unwrap();
    let canon = std::fs::canonicalize(dir).unwrap();
    paths
        .iter()
        .map(|p| {
            let names = [
                format!("\"{}\"", dir.join(p).display()),
                format!("\"{}\"", canon.join(p).display()),
            ];
            // rascal opens a workspace's files beneath it with openat2,
            // by their path relative to the workspace.
            let relative = format!("\"{p}\"");
            text.lines()
                .filter(|l| l.contains("open") && !l.contains("O_DIRECTORY"))
                .filter(|l| !l.contains("O_WRONLY") && !l.contains("O_RDWR"))
                .filter(|l| !l.contains("= -1"))
                .filter(|l| {
                    names.iter().any(|n| l.contains(n.as_str()))
                        || (l.contains("openat2(") && l.contains(relative.as_str()))
                })
                .count()
        })
        .collect()
}

fn strace() -> bool {
    let ok = std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        common::skip(
            "RASCAL_REQUIRE_TOOLCHAINS",
            "strace does not run (apt-get install strace)",
        );
    }
    ok
}

#[test]
fn rascal_check_reads_each_changed_file_once() {
    if !strace() {
        return;
    }
    let t = TestRepo::new(&[
        ("src/lib.rs", "pub fn one() {}\n"),
        ("src/old.rs", "pub fn moved() {}\n// a\n// b\n// c\n"),
        (".rascal/guardrails.yaml", CONFIG),
        (".rascal/permissions.yaml", NO_PROCESS),
    ]);
    t.write("src/lib.rs", "pub fn one() {}\nfn two() { dbg!(2); }\n");
    std::fs::rename(t.path().join("src/old.rs"), t.path().join("src/renamed.rs")).unwrap();
    t.write(
        "src/renamed.rs",
        "pub fn moved() {}\n// a\n// b\n// c\n// d\n",
    );
    t.write("src/new.rs", "use std::process::Command;\n");
    let log = t
        .dir
        .path()
        .join("..")
        .join(format!("strace-check-{}.log", std::process::id()));
    let out = std::process::Command::new("strace")
        .args(["-f", "-e", "trace=open,openat,openat2", "-o"])
        .arg(&log)
        .arg(common::bin())
        .args(["check", "--json"])
        .current_dir(t.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let n = opens(
        &log,
        t.path(),
        &["src/new.rs", "src/lib.rs", "src/renamed.rs"],
    );
    let _ = std::fs::remove_file(&log);
    // rascal reads each file once, for everything (the diff of a changed
    // file, the checks, the digest). What git adds: its status pass hashes
    // a modified file to learn that it changed, and its rename detection
    // (run because a file was deleted) reads the candidates it pairs —
    // the modified file and the new ones. Their bytes go nowhere else.
    // Before: [2, 5, 3].
    assert_eq!(n, vec![2, 3, 2], "opens of new, modified, renamed");
}
