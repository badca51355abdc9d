//! `rascal attach RUN`: the rest of an interrupted run, prepared from its
//! journal (see `resume`) and the containers still running.

use crate::pipeline::{PipelineError, PreparedRun, RunRequest};
use crate::store::Store;
use rascal_core::config::LauncherKind;
use rascal_core::model::event::{CandidateInfo, RunEvent};
use rascal_exec::git::workspace;
use std::path::{Path, PathBuf};

use crate::pipeline::prepare::Setup;
use crate::pipeline::resume::Resumption;
use rascal_core::config::spec::Task;

/// Prepare the rest of run `run` in the repository at `repo`. Blocking:
/// call it outside an async runtime.
pub fn prepare_attach(
    repo_path: &Path,
    run: &str,
    rascal_exe: PathBuf,
) -> Result<PreparedRun, PipelineError> {
    let repo = workspace::open(repo_path)?;
    let mut store = crate::store::project::store_at(&repo)?;
    let state = workspace::files_dir(&repo);
    store.mark_interrupted()?;
    let events = store.events(run)?;
    let Some(RunEvent::RunStarted {
        base,
        instruction,
        launcher,
        candidates,
        ..
    }) = events.first().cloned()
    else {
        return Err(PipelineError::Usage(format!(
            "run `{run}` has no start record\n  hint: `rascal show {run}` prints what was recorded"
        )));
    };
    refuse_unattachable(&store, run, &events, &launcher)?;
    let base_oid = git2::Oid::from_str(&base).map_err(|e| {
        PipelineError::Usage(format!(
            "run `{run}` records a bad base commit `{base}`: {e}"
        ))
    })?;
    let mut config = crate::pipeline::prepare::config_as_recorded(&repo, base_oid, &events)?;
    let resumption = Resumption::from_events(&events);
    // The same narrowing as when the run started (journalled with the task).
    if let Some(task) = &resumption.task {
        crate::pipeline::prepare::narrow_permissions(&mut config, task);
    }
    let planned = config.main.strategy.plan || resumption.task.as_ref().is_some_and(|t| t.plan);
    if plan_unapproved(&events, planned) {
        return Err(PipelineError::Usage(format!(
            "run `{run}` was interrupted before its plan was approved: no candidate started, and none starts without an approved plan\n  hint: run the task again with `rascal run --plan`"
        )));
    }
    let pending = pending_candidates(run, &events, candidates, &config)?;
    let kube = launcher == "kubernetes";
    engine_reachable(run, &config, kube)?;
    store.resume_run(run)?;
    let mut request = RunRequest::new(
        repo_path.to_path_buf(),
        &instruction,
        Vec::new(),
        rascal_exe,
    );
    request.base = base;
    request.launcher = Some(if kube {
        LauncherKind::Kubernetes
    } else {
        LauncherKind::Docker
    });
    // The task as the journal recorded it, else the bare instruction.
    let task = resumption
        .task
        .clone()
        .unwrap_or_else(|| Task::from_instruction(request.instruction.clone()));
    Ok(PreparedRun::resumed(
        Setup {
            run: run.to_string(),
            config,
            base: base_oid,
            repo_dir: workspace::workdir(&repo),
            state,
            candidates: pending,
            task,
            request,
            store,
        },
        resumption,
    ))
}

/// A run that can be attached to: not finished, run by a launcher whose
/// agents outlive rascal (docker, kubernetes), and not still being run.
fn refuse_unattachable(
    store: &Store,
    run: &str,
    events: &[RunEvent],
    launcher: &str,
) -> Result<(), PipelineError> {
    if events
        .iter()
        .any(|e| matches!(e, RunEvent::RunFinished { .. }))
    {
        return Err(PipelineError::Usage(format!(
            "run `{run}` has already finished; nothing to attach to\n  hint: `rascal show {run}` prints it"
        )));
    }
    if launcher != "docker" && launcher != "kubernetes" {
        return Err(PipelineError::Usage(format!(
            "run `{run}` used the `{launcher}` launcher: its agents stopped with the rascal that ran them, so there is nothing to reattach\n  hint: `rascal show {run}` prints what landed; run the task again"
        )));
    }
    if store.run_status(run)?.as_deref() == Some("running") {
        return Err(PipelineError::Usage(format!(
            "run `{run}` is still being run by a live rascal process\n  hint: watch it with `rascal show {run}`, or stop that process first"
        )));
    }
    Ok(())
}

