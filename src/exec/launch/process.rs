//! The process launcher: the agent is a child process in its worktree, in its
//! own process group, with a scrubbed environment; timeout or cancel stops
//! the whole group (SIGTERM, then SIGKILL).

use super::{LaunchError, LaunchSpec, Launcher};
use crate::exec::runner::{self, CommandSpec, Env, Exit, LogLine};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Default, Clone)]
pub struct ProcessLauncher;

#[async_trait::async_trait]
impl Launcher for ProcessLauncher {
    fn name(&self) -> &'static str {
        "process"
    }

    async fn run(
        &self,
        spec: LaunchSpec,
        logs: mpsc::UnboundedSender<LogLine>,
        cancel: CancellationToken,
    ) -> Result<Exit, LaunchError> {
        let mut cmd = CommandSpec::new(spec.argv.clone(), spec.workdir.clone(), spec.timeout);
        cmd.env = Env::Only(spec.env.clone());
        cmd.stdin = spec.stdin.clone();
        let outcome = runner::run(&cmd, Some(logs), &cancel)
            .await
            .map_err(|e| LaunchError::Start(e.to_string()))?;
        Ok(outcome.exit)
    }
}
