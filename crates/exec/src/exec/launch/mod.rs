//! Where an agent runs, behind one trait: start it with a spec, stream its
//! log lines, wait for its exit, cancel it. `process` is the embedded
//! default (a child process in the candidate's worktree).

pub mod copy;
pub mod docker;
pub mod egress;
pub(crate) mod engine;
pub mod kubernetes;
pub(crate) mod lines;
pub mod process;

use crate::exec::runner::Exit;
use std::path::PathBuf;
use std::time::Duration;
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
    /// The agent's config (container settings, env names), for container launchers.
    pub agent: Option<rascal_core::config::AgentConfig>,
    /// The repository's work dir (container label `rascal.repo`).
    pub repo: PathBuf,
    /// Reattach to the running agent instead of starting it.
    pub resume: Option<Resume>,
    /// Process launcher: the bubblewrap confinement (None = unsandboxed,
    /// which the run marks UNSANDBOXED).
    pub confine: Option<crate::exec::confine::Confinement>,
    /// For launchers that upload the workspace (docker copy mode,
    /// Kubernetes): the tree to send, read from git objects rascal wrote
    /// and verified, never through the workspace's paths (an agent may
    /// have turned them into links). None: the directory is rascal's own
    /// copy (a check's), uploaded as it is, links never followed.
    pub upload: Option<Upload>,
}

/// The files an agent starts an attempt from: the workspace's base tree on
/// the first attempt, the last attempt's change tree after it.
#[derive(Debug, Clone)]
pub struct Upload {
    /// The user's repository (the base's objects are read from it).
    pub origin: PathBuf,
    pub tree: git2::Oid,
    /// Paths never sent (the held-out tests: a change tree keeps the
    /// base's copy of them).
    pub holdout: std::sync::Arc<crate::git::holdout::Holdout>,
}

/// Where a reattach picks up: output lines of each stream already journalled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resume {
    pub stdout_lines: u64,
    pub stderr_lines: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("{0}")]
    Start(String),
}

/// Wall-clock milliseconds (container deadlines are kept in labels).
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// An agent that could not be started, and why (a message or an error).
pub(crate) fn err(e: impl std::fmt::Display) -> LaunchError {
    LaunchError::Start(e.to_string())
}

#[async_trait::async_trait]
pub trait Launcher: Send + Sync {
    fn name(&self) -> &'static str;

    /// Run the agent to completion (or timeout, or cancellation), sending
    /// each output line to `logs` as it arrives.
    async fn run(
        &self,
        spec: LaunchSpec,
        logs: crate::exec::runner::LogTx,
        cancel: CancellationToken,
    ) -> Result<Exit, LaunchError>;

    /// What the candidate's network was and what its egress proxy did in
    /// its last attempt (None: no proxy ran).
    fn network(&self, _run: &str, _candidate: &str) -> Option<crate::egress::NetworkSummary> {
        None
    }

    /// Called once the agent's report has landed: containers are removed
    /// only after their logs and exit code are recorded.
    async fn release(
        &self,
        _run: &str,
        _candidate: &str,
        _agent: &rascal_core::config::AgentConfig,
    ) {
    }

    /// Ask ahead for what these agents' launches will need (an engine's
    /// connection, their images), so the first launch does not wait for
    /// it. Best effort: a launch asks again for what this could not get.
    async fn warm(&self, _agents: &[rascal_core::config::AgentConfig]) {}

    /// Wait for what `release` left running off the critical path
    /// (containers being removed): called once the run's verdict is out,
    /// before rascal exits.
    async fn settle(&self) {}
}
