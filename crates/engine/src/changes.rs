//! A candidate's change as the TUI's diff and compare views (and `y`
//! copy) read it: once it finished, its verified change tree — from the run's kept
//! store or its workspace while it exists (`git::kept`), so the views
//! still show it after finalize removed the workspace; while it runs, its
//! workspace's files as they are now.

use crate::Error;
use git2::Oid;
use rascal_exec::git::workspace::WorkspaceError;
use rascal_exec::git::{kept, workspace};
use std::path::{Path, PathBuf};

/// One candidate's change, as the views find it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Its workspace (which finalize may have removed).
    pub worktree: PathBuf,
    /// Its verified change tree, once it has one.
    pub tree: Option<String>,
}

impl Change {
    fn tree(&self) -> Option<Oid> {
        self.tree.as_deref().and_then(|t| Oid::from_str(t).ok())
    }
}

/// A reader of run `run`'s change trees (the repository at `origin`).
fn reader(origin: &Path, run: &str, changes: &[&Change]) -> workspace::Result<git2::Repository> {
    let files = workspace::files_dir(&workspace::open(origin)?);
    let dirs: Vec<&Path> = changes.iter().map(|c| c.worktree.as_path()).collect();
    kept::reader(origin, &kept::store_path(&files, run), &dirs)
}

/// A test of whether a file of a workspace differs from the base commit
/// `base` of the repository at `origin` (its path relative to the
/// workspace `dir`): true when it does, or when either side cannot be
/// read. For the TUI's jump to a shell or editor, which names only what
/// the agent changed.
pub fn differs_from_base(origin: &Path, base: &str, dir: &Path) -> impl Fn(&str) -> bool {
    let repo = workspace::open(origin).ok();
    let base = Oid::from_str(base).ok();
    let dir = dir.to_path_buf();
    move |file: &str| {
        let (Some(repo), Some(base)) = (&repo, base) else {
            return true;
        };
        let now = std::fs::read(dir.join(file)).ok();
        let then = workspace::read_at(repo, base, file).ok().flatten();
        now.is_none() || now != then
    }
}

/// What the views say when a change can be read neither from its tree
/// nor from its workspace.
pub const GONE: &str = "its change can no longer be read: its change tree and its workspace are gone (`rascal gc` removes a run's files)";

/// The diff text of `c` against the base `base`, in run `run` of the
/// repository at `origin`; why not when neither its tree nor its
/// workspace can be read.
pub fn diff_text(origin: &Path, run: &str, base: &str, c: &Change) -> Result<String, Error> {
    let base = Oid::from_str(base).map_err(git_error)?;
    if let Some(tree) = c.tree() {
        let read = reader(origin, run, &[c]).and_then(|r| {
            let old = r.find_commit(base)?.tree_id();
            workspace::trees_diff_text(&r, old, tree)
        });
        if let Ok(text) = read {
            return Ok(text);
        }
    }
    if !c.worktree.is_dir() {
        return Err(Error::Gone(GONE.into()));
    }
    Ok(workspace::diff_text(origin, &c.worktree, base)?)
}

/// How candidate `a`'s change differs from `b`'s: a unified diff with B
/// as the old side and A as the new. Their change trees when both have
/// one, else their workspaces' files.
pub fn compare_text(
    origin: &Path,
    run: &str,
    base: &str,
    a: &Change,
    b: &Change,
) -> Result<String, Error> {
    if let (Some(ta), Some(tb)) = (a.tree(), b.tree()) {
        let read =
            reader(origin, run, &[a, b]).and_then(|r| workspace::trees_diff_text(&r, tb, ta));
        if let Ok(text) = read {
            return Ok(between_candidates(&text));
        }
    }
    if !a.worktree.is_dir() || !b.worktree.is_dir() {
        return Err(Error::Gone(GONE.replacen(
            "its change",
            "one of the changes",
            1,
        )));
    }
    Ok(between_candidates(&files_compare_text(
        origin,
        &a.worktree,
        &b.worktree,
        base,
    )))
}

/// A diff of B's change against A's, with git's "new file" / "deleted
/// file" headers said as what they mean between two candidates: a file
/// only A's change has, or only B's (a file B added reads "deleted" to
/// git, which is not what happened).
fn between_candidates(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if line.starts_with("new file mode ") {
            out.push_str("# only in A's change (B's has no such file)\n");
        } else if line.starts_with("deleted file mode ") {
            out.push_str("# only in B's change (A's has no such file)\n");
        } else {
            out.push_str(line);
        }
    }
    out
}

