//! The archive a copy-mode container starts from: the candidate's workspace
//! (its tracked files and the untracked ones git does not ignore — never
//! ignored build outputs), its git directory (the base snapshot) beside the
//! workspace at `git/` with a `.git` *file* in the workspace pointing there
//! (`gitdir: /rascal/git`), so the agent's git works and only the
//! workspace need come back; the instruction file and the artifacts
//! directory; as one tar written to a file. Every entry is owned by the
//! container's user, with explicit directory entries, so the agent can
//! write where it could in mount mode.

use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::git::beneath::{Beneath, Kind};

/// Where things go inside the uploaded archive (relative to the volume).
pub(crate) const WORKSPACE_DIR: &str = "workspace";
pub(crate) const ARTIFACTS_DIR: &str = "artifacts";
pub(crate) const INSTRUCTION_FILE: &str = "instruction.md";
/// A planned run's approved criteria (`$RASCAL_CRITERIA_FILE`).
pub(crate) const CRITERIA_FILE: &str = "criteria.json";
/// The workspace's git directory, beside the workspace (never inside it:
/// it is not downloaded).
pub(crate) const GIT_DIR: &str = "git";
/// The `.git` file rascal puts in the workspace: the one `.git` entry a
/// download may hold without it being refused (see `unpack`).
pub(crate) const GIT_POINTER: &[u8] = b"gitdir: /rascal/git\n";

/// What went into an archive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Packed {
    /// Regular files and symlinks.
    pub files: u64,
    /// Bytes of file content.
    pub bytes: u64,
}

/// The sources of one upload.
#[derive(Debug, Clone)]
pub struct Sources {
    pub workspace: PathBuf,
    /// The tree sent as the workspace's files (see
    /// [`crate::exec::launch::Upload`]); None: the directory's own files.
    pub tree: Option<crate::exec::launch::Upload>,
    pub instruction: Option<PathBuf>,
    /// A planned run's approved criteria, uploaded as `criteria.json`.
    pub criteria: Option<PathBuf>,
    pub artifacts: Option<PathBuf>,
    /// Owner of every entry (the container's user).
    pub uid: u64,
    pub gid: u64,
}

/// What of a workspace is uploaded, relative, sorted.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Paths {
    /// For a git workspace its tracked files that still exist and its
    /// untracked files git does not ignore; for a plain directory (a
    /// check's copy of the change) everything.
    pub workspace: Vec<PathBuf>,
    /// Everything under the workspace's `.git` (relative to it); None for
    /// a plain directory.
    pub git: Option<Vec<PathBuf>>,
}

/// The paths of `dir` to upload (see [`Paths`]). Nothing is looked at
/// through a symlink: a path with a link on the way is not listed.
pub(crate) fn workspace_paths(dir: &Path) -> crate::error::Result<Paths> {
    let root = Beneath::open(dir)
        .map_err(|e| crate::Error::Copy(format!("opening {}: {e}", dir.display())))?;
    let mut paths = BTreeSet::new();
    let mut git = None;
    let real_git = root.kind(Path::new(".git")).is_ok_and(|k| k == Kind::Dir);
    match git2::Repository::open(dir) {
        Ok(repo) if real_git && repo.workdir().is_some() => {
            let index = repo.index().map_err(|e| {
                crate::Error::Copy(format!("reading the index of {}: {e}", dir.display()))
            })?;
            for entry in index.iter() {
                let rel = PathBuf::from(std::ffi::OsStr::from_bytes(&entry.path));
                if root.kind(&rel).is_ok() {
                    paths.insert(rel);
                }
            }
            let mut opts = git2::StatusOptions::new();
            opts.include_untracked(true)
                .recurse_untracked_dirs(true)
                .include_ignored(false);
            let statuses = repo.statuses(Some(&mut opts)).map_err(|e| {
                crate::Error::Copy(format!("listing the files of {}: {e}", dir.display()))
            })?;
            for s in statuses.iter() {
                if s.status().contains(git2::Status::WT_NEW) {
                    let rel = PathBuf::from(std::ffi::OsStr::from_bytes(s.path_bytes()));
                    if root.kind(&rel).is_ok() {
                        paths.insert(rel);
                    }
                }
            }
            let files = root
                .files(Path::new(".git"))
                .map_err(|e| crate::Error::Copy(format!("reading {}/.git: {e}", dir.display())))?;
            // `.git` itself is never a workspace path here.
            paths.retain(|p| !p.starts_with(".git"));
            git = Some(files.into_iter().map(|(p, _)| p).collect());
        }
        _ => {
            let files = root
                .files(Path::new(""))
                .map_err(|e| crate::Error::Copy(format!("reading {}: {e}", dir.display())))?;
            paths.extend(files.into_iter().map(|(p, _)| p));
        }
    }
    Ok(Paths {
        workspace: paths.into_iter().collect(),
        git,
    })
}

