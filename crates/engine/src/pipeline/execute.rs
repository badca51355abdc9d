//! Runs a prepared run: every candidate to its verdict (in parallel, within
//! `max_parallel`), live decisions, the comparator's ranking and the run's
//! verdict.

use crate::layers::compare::{self, Contender};
use crate::pipeline::candidate::{CandidateJob, CandidateOutcome, HumanFeedback};
use crate::pipeline::compare::agree;
use crate::pipeline::journal::{spawn_journal, Journal};
use crate::pipeline::judge::{ask_judge, Tie};
use crate::pipeline::prepare::{PreparedRun, RetryStart};
use crate::pipeline::request::{PipelineError, RunOutcome, RunRequest};
use crate::pipeline::resume::Resumption;
use rascal_core::config::{LauncherKind, OnNoPass};
use rascal_core::model::decision::{Decision, DecisionKind};
use rascal_core::model::event::{run_exit_code, run_verdict, CandidateInfo, RunEvent};
use rascal_core::model::ranking::Ranking;
use rascal_core::model::state::State;
use rascal_core::model::verdict::Verdict;
use rascal_exec::agents::ask::Site;
use rascal_exec::exec::launch::{docker::DockerLauncher, process::ProcessLauncher, Launcher};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

mod decider;
mod jobs;
mod ranking;

use decider::Decider;
use jobs::JobTemplate;

/// Run every candidate to its verdict. Events go to `subscriber` after they
/// are journalled. `cancel` stops every agent and command.
pub async fn execute(
    prepared: PreparedRun,
    subscriber: mpsc::Sender<RunEvent>,
    cancel: CancellationToken,
) -> Result<RunOutcome, PipelineError> {
    let (_tx, rx) = mpsc::unbounded_channel();
    execute_with(prepared, subscriber, cancel, rx).await
}

/// `execute`, taking decisions (cancel a candidate, escalate, override,
/// select…) while the run is live. Each is journalled as
/// `RunEvent::DecisionRecorded`; cancels stop the candidate at once. After
/// the run has finished, record decisions with `record_decision`.
pub async fn execute_with(
    prepared: PreparedRun,
    subscriber: mpsc::Sender<RunEvent>,
    cancel: CancellationToken,
    mut decisions: mpsc::UnboundedReceiver<Decision>,
) -> Result<RunOutcome, PipelineError> {
    let PreparedRun {
        run,
        config,
        base,
        repo_dir,
        state,
        candidates,
        task,
        task_source,
        worktree,
        request,
        store,
        resume,
        retry,
        combine,
    } = prepared;
    let launcher = launcher_for(&request, &config);
    warm_up(&launcher, &candidates);
    let continued = resume.is_some() || retry.is_some() || combine.is_some();
    let budgets = budgets(&store, &run, &config, &candidates, continued);
    let (journal, writer) = spawn_journal(store, run.clone(), subscriber, cancel.clone());
    let mut worktrees: BTreeMap<String, PathBuf> = candidates
        .iter()
        .map(|(c, _)| (c.id.clone(), PathBuf::from(&c.worktree)))
        .collect();
    let mut jobs = JobTemplate {
        run,
        config,
        base,
        repo_dir,
        state,
        request,
        journal,
        launcher,
        task,
        resume,
        human_feedback: Default::default(),
        budgets,
        brief: combine
            .as_ref()
            .map(|c| (c.candidate.clone(), c.brief.clone())),
    };
    if !continued {
        jobs.announce(&candidates, task_source, worktree);
        // Plan, then execute: the candidates start with the approved task.
        if jobs.request.plan != crate::pipeline::PlanGate::Off {
            match jobs.plan(&mut decisions, &cancel).await {
                crate::pipeline::plan::Planned::Approved(task) => jobs.task = Arc::new(*task),
                crate::pipeline::plan::Planned::NeedsHuman(why) => {
                    return jobs.end_unplanned(writer, Some(why)).await
                }
                crate::pipeline::plan::Planned::Cancelled => {
                    return jobs.end_unplanned(writer, None).await
                }
            }
        }
    }
    for ev in combine.iter().flat_map(|c| c.announce.iter()) {
        jobs.journal.emit(ev.clone());
    }
    let spawned = jobs.spawn_all(candidates, &retry, &cancel);

    // Decisions while the run is live.
    let run_decisions = Arc::new(std::sync::Mutex::new(Vec::<Decision>::new()));
    let stop_deciding = CancellationToken::new();
    let decider = Decider {
        journal: jobs.journal.clone(),
        cancel: cancel.clone(),
        tokens: spawned.tokens,
        seen: run_decisions.clone(),
        waiting: jobs.human_feedback.clone(),
        stop: stop_deciding.clone(),
    }
    .spawn(decisions);

    // The spec's criteria on the unchanged base, while the candidates run
    // (a planned run checked them before its approval).
    let on_base = jobs.criteria_on_base(continued, &cancel);
    let (mut results, ()) = tokio::join!(join_candidates(spawned.tasks), on_base);
    jobs.retry_finished(&mut results, &spawned.again).await;
    stop_deciding.cancel();
    let _ = decider.await;

    let others = jobs.with_others(combine, retry, &mut results, &mut worktrees);
    let ended = jobs
        .compare_and_rank(&mut results, &worktrees, &others, &cancel)
        .await;
    let (verdict, exit_code) = verdict_and_exit_code(&jobs, &results, ended, &run_decisions);
    jobs.finish(writer, verdict, exit_code).await
}

