//! The docker launcher: one hardened container per candidate, through the
//! engine API (bollard; unix socket by default, `DOCKER_HOST` honoured, API
//! version negotiated so Docker 20.10 engines answer). Output is attached
//! before the container starts (nothing is missed), demultiplexed into
//! tagged lines; timeout and cancel stop the container with a grace period;
//! a later rascal finds a container by its labels and resumes its logs.

#![allow(unsafe_code)]

use super::lines::Lines;
use super::{copy, err, now_ms, LaunchError, LaunchSpec, Launcher, Resume};
use crate::config::container::{
    ByteSize, DEFAULT_CPUS, DEFAULT_MEMORY, DEFAULT_NETWORK, DEFAULT_PIDS,
};
use crate::exec::runner::{Exit, LogLine, Stream};
use bollard::container::LogOutput;
use bollard::models::{ContainerCreateBody, ContainerSummary, HostConfig};
use bollard::query_parameters::{
    AttachContainerOptionsBuilder, CreateContainerOptionsBuilder, CreateImageOptionsBuilder,
    ListContainersOptionsBuilder, LogsOptionsBuilder, RemoveContainerOptionsBuilder,
    StopContainerOptionsBuilder,
};
use bollard::Docker;
use futures::{Stream as FStream, StreamExt};
use std::collections::HashMap;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

pub const LABEL_RUN: &str = "rascal.run";
pub const LABEL_CANDIDATE: &str = "rascal.candidate";
pub const LABEL_REPO: &str = "rascal.repo";
pub const LABEL_VERSION: &str = "rascal.version";
/// Unix milliseconds at which the agent times out (for a reattach).
pub const LABEL_DEADLINE: &str = "rascal.deadline";
/// The agent's timeout in milliseconds (for a reattach's messages).
pub const LABEL_TIMEOUT: &str = "rascal.timeout";

/// Where the candidate's worktree is mounted (the working directory).
pub const WORKSPACE: &str = "/workspace";
/// Where the instruction file is mounted, read-only.
pub const INSTRUCTION: &str = "/rascal/instruction.md";
/// Where a planned run's approved criteria are (`$RASCAL_CRITERIA_FILE`):
/// bound in bind mode, uploaded into the volume in copy mode.
pub const CRITERIA: &str = "/rascal/criteria.json";

/// Where the author's artifacts directory is mounted, writable.
pub const ARTIFACTS: &str = "/rascal/artifacts";
/// Host variables every process agent gets describe the host, so a
/// container does not get them (unless the agent names them in `env:`);
/// `HOME` is set to the writable `/tmp`.
const HOST_ONLY_ENV: &[&str] = crate::exec::env::BASE_ENV;
/// Seconds between SIGTERM and SIGKILL on timeout or cancel.
const GRACE_SECS: i32 = 3;
/// Lines longer than this are cut.
const PULL_TIMEOUT: Duration = Duration::from_secs(600);

pub use super::engine::engine_address;

/// Connect to the engine and negotiate the API version (an engine older
/// than the client refuses the client's default version).
pub async fn connect() -> Result<Docker, String> {
    let addr = engine_address();
    let unreachable = |e: &dyn std::fmt::Display| {
        format!(
            "no Docker engine answered at {addr}: {e}\n  hint: start Docker (e.g. `sudo systemctl start docker` or `dockerd`), set DOCKER_HOST to a reachable engine, or run with `--launcher process`"
        )
    };
    let docker = Docker::connect_with_defaults().map_err(|e| unreachable(&e))?;
    match tokio::time::timeout(Duration::from_secs(10), docker.negotiate_version()).await {
        Ok(Ok(d)) => Ok(d),
        Ok(Err(e)) => Err(unreachable(&e)),
        Err(_) => Err(unreachable(&"no answer within 10s")),
    }
}

