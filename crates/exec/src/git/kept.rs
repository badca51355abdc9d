//! A run's kept changes: the candidates' change trees outlive their
//! workspaces. Before finalize removes a workspace, the change tree it
//! holds (the objects the user's repository lacks) is copied into an
//! object store of the run's own, `<files>/runs/<run>/changes.git`; the
//! views read a candidate's change through [`reader`], which sees the
//! user's objects, that store and the workspaces still there, every
//! object checked against its id.

use crate::git::repo::{open, Result, WorkspaceError};
use crate::git::tree::{for_each_object, workspace_store};
use git2::{Oid, Repository};
use std::path::{Path, PathBuf};

/// Where run `run`'s kept changes are, in the repository's files
/// directory `files`.
pub fn store_path(files: &Path, run: &str) -> PathBuf {
    files.join("runs").join(run).join("changes.git")
}

/// Copy the change tree `tree` from the workspace at `ws` into the kept
/// store at `kept` (created when missing). Objects the user's repository
/// or the store already has are not written again.
pub fn keep(user: &Repository, ws: &Path, kept: &Path, tree: Oid) -> Result<()> {
    let target = match Repository::open_bare(kept) {
        Ok(r) => r,
        Err(_) => Repository::init_bare(kept)?,
    };
    let to = target.odb()?;
    let have = user.odb()?;
    let store = workspace_store(ws)?;
    for_each_object(user, &store, tree, &mut |oid, kind, data| {
        if have.exists(oid) || to.exists(oid) {
            return Ok(());
        }
        if to.write(kind, data)? != oid {
            return Err(WorkspaceError::Io {
                what: format!("keeping object {oid}"),
                source: std::io::Error::other("wrote a different object"),
            });
        }
        Ok(())
    })
}

/// A repository that reads change trees: the objects of the user's
/// repository at `origin`, of the kept store at `kept` (when there is
/// one) and of each workspace in `workspaces` that still exists (its
/// `.git` the directory rascal made), every object checked against its
/// id as it is read.
pub fn reader(origin: &Path, kept: &Path, workspaces: &[&Path]) -> Result<Repository> {
    let user = open(origin)?;
    git2::opts::strict_hash_verification(true);
    let odb = git2::Odb::new()?;
    let mut dirs = vec![user.commondir().join("objects")];
    if Repository::open_bare(kept).is_ok() {
        dirs.push(kept.join("objects"));
    }
    for ws in workspaces {
        if let Ok(store) = workspace_store(ws) {
            dirs.push(store.path().join("objects"));
        }
    }
    for d in dirs {
        odb.add_disk_alternate(&d.to_string_lossy())?;
    }
    Ok(Repository::from_odb(odb)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A user repository with one commit, and a workspace cloned from it
    /// whose store holds a change tree with a new blob.
    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf, Oid, Oid) {
        let dir = tempfile::tempdir().unwrap();
        let origin = dir.path().join("origin");
        let user = Repository::init(&origin).unwrap();
        let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
        let mut tb = user.treebuilder(None).unwrap();
        let blob = user.blob(b"base\n").unwrap();
        tb.insert("a.txt", blob, 0o100644).unwrap();
        let base_tree = user.find_tree(tb.write().unwrap()).unwrap();
        let base = user
            .commit(Some("HEAD"), &sig, &sig, "base", &base_tree, &[])
            .unwrap();
        let ws = dir.path().join("ws");
        let store = Repository::init(&ws).unwrap();
        // The workspace holds the base's objects too (it is made from it).
        let mut tb = store.treebuilder(None).unwrap();
        tb.insert("a.txt", store.blob(b"base\n").unwrap(), 0o100644)
            .unwrap();
        let new = store.blob(b"changed by the agent\n").unwrap();
        tb.insert("b.txt", new, 0o100644).unwrap();
        let tree = tb.write().unwrap();
        (dir, origin, ws, base, tree)
    }

    #[test]
    fn a_kept_tree_reads_back_after_its_workspace_is_gone() {
        let (dir, origin, ws, _base, tree) = setup();
        let kept = store_path(dir.path(), "r-1");
        let user = Repository::open(&origin).unwrap();
        keep(&user, &ws, &kept, tree).unwrap();
        std::fs::remove_dir_all(&ws).unwrap();
        let r = reader(&origin, &kept, &[&ws]).unwrap();
        let t = r.find_tree(tree).unwrap();
        let b = r.find_blob(t.get_name("b.txt").unwrap().id()).unwrap();
        assert_eq!(b.content(), b"changed by the agent\n");
        // The user's objects are not copied: the store has the new ones only.
        let store = Repository::open_bare(&kept).unwrap();
        let a = t.get_name("a.txt").unwrap().id();
        assert!(!store.odb().unwrap().exists(a));
    }

    #[test]
    fn without_a_kept_store_the_workspace_is_read() {
        let (dir, origin, ws, _base, tree) = setup();
        let kept = store_path(dir.path(), "r-1");
        let r = reader(&origin, &kept, &[&ws]).unwrap();
        assert!(r.find_tree(tree).is_ok());
        std::fs::remove_dir_all(&ws).unwrap();
        let r = reader(&origin, &kept, &[&ws]).unwrap();
        assert!(r.find_tree(tree).is_err());
    }
}
