//! A repository rascal works in, opened once: where its work tree and its
//! state are, its run store, and whose name a decision is taken in. The
//! one place the run store of a repository is opened — the CLI, the TUI
//! and the pipeline all come through here.

use super::{Store, StoreError};
use rascal_core::model::summary::RunSummary;
use rascal_exec::git::workspace::{self, WorkspaceError};
use std::path::{Path, PathBuf};

/// Why a project or its store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    /// Not a git repository (or it could not be read).
    #[error(transparent)]
    Repository(#[from] WorkspaceError),
    /// The run store could not be opened or read.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A repository and where rascal keeps its state in it.
pub struct Project {
    repo: git2::Repository,
    state: PathBuf,
}

impl Project {
    /// The repository at (or above) `dir`.
    pub fn open(dir: &Path) -> Result<Project, WorkspaceError> {
        let repo = workspace::open(dir)?;
        let state = workspace::state_dir(&repo);
        Ok(Project { repo, state })
    }

    /// The git repository.
    pub fn repo(&self) -> &git2::Repository {
        &self.repo
    }

    /// The top of its work tree.
    pub fn dir(&self) -> PathBuf {
        workspace::workdir(&self.repo)
    }

    /// Where rascal keeps its state: `<git common dir>/rascal`.
    pub fn state(&self) -> &Path {
        &self.state
    }

    /// Where the agents' log files and the kept change trees live.
    pub fn files(&self) -> PathBuf {
        workspace::files_dir(&self.repo)
    }

    /// Its run store, for reading and writing.
    pub fn store(&self) -> Result<Store, StoreError> {
        store_at(&self.repo)
    }

    /// Its run store for reading: as [`Project::store`], or read-only when
    /// it cannot be written (read-only, disk full).
    pub fn store_read(&self) -> Result<Store, StoreError> {
        Store::open_read(&Store::path_in(&self.state))
    }

    /// Run `run`'s summary, its journal's chain checked.
    pub fn summary(&self, run: &str) -> Result<RunSummary, StoreError> {
        self.store()?.summary(run)
    }

    /// Who a decision taken here is recorded as: the repository's git
    /// identity.
    pub fn author(&self) -> String {
        rascal_exec::git::author::author(Some(&self.repo))
    }

    /// The `.rascal/` configuration of the commit `base` (a hex id).
    pub fn config_at(&self, base: &str) -> Option<rascal_core::config::Config> {
        let oid = base.parse().ok()?;
        rascal_exec::git::base::load_config(&self.repo, oid).ok()
    }
}

/// Who decides in the repository at `dir`: its git `user.name
/// <user.email>` (or the global one), else `$USER` — the CLI's and the
/// TUI's author alike.
pub fn author_in(dir: &Path) -> String {
    match Project::open(dir) {
        Ok(p) => p.author(),
        Err(_) => rascal_exec::git::author::author(None),
    }
}

/// The run store of the open repository `repo`, for reading and writing.
pub fn store_at(repo: &git2::Repository) -> Result<Store, StoreError> {
    Store::open(&Store::path_in(&workspace::state_dir(repo)))
}
