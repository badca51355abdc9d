//! A verification command of a kubernetes candidate (a guardrail's, a
//! `test`/`command` criterion's) as a Job of its own, in the candidate's
//! namespace, on a copy of the candidate's change: the same pod as the
//! agent's (built by `spec::check_job` from the same builder, so the same
//! hardening), labelled as a check of the candidate, with its own
//! default-deny NetworkPolicy and, when the check names variables, its own
//! Secret (never the agent's). The copy goes in through the init
//! container's exec tar as an agent's workspace does; the command's output
//! is followed into the check's lines; its exit code is the pod status's;
//! the files the check reads back come out of the `collect` sidecar by
//! exec tar; the Job is deleted afterwards (foreground), also on timeout,
//! cancel and error. A Job that cannot be created, a pod that never starts
//! or an image that cannot be pulled is an error or a failure of the
//! check, never a pass.

use super::{
    create, delete, follow, note, pod_of, selector_of, spec, state_of, Back, Candidate,
    KubernetesLauncher, Objects,
};
use crate::exec::launch::{err, now_ms, LaunchError, LaunchSpec};
use crate::exec::runner::{human, Exit, LogTx};
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Run one check to its end. `spec` is the check's: `candidate` is
/// `check.id()`, `workdir` the copy of the change, `env` the values of the
/// variables it names (and `agent.env` their names), `agent.network`
/// `none` unless the check asked for the network. Returns its exit and
/// the files read back (one entry per name in `files`).
pub(crate) async fn run(
    launcher: &KubernetesLauncher,
    spec: LaunchSpec,
    check: &spec::Check,
    files: &[String],
    logs: LogTx,
    cancel: CancellationToken,
) -> Result<(Exit, Vec<Option<Vec<u8>>>), LaunchError> {
    let k = &launcher.config;
    let ns = &k.namespace;
    if spec.image.is_none() {
        return Err(err(format!(
            "check {} of candidate `{}` has no image to run in (the agent's `image:`)",
            check.number(),
            check.of
        )));
    }
    let cluster = launcher.cluster().await?;
    let started = Instant::now();
    let c = Candidate {
        cluster: &cluster,
        jobs: Api::namespaced(cluster.client.clone(), ns),
        pods: Api::namespaced(cluster.client.clone(), ns),
        name: spec::job_name(&spec.run, &spec.candidate),
        spec: &spec,
        max_result: 0,
        selector: selector_of(&check.selector(&spec.run)),
        main: spec::CHECK,
        what: format!("check {} of candidate `{}`", check.number(), check.of),
    };
    let deadline = now_ms() + spec.timeout.as_millis() as u64;
    let objects = Objects {
        policy: spec::check_policy(&spec, k, check),
        secret: spec::check_secret(&spec, k, check),
        job: spec::check_job(&spec, k, deadline, check),
    };
    let job = create(&c, k, objects).await?;
    // No line of rascal's goes into the check's output: a test runner's
    // listing is parsed from it, line by line.
    let uid = job.metadata.uid.clone().unwrap_or_default();
    let mut exit = Exit::default();
    let back = Back::Files(files);
    let outcome = tokio::select! {
        r = follow(&c, &uid, None, &logs, &back) => Some(r),
        _ = tokio::time::sleep(spec.timeout) => { exit.timed_out = true; None }
        _ = cancel.cancelled() => { exit.cancelled = true; None }
    };
    exit.duration_ms = started.elapsed().as_millis() as u64;
    let result = match outcome {
        Some(Ok(ended)) => {
            exit.code = ended.code;
            if ended.oom {
                exit.failure = Some(format!(
                    "was OOM-killed in its pod (exit {}): it ran out of the agent's memory limit\n  hint: raise `memory:` of the agent in .rascal/config.yaml",
                    ended.code.unwrap_or(137)
                ));
            }
            Ok((exit, ended.read))
        }
        Some(Err(e)) => Err(e),
        None => {
            if exit.timed_out {
                exit.failure = Some(match never_started(&c, &uid).await {
                    Some(why) => format!(
                        "did not run: its pod never started the `{}` container within {} ({why})\n  hint: `kubectl -n {ns} describe job {}`",
                        spec::CHECK,
                        human(spec.timeout),
                        c.name
                    ),
                    None => format!("timed out after {}", human(spec.timeout)),
                });
            }
            Ok((exit, vec![None; files.len()]))
        }
    };
    // Always deleted, foreground: its pod goes first, then the Job, its
    // policy and its Secret.
    if let Err(e) = delete(&c.jobs, &c.name).await {
        note(
            &logs,
            format!(
                "{e} (it is a leftover: `rascal doctor --remove` removes it once the run is gone)"
            ),
        )
        .await;
    }
    result
}

/// Why the check's container never ran, when it did not: the pod's phase
/// and what it waits for. None when it ran (or the pod cannot be read).
async fn never_started(c: &Candidate<'_>, uid: &str) -> Option<String> {
    let pod: Option<Pod> = pod_of(c, uid).await.ok()?;
    let Some(pod) = pod else {
        return Some("no pod was created for the Job".into());
    };
    let state = state_of(&pod, spec::CHECK, false);
    if state
        .as_ref()
        .is_some_and(|s| s.running.is_some() || s.terminated.is_some())
    {
        return None;
    }
    let status = pod.status.as_ref();
    let phase = status
        .and_then(|s| s.phase.clone())
        .unwrap_or_else(|| "Unknown".into());
    let waiting = state
        .and_then(|s| s.waiting)
        .and_then(|w| w.reason)
        .or_else(|| {
            status
                .and_then(|s| s.conditions.as_ref())
                .and_then(|cs| cs.iter().find(|c| c.status == "False"))
                .map(|c| {
                    format!(
                        "{}: {}",
                        c.reason.clone().unwrap_or_default(),
                        c.message.clone().unwrap_or_default()
                    )
                })
        });
    Some(match waiting {
        Some(w) => format!("pod {phase}, {w}"),
        None => format!("pod {phase}"),
    })
}
