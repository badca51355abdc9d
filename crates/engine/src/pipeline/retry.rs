//! `rascal retry RUN CANDIDATE --feedback TEXT`: a human sends one candidate
//! of a finished run back to its author with feedback. The run goes on in
//! the same journal: the retry decision, the new attempt (layers 2 → 4 → 3
//! → 5 again, in the same worktree), cross-testing again with the run's
//! other candidates (as they ended), a new ranking and a new verdict — the
//! earlier attempts stay recorded.

use crate::pipeline::prepare::{RetryStart, Setup};
use crate::pipeline::{PipelineError, PreparedRun, RunRequest};
use rascal_core::config::spec::Task;
use rascal_core::model::decision::{Decision, DecisionKind};
use rascal_core::model::event::RunEvent;
use rascal_exec::git::workspace;
use std::path::{Path, PathBuf};

/// Record the retry decision and prepare the candidate's next attempt.
pub fn prepare_retry(
    repo_dir: &Path,
    run: &str,
    candidate: &str,
    feedback: &str,
    who: &str,
    rascal_exe: PathBuf,
) -> Result<PreparedRun, PipelineError> {
    if feedback.trim().is_empty() {
        return Err(PipelineError::Usage(
            "a retry needs feedback: say what the agent should fix (--feedback TEXT)".into(),
        ));
    }
    let repo = workspace::open(repo_dir)?;
    let mut store = crate::store::project::store_at(&repo)?;
    let state = workspace::files_dir(&repo);
    store.mark_interrupted()?;
    let events = store.events(run)?;
    let summary = rascal_core::model::summary::RunSummary::from_events(&events);
    if summary.status == "running" {
        return Err(PipelineError::Usage(format!(
            "run {run} is still running\n  hint: wait for it to finish (or retry from the TUI, which sends the decision to the live run)"
        )));
    }
    let cand = summary
        .candidate(candidate)
        .map_err(|e| PipelineError::Usage(e.to_string()))?;
    let worktree = PathBuf::from(&cand.worktree);
    if !worktree.exists() {
        return Err(PipelineError::Usage(format!(
            "candidate `{candidate}`'s worktree {} is gone\n  hint: start a new run instead",
            worktree.display()
        )));
    }
    let base =
        git2::Oid::from_str(&summary.base).map_err(|e| PipelineError::Usage(e.to_string()))?;
    let mut config = crate::pipeline::prepare::config_as_recorded(&repo, base, &events)?;
    let agent = agent_of(&config, &cand.agent)?;
    let task = last_task(&events, &summary);
    crate::pipeline::prepare::narrow_permissions(&mut config, &task);
    let holdout = std::sync::Arc::new(
        rascal_exec::git::holdout::Holdout::resolve(&repo, base, &task.holdout).unwrap_or_default(),
    );
    let workdir = workspace::workdir(&repo);
    let rebuild = crate::pipeline::combine::Others {
        config: &config,
        run,
        state: &state,
        repo: &workdir,
        base,
        task: &task,
        holdout: &holdout,
    };
    // The others as they ended: cross-tested again with the new attempt
    // (a retry never drops the evidence its run had), then ranked with it.
    let others = rebuild.outcomes(&summary, Some(candidate));
    if let Some(why) = crate::pipeline::budget::retry_refusal(&config, &summary, candidate) {
        return Err(PipelineError::Usage(format!(
            "retry of `{candidate}` refused: {why}\n  hint: budgets are set in .rascal/config.yaml (`budget:` for the run, `agents.{}.budget` for each of its candidates); start a new run to spend more",
            cand.agent
        )));
    }
    let decision = Decision::new(
        Some(candidate),
        DecisionKind::Retry {
            feedback: feedback.trim().to_string(),
        },
        who,
        "",
    );
    store.append(run, &[RunEvent::DecisionRecorded { decision }])?;
    store.resume_run(run)?;
    let info = info_of(cand);
    let request = RunRequest::new(
        workspace::workdir(&repo),
        &task.instruction,
        vec![cand.agent.clone()],
        rascal_exe,
    );
    Ok(PreparedRun::retried(
        Setup {
            run: run.to_string(),
            config,
            base,
            repo_dir: workspace::workdir(&repo),
            state,
            candidates: vec![(info, agent)],
            task,
            request,
            store,
        },
        RetryStart {
            candidate: cand.id.clone(),
            attempt: cand.attempt + 1,
            feedback: feedback.trim().to_string(),
            others,
        },
    ))
}

/// The retried candidate's agent, as the config at the base has it.
fn agent_of(
    config: &rascal_core::config::Config,
    name: &str,
) -> Result<rascal_core::config::AgentConfig, PipelineError> {
    config.main.agents.get(name).cloned().ok_or_else(|| {
        PipelineError::Usage(format!(
            "agent `{name}` is no longer in .rascal/config.yaml at the base commit"
        ))
    })
}

/// The last task journalled: a planned run's approved one (else the
/// run's instruction).
fn last_task(events: &[RunEvent], summary: &rascal_core::model::summary::RunSummary) -> Task {
    events
        .iter()
        .rev()
        .find_map(|e| match e {
            RunEvent::TaskLoaded { task, .. } => Some((**task).clone()),
            _ => None,
        })
        .unwrap_or_else(|| Task::from_instruction(summary.instruction.clone()))
}

/// The retried candidate as the run announced it.
fn info_of(
    cand: &rascal_core::model::summary::CandidateSummary,
) -> rascal_core::model::event::CandidateInfo {
    rascal_core::model::event::CandidateInfo {
        id: cand.id.clone(),
        agent: cand.agent.clone(),
        runtime: cand.runtime.clone(),
        worktree: cand.worktree.clone(),
        unsandboxed: cand.unsandboxed,
    }
}
