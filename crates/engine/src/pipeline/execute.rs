//! Runs a prepared run: every candidate to its verdict (in parallel, within
//! `max_parallel`), live decisions, the comparator's ranking and the run's
//! verdict.

use crate::agents::ask::Site;
use crate::config::{LauncherKind, OnNoPass};
use crate::exec::launch::{docker::DockerLauncher, process::ProcessLauncher, Launcher};
use crate::layers::compare::{self, Contender};
use crate::model::decision::{Decision, DecisionKind};
use crate::model::event::{run_exit_code, run_verdict, CandidateInfo, RunEvent};
use crate::model::ranking::Ranking;
use crate::model::state::State;
use crate::model::verdict::Verdict;
use crate::pipeline::candidate::{CandidateJob, CandidateOutcome, HumanFeedback};
use crate::pipeline::compare::agree;
use crate::pipeline::journal::{spawn_journal, Journal};
use crate::pipeline::judge::{ask_judge, Tie};
use crate::pipeline::prepare::{PreparedRun, RetryStart};
use crate::pipeline::request::{PipelineError, RunOutcome, RunRequest};
use crate::pipeline::resume::Resumption;
use std::collections::BTreeMap;
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

    // Candidates that had finished before a reattach count for the verdict.
    let earlier: Vec<Verdict> = jobs
        .resume
        .as_ref()
        .map(|r| r.finished.clone())
        .unwrap_or_default();
    // The spec's criteria on the unchanged base, while the candidates run
    // (a planned run checked them before its approval).
    let on_base = async {
        if continued || jobs.request.plan != crate::pipeline::PlanGate::Off {
            return;
        }
        let p = crate::pipeline::vacuity::OnBaseRun {
            run: &jobs.run,
            config: &jobs.config,
            repo_dir: &jobs.repo_dir,
            state: &jobs.state,
            base: jobs.base,
            holdout: &jobs.task.holdout,
            journal: &jobs.journal,
            cancel: &cancel,
        };
        crate::pipeline::vacuity::check(&p, &jobs.task.acceptance_criteria).await;
    };
    let (mut results, ()) = tokio::join!(join_candidates(spawned.tasks), on_base);
    jobs.retry_finished(&mut results, &spawned.again).await;
    stop_deciding.cancel();
    let _ = decider.await;

    // A combine: the run's other candidates, as they ended, are cross-
    // tested and ranked with the combined one.
    let mut recorded = None;
    // Who a combined candidate was combined from: they do not contest it
    // where it passes all their tests.
    let mut sources: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if let Some(c) = combine {
        for ev in &c.announce {
            if let RunEvent::CandidateAdded {
                candidate,
                combined_from,
            } = ev
            {
                sources.insert(candidate.id.clone(), combined_from.clone());
            }
        }
        worktrees.extend(c.worktrees);
        recorded = Some(c.recorded);
        // Where the combined change's lines came from: new code is listed
        // and keeps it from being the automatic pick.
        for o in results.iter_mut().filter(|o| o.id == c.candidate) {
            if o.changes.is_some() && o.finished_cleanly {
                let r = c.provenance.report(&jobs.repo_dir, jobs.base, o);
                agree::land(&jobs.journal, o, r);
            }
        }
        results = c.others.into_iter().chain(results).collect();
    }
    // A retry: the run's other candidates, as they ended, are cross-tested
    // again with the new attempt and ranked with it.
    if let Some(r) = retry {
        results = r.others.into_iter().chain(results).collect();
    }
    let gate: BTreeMap<String, Verdict> =
        results.iter().map(|r| (r.id.clone(), r.verdict)).collect();
    // Base tests a candidate updated for an API it altered: the others
    // say whether the task asked for that.
    crate::pipeline::compare::api_change::settle(&mut results, &jobs.journal);
    // A human's earlier answers to this task's questions are tests.
    let kept = crate::pipeline::answers::kept(&jobs.repo_dir, &jobs.request.instruction);
    let probe_timeout = crate::pipeline::compare::discriminate::configured(&jobs.config)
        .map_or(std::time::Duration::from_secs(120), |d| {
            d.probe_timeout.get()
        });
    crate::pipeline::answers::judge(
        &jobs.config,
        &kept,
        &mut results,
        &jobs.base.to_string(),
        probe_timeout,
        &jobs.journal,
        &cancel,
    )
    .await;
    // Layer 1: the passing candidates test each other, then the ranking.
    let agreement = agree::agree(&jobs.config, &jobs.journal, &mut results, &cancel).await;
    if let Some(recorded) = &recorded {
        crate::pipeline::combine::settle(recorded, &gate, &results, &jobs.journal);
    }
    let mut contenders = contenders(&mut results);
    // Every candidate's state, for the declarations' escalation.
    let states: Vec<State> = jobs
        .resume
        .as_ref()
        .map(|r| r.states.clone())
        .unwrap_or_default()
        .into_iter()
        .chain(contenders.iter().map(|c| {
            if c.impossible {
                State::Impossible
            } else {
                State::of(c.verdict)
            }
        }))
        .collect();
    let declarations_escalate = crate::model::impossible::escalates(&states);
    if let Some(m) = &agreement {
        agree::with_standings(&mut contenders, m);
    }
    let mut ranking = jobs.rank(&contenders, &worktrees, &cancel).await;
    if let Some(m) = agreement {
        agree::settle(
            &mut ranking,
            m,
            &contenders,
            jobs.config.main.compare.on_disagreement,
            &sources,
        );
    }
    agree::unseparated(&mut ranking, &contenders);
    jobs.probe_unseparated(&mut ranking, &results, &worktrees, &cancel)
        .await;
    let contested = ranking.contested.is_some();
    // A run the declarations escalate is a human's to decide: `--auto`
    // selects nothing.
    jobs.emit_ranking(ranking, !declarations_escalate);
    let verdicts: Vec<Verdict> = earlier
        .into_iter()
        .chain(results.iter().map(|r| r.verdict))
        .collect();
    let verdict = run_verdict(&verdicts);
    let escalated = declarations_escalate
        || results.iter().any(|r| r.escalated)
        || run_decisions
            .lock()
            .map(|v| v.iter().any(|d| d.kind == DecisionKind::Escalate))
            .unwrap_or(false)
        || ((verdict == Verdict::Fail || contested)
            && jobs.config.main.strategy.on_no_pass == OnNoPass::Escalate);
    let exit_code = final_exit_code(
        verdict,
        Ending {
            escalated,
            contested,
            declarations_escalate,
            strict: jobs.request.strict,
        },
    );
    jobs.journal
        .emit(RunEvent::RunFinished { verdict, exit_code });
    // Containers removed off the critical path are gone before rascal is.
    jobs.launcher.settle().await;
    let run = jobs.run.clone();
    // The journal's writer ends once every sender is gone.
    drop(jobs);
    wait_for_writer(writer).await?;
    Ok(RunOutcome {
        run,
        verdict,
        exit_code,
    })
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
        exit_code = crate::model::verdict::strict_exit_code(verdict, exit_code);
    }
    if e.declarations_escalate {
        run_exit_code(Verdict::Fail, true)
    } else if e.contested && verdict != Verdict::Fail {
        crate::model::verdict::CONTESTED_EXIT_CODE
    } else {
        exit_code
    }
}

