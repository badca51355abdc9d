//! Where an agent runs, behind one trait: start it with a spec, stream its
//! log lines, wait for its exit, cancel it. `process` is the embedded
//! default (a child process in the candidate's worktree).

pub mod process;

use crate::runner::{Exit, LogLine};
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Everything a launcher needs to run one candidate's agent.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    pub run: String,
    pub candidate: String,
    /// The candidate's worktree: the agent's working directory.
    pub workdir: PathBuf,
    pub argv: Vec<String>,
    /// The agent's complete (already scrubbed) environment.
    pub env: Vec<(String, String)>,
    pub stdin: Option<Vec<u8>>,
    pub timeout: Duration,
    /// For container launchers.
    pub image: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("{0}")]
    Start(String),
}

#[async_trait::async_trait]
pub trait Launcher: Send + Sync {
    fn name(&self) -> &'static str;

    /// Run the agent to completion (or timeout, or cancellation), sending
    /// each output line to `logs` as it arrives.
    async fn run(
        &self,
        spec: LaunchSpec,
        logs: mpsc::UnboundedSender<LogLine>,
        cancel: CancellationToken,
    ) -> Result<Exit, LaunchError>;
}
