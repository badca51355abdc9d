//! Watching the candidate's pod: finding the one its Job controls, where
//! its containers are, why it cannot go on, and waiting until it is ready.

use super::{note, Candidate, POLL};
use crate::exec::launch::{err, LaunchError};
use crate::exec::runner::LogTx;
use k8s_openapi::api::core::v1::{ContainerState, Pod};
use kube::api::ListParams;

/// Container waiting reasons that will not resolve by waiting.
const STUCK: &[&str] = &[
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "ErrImageNeverPull",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
];

/// The candidate's pod (the one the Job controls: its owner's uid must be
/// the Job's, so a look-alike pod never receives the workspace).
pub(super) async fn pod_of(c: &Candidate<'_>, job_uid: &str) -> Result<Option<Pod>, LaunchError> {
    let list = c
        .pods
        .list(&ListParams::default().labels(&c.selector))
        .await
        .map_err(|e| err(format!("listing the pods of Job {}: {e}", c.name)))?;
    Ok(list.items.into_iter().find(|p| {
        p.metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.kind == "Job" && o.uid == job_uid && o.controller == Some(true))
    }))
}

/// Where a container of the pod is.
pub(super) fn state_of(pod: &Pod, container: &str, init: bool) -> Option<ContainerState> {
    let status = pod.status.as_ref()?;
    let list = if init {
        status.init_container_statuses.as_ref()
    } else {
        status.container_statuses.as_ref()
    }?;
    list.iter().find(|s| s.name == container)?.state.clone()
}

/// Why the pod cannot go on, if it cannot.
fn stuck(pod: &Pod) -> Option<String> {
    let status = pod.status.as_ref()?;
    if status.phase.as_deref() == Some("Failed") {
        return Some(format!(
            "the pod failed: {}",
            status
                .message
                .clone()
                .or(status.reason.clone())
                .unwrap_or_default()
        ));
    }
    let all = status
        .init_container_statuses
        .iter()
        .flatten()
        .chain(status.container_statuses.iter().flatten());
    for s in all {
        if let Some(w) = s.state.as_ref().and_then(|s| s.waiting.as_ref()) {
            let reason = w.reason.clone().unwrap_or_default();
            if STUCK.contains(&reason.as_str()) {
                return Some(format!(
                    "container `{}` cannot start: {reason}: {}",
                    s.name,
                    w.message.clone().unwrap_or_default()
                ));
            }
        }
    }
    None
}

/// Wait until `ready` says yes about the pod, failing when the pod cannot
/// go on. A pod that cannot be scheduled is reported once and waited for.
pub(super) async fn wait_pod(
    c: &Candidate<'_>,
    job_uid: &str,
    logs: &LogTx,
    ready: impl Fn(&Pod) -> bool,
) -> Result<Pod, LaunchError> {
    let mut told = false;
    loop {
        if let Some(pod) = pod_of(c, job_uid).await? {
            if ready(&pod) {
                return Ok(pod);
            }
            if let Some(why) = stuck(&pod) {
                return Err(err(format!(
                    "{} (Job {}): {why}\n  hint: check the image name, your image_pull_secrets and `kubectl -n {} describe pod {}`",
                    c.what,
                    c.name,
                    c.pods_namespace(),
                    pod.metadata.name.unwrap_or_default()
                )));
            }
            let unschedulable = pod
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .and_then(|cs| {
                    cs.iter().find(|c| {
                        c.type_ == "PodScheduled" && c.reason.as_deref() == Some("Unschedulable")
                    })
                })
                .and_then(|c| c.message.clone());
            if let (Some(m), false) = (unschedulable, told) {
                note(logs, format!("the pod is not scheduled yet: {m}")).await;
                told = true;
            }
        }
        tokio::time::sleep(POLL).await;
    }
}
