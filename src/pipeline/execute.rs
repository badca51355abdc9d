//! Runs a prepared run: every candidate to its verdict (in parallel, within
//! `max_parallel`), live decisions, the comparator's ranking and the run's
//! verdict.

use crate::agents::ask::Site;
use crate::config::{LauncherKind, OnNoPass};
use crate::exec::launch::{docker::DockerLauncher, process::ProcessLauncher, Launcher};
use crate::layers::compare::{self, Contender};
use crate::model::decision::{Decision, DecisionKind};
use crate::model::event::{run_exit_code, run_verdict, CandidateInfo, RunEvent};
use crate::model::verdict::Verdict;
use crate::pipeline::candidate::{CandidateJob, CandidateOutcome, HumanFeedback};
use crate::pipeline::journal::spawn_journal;
use crate::pipeline::judge::{ask_judge, Tie};
use crate::pipeline::prepare::{PreparedRun, RetryStart};
use crate::pipeline::request::{PipelineError, RunOutcome};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

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
    } = prepared;
    let launcher: Arc<dyn Launcher> = match request.launcher.unwrap_or(config.main.launcher) {
        LauncherKind::Process => Arc::new(ProcessLauncher::default()),
        LauncherKind::Docker => Arc::new(DockerLauncher::new()),
        LauncherKind::Kubernetes => {
            Arc::new(crate::exec::launch::kubernetes::KubernetesLauncher::new(
                config.main.kubernetes.clone().unwrap_or_default(),
            ))
        }
    };
    // A retry or a reattach goes on from what the journal holds: the
    // budgets count what earlier attempts spent.
    let earlier_summary = (resume.is_some() || retry.is_some())
        .then(|| store.events(&run).ok())
        .flatten()
        .map(|events| crate::model::summary::RunSummary::from_events(&events));
    let budgets =
        crate::pipeline::budget::Budgets::new(&config, &candidates, earlier_summary.as_ref());
    let (journal, writer) = spawn_journal(store, run.clone(), subscriber, cancel.clone());
    if resume.is_none() && retry.is_none() {
        journal.emit(RunEvent::RunStarted {
            run: run.clone(),
            repo: repo_dir.to_string_lossy().into_owned(),
            base: base.to_string(),
            instruction: request.instruction.clone(),
            launcher: launcher.name().into(),
            candidates: candidates.iter().map(|(c, _)| c.clone()).collect(),
        });
        if task_source.is_some() || !worktree.is_clean() {
            journal.emit(RunEvent::TaskLoaded {
                source: task_source.unwrap_or_else(|| "instruction".into()),
                task: Box::new((*task).clone()),
                worktree,
            });
        }
    }
    let parallel = config
        .main
        .strategy
        .max_parallel
        .map(|n| n as usize)
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
        })
        .max(1);
    let slots = Arc::new(tokio::sync::Semaphore::new(parallel));
    let mut tokens = std::collections::BTreeMap::new();
    let mut tasks = Vec::new();
    let worktrees: std::collections::BTreeMap<String, PathBuf> = candidates
        .iter()
        .map(|(c, _)| (c.id.clone(), PathBuf::from(&c.worktree)))
        .collect();
    let start_of = |retry: &Option<RetryStart>, id: &str| {
        retry
            .as_ref()
            .filter(|r| r.candidate == id)
            .map(|r| (r.attempt, r.feedback.clone()))
    };
    let human_feedback: HumanFeedback = Default::default();
    let make_job = |info: CandidateInfo,
                    agent: crate::config::AgentConfig,
                    token: CancellationToken,
                    start: Option<(u32, String)>| CandidateJob {
        resume: resume.as_ref().and_then(|r| r.of(&info.id)),
        landed: resume
            .as_ref()
            .and_then(|r| r.agent_reports.get(&info.id).cloned()),
        repo: repo_dir.clone(),
        run: run.clone(),
        info,
        agent,
        config: config.clone(),
        base,
        state: state.clone(),
        request: request.clone(),
        journal: journal.clone(),
        launcher: launcher.clone(),
        cancel: token,
        task: task.clone(),
        start,
        human_feedback: human_feedback.clone(),
        budgets: budgets.clone(),
    };
    let mut again = std::collections::BTreeMap::new();
    for (info, agent) in candidates {
        let start = start_of(&retry, &info.id);
        let token = cancel.child_token();
        tokens.insert(info.id.clone(), token.clone());
        again.insert(
            info.id.clone(),
            (info.clone(), agent.clone(), token.clone()),
        );
        let job = make_job(info, agent, token, start);
        let slots = slots.clone();
        tasks.push(tokio::spawn(async move {
            let _slot = slots.acquire_owned().await;
            job.run().await
        }));
    }

    // Decisions while the run is live.
    let run_decisions = Arc::new(std::sync::Mutex::new(Vec::<Decision>::new()));
    let stop_deciding = CancellationToken::new();
    let decider = {
        let journal = journal.clone();
        let cancel = cancel.clone();
        let seen = run_decisions.clone();
        let waiting = human_feedback.clone();
        let stop = stop_deciding.clone();
        tokio::spawn(async move {
            loop {
                let d = tokio::select! {
                    d = decisions.recv() => d,
                    _ = stop.cancelled() => {
                        // Nothing more is taken live; what was already sent
                        // is still journalled (later senders fall back to
                        // the store).
                        decisions.close();
                        decisions.recv().await
                    }
                };
                let Some(d) = d else { break };
                if let (DecisionKind::Retry { feedback }, Some(c)) = (&d.kind, &d.candidate) {
                    if let Ok(mut m) = waiting.lock() {
                        m.insert(c.clone(), feedback.clone());
                    }
                }
                if d.kind == DecisionKind::Cancel {
                    match d.candidate.as_ref().and_then(|c| tokens.get(c)) {
                        Some(t) => t.cancel(),
                        None => cancel.cancel(),
                    }
                }
                if let Ok(mut v) = seen.lock() {
                    v.push(d.clone());
                }
                journal.emit(RunEvent::DecisionRecorded { decision: d });
            }
        })
    };

    let mut results = Vec::new();
    // Candidates that had finished before a reattach count for the verdict.
    let earlier: Vec<Verdict> = resume
        .as_ref()
        .map(|r| r.finished.clone())
        .unwrap_or_default();
    for t in tasks {
        match t.await {
            Ok(r) => results.push(r),
            // A panicking candidate task counts as a FAIL; the others go on.
            Err(e) => eprintln!("rascal: internal error in a candidate task: {e}"),
        }
    }
    // Retry decisions for candidates that had already finished while the
    // run was live: their next attempt runs now, in the same worktree.
    for _round in 0..3 {
        let pending: Vec<(String, String)> = human_feedback
            .lock()
            .map(|mut m| std::mem::take(&mut *m).into_iter().collect())
            .unwrap_or_default();
        if pending.is_empty() {
            break;
        }
        for (id, text) in pending {
            let (Some(i), Some((info, agent, token))) = (
                results.iter().position(|r: &CandidateOutcome| r.id == id),
                again.get(&id),
            ) else {
                continue;
            };
            let job = make_job(
                info.clone(),
                agent.clone(),
                token.clone(),
                Some((results[i].attempt + 1, text)),
            );
            if let Ok(outcome) = tokio::spawn(job.run()).await {
                results[i] = outcome;
            }
        }
    }
    stop_deciding.cancel();
    let _ = decider.await;

    let others = retry.map(|r| r.others).unwrap_or_default();
    let earlier: Vec<Verdict> = earlier
        .into_iter()
        .chain(others.iter().map(|c| c.verdict))
        .collect();
    let contenders: Vec<Contender> = others
        .into_iter()
        .chain(results.iter_mut().map(|r| {
            // Moved, not copied: a change of 100,000 files is tens of MiB.
            Contender::new(
                &r.id,
                r.verdict,
                r.finished_cleanly,
                &r.reports,
                r.changes.take().unwrap_or_default(),
                r.usage,
            )
        }))
        .collect();
    let mut ranking = compare::rank(&contenders);
    if let Some(judge) = config.verification.as_ref().and_then(|v| v.judge.clone()) {
        let tied = compare::tied_at_top(&ranking);
        if !tied.is_empty() {
            let site = Site {
                hide: crate::exec::confine::private_paths(&repo_dir, &state)
                    .into_iter()
                    .chain(crate::git::holdout::outside_dirs(&task.holdout))
                    .collect(),
                run: run.clone(),
                candidate: "judge".into(),
                dir: state.join("runs").join(&run).join("judge"),
                rascal_exe: request.rascal_exe.clone(),
                attempt: 1,
                tempo: request.tempo,
            };
            let note = ask_judge(&Tie {
                config: &config,
                holdout: &task.holdout,
                judge: &judge,
                instruction: &request.instruction,
                tied: &tied,
                origin: &repo_dir,
                worktrees: &worktrees,
                base,
                site: &site,
                cancel: &cancel,
            })
            .await;
            compare::apply_judge(&mut ranking, note);
        }
    }
    let pick = ranking.pick.clone();
    journal.emit(RunEvent::Ranked {
        ranking: Box::new(ranking),
    });
    if let (true, Some(p)) = (request.auto, &pick) {
        journal.emit(RunEvent::DecisionRecorded {
            decision: Decision::new(
                Some(p),
                DecisionKind::Select,
                "rascal --auto",
                "top of the comparator's ranking",
            ),
        });
    }
    let verdicts: Vec<Verdict> = earlier
        .into_iter()
        .chain(results.iter().map(|r| r.verdict))
        .collect();
    let verdict = run_verdict(&verdicts);
    let escalated = results.iter().any(|r| r.escalated)
        || run_decisions
            .lock()
            .map(|v| v.iter().any(|d| d.kind == DecisionKind::Escalate))
            .unwrap_or(false)
        || (verdict == Verdict::Fail && config.main.strategy.on_no_pass == OnNoPass::Escalate);
    let exit_code = run_exit_code(verdict, escalated);
    journal.emit(RunEvent::RunFinished { verdict, exit_code });
    drop(journal);
    let writer_result = tokio::task::spawn_blocking(move || writer.join())
        .await
        .ok()
        .and_then(|r| r.ok());
    if let Some(Err(e)) = writer_result {
        return Err(e.into());
    }
    Ok(RunOutcome {
        run,
        verdict,
        exit_code,
    })
}
