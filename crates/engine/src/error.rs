//! The engine's one error, with the variants a caller acts on, and the one
//! mapping from an outcome to the process exit code (README "Exit
//! codes"): 0 PASS or WARN, 1 FAIL, 2 usage or config error, 3 escalated,
//! 4 contested (candidates passed but disagree; a human picks). A run
//! whose journal does not check out against its hash chain is a FAIL.
//! The modules keep their own errors (`ConfigError`, `WorkspaceError`,
//! `StoreError` with `LogFileError`, `ProjectError`, `PipelineError`,
//! `FinalizeError`, `GcError`, `InitError`); this folds every one of them,
//! and the errors of the crates below (`rascal_core::Error`,
//! `rascal_exec::Error`, `rascal_scan::Error`), into what the CLI and the
//! TUI act on.

use crate::finalize::FinalizeError;
use crate::gc::GcError;
use crate::init::InitError;
use crate::pipeline::PipelineError;
use crate::store::logfile::LogFileError;
use crate::store::{ChainBroken, ProjectError, StoreError};
use rascal_core::config::ConfigError;
use rascal_exec::git::workspace::WorkspaceError;

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
    /// A program rascal needs (git, a runner, docker, bwrap, an agent's
    /// CLI) is not installed or not on the PATH: the message names it and
    /// how to get it.
    #[error("{0}")]
    ToolMissing(String),
    /// The sandbox or container an agent or a check runs in could not be
    /// made or entered.
    #[error("{0}")]
    Sandbox(String),
    /// An agent could not be started or its output not read.
    #[error("{0}")]
    Agent(String),
    /// A verification step could not be carried out (not: it found a
    /// problem — that is a verdict, not an error).
    #[error("{0}")]
    Verification(String),
    /// What a view or finalize needs of a run was removed (its change tree
    /// and workspace, by `rascal gc` or a finalize): nothing to show.
    #[error("{0}")]
    Gone(String),
    /// `gh` ran and could not open the pull request: the message carries
    /// the command to run by hand.
    #[error("{0}")]
    PullRequest(String),
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

impl From<LogFileError> for Error {
    fn from(e: LogFileError) -> Self {
        Error::Store(StoreError::Log(e))
    }
}

impl From<GcError> for Error {
    fn from(e: GcError) -> Self {
        match e {
            GcError::Store(e) => e.into(),
            GcError::Workspace(e) => Error::Workspace(e),
            // A run named on the command line that is not there.
            e @ GcError::NoSuchRun(_) => Error::Usage(e.to_string()),
        }
    }
}

