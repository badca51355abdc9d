//! The Kubernetes launcher: one hardened Job per candidate (kube-rs), in
//! the namespace of the `kubernetes:` config. The order of a fresh start:
//! the default-deny NetworkPolicy and the credentials' Secret first (so the
//! pod never runs unconfined or with its secrets in its spec), then the
//! Job, then both are made the Job's dependents (the cluster removes them
//! with it). The workspace goes in by exec'ing `tar -x` in the init
//! container `receive`, which then ends; the agent's log is followed
//! (`follow=true`, resumed by line count); once the agent container has
//! terminated, the result comes back by exec'ing `tar -c` in the `collect`
//! container (a wait sidecar: it only waits for rascal's "done" marker),
//! and is unpacked under the rules of [`transfer`]. Timeout and cancel
//! delete the Job with foreground propagation.

pub(crate) mod check;
pub mod cluster;
pub(crate) mod exec;
mod pod;
pub mod spec;
pub mod transfer;

use super::lines::Lines;
use super::{err, now_ms, LaunchError, LaunchSpec, Launcher};
use crate::exec::runner::{Exit, LogLine, LogTx, Stream};
use cluster::Cluster;
use futures::AsyncReadExt;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Pod, Secret};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::api::{Api, DeleteParams, LogParams, Patch, PatchParams, PostParams};
use pod::{pod_of, state_of, wait_pod};
use rascal_core::config::container::DEFAULT_MEMORY;
use rascal_core::config::kubernetes::{KubernetesConfig, DEFAULT_MAX_RESULT};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Between two looks at the pod's status.
const POLL: Duration = Duration::from_millis(500);

/// The one way lines reach the run's log: waits while rascal is behind
/// (the queue is bounded).
pub(crate) async fn send_lines(logs: &LogTx, lines: Vec<LogLine>) {
    if !lines.is_empty() {
        let _ = logs.send(lines).await;
    }
}

/// A note of rascal's own in the candidate's log (not agent output).
async fn note(logs: &LogTx, text: impl Into<String>) {
    let line = LogLine {
        stream: Stream::Stderr,
        text: format!("rascal: {}", text.into()),
    };
    send_lines(logs, vec![line]).await;
}

/// The Kubernetes launcher. Connects on first use, once per run.
pub struct KubernetesLauncher {
    config: KubernetesConfig,
    /// A kubeconfig file instead of `$KUBECONFIG` / `~/.kube/config`.
    kubeconfig: Option<PathBuf>,
    cluster: tokio::sync::OnceCell<Result<Cluster, crate::Error>>,
}

impl KubernetesLauncher {
    pub fn new(config: KubernetesConfig) -> Self {
        KubernetesLauncher {
            config,
            kubeconfig: None,
            cluster: tokio::sync::OnceCell::new(),
        }
    }

    /// Read the cluster's address and credentials from `path`.
    pub fn with_kubeconfig(mut self, path: PathBuf) -> Self {
        self.kubeconfig = Some(path);
        self
    }

    async fn cluster(&self) -> Result<Cluster, LaunchError> {
        let connect = || cluster::connect(&self.config, self.kubeconfig.as_deref());
        match self.cluster.get_or_init(connect).await {
            Ok(cluster) => Ok(cluster.clone()),
            Err(e) => Err(LaunchError::Start(e.to_string())),
        }
    }
}

/// Everything one candidate's run (or one of its checks) needs to talk
/// about its objects.
struct Candidate<'a> {
    cluster: &'a Cluster,
    jobs: Api<Job>,
    pods: Api<Pod>,
    name: String,
    spec: &'a LaunchSpec,
    max_result: u64,
    /// The label selector of its pod.
    selector: String,
    /// The container that runs the agent (or the check's command).
    main: &'static str,
    /// What it is, in messages: "candidate `claude`".
    what: String,
}

/// The objects of one Job: its policy, its Secret (when it has
/// variables to hide) and itself.
struct Objects {
    policy: NetworkPolicy,
    secret: Option<Secret>,
    job: Job,
}

/// What comes back once the main container has ended.
enum Back<'a> {
    /// The agent's tree and artifacts, into the worktree.
    Result,
    /// These files of the check's copy (relative to its workspace).
    Files(&'a [String]),
}