/// One thing an upload holds, as [`for_each_item`] gives it.
pub(crate) enum Item<'a> {
    Dir,
    File {
        exec: bool,
        len: u64,
        data: &'a mut dyn std::io::Read,
    },
    Link(&'a std::ffi::OsStr),
}

/// What the workspace's upload holds.
pub(crate) struct Listing {
    /// The workspace's `.git` files (relative to it), when it has one.
    pub git: Option<Vec<PathBuf>>,
}

/// Every entry of the workspace's files to upload, each with its path
/// relative to the workspace, parents before what is in them: from the
/// tree `upload` names (git objects rascal verified; held-out paths left
/// out) or, without one, from the directory, read beneath it with no link
/// followed. Then the `.git` files to send beside it.
pub(crate) fn for_each_item(
    workdir: &Path,
    upload: Option<&crate::exec::launch::Upload>,
    visit: &mut dyn FnMut(&Path, Item<'_>) -> crate::error::Result<()>,
) -> crate::error::Result<Listing> {
    let root = Beneath::open(workdir)
        .map_err(|e| crate::Error::Copy(format!("opening {}: {e}", workdir.display())))?;
    let Some(up) = upload else {
        let Paths {
            workspace: paths,
            git,
        } = workspace_paths(workdir)?;
        let mut dirs = BTreeSet::new();
        for p in &paths {
            for d in p.ancestors().skip(1).filter(|d| !d.as_os_str().is_empty()) {
                dirs.insert(d.to_path_buf());
            }
        }
        for d in &dirs {
            visit(d, Item::Dir)?;
        }
        for p in &paths {
            send_file(&root, p, p, visit)?;
        }
        return Ok(Listing { git });
    };
    let user = crate::git::repo::open(&up.origin).map_err(|e| crate::Error::Copy(e.to_string()))?;
    let store = crate::git::tree::workspace_store(workdir)
        .map_err(|e| crate::Error::Copy(e.to_string()))?;
    let mut left_out: Option<String> = None;
    crate::git::tree::for_each_file(&user, &store, up.tree, &mut |path, item| {
        // Below a directory left out, everything is left out.
        if let Some(d) = &left_out {
            if path.starts_with(d.as_str()) && path.as_bytes().get(d.len()) == Some(&b'/') {
                return Ok(());
            }
        }
        if up.holdout.holds(path) || path == ".git" || path.starts_with(".git/") {
            left_out = Some(path.to_string());
            return Ok(());
        }
        let rel = Path::new(path);
        let r = match item {
            crate::git::tree::TreeItem::Dir | crate::git::tree::TreeItem::Gitlink => {
                visit(rel, Item::Dir)
            }
            crate::git::tree::TreeItem::Link(t) => {
                visit(rel, Item::Link(std::ffi::OsStr::from_bytes(t)))
            }
            crate::git::tree::TreeItem::File { exec, bytes } => visit(
                rel,
                Item::File {
                    exec,
                    len: bytes.len() as u64,
                    data: &mut &*bytes,
                },
            ),
        };
        r.map_err(|e| crate::git::repo::WorkspaceError::Io {
            what: format!("sending {path}"),
            source: std::io::Error::other(e),
        })
    })
    .map_err(|e| crate::Error::Copy(e.to_string()))?;
    let git = match root.kind(Path::new(".git")) {
        Ok(Kind::Dir) => Some(
            root.files(Path::new(".git"))
                .map_err(|e| {
                    crate::Error::Copy(format!("reading {}/.git: {e}", workdir.display()))
                })?
                .into_iter()
                .map(|(p, _)| p)
                .collect(),
        ),
        _ => None,
    };
    Ok(Listing { git })
}

/// The file or symlink `rel` beneath `root`, given to `visit` as `name`
/// (read without following any link; gone or behind a link: skipped).
pub(crate) fn send_file(
    root: &Beneath,
    rel: &Path,
    name: &Path,
    visit: &mut dyn FnMut(&Path, Item<'_>) -> crate::error::Result<()>,
) -> crate::error::Result<()> {
    let shown = || root.path().join(rel).display().to_string();
    match root.kind(rel) {
        Ok(Kind::Symlink) => {
            let target = root
                .read_link(rel)
                .map_err(|e| crate::Error::Copy(format!("reading {}: {e}", shown())))?;
            visit(name, Item::Link(&target))
        }
        Ok(Kind::File { mode, .. }) => {
            let mut f = root
                .open_file(rel)
                .map_err(|e| crate::Error::Copy(format!("reading {}: {e}", shown())))?;
            // The length of what was opened, not of what was looked at.
            let len = f
                .metadata()
                .map_err(|e| crate::Error::Copy(format!("reading {}: {e}", shown())))?
                .len();
            let mut data = std::io::Read::take(&mut f, len);
            visit(
                name,
                Item::File {
                    exec: mode & 0o111 != 0,
                    len,
                    data: &mut data,
                },
            )
        }
        _ => Ok(()),
    }
}

/// Write the upload archive for `src` to `out`.
pub fn pack(src: &Sources, out: impl Write) -> crate::error::Result<Packed> {
    let mut tar = tar::Builder::new(out);
    tar.follow_symlinks(false);
    let mut packed = Packed::default();
    // Every directory gets an entry of its own, parents first, owned by
    // the container's user (the engine would create missing ones as root).
    dir_entry(&mut tar, src, Path::new(WORKSPACE_DIR))?;
    let listing = for_each_item(&src.workspace, src.tree.as_ref(), &mut |p, item| {
        add(
            &mut tar,
            src,
            &Path::new(WORKSPACE_DIR).join(p),
            item,
            &mut packed,
        )
    })?;
    if let Some(g) = &listing.git {
        let gitdir = Beneath::open(&src.workspace.join(".git")).map_err(|e| {
            crate::Error::Copy(format!("opening {}/.git: {e}", src.workspace.display()))
        })?;
        let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
        dirs.insert(PathBuf::new());
        for p in g {
            for d in p.ancestors().skip(1) {
                dirs.insert(d.to_path_buf());
            }
        }
        for d in &dirs {
            dir_entry(&mut tar, src, &Path::new(GIT_DIR).join(d))?;
        }
        for p in g {
            send_file(
                &gitdir,
                p,
                &Path::new(GIT_DIR).join(p),
                &mut |name, item| add(&mut tar, src, name, item, &mut packed),
            )?;
        }
        let mut h = header(
            src,
            tar::EntryType::Regular,
            0o644,
            GIT_POINTER.len() as u64,
        );
        tar.append_data(&mut h, Path::new(WORKSPACE_DIR).join(".git"), GIT_POINTER)
            .map_err(|e| crate::Error::Copy(format!("archiving the .git pointer: {e}")))?;
    }
    for (file, name) in [
        (&src.instruction, INSTRUCTION_FILE),
        (&src.criteria, CRITERIA_FILE),
    ] {
        let Some(i) = file else { continue };
        if let (Some(parent), Some(file)) = (i.parent(), i.file_name()) {
            let b = Beneath::open(parent)
                .map_err(|e| crate::Error::Copy(format!("opening {}: {e}", parent.display())))?;
            send_file(&b, Path::new(file), Path::new(name), &mut |n, item| {
                add(&mut tar, src, n, item, &mut packed)
            })?;
        }
    }
    if let Some(a) = src.artifacts.as_ref().filter(|a| a.is_dir()) {
        dir_entry(&mut tar, src, Path::new(ARTIFACTS_DIR))?;
        let b = Beneath::open(a)
            .map_err(|e| crate::Error::Copy(format!("opening {}: {e}", a.display())))?;
        let files = b
            .files(Path::new(""))
            .map_err(|e| crate::Error::Copy(format!("reading {}: {e}", a.display())))?;
        let mut dirs = BTreeSet::new();
        for (f, _) in &files {
            for d in f.ancestors().skip(1).filter(|d| !d.as_os_str().is_empty()) {
                dirs.insert(d.to_path_buf());
            }
        }
        for d in &dirs {
            dir_entry(&mut tar, src, &Path::new(ARTIFACTS_DIR).join(d))?;
        }
        for (f, _) in files {
            send_file(
                &b,
                &f,
                &Path::new(ARTIFACTS_DIR).join(&f),
                &mut |n, item| add(&mut tar, src, n, item, &mut packed),
            )?;
        }
    } else if src.artifacts.is_some() {
        dir_entry(&mut tar, src, Path::new(ARTIFACTS_DIR))?;
    }
    tar.into_inner()
        .and_then(|mut w| w.flush())
        .map_err(|e| crate::Error::Copy(format!("writing the upload archive: {e}")))?;
    Ok(packed)
}

fn header(src: &Sources, kind: tar::EntryType, mode: u32, size: u64) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_size(size);
    h.set_uid(src.uid);
    h.set_gid(src.gid);
    h.set_mtime(0);
    h
}

fn dir_entry<W: Write>(
    tar: &mut tar::Builder<W>,
    src: &Sources,
    d: &Path,
) -> crate::error::Result<()> {
    let mut h = header(src, tar::EntryType::Directory, 0o755, 0);
    tar.append_data(&mut h, d, std::io::empty())
        .map_err(|e| crate::Error::Copy(format!("archiving directory {}: {e}", d.display())))
}

/// One entry, as `name` in the archive.
fn add<W: Write>(
    tar: &mut tar::Builder<W>,
    src: &Sources,
    name: &Path,
    item: Item<'_>,
    packed: &mut Packed,
) -> crate::error::Result<()> {
    match item {
        Item::Dir => return dir_entry(tar, src, name),
        Item::Link(target) => {
            let mut h = header(src, tar::EntryType::Symlink, 0o777, 0);
            tar.append_link(&mut h, name, target).map_err(|e| {
                crate::Error::Copy(format!("archiving symlink {}: {e}", name.display()))
            })?;
        }
        Item::File { exec, len, data } => {
            // The executable bit survives; nothing else of the host's mode does.
            let mode = if exec { 0o755 } else { 0o644 };
            let mut h = header(src, tar::EntryType::Regular, mode, len);
            tar.append_data(&mut h, name, data)
                .map_err(|e| crate::Error::Copy(format!("archiving {}: {e}", name.display())))?;
            packed.bytes += len;
        }
    }
    packed.files += 1;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Copy mode: a planned run's criteria file goes into the volume
    /// beside the instruction, where `$RASCAL_CRITERIA_FILE` points.
    #[test]
    fn the_instruction_and_a_planned_runs_criteria_are_uploaded() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        std::fs::write(ws.join("a.txt"), "a\n").unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir(&run).unwrap();
        std::fs::write(run.join("instruction.md"), "Add a.\n").unwrap();
        std::fs::write(run.join("criteria.json"), "{\"criteria\": []}\n").unwrap();
        let src = Sources {
            workspace: ws,
            tree: None,
            instruction: Some(run.join("instruction.md")),
            criteria: Some(run.join("criteria.json")),
            artifacts: None,
            uid: 1000,
            gid: 1000,
        };
        let mut out = Vec::new();
        pack(&src, &mut out).unwrap();
        let mut names = std::collections::BTreeMap::new();
        for e in tar::Archive::new(&out[..]).entries().unwrap() {
            let mut e = e.unwrap();
            let name = e.path().unwrap().to_string_lossy().into_owned();
            let mut data = String::new();
            std::io::Read::read_to_string(&mut e, &mut data).unwrap();
            names.insert(name, data);
        }
        assert_eq!(names[INSTRUCTION_FILE], "Add a.\n");
        assert_eq!(
            names[CRITERIA_FILE],
            "{\"criteria\": []}\n",
            "{:?}",
            names.keys()
        );
        assert_eq!(
            format!("{}/{CRITERIA_FILE}", crate::exec::launch::copy::VOLUME),
            crate::exec::launch::docker::CRITERIA
        );
    }

    #[test]
    fn the_git_dir_goes_beside_the_workspace_with_a_pointer_in_it() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        std::fs::create_dir(dir.path().join(".github")).unwrap();
        std::fs::write(dir.path().join(".github/ci.yml"), "x\n").unwrap();
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.write().unwrap();
        let src = Sources {
            workspace: dir.path().to_path_buf(),
            tree: None,
            instruction: None,
            criteria: None,
            artifacts: None,
            uid: 1000,
            gid: 1000,
        };
        let mut out = Vec::new();
        pack(&src, &mut out).unwrap();
        let mut names = std::collections::BTreeMap::new();
        for e in tar::Archive::new(&out[..]).entries().unwrap() {
            let mut e = e.unwrap();
            let name = e.path().unwrap().to_string_lossy().into_owned();
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut e, &mut data).unwrap();
            names.insert(name, (e.header().entry_type(), data));
        }
        let (kind, data) = &names["workspace/.git"];
        assert!(kind.is_file());
        assert_eq!(data.as_slice(), GIT_POINTER);
        assert!(names.contains_key("git/HEAD"), "{:?}", names.keys());
        assert!(names.contains_key("git/index"));
        assert!(names.contains_key("workspace/a.txt"));
        assert!(names.contains_key("workspace/.github/ci.yml"));
        assert!(
            !names.keys().any(|n| n.starts_with("workspace/.git/")),
            "{:?}",
            names.keys()
        );
    }
}
