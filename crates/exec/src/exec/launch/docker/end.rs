//! How a container's run ends: waiting for it (stopping it on a timeout
//! or cancel), its final state as the engine has it, and why it was killed.

use super::{engine_address, memory_limit, GRACE_SECS};
use crate::exec::launch::{err, LaunchError, LaunchSpec};
use crate::exec::runner::Exit;
use bollard::query_parameters::StopContainerOptionsBuilder;
use bollard::Docker;
use futures::StreamExt;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Wait for the container to end, at most `remaining`; on a timeout or a
/// cancel (marked in `exit`) stop it: SIGTERM, then SIGKILL after the
/// grace period. Some(why) when contact with the engine was lost.
pub(super) async fn wait_for_end(
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
pub(super) struct Ended {
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

/// The container's state once it ended: from the wait when it exited on
/// its own, else asked of the engine (again for a moment after a SIGKILL
/// rascal did not send, until the engine says whether it was an OOM kill).
/// Err when contact with the engine or the container was lost.
pub(super) async fn final_state(
    docker: &Docker,
    (id, name): (&str, &str),
    spec: &LaunchSpec,
    ended: Ended,
    exit: &Exit,
) -> Result<bollard::models::ContainerState, LaunchError> {
    let engine_lost = ended.engine_lost.clone();
    let inspected = match plain_exit(&ended, exit) {
        // It exited on its own: the wait said how; no need to ask.
        Some(code) => Ok(bollard::models::ContainerState {
            running: Some(false),
            exit_code: Some(code),
            oom_killed: Some(false),
            ..Default::default()
        }),
        None => docker
            .inspect_container(id, None)
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
            match docker.inspect_container(id, None).await {
                Ok(info) if info.state.as_ref().and_then(|s| s.oom_killed) == Some(true) => {
                    state.oom_killed = Some(true);
                    break;
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    }
    Ok(state)
}

/// Why a container rascal did not stop was killed (OOM, or a SIGKILL the
/// engine did not explain), with the hint to raise its memory; None when
/// it was not.
pub(super) fn killed(
    spec: &LaunchSpec,
    state: &bollard::models::ContainerState,
    code: Option<i32>,
) -> Option<String> {
    let limit = memory_limit(spec);
    let why = match (state.oom_killed, code) {
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
    }?;
    Some(format!(
        "{why}\n  hint: raise `memory:` of agent `{}` in .rascal/config.yaml",
        spec.agent_name()
    ))
}