/// The candidates that had not finished, with their agents as the config
/// at the base has them; a workspace whose `.git` is no longer the folder
/// rascal made refuses the attach.
fn pending_candidates(
    run: &str,
    events: &[RunEvent],
    candidates: Vec<CandidateInfo>,
    config: &rascal_core::config::Config,
) -> Result<Vec<(CandidateInfo, rascal_core::config::AgentConfig)>, PipelineError> {
    let finished: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::CandidateFinished { candidate, .. } => Some(candidate.as_str()),
            _ => None,
        })
        .collect();
    let mut pending: Vec<(CandidateInfo, rascal_core::config::AgentConfig)> = Vec::new();
    for c in candidates {
        if finished.contains(&c.id.as_str()) {
            continue;
        }
        let agent = config.main.agents.get(&c.agent).cloned().ok_or_else(|| {
            PipelineError::Usage(format!(
                "agent `{}` of run `{run}` is not in .rascal/config.yaml at its base commit",
                c.agent
            ))
        })?;
        // A workspace whose `.git` is no longer the folder rascal made is
        // not resumed: git there would read a repository the agent chose.
        let ws = Path::new(&c.worktree);
        if let Some(why) = ws
            .is_dir()
            .then(|| rascal_exec::git::gitdir::check(ws).err())
            .flatten()
        {
            return Err(PipelineError::Usage(format!(
                "cannot attach to run `{run}`: candidate `{}`: {why}",
                c.id
            )));
        }
        pending.push((c, agent));
    }
    Ok(pending)
}

/// Without an engine the run stays interrupted, to be attached later
/// (rather than its candidates failing for want of an engine).
fn engine_reachable(
    run: &str,
    config: &rascal_core::config::Config,
    kube: bool,
) -> Result<(), PipelineError> {
    let engine = rascal_exec::exec::runtime()
        .map_err(|e| PipelineError::Usage(e.to_string()))?
        .block_on(async {
            if kube {
                let k = config.main.kubernetes.clone().unwrap_or_default();
                rascal_exec::exec::launch::kubernetes::cluster::reachable(&k).await
            } else {
                rascal_exec::exec::launch::docker::connect()
                    .await
                    .map(|_| ())
            }
        });
    if let Err(e) = engine {
        return Err(PipelineError::Usage(format!(
            "cannot attach to run `{run}`: {e}"
        )));
    }
    Ok(())
}

/// Whether the run was planned (a proposal journalled, or `planned`: the
/// task or config asks for a plan) and no plan was approved: attaching
/// would start its candidates without the human's approval, on the task
/// as it was before the plan.
fn plan_unapproved(events: &[RunEvent], planned: bool) -> bool {
    let proposed = events
        .iter()
        .any(|e| matches!(e, RunEvent::PlanProposed { .. }));
    let approved = events.iter().any(|e| {
        matches!(
            e,
            RunEvent::DecisionRecorded { decision }
                if matches!(decision.kind, rascal_core::model::decision::DecisionKind::ApprovePlan { .. })
        )
    });
    (proposed || planned) && !approved
}

#[cfg(test)]
mod tests {
    use super::plan_unapproved;
    use rascal_core::model::decision::{Decision, DecisionKind};
    use rascal_core::model::event::RunEvent;

    #[test]
    fn a_run_interrupted_before_its_plan_was_approved_is_not_attached() {
        let proposed = RunEvent::PlanProposed {
            agent: "planner".into(),
            criteria: Vec::new(),
            constraints: Vec::new(),
            problem: None,
        };
        let approved = RunEvent::DecisionRecorded {
            decision: Decision::new(
                None,
                DecisionKind::ApprovePlan {
                    criteria: Vec::new(),
                    constraints: Vec::new(),
                    changes: Vec::new(),
                },
                "me",
                "approved as proposed",
            ),
        };
        assert!(plan_unapproved(std::slice::from_ref(&proposed), false));
        assert!(
            plan_unapproved(&[], true),
            "planned, the planner never answered"
        );
        assert!(!plan_unapproved(&[proposed, approved.clone()], true));
        assert!(!plan_unapproved(&[approved], true));
        assert!(!plan_unapproved(&[], false), "not a planned run");
    }
}
