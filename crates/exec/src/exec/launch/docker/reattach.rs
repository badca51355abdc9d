//! Picking up a candidate's container that an earlier rascal started: found
//! by its labels, with its original deadline and timeout, its logs followed.

use super::{
    engine_address, list_rascal_containers, Output, Running, LABEL_CANDIDATE, LABEL_DEADLINE,
    LABEL_TIMEOUT,
};
use crate::exec::launch::{err, now_ms, LaunchError, LaunchSpec, Resume};
use bollard::query_parameters::LogsOptionsBuilder;
use bollard::Docker;
use std::time::Duration;

/// A reattach: the candidate's container as the engine still has it, with
/// the original deadline and timeout (not this rascal's) and its logs.
pub(super) async fn reattach(
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
