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

/// Where things go inside the uploaded archive (relative to the volume).
pub const WORKSPACE_DIR: &str = "workspace";
pub const ARTIFACTS_DIR: &str = "artifacts";
pub const INSTRUCTION_FILE: &str = "instruction.md";
/// The workspace's git directory, beside the workspace (never inside it:
/// it is not downloaded).
pub const GIT_DIR: &str = "git";
/// The `.git` file rascal puts in the workspace: the one `.git` entry a
/// download may hold without it being refused (see `unpack`).
pub const GIT_POINTER: &[u8] = b"gitdir: /rascal/git\n";

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
    pub instruction: Option<PathBuf>,
    pub artifacts: Option<PathBuf>,
    /// Owner of every entry (the container's user).
    pub uid: u64,
    pub gid: u64,
}

/// What of a workspace is uploaded, relative, sorted.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Paths {
    /// For a git workspace its tracked files that still exist and its
    /// untracked files git does not ignore; for a plain directory (a
    /// check's copy of the change) everything.
    pub workspace: Vec<PathBuf>,
    /// Everything under the workspace's `.git` (relative to it); None for
    /// a plain directory.
    pub git: Option<Vec<PathBuf>>,
}

/// The paths of `dir` to upload (see [`Paths`]).
pub fn workspace_paths(dir: &Path) -> Result<Paths, String> {
    let mut paths = BTreeSet::new();
    let mut git = None;
    match git2::Repository::open(dir) {
        Ok(repo) if repo.workdir().is_some() => {
            let index = repo
                .index()
                .map_err(|e| format!("reading the index of {}: {e}", dir.display()))?;
            for entry in index.iter() {
                let rel = PathBuf::from(std::ffi::OsStr::from_bytes(&entry.path));
                if std::fs::symlink_metadata(dir.join(&rel)).is_ok() {
                    paths.insert(rel);
                }
            }
            let mut opts = git2::StatusOptions::new();
            opts.include_untracked(true)
                .recurse_untracked_dirs(true)
                .include_ignored(false);
            let statuses = repo
                .statuses(Some(&mut opts))
                .map_err(|e| format!("listing the files of {}: {e}", dir.display()))?;
            for s in statuses.iter() {
                if s.status().contains(git2::Status::WT_NEW) {
                    paths.insert(PathBuf::from(std::ffi::OsStr::from_bytes(s.path_bytes())));
                }
            }
            let mut files = BTreeSet::new();
            let gitdir = dir.join(".git");
            walk(&gitdir, Path::new(""), &mut files)?;
            // `.git` itself is never a workspace path here.
            paths.retain(|p| !p.starts_with(".git"));
            git = Some(files.into_iter().collect());
        }
        _ => walk(dir, Path::new(""), &mut paths)?,
    }
    Ok(Paths {
        workspace: paths.into_iter().collect(),
        git,
    })
}

/// Every file and symlink under `dir/rel` (never following a symlink).
fn walk(dir: &Path, rel: &Path, out: &mut BTreeSet<PathBuf>) -> Result<(), String> {
    let here = dir.join(rel);
    let read = std::fs::read_dir(&here).map_err(|e| format!("reading {}: {e}", here.display()))?;
    for entry in read {
        let entry = entry.map_err(|e| format!("reading {}: {e}", here.display()))?;
        let path = rel.join(entry.file_name());
        let kind = entry
            .file_type()
            .map_err(|e| format!("reading {}: {e}", dir.join(&path).display()))?;
        if kind.is_dir() {
            walk(dir, &path, out)?;
        } else if kind.is_file() || kind.is_symlink() {
            out.insert(path);
        }
    }
    Ok(())
}

