//! What rascal's files take on disk, and removing them. Sizes are counted
//! as `du` counts them: the blocks allocated to every file and directory
//! below a path, symlinks never followed (a link counts as itself, never
//! as what it points to), a file with several hard links counted once.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::UNIX_EPOCH;

/// The disk use of a tree of files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Bytes allocated on disk.
    pub bytes: u64,
    /// The newest modification time of anything in it (ms), None when
    /// nothing is there.
    pub newest_ms: Option<i64>,
}

impl Usage {
    pub fn exists(&self) -> bool {
        self.newest_ms.is_some()
    }
}

/// The disk use of `root` and everything below it, in one walk; nothing
/// when it does not exist. What cannot be read is left out.
pub fn usage(root: &Path) -> Usage {
    usage_of(&[root])
}

/// The disk use of several trees together (a file shared by hard links
/// between them counted once).
pub fn usage_of(roots: &[&Path]) -> Usage {
    let mut seen = HashSet::new();
    let mut total = Usage::default();
    let mut stack: Vec<std::path::PathBuf> = Vec::new();
    for root in roots {
        stack.push(root.to_path_buf());
        while let Some(path) = stack.pop() {
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.nlink() > 1 && !meta.is_dir() && !seen.insert((meta.dev(), meta.ino())) {
                continue;
            }
            total.bytes += meta.blocks() * 512;
            let ms = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_millis() as i64)
                .unwrap_or(0);
            total.newest_ms = Some(total.newest_ms.map_or(ms, |n| n.max(ms)));
            if meta.is_dir() {
                if let Ok(entries) = std::fs::read_dir(&path) {
                    stack.extend(entries.flatten().map(|e| e.path()));
                }
            }
        }
    }
    total
}

/// `12.4 MiB`, `512 B`: a size for people.
pub fn human(bytes: u64) -> String {
    bytesize::ByteSize::b(bytes).display().iec().to_string()
}

/// Remove `path` (a file, a symlink, or a directory with everything below
/// it), beneath its parent directory and without following any symlink
/// below it (a link is removed, never followed). A directory an agent made
/// read-only is made writable first. Nothing there is not an error.
pub fn remove(path: &Path) -> std::io::Result<()> {
    rascal_exec::git::beneath::remove_path(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn counts_blocks_of_files_and_directories_never_what_a_link_points_to() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/big"), vec![7u8; 300_000]).unwrap();
        let outside = dir.path().join("outside");
        std::fs::write(&outside, vec![1u8; 2_000_000]).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("a/up")).unwrap();
        std::fs::hard_link(root.join("a/b/big"), root.join("twin")).unwrap();
        let u = usage(&root);
        assert!(u.exists());
        assert!(u.bytes >= 300_000, "{}", u.bytes);
        assert!(
            u.bytes < 1_000_000,
            "link target or twin counted: {}",
            u.bytes
        );
        assert_eq!(usage(&dir.path().join("missing")), Usage::default());
    }

    #[test]
    fn removes_read_only_trees_and_only_the_link_itself() {
        let dir = tempfile::tempdir().unwrap();
        let keep = dir.path().join("keep");
        std::fs::create_dir(&keep).unwrap();
        std::fs::write(keep.join("f"), "x").unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join("locked/inner")).unwrap();
        std::fs::write(root.join("locked/inner/f"), "x").unwrap();
        std::os::unix::fs::symlink(&keep, root.join("locked/to-keep")).unwrap();
        for d in ["locked/inner", "locked"] {
            std::fs::set_permissions(root.join(d), std::fs::Permissions::from_mode(0o500)).unwrap();
        }
        remove(&root).unwrap();
        assert!(!root.exists());
        assert!(keep.join("f").exists(), "the link's target is untouched");
        remove(&root).unwrap();
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human(0), "0 B");
        assert_eq!(human(13_002_342), "12.4 MiB");
    }
}
