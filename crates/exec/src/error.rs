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

pub type Result<T> = std::result::Result<T, Error>;

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
            other => Error::Sandbox(other.to_string()),
        }
    }
}

/// Callers that still speak `Result<_, String>` (other crates' message
/// plumbing, the binary's edge) keep using `?`.
impl From<Error> for String {
    fn from(e: Error) -> String {
        e.to_string()
    }
}
