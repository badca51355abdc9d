//! The orchestrator: one run of a task on N candidates. Each candidate gets a
//! worktree at the base commit, its agent runs through a launcher, then the
//! layers judge its ChangeSet. Every step is a `RunEvent`, journalled to the
//! store before it reaches the subscriber (TUI or headless printer).

pub mod policy;
pub mod resume;
pub mod retry;
pub mod sequence;

use crate::agents::events::{self, AgentEvent, Usage};
use crate::agents::{self, LaunchContext};
use crate::config::spec::Task;
use crate::config::{Config, ConfigError, LauncherKind, OnNoPass};
use crate::exec::launch::{
    docker::DockerLauncher, process::ProcessLauncher, LaunchSpec, Launcher, Resume,
};
use crate::exec::runner::{human, LogLine};
use crate::git::workspace::{self, WorkspaceError};
use crate::layers::compare::{self, Contender};
use crate::layers::review::{ReviewOutcome, Site};
use crate::model::decision::{Decision, DecisionKind};
use crate::model::event::{candidate_verdict, run_exit_code, run_verdict, CandidateInfo, RunEvent};
use crate::model::verdict::{Issue, Layer, Report, Severity, Status, Verdict};
use crate::pipeline::sequence::{Origin, Progress, Verification};
use crate::store::{Store, StoreError};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// Any directory inside the target repository.
    pub repo: PathBuf,
    /// The base ref (default HEAD).
    pub base: String,
    pub instruction: String,
    /// Agent names from `.rascal/config.yaml`; empty = the strategy's agents.
    pub agents: Vec<String>,
    /// The rascal executable (scripted agents run through it).
    pub rascal_exe: PathBuf,
    /// Overrides every agent's timeout.
    pub timeout: Option<Duration>,
    /// `--spec NAME`: the task is `.rascal/specs/NAME.yaml` at the base commit.
    pub spec: Option<String>,
    /// `--issue FILE.md`: the task is a Markdown issue body.
    pub issue: Option<PathBuf>,
    /// Candidates per agent (overrides `strategy.n`).
    pub n: Option<u32>,
    /// Headless auto policy: select the comparator's pick when it passes.
    pub auto: bool,
    /// Overrides `launcher:` of .rascal/config.yaml.
    pub launcher: Option<LauncherKind>,
    /// `--allow-path` / `--deny-path`: narrows the permissions for this run.
    pub scope: Option<crate::config::PermissionsConfig>,
}

impl RunRequest {
    pub fn new(repo: PathBuf, instruction: &str, agents: Vec<String>, rascal_exe: PathBuf) -> Self {
        RunRequest {
            repo,
            base: "HEAD".into(),
            instruction: instruction.to_string(),
            agents,
            rascal_exe,
            ..RunRequest::default()
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error("{0}")]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Workspace(#[from] WorkspaceError),
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("{0}")]
    Usage(String),
}

impl PipelineError {
    /// Exit code: all of these are usage or setup errors (2).
    pub fn exit_code(&self) -> i32 {
        2
    }
}

/// The outcome of a finished run.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub run: String,
    pub verdict: Verdict,
    pub exit_code: i32,
}

/// Sends events to the journal thread, which stores then forwards them.
#[derive(Clone)]
struct Journal {
    tx: std::sync::mpsc::Sender<RunEvent>,
}

impl Journal {
    fn emit(&self, ev: RunEvent) {
        let _ = self.tx.send(ev);
    }
}