/// A `k=v,k2=v2` label selector.
fn selector_of(labels: &std::collections::BTreeMap<String, String>) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[async_trait::async_trait]
impl Launcher for KubernetesLauncher {
    fn name(&self) -> &'static str {
        "kubernetes"
    }

    async fn run(
        &self,
        spec: LaunchSpec,
        logs: LogTx,
        cancel: CancellationToken,
    ) -> Result<Exit, LaunchError> {
        let cluster = self.cluster().await?;
        let started = Instant::now();
        let ns = &self.config.namespace;
        let c = Candidate {
            cluster: &cluster,
            jobs: Api::namespaced(cluster.client.clone(), ns),
            pods: Api::namespaced(cluster.client.clone(), ns),
            name: spec::job_name(&spec.run, &spec.candidate),
            spec: &spec,
            max_result: self
                .config
                .max_result
                .map(|b| b.get())
                .unwrap_or(DEFAULT_MAX_RESULT),
            selector: selector_of(&std::collections::BTreeMap::from([
                (spec::LABEL_RUN.to_string(), spec::label_value(&spec.run)),
                (
                    spec::LABEL_CANDIDATE.to_string(),
                    spec::label_value(&spec.candidate),
                ),
            ])),
            main: spec::AGENT,
            what: format!("candidate `{}`", spec.candidate),
        };
        let (job, deadline, timeout, skip) = match spec.resume {
            None => {
                let (job, deadline) = self.start_job(&c, &logs).await?;
                (job, deadline, spec.timeout, None)
            }
            Some(resume) => {
                let (job, deadline, timeout) = reattach_job(&c, ns).await?;
                (job, deadline, timeout, Some(resume.stdout_lines))
            }
        };
        let uid = job.metadata.uid.clone().unwrap_or_default();
        let remaining = Duration::from_millis(deadline.saturating_sub(now_ms()));
        let mut exit = Exit::default();
        let outcome = tokio::select! {
            r = follow(&c, &uid, skip, &logs, &Back::Result) => Some(r),
            _ = tokio::time::sleep(remaining) => { exit.timed_out = true; None }
            _ = cancel.cancelled() => { exit.cancelled = true; None }
        };
        exit.duration_ms = started.elapsed().as_millis() as u64;
        match outcome {
            Some(Ok(ended)) => {
                exit.code = ended.code;
                if ended.oom && !exit.timed_out {
                    let limit = spec
                        .agent
                        .as_ref()
                        .and_then(|a| a.memory)
                        .unwrap_or(DEFAULT_MEMORY);
                    exit.failure = Some(format!(
                        "was OOM-killed: it ran out of its {} memory limit (exit {})\n  hint: raise `memory:` of agent `{}` in .rascal/config.yaml",
                        limit.human(),
                        ended.code.unwrap_or(137),
                        spec.candidate
                    ));
                }
                Ok(exit)
            }
            Some(Err(e)) => {
                // Nothing more will be collected: the pod goes.
                let _ = delete(&c.jobs, &c.name).await;
                Err(e)
            }
            None => {
                let _ = delete(&c.jobs, &c.name).await;
                if exit.timed_out {
                    exit.failure = Some(format!(
                        "timed out after {}",
                        crate::exec::runner::human(timeout)
                    ));
                }
                Ok(exit)
            }
        }
    }

    async fn release(&self, run: &str, candidate: &str, agent: &rascal_core::config::AgentConfig) {
        if agent.keep_containers {
            return;
        }
        if let Ok(cluster) = self.cluster().await {
            let jobs: Api<Job> = Api::namespaced(cluster.client.clone(), &self.config.namespace);
            let _ = delete(&jobs, &spec::job_name(run, candidate)).await;
        }
    }
}

impl KubernetesLauncher {
    /// Create the candidate's Job (with its policy and Secret), noting
    /// where it runs in its log. The Job and its deadline (ms since the
    /// epoch).
    async fn start_job(&self, c: &Candidate<'_>, logs: &LogTx) -> Result<(Job, u64), LaunchError> {
        let spec = c.spec;
        let deadline = now_ms() + spec.timeout.as_millis() as u64;
        if spec.image.is_none() {
            return Err(err(format!(
                "agent `{}` has no `image:`, which the kubernetes launcher needs\n  hint: add `image: NAME` (an image your cluster can pull, with `sh` and `tar`) to the agent in .rascal/config.yaml",
                spec.candidate
            )));
        }
        let objects = Objects {
            policy: spec::network_policy(spec, &self.config),
            secret: spec::secret(spec, &self.config),
            job: spec::job(spec, &self.config, deadline),
        };
        let job = create(c, &self.config, objects).await?;
        note(
            logs,
            format!(
                "Job {} in namespace {} on {} (egress: {})",
                c.name,
                self.config.namespace,
                c.cluster.context,
                egress_summary(spec, &self.config)
            ),
        )
        .await;
        Ok((job, deadline))
    }
}

