//! The crate's one error type: what went wrong where rascal touches the
//! system, by the kind a caller acts on (a tool to install, a sandbox that
//! cannot be built, an agent that cannot be prepared, git, a command or a
//! launch that failed).

use crate::exec::launch::LaunchError;
use crate::exec::runner::RunError;
use crate::git::repo::WorkspaceError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A program rascal needs is not installed (bubblewrap, docker,
    /// kubectl…): the message says how to install it.
    #[error("{message}")]
    ToolMissing { tool: &'static str, message: String },
    /// The sandbox cannot be built here, or refuses a policy.
    #[error("{0}")]
    Sandbox(String),
    /// An agent's invocation cannot be prepared (an unknown scenario, an
    /// empty command, its files).
    #[error("{0}")]
    Agent(String),
    /// No container engine or cluster answers: the Docker engine is not
    /// running or not reachable, the kubeconfig or its context is wrong,
    /// the API server does not answer, or the engine refused a request
    /// about a container, an image or a Job.
    #[error("{0}")]
    Engine(String),
    /// A run's egress network cannot be set up or taken down: its Docker
    /// network, its firewall rules, the forwarder the proxy listens
    /// through.
    #[error("{0}")]
    Network(String),
    /// A copy of a change cannot be made (written from its tree for a
    /// check) or a workspace cannot be moved into or out of a container:
    /// packing, uploading, unpacking or putting its files in place.
    #[error("{0}")]
    Copy(String),
    /// An egress setting rascal cannot use as written: an allowlist entry,
    /// or a target a request names.
    #[error("{0}")]
    Config(String),
    /// A task's holdout cannot be resolved: an entry is not a path inside
    /// the repository or names no file at the base commit, or the files it
    /// names cannot be read.
    #[error("{0}")]
    Holdout(String),
    /// A workspace's `.git` is not the directory rascal created (the agent
    /// replaced it with a file or a link) or cannot be read: nothing is
    /// done with that workspace.
    #[error("{0}")]
    GitDir(String),
    /// The user's `notify:` command failed (could not start, timed out,
    /// exited non-zero): shown as one line, never the run's failure.
    #[error("{0}")]
    Notify(String),
    /// The async runtime could not be started.
    #[error("{0}")]
    Runtime(String),
    /// The user's repository, a workspace or git.
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// A command could not be run.
    #[error(transparent)]
    Run(#[from] RunError),
    /// An agent could not be launched.
    #[error(transparent)]
    Launch(#[from] LaunchError),
}

pub(crate) type Result<T> = std::result::Result<T, Error>;

impl From<rascal_core::Error> for Error {
    /// A setting rascal-core refused (an allowlist entry, an egress rule):
    /// said as is.
    fn from(e: rascal_core::Error) -> Self {
        Error::Config(e.to_string())
    }
}

impl Error {
    /// The same error again (for answers kept for the process, such as
    /// whether bubblewrap works here): the kinds a cached answer can hold
    /// keep their kind, others keep their message.
    pub(crate) fn again(&self) -> Error {
        match self {
            Error::ToolMissing { tool, message } => Error::ToolMissing {
                tool,
                message: message.clone(),
            },
            Error::Sandbox(m) => Error::Sandbox(m.clone()),
            Error::Agent(m) => Error::Agent(m.clone()),
            Error::Engine(m) => Error::Engine(m.clone()),
            other => Error::Sandbox(other.to_string()),
        }
    }
}