impl From<InitError> for Error {
    /// Every init error is a usage or setup problem, said as is.
    fn from(e: InitError) -> Self {
        match e {
            InitError::Workspace(e) => Error::Workspace(e),
            e @ (InitError::Bare(_)
            | InitError::Exists(_)
            | InitError::Busy(_)
            | InitError::Git(_)
            | InitError::Io { .. }) => Error::Usage(e.to_string()),
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

impl From<rascal_exec::Error> for Error {
    /// What went wrong below the engine, by the kind the engine acts on;
    /// the message is the same.
    fn from(e: rascal_exec::Error) -> Self {
        use rascal_exec::Error as X;
        match e {
            X::ToolMissing { message, .. } => Error::ToolMissing(message),
            X::Workspace(e) => Error::Workspace(e),
            X::Agent(m) => Error::Agent(m),
            e @ X::Launch(_) => Error::Agent(e.to_string()),
            X::Sandbox(m) | X::Engine(m) | X::Network(m) | X::Copy(m) | X::Runtime(m) => {
                Error::Sandbox(m)
            }
            X::Config(m) | X::Notify(m) => Error::Usage(m),
            X::Holdout(m) | X::GitDir(m) => Error::Verification(m),
            e @ X::Run(_) => Error::Verification(e.to_string()),
        }
    }
}

impl From<rascal_core::Error> for Error {
    /// A `.rascal/` file that is not valid is a config error; anything
    /// else rascal-core refuses (a value, a decision) is the user's to fix.
    fn from(e: rascal_core::Error) -> Self {
        match e {
            rascal_core::Error::Config(e) => Error::Config(e),
            e => Error::Usage(e.to_string()),
        }
    }
}

impl From<rascal_scan::Error> for Error {
    /// A scanner that could not do its work: the check could not be
    /// carried out.
    fn from(e: rascal_scan::Error) -> Self {
        Error::Verification(e.to_string())
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
        Err(
            Error::Finalize(_)
            | Error::Tampered(_)
            | Error::Sandbox(_)
            | Error::Agent(_)
            | Error::Verification(_)
            | Error::Gone(_)
            | Error::PullRequest(_),
        ) => FAIL,
        Err(
            Error::Usage(_)
            | Error::Config(_)
            | Error::Workspace(_)
            | Error::Store(_)
            | Error::ToolMissing(_),
        ) => USAGE,
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
        // Something missing on the machine is the user's to fix (2); a
        // sandbox, agent or verification step that broke FAILs the run (1).
        assert_eq!(
            exit_code(&Err(Error::ToolMissing("no `bwrap`".into()))),
            USAGE
        );
        assert_eq!(
            exit_code(&Err(Error::Sandbox("bwrap: no /proc".into()))),
            FAIL
        );
        assert_eq!(exit_code(&Err(Error::Agent("claude exited".into()))), FAIL);
        assert_eq!(exit_code(&Err(Error::Verification("no base".into()))), FAIL);
        // A run's files gc removed, or a pull request gh refused: the step
        // could not be done (1).
        assert_eq!(
            exit_code(&Err(Error::Gone(crate::changes::GONE.into()))),
            FAIL
        );
        assert_eq!(
            exit_code(&Err(Error::PullRequest("gh failed".into()))),
            FAIL
        );
    }

    /// A view asking for a change whose tree and workspace are gone is told
    /// so as its own kind, not as text to parse.
    #[test]
    fn a_change_that_is_gone_is_its_own_error() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        let tree = repo.treebuilder(None).unwrap().write().unwrap();
        let tree = repo.find_tree(tree).unwrap();
        let base = repo
            .commit(Some("HEAD"), &sig, &sig, "base", &tree, &[])
            .unwrap();
        let c = crate::changes::Change {
            worktree: dir.path().join("no-such-workspace"),
            tree: None,
        };
        let e = crate::changes::diff_text(dir.path(), "r-1", &base.to_string(), &c).unwrap_err();
        assert!(matches!(e, Error::Gone(_)), "{e:?}");
        assert_eq!(exit_code(&Err(e)), FAIL);
    }

    /// gc's and init's errors fold in like the others: a missing run or
    /// an init that would overwrite is the user's to fix (2); a record
    /// that does not check out FAILs (1).
    #[test]
    fn gc_init_and_log_errors_fold_into_the_one_error() {
        let missing = Error::from(GcError::NoSuchRun("r-9".into()));
        assert!(matches!(missing, Error::Usage(_)));
        assert_eq!(exit_code(&Err(missing)), USAGE);
        let broken = ChainBroken {
            run: "r-1".into(),
            event: 2,
            why: "event 2 does not match its hash".into(),
        };
        let tampered = Error::from(GcError::Store(StoreError::Tampered(broken)));
        assert!(matches!(tampered, Error::Tampered(_)));
        assert_eq!(exit_code(&Err(tampered)), FAIL);
        let exists = Error::from(InitError::Exists(vec![".rascal/config.yaml".into()]));
        assert!(exists.to_string().starts_with("1 file already exists"));
        assert_eq!(exit_code(&Err(exists)), USAGE);
        let bare = Error::from(InitError::Bare("/srv/repo.git".into()));
        assert_eq!(exit_code(&Err(bare)), USAGE);
        let log = Error::from(LogFileError::Changed {
            path: "agent.log".into(),
            offset: 0,
            end: 9,
        });
        assert!(matches!(log, Error::Store(StoreError::Log(_))));
    }

    /// An error of a crate below keeps its kind (what the caller acts on,
    /// and so the exit code) and its message, word for word.
    #[test]
    fn lower_crates_errors_keep_their_kind_and_message() {
        let missing = Error::from(rascal_exec::Error::ToolMissing {
            tool: "bwrap",
            message: "bubblewrap (bwrap) is not installed".into(),
        });
        assert!(
            matches!(&missing, Error::ToolMissing(m) if m == "bubblewrap (bwrap) is not installed")
        );
        assert_eq!(exit_code(&Err(missing)), USAGE);
        let refused = Error::from(rascal_exec::Error::Sandbox("sandbox: empty command".into()));
        assert!(matches!(refused, Error::Sandbox(_)));
        assert_eq!(refused.to_string(), "sandbox: empty command");
        assert_eq!(exit_code(&Err(refused)), FAIL);
        let agent = Error::from(rascal_exec::Error::Agent("no JSON answer".into()));
        assert!(matches!(agent, Error::Agent(_)));
        let invalid = Error::from(rascal_core::Error::Invalid("invalid glob \"[\"".into()));
        assert!(matches!(invalid, Error::Usage(_)));
        assert_eq!(invalid.to_string(), "invalid glob \"[\"");
        let unread = Error::from(rascal_scan::Error::Results("no results".into()));
        assert!(matches!(unread, Error::Verification(_)));
        assert_eq!(exit_code(&Err(unread)), FAIL);
    }

    #[test]
    fn the_message_is_the_underlying_one() {
        let e = Error::from(FinalizeError::NoCandidate("c9".into()));
        assert_eq!(e.to_string(), "candidate `c9` is not in the run");
    }
}
