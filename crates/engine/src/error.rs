//! The engine's one error, with the variants a caller acts on, and the one
//! mapping from an outcome to the process exit code (README "Exit
//! codes"): 0 PASS or WARN, 1 FAIL, 2 usage or config error, 3 escalated,
//! 4 contested (candidates passed but disagree; a human picks). A run
//! whose journal does not check out against its hash chain is a FAIL.
//! The modules keep their own errors (`ConfigError`, `WorkspaceError`,
//! `StoreError`, `PipelineError`, `FinalizeError`); this folds them into
//! what the CLI and the TUI act on.

use crate::config::ConfigError;
use crate::finalize::FinalizeError;
use crate::git::workspace::WorkspaceError;
use crate::pipeline::PipelineError;
use crate::store::{ChainBroken, ProjectError, StoreError};

/// PASS or WARN.
pub const PASS: i32 = 0;
/// FAIL: no candidate passed, a check failed, a step could not be done.
pub const FAIL: i32 = 1;
/// A usage or configuration error.
pub const USAGE: i32 = 2;
/// Escalated to a human.
pub const ESCALATED: i32 = 3;
// 4, contested (candidates passed but disagree, and nothing settles it),
// is a run's verdict: `model::verdict::CONTESTED_EXIT_CODE`.

/// Why a command stopped before it had a verdict to report: the engine's
/// one error, whoever called it. The CLI prints it once, as `rascal:
/// error: …`; the TUI shows it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A bad argument, or a setup step (runtime, temp dir, theme, TUI) that
    /// failed.
    #[error("{0}")]
    Usage(String),
    /// `.rascal/` or a task spec is wrong: the message names the file,
    /// line and column and what is allowed.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// Not a git repository, or it could not be read or written.
    #[error("{0}")]
    Workspace(#[from] WorkspaceError),
    /// The run store could not be opened, read or written.
    #[error("{0}")]
    Store(StoreError),
    /// Finalize refused (nothing selected, a candidate that did not pass,
    /// a branch it did not make) or failed (a push).
    #[error("{0}")]
    Finalize(FinalizeError),
    /// The run's record was changed after it was written: nothing is
    /// shown, decided or committed from it.
    #[error("{0}")]
    Tampered(ChainBroken),
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Tampered(b) => Error::Tampered(b),
            e => Error::Store(e),
        }
    }
}

impl From<FinalizeError> for Error {
    fn from(e: FinalizeError) -> Self {
        match e {
            // The run's record: as when the CLI reads it itself.
            FinalizeError::Store(e) => e.into(),
            e => Error::Finalize(e),
        }
    }
}

impl From<ProjectError> for Error {
    fn from(e: ProjectError) -> Self {
        match e {
            ProjectError::Repository(e) => Error::Workspace(e),
            ProjectError::Store(e) => e.into(),
        }
    }
}

impl From<PipelineError> for Error {
    fn from(e: PipelineError) -> Self {
        match e {
            PipelineError::Config(e) => Error::Config(e),
            PipelineError::Workspace(e) => Error::Workspace(e),
            PipelineError::Store(e) => e.into(),
            PipelineError::Usage(e) => Error::Usage(e),
        }
    }
}

/// The process exit code of a command: the verdict's code when it ran,
/// else the error's.
pub fn exit_code(outcome: &Result<i32, Error>) -> i32 {
    match outcome {
        Ok(code) => *code,
        // Nothing selected is a usage error; anything else that stops a
        // finalize (a candidate that did not pass, a failed push, …) FAILs.
        Err(Error::Finalize(FinalizeError::NothingSelected(_))) => USAGE,
        Err(Error::Finalize(_) | Error::Tampered(_)) => FAIL,
        Err(Error::Usage(_) | Error::Config(_) | Error::Workspace(_) | Error::Store(_)) => USAGE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_mapping_from_outcome_to_code() {
        assert_eq!(exit_code(&Ok(PASS)), 0);
        assert_eq!(exit_code(&Ok(FAIL)), 1);
        assert_eq!(exit_code(&Ok(ESCALATED)), 3);
        assert_eq!(exit_code(&Err(Error::Usage("bad".into()))), USAGE);
        let pipeline = Error::from(PipelineError::Usage("no agent".into()));
        assert_eq!(exit_code(&Err(pipeline)), USAGE);
        let nothing = Error::from(FinalizeError::NothingSelected("run r-1 has no pick".into()));
        assert_eq!(exit_code(&Err(nothing)), USAGE);
        let unverified = Error::from(FinalizeError::NotVerified("c1".into()));
        assert_eq!(exit_code(&Err(unverified)), FAIL);
        let broken = ChainBroken {
            run: "r-1".into(),
            event: 7,
            why: "event 7 does not match its hash".into(),
        };
        let via_pipeline = Error::from(PipelineError::Store(StoreError::Tampered(broken.clone())));
        assert_eq!(exit_code(&Err(via_pipeline)), FAIL);
        let via_store = Error::from(StoreError::Tampered(broken));
        assert_eq!(
            via_store.to_string(),
            "the record of run r-1 was changed after it was written (event 7)"
        );
        assert_eq!(exit_code(&Err(via_store)), FAIL);
    }

    #[test]
    fn the_message_is_the_underlying_one() {
        let e = Error::from(FinalizeError::NoCandidate("c9".into()));
        assert_eq!(e.to_string(), "candidate `c9` is not in the run");
    }
}
