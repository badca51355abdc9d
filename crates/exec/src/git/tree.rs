//! The change as a git tree. When an agent finishes, its workspace's content
//! is written as a tree: the base tree (read from the user's repository,
//! never from the workspace's own `.git`) with every changed file of the
//! ChangeSet. The tree id is the candidate's fingerprint: every receipt
//! names it, verification commands run on a copy written from it, and
//! `finalize` commits exactly it. Objects are written into the workspace
//! repository; reading them back prefers the user's repository and checks
//! every hash, so an agent rewriting its own object store changes nothing.

use crate::git::repo::{open, Result, WorkspaceError};
use git2::{ObjectType, Oid, Repository, TreeWalkMode, TreeWalkResult};
use rascal_core::model::changeset::ChangeSet;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

fn refuse(what: String, why: &str) -> WorkspaceError {
    WorkspaceError::Io {
        what,
        source: std::io::Error::other(why.to_string()),
    }
}

/// The workspace's object store, opened without trusting anything else in
/// its `.git` (which must be a real directory: not a file pointing
/// elsewhere, not a symlink).
pub fn workspace_store(ws: &Path) -> Result<Repository> {
    let dotgit = ws.join(".git");
    let meta = std::fs::symlink_metadata(&dotgit).map_err(|e| WorkspaceError::Io {
        what: format!("reading {}", dotgit.display()),
        source: e,
    })?;
    if !meta.is_dir() {
        return Err(refuse(
            format!("the workspace {}", ws.display()),
            "its .git is not the directory rascal created",
        ));
    }
    git2::opts::strict_hash_verification(true);
    Ok(Repository::open_bare(&dotgit)?)
}

/// Write the change `changes` (files read from `ws`) onto the base tree of
/// the repository at `origin`, into the workspace's object store. Returns
/// the tree id. (A candidate's change is written as it is read instead,
/// from the same bytes the checks read: `workspace::candidate_change`.)
pub fn write_change_tree(origin: &Path, ws: &Path, base: Oid, changes: &ChangeSet) -> Result<Oid> {
    let mut tree = ChangeTree::open(origin, ws, base)?;
    for f in &changes.files {
        tree.remove(f)?;
        if f.new_kind.is_none() {
            continue;
        }
        let full = inside(ws, &f.path)?;
        let meta = std::fs::symlink_metadata(&full).map_err(|e| WorkspaceError::Io {
            what: format!("reading {}", full.display()),
            source: e,
        })?;
        let (oid, mode) = if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&full).map_err(|e| WorkspaceError::Io {
                what: format!("reading link {}", full.display()),
                source: e,
            })?;
            (
                tree.store().blob(target.to_string_lossy().as_bytes())?,
                0o120000,
            )
        } else if meta.is_dir() {
            (submodule_head(&full)?, 0o160000)
        } else {
            use std::os::unix::fs::PermissionsExt;
            let bytes = std::fs::read(&full).map_err(|e| WorkspaceError::Io {
                what: format!("reading {}", full.display()),
                source: e,
            })?;
            let exec = meta.permissions().mode() & 0o111 != 0;
            (
                tree.store().blob(&bytes)?,
                if exec { 0o100755 } else { 0o100644 },
            )
        };
        tree.add(&f.path, oid, mode)?;
    }
    tree.finish()
}

/// A gitlink's commit: the HEAD of the repository at `dir`.
pub(crate) fn submodule_head(dir: &Path) -> Result<Oid> {
    let sub = Repository::open(dir)?;
    let head = sub.head()?.peel_to_commit()?.id();
    Ok(head)
}

/// A change tree being written: the base tree (from the user's repository)
/// with each changed file's entry replaced, its blobs written into the
/// workspace's object store as they are read.
pub(crate) struct ChangeTree {
    user: Repository,
    store: Repository,
    index: git2::Index,
    base: Oid,
}

