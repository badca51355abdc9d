//! The launchers' side of network egress: give a candidate whose agent has
//! an allowlist its proxy, whose decisions become lines of the candidate's
//! log. Docker: on the run's internal network (on a reattach, at the port
//! the container already knows). Process: on a unix socket bound into the
//! bubblewrap sandbox, reached through rascal's forwarder inside it.

use super::LaunchSpec;
use crate::egress::network::{Attached, Candidate, DockerEgress};
use crate::egress::policy::Allowlist;
use crate::egress::proxy::{Proxy, Resolve, Rules, Sink, SystemResolver};
use crate::egress::NetworkSummary;
use crate::exec::confine::Confinement;
use crate::exec::runner::{LogLine, Stream};
use bollard::Docker;
use rascal_core::config::network::OnRefused;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The candidate's egress, or None when its agent has no allowlist.
pub(crate) async fn attach_for(
    egress: &DockerEgress,
    docker: &Docker,
    spec: &LaunchSpec,
    container: &str,
    logs: &crate::exec::runner::LogTx,
) -> crate::error::Result<Option<Attached>> {
    let Some(agent) = &spec.agent else {
        return Ok(None);
    };
    if !agent.network.as_ref().is_some_and(|n| n.is_allowlist()) {
        return Ok(None);
    }
    let port = match spec.resume {
        None => 0,
        Some(_) => proxy_port(docker, container)
            .await
            .ok_or_else(|| {
                crate::Error::Network(format!(
                    "the container of candidate `{}` has no egress proxy in its environment, so its network cannot be resumed\n  hint: run the task again",
                    spec.candidate
                ))
            })?,
    };
    let sink = sink(logs);
    let repo = spec.repo.to_string_lossy();
    let who = Candidate {
        run: &spec.run,
        candidate: &spec.candidate,
        repo: &repo,
    };
    egress.attach(docker, who, agent, port, sink).await
}

/// The port of the proxy a running container was given (`HTTPS_PROXY`).
async fn proxy_port(docker: &Docker, container: &str) -> Option<u16> {
    let env = docker
        .inspect_container(container, None)
        .await
        .ok()?
        .config?
        .env?;
    env.iter()
        .find_map(|e| e.strip_prefix("HTTPS_PROXY=http://"))
        .and_then(|a| a.rsplit_once(':'))
        .and_then(|(_, p)| p.trim_end_matches('/').parse().ok())
}

/// Where the forwarder listens inside a sandbox (its own loopback, so
/// every sandbox can use the same port).
pub(crate) const SANDBOX_PROXY_PORT: u16 = 3128;

/// One sandboxed candidate's egress while its agent runs: the proxy on a
/// unix socket in a directory of its own, bound into the sandbox.
pub(crate) struct SandboxAttached {
    proxy: Proxy,
    dir: tempfile::TempDir,
    allow: Vec<String>,
    on_refused: OnRefused,
}

impl SandboxAttached {
    fn socket(&self) -> PathBuf {
        self.dir.path().join("proxy.sock")
    }

    /// The agent's command wrapped in the forwarder, its environment with
    /// the proxy variables, and the confinement that shows the socket (and
    /// the agent's own program, which is no longer argv[0]).
    pub(crate) fn wrap(
        &self,
        forwarder: &Path,
        argv: &[String],
        env: Vec<(String, String)>,
        confine: &Confinement,
    ) -> (Vec<String>, Vec<(String, String)>, Confinement) {
        let mut wrapped = vec![
            forwarder.to_string_lossy().into_owned(),
            FORWARD_SUBCOMMAND.into(),
            self.socket().to_string_lossy().into_owned(),
            SANDBOX_PROXY_PORT.to_string(),
            "--".into(),
        ];
        wrapped.extend(argv.iter().cloned());
        let url = format!("http://127.0.0.1:{SANDBOX_PROXY_PORT}");
        let mut env: Vec<(String, String)> = env
            .into_iter()
            .filter(|(k, _)| {
                !PROXY_VARS.contains(&k.as_str()) && k != "NO_PROXY" && k != "no_proxy"
            })
            .collect();
        for k in PROXY_VARS {
            env.push((k.to_string(), url.clone()));
        }
        env.push(("NO_PROXY".into(), "localhost,127.0.0.1,::1".into()));
        env.push(("no_proxy".into(), "localhost,127.0.0.1,::1".into()));
        let mut confine = confine.clone();
        confine.network = false;
        confine.read_only.push(self.dir.path().to_path_buf());
        let path = env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.as_str());
        if let Some(p) = argv
            .first()
            .and_then(|a| crate::exec::confine::program_path(a, path))
        {
            confine.read_only.push(p);
        }
        (wrapped, env, confine)
    }

    /// Stop the proxy; what it did.
    pub(crate) fn close(self) -> NetworkSummary {
        self.proxy.stop();
        self.summary()
    }

    fn summary(&self) -> NetworkSummary {
        // The sandbox has no way to the host but the proxy's socket.
        self.proxy
            .counts()
            .summary(&self.allow, self.on_refused, None)
    }
}

