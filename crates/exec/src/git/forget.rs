//! Before an agent's next attempt, rascal takes back the tree objects it
//! wrote into the workspace's object store for the last one: a change tree
//! is the base tree with the change, so it (and the base's trees copied
//! with it) names every held-out test and spec file. Only trees that no
//! ref of the workspace reaches are removed — the workspace's own commits
//! and whatever the agent committed stay. Blobs stay: rascal wrote only the
//! candidate's own files' blobs.

use git2::{ObjectType, Oid, Repository};
use std::collections::HashSet;
use std::path::Path;

/// Remove every loose tree object of the workspace at `ws` that no ref
/// (nor `HEAD`) reaches. Returns how many were removed. Nothing here
/// follows a link: an entry that is not a regular file is left alone
/// (git reads no object through it either).
pub fn forget_unreachable_trees(ws: &Path) -> crate::git::repo::Result<usize> {
    let store = crate::git::tree::workspace_store(ws)?;
    let reachable = reachable_trees(&store);
    let odb = store.odb()?;
    let objects = store.path().join("objects");
    let io = |what: String| move |source| crate::git::repo::WorkspaceError::Io { what, source };
    let mut removed = 0;
    let Ok(dirs) = std::fs::read_dir(&objects) else {
        return Ok(0);
    };
    for dir in dirs.flatten() {
        let prefix = dir.file_name().to_string_lossy().into_owned();
        if prefix.len() != 2 || !dir.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(files) = std::fs::read_dir(dir.path()) else {
            continue;
        };
        for f in files.flatten() {
            let Ok(oid) = Oid::from_str(&format!("{prefix}{}", f.file_name().to_string_lossy()))
            else {
                continue;
            };
            if !f.file_type().is_ok_and(|t| t.is_file()) || reachable.contains(&oid) {
                continue;
            }
            if matches!(odb.read_header(oid), Ok((_, ObjectType::Tree)) | Err(_)) {
                std::fs::remove_file(f.path())
                    .map_err(io(format!("removing {}", f.path().display())))?;
                removed += 1;
            }
        }
    }
    Ok(removed)
}

/// The trees reachable from the workspace's refs and `HEAD` (every commit
/// they reach, every tree under those commits).
fn reachable_trees(store: &Repository) -> HashSet<Oid> {
    let mut commits: Vec<Oid> = Vec::new();
    if let Ok(refs) = store.references() {
        for r in refs.flatten() {
            if let Ok(c) = r.peel_to_commit() {
                commits.push(c.id());
            }
        }
    }
    if let Ok(c) = store.head().and_then(|h| h.peel_to_commit()) {
        commits.push(c.id());
    }
    let mut seen_commits = HashSet::new();
    let mut trees = HashSet::new();
    while let Some(id) = commits.pop() {
        if !seen_commits.insert(id) {
            continue;
        }
        let Ok(c) = store.find_commit(id) else {
            continue;
        };
        // A shallow commit's parents are not there.
        commits.extend(c.parent_ids().filter(|p| store.find_commit(*p).is_ok()));
        let mut stack = vec![c.tree_id()];
        while let Some(t) = stack.pop() {
            if !trees.insert(t) {
                continue;
            }
            if let Ok(tree) = store.find_tree(t) {
                stack.extend(
                    tree.iter()
                        .filter(|e| e.kind() == Some(ObjectType::Tree))
                        .map(|e| e.id()),
                );
            }
        }
    }
    trees
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_trees_no_ref_reaches_are_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Repository::init(dir.path()).unwrap();
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        // The workspace's own commit (a tree with a subtree).
        let blob = ws.blob(b"kept").unwrap();
        let mut sub = ws.treebuilder(None).unwrap();
        sub.insert("a.txt", blob, 0o100644).unwrap();
        let sub = sub.write().unwrap();
        let mut root = ws.treebuilder(None).unwrap();
        root.insert("src", sub, 0o040000).unwrap();
        let root = root.write().unwrap();
        let tree = ws.find_tree(root).unwrap();
        ws.commit(Some("HEAD"), &sig, &sig, "base", &tree, &[])
            .unwrap();
        // A change tree rascal wrote: names a held-out file.
        let secret = ws.blob(b"held out").unwrap();
        let mut tests = ws.treebuilder(None).unwrap();
        tests.insert("hidden.rs", secret, 0o100644).unwrap();
        let tests = tests.write().unwrap();
        let mut change = ws.treebuilder(Some(&tree)).unwrap();
        change.insert("tests", tests, 0o040000).unwrap();
        let change = change.write().unwrap();
        assert_eq!(forget_unreachable_trees(dir.path()).unwrap(), 2);
        let odb = ws.odb().unwrap();
        assert!(!odb.exists(change) && !odb.exists(tests));
        assert!(odb.exists(root) && odb.exists(sub) && odb.exists(blob));
        // Blobs are never removed (the held-out ones never get here).
        assert!(odb.exists(secret));
        assert_eq!(forget_unreachable_trees(dir.path()).unwrap(), 0);
    }
}