impl ChangeTree {
    pub(crate) fn open(origin: &Path, ws: &Path, base: Oid) -> Result<ChangeTree> {
        let user = open(origin)?;
        let store = workspace_store(ws)?;
        let mut index = git2::Index::new()?;
        index.read_tree(&user.find_commit(base)?.tree()?)?;
        Ok(ChangeTree {
            user,
            store,
            index,
            base,
        })
    }

    /// Where the blobs go.
    pub(crate) fn store(&self) -> &Repository {
        &self.store
    }

    /// Take out every path `f` touches (both sides of a rename).
    pub(crate) fn remove(&mut self, f: &rascal_core::model::changeset::FileChange) -> Result<()> {
        for p in f.paths() {
            let _ = self.index.remove_path(Path::new(p));
            let _ = self.index.remove_dir(Path::new(p), 0);
        }
        Ok(())
    }

    /// Put `oid` at `path` with file mode `mode`.
    pub(crate) fn add(&mut self, path: &str, oid: Oid, mode: u32) -> Result<()> {
        index_add(&mut self.index, path, oid, mode)
    }

    /// Write the tree (see [`write_index`]).
    pub(crate) fn finish(mut self) -> Result<Oid> {
        let base_tree = self.user.find_commit(self.base)?.tree()?;
        write_index(&self.user, &self.store, &base_tree, &mut self.index)
    }
}

/// Put `oid` at `path` in `index` with file mode `mode`.
pub(crate) fn index_add(index: &mut git2::Index, path: &str, oid: Oid, mode: u32) -> Result<()> {
    index.add(&git2::IndexEntry {
        ctime: git2::IndexTime::new(0, 0),
        mtime: git2::IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode,
        uid: 0,
        gid: 0,
        file_size: 0,
        id: oid,
        flags: (path.len().min(0xfff)) as u16,
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    })?;
    Ok(())
}

/// Write `index` as a tree into the workspace's store. The base's tree
/// objects go in first (the index may refer to unchanged subtrees by id);
/// they come from the user's repository, whatever the store holds.
pub(crate) fn write_index(
    user: &Repository,
    store: &Repository,
    base_tree: &git2::Tree,
    index: &mut git2::Index,
) -> Result<Oid> {
    let odb = store.odb()?;
    let mut trees = vec![base_tree.id()];
    base_tree.walk(TreeWalkMode::PreOrder, |_, e| {
        if e.kind() == Some(ObjectType::Tree) {
            trees.push(e.id());
        }
        TreeWalkResult::Ok
    })?;
    let user_odb = user.odb()?;
    for t in trees {
        let obj = user_odb.read(t)?;
        odb.write(obj.kind(), obj.data())?;
    }
    // A subtree the change rewrote keeps the base's other entries, and
    // git checks each entry's object exists: a held-out test's blob never
    // enters the store, so the user's objects are looked up beside it, for
    // this handle only (never written to the store's alternates file).
    let objects = user.commondir().join("objects");
    odb.add_disk_alternate(&objects.to_string_lossy())?;
    Ok(index.write_tree_to(store)?)
}

/// One object of a change tree, from the user's repository when it has it
/// (the base), else from the workspace's store (hash-checked).
pub(crate) fn read_object(
    user: &Repository,
    store: &Repository,
    oid: Oid,
) -> Result<(ObjectType, Vec<u8>)> {
    for repo in [user, store] {
        let odb = repo.odb()?;
        if odb.exists(oid) {
            let obj = odb.read(oid)?;
            // Strict: what was read must hash to what was asked for.
            let again = Oid::hash_object(obj.kind(), obj.data())?;
            if again != oid {
                return Err(refuse(
                    format!("object {oid}"),
                    "its content does not match its id (the workspace's object store was changed)",
                ));
            }
            return Ok((obj.kind(), obj.data().to_vec()));
        }
    }
    Err(refuse(format!("object {oid}"), "missing from the change"))
}

