//! A change tree with some paths laid from elsewhere: the base commit's
//! version of the files that decide how a check runs, the base's tests, or
//! a file rascal rewrote (a Rust source with the base's test modules). The
//! result is a tree in the workspace's object store, like the change tree,
//! that check copies are written from; the change itself is untouched.

use crate::git::repo::{open, Result};
use crate::git::tree::{index_add, workspace_store, write_index};
use git2::Oid;
use std::path::Path;

/// What goes at one path of the new tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lay {
    /// The base commit's entry (or nothing, when the base has none).
    FromBase,
    /// Nothing: the path is left out.
    Remove,
    /// These bytes, as a regular file (keeping the path's executable bit).
    Bytes(Vec<u8>),
}

/// The tree `tree` (a change tree of the workspace at `ws`) with `edits`
/// applied; `base` is the base commit in the user's repository at
/// `origin`. Returns `tree` itself when `edits` is empty.
pub fn overlay(
    origin: &Path,
    ws: &Path,
    tree: Oid,
    base: Oid,
    edits: &[(String, Lay)],
) -> Result<Oid> {
    if edits.is_empty() {
        return Ok(tree);
    }
    let user = open(origin)?;
    let store = workspace_store(ws)?;
    let base_tree = user.find_commit(base)?.tree()?;
    let mut index = git2::Index::new()?;
    // A change tree is in the workspace's store; the base's may be only in
    // the user's repository.
    let start = match store.find_tree(tree) {
        Ok(t) => t,
        Err(_) => user.find_tree(tree)?,
    };
    index.read_tree(&start)?;
    for (path, lay) in edits {
        let p = Path::new(path);
        let mode = index.get_path(p, 0).map(|e| e.mode);
        let _ = index.remove_path(p);
        let _ = index.remove_dir(p, 0);
        match lay {
            Lay::Remove => {}
            Lay::FromBase => {
                if let Ok(e) = base_tree.get_path(p) {
                    if e.kind() == Some(git2::ObjectType::Blob) {
                        index_add(&mut index, path, e.id(), e.filemode() as u32)?;
                    }
                }
            }
            Lay::Bytes(bytes) => {
                let id = store.blob(bytes)?;
                let mode = match mode {
                    Some(m) if m == 0o100755 => m,
                    _ => 0o100644,
                };
                index_add(&mut index, path, id, mode)?;
            }
        }
    }
    write_index(&user, &store, &base_tree, &mut index)
}
