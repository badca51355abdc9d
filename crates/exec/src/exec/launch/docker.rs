//! The docker launcher: one hardened container per candidate, through the
//! engine API (bollard; unix socket by default, `DOCKER_HOST` honoured, API
//! version negotiated so Docker 20.10 engines answer). Output is attached
//! before the container starts (nothing is missed), demultiplexed into
//! tagged lines; timeout and cancel stop the container with a grace period;
//! a later rascal finds a container by its labels and resumes its logs.

#![allow(unsafe_code)]

use super::lines::Lines;
use super::{copy, err, now_ms, LaunchError, LaunchSpec, Launcher, Resume};
use crate::exec::runner::{Exit, LogLine, Stream};
use bollard::container::LogOutput;
use bollard::models::ContainerSummary;
use bollard::query_parameters::{
    AttachContainerOptionsBuilder, CreateContainerOptionsBuilder, ListContainersOptionsBuilder,
    RemoveContainerOptionsBuilder,
};
use bollard::Docker;
use futures::{Stream as FStream, StreamExt};
use std::collections::HashMap;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

mod container;
mod end;
mod image;
mod reattach;

pub(crate) use container::container_body;
use container::{env_of, memory_limit};
use end::{final_state, killed, wait_for_end};
pub use image::{build_hint, has_image};
use image::{ensure_image, image_of};
use reattach::reattach;

pub const LABEL_RUN: &str = "rascal.run";
pub const LABEL_CANDIDATE: &str = "rascal.candidate";
pub const LABEL_REPO: &str = "rascal.repo";
pub const LABEL_VERSION: &str = "rascal.version";
/// Unix milliseconds at which the agent times out (for a reattach).
pub(crate) const LABEL_DEADLINE: &str = "rascal.deadline";
/// The agent's timeout in milliseconds (for a reattach's messages).
pub(crate) const LABEL_TIMEOUT: &str = "rascal.timeout";

/// Where the candidate's worktree is mounted (the working directory).
pub(crate) const WORKSPACE: &str = "/workspace";
/// Where the instruction file is mounted, read-only.
pub(crate) const INSTRUCTION: &str = "/rascal/instruction.md";
/// Where a planned run's approved criteria are (`$RASCAL_CRITERIA_FILE`):
/// bound in bind mode, uploaded into the volume in copy mode.
pub(crate) const CRITERIA: &str = "/rascal/criteria.json";

/// Where the author's artifacts directory is mounted, writable.
pub(crate) const ARTIFACTS: &str = "/rascal/artifacts";
/// Host variables every process agent gets describe the host, so a
/// container does not get them (unless the agent names them in `env:`);
/// `HOME` is set to the writable `/tmp`.
const HOST_ONLY_ENV: &[&str] = crate::exec::env::BASE_ENV;
/// Seconds between SIGTERM and SIGKILL on timeout or cancel.
const GRACE_SECS: i32 = 3;
/// Lines longer than this are cut.
pub use super::engine::engine_address;

/// Connect to the engine and negotiate the API version (an engine older
/// than the client refuses the client's default version).
pub async fn connect() -> crate::error::Result<Docker> {
    let addr = engine_address();
    let unreachable = |e: &dyn std::fmt::Display| {
        crate::Error::Engine(format!(
            "no Docker engine answered at {addr}: {e}\n  hint: start Docker (e.g. `sudo systemctl start docker` or `dockerd`), set DOCKER_HOST to a reachable engine, or run with `--launcher process`"
        ))
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
) -> crate::error::Result<Vec<ContainerSummary>> {
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
        .map_err(|e| {
            crate::Error::Engine(format!("listing containers on {}: {e}", engine_address()))
        })
}

/// Force-remove a container (and its anonymous volumes).
pub async fn remove(docker: &Docker, id: &str) -> crate::error::Result<()> {
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
        .map_err(|e| crate::Error::Engine(format!("removing container {id}: {e}")))
}

/// The docker launcher. Connects on first use, once per run.
#[derive(Default)]
pub struct DockerLauncher {
    engine: tokio::sync::OnceCell<Result<Docker, crate::Error>>,
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
    pub(crate) fn for_checks() -> Self {
        DockerLauncher {
            leave_tree: true,
            ..Self::default()
        }
    }

    async fn engine(&self) -> Result<Docker, LaunchError> {
        match self.engine.get_or_init(connect).await {
            Ok(docker) => Ok(docker.clone()),
            Err(e) => Err(LaunchError::Start(e.to_string())),
        }
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
    /// A fresh start: the image, the name freed, the container created,
    /// attached and started (and remembered, for its removal).
    async fn start_new(
        &self,
        docker: &Docker,
        spec: &LaunchSpec,
        name: &str,
        egress: Option<&crate::egress::network::Attached>,
        logs: &crate::exec::runner::LogTx,
    ) -> Result<Running, LaunchError> {
        self.image_once(docker, spec).await?;
        self.name_free(name).await;
        let (id, output) = start(docker, spec, name, egress, logs).await?;
        if let Ok(mut m) = self.created.lock() {
            m.insert(name.to_string(), id.clone());
        }
        Ok(Running {
            id,
            deadline: now_ms() + spec.timeout.as_millis() as u64,
            timeout: spec.timeout,
            output,
            skip: Resume::default(),
        })
    }

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
                self.start_new(&docker, &spec, &name, egress.as_ref(), &logs)
                    .await?
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

        let state = final_state(&docker, (&id, &name), &spec, ended, &exit).await?;
        exit.code = state.exit_code.map(|c| c as i32);
        if copy::wanted(spec.agent.as_ref()) && !self.leave_tree && !exit.cancelled {
            bring_back(&docker, &spec, (&id, &name), &copy_log).await?;
        }
        if !exit.timed_out && !exit.cancelled {
            if let Some(why) = killed(&spec, &state, exit.code) {
                exit.failure = Some(why);
            }
        }
        Ok(exit)
    }

    fn network(&self, run: &str, candidate: &str) -> Option<crate::egress::NetworkSummary> {
        self.egress.summary(run, candidate)
    }

    async fn release(&self, run: &str, candidate: &str, agent: &rascal_core::config::AgentConfig) {
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

    async fn warm(&self, agents: &[rascal_core::config::AgentConfig]) {
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
        let (uid, gid) = user_ids();
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

/// rascal's user and group ids (the container runs as them).
fn user_ids() -> (libc::uid_t, libc::gid_t) {
    // SAFETY: getuid/getgid cannot fail.
    unsafe { (libc::getuid(), libc::getgid()) }
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
mod tests;
