//! Unit tests of `unpack`.

use super::*;

fn entry(
    b: &mut tar::Builder<Vec<u8>>,
    kind: tar::EntryType,
    name: &str,
    data: &[u8],
    link: Option<&str>,
    mode: u32,
) {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_size(data.len() as u64);
    // Raw names, as a hostile archive would write them (the builder's
    // own checks refuse `..`).
    let bytes = name.as_bytes();
    if bytes.len() < 100 {
        h.as_old_mut().name[..bytes.len()].copy_from_slice(bytes);
    } else {
        h.set_path(name).unwrap();
    }
    if let Some(l) = link {
        h.as_old_mut().linkname[..l.len()].copy_from_slice(l.as_bytes());
    }
    h.set_cksum();
    b.append(&h, data).unwrap();
}

fn archive(f: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    f(&mut b);
    b.into_inner().unwrap()
}

use tar::EntryType as K;

/// An archive of every kind of entry that must not land in the staging
/// directory, among a few that may; `outside` is where an escape would land.
fn hostile_archive(outside: &Path, abs: &str) -> Vec<u8> {
    archive(|b| {
        entry(b, K::Directory, "workspace/", b"", None, 0o755);
        entry(b, K::Regular, "workspace/ok.txt", b"fine\n", None, 0o644);
        entry(b, K::Regular, abs, b"x", None, 0o644);
        entry(b, K::Regular, "workspace/../escape", b"x", None, 0o644);
        entry(b, K::Regular, "workspace/a/../../escape", b"x", None, 0o644);
        entry(b, K::Regular, "elsewhere/x", b"x", None, 0o644);
        entry(
            b,
            K::Regular,
            "workspace/.git/hooks/post-checkout",
            b"#!/bin/sh\n",
            None,
            0o755,
        );
        entry(
            b,
            K::Regular,
            "workspace/.git/config",
            b"[core]\n",
            None,
            0o644,
        );
        entry(
            b,
            K::Regular,
            "workspace/sub/.GIT/config",
            b"[core]\n",
            None,
            0o644,
        );
        let out = outside.to_str().unwrap().to_string();
        entry(b, K::Symlink, "workspace/out", b"", Some(&out), 0o777);
        entry(b, K::Regular, "workspace/out/pwned", b"x", None, 0o644);
        entry(b, K::Symlink, "workspace/in", b"", Some("sub"), 0o777);
        entry(b, K::Regular, "workspace/in/through", b"x", None, 0o644);
        entry(b, K::Char, "workspace/tty", b"", None, 0o666);
        entry(b, K::Block, "workspace/disk", b"", None, 0o666);
        entry(b, K::Fifo, "workspace/fifo", b"", None, 0o666);
        entry(
            b,
            K::Link,
            "workspace/hard-out",
            b"",
            Some("/etc/passwd"),
            0o644,
        );
        entry(
            b,
            K::Link,
            "workspace/hard-up",
            b"",
            Some("workspace/../x"),
            0o644,
        );
        entry(
            b,
            K::Link,
            "workspace/hard-in",
            b"",
            Some("workspace/ok.txt"),
            0o644,
        );
        entry(b, K::Regular, "workspace/setuid", b"x", None, 0o4755);
    })
}

/// Each refused entry of `hostile_archive` (but the absolute one, whose
/// name depends on the temporary directory) and a word of its reason.
const REFUSED_BECAUSE: &[(&str, &str)] = &[
    ("workspace/../escape", ".."),
    ("workspace/a/../../escape", ".."),
    ("elsewhere/x", "outside"),
    ("workspace/.git/hooks/post-checkout", ".git"),
    ("workspace/.git/config", ".git"),
    ("workspace/sub/.GIT/config", ".git"),
    ("workspace/out/pwned", "symlink"),
    ("workspace/in/through", "symlink"),
    ("workspace/tty", "character device"),
    ("workspace/disk", "block device"),
    ("workspace/fifo", "FIFO"),
    ("workspace/hard-out", "hard link"),
    ("workspace/hard-up", "hard link"),
];

