//! The process launcher: the agent is a child process in its workspace, in
//! its own process group, with a scrubbed environment, confined by
//! bubblewrap (its own PID namespace: every descendant dies with it, and
//! with rascal); timeout or cancel stops the whole group (SIGTERM, then
//! SIGKILL). Without a confinement (`sandbox: none`) it runs as the user.

use super::{LaunchError, LaunchSpec, Launcher};
use crate::exec::runner::{self, CommandSpec, Env, Exit};
use tokio_util::sync::CancellationToken;

#[derive(Default)]
pub struct ProcessLauncher {
    /// Candidates' egress proxies (agents with a network allowlist).
    egress: super::egress::ProcessEgress,
}

impl ProcessLauncher {
    /// With the egress proxy's resolver and forwarder program given
    /// (tests: names pinned to loopback, the built `rascal` binary).
    pub fn with_egress(egress: super::egress::ProcessEgress) -> Self {
        ProcessLauncher { egress }
    }
}

#[async_trait::async_trait]
impl Launcher for ProcessLauncher {
    fn name(&self) -> &'static str {
        "process"
    }

    fn network(&self, run: &str, candidate: &str) -> Option<crate::egress::NetworkSummary> {
        self.egress.summary(run, candidate)
    }

    async fn run(
        &self,
        spec: LaunchSpec,
        logs: crate::exec::runner::LogTx,
        cancel: CancellationToken,
    ) -> Result<Exit, LaunchError> {
        let mut cmd = CommandSpec::new(spec.argv.clone(), spec.workdir.clone(), spec.timeout);
        cmd.env = Env::Only(spec.env.clone());
        let egress = self.egress.attach(&spec, &logs).map_err(super::err)?;
        if let Some(confine) = &spec.confine {
            let path = spec
                .env
                .iter()
                .find(|(k, _)| k == "PATH")
                .map(|(_, v)| v.as_str());
            // Inside the sandbox a missing program is only bwrap's exit 1:
            // say what the runner would say outside it.
            let program = spec.argv.first().cloned().unwrap_or_default();
            let local = !program.starts_with('/')
                && program.contains('/')
                && spec.workdir.join(&program).exists();
            if !local && crate::exec::confine::program_path(&program, path).is_none() {
                return Err(LaunchError::Start(
                    runner::RunError::Spawn {
                        hint: format!("install `{program}` or fix the command in .rascal/config.yaml (it must be on PATH or an existing path)"),
                        program,
                        source: std::io::Error::from(std::io::ErrorKind::NotFound),
                    }
                    .to_string(),
                ));
            }
            let (argv, env) = match &egress {
                Some(a) => {
                    let forwarder = self.egress.forwarder().map_err(super::err)?;
                    let (argv, env, confine) =
                        a.wrap(&forwarder, &spec.argv, spec.env.clone(), confine);
                    confine.command(&argv, env)
                }
                None => confine.command(&spec.argv, spec.env.clone()),
            }
            .map_err(super::err)?;
            cmd.argv = argv;
            cmd.env = Env::Only(env);
            cmd.limits = Some(confine.limits);
        }
        cmd.stdin = spec.stdin.clone();
        let outcome = runner::run(&cmd, Some(logs), &cancel).await;
        if let Some(a) = egress {
            self.egress.finish(&spec.run, &spec.candidate, a);
        }
        let outcome = outcome.map_err(|e| LaunchError::Start(e.to_string()))?;
        let mut exit = outcome.exit;
        if spec.confine.is_some() {
            crate::exec::confine::signal_from_status(&mut exit);
        }
        Ok(exit)
    }
}