fn spawn_journal(
    mut store: Store,
    run: String,
    subscriber: mpsc::UnboundedSender<RunEvent>,
) -> (Journal, std::thread::JoinHandle<Result<(), StoreError>>) {
    let (tx, rx) = std::sync::mpsc::channel::<RunEvent>();
    let handle = std::thread::spawn(move || {
        let mut first_error = None;
        while let Ok(ev) = rx.recv() {
            let mut batch = vec![ev];
            while batch.len() < 1024 {
                match rx.try_recv() {
                    Ok(ev) => batch.push(ev),
                    Err(_) => break,
                }
            }
            if let Err(e) = store.append(&run, &batch) {
                if first_error.is_none() {
                    first_error = Some(e);
                }
            }
            for ev in batch {
                let _ = subscriber.send(ev);
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    });
    (Journal { tx }, handle)
}

/// A fresh run id like `r-20261129-1a2b`.
pub fn new_run_id(store: &Store) -> Result<String, StoreError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let days = now.as_secs() / 86_400;
    let (y, m, d) = civil_from_days(days as i64);
    let mut seed = now.as_nanos() as u64 ^ ((std::process::id() as u64) << 32);
    loop {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let id = format!("r-{y:04}{m:02}{d:02}-{:04x}", (seed >> 48) as u16);
        if !store.run_exists(&id)? {
            return Ok(id);
        }
    }
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// A prepared run: config loaded, worktrees made, store opened. Split from
/// `execute` so setup errors (exit 2) come before anything is launched.
pub struct PreparedRun {
    pub run: String,
    pub config: Arc<Config>,
    pub base: git2::Oid,
    pub repo_dir: PathBuf,
    pub state: PathBuf,
    pub candidates: Vec<(CandidateInfo, crate::config::AgentConfig)>,
    /// The task with its criteria (Layer 3); `task_source` is None for a
    /// bare command-line instruction.
    pub task: Arc<Task>,
    pub task_source: Option<String>,
    request: RunRequest,
    store: Store,
    /// Set by `rascal attach`: the run already started; these candidates
    /// resume where the journal stopped (see src/reattach.rs).
    pub(crate) resume: Option<crate::pipeline::resume::Resumption>,
    /// Set by `rascal retry`: one finished candidate goes again with a
    /// human's feedback; the others' results stand.
    pub(crate) retry: Option<RetryStart>,
}

/// A human's retry of one candidate of a finished run.
pub(crate) struct RetryStart {
    candidate: String,
    attempt: u32,
    feedback: String,
    /// The other candidates, as they ended, for the new ranking.
    others: Vec<Contender>,
}

impl PreparedRun {
    /// The rest of an interrupted run (src/reattach.rs).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn resumed(
        run: String,
        config: Config,
        base: git2::Oid,
        repo_dir: PathBuf,
        state: PathBuf,
        candidates: Vec<(CandidateInfo, crate::config::AgentConfig)>,
        request: RunRequest,
        store: Store,
        resume: crate::pipeline::resume::Resumption,
    ) -> PreparedRun {
        // The task as the journal recorded it, else the bare instruction.
        let task = resume
            .task
            .clone()
            .unwrap_or_else(|| Task::from_instruction(request.instruction.clone()));
        PreparedRun {
            run,
            config: Arc::new(config),
            base,
            repo_dir,
            state,
            candidates,
            task: Arc::new(task),
            task_source: None,
            request,
            store,
            resume: Some(resume),
            retry: None,
        }
    }
}

impl PreparedRun {
    /// One candidate of a finished run again, with a human's feedback
    /// (src/retry.rs).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn retried(
        run: String,
        config: Config,
        base: git2::Oid,
        repo_dir: PathBuf,
        state: PathBuf,
        candidate: (CandidateInfo, crate::config::AgentConfig),
        task: Task,
        request: RunRequest,
        store: Store,
        attempt: u32,
        feedback: String,
        others: Vec<Contender>,
    ) -> PreparedRun {
        let id = candidate.0.id.clone();
        PreparedRun {
            run,
            config: Arc::new(config),
            base,
            repo_dir,
            state,
            candidates: vec![candidate],
            task: Arc::new(task),
            task_source: None,
            request,
            store,
            resume: None,
            retry: Some(RetryStart {
                candidate: id,
                attempt,
                feedback,
                others,
            }),
        }
    }
}

/// Apply a task's permissions to the repository's (narrowing only).
pub(crate) fn narrow_permissions(config: &mut Config, task: &Task) {
    if let Some(scope) = &task.permissions {
        let repo_perms = config.permissions.clone().unwrap_or_default();
        config.permissions = Some(repo_perms.narrow(scope));
    }
}