/// The hidden subcommand that forwards inside the sandbox.
pub(crate) const FORWARD_SUBCOMMAND: &str = "__egress-forward";

const PROXY_VARS: &[&str] = &[
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "ALL_PROXY",
    "https_proxy",
    "http_proxy",
    "all_proxy",
];

/// The process launcher's egress: its resolver, the forwarder program
/// (rascal itself), and what each candidate's proxy did.
pub struct ProcessEgress {
    resolver: Arc<dyn Resolve>,
    forwarder: Option<PathBuf>,
    summaries: std::sync::Mutex<HashMap<(String, String), NetworkSummary>>,
}

impl Default for ProcessEgress {
    fn default() -> Self {
        ProcessEgress {
            resolver: Arc::new(SystemResolver),
            forwarder: None,
            summaries: Default::default(),
        }
    }
}

impl ProcessEgress {
    /// With `resolver` and `forwarder` (the `rascal` binary) instead of the
    /// system resolver and the running executable (tests).
    pub fn new(resolver: Arc<dyn Resolve>, forwarder: PathBuf) -> Self {
        ProcessEgress {
            resolver,
            forwarder: Some(forwarder),
            summaries: Default::default(),
        }
    }

    /// The rascal binary that forwards inside the sandbox.
    pub(crate) fn forwarder(&self) -> crate::error::Result<PathBuf> {
        match &self.forwarder {
            Some(f) => Ok(f.clone()),
            None => std::env::current_exe().map_err(|e| {
                crate::Error::Network(format!(
                    "cannot find rascal's own executable for the egress forwarder: {e}"
                ))
            }),
        }
    }

    /// The candidate's proxy, or None when its agent has no allowlist. An
    /// allowlist without a sandbox cannot be enforced, so it is refused.
    pub(crate) fn attach(
        &self,
        spec: &LaunchSpec,
        logs: &crate::exec::runner::LogTx,
    ) -> crate::error::Result<Option<SandboxAttached>> {
        match &spec.agent {
            Some(agent) => self.attach_agent(agent, &spec.candidate, spec.confine.is_some(), logs),
            None => Ok(None),
        }
    }

    /// As [`ProcessEgress::attach`], for any sandboxed command of `agent`
    /// (a reviewer or judge asked by rascal); `who` names it in messages.
    pub(crate) fn attach_agent(
        &self,
        agent: &rascal_core::config::AgentConfig,
        who: &str,
        sandboxed: bool,
        logs: &crate::exec::runner::LogTx,
    ) -> crate::error::Result<Option<SandboxAttached>> {
        let Some(setting) = &agent.network else {
            return Ok(None);
        };
        let Some((allow, on_refused)) = setting.allowlist(agent.runtime)? else {
            return Ok(None);
        };
        if !sandboxed {
            return Err(crate::Error::Sandbox(format!(
                "the agent of `{who}` has a network allowlist, which the process launcher enforces only inside its bubblewrap sandbox, and this agent runs unsandboxed\n  hint: remove `sandbox: none`, install bubblewrap, or use `--launcher docker`"
            )));
        }
        let dir = tempfile::Builder::new()
            .prefix("rascal-egress-")
            .tempdir()
            .map_err(|e| {
                crate::Error::Network(format!("creating the egress socket directory: {e}"))
            })?;
        let rules = Rules {
            allow: Allowlist::new(&allow)?,
            resolver: self.resolver.clone(),
            sink: sink(logs),
            judge_within: crate::egress::proxy::JUDGE_WITHIN,
        };
        let socket = dir.path().join("proxy.sock");
        let proxy = Proxy::bind_unix(&socket, rules).map_err(|e| {
            crate::Error::Network(format!(
                "starting the egress proxy at {}: {e}",
                socket.display()
            ))
        })?;
        Ok(Some(SandboxAttached {
            proxy,
            dir,
            allow,
            on_refused,
        }))
    }

    /// The agent ended: stop its proxy, keep what it did.
    pub(crate) fn finish(&self, run: &str, candidate: &str, att: SandboxAttached) {
        let summary = att.close();
        if let Ok(mut s) = self.summaries.lock() {
            s.insert((run.to_string(), candidate.to_string()), summary);
        }
    }

    pub(crate) fn summary(&self, run: &str, candidate: &str) -> Option<NetworkSummary> {
        self.summaries
            .lock()
            .ok()?
            .get(&(run.to_string(), candidate.to_string()))
            .cloned()
    }
}

/// Decisions become lines of the candidate's log.
fn sink(logs: &crate::exec::runner::LogTx) -> Sink {
    let tx = logs.clone();
    Arc::new(move |text| {
        let line = vec![LogLine {
            stream: Stream::Stderr,
            text,
        }];
        // The agent's own output may have filled the queue: the decision
        // waits its turn rather than being dropped.
        if let Err(tokio::sync::mpsc::error::TrySendError::Full(line)) = tx.try_send(line) {
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                let tx = tx.clone();
                rt.spawn(async move {
                    let _ = tx.send(line).await;
                });
            }
        }
    })
}
