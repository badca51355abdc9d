//! Unit tests of `transfer`.

use super::*;

fn archive(build: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    build(&mut b);
    b.into_inner().unwrap()
}

fn file(b: &mut tar::Builder<Vec<u8>>, path: &str, data: &[u8]) {
    let mut h = tar::Header::new_gnu();
    h.set_size(data.len() as u64);
    h.set_mode(0o4755);
    h.set_entry_type(tar::EntryType::Regular);
    // `set_path` refuses `..`; a hostile archive does not ask.
    let name = path.as_bytes();
    h.as_old_mut().name[..name.len()].copy_from_slice(name);
    h.set_cksum();
    b.append(&h, data).unwrap();
}

fn link(b: &mut tar::Builder<Vec<u8>>, kind: tar::EntryType, path: &str, target: &str) {
    let mut h = tar::Header::new_gnu();
    h.set_size(0);
    h.set_entry_type(kind);
    let name = path.as_bytes();
    h.as_old_mut().name[..name.len()].copy_from_slice(name);
    let t = target.as_bytes();
    h.as_old_mut().linkname[..t.len()].copy_from_slice(t);
    h.set_cksum();
    b.append(&h, io::empty()).unwrap();
}

fn unpack_bytes(bytes: &[u8], cap: u64) -> (tempfile::TempDir, Result<Unpacked, Refused>) {
    let dir = tempfile::tempdir().unwrap();
    let staging = dir.path().join("staging");
    fs::create_dir(&staging).unwrap();
    let r = unpack(bytes, &staging, cap);
    (dir, r)
}