/// A container name Docker accepts: `rascal-<run>-<candidate>`.
pub fn container_name(run: &str, candidate: &str) -> String {
    let clean: String = format!("rascal-{run}-{candidate}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    clean
}

/// Rascal's containers on the engine (all states), optionally of one run.
pub async fn list_rascal_containers(
    docker: &Docker,
    run: Option<&str>,
) -> Result<Vec<ContainerSummary>, String> {
    let label = match run {
        Some(r) => format!("{LABEL_RUN}={r}"),
        None => LABEL_RUN.to_string(),
    };
    let filters = HashMap::from([("label".to_string(), vec![label])]);
    docker
        .list_containers(Some(
            ListContainersOptionsBuilder::default()
                .all(true)
                .filters(&filters)
                .build(),
        ))
        .await
        .map_err(|e| format!("listing containers on {}: {e}", engine_address()))
}

/// Force-remove a container (and its anonymous volumes).
pub async fn remove(docker: &Docker, id: &str) -> Result<(), String> {
    docker
        .remove_container(
            id,
            Some(
                RemoveContainerOptionsBuilder::default()
                    .force(true)
                    .v(true)
                    .build(),
            ),
        )
        .await
        .map_err(|e| format!("removing container {id}: {e}"))
}

/// The docker launcher. Connects on first use, once per run.
#[derive(Default)]
pub struct DockerLauncher {
    engine: tokio::sync::OnceCell<Result<Docker, String>>,
    /// Images found on the engine, each inspected (or pulled) once per
    /// run however many candidates use it.
    images: std::sync::Mutex<HashMap<String, std::sync::Arc<tokio::sync::OnceCell<()>>>>,
    /// Each candidate's container (by container name → id), for `release`.
    created: std::sync::Mutex<HashMap<String, String>>,
    /// Containers being removed off the critical path (by container
    /// name): a retry of the same candidate waits for its name to be
    /// free, and `settle` for all of them.
    removing: std::sync::Mutex<HashMap<String, tokio::task::JoinHandle<()>>>,
    /// Each run's internal network and its candidates' egress proxies.
    egress: crate::egress::network::DockerEgress,
    /// Copy mode: leave the tree in the container (a check's files are
    /// read back one by one, see `copy::read_files`).
    leave_tree: bool,
}

impl DockerLauncher {
    pub fn new() -> Self {
        Self::default()
    }

    /// With the egress proxy resolving names through `resolver` (tests pin
    /// names to loopback; the default is the system resolver).
    pub fn with_resolver(resolver: std::sync::Arc<dyn crate::egress::proxy::Resolve>) -> Self {
        DockerLauncher {
            egress: crate::egress::network::DockerEgress::with_resolver(resolver),
            ..Self::default()
        }
    }

    /// With this egress state (tests: a pinned resolver, a host without
    /// a firewall).
    pub fn with_egress(egress: crate::egress::network::DockerEgress) -> Self {
        DockerLauncher {
            egress,
            ..Self::default()
        }
    }

    /// For verification commands: in copy mode the tree is not brought back.
    pub fn for_checks() -> Self {
        DockerLauncher {
            leave_tree: true,
            ..Self::default()
        }
    }

    async fn engine(&self) -> Result<Docker, LaunchError> {
        self.engine
            .get_or_init(connect)
            .await
            .clone()
            .map_err(LaunchError::Start)
    }

    /// Make sure the candidate's image is on the engine: asked once per
    /// run and image (candidates starting together wait for one answer;
    /// a failure is not remembered, so the next candidate asks again).
    async fn image_once(&self, docker: &Docker, spec: &LaunchSpec) -> Result<(), LaunchError> {
        let image = image_of(spec)?;
        let cell = self
            .images
            .lock()
            .map_err(|_| err("the image cache is poisoned"))?
            .entry(image.clone())
            .or_default()
            .clone();
        cell.get_or_try_init(|| ensure_image(docker, spec, &image))
            .await
            .map(|_| ())
    }

    /// Wait until an earlier container of this name is removed (a retry
    /// reuses the name).
    async fn name_free(&self, name: &str) {
        let pending = self.removing.lock().ok().and_then(|mut m| m.remove(name));
        if let Some(h) = pending {
            let _ = h.await;
        }
    }

    /// Remove the candidate's container in the background: the verdict
    /// does not wait for the engine to delete it (`settle` does).
    fn remove_later(&self, docker: &Docker, run: &str, candidate: &str) {
        let name = container_name(run, candidate);
        let known = self.created.lock().ok().and_then(|mut m| m.remove(&name));
        let docker = docker.clone();
        let (run, candidate) = (run.to_string(), candidate.to_string());
        let mut removing = self.removing.lock().unwrap_or_else(|e| e.into_inner());
        // A removal of the same name still going is waited for, never
        // dropped: every container this launcher made is removed.
        let earlier = removing.remove(&name);
        let task = tokio::spawn(async move {
            if let Some(e) = earlier {
                let _ = e.await;
            }
            match known {
                Some(id) => {
                    let _ = remove(&docker, &id).await;
                }
                None => remove_candidate(&docker, &run, &candidate).await,
            }
        });
        removing.insert(name, task);
    }
}

/// Remove every container of one candidate of a run, found by its labels.
async fn remove_candidate(docker: &Docker, run: &str, candidate: &str) {
    if let Ok(list) = list_rascal_containers(docker, Some(run)).await {
        for c in list {
            let mine = c.labels.as_ref().and_then(|l| l.get(LABEL_CANDIDATE))
                == Some(&candidate.to_string());
            if let (true, Some(id)) = (mine, c.id) {
                let _ = remove(docker, &id).await;
            }
        }
    }
}

type Output = Pin<Box<dyn FStream<Item = Result<LogOutput, bollard::errors::Error>> + Send>>;

#[async_trait::async_trait]
impl Launcher for DockerLauncher {
    fn name(&self) -> &'static str {
        "docker"
    }

    async fn run(
        &self,
        spec: LaunchSpec,
        logs: crate::exec::runner::LogTx,
        cancel: CancellationToken,
    ) -> Result<Exit, LaunchError> {
        let docker = self.engine().await?;
        let started = Instant::now();
        let name = container_name(&spec.run, &spec.candidate);
        let mut egress = super::egress::attach_for(&self.egress, &docker, &spec, &name, &logs)
            .await
            .map_err(err)?;
        let Running {
            id,
            deadline,
            timeout,
            output,
            skip,
        } = match spec.resume {
            None => {
                self.image_once(&docker, &spec).await?;
                self.name_free(&name).await;
                let (id, output) = start(&docker, &spec, &name, egress.as_ref(), &logs).await?;
                if let Ok(mut m) = self.created.lock() {
                    m.insert(name.clone(), id.clone());
                }
                Running {
                    id,
                    deadline: now_ms() + spec.timeout.as_millis() as u64,
                    timeout: spec.timeout,
                    output,
                    skip: Resume::default(),
                }
            }
            Some(resume) => reattach(&docker, &spec, &name, resume).await?,
        };

        if let Some(a) = &mut egress {
            if let Err(e) = self.egress.started(&docker, a, &id).await {
                let _ = logs
                    .send(vec![LogLine {
                        stream: Stream::Stderr,
                        text: format!(
                            "{} {e}: the agent has no network",
                            crate::egress::proxy::LOG_PREFIX
                        ),
                    }])
                    .await;
            }
        }
        let copy_log = logs.clone();
        let reader = tokio::spawn(read_output(output, logs, skip));
        let remaining = Duration::from_millis(deadline.saturating_sub(now_ms()));
        let mut exit = Exit::default();
        let ended = wait_for_end(&docker, &id, remaining, &cancel, &mut exit).await;
        // The output ends when the container does; bounded in case the
        // engine keeps the stream open.
        let _ = tokio::time::timeout(Duration::from_secs(5), reader).await;
        if let Some(a) = egress {
            self.egress.finish(&spec.run, &spec.candidate, a).await;
        }
        exit.duration_ms = started.elapsed().as_millis() as u64;
        if exit.timed_out {
            exit.failure = Some(format!(
                "timed out after {}",
                crate::exec::runner::human(timeout)
            ));
        }

        let engine_lost = ended.engine_lost.clone();
        let inspected = match plain_exit(&ended, &exit) {
            // It exited on its own: the wait said how; no need to ask.
            Some(code) => Ok(bollard::models::ContainerState {
                running: Some(false),
                exit_code: Some(code),
                oom_killed: Some(false),
                ..Default::default()
            }),
            None => docker
                .inspect_container(&id, None)
                .await
                .map(|info| info.state.unwrap_or_default()),
        };
        let mut state = match inspected {
            Ok(state) => state,
            Err(e) => {
                return Err(err(format!(
                    "lost the Docker engine at {} while candidate `{}` ran: {}\n  hint: once the engine is back, `rascal attach {}` records the result if the container survived",
                    engine_address(),
                    spec.candidate,
                    engine_lost.unwrap_or_else(|| e.to_string()),
                    spec.run
                )))
            }
        };
        if state.running == Some(true) && !exit.timed_out && !exit.cancelled {
            return Err(err(format!(
                "lost contact with container {name} on {} while it was still running: {}\n  hint: `rascal attach {}` resumes its logs and records its result",
                engine_address(),
                engine_lost.unwrap_or_default(),
                spec.run
            )));
        }
        // Killed (137) and not by rascal: the engine records an OOM kill
        // when its event arrives, which under load can be after the exit.
        // Ask again for a moment before calling it a plain kill.
        if state.exit_code == Some(137)
            && state.oom_killed != Some(true)
            && !exit.timed_out
            && !exit.cancelled
        {
            for _ in 0..OOM_ASKS {
                tokio::time::sleep(Duration::from_millis(100)).await;
                match docker.inspect_container(&id, None).await {
                    Ok(info) if info.state.as_ref().and_then(|s| s.oom_killed) == Some(true) => {
                        state.oom_killed = Some(true);
                        break;
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
        }
        exit.code = state.exit_code.map(|c| c as i32);
        if copy::wanted(spec.agent.as_ref()) && !self.leave_tree && !exit.cancelled {
            bring_back(&docker, &spec, (&id, &name), &copy_log).await?;
        }
        if !exit.timed_out && !exit.cancelled {
            let limit = memory_limit(&spec);
            let why = match (state.oom_killed, exit.code) {
                (Some(true), code) => Some(format!(
                    "was OOM-killed: it ran out of its {} memory limit (exit {})",
                    limit.human(),
                    code.unwrap_or(137)
                )),
                // SIGKILLed, not by rascal, and the engine never said why.
                (_, Some(137)) => Some(format!(
                    "was killed (SIGKILL, exit 137) and the engine did not say why: most likely OOM-killed, out of its {} memory limit",
                    limit.human()
                )),
                _ => None,
            };
            if let Some(why) = why {
                exit.failure = Some(format!(
                    "{why}\n  hint: raise `memory:` of agent `{}` in .rascal/config.yaml",
                    spec.agent_name()
                ));
            }
        }
        Ok(exit)
    }

    fn network(&self, run: &str, candidate: &str) -> Option<crate::egress::NetworkSummary> {
        self.egress.summary(run, candidate)
    }

    async fn release(&self, run: &str, candidate: &str, agent: &crate::config::AgentConfig) {
        let Ok(docker) = self.engine().await else {
            return;
        };
        if agent.keep_containers {
            self.egress.release(&docker, run, candidate).await;
            return;
        }
        if agent.network.as_ref().is_some_and(|n| n.is_allowlist()) {
            // The run's network goes once its last container is gone: in
            // order, here.
            self.name_free(&container_name(run, candidate)).await;
            remove_candidate(&docker, run, candidate).await;
            self.egress.release(&docker, run, candidate).await;
        } else {
            self.remove_later(&docker, run, candidate);
        }
    }

    async fn warm(&self, agents: &[crate::config::AgentConfig]) {
        let Ok(docker) = self.engine().await else {
            return;
        };
        let images: std::collections::BTreeSet<&String> =
            agents.iter().filter_map(|a| a.image.as_ref()).collect();
        for image in images {
            if let Ok(true) = has_image(&docker, image).await {
                if let Ok(mut m) = self.images.lock() {
                    let _ = m.entry(image.clone()).or_default().set(());
                }
            }
        }
    }

    async fn settle(&self) {
        let pending: Vec<_> = self
            .removing
            .lock()
            .map(|mut m| m.drain().map(|(_, h)| h).collect())
            .unwrap_or_default();
        for h in pending {
            let _ = h.await;
        }
    }
}

/// A container the agent runs in: its id, its deadline (ms since the
/// epoch) and timeout, its output, and how much of it was already read.
struct Running {
    id: String,
    deadline: u64,
    timeout: Duration,
    output: Output,
    skip: Resume,
}

/// A reattach: the candidate's container as the engine still has it, with
/// the original deadline and timeout (not this rascal's) and its logs.
async fn reattach(
    docker: &Docker,
    spec: &LaunchSpec,
    name: &str,
    resume: Resume,
) -> Result<Running, LaunchError> {
    let found = list_rascal_containers(docker, Some(&spec.run))
        .await
        .map_err(err)?
        .into_iter()
        .find(|c| {
            c.labels.as_ref().and_then(|l| l.get(LABEL_CANDIDATE)) == Some(&spec.candidate)
        })
        .ok_or_else(|| {
            err(format!(
                "the container of candidate `{}` (run {}) is gone from the engine at {}; its result was not recorded\n  hint: it was removed (or the engine was reset) while rascal was not running; run the task again",
                spec.candidate,
                spec.run,
                engine_address()
            ))
        })?;
    if found.state.map(|s| s.to_string()).as_deref() == Some("created") {
        return Err(err(format!(
            "the container of candidate `{}` (run {}) was created but never started: rascal died in between\n  hint: run the task again; `rascal doctor --remove` cleans up once the run is gone",
            spec.candidate, spec.run
        )));
    }
    let id = found.id.unwrap_or(name.to_string());
    // The original deadline and timeout, not this rascal's.
    let label = |k: &str| -> Option<u64> { found.labels.as_ref()?.get(k)?.parse().ok() };
    let deadline =
        label(LABEL_DEADLINE).unwrap_or_else(|| now_ms() + spec.timeout.as_millis() as u64);
    let timeout = label(LABEL_TIMEOUT)
        .map(Duration::from_millis)
        .unwrap_or(spec.timeout);
    let opts = LogsOptionsBuilder::default()
        .follow(true)
        .stdout(true)
        .stderr(true)
        .build();
    let output: Output = Box::pin(docker.logs(&id, Some(opts)));
    Ok(Running {
        id,
        deadline,
        timeout,
        output,
        skip: resume,
    })
}

/// Wait for the container to end, at most `remaining`; on a timeout or a
/// cancel (marked in `exit`) stop it: SIGTERM, then SIGKILL after the
/// grace period. Some(why) when contact with the engine was lost.
async fn wait_for_end(
    docker: &Docker,
    id: &str,
    remaining: Duration,
    cancel: &CancellationToken,
    exit: &mut Exit,
) -> Ended {
    let mut wait = docker.wait_container(id, None);
    let ended = tokio::select! {
        r = wait.next() => Some(r),
        _ = tokio::time::sleep(remaining) => { exit.timed_out = true; None }
        _ = cancel.cancelled() => { exit.cancelled = true; None }
    };
    drop(wait);
    let mut engine_lost = None;
    let mut code = None;
    match ended {
        Some(Some(Err(bollard::errors::Error::DockerContainerWaitError { code: c, .. }))) => {
            code = Some(c)
        }
        Some(Some(Ok(r))) => code = Some(r.status_code),
        Some(Some(Err(e))) => engine_lost = Some(e.to_string()),
        Some(None) => engine_lost = Some("the wait stream ended".into()),
        None => {
            // Timeout or cancel: SIGTERM, then SIGKILL after the grace period.
            let _ = docker
                .stop_container(
                    id,
                    Some(StopContainerOptionsBuilder::default().t(GRACE_SECS).build()),
                )
                .await;
            let _ = tokio::time::timeout(
                Duration::from_secs(GRACE_SECS as u64 + 10),
                docker.wait_container(id, None).next(),
            )
            .await;
        }
    }
    Ended { code, engine_lost }
}

/// How waiting for a container ended: its exit code when the engine said
/// it exited, or why contact with the engine was lost.
struct Ended {
    code: Option<i64>,
    engine_lost: Option<String>,
}

/// How often a SIGKILLed container is asked again whether it was an OOM
/// kill (100 ms apart): the engine sets the flag when the kernel's event
/// reaches it, which may be after the container's exit.
const OOM_ASKS: usize = 20;

/// The exit code of a container that ended on its own and cannot have
/// been OOM-killed (137 is SIGKILL's: the engine is asked why): no need
/// to inspect it.
fn plain_exit(ended: &Ended, exit: &Exit) -> Option<i64> {
    ended
        .code
        .filter(|c| *c != 137 && !exit.timed_out && !exit.cancelled)
}

/// Copy mode: bring the candidate's tree (and artifacts) back from its
/// container `(id, name)`, saying what was copied in its log.
async fn bring_back(
    docker: &Docker,
    spec: &LaunchSpec,
    (id, name): (&str, &str),
    log: &crate::exec::runner::LogTx,
) -> Result<(), LaunchError> {
    let artifacts = env_of(spec, crate::exec::env::ARTIFACTS_ENV).map(PathBuf::from);
    let lines = copy::download(docker, id, &spec.workdir, artifacts.as_deref())
        .await
        .map_err(|e| {
            err(format!(
                "could not bring back the tree of candidate `{}` from container {name}: {e}",
                spec.candidate
            ))
        })?;
    for l in lines {
        copy::say(log, l).await;
    }
    Ok(())
}

impl LaunchSpec {
    fn agent_name(&self) -> String {
        self.env
            .iter()
            .find(|(k, _)| k == "RASCAL_AGENT")
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| self.candidate.clone())
    }
}

/// A variable of the agent's environment (a host path rascal set).
fn env_of(spec: &LaunchSpec, key: &str) -> Option<String> {
    spec.env
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
}

fn memory_limit(spec: &LaunchSpec) -> ByteSize {
    spec.agent
        .as_ref()
        .and_then(|a| a.memory)
        .unwrap_or(DEFAULT_MEMORY)
}

/// The agent's environment inside the container: host-only variables
/// dropped (unless the agent asks for them), host paths replaced by the
/// container's, and a HOME.
fn container_env(spec: &LaunchSpec, agent: &crate::config::AgentConfig) -> Vec<String> {
    let mut env: Vec<String> = Vec::new();
    for (k, v) in &spec.env {
        if HOST_ONLY_ENV.contains(&k.as_str()) && !agent.env.contains(k) {
            continue;
        }
        if k == "RASCAL_INSTRUCTION_FILE" {
            env.push(format!("{k}={INSTRUCTION}"));
        } else if k == crate::exec::env::CRITERIA_ENV {
            // Bound in bind mode, uploaded in copy mode: the same path.
            env.push(format!("{k}={CRITERIA}"));
        } else if k == crate::exec::env::ARTIFACTS_ENV {
            env.push(format!("{k}={ARTIFACTS}"));
        } else if k == crate::exec::env::COMBINE_ENV {
            env.push(format!("{k}={ARTIFACTS}/{}", crate::exec::env::COMBINE_DIR));
        } else {
            env.push(format!("{k}={v}"));
        }
    }
    if !env.iter().any(|e| e.starts_with("HOME=")) {
        env.push("HOME=/tmp".into());
    }
    env
}

/// The container's labels: its run and candidate, the repository, this
/// rascal's version, and the deadline and timeout a reattach goes on with.
fn container_labels(spec: &LaunchSpec, deadline_ms: u64) -> HashMap<String, String> {
    HashMap::from([
        (LABEL_RUN.to_string(), spec.run.clone()),
        (LABEL_CANDIDATE.to_string(), spec.candidate.clone()),
        (
            LABEL_REPO.to_string(),
            spec.repo.to_string_lossy().into_owned(),
        ),
        (
            LABEL_VERSION.to_string(),
            env!("CARGO_PKG_VERSION").to_string(),
        ),
        (LABEL_DEADLINE.to_string(), deadline_ms.to_string()),
        (
            LABEL_TIMEOUT.to_string(),
            spec.timeout.as_millis().to_string(),
        ),
    ])
}

/// The container's create body: hardened by default (see the module doc).
pub fn container_body(spec: &LaunchSpec, deadline_ms: u64) -> ContainerCreateBody {
    let agent = spec
        .agent
        .clone()
        .unwrap_or_else(|| crate::config::AgentConfig::new(crate::config::RuntimeKind::Command));
    let host_instruction = spec
        .env
        .iter()
        .find(|(k, _)| k == "RASCAL_INSTRUCTION_FILE")
        .map(|(_, v)| v.clone());
    let host_artifacts = spec
        .env
        .iter()
        .find(|(k, _)| k == crate::exec::env::ARTIFACTS_ENV)
        .map(|(_, v)| v.clone());
    let env = container_env(spec, &agent);
    // A runtime that names the instruction file by its host path gets the
    // container's.
    let argv: Vec<String> = spec
        .argv
        .iter()
        .map(|a| match &host_instruction {
            Some(h) if a == h => INSTRUCTION.to_string(),
            _ => a.clone(),
        })
        .collect();
    let mut binds = vec![format!("{}:{WORKSPACE}:rw", spec.workdir.display())];
    if let Some(h) = &host_instruction {
        binds.push(format!("{h}:{INSTRUCTION}:ro"));
    }
    if let Some(h) = &host_artifacts {
        binds.push(format!("{h}:{ARTIFACTS}:rw"));
    }
    if let Some((_, h)) = spec
        .env
        .iter()
        .find(|(k, _)| k == crate::exec::env::CRITERIA_ENV)
    {
        binds.push(format!("{h}:{CRITERIA}:ro"));
    }
    // Copy mode: no bind mounts; everything lives in the container's own
    // volume (uploaded before start, downloaded after exit).
    let copy_mode = copy::wanted(Some(&agent));
    let (binds, volumes, workdir) = if copy_mode {
        (None, Some(vec![copy::VOLUME.to_string()]), copy::WORKSPACE)
    } else {
        (Some(binds), None, WORKSPACE)
    };
    let memory = agent.memory.unwrap_or(DEFAULT_MEMORY).get() as i64;
    let labels = container_labels(spec, deadline_ms);
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    ContainerCreateBody {
        image: spec.image.clone(),
        entrypoint: argv.first().map(|a| vec![a.clone()]),
        cmd: Some(argv.iter().skip(1).cloned().collect()),
        user: Some(format!("{uid}:{gid}")),
        working_dir: Some(workdir.into()),
        volumes,
        env: Some(env),
        labels: Some(labels),
        attach_stdin: Some(true),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        open_stdin: Some(true),
        stdin_once: Some(true),
        tty: Some(false),
        host_config: Some(HostConfig {
            binds,
            cap_drop: Some(vec!["ALL".into()]),
            security_opt: Some(vec!["no-new-privileges".into()]),
            memory: Some(memory),
            // No swap: past the limit the agent is OOM-killed, not slowed.
            memory_swap: Some(memory),
            nano_cpus: Some((agent.cpus.unwrap_or(DEFAULT_CPUS) * 1e9) as i64),
            pids_limit: Some(agent.pids.unwrap_or(DEFAULT_PIDS)),
            tmpfs: Some(HashMap::from([(
                "/tmp".to_string(),
                "rw,nosuid,nodev,mode=1777,size=512m".to_string(),
            )])),
            readonly_rootfs: Some(agent.read_only.unwrap_or(true)),
            // An allowlist's network is set by `egress` (`allowlist`
            // itself names no network, so nothing runs without it).
            network_mode: Some(
                agent
                    .network
                    .as_deref()
                    .unwrap_or(DEFAULT_NETWORK)
                    .to_string(),
            ),
            // A tiny init as PID 1 forwards SIGTERM to the agent and reaps zombies.
            init: Some(true),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Whether `image` is on the engine (`rascal doctor` asks this too).
pub async fn has_image(docker: &Docker, image: &str) -> Result<bool, String> {
    match docker.inspect_image(image).await {
        Ok(_) => Ok(true),
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => Ok(false),
        Err(e) => Err(format!(
            "could not inspect image `{image}` on {}: {e}",
            engine_address()
        )),
    }
}

/// How to get `image` onto the engine, for an agent of `runtime`.
pub fn build_hint(runtime: Option<crate::config::RuntimeKind>, image: &str) -> String {
    use crate::config::RuntimeKind;
    let image = crate::text::inert::shell_word(image);
    match runtime {
        Some(r @ (RuntimeKind::Claude | RuntimeKind::Codex | RuntimeKind::Goose)) => {
            let dir = format!("{r:?}").to_lowercase();
            format!("build it on this engine first: `docker build -t {image} docker/{dir}` in rascal's source tree")
        }
        _ => format!(
            "build it on this engine first: `docker build -t {image} DIR` with your Dockerfile in DIR (rascal's docker/ directory has examples)"
        ),
    }
}

/// Make sure the image is on the engine (pulling only when the agent says
/// `pull: true`).
async fn ensure_image(docker: &Docker, spec: &LaunchSpec, image: &str) -> Result<(), LaunchError> {
    if has_image(docker, image).await.map_err(err)? {
        return Ok(());
    }
    let build_hint = build_hint(spec.agent.as_ref().map(|a| a.runtime), image);
    let pull = spec.agent.as_ref().map(|a| a.pull).unwrap_or(false);
    if !pull {
        return Err(err(format!(
            "image `{image}` is not on the Docker engine at {}\n  hint: {build_hint}, or set `pull: true` on agent `{}` to pull it from its registry",
            engine_address(),
            spec.agent_name()
        )));
    }
    let opts = CreateImageOptionsBuilder::default()
        .from_image(image)
        .build();
    let pulled = tokio::time::timeout(PULL_TIMEOUT, async {
        let mut s = docker.create_image(Some(opts), None, None);
        while let Some(item) = s.next().await {
            item.map_err(|e| e.to_string())?;
        }
        Ok::<(), String>(())
    })
    .await
    .unwrap_or_else(|_| Err("no answer from the registry within 10m".into()));
    pulled.map_err(|e| {
        err(format!(
            "image `{image}` is not on the Docker engine at {} and pulling it failed: {e}\n  hint: check the registry and your `docker login`, or {build_hint}",
            engine_address()
        ))
    })
}

/// The agent's image, or why the docker launcher cannot run it.
fn image_of(spec: &LaunchSpec) -> Result<String, LaunchError> {
    spec.image.clone().ok_or_else(|| {
        err(format!(
            "agent `{}` has no `image:`, which the docker launcher needs\n  hint: add `image: NAME` to the agent in .rascal/config.yaml, or run with `--launcher process`",
            spec.agent_name()
        ))
    })
}

/// Create, attach (before start, so the first byte is seen) and start.
async fn start(
    docker: &Docker,
    spec: &LaunchSpec,
    name: &str,
    egress: Option<&crate::egress::network::Attached>,
    logs: &crate::exec::runner::LogTx,
) -> Result<(String, Output), LaunchError> {
    let image = image_of(spec)?;
    let mut body = container_body(spec, now_ms() + spec.timeout.as_millis() as u64);
    if let Some(a) = egress {
        a.apply(&mut body);
    }
    let created = docker
        .create_container(
            Some(CreateContainerOptionsBuilder::default().name(name).build()),
            body,
        )
        .await
        .map_err(|e| {
            err(format!(
                "could not create container {name} from image `{image}` on {}: {e}\n  hint: a leftover container of the same name is removed by `rascal doctor --remove`",
                engine_address()
            ))
        })?;
    let id = created.id;
    if copy::wanted(spec.agent.as_ref()) {
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let sources = copy::pack::Sources {
            workspace: spec.workdir.clone(),
            tree: spec.upload.clone(),
            instruction: env_of(spec, "RASCAL_INSTRUCTION_FILE").map(PathBuf::from),
            criteria: env_of(spec, crate::exec::env::CRITERIA_ENV).map(PathBuf::from),
            artifacts: env_of(spec, crate::exec::env::ARTIFACTS_ENV).map(PathBuf::from),
            uid: uid.into(),
            gid: gid.into(),
        };
        match copy::upload(docker, &id, sources).await {
            Ok(line) => copy::say(logs, format!("{line} to {}", engine_address())).await,
            Err(e) => {
                let _ = remove(docker, &id).await;
                return Err(err(format!("container {name}: {e}")));
            }
        }
    }
    let attached = docker
        .attach_container(
            &id,
            Some(
                AttachContainerOptionsBuilder::default()
                    .stdin(true)
                    .stdout(true)
                    .stderr(true)
                    .stream(true)
                    // Attached before the start, the stream has every
                    // line; asking for the logs too made the engine, under
                    // load, send a first line twice (and a reattach then
                    // skipped one real line for it).
                    .logs(false)
                    .build(),
            ),
        )
        .await;
    let attached = match attached {
        Ok(a) => a,
        Err(e) => {
            let _ = remove(docker, &id).await;
            return Err(err(format!("could not attach to container {name}: {e}")));
        }
    };
    if let Err(e) = docker.start_container(&id, None).await {
        let _ = remove(docker, &id).await;
        return Err(err(format!(
            "could not start container {name} (image `{image}`): {e}\n  hint: check that the command `{}` exists in the image",
            spec.argv.first().cloned().unwrap_or_default()
        )));
    }
    let mut input = attached.input;
    let stdin = spec.stdin.clone().unwrap_or_default();
    // A container that never reads stdin must not block us.
    tokio::spawn(async move {
        let _ = input.write_all(&stdin).await;
        let _ = input.shutdown().await;
    });
    Ok((id, attached.output))
}

async fn read_output(mut output: Output, out: crate::exec::runner::LogTx, skip: Resume) {
    let mut stdout = Lines::new(Stream::Stdout, skip.stdout_lines);
    let mut stderr = Lines::new(Stream::Stderr, skip.stderr_lines);
    let mut batch = Vec::new();
    while let Some(item) = output.next().await {
        match item {
            Ok(LogOutput::StdOut { message }) | Ok(LogOutput::Console { message }) => {
                stdout.push(&message, &mut batch)
            }
            Ok(LogOutput::StdErr { message }) => stderr.push(&message, &mut batch),
            Ok(LogOutput::StdIn { .. }) => {}
            Err(_) => break,
        }
        if !batch.is_empty() {
            // Waits while rascal is behind: the engine holds the rest.
            let _ = out.send(std::mem::take(&mut batch)).await;
        }
    }
    stdout.finish(&mut batch);
    stderr.finish(&mut batch);
    if !batch.is_empty() {
        let _ = out.send(batch).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::launch::lines::MAX_LINE;

    #[test]
    fn lines_are_split_cut_and_skipped() {
        let mut out = Vec::new();
        let mut l = Lines::new(Stream::Stdout, 1);
        l.push(b"skipped\nfirst\r\nsec", &mut out);
        l.push(b"ond\n", &mut out);
        l.push(&vec![b'x'; MAX_LINE + 10], &mut out);
        l.finish(&mut out);
        let got: Vec<String> = out.into_iter().map(|x| x.text).collect();
        assert_eq!(got[0], "first");
        assert_eq!(got[1], "second");
        assert!(got[2].ends_with("[line cut: 10 more bytes]"));
        assert_eq!(got.len(), 3);
    }

    #[test]
    fn a_planned_runs_criteria_file_is_bound_at_the_containers_path() {
        let spec = LaunchSpec {
            run: "r".into(),
            candidate: "a".into(),
            workdir: "/tmp/ws".into(),
            argv: vec!["sh".into()],
            env: vec![(
                crate::exec::env::CRITERIA_ENV.into(),
                "/state/runs/r/a/criteria.json".into(),
            )],
            stdin: None,
            timeout: std::time::Duration::from_secs(1),
            image: Some("img".into()),
            agent: None,
            repo: "/repo".into(),
            resume: None,
            confine: None,
            upload: None,
        };
        let body = container_body(&spec, 0);
        assert!(body
            .env
            .unwrap()
            .contains(&format!("RASCAL_CRITERIA_FILE={CRITERIA}")));
        let binds = body.host_config.unwrap().binds.unwrap();
        assert!(
            binds.contains(&format!("/state/runs/r/a/criteria.json:{CRITERIA}:ro")),
            "{binds:?}"
        );
    }

    #[test]
    fn container_names_are_what_docker_accepts() {
        assert_eq!(
            container_name("r-20261129-1a2b", "claude/2 x"),
            "rascal-r-20261129-1a2b-claude_2_x"
        );
    }
}
