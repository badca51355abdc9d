//! Unit tests of `beneath`.

use super::*;
use std::os::unix::fs::symlink;

/// A root holding `in/file`, a victim outside with a file, and chains
/// of 1, 2 and 5 links from the root to the victim.
struct Scene {
    _dir: tempfile::TempDir,
    root: PathBuf,
    victim: PathBuf,
}

fn scene() -> Scene {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let victim = dir.path().join("victim");
    std::fs::create_dir_all(root.join("in")).unwrap();
    std::fs::write(root.join("in/file"), "inside").unwrap();
    std::fs::create_dir_all(victim.join("sub")).unwrap();
    std::fs::write(victim.join("keep.txt"), "keep").unwrap();
    std::fs::write(victim.join("sub/keep.txt"), "keep").unwrap();
    for n in [1usize, 2, 5] {
        // c{n}_0 -> c{n}_1 -> … -> victim
        for i in 0..n {
            let target = if i + 1 == n {
                victim.clone()
            } else {
                PathBuf::from(format!("c{n}_{}", i + 1))
            };
            symlink(&target, root.join(format!("c{n}_{i}"))).unwrap();
        }
    }
    // A relative chain: up -> in/.. -> …, and one through `..`.
    symlink("../victim", root.join("rel")).unwrap();
    Scene {
        _dir: dir,
        root,
        victim,
    }
}

fn victim_intact(s: &Scene) {
    assert_eq!(std::fs::read(s.victim.join("keep.txt")).unwrap(), b"keep");
    assert_eq!(
        std::fs::read(s.victim.join("sub/keep.txt")).unwrap(),
        b"keep"
    );
    assert_eq!(std::fs::read_dir(&s.victim).unwrap().count(), 2);
}

fn each_walk(f: impl Fn(&Scene, &Beneath)) {
    for walk in [Walk::Kernel, Walk::Components] {
        let s = scene();
        let b = Beneath::open_with(&s.root, walk).unwrap();
        f(&s, &b);
        victim_intact(&s);
    }
}

const CHAINS: [&str; 4] = ["c1_0", "c2_0", "c5_0", "rel"];

#[test]
fn the_kernel_has_openat2_here() {
    let s = scene();
    let b = Beneath::open(&s.root).unwrap();
    b.read(Path::new("in/file")).unwrap();
    assert_eq!(b.walk(), Walk::Kernel, "this kernel answered ENOSYS");
}

#[test]
fn reads_never_pass_a_link() {
    each_walk(|_, b| {
        assert_eq!(b.read(Path::new("in/file")).unwrap(), b"inside");
        for c in CHAINS {
            let e = b.read(&Path::new(c).join("keep.txt")).unwrap_err();
            assert!(is_link_on_way(&e), "{c}: {e}");
            assert!(b.read(Path::new(c)).is_err(), "{c}");
            assert!(b.list(Path::new(c)).is_err(), "{c}");
            assert!(b.dir(Path::new(c)).is_err(), "{c}");
            assert_eq!(b.kind(Path::new(c)).unwrap(), Kind::Symlink);
        }
        assert!(b.read(Path::new("../victim/keep.txt")).is_err());
        assert!(b.read(Path::new("/etc/passwd")).is_err());
    });
}

#[test]
fn writes_never_pass_a_link() {
    each_walk(|s, b| {
        for c in CHAINS {
            assert!(b.write(&Path::new(c).join("new"), b"x", 0o644).is_err());
            assert!(b
                .write(&Path::new(c).join("keep.txt"), b"x", 0o644)
                .is_err());
            assert!(b.create_dir(&Path::new(c).join("d")).is_err());
            assert!(b.create_dir_all(&Path::new(c).join("d/e"), false).is_err());
            assert!(b.symlink(OsStr::new("x"), &Path::new(c).join("l")).is_err());
        }
        // Writing over a link replaces the link, never its target.
        b.write(Path::new("c2_0"), b"mine", 0o644).unwrap();
        assert_eq!(std::fs::read(s.root.join("c2_0")).unwrap(), b"mine");
        // With `replace`, a link on the way becomes a directory.
        b.create_dir_all(Path::new("c5_0/sub"), true).unwrap();
        b.write(Path::new("c5_0/sub/keep.txt"), b"laid", 0o644)
            .unwrap();
        assert!(s.root.join("c5_0").is_dir());
        assert!(!std::fs::symlink_metadata(s.root.join("c5_0"))
            .unwrap()
            .file_type()
            .is_symlink());
    });
}

#[test]
fn removals_never_pass_a_link() {
    each_walk(|s, b| {
        for c in CHAINS {
            assert!(b.remove_file(&Path::new(c).join("keep.txt")).is_err());
            assert!(b.remove_all(&Path::new(c).join("sub")).is_err());
            b.remove_all(Path::new(c)).unwrap();
            assert!(std::fs::symlink_metadata(s.root.join(c)).is_err());
        }
        b.remove_all(Path::new("c5_3")).unwrap();
        b.remove_all(Path::new("in")).unwrap();
        b.remove_all(Path::new("nothing/here")).unwrap();
        // A whole tree with links to the victim everywhere, emptied.
        std::fs::create_dir_all(s.root.join("t/u")).unwrap();
        symlink(&s.victim, s.root.join("t/u/v")).unwrap();
        symlink(&s.victim, s.root.join("t/w")).unwrap();
        b.clear().unwrap();
        assert_eq!(std::fs::read_dir(&s.root).unwrap().count(), 0);
    });
}

#[test]
fn a_read_only_directory_is_removed_too() {
    use std::os::unix::fs::PermissionsExt;
    let s = scene();
    std::fs::create_dir_all(s.root.join("ro/inner")).unwrap();
    std::fs::write(s.root.join("ro/inner/f"), "x").unwrap();
    symlink(&s.victim, s.root.join("ro/inner/v")).unwrap();
    for d in ["ro/inner", "ro"] {
        std::fs::set_permissions(s.root.join(d), std::fs::Permissions::from_mode(0o500)).unwrap();
    }
    Beneath::open(&s.root)
        .unwrap()
        .remove_all(Path::new("ro"))
        .unwrap();
    assert!(!s.root.join("ro").exists());
    victim_intact(&s);
}

#[test]
fn listings_show_links_as_links() {
    each_walk(|_, b| {
        let files = b.files(Path::new("")).unwrap();
        assert!(
            files.contains(&(
                PathBuf::from("in/file"),
                Kind::File {
                    len: 6,
                    mode: 0o644
                }
            )) || files.iter().any(|(p, _)| p == Path::new("in/file"))
        );
        assert!(files.contains(&(PathBuf::from("c5_0"), Kind::Symlink)));
        assert!(!files.iter().any(|(p, _)| p.ends_with("keep.txt")));
        assert_eq!(b.read_link(Path::new("rel")).unwrap(), "../victim");
    });
}

#[test]
fn renames_stay_beneath() {
    each_walk(|s, b| {
        assert!(b
            .rename(Path::new("in/file"), Path::new("c2_0/file"))
            .is_err());
        b.rename(Path::new("in/file"), Path::new("moved")).unwrap();
        assert_eq!(std::fs::read(s.root.join("moved")).unwrap(), b"inside");
    });
}