/// The run's verdict, from every candidate's (those that had finished
/// before a reattach included), and its exit code from how it ended: a
/// candidate, a human's decision or the declarations escalated it, or the
/// strategy escalates a FAIL or a contested run.
fn verdict_and_exit_code(
    jobs: &JobTemplate,
    results: &[CandidateOutcome],
    ended: Ending,
    decisions: &std::sync::Mutex<Vec<Decision>>,
) -> (Verdict, i32) {
    // Candidates that had finished before a reattach count for the verdict.
    let earlier: Vec<Verdict> = jobs
        .resume
        .as_ref()
        .map(|r| r.finished.clone())
        .unwrap_or_default();
    let verdicts: Vec<Verdict> = earlier
        .into_iter()
        .chain(results.iter().map(|r| r.verdict))
        .collect();
    let verdict = run_verdict(&verdicts);
    let escalated = ended.declarations_escalate
        || results.iter().any(|r| r.escalated)
        || decisions
            .lock()
            .map(|v| v.iter().any(|d| d.kind == DecisionKind::Escalate))
            .unwrap_or(false)
        || ((verdict == Verdict::Fail || ended.contested)
            && jobs.config.main.strategy.on_no_pass == OnNoPass::Escalate);
    let exit_code = final_exit_code(
        verdict,
        Ending {
            escalated,
            strict: jobs.request.strict,
            ..ended
        },
    );
    (verdict, exit_code)
}

/// How a run ended besides its verdict.
#[derive(Debug, Clone, Copy, Default)]
struct Ending {
    /// A candidate or a human escalated it, or the strategy escalates a
    /// FAIL or a contested run.
    escalated: bool,
    /// Candidates passed, but nothing settles which is right.
    contested: bool,
    /// Most (or all) candidates said the task cannot be done.
    declarations_escalate: bool,
    /// `--strict`: a WARN fails.
    strict: bool,
}

/// The run's exit code: its verdict's (a FAIL escalated: 3), made strict when
/// asked; declarations that the task cannot be done escalate (3) whatever
/// passed beside them; a contested run that did not fail is 4.
fn final_exit_code(verdict: Verdict, e: Ending) -> i32 {
    let mut exit_code = run_exit_code(verdict, e.escalated);
    if e.strict {
        exit_code = rascal_core::model::verdict::strict_exit_code(verdict, exit_code);
    }
    if e.declarations_escalate {
        run_exit_code(Verdict::Fail, true)
    } else if e.contested && verdict != Verdict::Fail {
        rascal_core::model::verdict::CONTESTED_EXIT_CODE
    } else {
        exit_code
    }
}

