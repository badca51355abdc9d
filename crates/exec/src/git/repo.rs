//! Opening the user's repository, and the errors of rascal's git work
//! (shared by the workspace and the change tree).

use git2::Repository;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("{path} is not inside a git repository\n  hint: run rascal from a git working tree, or `git init` first")]
    NotARepo { path: PathBuf },
    #[error("base ref `{reference}` does not exist in {repo}\n  hint: pass a branch, tag or commit that `git rev-parse {}` accepts", rascal_core::text::inert::shell_word(reference))]
    BadRef { reference: String, repo: PathBuf },
    #[error("{repo} has no commits yet\n  hint: commit something first; rascal compares changes against a base commit")]
    NoCommits { repo: PathBuf },
    #[error("git: {0}")]
    Git(#[from] git2::Error),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

pub type Result<T> = std::result::Result<T, WorkspaceError>;

/// Open the repository containing `path` (searching upwards).
pub fn open(path: &Path) -> Result<Repository> {
    Repository::discover(path).map_err(|_| WorkspaceError::NotARepo {
        path: path.to_path_buf(),
    })
}
