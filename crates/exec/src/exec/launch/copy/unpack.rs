//! Bringing a copy-mode container's tree back: the one place a tar written
//! by a hostile agent's container is read. Entries are unpacked into a
//! fresh staging directory that rascal alone writes, then moved into the
//! destination; what is refused is listed, never silently dropped.
//!
//! Refused: absolute paths, `..`; any `.git` entry at any depth and in
//! any case — a `.git` directory the agent made, a symlink, or a `.git`
//! file other than rascal's own pointer (`gitdir: /rascal/git`, see
//! `pack`), which alone is taken as unchanged and is not written either:
//! the host keeps its own `.git` (hooks and config there could run code on
//! the host later, and the change is computed against it); entries that
//! would be written through a symlink; device files, FIFOs and other
//! special entries; hard links whose target is not a regular file
//! unpacked earlier (an inside one becomes a copy, never a link). Modes
//! keep only the executable bit. The archive as a whole is capped in bytes
//! and entries: past a cap the bring-back fails, clearly.

use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::git::beneath::{Beneath, Kind};

/// Caps on what one archive may unpack to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of file content, all entries together.
    pub bytes: u64,
    pub entries: u64,
}

impl Limits {
    /// 4 GiB and a million entries: far above any source tree, far below a
    /// full disk.
    pub const DEFAULT: Limits = Limits {
        bytes: 4 << 30,
        entries: 1_000_000,
    };
}

/// What was unpacked, and what was refused (path and why).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Unpacked {
    pub files: u64,
    pub bytes: u64,
    pub refused: Vec<(String, String)>,
    /// The tree's top-level `.git` was rascal's pointer, unchanged (not
    /// written: the host's own `.git` stays).
    pub pointer_intact: bool,
}

const UNDER_GIT: &str = "under .git (the host keeps its own repository data)";

/// Unpack the entries under `prefix/` of `archive` into `staging` (a new,
/// empty directory rascal created). No `.git` entry is ever written: with
/// `pointer`, a top-level `.git` regular file of exactly those bytes is
/// rascal's own and only noted; every other one is listed as refused. An
/// error is a broken or over-cap archive: nothing of it may be used.
pub fn unpack(
    archive: impl Read,
    prefix: &str,
    staging: &Path,
    pointer: Option<&[u8]>,
    limits: Limits,
) -> Result<Unpacked, String> {
    let root = Beneath::open(staging)
        .map_err(|e| format!("opening the staging directory {}: {e}", staging.display()))?;
    let mut unpacking = Unpacking {
        root,
        staging,
        prefix,
        pointer,
        limits,
        out: Unpacked::default(),
    };
    let mut tar = tar::Archive::new(archive);
    let mut entries_seen = 0u64;
    let entries = tar
        .entries()
        .map_err(|e| format!("reading the container's archive: {e}"))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("reading the container's archive: {e}"))?;
        entries_seen += 1;
        if entries_seen > limits.entries {
            return Err(format!(
                "the container's tree has more than {} entries; nothing of it was taken\n  hint: an agent that writes that many files is refused; check its log for what it did",
                limits.entries
            ));
        }
        unpacking.entry(entry)?;
    }
    Ok(unpacking.out)
}

/// One archive being unpacked into its staging directory.
struct Unpacking<'a> {
    root: Beneath,
    staging: &'a Path,
    prefix: &'a str,
    pointer: Option<&'a [u8]>,
    limits: Limits,
    out: Unpacked,
}

