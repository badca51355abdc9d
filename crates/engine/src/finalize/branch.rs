//! Which branch finalize may write, and when it may move it: only a branch
//! that does not exist yet, or one whose tip is exactly a commit finalize
//! itself made for this run (recorded by commit id in the run's files, so an
//! amended, reset or built-upon branch is never taken for rascal's own).
//! Anything else is refused, naming the commits finalize did not make.

use git2::{Oid, Repository};
use std::path::{Path, PathBuf};

/// The file, in the run's directory, listing (one per line) the commits
/// finalize made for the run.
const RECORD: &str = "finalized";

/// The commits finalize made for a run, by id, as recorded in `run_dir`.
#[derive(Debug, Clone, Default)]
pub struct OwnCommits {
    file: PathBuf,
    ids: Vec<Oid>,
}

impl OwnCommits {
    /// The record of the run whose files are in `run_dir` (empty when
    /// finalize never committed for it).
    pub fn read(run_dir: &Path) -> OwnCommits {
        let file = run_dir.join(RECORD);
        let ids = std::fs::read_to_string(&file)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter_map(|id| Oid::from_str(id).ok())
            .collect();
        OwnCommits { file, ids }
    }

    pub fn contains(&self, id: Oid) -> bool {
        self.ids.contains(&id)
    }

    /// Record `commit`, made on `branch`, as finalize's own.
    pub fn add(&mut self, commit: Oid, branch: &str) -> std::io::Result<()> {
        if self.contains(commit) {
            return Ok(());
        }
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.file)?;
        writeln!(f, "{commit} {branch}")?;
        f.sync_all()?;
        self.ids.push(commit);
        Ok(())
    }

    pub fn ids(&self) -> &[Oid] {
        &self.ids
    }
}

/// One commit as a human reads it: short id and title.
pub fn describe(repo: &Repository, id: Oid) -> String {
    let title: String = match repo.find_commit(id) {
        Ok(c) => c.summary().ok().flatten().unwrap_or_default().to_string(),
        Err(_) => String::new(),
    };
    let short = id.to_string();
    format!(
        "{} {}",
        &short[..12.min(short.len())],
        rascal_core::text::sanitize(&title)
    )
    .trim_end()
    .to_string()
}

/// What a branch finalize wants to write holds now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Existing {
    /// No such branch.
    Absent,
    /// Exactly a commit finalize made for this run.
    Own(Oid),
    /// Anything else: the commits on it that finalize did not make (newest
    /// first; at least one — the tip itself when nothing else is found).
    Foreign(Vec<Oid>),
}

/// What `refs/heads/<branch>` holds, judged against finalize's own commits
/// for this run. `known` are commits that belong to the history the change
/// goes on (the run's base, the new tip it is rebased onto): they are not
/// listed as foreign.
pub fn existing(
    repo: &Repository,
    branch: &str,
    own: &OwnCommits,
    known: &[Oid],
) -> Result<Existing, git2::Error> {
    let tip = match repo.find_reference(&format!("refs/heads/{branch}")) {
        Ok(r) => r.peel_to_commit()?.id(),
        Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(Existing::Absent),
        Err(e) => return Err(e),
    };
    if own.contains(tip) {
        return Ok(Existing::Own(tip));
    }
    let mut walk = repo.revwalk()?;
    walk.push(tip)?;
    for id in known.iter().chain(own.ids()) {
        // A recorded commit may have been garbage-collected since.
        if repo.find_commit(*id).is_ok() {
            walk.hide(*id)?;
        }
    }
    let mut foreign: Vec<Oid> = walk.collect::<Result<_, _>>()?;
    if foreign.is_empty() {
        // The branch points into the known history (reset by hand, say):
        // still not a commit finalize made.
        foreign.push(tip);
    }
    Ok(Existing::Foreign(foreign))
}

/// The first of `name`, `name-2`, `name-3`… that is not a branch yet.
pub fn fresh_name(repo: &Repository, name: &str) -> String {
    let taken = |n: &str| repo.find_reference(&format!("refs/heads/{n}")).is_ok();
    if !taken(name) {
        return name.to_string();
    }
    (2..)
        .map(|i| format!("{name}-{i}"))
        .find(|n| !taken(n))
        .expect("some suffix is free")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(repo: &Repository, parent: Option<Oid>, file: &str, msg: &str) -> Oid {
        let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
        let mut tb = repo.treebuilder(None).unwrap();
        let blob = repo.blob(file.as_bytes()).unwrap();
        tb.insert(file, blob, 0o100644).unwrap();
        let tree = repo.find_tree(tb.write().unwrap()).unwrap();
        let parents: Vec<git2::Commit> = parent
            .into_iter()
            .map(|p| repo.find_commit(p).unwrap())
            .collect();
        let refs: Vec<&git2::Commit> = parents.iter().collect();
        repo.commit(None, &sig, &sig, msg, &tree, &refs).unwrap()
    }

    #[test]
    fn only_a_recorded_commit_is_finalizes_own() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path().join("r")).unwrap();
        let base = commit(&repo, None, "a", "base");
        let mine = commit(&repo, Some(base), "b", "rascal: mine");
        let theirs = commit(&repo, Some(mine), "c", "fix by hand");
        let mut own = OwnCommits::read(dir.path());
        own.add(mine, "rascal/x").unwrap();
        assert!(OwnCommits::read(dir.path()).contains(mine), "persisted");

        assert_eq!(
            existing(&repo, "rascal/x", &own, &[base]).unwrap(),
            Existing::Absent
        );
        repo.branch("rascal/x", &repo.find_commit(mine).unwrap(), false)
            .unwrap();
        assert_eq!(
            existing(&repo, "rascal/x", &own, &[base]).unwrap(),
            Existing::Own(mine)
        );
        // A human's commit on top: only it is named.
        repo.branch("rascal/x", &repo.find_commit(theirs).unwrap(), true)
            .unwrap();
        assert_eq!(
            existing(&repo, "rascal/x", &own, &[base]).unwrap(),
            Existing::Foreign(vec![theirs])
        );
        // Reset by hand to the base: the tip itself is named.
        repo.branch("rascal/x", &repo.find_commit(base).unwrap(), true)
            .unwrap();
        assert_eq!(
            existing(&repo, "rascal/x", &own, &[base]).unwrap(),
            Existing::Foreign(vec![base])
        );
        assert!(describe(&repo, theirs).ends_with(" fix by hand"));
        assert_eq!(fresh_name(&repo, "rascal/y"), "rascal/y");
        assert_eq!(fresh_name(&repo, "rascal/x"), "rascal/x-2");
        repo.branch("rascal/x-2", &repo.find_commit(base).unwrap(), false)
            .unwrap();
        assert_eq!(fresh_name(&repo, "rascal/x"), "rascal/x-3");
    }
}
