//! The candidate's tree in and out of its pod as tar streams. In: the
//! worktree (its tracked files and the untracked ones git does not ignore;
//! its git directory beside it at `git/`, with a `.git` file pointing
//! there, as in docker copy mode), the instruction, standard input and an
//! empty artifacts directory, laid out as the pod's `/rascal` volume. Out:
//! the archive the pod sends back is hostile (the agent wrote every byte
//! of it), so it is unpacked into a fresh staging directory under rules
//! that keep every write inside it — no absolute paths, no `..`, nothing
//! written through a symlink, no devices, fifos or hard links out, bounded
//! in bytes and entries, no `.git` entry at all (the pointer is only
//! recognised; the host keeps its own `.git`, which the change is computed
//! against) — and only then swapped in for the worktree.

use std::fs;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use crate::git::beneath::{Beneath, Kind};

/// The workspace's directory inside the archives and the `rascal` volume.
pub(crate) const WORKSPACE_DIR: &str = "workspace";
pub(crate) const ARTIFACTS_DIR: &str = "artifacts";
pub(crate) const INSTRUCTION_FILE: &str = "instruction.md";
/// A planned run's approved criteria (`$RASCAL_CRITERIA_FILE`).
pub(crate) const CRITERIA_FILE: &str = "criteria.json";
pub(crate) const STDIN_FILE: &str = "stdin";
/// Entries a result may hold.
pub(crate) const MAX_ENTRIES: u64 = 1_000_000;

/// The `.git` file in the pod's workspace: its git directory is beside it.
pub(crate) const GIT_POINTER: &[u8] = b"gitdir: /rascal/git\n";
/// The git directory's place in the archives and the `rascal` volume.
pub(crate) const GIT_DIR: &str = "git";

/// What goes into the pod.
pub struct Inbound<'a> {
    pub workdir: &'a Path,
    /// The tree sent as the workspace's files (see
    /// [`crate::exec::launch::Upload`]); None: the directory's own files.
    pub tree: Option<&'a crate::exec::launch::Upload>,
    pub instruction: Option<&'a Path>,
    /// A planned run's approved criteria.
    pub criteria: Option<&'a Path>,
    pub stdin: &'a [u8],
}

/// The input archive, written to `out`. The workspace's files come from
/// the tree rascal verified (or, for rascal's own copy, from the
/// directory, read beneath it); symlinks are archived as links, never
/// followed, so nothing outside the worktree is read.
pub fn pack(input: &Inbound, out: impl io::Write) -> io::Result<()> {
    use crate::exec::launch::copy::pack::{for_each_item, send_file, Item};
    let mut b = tar::Builder::new(out);
    b.follow_symlinks(false);
    b.mode(tar::HeaderMode::Deterministic);
    let entry = |kind: tar::EntryType, mode: u32, size: u64| {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_mode(mode);
        h.set_size(size);
        h
    };
    let add = |b: &mut tar::Builder<_>, name: &Path, item: Item<'_>| -> crate::error::Result<()> {
        let r = match item {
            Item::Dir => b.append_data(
                &mut entry(tar::EntryType::Directory, 0o755, 0),
                name,
                io::empty(),
            ),
            Item::Link(t) => b.append_link(&mut entry(tar::EntryType::Symlink, 0o777, 0), name, t),
            Item::File { exec, len, data } => b.append_data(
                &mut entry(
                    tar::EntryType::Regular,
                    if exec { 0o755 } else { 0o644 },
                    len,
                ),
                name,
                data,
            ),
        };
        r.map_err(|e| crate::Error::Copy(format!("archiving {}: {e}", name.display())))
    };
    add(&mut b, Path::new(WORKSPACE_DIR), Item::Dir).map_err(io::Error::other)?;
    let listing = for_each_item(input.workdir, input.tree, &mut |p, item| {
        add(&mut b, &Path::new(WORKSPACE_DIR).join(p), item)
    })
    .map_err(io::Error::other)?;
    if let Some(git) = &listing.git {
        let gitdir = crate::git::beneath::Beneath::open(&input.workdir.join(".git"))?;
        let mut dirs = std::collections::BTreeSet::new();
        dirs.insert(PathBuf::new());
        for p in git {
            for d in p.ancestors().skip(1) {
                dirs.insert(d.to_path_buf());
            }
        }
        for d in &dirs {
            add(&mut b, &Path::new(GIT_DIR).join(d), Item::Dir).map_err(io::Error::other)?;
        }
        for p in git {
            send_file(&gitdir, p, &Path::new(GIT_DIR).join(p), &mut |n, item| {
                add(&mut b, n, item)
            })
            .map_err(io::Error::other)?;
        }
        let mut h = tar::Header::new_gnu();
        h.set_mode(0o644);
        h.set_size(GIT_POINTER.len() as u64);
        b.append_data(&mut h, Path::new(WORKSPACE_DIR).join(".git"), GIT_POINTER)?;
    }
    let mut dir = tar::Header::new_gnu();
    dir.set_entry_type(tar::EntryType::Directory);
    dir.set_mode(0o777);
    dir.set_size(0);
    b.append_data(&mut dir, ARTIFACTS_DIR, io::empty())?;
    let file = |len: usize| {
        let mut h = tar::Header::new_gnu();
        h.set_mode(0o644);
        h.set_size(len as u64);
        h
    };
    for (p, name) in [
        (input.instruction, INSTRUCTION_FILE),
        (input.criteria, CRITERIA_FILE),
    ] {
        if let Some(p) = p {
            let bytes = fs::read(p)?;
            b.append_data(&mut file(bytes.len()), name, bytes.as_slice())?;
        }
    }
    b.append_data(&mut file(input.stdin.len()), STDIN_FILE, input.stdin)?;
    b.into_inner()?.flush()
}