impl Unpacking<'_> {
    /// Unpack one entry, or list it as refused. An error: the archive is
    /// broken or over its cap, or the staging directory cannot be written.
    fn entry<R: Read>(&mut self, mut entry: tar::Entry<'_, R>) -> Result<(), String> {
        let raw = entry.path_bytes().into_owned();
        let shown = String::from_utf8_lossy(&raw).into_owned();
        let rel = match relative(&raw, self.prefix) {
            Ok(Some(rel)) => rel,
            Ok(None) => return Ok(()),
            Err(why) if why == UNDER_GIT => {
                self.git_entry(&raw, shown, &mut entry);
                return Ok(());
            }
            Err(why) => {
                self.out.refused.push((shown, why.into()));
                return Ok(());
            }
        };
        let kind = entry.header().entry_type();
        let size = entry.header().size().unwrap_or(u64::MAX);
        let is_file = kind.is_file() || kind == tar::EntryType::Continuous;
        if is_file && self.out.bytes.saturating_add(size) > self.limits.bytes {
            return Err(format!(
                "the container's tree is larger than {}; nothing of it was taken\n  hint: an agent that leaves that much behind is refused; check its log for what it did",
                bytesize::ByteSize::b(self.limits.bytes).display().iec()
            ));
        }
        let Some(dest) = prepare_parent(&self.root, &rel, &mut self.out.refused, &shown) else {
            return Ok(());
        };
        let at = self.staging.join(&dest);
        let mode = entry.header().mode().unwrap_or(0o644);
        match kind {
            tar::EntryType::Directory => {
                if let Err(why) = make_dir(&self.root, &dest) {
                    self.out.refused.push((shown, why));
                }
            }
            k if k.is_file() || k == tar::EntryType::Continuous => {
                clear(&self.root, &dest);
                let written = write_file(&self.root, &dest, &mut entry, mode, size)
                    .map_err(|e| format!("writing {}: {e}", at.display()))?;
                self.out.bytes += written;
                self.out.files += 1;
            }
            tar::EntryType::Symlink => self.symlink(&entry, shown, &dest, &at)?,
            tar::EntryType::Link => self.hard_link(&entry, shown, &dest, &at)?,
            // Long names and pax records are folded into the entries by
            // the tar reader; what reaches here is special.
            other => self.out.refused.push((
                shown,
                format!(
                    "a {} (only files, directories and symlinks come back)",
                    kind_name(other)
                ),
            )),
        }
        Ok(())
    }

    /// A `.git` entry: rascal's own pointer is only noted; anything else
    /// is refused.
    fn git_entry<R: Read>(&mut self, raw: &[u8], shown: String, entry: &mut tar::Entry<'_, R>) {
        match self.pointer {
            Some(p) if is_pointer(raw, self.prefix, p, entry) => self.out.pointer_intact = true,
            _ => self.out.refused.push((
                shown,
                "a .git entry the container made or changed (the host keeps its own .git: hooks and config there could run code here)".into(),
            )),
        }
    }

    /// A symlink, written as it is (one without a target is refused).
    fn symlink<R: Read>(
        &mut self,
        entry: &tar::Entry<'_, R>,
        shown: String,
        dest: &Path,
        at: &Path,
    ) -> Result<(), String> {
        let Some(target) = entry.link_name_bytes().map(|t| t.into_owned()) else {
            self.out
                .refused
                .push((shown, "a symlink without a target".into()));
            return Ok(());
        };
        if target.is_empty() || target.contains(&0) {
            self.out
                .refused
                .push((shown, "a symlink with an empty target".into()));
            return Ok(());
        }
        clear(&self.root, dest);
        self.root
            .symlink(std::ffi::OsStr::from_bytes(&target), dest)
            .map_err(|e| format!("writing symlink {}: {e}", at.display()))?;
        self.out.files += 1;
        Ok(())
    }

    /// A hard link inside the tree becomes a copy of a regular file
    /// unpacked earlier; anything else is refused.
    fn hard_link<R: Read>(
        &mut self,
        entry: &tar::Entry<'_, R>,
        shown: String,
        dest: &Path,
        at: &Path,
    ) -> Result<(), String> {
        let target = entry
            .link_name_bytes()
            .map(|t| t.into_owned())
            .unwrap_or_default();
        let from = match relative(&target, self.prefix) {
            Ok(Some(t)) => t,
            _ => {
                self.out
                    .refused
                    .push((shown, "a hard link to a path outside the tree".into()));
                return Ok(());
            }
        };
        // Opened beneath the staging directory, no link followed.
        let Ok(mut source) = self.root.open_file(&from) else {
            self.out.refused.push((
                shown,
                "a hard link to something that is not a regular file of the tree".into(),
            ));
            return Ok(());
        };
        let len = source.metadata().map(|m| m.len()).unwrap_or(0);
        if self.out.bytes.saturating_add(len) > self.limits.bytes {
            return Err(format!(
                "the container's tree is larger than {}; nothing of it was taken",
                bytesize::ByteSize::b(self.limits.bytes).display().iec()
            ));
        }
        clear(&self.root, dest);
        let exec = source
            .metadata()
            .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()))
            .unwrap_or(0o644);
        write_file(&self.root, dest, &mut source, exec, len)
            .map_err(|e| format!("copying {} to {}: {e}", from.display(), at.display()))?;
        self.out.bytes += len;
        self.out.files += 1;
        Ok(())
    }
}