/// Write the upload archive for `src` to `out`.
pub fn pack(src: &Sources, out: impl Write) -> Result<Packed, String> {
    let mut tar = tar::Builder::new(out);
    tar.follow_symlinks(false);
    let mut packed = Packed::default();
    let Paths {
        workspace: paths,
        git,
    } = workspace_paths(&src.workspace)?;
    // Every directory gets an entry of its own, parents first, owned by
    // the container's user (the engine would create missing ones as root).
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    dirs.insert(PathBuf::from(WORKSPACE_DIR));
    let mut parents_of = |top: &str, list: &[PathBuf]| {
        for p in list {
            let mut parent = p.parent();
            while let Some(d) = parent.filter(|d| !d.as_os_str().is_empty()) {
                dirs.insert(Path::new(top).join(d));
                parent = d.parent();
            }
        }
    };
    parents_of(WORKSPACE_DIR, &paths);
    if let Some(g) = &git {
        parents_of(GIT_DIR, g);
        dirs.insert(PathBuf::from(GIT_DIR));
    }
    if src.artifacts.is_some() {
        dirs.insert(PathBuf::from(ARTIFACTS_DIR));
    }
    for d in &dirs {
        dir_entry(&mut tar, src, d)?;
    }
    for p in &paths {
        add(
            &mut tar,
            src,
            &src.workspace.join(p),
            &Path::new(WORKSPACE_DIR).join(p),
            &mut packed,
        )?;
    }
    if let Some(g) = &git {
        let gitdir = src.workspace.join(".git");
        for p in g {
            add(
                &mut tar,
                src,
                &gitdir.join(p),
                &Path::new(GIT_DIR).join(p),
                &mut packed,
            )?;
        }
        let mut h = header(
            src,
            tar::EntryType::Regular,
            0o644,
            GIT_POINTER.len() as u64,
        );
        tar.append_data(&mut h, Path::new(WORKSPACE_DIR).join(".git"), GIT_POINTER)
            .map_err(|e| format!("archiving the .git pointer: {e}"))?;
    }
    if let Some(i) = &src.instruction {
        add(&mut tar, src, i, Path::new(INSTRUCTION_FILE), &mut packed)?;
    }
    if let Some(a) = src.artifacts.as_ref().filter(|a| a.is_dir()) {
        let mut files = BTreeSet::new();
        walk(a, Path::new(""), &mut files)?;
        for f in files {
            add(
                &mut tar,
                src,
                &a.join(&f),
                &Path::new(ARTIFACTS_DIR).join(&f),
                &mut packed,
            )?;
        }
    }
    tar.into_inner()
        .and_then(|mut w| w.flush())
        .map_err(|e| format!("writing the upload archive: {e}"))?;
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

fn dir_entry<W: Write>(tar: &mut tar::Builder<W>, src: &Sources, d: &Path) -> Result<(), String> {
    let mut h = header(src, tar::EntryType::Directory, 0o755, 0);
    tar.append_data(&mut h, d, std::io::empty())
        .map_err(|e| format!("archiving directory {}: {e}", d.display()))
}

/// One file or symlink at `from`, as `name` in the archive.
fn add<W: Write>(
    tar: &mut tar::Builder<W>,
    src: &Sources,
    from: &Path,
    name: &Path,
    packed: &mut Packed,
) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let meta =
        std::fs::symlink_metadata(from).map_err(|e| format!("reading {}: {e}", from.display()))?;
    if meta.file_type().is_symlink() {
        let target =
            std::fs::read_link(from).map_err(|e| format!("reading {}: {e}", from.display()))?;
        let mut h = header(src, tar::EntryType::Symlink, 0o777, 0);
        tar.append_link(&mut h, name, &target)
            .map_err(|e| format!("archiving symlink {}: {e}", from.display()))?;
    } else if meta.is_file() {
        // The executable bit survives; nothing else of the host's mode does.
        let mode = if meta.permissions().mode() & 0o111 != 0 {
            0o755
        } else {
            0o644
        };
        let file =
            std::fs::File::open(from).map_err(|e| format!("reading {}: {e}", from.display()))?;
        let mut h = header(src, tar::EntryType::Regular, mode, meta.len());
        tar.append_data(&mut h, name, file)
            .map_err(|e| format!("archiving {}: {e}", from.display()))?;
        packed.bytes += meta.len();
    } else {
        return Ok(());
    }
    packed.files += 1;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
            instruction: None,
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
