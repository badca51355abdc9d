//! A candidate's change written out as files: the base tree (from the
//! user's repository) with the ChangeSet applied from the workspace. Each
//! verification command runs on a fresh one, so what a command writes
//! (build outputs, a `Cargo.lock` it creates) never becomes part of the
//! change, and every check starts from the same tree.

use crate::git::workspace::{open, Result, WorkspaceError};
use crate::model::changeset::{ChangeSet, EntryKind, Operation};
use git2::{ObjectType, Oid, TreeWalkMode, TreeWalkResult};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

fn io(what: String) -> impl FnOnce(std::io::Error) -> WorkspaceError {
    move |source| WorkspaceError::Io { what, source }
}

/// Write the base tree of the repository at `origin`, then the change
/// `changes` taken from the files in `workspace`, into `dest` (an empty
/// directory).
pub fn materialize(
    origin: &Path,
    base: Oid,
    changes: &ChangeSet,
    workspace: &Path,
    dest: &Path,
) -> Result<()> {
    let repo = open(origin)?;
    let tree = repo.find_commit(base)?.tree()?;
    let mut failed: Option<WorkspaceError> = None;
    tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
        let Ok(name) = entry.name() else {
            return TreeWalkResult::Skip;
        };
        let path = dest.join(dir).join(name);
        let result =
            match entry.kind() {
                Some(ObjectType::Tree) => std::fs::create_dir_all(&path)
                    .map_err(io(format!("creating {}", path.display()))),
                // A submodule: an empty directory, as a fresh checkout has it.
                Some(ObjectType::Commit) => std::fs::create_dir_all(&path)
                    .map_err(io(format!("creating {}", path.display()))),
                Some(ObjectType::Blob) => repo
                    .find_blob(entry.id())
                    .map_err(WorkspaceError::from)
                    .and_then(|blob| write_entry(&path, blob.content(), entry.filemode())),
                _ => Ok(()),
            };
        match result {
            Ok(()) => TreeWalkResult::Ok,
            Err(e) => {
                failed = Some(e);
                TreeWalkResult::Abort
            }
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    for f in &changes.files {
        if let Some(old) = &f.old_path {
            remove(&dest.join(relative(old)?))?;
        }
        let target = dest.join(relative(&f.path)?);
        if f.op == Operation::Delete || f.new_kind.is_none() {
            remove(&target)?;
            continue;
        }
        let source = inside(workspace, &f.path)?;
        remove(&target)?;
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(io(format!("creating {}", parent.display())))?;
        }
        match f.new_kind {
            Some(EntryKind::Symlink) => {
                let link = std::fs::read_link(&source)
                    .map_err(io(format!("reading link {}", source.display())))?;
                std::os::unix::fs::symlink(&link, &target)
                    .map_err(io(format!("creating link {}", target.display())))?;
            }
            Some(EntryKind::File | EntryKind::Executable) => {
                let bytes =
                    std::fs::read(&source).map_err(io(format!("reading {}", source.display())))?;
                let mode = if f.new_kind == Some(EntryKind::Executable) {
                    0o100755
                } else {
                    0o100644
                };
                write_entry(&target, &bytes, mode)?;
            }
            _ => {
                std::fs::create_dir_all(&target)
                    .map_err(io(format!("creating {}", target.display())))?;
            }
        }
    }
    Ok(())
}

/// A repository-relative path that stays inside (no `..`, not absolute).
fn relative(path: &str) -> Result<PathBuf> {
    let p = Path::new(path);
    if p.components().all(|c| matches!(c, Component::Normal(_))) {
        Ok(p.to_path_buf())
    } else {
        Err(WorkspaceError::Io {
            what: format!("the change names `{path}`"),
            source: std::io::Error::other("a path outside the repository"),
        })
    }
}

/// `path` in `workspace`, read without following a symlinked directory on
/// the way (which could lead anywhere on the host).
fn inside(workspace: &Path, path: &str) -> Result<PathBuf> {
    let rel = relative(path)?;
    let mut at = workspace.to_path_buf();
    let parts: Vec<_> = rel.components().collect();
    for (i, c) in parts.iter().enumerate() {
        at.push(c);
        if i + 1 < parts.len() {
            let meta =
                std::fs::symlink_metadata(&at).map_err(io(format!("reading {}", at.display())))?;
            if !meta.is_dir() {
                return Err(WorkspaceError::Io {
                    what: format!("reading {path}"),
                    source: std::io::Error::other(format!(
                        "{} is not a directory (a symlink cannot lead out of the workspace)",
                        at.display()
                    )),
                });
            }
        }
    }
    Ok(at)
}

fn write_entry(path: &Path, bytes: &[u8], mode: i32) -> Result<()> {
    if mode == 0o120000 {
        let target = String::from_utf8_lossy(bytes).into_owned();
        return std::os::unix::fs::symlink(&target, path)
            .map_err(io(format!("creating link {}", path.display())));
    }
    std::fs::write(path, bytes).map_err(io(format!("writing {}", path.display())))?;
    let perm = if mode == 0o100755 { 0o755 } else { 0o644 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(perm))
        .map_err(io(format!("setting the mode of {}", path.display())))
}

fn remove(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(_) => return Ok(()),
    }
    .map_err(io(format!("removing {}", path.display())))
}