/// A reattach: the candidate's Job as namespace `ns` still has it, with
/// the original deadline and timeout (from its annotations).
async fn reattach_job(c: &Candidate<'_>, ns: &str) -> Result<(Job, u64, Duration), LaunchError> {
    let spec = c.spec;
    let job = c
        .jobs
        .get_opt(&c.name)
        .await
        .map_err(|e| err(format!("looking for Job {} in {ns}: {e}", c.name)))?;
    let job = job.ok_or_else(|| {
        err(format!(
            "the Job of candidate `{}` (run {}) is gone from namespace {ns} on {}; its result was not recorded\n  hint: it was deleted (or its ttlSecondsAfterFinished passed) while rascal was not running; run the task again",
            spec.candidate, spec.run, c.cluster.context
        ))
    })?;
    let ann = |k: &str| -> Option<u64> { job.metadata.annotations.as_ref()?.get(k)?.parse().ok() };
    let deadline = ann(spec::ANNOTATION_DEADLINE)
        .unwrap_or_else(|| now_ms() + spec.timeout.as_millis() as u64);
    let timeout = ann(spec::ANNOTATION_TIMEOUT)
        .map(Duration::from_millis)
        .unwrap_or(spec.timeout);
    Ok((job, deadline, timeout))
}

fn egress_summary(spec: &LaunchSpec, k: &KubernetesConfig) -> String {
    if spec.agent.as_ref().and_then(|a| a.network.as_deref()) == Some("none") || k.egress.is_empty()
    {
        "denied (NetworkPolicy; enforced only where the network plugin implements it)".into()
    } else {
        format!(
            "only {} (NetworkPolicy; enforced only where the network plugin implements it)",
            k.egress.join(", ")
        )
    }
}

/// Delete a Job and its pods, foreground: the Job goes once its pods have.
pub async fn delete(jobs: &Api<Job>, name: &str) -> crate::error::Result<()> {
    match jobs.delete(name, &DeleteParams::foreground()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(crate::Error::Engine(format!("deleting Job {name}: {e}"))),
    }
}

/// Create the policy, the Secret and the Job, and make the first two the
/// Job's dependents.
async fn create(
    c: &Candidate<'_>,
    k: &KubernetesConfig,
    objects: Objects,
) -> Result<Job, LaunchError> {
    let ns = &k.namespace;
    let client = c.cluster.client.clone();
    let policies: Api<NetworkPolicy> = Api::namespaced(client.clone(), ns);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns);
    let conflict = |what: &str, e: kube::Error| {
        let hint = match &e {
            kube::Error::Api(s) if s.code == 409 => "a leftover of an earlier run has this name: `rascal doctor --remove` removes Jobs of runs that are gone".to_string(),
            kube::Error::Api(s) if s.code == 403 => format!("your account may not do this in namespace {ns}: see the Role in docs/kubernetes.md (`rascal doctor` checks each permission)"),
            kube::Error::Api(s) if s.code == 404 && what == "NetworkPolicy" => "this cluster does not serve networking.k8s.io/v1 NetworkPolicy: rascal refuses to run an agent whose egress it cannot deny".to_string(),
            _ => format!("check that `{}` answers (`rascal doctor`)", c.cluster.url),
        };
        err(format!(
            "could not create the {what} of {} in namespace {ns} on {}: {e}\n  hint: {hint}",
            c.what, c.cluster.context
        ))
    };
    let Objects {
        policy,
        secret,
        job,
    } = objects;
    policies
        .create(&PostParams::default(), &policy)
        .await
        .map_err(|e| conflict("NetworkPolicy", e))?;
    if let Some(s) = &secret {
        secrets
            .create(&PostParams::default(), s)
            .await
            .map_err(|e| conflict("Secret", e))?;
    }
    let job = match c.jobs.create(&PostParams::default(), &job).await {
        Ok(job) => job,
        Err(e) => {
            // Nothing owns the policy and the Secret yet: remove them here.
            let dp = DeleteParams::default();
            let _ = policies.delete(&spec::policy_name(&c.name), &dp).await;
            if secret.is_some() {
                let _ = secrets.delete(&spec::secret_name(&c.name), &dp).await;
            }
            return Err(conflict("Job", e));
        }
    };
    let owner = serde_json::json!({
        "metadata": { "ownerReferences": [{
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": c.name,
            "uid": job.metadata.uid.clone().unwrap_or_default(),
            "blockOwnerDeletion": true,
        }]}
    });
    let pp = PatchParams::default();
    policies
        .patch(&spec::policy_name(&c.name), &pp, &Patch::Merge(&owner))
        .await
        .map_err(|e| conflict("NetworkPolicy owner", e))?;
    if secret.is_some() {
        secrets
            .patch(&spec::secret_name(&c.name), &pp, &Patch::Merge(&owner))
            .await
            .map_err(|e| conflict("Secret owner", e))?;
    }
    Ok(job)
}

/// How the main container ended, and what came back.
struct Ended {
    code: Option<i32>,
    oom: bool,
    /// For `Back::Files`: each file's content (None: missing, not a
    /// regular file, or too large).
    read: Vec<Option<Vec<u8>>>,
}

