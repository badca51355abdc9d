//! Where finalize puts the change when the base moved: the branch HEAD is
//! on may have new commits on top of the run's base. The verified tree is
//! then carried onto the new tip by a three-way merge (base tree, new tip's
//! tree, verified tree); a conflict refuses, naming the files. The merged
//! tree is the verified change rebased, not the tree the checks ran on.

use super::{plural, short, BaseMoved, FinalizeError, FinalizeOptions};
use git2::{Oid, Repository};
use rascal_core::model::summary::RunSummary;

/// The branch HEAD is on, when it has new commits on top of the run's base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    /// Its short name (`main`).
    pub branch: String,
    pub tip: Oid,
    /// Commits on it since the run's base.
    pub new_commits: usize,
}

/// Whether the base moved: HEAD is on a branch (not one of rascal's own
/// `rascal/…` branches) whose tip descends from `base` and is not `base`.
/// A detached HEAD, or a branch that does not contain the base (another
/// line of work), is not the base moving.
pub fn moved(repo: &Repository, base: Oid) -> Result<Option<Moved>, git2::Error> {
    let head = match repo.head() {
        Ok(h) => h,
        // An unborn HEAD, say: nothing moved that finalize could follow.
        Err(_) => return Ok(None),
    };
    if !head.is_branch() {
        return Ok(None);
    }
    let branch = head.shorthand().unwrap_or_default().to_string();
    if branch.starts_with("rascal/") {
        return Ok(None);
    }
    let tip = head.peel_to_commit()?.id();
    if tip == base || !repo.graph_descendant_of(tip, base)? {
        return Ok(None);
    }
    let mut walk = repo.revwalk()?;
    walk.push(tip)?;
    walk.hide(base)?;
    let new_commits = walk.count();
    Ok(Some(Moved {
        branch,
        tip,
        new_commits,
    }))
}

/// The result of carrying the verified change onto a new tip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merge {
    /// The merged tree, written to the repository.
    Clean(Oid),
    /// Paths changed both by the verified change and on the new tip.
    Conflicts(Vec<String>),
}

/// Three-way merge of `verified` (the change against `base`) onto `tip`.
pub fn merge(repo: &Repository, base: Oid, tip: Oid, verified: Oid) -> Result<Merge, git2::Error> {
    let ancestor = repo.find_commit(base)?.tree()?;
    let ours = repo.find_commit(tip)?.tree()?;
    let theirs = repo.find_tree(verified)?;
    let mut index = repo.merge_trees(&ancestor, &ours, &theirs, None)?;
    if index.has_conflicts() {
        let mut files: Vec<String> = Vec::new();
        for c in index.conflicts()? {
            let c = c?;
            let entry = c.our.or(c.their).or(c.ancestor);
            if let Some(e) = entry {
                files.push(rascal_core::text::sanitize(&String::from_utf8_lossy(
                    &e.path,
                )));
            }
        }
        files.sort();
        files.dedup();
        return Ok(Merge::Conflicts(files));
    }
    Ok(Merge::Clean(index.write_tree_to(repo)?))
}

/// Where the verified tree `tree_oid` goes: on the run's base, or — when
/// the branch HEAD is on moved past it — merged onto its new tip (refused
/// on a conflict, before anything is written). The parent, the tree to
/// commit, and how the base moved.
pub(super) fn placement(
    repo: &git2::Repository,
    summary: &RunSummary,
    base: git2::Oid,
    tree_oid: git2::Oid,
    opts: &FinalizeOptions,
) -> Result<(git2::Oid, git2::Oid, Option<BaseMoved>), FinalizeError> {
    // Where the change goes: on the run's base, or — when the branch HEAD is
    // on moved past it — merged onto its new tip (refused on a conflict,
    // before anything is written).
    let mut moved = None;
    let (parent, commit_tree) = match self::moved(repo, base)? {
        None => (base, tree_oid),
        Some(m) if opts.no_rebase => {
            moved = Some(BaseMoved {
                branch: m.branch,
                new_commits: m.new_commits,
                tip: m.tip.to_string(),
                merged_tree: None,
            });
            (base, tree_oid)
        }
        Some(m) => match merge(repo, base, m.tip, tree_oid)? {
            Merge::Conflicts(files) => {
                return Err(FinalizeError::Conflicts {
                    run: summary.run.clone(),
                    branch: m.branch,
                    base: summary.base.clone(),
                    new_commits: m.new_commits,
                    files,
                })
            }
            Merge::Clean(merged) => {
                moved = Some(BaseMoved {
                    branch: m.branch,
                    new_commits: m.new_commits,
                    tip: m.tip.to_string(),
                    merged_tree: Some(merged.to_string()),
                });
                (m.tip, merged)
            }
        },
    };
    Ok((parent, commit_tree, moved))
}