/// Why a result archive was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Refused {
    #[error("entry `{0}` has an absolute path or `..`: it would be written outside the workspace")]
    Escapes(String),
    #[error("entry `{0}` is outside `workspace/` and `artifacts/`")]
    Stray(String),
    #[error("entry `{0}` would be written through the symlink `{1}`")]
    ThroughSymlink(String, String),
    #[error("entry `{0}` is a {1}, which a workspace never holds")]
    Kind(String, &'static str),
    #[error("entry `{0}` is a hard link to `{1}`, which is not a file earlier in the archive")]
    HardLink(String, String),
    #[error("the result is larger than {0} bytes")]
    TooLarge(u64),
    #[error("the result has more than {0} entries")]
    TooMany(u64),
    #[error("the archive is damaged: {0}")]
    Damaged(String),
}

/// What an unpacked result holds.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Unpacked {
    pub files: u64,
    pub bytes: u64,
    /// `.git` entries not taken (any but rascal's own pointer).
    pub git_refused: Vec<String>,
}

/// Whether the entry `parts` is a `.git` of any depth or case; and if it
/// is rascal's own pointer (regular, top of the workspace, its bytes).
fn git_entry(parts: &[std::ffi::OsString]) -> bool {
    parts[1..]
        .iter()
        .any(|p| p.as_encoded_bytes().eq_ignore_ascii_case(b".git"))
}

/// The path of `name` split into plain components, or why not.
fn plain(name: &Path) -> Result<Vec<std::ffi::OsString>, Refused> {
    let shown = name.to_string_lossy().into_owned();
    let mut parts = Vec::new();
    for c in name.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_os_string()),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(Refused::Escapes(shown))
            }
        }
    }
    Ok(parts)
}

/// Make every directory of `parts` beneath `root`, refusing to pass
/// through anything that is not a real directory (a symlink above all).
/// Gives back the path made, relative to the root.
fn real_dirs(
    root: &Beneath,
    parts: &[std::ffi::OsString],
    shown: &str,
) -> Result<PathBuf, Refused> {
    let mut at = PathBuf::new();
    for p in parts {
        at.push(p);
        match root.kind(&at) {
            Ok(Kind::Dir) => {}
            Ok(Kind::Symlink) => {
                return Err(Refused::ThroughSymlink(
                    shown.to_string(),
                    at.display().to_string(),
                ))
            }
            Ok(_) => {
                // A file where a directory must go: the later entry wins.
                root.remove_file(&at)
                    .map_err(|e| Refused::Damaged(e.to_string()))?;
                root.create_dir(&at)
                    .map_err(|e| Refused::Damaged(e.to_string()))?;
            }
            Err(_) => root
                .create_dir(&at)
                .map_err(|e| Refused::Damaged(e.to_string()))?,
        }
    }
    Ok(at)
}

