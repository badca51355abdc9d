//! The repository and rascal's state beside it: the base commit and its
//! files, and where state, run files and workspaces live.

use super::*;

/// The top of the working tree of `repo`.
pub fn workdir(repo: &Repository) -> PathBuf {
    repo.workdir()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| repo.path().to_path_buf())
}

/// The directory rascal keeps its state in: `<git common dir>/rascal`.
pub fn state_dir(repo: &Repository) -> PathBuf {
    repo.commondir().join("rascal")
}

/// Resolve `reference` (branch, tag, sha, HEAD~1…) to a commit id.
pub fn resolve(repo: &Repository, reference: &str) -> Result<Oid> {
    if reference == "HEAD" && repo.head().is_err() {
        return Err(WorkspaceError::NoCommits {
            repo: workdir(repo),
        });
    }
    repo.revparse_single(reference)
        .and_then(|o| o.peel_to_commit())
        .map(|c| c.id())
        .map_err(|_| WorkspaceError::BadRef {
            reference: reference.to_string(),
            repo: workdir(repo),
        })
}

/// Read a file from the base commit's tree; `None` when it is absent there.
pub fn read_at(repo: &Repository, base: Oid, path: &str) -> Result<Option<Vec<u8>>> {
    let tree = repo.find_commit(base)?.tree()?;
    let entry = match tree.get_path(Path::new(path)) {
        Ok(e) => e,
        Err(_) => return Ok(None),
    };
    let object = entry.to_object(repo)?;
    Ok(object.as_blob().map(|b| b.content().to_vec()))
}

/// The size in bytes of `path`'s blob at commit `base` (None when absent),
/// from the object's header: a huge blob is never loaded to learn it.
pub(crate) fn size_at(repo: &Repository, base: Oid, path: &str) -> Result<Option<usize>> {
    let tree = repo.find_commit(base)?.tree()?;
    let Ok(entry) = tree.get_path(Path::new(path)) else {
        return Ok(None);
    };
    let (size, _) = repo.odb()?.read_header(entry.id())?;
    Ok(Some(size))
}

/// Where rascal keeps a repository's workspaces and run files, outside the
/// repository: `$XDG_STATE_HOME/rascal/<repo-id>` (default
/// `~/.local/state/rascal/<repo-id>`). The store stays in `state_dir`.
pub fn files_dir(repo: &Repository) -> PathBuf {
    state_root().join(repo_id(repo))
}

/// The name of the file in a repository's files directory that says which
/// repository it belongs to (`rascal gc --orphans` reads it).
pub const OWNER_FILE: &str = "repository";

/// Write `OWNER_FILE` in `repo`'s files directory (creating it): the
/// repository's git directory, so a later `gc --orphans` can tell the
/// repository is gone. Best effort: a failure only makes the directory one
/// `--orphans` cannot judge.
pub fn mark_owner(repo: &Repository) {
    let dir = files_dir(repo);
    let common =
        std::fs::canonicalize(repo.commondir()).unwrap_or_else(|_| repo.commondir().to_path_buf());
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(dir.join(OWNER_FILE), common.to_string_lossy().as_bytes());
    }
}

/// Where every repository's files directory is: `$XDG_STATE_HOME/rascal`
/// (default `~/.local/state/rascal`).
pub fn state_root() -> PathBuf {
    let root = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".local").join("state"))
        })
        .unwrap_or_else(std::env::temp_dir);
    root.join("rascal")
}

/// A stable, readable id of a repository: its directory name and a digest
/// of where it lives.
pub(crate) fn repo_id(repo: &Repository) -> String {
    let common =
        std::fs::canonicalize(repo.commondir()).unwrap_or_else(|_| repo.commondir().to_path_buf());
    let top = workdir(repo);
    let name: String = top
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repo".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let digest = rascal_core::digest::digest(common.to_string_lossy().as_bytes());
    format!("{name}-{}", &digest[..12])
}

/// The workspace directory of one candidate.
pub fn workspace_path(files: &Path, run: &str, candidate: &str) -> PathBuf {
    files.join("workspaces").join(run).join(candidate)
}