impl Candidate<'_> {
    fn pods_namespace(&self) -> String {
        self.pods.namespace().unwrap_or("default").to_string()
    }
}

/// From the pod's start to the agent's end and its result in the worktree.
async fn follow(
    c: &Candidate<'_>,
    job_uid: &str,
    skip: Option<u64>,
    logs: &LogTx,
    back: &Back<'_>,
) -> Result<Ended, LaunchError> {
    let main = c.main;
    let is_running = |p: &Pod, name: &str, init: bool| {
        state_of(p, name, init).is_some_and(|s| s.running.is_some())
    };
    let has_ended = |p: &Pod, name: &str, init: bool| {
        state_of(p, name, init).is_some_and(|s| s.terminated.is_some())
    };
    let pod = if skip.is_none() {
        let pod = wait_pod(c, job_uid, logs, |p| is_running(p, spec::RECEIVE, true)).await?;
        let name = pod.metadata.name.clone().unwrap_or_default();
        exec::send_workspace(&c.pods, &name, c.spec).await?;
        pod
    } else {
        let pod = wait_pod(c, job_uid, logs, |p| {
            is_running(p, spec::RECEIVE, true)
                || is_running(p, main, false)
                || has_ended(p, main, false)
        })
        .await?;
        if is_running(&pod, spec::RECEIVE, true) {
            return Err(err(format!(
                "rascal stopped while handing candidate `{}` its workspace; the pod never started the agent\n  hint: run the task again",
                c.spec.candidate
            )));
        }
        pod
    };
    let pod_name = pod.metadata.name.clone().unwrap_or_default();
    wait_pod(c, job_uid, logs, |p| {
        is_running(p, main, false) || has_ended(p, main, false)
    })
    .await?;
    stream_logs(c, job_uid, &pod_name, skip.unwrap_or(0), logs).await?;
    let pod = wait_pod(c, job_uid, logs, |p| has_ended(p, main, false)).await?;
    let ended = state_of(&pod, main, false)
        .and_then(|s| s.terminated)
        .map(|t| Ended {
            code: Some(t.exit_code),
            oom: t.reason.as_deref() == Some("OOMKilled"),
            read: Vec::new(),
        })
        .unwrap_or(Ended {
            code: None,
            oom: false,
            read: Vec::new(),
        });
    let mut ended = ended;
    if !is_running(&pod, spec::COLLECT, false) {
        return Err(err(format!(
            "the `collect` container of {} is not running, so its result cannot be fetched\n  hint: `kubectl -n {} describe pod {pod_name}`",
            c.what,
            c.pods_namespace()
        )));
    }
    match back {
        Back::Result => {
            for line in exec::fetch_result(&c.pods, &pod_name, c.spec, c.max_result).await? {
                note(logs, line).await;
            }
        }
        Back::Files(files) => ended.read = exec::read_files(&c.pods, &pod_name, files).await,
    }
    exec::finish(&c.pods, &pod_name).await?;
    Ok(ended)
}

/// Follow the agent's log until it ends, reopening it (and skipping what
/// was already sent) when the stream breaks while the agent still runs.
/// Once the agent has ended, the log is read whole once more: a stream
/// that broke just before the end looks like a stream that ended, and the
/// lines it missed are only in the complete log. Kubernetes merges the
/// agent's stdout and stderr: every line is stdout.
async fn stream_logs(
    c: &Candidate<'_>,
    job_uid: &str,
    pod: &str,
    skip: u64,
    logs: &LogTx,
) -> Result<(), LaunchError> {
    let main = c.main;
    let mut lines = Lines::new(Stream::Stdout, skip);
    let mut params = LogParams {
        container: Some(main.into()),
        follow: true,
        ..Default::default()
    };
    let mut failures = 0;
    let mut last = false;
    loop {
        params.follow = !last;
        lines.restart();
        match c.pods.log_stream(pod, &params).await {
            Ok(stream) => {
                let mut stream = Box::pin(stream);
                let mut buf = vec![0u8; 16 * 1024];
                loop {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            let mut batch = Vec::new();
                            lines.push(&buf[..n], &mut batch);
                            send_lines(logs, batch).await;
                        }
                    }
                }
                let mut batch = Vec::new();
                lines.finish(&mut batch);
                send_lines(logs, batch).await;
            }
            Err(e) => {
                failures += 1;
                if failures > 20 {
                    return Err(err(format!("could not follow the log of {}: {e}", c.what)));
                }
            }
        }
        if last {
            return Ok(());
        }
        let ended = pod_of(c, job_uid)
            .await?
            .and_then(|p| state_of(&p, main, false))
            .is_none_or(|s| s.terminated.is_some());
        if ended {
            last = true;
        } else {
            tokio::time::sleep(POLL).await;
        }
    }
}

#[cfg(test)]
mod tests;