/// The run's budgets. A retry or a reattach (`continued`) goes on from
/// what the journal holds: the budgets count what earlier attempts spent.
fn budgets(
    store: &crate::store::Store,
    run: &str,
    config: &rascal_core::config::Config,
    candidates: &[(CandidateInfo, rascal_core::config::AgentConfig)],
    continued: bool,
) -> crate::pipeline::budget::Budgets {
    let earlier_summary = continued
        .then(|| store.events(run).ok())
        .flatten()
        .map(|events| rascal_core::model::summary::RunSummary::from_events(&events));
    crate::pipeline::budget::Budgets::new(config, candidates, earlier_summary.as_ref())
}

/// The ranking's contenders (their changes moved, not copied: a change of
/// 100,000 files is tens of MiB).
fn contenders(results: &mut [CandidateOutcome]) -> Vec<Contender> {
    results
        .iter_mut()
        .map(|r| {
            Contender::new(
                &r.id,
                r.verdict,
                r.finished_cleanly,
                &r.reports,
                r.changes.take().unwrap_or_default(),
                r.usage,
            )
        })
        .collect()
}

/// Wait for the journal's writer to flush everything (every sender gone).
async fn wait_for_writer(
    writer: std::thread::JoinHandle<Result<(), crate::store::StoreError>>,
) -> Result<(), PipelineError> {
    let writer_result = tokio::task::spawn_blocking(move || writer.join())
        .await
        .ok()
        .and_then(|r| r.ok());
    if let Some(Err(e)) = writer_result {
        return Err(e.into());
    }
    Ok(())
}

/// Wait for every candidate's task; a panicking one counts as a FAIL and
/// the others go on.
async fn join_candidates(
    tasks: Vec<tokio::task::JoinHandle<CandidateOutcome>>,
) -> Vec<CandidateOutcome> {
    let mut results = Vec::new();
    for t in tasks {
        match t.await {
            Ok(r) => results.push(r),
            // A panicking candidate task counts as a FAIL; the others go on.
            Err(e) => eprintln!("rascal: internal error in a candidate task: {e}"),
        }
    }
    results
}

/// The launcher the run's agents go through (the request's, else the
/// config's).
fn launcher_for(request: &RunRequest, config: &rascal_core::config::Config) -> Arc<dyn Launcher> {
    match request.launcher.unwrap_or(config.main.launcher) {
        LauncherKind::Process => Arc::new(ProcessLauncher::default()),
        LauncherKind::Docker => Arc::new(DockerLauncher::new()),
        LauncherKind::Kubernetes => Arc::new(
            rascal_exec::exec::launch::kubernetes::KubernetesLauncher::new(
                config.main.kubernetes.clone().unwrap_or_default(),
            ),
        ),
    }
}

/// What every candidate will ask for, asked now, while the journal and
/// the candidates' jobs are set up: the launcher's engine and images, and
/// whether bubblewrap works here (the checks' sandbox).
fn warm_up(
    launcher: &Arc<dyn Launcher>,
    candidates: &[(CandidateInfo, rascal_core::config::AgentConfig)],
) {
    let agents: Vec<rascal_core::config::AgentConfig> =
        candidates.iter().map(|(_, a)| a.clone()).collect();
    let l = launcher.clone();
    tokio::spawn(async move { l.warm(&agents).await });
    tokio::task::spawn_blocking(|| {
        let _ = rascal_exec::exec::sandbox::available();
    });
}

/// How many candidates run at once: the strategy's `max_parallel`, else
/// one per core.
fn max_parallel(config: &rascal_core::config::Config) -> usize {
    config
        .main
        .strategy
        .max_parallel
        .map(|n| n as usize)
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
        })
        .max(1)
}

#[cfg(test)]
mod tests;