#[test]
fn hostile_entries_are_refused_each_with_its_reason_and_nothing_leaves_the_staging_dir() {
    let outside = tempfile::tempdir().unwrap();
    let staging = tempfile::tempdir().unwrap();
    let target = outside.path().join("pwned");
    let abs = target.display().to_string();
    let tar = hostile_archive(outside.path(), &abs);
    let got = unpack(&tar[..], "workspace", staging.path(), None, Limits::DEFAULT).unwrap();
    let reason = |p: &str| {
        got.refused
            .iter()
            .find(|(r, _)| r == p)
            .map(|(_, w)| w.clone())
            .unwrap_or_else(|| panic!("{p} not refused: {:?}", got.refused))
    };
    assert!(reason(&abs).contains("absolute"));
    for (path, why) in REFUSED_BECAUSE {
        assert!(reason(path).contains(why), "{path}: {}", reason(path));
    }
    assert_eq!(got.refused.len(), 14, "{:?}", got.refused);
    // Nothing was written outside.
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    // What is fine came back; the symlinks are kept as data (the
    // permissions layer judges their targets), an inside hard link is
    // a copy, and the setuid bit is gone.
    let s = staging.path();
    assert_eq!(std::fs::read(s.join("ok.txt")).unwrap(), b"fine\n");
    assert_eq!(std::fs::read(s.join("hard-in")).unwrap(), b"fine\n");
    assert_eq!(std::fs::read_link(s.join("in")).unwrap(), Path::new("sub"));
    assert!(std::fs::symlink_metadata(s.join("out"))
        .unwrap()
        .file_type()
        .is_symlink());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(s.join("setuid"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o755);
    assert!(!s.join(".git").exists());
    assert!(!s.join("sub/.GIT").exists());
}

#[test]
fn an_archive_over_the_byte_or_entry_cap_fails_whole_and_says_so() {
    let staging = tempfile::tempdir().unwrap();
    let tar = archive(|b| {
        entry(b, K::Regular, "workspace/a", &[1; 600], None, 0o644);
        entry(b, K::Regular, "workspace/b", &[2; 600], None, 0o644);
    });
    let small = Limits {
        bytes: 1000,
        entries: 10,
    };
    let e = unpack(&tar[..], "workspace", staging.path(), None, small).unwrap_err();
    assert!(e.to_string().contains("larger than"), "{e}");
    let few = Limits {
        bytes: 1 << 20,
        entries: 1,
    };
    let e = unpack(&tar[..], "workspace", staging.path(), None, few).unwrap_err();
    assert!(e.to_string().contains("more than 1 entries"), "{e}");
}

#[test]
fn a_header_that_lies_about_its_size_cannot_exceed_the_cap() {
    // A size field of ~8 GiB with little data behind it: refused from
    // the header, before any byte is written.
    let staging = tempfile::tempdir().unwrap();
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(K::Regular);
    h.set_path("workspace/huge").unwrap();
    h.set_mode(0o644);
    h.set_size(8 << 30);
    h.set_cksum();
    let mut bytes = h.as_bytes().to_vec();
    bytes.extend_from_slice(&[0; 1024]);
    let e = unpack(
        &bytes[..],
        "workspace",
        staging.path(),
        None,
        Limits::DEFAULT,
    )
    .unwrap_err();
    assert!(e.to_string().contains("larger than"), "{e}");
    assert!(!staging.path().join("huge").exists());
}

#[test]
fn later_entries_replace_earlier_ones_and_a_file_cannot_become_a_parent() {
    let staging = tempfile::tempdir().unwrap();
    let tar = archive(|b| {
        entry(b, K::Regular, "workspace/x", b"one", None, 0o644);
        entry(b, K::Symlink, "workspace/x", b"", Some("y"), 0o777);
        entry(b, K::Regular, "workspace/x", b"two", None, 0o755);
        entry(b, K::Regular, "workspace/x/child", b"c", None, 0o644);
    });
    let got = unpack(&tar[..], "workspace", staging.path(), None, Limits::DEFAULT).unwrap();
    assert_eq!(std::fs::read(staging.path().join("x")).unwrap(), b"two");
    assert_eq!(got.refused.len(), 1);
    assert!(got.refused[0].1.contains("parent of it is a file"));
}

#[test]
fn replace_contents_keeps_the_hosts_git_and_drops_what_the_container_deleted() {
    let dest = tempfile::tempdir().unwrap();
    let staging = tempfile::tempdir().unwrap();
    std::fs::create_dir(dest.path().join(".git")).unwrap();
    std::fs::write(dest.path().join(".git/HEAD"), "host").unwrap();
    std::fs::write(dest.path().join("deleted"), "x").unwrap();
    std::fs::create_dir(dest.path().join("dir")).unwrap();
    std::fs::write(staging.path().join("new"), "n").unwrap();
    replace_contents(staging.path(), dest.path(), &[".git"]).unwrap();
    let mut names: Vec<_> = std::fs::read_dir(dest.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, [".git", "new"]);
    assert_eq!(
        std::fs::read(dest.path().join(".git/HEAD")).unwrap(),
        b"host"
    );
}

/// rascal's own `.git` pointer file, as the container was given it.
const POINTER: &[u8] = b"gitdir: /rascal/git\n";

/// Archives that write a `.git`, each with what it is and whether the
/// pointer comes back intact (and nothing is refused).
fn git_cases() -> Vec<(&'static str, Vec<u8>, bool)> {
    vec![
        (
            "the pointer, unchanged",
            archive(|b| entry(b, K::Regular, "workspace/.git", POINTER, None, 0o644)),
            true,
        ),
        (
            "a pointer elsewhere",
            archive(|b| {
                entry(
                    b,
                    K::Regular,
                    "workspace/.git",
                    b"gitdir: /tmp/evil\n",
                    None,
                    0o644,
                )
            }),
            false,
        ),
        (
            "the pointer with more after it",
            archive(|b| {
                entry(
                    b,
                    K::Regular,
                    "workspace/.git",
                    b"gitdir: /rascal/git\nx",
                    None,
                    0o644,
                )
            }),
            false,
        ),
        (
            "a .git directory made again",
            archive(|b| {
                entry(b, K::Directory, "workspace/.git/", b"", None, 0o755);
                entry(
                    b,
                    K::Regular,
                    "workspace/.git/config",
                    b"[core]\n\tfsmonitor = x\n",
                    None,
                    0o644,
                );
                entry(
                    b,
                    K::Regular,
                    "workspace/.git/hooks/pre-commit",
                    b"#!/bin/sh\n",
                    None,
                    0o755,
                );
            }),
            false,
        ),
        (
            "a .git symlink",
            archive(|b| {
                entry(
                    b,
                    K::Symlink,
                    "workspace/.git",
                    b"",
                    Some("/tmp/evil"),
                    0o777,
                )
            }),
            false,
        ),
        (
            "the pointer's bytes at another depth or case",
            archive(|b| {
                entry(b, K::Regular, "workspace/sub/.git", POINTER, None, 0o644);
                entry(b, K::Regular, "workspace/.GIT", POINTER, None, 0o644);
            }),
            false,
        ),
    ]
}

#[test]
fn only_rascals_own_git_pointer_passes_and_even_it_is_not_written() {
    for (what, tar, intact) in git_cases() {
        let staging = tempfile::tempdir().unwrap();
        let got = unpack(
            &tar[..],
            "workspace",
            staging.path(),
            Some(POINTER),
            Limits::DEFAULT,
        )
        .unwrap();
        assert_eq!(got.pointer_intact, intact, "{what}: {got:?}");
        assert_eq!(got.refused.is_empty(), intact, "{what}: {got:?}");
        assert!(
            got.refused.iter().all(|(_, why)| why.contains(".git")),
            "{what}"
        );
        // Nothing named .git is ever written.
        let mut found = Vec::new();
        for e in walkdir(staging.path()) {
            if e.file_name()
                .is_some_and(|n| n.eq_ignore_ascii_case(".git"))
            {
                found.push(e);
            }
        }
        assert!(found.is_empty(), "{what}: {found:?}");
    }
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if std::fs::symlink_metadata(&p).unwrap().is_dir() {
            out.extend(walkdir(&p));
        }
        out.push(p);
    }
    out
}