/// The run's budgets. A retry or a reattach (`continued`) goes on from
/// what the journal holds: the budgets count what earlier attempts spent.
fn budgets(
    store: &crate::store::Store,
    run: &str,
    config: &crate::config::Config,
    candidates: &[(CandidateInfo, crate::config::AgentConfig)],
    continued: bool,
) -> crate::pipeline::budget::Budgets {
    let earlier_summary = continued
        .then(|| store.events(run).ok())
        .flatten()
        .map(|events| crate::model::summary::RunSummary::from_events(&events));
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
fn launcher_for(request: &RunRequest, config: &crate::config::Config) -> Arc<dyn Launcher> {
    match request.launcher.unwrap_or(config.main.launcher) {
        LauncherKind::Process => Arc::new(ProcessLauncher::default()),
        LauncherKind::Docker => Arc::new(DockerLauncher::new()),
        LauncherKind::Kubernetes => {
            Arc::new(crate::exec::launch::kubernetes::KubernetesLauncher::new(
                config.main.kubernetes.clone().unwrap_or_default(),
            ))
        }
    }
}

/// What every candidate will ask for, asked now, while the journal and
/// the candidates' jobs are set up: the launcher's engine and images, and
/// whether bubblewrap works here (the checks' sandbox).
fn warm_up(
    launcher: &Arc<dyn Launcher>,
    candidates: &[(CandidateInfo, crate::config::AgentConfig)],
) {
    let agents: Vec<crate::config::AgentConfig> =
        candidates.iter().map(|(_, a)| a.clone()).collect();
    let l = launcher.clone();
    tokio::spawn(async move { l.warm(&agents).await });
    tokio::task::spawn_blocking(|| {
        let _ = crate::exec::sandbox::available();
    });
}

/// How many candidates run at once: the strategy's `max_parallel`, else
/// one per core.
fn max_parallel(config: &crate::config::Config) -> usize {
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

/// What every candidate's job in one run shares.
struct JobTemplate {
    run: String,
    config: Arc<crate::config::Config>,
    base: git2::Oid,
    repo_dir: PathBuf,
    state: PathBuf,
    request: RunRequest,
    journal: Journal,
    launcher: Arc<dyn Launcher>,
    task: Arc<crate::config::spec::Task>,
    resume: Option<Resumption>,
    human_feedback: HumanFeedback,
    budgets: crate::pipeline::budget::Budgets,
    /// The candidate with a brief of its own, and the brief (`combine`).
    brief: Option<(String, Arc<crate::pipeline::candidate::Brief>)>,
}

/// A candidate's identity, agent and cancel token: enough to run it again.
type Again = (CandidateInfo, crate::config::AgentConfig, CancellationToken);

/// The candidates' tasks as they were started.
struct Spawned {
    tasks: Vec<tokio::task::JoinHandle<CandidateOutcome>>,
    /// Each candidate's cancel token, for live cancels.
    tokens: BTreeMap<String, CancellationToken>,
    /// What it takes to run each candidate again.
    again: BTreeMap<String, Again>,
}

impl JobTemplate {
    /// Code differs but no test separates it from the pick: the
    /// discriminator's probe (when configured) may turn that into a
    /// question in `ranking`.
    async fn probe_unseparated(
        &self,
        ranking: &mut Ranking,
        results: &[CandidateOutcome],
        worktrees: &BTreeMap<String, PathBuf>,
        cancel: &CancellationToken,
    ) {
        if crate::pipeline::compare::discriminate::configured(&self.config).is_none()
            || ranking.unseparated.is_empty()
        {
            return;
        }
        let ids: Vec<String> = ranking
            .pick
            .iter()
            .chain(ranking.unseparated.iter())
            .cloned()
            .collect();
        let diffs: BTreeMap<String, String> = crate::pipeline::judge::diffs_of(
            &ids,
            &self.repo_dir,
            worktrees,
            self.base,
            &self.task.holdout,
        )
        .into_iter()
        .collect();
        let places: BTreeMap<String, crate::exec::place::Place> = results
            .iter()
            .filter_map(|r| Some((r.id.clone(), r.place.clone()?)))
            .collect();
        let site = self.helper_site("discriminator");
        let base = self.base.to_string();
        let d = crate::pipeline::compare::discriminate::Discriminate {
            config: &self.config,
            instruction: &self.request.instruction,
            diffs: &diffs,
            places: &places,
            base: &base,
            site: &site,
            cancel,
        };
        crate::pipeline::compare::discriminate::discriminate(&d, ranking).await;
    }

    /// Journal the run's start: its candidates, and the task when it came
    /// from a spec or an issue (or the working tree has a note).
    fn announce(
        &self,
        candidates: &[(CandidateInfo, crate::config::AgentConfig)],
        task_source: Option<String>,
        worktree: crate::model::event::WorkingTree,
    ) {
        self.journal.emit(RunEvent::RunStarted {
            run: self.run.clone(),
            repo: self.repo_dir.to_string_lossy().into_owned(),
            base: self.base.to_string(),
            instruction: self.request.instruction.clone(),
            launcher: self.launcher.name().into(),
            candidates: candidates.iter().map(|(c, _)| c.clone()).collect(),
        });
        if task_source.is_some() || !worktree.is_clean() {
            self.journal.emit(RunEvent::TaskLoaded {
                source: task_source.unwrap_or_else(|| "instruction".into()),
                task: Box::new((*self.task).clone()),
                worktree,
            });
        }
    }

    /// Plan the run (see `pipeline::plan`).
    async fn plan(
        &self,
        decisions: &mut mpsc::UnboundedReceiver<Decision>,
        cancel: &CancellationToken,
    ) -> crate::pipeline::plan::Planned {
        let planning = crate::pipeline::plan::Planning {
            run: &self.run,
            config: &self.config,
            request: &self.request,
            repo_dir: &self.repo_dir,
            state: &self.state,
            base: self.base,
            task: &self.task,
            journal: &self.journal,
            cancel,
        };
        crate::pipeline::plan::plan(&planning, decisions).await
    }

    /// End a run whose plan was not approved, before any candidate
    /// started: `why` escalates it to a human (exit 3); None, it was
    /// cancelled (exit 1).
    async fn end_unplanned(
        self,
        writer: std::thread::JoinHandle<Result<(), crate::store::StoreError>>,
        why: Option<String>,
    ) -> Result<RunOutcome, PipelineError> {
        let escalated = why.is_some();
        if let Some(why) = why {
            self.journal.emit(RunEvent::DecisionRecorded {
                decision: Decision::new(None, DecisionKind::Escalate, "rascal", &why),
            });
        }
        let exit_code = run_exit_code(Verdict::Fail, escalated);
        self.journal.emit(RunEvent::RunFinished {
            verdict: Verdict::Fail,
            exit_code,
        });
        self.launcher.settle().await;
        let run = self.run.clone();
        drop(self);
        wait_for_writer(writer).await?;
        Ok(RunOutcome {
            run,
            verdict: Verdict::Fail,
            exit_code,
        })
    }

    /// Journal the ranking, and with `--auto` the selection of its pick
    /// (when `may_select`).
    fn emit_ranking(&self, ranking: Ranking, may_select: bool) {
        let pick = ranking.pick.clone();
        self.journal.emit(RunEvent::Ranked {
            ranking: Box::new(ranking),
        });
        if let (true, true, Some(p)) = (self.request.auto, may_select, &pick) {
            self.journal.emit(RunEvent::DecisionRecorded {
                decision: Decision::new(
                    Some(p),
                    DecisionKind::Select,
                    "rascal --auto",
                    "top of the comparator's ranking",
                ),
            });
        }
    }

    /// The job of one candidate (`start`: a human's retry's attempt and
    /// feedback).
    fn job(
        &self,
        info: CandidateInfo,
        agent: crate::config::AgentConfig,
        token: CancellationToken,
        start: Option<(u32, String)>,
    ) -> CandidateJob {
        CandidateJob {
            resume: self.resume.as_ref().and_then(|r| r.of(&info.id)),
            landed: self
                .resume
                .as_ref()
                .and_then(|r| r.agent_reports.get(&info.id).cloned()),
            repo: self.repo_dir.clone(),
            run: self.run.clone(),
            agent,
            config: self.config.clone(),
            base: self.base,
            state: self.state.clone(),
            request: self.request.clone(),
            journal: self.journal.clone(),
            launcher: self.launcher.clone(),
            cancel: token,
            task: self.task.clone(),
            start,
            human_feedback: self.human_feedback.clone(),
            budgets: self.budgets.clone(),
            brief: self
                .brief
                .as_ref()
                .filter(|(id, _)| *id == info.id)
                .map(|(_, b)| b.clone()),
            info,
        }
    }

    /// Start every candidate, at most `max_parallel` running at once.
    fn spawn_all(
        &self,
        candidates: Vec<(CandidateInfo, crate::config::AgentConfig)>,
        retry: &Option<RetryStart>,
        cancel: &CancellationToken,
    ) -> Spawned {
        let slots = Arc::new(tokio::sync::Semaphore::new(max_parallel(&self.config)));
        let mut spawned = Spawned {
            tasks: Vec::new(),
            tokens: BTreeMap::new(),
            again: BTreeMap::new(),
        };
        for (info, agent) in candidates {
            let start = retry
                .as_ref()
                .filter(|r| r.candidate == info.id)
                .map(|r| (r.attempt, r.feedback.clone()));
            let token = cancel.child_token();
            spawned.tokens.insert(info.id.clone(), token.clone());
            spawned.again.insert(
                info.id.clone(),
                (info.clone(), agent.clone(), token.clone()),
            );
            let job = self.job(info, agent, token, start);
            let slots = slots.clone();
            spawned.tasks.push(tokio::spawn(async move {
                let _slot = slots.acquire_owned().await;
                job.run().await
            }));
        }
        spawned
    }

    /// Retry decisions for candidates that had already finished while the
    /// run was live: their next attempt runs now, in the same worktree.
    async fn retry_finished(
        &self,
        results: &mut [CandidateOutcome],
        again: &BTreeMap<String, Again>,
    ) {
        for _round in 0..3 {
            let pending: Vec<(String, String)> = self
                .human_feedback
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
                let job = self.job(
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
    }

    /// Where a run-level helper agent (`judge`, `discriminator`) runs: in
    /// bubblewrap like an author, its files under the run's `name` folder.
    fn helper_site(&self, name: &str) -> Site {
        Site {
            hide: crate::exec::confine::private_paths(&self.repo_dir, &self.state)
                .into_iter()
                .chain(crate::git::holdout::outside_dirs(&self.task.holdout))
                .collect(),
            run: self.run.clone(),
            candidate: name.into(),
            dir: self.state.join("runs").join(&self.run).join(name),
            rascal_exe: self.request.rascal_exe.clone(),
            attempt: 1,
            tempo: self.request.tempo,
            read_only: Vec::new(),
        }
    }

    /// The comparator's ranking of the contenders; a tie at the top goes
    /// to the judge when one is configured.
    async fn rank(
        &self,
        contenders: &[Contender],
        worktrees: &BTreeMap<String, PathBuf>,
        cancel: &CancellationToken,
    ) -> Ranking {
        let mut ranking = compare::rank(contenders);
        let Some(judge) = self
            .config
            .verification
            .as_ref()
            .and_then(|v| v.judge.clone())
        else {
            return ranking;
        };
        let tied = compare::tied_at_top(&ranking);
        if tied.is_empty() {
            return ranking;
        }
        let site = self.helper_site("judge");
        let note = ask_judge(&Tie {
            config: &self.config,
            holdout: &self.task.holdout,
            judge: &judge,
            instruction: &self.request.instruction,
            tied: &tied,
            origin: &self.repo_dir,
            worktrees,
            base: self.base,
            site: &site,
            cancel,
        })
        .await;
        compare::apply_judge(&mut ranking, note);
        ranking
    }
}

/// Takes decisions while the run is live: journals each, cancels what a
/// cancel names, and queues a retry's feedback for its candidate.
struct Decider {
    journal: Journal,
    cancel: CancellationToken,
    tokens: BTreeMap<String, CancellationToken>,
    /// Every decision taken, for the run's verdict.
    seen: Arc<std::sync::Mutex<Vec<Decision>>>,
    waiting: HumanFeedback,
    /// Stop taking decisions live.
    stop: CancellationToken,
}

impl Decider {
    /// Take decisions from `decisions` until it closes (or until `stop`,
    /// after what was already sent).
    fn spawn(
        self,
        mut decisions: mpsc::UnboundedReceiver<Decision>,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                let d = tokio::select! {
                    d = decisions.recv() => d,
                    _ = self.stop.cancelled() => {
                        // Nothing more is taken live; what was already sent
                        // is still journalled (later senders fall back to
                        // the store).
                        decisions.close();
                        decisions.recv().await
                    }
                };
                let Some(d) = d else { break };
                self.take(d);
            }
        })
    }

    /// One decision: a retry's feedback waits for its candidate, a cancel
    /// stops its candidate (or the run), and it is journalled.
    fn take(&self, d: Decision) {
        if let (DecisionKind::Retry { feedback }, Some(c)) = (&d.kind, &d.candidate) {
            if let Ok(mut m) = self.waiting.lock() {
                m.insert(c.clone(), feedback.clone());
            }
        }
        if d.kind == DecisionKind::Cancel {
            match d.candidate.as_ref().and_then(|c| self.tokens.get(c)) {
                Some(t) => t.cancel(),
                None => self.cancel.cancel(),
            }
        }
        if let Ok(mut v) = self.seen.lock() {
            v.push(d.clone());
        }
        self.journal
            .emit(RunEvent::DecisionRecorded { decision: d });
    }
}

#[cfg(test)]
mod tests;