/// One entry of a tree: name, id, kind, file mode.
type Entry = (String, Oid, Option<ObjectType>, i32);

/// What `for_each_object` calls for every object.
type Visit<'a> = dyn FnMut(Oid, ObjectType, &[u8]) -> Result<()> + 'a;

/// The entries of tree `oid` (name, id, kind, file mode), read like
/// `read_object` (the user's repository first, every hash checked).
fn entries(user: &Repository, store: &Repository, oid: Oid) -> Result<Vec<Entry>> {
    read_object(user, store, oid)?;
    let repo = if user.odb()?.exists(oid) { user } else { store };
    let tree = repo.find_tree(oid)?;
    tree.iter()
        .map(|e| {
            let name = e
                .name()
                .map_err(|_| refuse(format!("tree {oid}"), "an entry name is not UTF-8"))?
                .to_string();
            Ok((name, e.id(), e.kind(), e.filemode()))
        })
        .collect()
}

/// The files of one change tree, for reading many of them: the user's
/// repository and the workspace's store are opened once.
pub struct TreeFiles {
    user: Repository,
    store: Repository,
    tree: Oid,
}

impl TreeFiles {
    /// The change tree `tree` of the workspace at `ws`, over the user's
    /// repository at `origin`.
    pub(crate) fn open(origin: &Path, ws: &Path, tree: Oid) -> Result<TreeFiles> {
        Ok(TreeFiles {
            user: open(origin)?,
            store: workspace_store(ws)?,
            tree,
        })
    }

    /// The content of the file at `path` (None when it is absent or not a
    /// regular file), every object hash-checked.
    pub(crate) fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        let mut at = self.tree;
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        for (i, part) in parts.iter().enumerate() {
            let Some((_, id, kind, mode)) = entries(&self.user, &self.store, at)?
                .into_iter()
                .find(|(name, ..)| name == part)
            else {
                return Ok(None);
            };
            let last = i + 1 == parts.len();
            match (last, kind) {
                (false, Some(ObjectType::Tree)) => at = id,
                (true, Some(ObjectType::Blob)) if mode != 0o120000 => {
                    return Ok(Some(read_object(&self.user, &self.store, id)?.1))
                }
                _ => return Ok(None),
            }
        }
        Ok(None)
    }
}

/// Visit every object reachable from tree `tree` (trees and blobs; gitlinks
/// are skipped), each hash-checked.
pub(crate) fn for_each_object(
    user: &Repository,
    store: &Repository,
    tree: Oid,
    visit: &mut Visit<'_>,
) -> Result<()> {
    let mut stack = vec![tree];
    let mut seen = std::collections::HashSet::new();
    while let Some(oid) = stack.pop() {
        if !seen.insert(oid) {
            continue;
        }
        let (kind, data) = read_object(user, store, oid)?;
        if kind == ObjectType::Tree {
            for (_, id, k, _) in entries(user, store, oid)? {
                if matches!(k, Some(ObjectType::Tree) | Some(ObjectType::Blob)) {
                    stack.push(id);
                }
            }
        }
        visit(oid, kind, &data)?;
    }
    Ok(())
}

/// Copy the change tree `tree` from the workspace at `ws` into the user's
/// repository (objects it already has are not read from the workspace).
pub fn import_tree(user: &Repository, ws: &Path, tree: Oid) -> Result<()> {
    let store = workspace_store(ws)?;
    let odb = user.odb()?;
    for_each_object(user, &store, tree, &mut |oid, kind, data| {
        if !odb.exists(oid) && odb.write(kind, data)? != oid {
            return Err(refuse(format!("object {oid}"), "wrote a different object"));
        }
        Ok(())
    })
}