/// What a moved base did to the commit, in one sentence for the user and
/// the PR body.
pub fn rebase_note(m: &BaseMoved, verified_tree: &str, base: &str) -> String {
    let since = format!(
        "`{}` has {} since the run's base {}",
        m.branch,
        plural(m.new_commits, "new commit"),
        short(base)
    );
    match &m.merged_tree {
        None => format!(
            "{since}; committed on the run's base as verified (--no-rebase): the branch does not contain them"
        ),
        Some(t) if t == verified_tree => format!(
            "{since}; the verified change was rebased onto {} and the merged tree is identical to the verified tree {}",
            short(&m.tip),
            short(verified_tree)
        ),
        Some(t) => format!(
            "{since}; the committed tree {} is the verified change rebased onto {} (a three-way merge without conflicts), not byte-identical to the verified tree {}: the checks ran on the old base",
            short(t),
            short(&m.tip),
            short(verified_tree)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A commit of `files` (path, content) on `parent`, moving HEAD's branch.
    fn commit(repo: &Repository, files: &[(&str, &str)], msg: &str) -> Oid {
        let dir = repo.workdir().unwrap().to_path_buf();
        for (p, c) in files {
            std::fs::write(dir.join(p), c).unwrap();
        }
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
        let parents: Vec<git2::Commit> = repo
            .head()
            .ok()
            .and_then(|h| h.peel_to_commit().ok())
            .into_iter()
            .collect();
        let refs: Vec<&git2::Commit> = parents.iter().collect();
        repo.commit(Some("HEAD"), &sig, &sig, msg, &tree, &refs)
            .unwrap()
    }

    #[test]
    fn a_moved_base_is_merged_onto_or_refused_with_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let base = commit(&repo, &[("a.txt", "a\n"), ("b.txt", "b\n")], "base");
        assert_eq!(moved(&repo, base).unwrap(), None);
        // The verified change: b.txt edited.
        let mut tb = repo
            .treebuilder(Some(&repo.find_commit(base).unwrap().tree().unwrap()))
            .unwrap();
        tb.insert("b.txt", repo.blob(b"B\n").unwrap(), 0o100644)
            .unwrap();
        let verified = tb.write().unwrap();

        let tip = commit(&repo, &[("a.txt", "A\n")], "elsewhere");
        let m = moved(&repo, base).unwrap().unwrap();
        assert_eq!((m.tip, m.new_commits), (tip, 1));
        let Merge::Clean(tree) = merge(&repo, base, tip, verified).unwrap() else {
            panic!("no conflict expected")
        };
        let tree = repo.find_tree(tree).unwrap();
        let read = |p: &str| {
            let id = tree.get_path(std::path::Path::new(p)).unwrap().id();
            repo.find_blob(id).unwrap().content().to_vec()
        };
        assert_eq!(read("a.txt"), b"A\n", "the new tip's edit");
        assert_eq!(read("b.txt"), b"B\n", "the verified edit");

        let tip = commit(&repo, &[("b.txt", "bee\n")], "same file");
        assert_eq!(
            merge(&repo, base, tip, verified).unwrap(),
            Merge::Conflicts(vec!["b.txt".into()])
        );
    }
}