/// The files candidate `c`'s verified change tree added or modified
/// against the base (path, text; binary, linked and huge files left
/// out), for finding a test's source. Its tree only: a workspace is
/// never read for this.
pub fn changed_files(
    origin: &Path,
    run: &str,
    base: &str,
    c: &Change,
) -> Result<Vec<(String, String)>, Error> {
    const MAX_FILES: usize = 500;
    const MAX_BYTES: usize = 1 << 20;
    let tree = c.tree().ok_or_else(|| {
        Error::Verification("its change has no verified tree (yet) to read the test from".into())
    })?;
    let base = Oid::from_str(base).map_err(git_error)?;
    let r = reader(origin, run, &[c])?;
    let read = || -> Result<Vec<(String, String)>, git2::Error> {
        let old = r.find_tree(r.find_commit(base)?.tree_id())?;
        let new = r.find_tree(tree)?;
        let diff = r.diff_tree_to_tree(Some(&old), Some(&new), None)?;
        let mut out = Vec::new();
        for d in diff.deltas() {
            let f = d.new_file();
            let regular = matches!(
                f.mode(),
                git2::FileMode::Blob | git2::FileMode::BlobExecutable
            );
            let (Some(path), true) = (f.path(), regular) else {
                continue;
            };
            let blob = r.find_blob(f.id())?;
            if blob.is_binary() || blob.size() > MAX_BYTES {
                continue;
            }
            out.push((
                path.to_string_lossy().into_owned(),
                String::from_utf8_lossy(blob.content()).into_owned(),
            ));
            if out.len() == MAX_FILES {
                break;
            }
        }
        Ok(out)
    };
    read().map_err(|e| {
        Error::Gone(format!(
            "its change tree could not be read: {}",
            e.message()
        ))
    })
}

/// A git error reading a run's changes, as the engine says it.
fn git_error(e: git2::Error) -> Error {
    Error::Workspace(WorkspaceError::Git(e))
}

/// Candidate A's files against candidate B's, for every path either one
/// changed: a unified diff with B as the old side and A as the new.
fn files_compare_text(origin: &Path, a: &Path, b: &Path, base: &str) -> String {
    let Ok(oid) = Oid::from_str(base) else {
        return String::new();
    };
    let mut paths = std::collections::BTreeSet::new();
    for dir in [a, b] {
        // Only the paths: counted and let go, never held.
        let limits = workspace::ChangeSetLimits::default();
        if let Ok(cs) = workspace::changeset_streamed(origin, dir, oid, &limits, None) {
            for f in cs.files {
                paths.insert(f.path.clone());
            }
        }
    }
    let mut out = String::new();
    for p in paths {
        // Never through a link the agent made: a path it turned into one
        // reads as empty here, not as what it points at.
        let read = |d: &Path| {
            rascal_exec::git::beneath::Beneath::open(d)
                .and_then(|w| w.read(Path::new(&p)))
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default()
        };
        let (old, new) = (read(b), read(a));
        if old == new {
            continue;
        }
        let diff = similar::TextDiff::from_lines(&old, &new);
        out.push_str(&format!("diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n"));
        for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
            out.push_str(&hunk.to_string());
            if !out.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A running candidate whose agent turned a changed path into a link
    /// to a host file: the compare view shows the link's absence, never
    /// the host file.
    #[test]
    fn a_file_only_one_candidate_has_is_never_called_deleted() {
        let text = "diff --git a/t.py b/t.py\ndeleted file mode 100644\nindex 1..0\n--- a/t.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\ndiff --git a/n.py b/n.py\nnew file mode 100644\n";
        let shown = between_candidates(text);
        assert!(!shown.contains("deleted file"), "{shown}");
        assert!(
            shown.contains("# only in B's change (A's has no such file)"),
            "{shown}"
        );
        assert!(
            shown.contains("# only in A's change (B's has no such file)"),
            "{shown}"
        );
        assert!(shown.contains("-x\n"), "the lines stay: {shown}");
    }

    #[test]
    fn comparing_workspaces_never_reads_through_an_agents_link() {
        let dir = tempfile::tempdir().unwrap();
        let origin = dir.path().join("origin");
        let repo = git2::Repository::init(&origin).unwrap();
        std::fs::write(origin.join("a.txt"), "base\n").unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("a.txt")).unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
        let base = repo
            .commit(Some("HEAD"), &sig, &sig, "base", &tree, &[])
            .unwrap();
        let holdout = rascal_exec::git::holdout::Holdout::default();
        let ws = |name: &str| {
            workspace::create_workspace(&repo, base, &dir.path().join(name), &holdout).unwrap()
        };
        let (a, b) = (ws("a"), ws("b"));
        let secret = dir.path().join("host-secret");
        std::fs::write(&secret, "TOP SECRET ON THE HOST\n").unwrap();
        std::fs::remove_file(a.join("a.txt")).unwrap();
        std::os::unix::fs::symlink(&secret, a.join("a.txt")).unwrap();
        std::fs::write(b.join("a.txt"), "changed by b\n").unwrap();
        let change = |w: &Path| Change {
            worktree: w.to_path_buf(),
            tree: None,
        };
        let text =
            compare_text(&origin, "r-1", &base.to_string(), &change(&a), &change(&b)).unwrap();
        assert!(text.contains("-changed by b"), "{text}");
        assert!(!text.contains("TOP SECRET"), "{text}");
    }
}