/// The path of an entry relative to `prefix/`: None for the prefix itself
/// (and for entries of the engine's own making outside it), an error for a
/// path that must never be written.
fn relative(raw: &[u8], prefix: &str) -> Result<Option<PathBuf>, &'static str> {
    if raw.contains(&0) {
        return Err("a path with a NUL byte");
    }
    let path = Path::new(std::ffi::OsStr::from_bytes(raw));
    let mut parts = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => parts.push(p),
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return Err("an absolute path"),
            Component::ParentDir => return Err("a path with `..`"),
        }
    }
    if parts.first().map(|p| p.as_bytes()) != Some(prefix.as_bytes()) {
        return Err("a path outside the workspace");
    }
    let rest: PathBuf = parts[1..].iter().collect();
    if rest.as_os_str().is_empty() {
        return Ok(None);
    }
    if parts[1..].iter().any(|p| is_git_dir(p.as_bytes())) {
        return Err(UNDER_GIT);
    }
    if raw.len() > 4096 {
        return Err("a path longer than 4096 bytes");
    }
    Ok(Some(rest))
}

/// Whether an entry is rascal's own `.git` pointer: a regular file at the
/// top of the tree named exactly `.git`, holding exactly `pointer`.
fn is_pointer(raw: &[u8], prefix: &str, pointer: &[u8], entry: &mut tar::Entry<impl Read>) -> bool {
    let top = Path::new(std::ffi::OsStr::from_bytes(raw))
        .strip_prefix(prefix)
        .is_ok_and(|rest| rest == Path::new(".git"));
    let header = entry.header();
    if !top || !header.entry_type().is_file() || header.size().ok() != Some(pointer.len() as u64) {
        return false;
    }
    let mut theirs = Vec::with_capacity(pointer.len());
    entry
        .take(pointer.len() as u64)
        .read_to_end(&mut theirs)
        .is_ok()
        && theirs == pointer
}

/// `.git` in any case (case-insensitive file systems fold it).
fn is_git_dir(name: &[u8]) -> bool {
    name.eq_ignore_ascii_case(b".git")
}

/// Make the parents of `rel` beneath `root` as real directories and give
/// back `rel`; None (with the reason recorded) when one is a symlink or a
/// file.
fn prepare_parent(
    root: &Beneath,
    rel: &Path,
    refused: &mut Vec<(String, String)>,
    shown: &str,
) -> Option<PathBuf> {
    let mut here = PathBuf::new();
    let parts: Vec<_> = rel.components().collect();
    for c in &parts[..parts.len().saturating_sub(1)] {
        here.push(c);
        match root.kind(&here) {
            Ok(Kind::Symlink) => {
                refused.push((shown.into(), "written through a symlink".into()));
                return None;
            }
            Ok(Kind::Dir) => {}
            Ok(_) => {
                refused.push((shown.into(), "a parent of it is a file".into()));
                return None;
            }
            Err(_) => {
                if let Err(why) = make_dir(root, &here) {
                    refused.push((shown.into(), why));
                    return None;
                }
            }
        }
    }
    Some(rel.to_path_buf())
}

fn make_dir(root: &Beneath, dest: &Path) -> Result<(), String> {
    match root.kind(dest) {
        Ok(Kind::Dir) => return Ok(()),
        Ok(_) => clear(root, dest),
        Err(_) => {}
    }
    root.create_dir(dest)
        .map_err(|e| format!("creating the directory: {e}"))
}

/// Remove what a later entry replaces (a file, a symlink or a directory).
fn clear(root: &Beneath, dest: &Path) {
    let _ = root.remove_all(dest);
}

/// Write exactly `size` bytes (never more than the header promised) to a
/// new file beneath `root`, never through a symlink.
fn write_file(
    root: &Beneath,
    dest: &Path,
    from: &mut impl Read,
    mode: u32,
    size: u64,
) -> std::io::Result<u64> {
    let mode = if mode & 0o111 != 0 { 0o755 } else { 0o644 };
    let mut f = root.create(dest, mode)?;
    std::io::copy(&mut from.take(size), &mut f)
}

fn kind_name(k: tar::EntryType) -> &'static str {
    match k {
        tar::EntryType::Char => "character device",
        tar::EntryType::Block => "block device",
        tar::EntryType::Fifo => "FIFO",
        tar::EntryType::GNUSparse => "sparse file",
        _ => "special entry",
    }
}