/// `path` in `ws`, never through a symlinked directory.
pub(crate) fn inside(ws: &Path, path: &str) -> Result<std::path::PathBuf> {
    let mut at = ws.to_path_buf();
    let parts: Vec<_> = Path::new(path).components().collect();
    for (i, c) in parts.iter().enumerate() {
        match c {
            std::path::Component::Normal(_) => at.push(c),
            _ => {
                return Err(refuse(
                    format!("the change names `{path}`"),
                    "a path outside the repository",
                ))
            }
        }
        if i + 1 < parts.len() {
            let meta = std::fs::symlink_metadata(&at).map_err(|e| WorkspaceError::Io {
                what: format!("reading {}", at.display()),
                source: e,
            })?;
            if !meta.is_dir() {
                return Err(refuse(
                    format!("reading {path}"),
                    "a parent is not a directory (a symlink cannot lead out of the workspace)",
                ));
            }
        }
    }
    Ok(at)
}

/// Write tree `tree` out as files under `dest` (an empty directory),
/// every path made beneath `dest` without following a symlink (the tree's
/// own links are written as links, never written through).
pub(crate) fn checkout_tree(user: &Repository, ws: &Path, tree: Oid, dest: &Path) -> Result<()> {
    let store = workspace_store(ws)?;
    let to = crate::git::beneath::Beneath::open(dest).map_err(|source| WorkspaceError::Io {
        what: format!("opening {}", dest.display()),
        source,
    })?;
    for_each_file(user, &store, tree, &mut |path, item| {
        let rel = Path::new(path);
        let shown = dest.join(path);
        let io = |what: &str| {
            let what = format!("{what} {}", shown.display());
            move |source| WorkspaceError::Io { what, source }
        };
        match item {
            TreeItem::Dir | TreeItem::Gitlink => to.create_dir(rel).map_err(io("creating")),
            TreeItem::Link(target) => to
                .symlink(std::ffi::OsStr::from_bytes(target), rel)
                .map_err(io("creating link")),
            TreeItem::File { exec, bytes } => to
                .write(rel, bytes, if exec { 0o755 } else { 0o644 })
                .map_err(io("writing")),
        }
    })
}

/// One entry of a tree as [`for_each_file`] gives it.
pub(crate) enum TreeItem<'a> {
    /// A directory (given before what is in it).
    Dir,
    /// A submodule: an empty directory, as a fresh checkout has it.
    Gitlink,
    Link(&'a [u8]),
    File {
        exec: bool,
        bytes: &'a [u8],
    },
}

/// Every entry of tree `tree`, parents first, with its path (`a/b`), each
/// object read like [`read_object`]. Entry names that leave their
/// directory are refused.
pub(crate) fn for_each_file(
    user: &Repository,
    store: &Repository,
    tree: Oid,
    visit: &mut dyn FnMut(&str, TreeItem<'_>) -> Result<()>,
) -> Result<()> {
    let mut stack = vec![(String::new(), tree)];
    while let Some((dir, oid)) = stack.pop() {
        let mut subtrees = Vec::new();
        for (name, id, kind, mode) in entries(user, store, oid)? {
            if name.contains('/') || name == ".." || name == "." || name.is_empty() {
                return Err(refuse(
                    format!("tree {tree}"),
                    "an entry name leaves its directory",
                ));
            }
            let path = if dir.is_empty() {
                name
            } else {
                format!("{dir}/{name}")
            };
            match kind {
                Some(ObjectType::Tree) => {
                    visit(&path, TreeItem::Dir)?;
                    subtrees.push((path, id));
                }
                Some(ObjectType::Blob) => {
                    let (_, bytes) = read_object(user, store, id)?;
                    if mode == 0o120000 {
                        visit(&path, TreeItem::Link(&bytes))?;
                    } else {
                        visit(
                            &path,
                            TreeItem::File {
                                exec: mode == 0o100755,
                                bytes: &bytes,
                            },
                        )?;
                    }
                }
                _ => visit(&path, TreeItem::Gitlink)?,
            }
        }
        stack.extend(subtrees.into_iter().rev());
    }
    Ok(())
}