#[test]
fn a_plain_result_unpacks_without_set_id_bits() {
    let a = archive(|b| {
        file(b, "workspace/src/lib.rs", b"fn main() {}\n");
        link(b, tar::EntryType::Symlink, "workspace/link", "src/lib.rs");
        link(
            b,
            tar::EntryType::Link,
            "workspace/copy.rs",
            "workspace/src/lib.rs",
        );
        file(b, "artifacts/commit_message.txt", b"feat: x\n");
    });
    let (dir, r) = unpack_bytes(&a, 1 << 20);
    let got = r.unwrap();
    assert_eq!(got.files, 4);
    let s = dir.path().join("staging");
    assert_eq!(
        fs::read(s.join("workspace/copy.rs")).unwrap(),
        b"fn main() {}\n"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(s.join("workspace/src/lib.rs"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7000, 0, "set-id bit kept: {mode:o}");
    assert!(fs::symlink_metadata(s.join("workspace/link"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn hostile_archives_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().display().to_string();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("dotdot", archive(|b| file(b, "workspace/../../evil", b"x"))),
        ("absolute", archive(|b| file(b, "/tmp/evil", b"x"))),
        ("stray", archive(|b| file(b, "etc/passwd", b"x"))),
        (
            "through symlink",
            archive(|b| {
                link(b, tar::EntryType::Symlink, "workspace/out", &target);
                file(b, "workspace/out/pwned", b"x");
            }),
        ),
        (
            "symlinked parent dir",
            archive(|b| {
                link(b, tar::EntryType::Symlink, "workspace", &target);
                file(b, "workspace/pwned", b"x");
            }),
        ),
        (
            "hard link out",
            archive(|b| link(b, tar::EntryType::Link, "workspace/h", "/etc/passwd")),
        ),
        (
            "hard link via symlink",
            archive(|b| {
                link(b, tar::EntryType::Symlink, "workspace/l", "/etc");
                link(b, tar::EntryType::Link, "workspace/h", "workspace/l/passwd");
            }),
        ),
        (
            "device",
            archive(|b| link(b, tar::EntryType::Char, "workspace/tty", "")),
        ),
        (
            "fifo",
            archive(|b| link(b, tar::EntryType::Fifo, "workspace/f", "")),
        ),
        (
            "too large",
            archive(|b| file(b, "workspace/big", &[0u8; 4096])),
        ),
    ];
    for (what, bytes) in cases {
        let (_d, r) = unpack_bytes(&bytes, 1024);
        assert!(r.is_err(), "{what}: accepted");
        assert_eq!(
            fs::read_dir(outside.path()).unwrap().count(),
            0,
            "{what}: wrote outside"
        );
    }
}

#[test]
fn no_git_entry_of_the_pod_is_taken_and_the_hosts_git_stays() {
    let a = archive(|b| {
        file(b, "workspace/.git", b"gitdir: /rascal/git\n");
        file(b, "workspace/ok.txt", b"ok\n");
    });
    let (dir, r) = unpack_bytes(&a, 1 << 20);
    let got = r.unwrap();
    assert!(got.git_refused.is_empty(), "{got:?}");
    assert!(!dir.path().join("staging/workspace/.git").exists());
    for (what, a) in [
        (
            "pointer elsewhere",
            archive(|b| file(b, "workspace/.git", b"gitdir: /etc\n")),
        ),
        (
            "git dir again",
            archive(|b| file(b, "workspace/.git/config", b"[core]\n")),
        ),
        (
            "nested",
            archive(|b| file(b, "workspace/sub/.Git/hooks/x", b"#!/bin/sh\n")),
        ),
        (
            "symlink",
            archive(|b| link(b, tar::EntryType::Symlink, "workspace/.git", "/tmp")),
        ),
    ] {
        let (dir, r) = unpack_bytes(&a, 1 << 20);
        let got = r.unwrap();
        assert_eq!(got.git_refused.len(), 1, "{what}: {got:?}");
        assert_eq!(got.files, 0, "{what}");
        let ws = dir.path().join("staging/workspace");
        assert!(
            !ws.join(".git").exists() && !ws.join("sub/.Git").exists(),
            "{what}"
        );
    }
    // The host's .git is kept when the result is swapped in.
    let dest = tempfile::tempdir().unwrap();
    let from = tempfile::tempdir().unwrap();
    fs::create_dir(dest.path().join(".git")).unwrap();
    fs::write(dest.path().join(".git/HEAD"), "host").unwrap();
    fs::write(dest.path().join("old"), "x").unwrap();
    fs::write(from.path().join("new"), "y").unwrap();
    swap_in(from.path(), dest.path(), &[".git"]).unwrap();
    assert_eq!(
        fs::read_to_string(dest.path().join(".git/HEAD")).unwrap(),
        "host"
    );
    assert!(!dest.path().join("old").exists());
    assert!(dest.path().join("new").exists());
}

#[test]
fn a_symlink_replaced_by_a_file_is_not_followed() {
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    fs::write(&victim, "safe").unwrap();
    let a = archive(|b| {
        link(
            b,
            tar::EntryType::Symlink,
            "workspace/f",
            &victim.display().to_string(),
        );
        file(b, "workspace/f", b"overwritten");
    });
    let (dir, r) = unpack_bytes(&a, 1 << 20);
    r.unwrap();
    assert_eq!(fs::read_to_string(&victim).unwrap(), "safe");
    assert_eq!(
        fs::read(dir.path().join("staging/workspace/f")).unwrap(),
        b"overwritten"
    );
}

#[test]
fn pack_then_unpack_round_trips_the_tree() {
    let src = tempfile::tempdir().unwrap();
    fs::create_dir_all(src.path().join("a/b")).unwrap();
    fs::write(src.path().join("a/b/c.txt"), "hello").unwrap();
    std::os::unix::fs::symlink("a/b/c.txt", src.path().join("l")).unwrap();
    let mut out = Vec::new();
    pack(
        &Inbound {
            workdir: src.path(),
            tree: None,
            instruction: None,
            criteria: Some(&src.path().join("a/b/c.txt")),
            stdin: b"in",
        },
        &mut out,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // `stdin` is not part of a result: it is refused as stray.
    assert!(matches!(
        unpack(out.as_slice(), dir.path(), 1 << 20),
        Err(Refused::Stray(_))
    ));
    let names: Vec<String> = tar::Archive::new(out.as_slice())
        .entries()
        .unwrap()
        .map(|e| e.unwrap().path().unwrap().display().to_string())
        .collect();
    assert!(
        names.contains(&"workspace/a/b/c.txt".to_string()),
        "{names:?}"
    );
    assert!(names.contains(&"workspace/l".to_string()));
    assert!(names.contains(&"stdin".to_string()));
    // A planned run's criteria, where `$RASCAL_CRITERIA_FILE` points.
    assert!(names.contains(&CRITERIA_FILE.to_string()), "{names:?}");
    assert_eq!(
        format!("{}/{CRITERIA_FILE}", super::super::spec::RASCAL_DIR),
        super::super::spec::CRITERIA
    );
}

mod hostile_archives {
    use super::*;
    use proptest::prelude::*;

    /// One entry of a generated archive: kind, path, link target.
    fn entry() -> impl Strategy<Value = (u8, String, String)> {
        let part = prop::sample::select(vec![
            "workspace",
            "artifacts",
            "a",
            "b",
            "..",
            ".",
            "",
            "OUT",
        ]);
        let path = prop::collection::vec(part, 1..5);
        let target = prop::sample::select(vec![
            "OUT",
            "OUT/x",
            "../..",
            "a",
            "workspace/a",
            "workspace/b/a",
            "/",
            "..",
        ]);
        (0u8..5, path, target).prop_map(|(k, p, t)| (k, p.join("/"), t.to_string()))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Whatever the archive, nothing is written outside the
        /// staging directory: not through `..`, an absolute path, a
        /// symlink made earlier in the same archive, or a hard link.
        #[test]
        fn nothing_lands_outside_staging(entries in prop::collection::vec(entry(), 1..8)) {
            let root = tempfile::tempdir().unwrap();
            let staging = root.path().join("staging");
            let outside = root.path().join("outside");
            fs::create_dir(&staging).unwrap();
            fs::create_dir(&outside).unwrap();
            fs::write(outside.join("x"), "untouched").unwrap();
            let out = outside.display().to_string();
            let bytes = archive(|b| {
                for (kind, path, target) in &entries {
                    let path = path.replace("OUT", &out);
                    let target = target.replace("OUT", &out);
                    if path.len() > 99 || target.len() > 99 {
                        continue;
                    }
                    match kind {
                        0 => file(b, &path, b"data"),
                        1 => link(b, tar::EntryType::Symlink, &path, &target),
                        2 => link(b, tar::EntryType::Link, &path, &target),
                        3 => link(b, tar::EntryType::Directory, &path, ""),
                        _ => link(b, tar::EntryType::Fifo, &path, ""),
                    }
                }
            });
            let _ = unpack(bytes.as_slice(), &staging, 1 << 20);
            let mut names: Vec<String> = fs::read_dir(root.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            prop_assert_eq!(names, vec!["outside".to_string(), "staging".to_string()]);
            let inside: Vec<String> = fs::read_dir(&outside)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            prop_assert_eq!(inside, vec!["x".to_string()]);
            prop_assert_eq!(fs::read_to_string(outside.join("x")).unwrap(), "untouched");
        }
    }
}