/// Remove whatever is at `at` (a file, a symlink, an empty or full
/// directory) without following a symlink.
fn clear(root: &Beneath, at: &Path) -> Result<(), Refused> {
    root.remove_all(at)
        .map_err(|e| Refused::Damaged(e.to_string()))
}

/// Write a regular file at `at` beneath `root` with `mode` (no set-id or
/// sticky bits), at most `budget` bytes.
fn write_file(
    root: &Beneath,
    at: &Path,
    mode: u32,
    mut from: impl Read,
    budget: &mut u64,
    cap: u64,
) -> Result<u64, Refused> {
    let mut f = root
        .create(at, mode & 0o777)
        .map_err(|e| Refused::Damaged(format!("{}: {e}", at.display())))?;
    let mut limited = (&mut from).take(*budget + 1);
    let n = io::copy(&mut limited, &mut f).map_err(|e| Refused::Damaged(e.to_string()))?;
    if n > *budget {
        return Err(Refused::TooLarge(cap));
    }
    *budget -= n;
    Ok(n)
}

/// Unpack the hostile `archive` into `staging` (an empty directory of
/// rascal's), at most `cap` bytes of file content. Only `workspace/…` and
/// `artifacts/…` entries are taken. On any refusal nothing is swapped in.
pub fn unpack(archive: impl Read, staging: &Path, cap: u64) -> Result<Unpacked, Refused> {
    let root = Beneath::open(staging).map_err(|e| Refused::Damaged(e.to_string()))?;
    let mut a = tar::Archive::new(archive);
    let mut budget = cap;
    let mut done = Unpacked::default();
    let mut count = 0u64;
    let entries = a.entries().map_err(|e| Refused::Damaged(e.to_string()))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| Refused::Damaged(e.to_string()))?;
        count += 1;
        if count > MAX_ENTRIES {
            return Err(Refused::TooMany(MAX_ENTRIES));
        }
        let name = entry
            .path()
            .map_err(|e| Refused::Damaged(e.to_string()))?
            .into_owned();
        let shown = name.to_string_lossy().into_owned();
        let parts = plain(&name)?;
        match parts.first().and_then(|p| p.to_str()) {
            Some(WORKSPACE_DIR) | Some(ARTIFACTS_DIR) => {}
            None => continue, // `.` itself
            Some(_) => return Err(Refused::Stray(shown)),
        }
        let kind = entry.header().entry_type();
        if git_entry(&parts) {
            let pointer = is_git_pointer(&parts, kind, &mut entry);
            if !pointer {
                done.git_refused.push(shown);
            }
            continue;
        }
        let (dirs, leaf) = parts.split_at(parts.len() - 1);
        let parent = real_dirs(&root, dirs, &shown)?;
        let at = parent.join(&leaf[0]);
        let mode = entry.header().mode().unwrap_or(0o644);
        match kind {
            tar::EntryType::Directory => {
                real_dirs(&root, &parts, &shown)?;
            }
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                clear(&root, &at)?;
                write_file(&root, &at, mode, &mut entry, &mut budget, cap)?;
                done.files += 1;
            }
            tar::EntryType::Symlink => {
                let target = entry
                    .link_name()
                    .map_err(|e| Refused::Damaged(e.to_string()))?
                    .ok_or_else(|| Refused::Damaged(format!("symlink `{shown}` has no target")))?
                    .into_owned();
                // The link is data: it is created, never followed here; the
                // change's checks judge where it points.
                clear(&root, &at)?;
                root.symlink(target.as_os_str(), &at)
                    .map_err(|e| Refused::Damaged(e.to_string()))?;
                done.files += 1;
            }
            tar::EntryType::Link => {
                copy_hard_link(&root, &at, &entry, shown, &mut budget, cap)?;
                done.files += 1;
            }
            tar::EntryType::XGlobalHeader | tar::EntryType::XHeader => {}
            tar::EntryType::GNULongName | tar::EntryType::GNULongLink => {}
            tar::EntryType::Char => return Err(Refused::Kind(shown, "character device")),
            tar::EntryType::Block => return Err(Refused::Kind(shown, "block device")),
            tar::EntryType::Fifo => return Err(Refused::Kind(shown, "fifo")),
            _ => return Err(Refused::Kind(shown, "special entry")),
        }
    }
    done.bytes = cap - budget;
    Ok(done)
}