/// Make `dest` hold exactly what `staging` holds, keeping `dest`'s own
/// top-level entries named in `keep` (the host's `.git`). `staging` is
/// emptied. Both are directories rascal owns; what is in them is removed
/// and moved by descriptor, no link in them followed.
pub fn replace_contents(staging: &Path, dest: &Path, keep: &[&str]) -> Result<(), String> {
    std::fs::create_dir_all(dest).map_err(|e| format!("creating {}: {e}", dest.display()))?;
    let open = |d: &Path| Beneath::open(d).map_err(|e| format!("opening {}: {e}", d.display()));
    let (from, to) = (open(staging)?, open(dest)?);
    let list = |b: &Beneath| -> Result<Vec<std::ffi::OsString>, String> {
        Ok(b.list(Path::new(""))
            .map_err(|e| format!("reading {}: {e}", b.path().display()))?
            .into_iter()
            .map(|(n, _)| n)
            .filter(|n| !keep.iter().any(|k| n.as_bytes() == k.as_bytes()))
            .collect())
    };
    for name in list(&to)? {
        to.remove_all(Path::new(&name))
            .map_err(|err| format!("clearing {}: {err}", dest.join(&name).display()))?;
    }
    for name in list(&from)? {
        from.move_to(Path::new(&name), &to, Path::new(&name))
            .map_err(|err| format!("moving into {}: {err}", dest.join(&name).display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn hostile_entries_are_refused_each_with_its_reason_and_nothing_leaves_the_staging_dir() {
        let outside = tempfile::tempdir().unwrap();
        let staging = tempfile::tempdir().unwrap();
        let target = outside.path().join("pwned");
        let abs = target.display().to_string();
        let tar = archive(|b| {
            entry(b, K::Directory, "workspace/", b"", None, 0o755);
            entry(b, K::Regular, "workspace/ok.txt", b"fine\n", None, 0o644);
            entry(b, K::Regular, &abs, b"x", None, 0o644);
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
            let out = outside.path().to_str().unwrap().to_string();
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
        });
        let got = unpack(&tar[..], "workspace", staging.path(), None, Limits::DEFAULT).unwrap();
        let reason = |p: &str| {
            got.refused
                .iter()
                .find(|(r, _)| r == p)
                .map(|(_, w)| w.clone())
                .unwrap_or_else(|| panic!("{p} not refused: {:?}", got.refused))
        };
        assert!(reason(&abs).contains("absolute"));
        assert!(reason("workspace/../escape").contains(".."));
        assert!(reason("workspace/a/../../escape").contains(".."));
        assert!(reason("elsewhere/x").contains("outside"));
        assert!(reason("workspace/.git/hooks/post-checkout").contains(".git"));
        assert!(reason("workspace/.git/config").contains(".git"));
        assert!(reason("workspace/sub/.GIT/config").contains(".git"));
        assert!(reason("workspace/out/pwned").contains("symlink"));
        assert!(reason("workspace/in/through").contains("symlink"));
        assert!(reason("workspace/tty").contains("character device"));
        assert!(reason("workspace/disk").contains("block device"));
        assert!(reason("workspace/fifo").contains("FIFO"));
        assert!(reason("workspace/hard-out").contains("hard link"));
        assert!(reason("workspace/hard-up").contains("hard link"));
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
        assert!(e.contains("larger than"), "{e}");
        let few = Limits {
            bytes: 1 << 20,
            entries: 1,
        };
        let e = unpack(&tar[..], "workspace", staging.path(), None, few).unwrap_err();
        assert!(e.contains("more than 1 entries"), "{e}");
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
        assert!(e.contains("larger than"), "{e}");
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

    #[test]
    fn only_rascals_own_git_pointer_passes_and_even_it_is_not_written() {
        let pointer = b"gitdir: /rascal/git\n";
        let cases: Vec<(&str, Vec<u8>, bool)> = vec![
            (
                "the pointer, unchanged",
                archive(|b| entry(b, K::Regular, "workspace/.git", pointer, None, 0o644)),
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
                    entry(b, K::Regular, "workspace/sub/.git", pointer, None, 0o644);
                    entry(b, K::Regular, "workspace/.GIT", pointer, None, 0o644);
                }),
                false,
            ),
        ];
        for (what, tar, intact) in cases {
            let staging = tempfile::tempdir().unwrap();
            let got = unpack(
                &tar[..],
                "workspace",
                staging.path(),
                Some(pointer),
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
}
