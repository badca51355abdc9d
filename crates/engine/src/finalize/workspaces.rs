//! After a finalize, the workspaces of the candidates it did not commit are
//! removed: their changes were not chosen, and each is a full checkout of
//! the base. The finalized candidate's workspace stays — it is what was
//! committed, to look around in, and what a later `rascal finalize --push`
//! reads — until `rascal gc` collects the run. `keep_workspaces: true` in
//! `.rascal/config.yaml` keeps them all. A workspace that cannot be
//! removed is a warning, never a failed finalize. Each change tree is kept
//! first (`git::kept`): the diff and compare views still read a removed
//! candidate's change; a workspace whose change cannot be kept stays.

use crate::gc::disk;
use rascal_core::config::Config;
use rascal_core::model::summary::{CandidateSummary, RunSummary};
use rascal_exec::git::base::{load_config_from, ConfigSource};
use rascal_exec::git::kept;
use rascal_exec::git::workspace;
use std::path::{Path, PathBuf};

/// What finalize did to the run's workspaces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tidied {
    /// Removed: candidate, workspace, bytes it took.
    pub removed: Vec<(String, PathBuf, u64)>,
    /// Could not be removed: workspace, cause.
    pub failed: Vec<(PathBuf, String)>,
    /// Why no workspace was removed, when none was meant to be.
    pub kept: Option<String>,
}

impl Tidied {
    /// Bytes freed.
    pub fn freed(&self) -> u64 {
        self.removed.iter().map(|(_, _, b)| *b).sum()
    }

    /// What to tell the user: one line for what went, one per failure
    /// (`warning: …`), or nothing.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.removed.is_empty() {
            let names: Vec<&str> = self.removed.iter().map(|(c, _, _)| c.as_str()).collect();
            out.push(format!(
                "removed the {} of {} ({}); keep them with `keep_workspaces: true` in .rascal/config.yaml",
                if names.len() == 1 { "workspace" } else { "workspaces" },
                names.join(", "),
                disk::human(self.freed())
            ));
        }
        for (path, cause) in &self.failed {
            out.push(format!(
                "warning: could not remove the workspace {}: {cause} (`rascal gc` tries again)",
                path.display()
            ));
        }
        out
    }
}

/// The config the run was checked with: the base commit's, or the
/// working tree's for a run started with `--config-from-worktree`. Err:
/// the config does not load (`Config`), or the run's base is not a
/// commit id (`Usage`: not a run rascal recorded).
fn run_config(repo: &git2::Repository, summary: &RunSummary) -> Result<Config, crate::Error> {
    let workdir = workspace::workdir(repo);
    let source = if summary.worktree.config_from_worktree {
        ConfigSource::WorkingTree(&workdir)
    } else {
        let base =
            git2::Oid::from_str(&summary.base).map_err(|e| crate::Error::Usage(e.to_string()))?;
        ConfigSource::Base(repo, base)
    };
    Ok(load_config_from(source)?)
}

/// Keep candidate `c`'s verified change tree (when it has one) from its
/// workspace `ws` in the run's kept store `kept`, before `ws` goes.
pub fn keep_change(
    repo: &git2::Repository,
    kept: &Path,
    c: &CandidateSummary,
    ws: &Path,
) -> Result<(), crate::Error> {
    let Some(tree) = &c.tree else {
        return Ok(());
    };
    // `its change could not be kept first: why`.
    let not_kept = |why: Box<dyn std::error::Error + Send + Sync>| {
        crate::Error::Workspace(workspace::WorkspaceError::Io {
            what: "its change could not be kept first".into(),
            source: std::io::Error::other(why),
        })
    };
    let tree = git2::Oid::from_str(tree).map_err(|e| not_kept(e.into()))?;
    kept::keep(repo, ws, kept, tree).map_err(|e| not_kept(e.into()))
}

/// Remove the workspaces of `summary`'s candidates other than `finalized`.
pub fn remove_others(repo: &git2::Repository, summary: &RunSummary, finalized: &str) -> Tidied {
    let mut out = Tidied::default();
    if summary.status == "running" {
        out.kept = Some("the run is still running".into());
        return out;
    }
    match run_config(repo, summary) {
        Ok(c) if c.main.keep_workspaces => {
            out.kept = Some("keep_workspaces: true".into());
            return out;
        }
        Ok(_) => {}
        Err(e) => {
            out.kept = Some(format!("its config could not be read: {e}"));
            return out;
        }
    }
    let files = workspace::files_dir(repo);
    let kept = kept::store_path(&files, &summary.run);
    for c in summary.candidates.iter().filter(|c| c.id != finalized) {
        let path = workspace::workspace_path(&files, &summary.run, &c.id);
        if std::fs::symlink_metadata(&path).is_err() {
            continue;
        }
        if let Err(e) = keep_change(repo, &kept, c, &path) {
            out.failed.push((path, e.to_string()));
            continue;
        }
        let bytes = disk::usage(&path).bytes;
        match disk::remove(&path) {
            Ok(()) => out.removed.push((c.id.clone(), path, bytes)),
            Err(e) => out.failed.push((path, e.to_string())),
        }
    }
    out
}