pub fn prepare(mut req: RunRequest) -> Result<PreparedRun, PipelineError> {
    let repo = workspace::open(&req.repo)?;
    let base = workspace::resolve(&repo, &req.base)?;
    let config = crate::git::base::load_config(&repo, base)?;
    let (mut task, mut task_source) = crate::git::base::load_task(
        &repo,
        base,
        &req.instruction,
        req.spec.as_deref(),
        req.issue.as_deref(),
    )?;
    req.instruction = task.instruction.clone();
    // Dynamic scoping: the task's (and the command line's) permissions
    // narrow the repository's; they can never widen them. The command
    // line's scope joins the task's, so the journalled task carries it and a
    // retry or reattach applies the same narrowing.
    if let Some(scope) = &req.scope {
        task.permissions = Some(match &task.permissions {
            Some(p) => p.narrow(scope),
            None => scope.clone(),
        });
        task_source.get_or_insert_with(|| "command line".into());
    }
    let mut config = config;
    narrow_permissions(&mut config, &task);
    let mut names = if req.agents.is_empty() {
        config.main.strategy.agents.clone()
    } else {
        req.agents.clone()
    };
    let per_agent = req.n.or(config.main.strategy.n).unwrap_or(1).clamp(1, 16) as usize;
    if per_agent > 1 {
        names = names
            .iter()
            .flat_map(|n| std::iter::repeat_n(n.clone(), per_agent))
            .collect();
    }
    if names.is_empty() {
        return Err(PipelineError::Usage(format!(
            "no agent to run\n  hint: pass --agent NAME (defined: {}) or set `strategy: {{agents: [...]}}` in .rascal/config.yaml",
            list_or_none(&config.agent_names())
        )));
    }
    for n in &names {
        if !config.main.agents.contains_key(n) {
            return Err(PipelineError::Usage(format!(
                "unknown agent `{n}`\n  hint: agents defined in .rascal/config.yaml at the base commit: {}",
                list_or_none(&config.agent_names())
            )));
        }
    }
    if let Some(review) = config.verification.as_ref().and_then(|v| v.review.as_ref()) {
        for n in &names {
            crate::layers::review::eligible_reviewers(&config, review, (n, &config.main.agents[n]))
                .map_err(PipelineError::Usage)?;
        }
    }
    let state = workspace::state_dir(&repo);
    let mut store = Store::open(&Store::path_in(&state))?;
    store.mark_interrupted()?;
    let _ = workspace::prune_worktrees(&repo);
    let run = new_run_id(&store)?;
    let mut candidates = Vec::new();
    let mut used = std::collections::BTreeMap::<String, usize>::new();
    for n in &names {
        let count = used.entry(n.clone()).or_default();
        *count += 1;
        let id = if *count == 1 {
            n.clone()
        } else {
            format!("{n}-{count}")
        };
        let worktree = workspace::create_worktree(&repo, base, &run, &id)?;
        let agent = config.main.agents[n].clone();
        candidates.push((
            CandidateInfo {
                id,
                agent: n.clone(),
                runtime: format!("{:?}", agent.runtime).to_lowercase(),
                worktree: worktree.to_string_lossy().into_owned(),
            },
            agent,
        ));
    }
    Ok(PreparedRun {
        run,
        config: Arc::new(config),
        base,
        repo_dir: workspace::workdir(&repo),
        state,
        candidates,
        task: Arc::new(task),
        task_source,
        request: req,
        store,
        resume: None,
        retry: None,
    })
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// Run every candidate to its verdict. Events go to `subscriber` after they
/// are journalled. `cancel` stops every agent and command.
pub async fn execute(
    prepared: PreparedRun,
    subscriber: mpsc::UnboundedSender<RunEvent>,
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
    subscriber: mpsc::UnboundedSender<RunEvent>,
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
        request,
        store,
        resume,
        retry,
    } = prepared;
    let launcher: Arc<dyn Launcher> = match request.launcher.unwrap_or(config.main.launcher) {
        LauncherKind::Process => Arc::new(ProcessLauncher),
        LauncherKind::Docker => Arc::new(DockerLauncher::new()),
    };
    let (journal, writer) = spawn_journal(store, run.clone(), subscriber);
    if resume.is_none() && retry.is_none() {
        journal.emit(RunEvent::RunStarted {
            run: run.clone(),
            repo: repo_dir.to_string_lossy().into_owned(),
            base: base.to_string(),
            instruction: request.instruction.clone(),
            launcher: launcher.name().into(),
            candidates: candidates.iter().map(|(c, _)| c.clone()).collect(),
        });
        if let Some(source) = task_source {
            journal.emit(RunEvent::TaskLoaded {
                source,
                task: Box::new((*task).clone()),
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
        .chain(results.iter().map(|r| {
            Contender::new(
                &r.id,
                r.verdict,
                r.finished_cleanly,
                &r.reports,
                r.changes.clone().unwrap_or_default(),
                r.usage,
            )
        }))
        .collect();
    let mut ranking = compare::rank(&contenders);
    if let Some(judge) = config.verification.as_ref().and_then(|v| v.judge.clone()) {
        let tied = compare::tied_at_top(&ranking);
        if !tied.is_empty() {
            let site = Site {
                run: run.clone(),
                candidate: "judge".into(),
                dir: state.join("runs").join(&run).join("judge"),
                rascal_exe: request.rascal_exe.clone(),
                attempt: 1,
            };
            let note = ask_judge(
                &config,
                &judge,
                &request.instruction,
                &tied,
                &worktrees,
                base,
                &site,
                &cancel,
            )
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

/// Ask the comparator's judge to break a tie between `tied` candidates. Its
/// answer is advisory: any problem is recorded and the ranking stands.
#[allow(clippy::too_many_arguments)]
async fn ask_judge(
    config: &Config,
    judge: &str,
    instruction: &str,
    tied: &[String],
    worktrees: &std::collections::BTreeMap<String, PathBuf>,
    base: git2::Oid,
    site: &Site,
    cancel: &CancellationToken,
) -> compare::JudgeNote {
    let mut note = compare::JudgeNote {
        agent: judge.to_string(),
        tied: tied.to_vec(),
        pick: None,
        reason: String::new(),
        problem: None,
    };
    let Some(agent) = config.main.agents.get(judge) else {
        note.problem = Some(format!(
            "the judge `{judge}` is not an agent in .rascal/config.yaml"
        ));
        return note;
    };
    let diffs: Vec<(String, String)> = tied
        .iter()
        .map(|id| {
            let diff = worktrees
                .get(id)
                .and_then(|w| workspace::diff_text(w, base).ok())
                .unwrap_or_default();
            (id.clone(), diff)
        })
        .collect();
    let prompt = compare::judge_prompt(instruction, &diffs);
    let timeout = agent
        .timeout
        .map(|d| d.get())
        .unwrap_or(Duration::from_secs(600));
    let answer =
        crate::layers::review::ask(judge, agent, &prompt, &site.dir, site, timeout, cancel).await;
    if let Some(p) = answer.problem {
        note.problem = Some(format!("the judge {p}"));
        return note;
    }
    match compare::parse_pick(&answer.text, tied) {
        Ok((pick, reason)) => {
            note.pick = Some(pick);
            note.reason = reason;
        }
        Err(e) => note.problem = Some(e),
    }
    note
}

/// Record a decision about a run that is no longer live (or from another
/// process): appended to the run's journal in the store.
pub fn record_decision(
    repo: &Path,
    run: &str,
    decision: Decision,
) -> Result<RunEvent, PipelineError> {
    let repo = workspace::open(repo)?;
    let mut store = Store::open(&Store::path_in(&workspace::state_dir(&repo)))?;
    let summary = store.summary(run)?;
    if let Some(c) = &decision.candidate {
        let cand = summary.candidate(c).map_err(PipelineError::Usage)?;
        decision
            .validate(Some(&cand.reports))
            .map_err(|e| PipelineError::Usage(e.to_string()))?;
    } else {
        decision
            .validate(None)
            .map_err(|e| PipelineError::Usage(e.to_string()))?;
    }
    let ev = RunEvent::DecisionRecorded { decision };
    store.append(run, std::slice::from_ref(&ev))?;
    Ok(ev)
}

/// What one attempt of a candidate produced.
struct Attempt {
    reports: Vec<Report>,
    files: usize,
    lines: u64,
    /// Layer 5's outcome, when the review ran.
    review: Option<ReviewOutcome>,
    /// The change, for the comparator (None when it could not be read).
    changes: Option<crate::model::changeset::ChangeSet>,
    /// Tokens and cost the agent reported.
    usage: Option<Usage>,
    /// The agent finished cleanly (not errored, cancelled or timed out).
    agent_ok: bool,
}

/// How a candidate ended.
struct CandidateOutcome {
    id: String,
    /// The last attempt made.
    attempt: u32,
    verdict: Verdict,
    escalated: bool,
    finished_cleanly: bool,
    reports: Vec<Report>,
    changes: Option<crate::model::changeset::ChangeSet>,
    usage: Option<Usage>,
}

struct CandidateJob {
    run: String,
    info: CandidateInfo,
    agent: crate::config::AgentConfig,
    config: Arc<Config>,
    base: git2::Oid,
    state: PathBuf,
    request: RunRequest,
    journal: Journal,
    launcher: Arc<dyn Launcher>,
    cancel: CancellationToken,
    task: Arc<Task>,
    repo: PathBuf,
    resume: Option<Resume>,
    /// The agent's report, when it landed before a reattach.
    landed: Option<Report>,
    /// For a human's retry: the attempt number and the feedback to send.
    start: Option<(u32, String)>,
    /// Retry decisions that arrived while the run was live, by candidate:
    /// taken after the current attempt.
    human_feedback: HumanFeedback,
}

/// Feedback from live retry decisions, waiting for its candidate.
type HumanFeedback = Arc<std::sync::Mutex<std::collections::BTreeMap<String, String>>>;

impl CandidateJob {
    /// The candidate's attempts: the first on the task, then — while Layer 3
    /// or Layer 5 send it back and retries remain — follow-ups with
    /// feedback in the same worktree (see `policy::next_step`).
    async fn run(self) -> CandidateOutcome {
        let policy = policy::Policy::of(&self.config);
        let mut attempt = 1;
        let mut instruction = self.request.instruction.clone();
        if let Some((n, text)) = &self.start {
            attempt = *n;
            instruction = policy::follow_up(
                &self.request.instruction,
                attempt,
                policy.max_attempts().max(attempt),
                text,
            );
            self.journal.emit(RunEvent::AttemptStarted {
                candidate: self.info.id.clone(),
                attempt,
                feedback: text.clone(),
            });
        }
        loop {
            let done = self.attempt(attempt, &instruction).await;
            // A human's retry decision, taken while this attempt ran, comes
            // first: the author gets the human's feedback.
            let human = self
                .human_feedback
                .lock()
                .ok()
                .and_then(|mut m| m.remove(&self.info.id));
            if let Some(text) = human {
                attempt += 1;
                instruction = policy::follow_up(
                    &self.request.instruction,
                    attempt,
                    policy.max_attempts().max(attempt),
                    &text,
                );
                self.journal.emit(RunEvent::AttemptStarted {
                    candidate: self.info.id.clone(),
                    attempt,
                    feedback: text,
                });
                continue;
            }
            match policy::next_step(attempt, &policy, &done.reports, done.review.as_ref()) {
                policy::Next::Retry(text) => {
                    attempt += 1;
                    instruction = policy::follow_up(
                        &self.request.instruction,
                        attempt,
                        policy.max_attempts(),
                        &text,
                    );
                    self.journal.emit(RunEvent::AttemptStarted {
                        candidate: self.info.id.clone(),
                        attempt,
                        feedback: text,
                    });
                }
                policy::Next::Finish => return self.finish(attempt, done, None),
                policy::Next::Escalate { reason, table } => {
                    self.journal.emit(RunEvent::CandidateEscalated {
                        candidate: self.info.id.clone(),
                        reason: reason.clone(),
                        table,
                    });
                    return self.finish(attempt, done, Some(reason));
                }
            }
        }
    }

    fn finish(&self, attempt: u32, done: Attempt, escalated: Option<String>) -> CandidateOutcome {
        let mut verdict = candidate_verdict(&done.reports);
        let mut reason = first_failure(&done.reports);
        if let Some(why) = &escalated {
            verdict = Verdict::Fail;
            reason = Some(format!("escalated: {why}"));
        } else if self.cancel.is_cancelled() {
            // Whatever had passed, a cancelled candidate was not verified.
            verdict = Verdict::Fail;
            reason = Some("cancelled before every layer ran".into());
        }
        self.journal.emit(RunEvent::CandidateFinished {
            candidate: self.info.id.clone(),
            verdict,
            reason,
            files: done.files,
            lines: done.lines,
        });
        CandidateOutcome {
            id: self.info.id.clone(),
            attempt,
            verdict,
            escalated: escalated.is_some(),
            finished_cleanly: done.agent_ok
                && !self.cancel.is_cancelled()
                && done.changes.is_some()
                && escalated.is_none(),
            reports: done.reports,
            changes: done.changes,
            usage: done.usage,
        }
    }

    /// One attempt: the agent, then L2 → L4 → L3 → L5 on its change.
    async fn attempt(&self, attempt: u32, instruction: &str) -> Attempt {
        let id = self.info.id.clone();
        let mut reports: Vec<Report> = Vec::new();
        let land = |r: Report, reports: &mut Vec<Report>| {
            self.journal.emit(RunEvent::ReportLanded {
                candidate: id.clone(),
                report: Box::new(r.clone()),
            });
            reports.push(r);
        };
        let workdir = PathBuf::from(&self.info.worktree);
        let candidate_dir = agents::candidate_dir(&self.state, &self.run, &id);
        let run_dir = if attempt == 1 {
            candidate_dir.clone()
        } else {
            candidate_dir.join(format!("attempt-{attempt}"))
        };
        let (agent_ok, usage) = match self.landed.clone().filter(|_| attempt == 1) {
            Some(r) => {
                let ok = r.status != Status::Fail;
                reports.push(r);
                (ok, None)
            }
            None => {
                let (agent_report, usage) = self
                    .run_agent(&workdir, &run_dir, attempt, instruction)
                    .await;
                let ok = agent_report.status != Status::Fail;
                land(agent_report, &mut reports);
                (ok, usage)
            }
        };
        self.launcher.release(&self.run, &id, &self.agent).await;

        let mut files = 0;
        let mut lines = 0;
        let mut kept_changes = None;
        let mut review = None;
        if agent_ok {
            match workspace::changeset(&workdir, self.base) {
                Ok(changes) if changes.is_empty() => {
                    let r = Report::new(Layer::Agent, "changes")
                        .input("base", self.base.to_string())
                        .finish_with_issue(Issue::new(
                            "agent/no-changes",
                            Severity::Error,
                            "the agent finished without changing any file",
                        ));
                    land(r, &mut reports);
                    self.skip_layers(&mut reports, "skipped: the agent made no changes");
                }
                Ok(changes) => {
                    files = changes.files.len();
                    lines = changes.lines_changed();
                    kept_changes = Some(changes.clone());
                    let v = Verification {
                        config: &self.config,
                        workdir: &workdir,
                        changes: &changes,
                        origin: Origin::Agent,
                        cancel: self.cancel.clone(),
                    };
                    let journal = self.journal.clone();
                    let cid = id.clone();
                    let sink = move |p: Progress| match p {
                        Progress::LayerStarted(layer) => journal.emit(RunEvent::LayerStarted {
                            candidate: cid.clone(),
                            layer,
                        }),
                        Progress::Report(r) => journal.emit(RunEvent::ReportLanded {
                            candidate: cid.clone(),
                            report: Box::new(r),
                        }),
                    };
                    reports.extend(sequence::verify(&v, &sink).await);
                    if reports.iter().any(|r| r.status == Status::Fail) {
                        for r in policy::skipped(
                            &self.config,
                            &self.task,
                            "skipped: guardrails or permissions failed",
                        ) {
                            land(r, &mut reports);
                        }
                    } else {
                        let later = policy::LaterLayers {
                            config: &self.config,
                            task: &self.task,
                            workdir: &workdir,
                            base: self.base,
                            changes: &changes,
                            author: (&self.info.agent, &self.agent),
                            site: Site {
                                run: self.run.clone(),
                                candidate: id.clone(),
                                dir: candidate_dir.clone(),
                                rascal_exe: self.request.rascal_exe.clone(),
                                attempt,
                            },
                            cancel: self.cancel.clone(),
                        };
                        let (rs, outcome) = policy::later_layers(&later, &sink).await;
                        reports.extend(rs);
                        review = outcome;
                    }
                }
                Err(e) => {
                    let r = Report::new(Layer::Agent, "changes")
                        .errored(format!("could not compute the change: {e}"))
                        .finish();
                    land(r, &mut reports);
                    self.skip_layers(&mut reports, "skipped: the change could not be read");
                }
            }
        } else {
            self.skip_layers(&mut reports, "skipped: the agent did not finish cleanly");
        }
        Attempt {
            reports,
            files,
            lines,
            review,
            changes: kept_changes,
            usage,
            agent_ok,
        }
    }

    fn skip_layers(&self, reports: &mut Vec<Report>, why: &str) {
        let mut skipped = Vec::new();
        if let Some(list) = &self.config.guardrails {
            for g in list {
                skipped.push(Report::skipped(Layer::Guardrails, &g.name, why));
            }
        }
        skipped.push(Report::skipped(Layer::Permissions, "permissions", why));
        skipped.extend(policy::skipped(&self.config, &self.task, why));
        for r in skipped {
            self.journal.emit(RunEvent::ReportLanded {
                candidate: self.info.id.clone(),
                report: Box::new(r.clone()),
            });
            reports.push(r);
        }
    }

    /// Run the author agent; its report and the tokens/cost it reported.
    async fn run_agent(
        &self,
        workdir: &Path,
        run_dir: &Path,
        attempt: u32,
        instruction: &str,
    ) -> (Report, Option<Usage>) {
        let id = &self.info.id;
        let mut report = Report::new(Layer::Agent, "agent").input("base", self.base.to_string());
        let ctx = LaunchContext {
            run: &self.run,
            candidate: id,
            run_dir,
            rascal_exe: &self.request.rascal_exe,
            // Only a container is a sandbox a real agent may skip prompts in.
            sandboxed: self.launcher.name() == "docker",
            attempt,
        };
        let inv = match agents::invocation(&self.info.agent, &self.agent, instruction, &ctx) {
            Ok(inv) => inv,
            Err(e) => {
                return (
                    report
                        .errored(format!("could not prepare the agent: {e}"))
                        .finish(),
                    None,
                )
            }
        };
        report = report.input("command", inv.argv.join(" "));
        // Only the first attempt can be one a reattach resumes.
        let resume = self.resume.filter(|_| attempt == 1);
        if let Some(r) = &resume {
            self.journal.emit(RunEvent::Log {
                display: None,
                candidate: id.clone(),
                stream: crate::model::log::Stream::Stderr,
                text: format!(
                    "rascal: reattached to the running agent; resuming after {} stdout and {} stderr lines",
                    r.stdout_lines, r.stderr_lines
                ),
            });
        } else {
            self.journal.emit(RunEvent::CandidateStarted {
                candidate: id.clone(),
                command: inv.argv.join(" "),
            });
        }
        for var in inv.missing_env.iter().filter(|_| resume.is_none()) {
            self.journal.emit(RunEvent::Log {
                display: None,
                candidate: id.clone(),
                stream: crate::model::log::Stream::Stderr,
                text: format!("rascal: warning: ${var} is not set in the host environment; the agent runs without it"),
            });
        }
        let secrets: Vec<String> = inv
            .env
            .iter()
            .filter(|(k, v)| self.agent.env.contains(k) && v.len() >= 4)
            .map(|(_, v)| v.clone())
            .collect();
        let timeout = self
            .request
            .timeout
            .or(self.agent.timeout.map(|d| d.get()))
            .unwrap_or(self.config.main.timeout.get());
        let spec = LaunchSpec {
            run: self.run.clone(),
            candidate: id.clone(),
            workdir: workdir.to_path_buf(),
            argv: inv.argv.clone(),
            env: inv.env,
            stdin: inv.stdin,
            timeout,
            image: self.agent.image.clone(),
            agent: Some(self.agent.clone()),
            repo: self.repo.clone(),
            resume,
        };
        let (tx, mut rx) = mpsc::unbounded_channel::<LogLine>();
        let journal = self.journal.clone();
        let cid = id.clone();
        let log_path = run_dir.join("agent.log");
        let runtime = self.agent.runtime;
        let resumed = resume.is_some();
        let forward = tokio::spawn(async move {
            // A reattach appends to the log written before.
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(resumed)
                .write(true)
                .truncate(!resumed)
                .open(&log_path)
                .ok();
            let mut last = String::new();
            let mut usage = Usage::default();
            let mut summary: Option<(bool, String)> = None;
            while let Some(line) = rx.recv().await {
                let text = redact(line.text, &secrets);
                if let Some(f) = file.as_mut() {
                    let _ = writeln!(f, "{text}");
                }
                let parsed = if line.stream == crate::model::log::Stream::Stdout {
                    events::parse_line(runtime, &text)
                } else {
                    None
                };
                let display = parsed.as_ref().map(|evs| {
                    evs.iter()
                        .map(AgentEvent::display)
                        .collect::<Vec<_>>()
                        .join("  ")
                });
                last = crate::text::cut(display.as_deref().unwrap_or(&text), 400);
                journal.emit(RunEvent::Log {
                    candidate: cid.clone(),
                    stream: line.stream,
                    text: crate::text::cut(&text, 16 * 1024),
                    display,
                });
                for ev in parsed.iter().flatten() {
                    match ev {
                        AgentEvent::Usage { .. } => {
                            events::add_usage(&mut usage, ev);
                            journal.emit(RunEvent::Usage {
                                candidate: cid.clone(),
                                usage,
                            });
                        }
                        // The final result, else the last assistant text,
                        // is the agent's summary.
                        AgentEvent::Final { text, .. } if !text.is_empty() => {
                            summary = Some((true, text.clone()));
                        }
                        AgentEvent::Text { text }
                            if !text.trim().is_empty() && !matches!(summary, Some((true, _))) =>
                        {
                            summary = Some((false, text.clone()));
                        }
                        _ => {}
                    }
                }
            }
            if let Some((_, text)) = summary {
                journal.emit(RunEvent::AgentSummary {
                    candidate: cid.clone(),
                    text: crate::text::cut(&text, 4096),
                });
            }
            (last, Some(usage).filter(|u| !u.is_empty()))
        });
        let result = self.launcher.run(spec, tx, self.cancel.clone()).await;
        let (last_line, usage) = forward.await.unwrap_or_default();
        match result {
            Ok(exit) => {
                report.duration_ms = exit.duration_ms;
                report.exit_code = exit.code;
                report.output = last_line;
                if let Some(problem) = exit.problem(timeout) {
                    report = report.errored(format!("agent {problem}"));
                } else if !exit.success() {
                    report.issues.push(Issue::new(
                        "agent/exit",
                        Severity::Error,
                        format!(
                            "agent exited with code {} after {}",
                            exit.code.map(|c| c.to_string()).unwrap_or("?".into()),
                            human(Duration::from_millis(exit.duration_ms))
                        ),
                    ));
                }
            }
            Err(e) => report = report.errored(e.to_string()),
        }
        (report.finish(), usage)
    }
}

/// Replace every known credential value in `text`.
fn redact(mut text: String, secrets: &[String]) -> String {
    for s in secrets {
        if text.contains(s.as_str()) {
            text = text.replace(s.as_str(), "[redacted]");
        }
    }
    text
}

impl Report {
    fn finish_with_issue(mut self, issue: Issue) -> Report {
        self.issues.push(issue);
        self.finish()
    }
}

/// One line saying why a candidate did not pass.
pub fn first_failure(reports: &[Report]) -> Option<String> {
    let r = reports
        .iter()
        .find(|r| r.status == Status::Fail)
        .or_else(|| reports.iter().find(|r| r.status == Status::Warn))?;
    let what = r
        .errored
        .clone()
        .or_else(|| r.issues.first().map(|i| i.message.clone()))
        .unwrap_or_default();
    Some(format!(
        "{} {}: {}",
        r.layer,
        r.check,
        crate::text::cut(&what, 200)
    ))
}
