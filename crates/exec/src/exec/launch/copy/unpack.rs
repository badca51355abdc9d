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
) -> crate::error::Result<Unpacked> {
    let root = Beneath::open(staging).map_err(|e| {
        crate::Error::Copy(format!(
            "opening the staging directory {}: {e}",
            staging.display()
        ))
    })?;
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
        .map_err(|e| crate::Error::Copy(format!("reading the container's archive: {e}")))?;
    for entry in entries {
        let entry = entry
            .map_err(|e| crate::Error::Copy(format!("reading the container's archive: {e}")))?;
        entries_seen += 1;
        if entries_seen > limits.entries {
            return Err(crate::Error::Copy(format!(
                "the container's tree has more than {} entries; nothing of it was taken\n  hint: an agent that writes that many files is refused; check its log for what it did",
                limits.entries
            )));
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
    fn entry<R: Read>(&mut self, mut entry: tar::Entry<'_, R>) -> crate::error::Result<()> {
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
            return Err(crate::Error::Copy(format!(
                "the container's tree is larger than {}; nothing of it was taken\n  hint: an agent that leaves that much behind is refused; check its log for what it did",
                bytesize::ByteSize::b(self.limits.bytes).display().iec()
            )));
        }
        let Some(dest) = prepare_parent(&self.root, &rel, &mut self.out.refused, &shown) else {
            return Ok(());
        };
        let at = self.staging.join(&dest);
        let mode = entry.header().mode().unwrap_or(0o644);
        match kind {
            tar::EntryType::Directory => {
                if let Err(why) = make_dir(&self.root, &dest) {
                    self.out.refused.push((shown, why.to_string()));
                }
            }
            k if k.is_file() || k == tar::EntryType::Continuous => {
                clear(&self.root, &dest);
                let written = write_file(&self.root, &dest, &mut entry, mode, size)
                    .map_err(|e| crate::Error::Copy(format!("writing {}: {e}", at.display())))?;
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
    ) -> crate::error::Result<()> {
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
            .map_err(|e| crate::Error::Copy(format!("writing symlink {}: {e}", at.display())))?;
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
    ) -> crate::error::Result<()> {
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
            return Err(crate::Error::Copy(format!(
                "the container's tree is larger than {}; nothing of it was taken",
                bytesize::ByteSize::b(self.limits.bytes).display().iec()
            )));
        }
        clear(&self.root, dest);
        let exec = source
            .metadata()
            .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()))
            .unwrap_or(0o644);
        write_file(&self.root, dest, &mut source, exec, len).map_err(|e| {
            crate::Error::Copy(format!(
                "copying {} to {}: {e}",
                from.display(),
                at.display()
            ))
        })?;
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
                    refused.push((shown.into(), why.to_string()));
                    return None;
                }
            }
        }
    }
    Some(rel.to_path_buf())
}

fn make_dir(root: &Beneath, dest: &Path) -> crate::error::Result<()> {
    match root.kind(dest) {
        Ok(Kind::Dir) => return Ok(()),
        Ok(_) => clear(root, dest),
        Err(_) => {}
    }
    root.create_dir(dest)
        .map_err(|e| crate::Error::Copy(format!("creating the directory: {e}")))
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
pub fn replace_contents(staging: &Path, dest: &Path, keep: &[&str]) -> crate::error::Result<()> {
    std::fs::create_dir_all(dest)
        .map_err(|e| crate::Error::Copy(format!("creating {}: {e}", dest.display())))?;
    let open = |d: &Path| {
        Beneath::open(d).map_err(|e| crate::Error::Copy(format!("opening {}: {e}", d.display())))
    };
    let (from, to) = (open(staging)?, open(dest)?);
    let list = |b: &Beneath| -> crate::error::Result<Vec<std::ffi::OsString>> {
        Ok(b.list(Path::new(""))
            .map_err(|e| crate::Error::Copy(format!("reading {}: {e}", b.path().display())))?
            .into_iter()
            .map(|(n, _)| n)
            .filter(|n| !keep.iter().any(|k| n.as_bytes() == k.as_bytes()))
            .collect())
    };
    for name in list(&to)? {
        to.remove_all(Path::new(&name)).map_err(|err| {
            crate::Error::Copy(format!("clearing {}: {err}", dest.join(&name).display()))
        })?;
    }
    for name in list(&from)? {
        from.move_to(Path::new(&name), &to, Path::new(&name))
            .map_err(|err| {
                crate::Error::Copy(format!("moving into {}: {err}", dest.join(&name).display()))
            })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