/// Whether the entry at `parts` is rascal's own git pointer: the
/// workspace's top-level `.git` file, holding exactly [`GIT_POINTER`].
fn is_git_pointer(
    parts: &[std::ffi::OsString],
    kind: tar::EntryType,
    entry: &mut tar::Entry<'_, impl Read>,
) -> bool {
    parts.len() == 2
        && parts[0] == WORKSPACE_DIR
        && parts[1] == ".git"
        && kind.is_file()
        && entry.header().size().ok() == Some(GIT_POINTER.len() as u64)
        && {
            let mut got = Vec::new();
            entry
                .take(GIT_POINTER.len() as u64)
                .read_to_end(&mut got)
                .is_ok()
                && got == GIT_POINTER
        }
}

/// A hard link `shown` to be written at `at`: copied, never linked, from a
/// file this archive already wrote (reached without a symlink).
fn copy_hard_link(
    root: &Beneath,
    at: &Path,
    entry: &tar::Entry<'_, impl Read>,
    shown: String,
    budget: &mut u64,
    cap: u64,
) -> Result<(), Refused> {
    let target = entry
        .link_name()
        .map_err(|e| Refused::Damaged(e.to_string()))?
        .ok_or_else(|| Refused::Damaged(format!("hard link `{shown}` has no target")))?
        .into_owned();
    let tparts = plain(&target)
        .map_err(|_| Refused::HardLink(shown.clone(), target.display().to_string()))?;
    let from: PathBuf = tparts.iter().collect();
    // Copied, never linked: the target must be a file this
    // archive already wrote, reached without a symlink.
    let src = match root.open_file(&from) {
        Ok(f) if !tparts.is_empty() => f,
        _ => return Err(Refused::HardLink(shown, target.display().to_string())),
    };
    let m = src
        .metadata()
        .map_err(|e| Refused::Damaged(e.to_string()))?;
    use std::os::unix::fs::PermissionsExt;
    clear(root, at)?;
    write_file(root, at, m.permissions().mode(), src, budget, cap)?;
    Ok(())
}

/// Replace the contents of `dest` with those of `from` (both rascal's
/// directories), leaving `dest` itself and its top-level entries named in
/// `keep` (the host's `.git`) in place. Nothing is followed.
pub fn swap_in(from: &Path, dest: &Path, keep: &[&str]) -> io::Result<()> {
    // A result whose `workspace` is a symlink or a file is refused before
    // anything of the worktree is removed.
    if let Ok(m) = fs::symlink_metadata(from) {
        if !m.is_dir() {
            return Err(io::Error::other(format!(
                "`{}` in the result is not a directory",
                from.file_name().unwrap_or_default().to_string_lossy()
            )));
        }
    }
    fs::create_dir_all(dest)?;
    let kept = |name: &std::ffi::OsStr| keep.iter().any(|k| name == std::ffi::OsStr::new(k));
    let to = Beneath::open(dest)?;
    for (name, _) in to.list(Path::new(""))? {
        if !kept(&name) {
            to.remove_all(Path::new(&name))?;
        }
    }
    if fs::symlink_metadata(from).is_ok() {
        let src = Beneath::open(from)?;
        for (name, _) in src.list(Path::new(""))? {
            if !kept(&name) {
                src.move_to(Path::new(&name), &to, Path::new(&name))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
