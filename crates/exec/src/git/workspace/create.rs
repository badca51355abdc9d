//! Creating and removing candidate workspaces: a standalone repository
//! holding only the base snapshot (without the held-out tests).

use super::*;

/// Create (or recreate) the workspace of one candidate: a standalone
/// repository at `path` whose only commit is `base` (copied object by object
/// from `repo`, marked shallow), checked out on branch `rascal`. A leftover
/// directory (from a killed run) is removed first. With held-out tests, the
/// only commit is the base's tree without them (their objects are never
/// copied, so not even git can show them to the agent).
pub fn create_workspace(
    repo: &Repository,
    base: Oid,
    path: &Path,
    holdout: &crate::git::holdout::Holdout,
) -> Result<PathBuf> {
    let io = |what: String| move |source| WorkspaceError::Io { what, source };
    if std::fs::symlink_metadata(path).is_ok() {
        crate::git::beneath::remove_path(path).map_err(io(format!(
            "removing leftover workspace {}",
            path.display()
        )))?;
    }
    std::fs::create_dir_all(path).map_err(io(format!("creating {}", path.display())))?;
    let ws = Repository::init(path)?;
    {
        let from = repo.odb()?;
        let to = ws.odb()?;
        let commit = repo.find_commit(base)?;
        let copy = |oid: Oid| -> Result<()> {
            if to.exists(oid) {
                return Ok(());
            }
            let obj = from.read(oid)?;
            to.write(obj.kind(), obj.data())?;
            Ok(())
        };
        let tree = commit.tree()?;
        // With held-out tests, no object that names them (the base commit,
        // its trees) is copied: only the blobs the agent may see.
        let whole = holdout.is_empty();
        if whole {
            copy(base)?;
            copy(tree.id())?;
        }
        let mut failed = None;
        let mut kept = Vec::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            let path = format!("{dir}{}", entry.name().unwrap_or(""));
            // Gitlinks (submodules) point into other repositories.
            if entry.kind() == Some(git2::ObjectType::Commit) {
                kept.push((path, entry.id(), entry.filemode()));
                return git2::TreeWalkResult::Skip;
            }
            if entry.kind() == Some(git2::ObjectType::Blob) {
                if holdout.holds(&path) {
                    return git2::TreeWalkResult::Ok;
                }
                kept.push((path, entry.id(), entry.filemode()));
            } else if !whole {
                return git2::TreeWalkResult::Ok;
            }
            if let Err(e) = copy(entry.id()) {
                failed = Some(e);
                return git2::TreeWalkResult::Abort;
            }
            git2::TreeWalkResult::Ok
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        if !whole {
            return held_out_workspace(&ws, path, kept);
        }
    }
    // Only the base snapshot: its parents are not here, and git knows it.
    std::fs::write(ws.path().join("shallow"), format!("{base}\n")).map_err(io(format!(
        "writing {}",
        ws.path().join("shallow").display()
    )))?;
    let commit = ws.find_commit(base)?;
    ws.branch("rascal", &commit, true)?;
    ws.set_head("refs/heads/rascal")?;
    let mut checkout = git2::build::CheckoutBuilder::new();
    checkout.force();
    ws.checkout_head(Some(&mut checkout))?;
    Ok(path.to_path_buf())
}

/// Finish a workspace whose base lacks the held-out tests: a parentless
/// commit of the `kept` entries (the copied objects), checked out.
fn held_out_workspace(
    ws: &Repository,
    path: &Path,
    kept: Vec<(String, Oid, i32)>,
) -> Result<PathBuf> {
    let mut index = git2::Index::new()?;
    for (p, id, mode) in kept {
        index.add(&git2::IndexEntry {
            ctime: git2::IndexTime::new(0, 0),
            mtime: git2::IndexTime::new(0, 0),
            dev: 0,
            ino: 0,
            mode: mode as u32,
            uid: 0,
            gid: 0,
            file_size: 0,
            id,
            flags: (p.len().min(0xfff)) as u16,
            flags_extended: 0,
            path: p.into_bytes(),
        })?;
    }
    let tree = ws.find_tree(index.write_tree_to(ws)?)?;
    let sig = git2::Signature::new("rascal", "rascal@localhost", &git2::Time::new(0, 0))?;
    let commit = ws.commit(
        None,
        &sig,
        &sig,
        "rascal: the base commit, without held-out tests",
        &tree,
        &[],
    )?;
    let commit = ws.find_commit(commit)?;
    ws.branch("rascal", &commit, true)?;
    ws.set_head("refs/heads/rascal")?;
    let mut checkout = git2::build::CheckoutBuilder::new();
    checkout.force();
    ws.checkout_head(Some(&mut checkout))?;
    Ok(path.to_path_buf())
}
