//! The orchestrator: one run of a task on N candidates. Each candidate gets a
//! worktree at the base commit, its agent runs through a launcher, then the
//! layers judge its ChangeSet. Every step is a `RunEvent`, journalled to the
//! store before it reaches the subscriber (TUI or headless printer).

use crate::agent::{self, LaunchContext};
use crate::config::{Config, ConfigError, LauncherKind};
use crate::event::{candidate_verdict, run_verdict, CandidateInfo, RunEvent};
use crate::launch::{
    docker::DockerLauncher, process::ProcessLauncher, LaunchSpec, Launcher, Resume,
};
use crate::runner::{human, LogLine};
use crate::store::{Store, StoreError};
use crate::verdict::{Issue, Layer, Report, Severity, Status, Verdict};
use crate::verify::{self, Origin, Progress, Verification};
use crate::workspace::{self, WorkspaceError};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What to run.
#[derive(Debug, Clone)]
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
    /// Overrides `launcher:` of .rascal/config.yaml.
    pub launcher: Option<LauncherKind>,
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
    request: RunRequest,
    store: Store,
    /// Set by `rascal attach`: the run already started; these candidates
    /// resume where the journal stopped (see src/reattach.rs).
    pub(crate) resume: Option<crate::reattach::Resumption>,
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
        resume: crate::reattach::Resumption,
    ) -> PreparedRun {
        PreparedRun {
            run,
            config: Arc::new(config),
            base,
            repo_dir,
            state,
            candidates,
            request,
            store,
            resume: Some(resume),
        }
    }
}

pub fn prepare(req: RunRequest) -> Result<PreparedRun, PipelineError> {
    let repo = workspace::open(&req.repo)?;
    let base = workspace::resolve(&repo, &req.base)?;
    let config = Config::load_at(&repo, base)?;
    let names = if req.agents.is_empty() {
        config.main.strategy.agents.clone()
    } else {
        req.agents.clone()
    };
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
        request: req,
        store,
        resume: None,
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
    let PreparedRun {
        run,
        config,
        base,
        repo_dir,
        state,
        candidates,
        request,
        store,
        resume,
    } = prepared;
    let launcher: Arc<dyn Launcher> = match request.launcher.unwrap_or(config.main.launcher) {
        LauncherKind::Process => Arc::new(ProcessLauncher),
        LauncherKind::Docker => Arc::new(DockerLauncher::new()),
    };
    let (journal, writer) = spawn_journal(store, run.clone(), subscriber);
    if resume.is_none() {
        journal.emit(RunEvent::RunStarted {
            run: run.clone(),
            repo: repo_dir.to_string_lossy().into_owned(),
            base: base.to_string(),
            instruction: request.instruction.clone(),
            launcher: launcher.name().into(),
            candidates: candidates.iter().map(|(c, _)| c.clone()).collect(),
        });
    }
    let mut tasks = Vec::new();
    for (info, agent) in candidates {
        let ctx = CandidateJob {
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
            cancel: cancel.child_token(),
        };
        tasks.push(tokio::spawn(ctx.run()));
    }
    let mut verdicts = resume.map(|r| r.finished).unwrap_or_default();
    for t in tasks {
        match t.await {
            Ok(v) => verdicts.push(v),
            Err(e) => {
                // A panicking candidate task is a FAIL for that candidate; others go on.
                verdicts.push(Verdict::Fail);
                eprintln!("rascal: internal error in a candidate task: {e}");
            }
        }
    }
    let verdict = run_verdict(&verdicts);
    let exit_code = verdict.exit_code();
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
    repo: PathBuf,
    resume: Option<Resume>,
    /// The agent's report, when it landed before a reattach.
    landed: Option<Report>,
}

impl CandidateJob {
    async fn run(self) -> Verdict {
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
        let run_dir = agent::candidate_dir(&self.state, &self.run, &id);
        let agent_ok = if let Some(r) = self.landed.clone() {
            let ok = r.status != Status::Fail;
            reports.push(r);
            ok
        } else {
            let agent_report = self.run_agent(&workdir, &run_dir).await;
            let ok = agent_report.status != Status::Fail;
            land(agent_report, &mut reports);
            ok
        };
        self.launcher.release(&self.run, &id, &self.agent).await;

        let mut files = 0;
        let mut lines = 0;
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
                    reports.extend(verify::verify(&v, &sink).await);
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
        let verdict = candidate_verdict(&reports);
        let reason = first_failure(&reports);
        self.journal.emit(RunEvent::CandidateFinished {
            candidate: id,
            verdict,
            reason,
            files,
            lines,
        });
        verdict
    }

    fn skip_layers(&self, reports: &mut Vec<Report>, why: &str) {
        let mut skipped = Vec::new();
        if let Some(list) = &self.config.guardrails {
            for g in list {
                skipped.push(Report::skipped(Layer::Guardrails, &g.name, why));
            }
        }
        skipped.push(Report::skipped(Layer::Permissions, "permissions", why));
        for r in skipped {
            self.journal.emit(RunEvent::ReportLanded {
                candidate: self.info.id.clone(),
                report: Box::new(r.clone()),
            });
            reports.push(r);
        }
    }

    async fn run_agent(&self, workdir: &Path, run_dir: &Path) -> Report {
        let id = &self.info.id;
        let mut report = Report::new(Layer::Agent, "agent").input("base", self.base.to_string());
        let ctx = LaunchContext {
            run: &self.run,
            candidate: id,
            run_dir,
            rascal_exe: &self.request.rascal_exe,
        };
        let inv = match agent::invocation(
            &self.info.agent,
            &self.agent,
            &self.request.instruction,
            &ctx,
        ) {
            Ok(inv) => inv,
            Err(e) => {
                return report
                    .errored(format!("could not prepare the agent: {e}"))
                    .finish()
            }
        };
        report = report.input("command", inv.argv.join(" "));
        if let Some(r) = &self.resume {
            self.journal.emit(RunEvent::Log {
                candidate: id.clone(),
                stream: crate::runner::Stream::Stderr,
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
        for var in inv.missing_env.iter().filter(|_| self.resume.is_none()) {
            self.journal.emit(RunEvent::Log {
                candidate: id.clone(),
                stream: crate::runner::Stream::Stderr,
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
            resume: self.resume,
        };
        let (tx, mut rx) = mpsc::unbounded_channel::<LogLine>();
        let journal = self.journal.clone();
        let cid = id.clone();
        let log_path = run_dir.join("agent.log");
        let resumed = self.resume.is_some();
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
            while let Some(line) = rx.recv().await {
                let mut text = line.text;
                for s in &secrets {
                    if text.contains(s.as_str()) {
                        text = text.replace(s.as_str(), "[redacted]");
                    }
                }
                if let Some(f) = file.as_mut() {
                    let _ = writeln!(f, "{text}");
                }
                last = crate::text::cut(&text, 400);
                journal.emit(RunEvent::Log {
                    candidate: cid.clone(),
                    stream: line.stream,
                    text: crate::text::cut(&text, 16 * 1024),
                });
            }
            last
        });
        let result = self.launcher.run(spec, tx, self.cancel.clone()).await;
        let last_line = forward.await.unwrap_or_default();
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
        report.finish()
    }
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
