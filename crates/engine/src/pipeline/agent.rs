//! The author agent of one attempt: its invocation, the launcher, and its
//! output streamed to the log file and the journal (credentials redacted,
//! stream events parsed into readable lines, usage and summary taken).

use crate::pipeline::candidate::CandidateJob;
use crate::store::logfile::{Dropped, LogFileError, LogWriter};
use rascal_core::model::event::RunEvent;
use rascal_core::model::verdict::{Issue, Layer, Report, Severity};
use rascal_exec::agents::events::{self, AgentEvent, Usage};
use rascal_exec::agents::{self, LaunchContext};
use rascal_exec::egress;
use rascal_exec::exec::confine::{expand_home, Confinement};
use rascal_exec::exec::launch::{LaunchError, LaunchSpec, Resume, Upload};
use rascal_exec::exec::runner::{human, Exit};
use std::path::Path;
use std::time::Duration;

impl CandidateJob {
    /// The task's held-out tests at the base (none when it has none; a
    /// holdout that no longer resolves leaves its criteria nothing to run,
    /// which fails them).
    /// What a launcher that uploads the workspace (docker copy mode,
    /// Kubernetes) sends for attempt `attempt`: the tree rascal put in the
    /// workspace on the first attempt, the change tree of the workspace as
    /// it stands (the last attempt's) after it — git objects, never the
    /// workspace's paths, which the agent may have turned into links.
    fn upload(&self, workdir: &Path, attempt: u32) -> Result<Option<Upload>, crate::Error> {
        let uploads = match self.launcher.name() {
            "kubernetes" => true,
            "docker" => rascal_exec::exec::launch::copy::wanted(Some(&self.agent)),
            _ => false,
        };
        if !uploads {
            return Ok(None);
        }
        let holdout = std::sync::Arc::new(self.holdout());
        let tree = if attempt == 1 {
            rascal_exec::git::tree::workspace_store(workdir)
                .and_then(|s| Ok(s.head()?.peel_to_tree()?.id()))
                .map_err(|e| {
                    crate::Error::Agent(format!("reading the workspace's first commit: {e}"))
                })?
        } else {
            let change = rascal_exec::git::workspace::candidate_change(
                &self.repo,
                workdir,
                self.base,
                &Default::default(),
                &holdout,
                None,
            )
            .map_err(|e| crate::Error::Agent(format!("reading the last attempt's change: {e}")))?;
            match git2::Oid::from_str(&change.tree) {
                Ok(t) => t,
                // No change: the workspace's first commit.
                Err(_) => rascal_exec::git::tree::workspace_store(workdir)
                    .and_then(|s| Ok(s.head()?.peel_to_tree()?.id()))
                    .map_err(|e| {
                        crate::Error::Agent(format!("reading the workspace's first commit: {e}"))
                    })?,
            }
        };
        Ok(Some(Upload {
            origin: self.repo.clone(),
            tree,
            holdout,
        }))
    }

    pub(crate) fn holdout(&self) -> rascal_exec::git::holdout::Holdout {
        git2::Repository::discover(&self.repo)
            .ok()
            .and_then(|r| {
                rascal_exec::git::holdout::Holdout::resolve(&r, self.base, &self.task.holdout).ok()
            })
            .unwrap_or_default()
    }

    /// What no candidate code may see (see `confine::private_paths`), and
    /// the task's held-out test directories outside the repository.
    pub(crate) fn hidden(&self) -> Vec<std::path::PathBuf> {
        let mut hide = rascal_exec::exec::confine::private_paths(&self.repo, &self.state);
        hide.extend(rascal_exec::git::holdout::outside_dirs(&self.task.holdout));
        hide
    }

    /// What the agent's sandbox hides and shows: the user's repository
    /// (with the store and hooks) and every run's files are hidden; its
    /// workspace and artifacts directory are writable, its run directory
    /// and `mounts:` readable.
    pub(crate) fn confinement(
        &self,
        workdir: &Path,
        run_dir: &Path,
        artifacts: &Path,
    ) -> Confinement {
        let hide = self.hidden();
        let mut read_only = vec![run_dir.to_path_buf()];
        read_only.extend(self.agent.mounts.iter().map(|m| expand_home(m)));
        Confinement {
            workspace: workdir.to_path_buf(),
            writable: vec![artifacts.to_path_buf()],
            hide,
            read_only,
            network: self.agent.network.as_deref() == Some("host"),
            limits: rascal_core::config::limits::Limits::of(&self.agent),
        }
    }

    /// Run the author agent; its report and the tokens/cost it reported.
    pub(crate) async fn run_agent(
        &self,
        workdir: &Path,
        run_dir: &Path,
        attempt: u32,
        instruction: &str,
    ) -> (Report, Option<Usage>) {
        let id = &self.info.id;
        let mut report = Report::new(Layer::Agent, "agent").input("base", self.base.to_string());
        let artifacts = agents::artifacts_dir(&self.state, &self.run, id);
        let ctx = LaunchContext {
            run: &self.run,
            candidate: id,
            run_dir,
            rascal_exe: &self.request.rascal_exe,
            // Only a sandbox (a container, bubblewrap) is a place a real
            // agent may skip its prompts in.
            sandboxed: self.launcher.name() == "docker" || !self.info.unsandboxed,
            attempt,
            artifacts: Some(&artifacts),
            inputs: self.brief.as_ref().map(|b| b.inputs.as_path()),
            tempo: self.request.tempo,
            // A planned task's approved criteria are shown to the author.
            criteria: self.task.plan.then_some(&*self.task),
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
        self.announce_agent(&inv, resume.as_ref());
        let secrets = self.secrets_of(&inv.env);
        let timeout = self.agent_timeout();
        let upload = match resume.is_none().then(|| self.upload(workdir, attempt)) {
            Some(Err(e)) => {
                return (
                    report
                        .errored(format!("could not prepare the workspace to send: {e}"))
                        .finish(),
                    None,
                )
            }
            Some(Ok(u)) => u,
            None => None,
        };
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
            confine: (self.launcher.name() == "process" && !self.info.unsandboxed)
                .then(|| self.confinement(workdir, run_dir, &artifacts)),
            upload,
        };
        let (tx, rx) = rascal_exec::exec::runner::log_channel();
        let cap = self.max_log_bytes();
        let forward = tokio::spawn(forward_output(Forward {
            rx,
            log: self.open_agent_log(run_dir, cap),
            secrets,
            runtime: self.agent.runtime,
            journal: self.journal.clone(),
            candidate: id.clone(),
            budgets: self.budgets.clone(),
            stop: self.cancel.clone(),
        }));
        let result = self.launcher.run(spec, tx, self.cancel.clone()).await;
        let forwarded = forward.await.unwrap_or_default();
        let usage = forwarded.usage;
        report = judge_exit(report, result, timeout, forwarded.last);
        report = note_log_loss(report, forwarded.log_problem, forwarded.dropped, cap);
        let network = self.launcher.network(&self.run, id);
        let launcher = self.launcher.name();
        report = egress::annotate(report, &self.agent, launcher, network.as_ref());
        self.budgets.after_agent(&self.journal, id);
        if let Some(why) = self.budgets.stopped(id) {
            // Whatever it had done, it was stopped: nothing of it is judged.
            report = report.errored(format!("stopped: {why}"));
        }
        (report.finish(), usage)
    }

    /// The values of the agent's own variables (`env:` in its config) in
    /// `env`, redacted from its output: each long enough to be a secret.
    fn secrets_of(&self, env: &[(String, String)]) -> Vec<String> {
        env.iter()
            .filter(|(k, v)| self.agent.env.contains(k) && v.len() >= 4)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// How long the agent may run: the request's, else the agent's, else
    /// the config's.
    fn agent_timeout(&self) -> Duration {
        self.request
            .timeout
            .or(self.agent.timeout.map(|d| d.get()))
            .unwrap_or(self.config.main.timeout.get())
    }

    /// The most bytes of output the agent's log keeps.
    fn max_log_bytes(&self) -> u64 {
        self.config
            .main
            .max_log_bytes
            .map(|b| b.0)
            .unwrap_or(crate::store::logfile::DEFAULT_MAX_LOG_BYTES)
    }

    /// Journal the agent's start (or, for a reattach, where it resumes)
    /// and warn of variables missing from the host environment.
    fn announce_agent(&self, inv: &agents::Invocation, resume: Option<&Resume>) {
        let id = &self.info.id;
        if let Some(r) = resume {
            self.journal.emit(RunEvent::Log {
                display: None,
                candidate: id.clone(),
                stream: rascal_core::model::log::Stream::Stderr,
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
            self.budgets
                .before_agent(&self.journal, id, self.agent.runtime);
        }
        for var in inv.missing_env.iter().filter(|_| resume.is_none()) {
            self.journal.emit(RunEvent::Log {
                display: None,
                candidate: id.clone(),
                stream: rascal_core::model::log::Stream::Stderr,
                text: format!("rascal: warning: ${var} is not set in the host environment; the agent runs without it"),
            });
        }
    }

    /// The agent's log file in the attempt's directory, capped at `cap`
    /// bytes.
    fn open_agent_log(&self, run_dir: &Path, cap: u64) -> Result<LogWriter, LogFileError> {
        let rel = run_dir
            .strip_prefix(&self.state)
            .unwrap_or(run_dir)
            .join("agent.log")
            .to_string_lossy()
            .into_owned();
        LogWriter::open(&self.state, &rel, &self.info.id, cap)
    }
}

/// The agent's report from how it exited: stopped at a limit, timed out
/// or failed to run (errored), or a non-zero exit (an issue).
fn judge_exit(
    mut report: Report,
    result: Result<Exit, LaunchError>,
    timeout: Duration,
    last_line: String,
) -> Report {
    match result {
        Ok(exit) => {
            report.duration_ms = exit.duration_ms;
            report.exit_code = exit.code;
            report.output = last_line;
            if let Some(limit) = &exit.limit {
                // Stopped by rascal: what it left is not judged.
                report
                    .issues
                    .push(Issue::new("agent/limit", Severity::Error, limit.clone()));
                report = report.errored(format!("agent/limit: {limit}"));
            } else if let Some(problem) = exit.problem(timeout) {
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
        Err(e) => report = report.errored(rascal_core::text::one_line(&e.to_string())),
    }
    report
}

/// Output rascal could not keep: a log that could not be written is
/// evidence lost (errored); lines past the cap were dropped (a warning).
fn note_log_loss(
    mut report: Report,
    log_problem: Option<String>,
    dropped: Option<Dropped>,
    cap: u64,
) -> Report {
    if let Some(problem) = log_problem {
        // Output rascal could not keep is evidence lost: not a pass.
        report = report.errored(problem);
    }
    if let Some(d) = dropped {
        report.issues.push(Issue::new(
            "agent/log-cap",
            Severity::Warning,
            format!(
                "the agent's log reached max_log_bytes ({}): {} more lines ({}) were counted and dropped",
                bytesize::ByteSize::b(cap).display().iec(),
                d.lines,
                bytesize::ByteSize::b(d.bytes).display().iec()
            ),
        ));
    }
    report
}

/// What the output forwarder needs.
struct Forward {
    rx: rascal_exec::exec::runner::LogRx,
    log: Result<LogWriter, LogFileError>,
    secrets: Vec<String>,
    runtime: rascal_core::config::RuntimeKind,
    journal: crate::pipeline::journal::Journal,
    candidate: String,
    budgets: crate::pipeline::budget::Budgets,
    stop: tokio_util::sync::CancellationToken,
}

/// What the forwarder saw of the agent's output.
#[derive(Default)]
struct Forwarded {
    /// The last line (readable form when parsed), for the report.
    last: String,
    usage: Option<Usage>,
    dropped: Option<Dropped>,
    /// The log file could not be written: the output was not kept.
    log_problem: Option<String>,
}

/// How long a segment stays open for more lines once output pauses.
const SETTLE: Duration = Duration::from_millis(10);
/// Lines reach the log file (and the views) this often at the latest.
const FLUSH_EVERY: Duration = Duration::from_millis(100);

/// The agent's output, batch by batch: credentials redacted, written to
/// its log file, journalled as segments (flushed at least every 100 ms,
/// and at the end), agent events parsed for usage and the summary. The
/// journal's slots bound what waits: when rascal is behind, this waits and
/// the agent's pipe fills.
async fn forward_output(f: Forward) -> Forwarded {
    let Forward {
        mut rx,
        log,
        secrets,
        runtime,
        journal,
        candidate,
        budgets,
        stop,
    } = f;
    let mut out = Forwarded::default();
    let mut log = match log {
        Ok(w) => Some(w),
        Err(e) => {
            out.log_problem = Some(e.to_string());
            journal.failed(e);
            None
        }
    };
    let mut reading = Reading::default();
    let mut sealed = std::time::Instant::now();
    let parses = rascal_exec::agents::events::parses(runtime);
    loop {
        let open = log.as_ref().is_some_and(|w| w.pending());
        let next = if open {
            match tokio::time::timeout(SETTLE, rx.recv()).await {
                Ok(n) => n,
                Err(_) => {
                    seal(&mut log, &journal, &mut out).await;
                    sealed = std::time::Instant::now();
                    continue;
                }
            }
        } else {
            rx.recv().await
        };
        let Some(batch) = next else { break };
        let mut last: Option<String> = None;
        for line in batch {
            let text = redact(line.text, &secrets);
            log_line(&mut log, &journal, &mut out, line.stream, &text).await;
            let parsed = if parses && line.stream == rascal_core::model::log::Stream::Stdout {
                events::parse_line(runtime, &text)
            } else {
                None
            };
            for ev in parsed.iter().flatten() {
                reading.take(ev, &journal, &candidate, (&budgets, &stop));
            }
            last = Some(shown(parsed, text));
        }
        if let Some(l) = last {
            out.last = rascal_core::text::cut(&l, 400);
        }
        if sealed.elapsed() >= FLUSH_EVERY {
            seal(&mut log, &journal, &mut out).await;
            sealed = std::time::Instant::now();
        }
    }
    seal(&mut log, &journal, &mut out).await;
    out.dropped = log.as_ref().and_then(|w| w.dropped());
    if let Some((_, text)) = reading.summary {
        journal.emit(RunEvent::AgentSummary {
            candidate: candidate.clone(),
            text: rascal_core::text::cut(&text, 4096),
        });
    }
    out.usage = Some(reading.usage).filter(|u| !u.is_empty());
    out
}

/// One line of output into the log file, the segments it closed
/// journalled. A log file that cannot be written is dropped: the output
/// is not kept from there, and the report says so.
async fn log_line(
    log: &mut Option<LogWriter>,
    journal: &crate::pipeline::journal::Journal,
    out: &mut Forwarded,
    stream: rascal_core::model::log::Stream,
    text: &str,
) {
    let Some(w) = log.as_mut() else {
        return;
    };
    match w.line(stream, text) {
        Ok(closed) => {
            for seg in closed {
                journal.emit_log(RunEvent::LogSegment(seg)).await;
            }
        }
        Err(e) => {
            out.log_problem = Some(e.to_string());
            journal.failed(e);
            *log = None;
        }
    }
}

/// A line as the report shows it: its agent events in readable form
/// when it parsed, else the line itself.
fn shown(parsed: Option<Vec<AgentEvent>>, text: String) -> String {
    match parsed {
        Some(evs) => evs
            .iter()
            .map(AgentEvent::display)
            .collect::<Vec<_>>()
            .join("  "),
        None => text,
    }
}

/// What the forwarder reads of the agent's events: the tokens and cost
/// so far, and its summary (true: the final result).
#[derive(Default)]
struct Reading {
    usage: Usage,
    summary: Option<(bool, String)>,
}

impl Reading {
    /// One agent event: its usage journalled and counted against the
    /// budgets (which may `stop` the candidate), its text kept as the
    /// summary.
    fn take(
        &mut self,
        ev: &AgentEvent,
        journal: &crate::pipeline::journal::Journal,
        candidate: &str,
        (budgets, stop): (
            &crate::pipeline::budget::Budgets,
            &tokio_util::sync::CancellationToken,
        ),
    ) {
        match ev {
            AgentEvent::Usage { .. } => {
                events::add_usage(&mut self.usage, ev);
                journal.emit(RunEvent::Usage {
                    candidate: candidate.to_string(),
                    usage: self.usage,
                });
                budgets.report(journal, candidate, self.usage, stop);
            }
            // The final result, else the last assistant text, is
            // the agent's summary.
            AgentEvent::Final { text, .. } if !text.is_empty() => {
                self.summary = Some((true, text.clone()));
            }
            AgentEvent::Text { text }
                if !text.trim().is_empty() && !matches!(self.summary, Some((true, _))) =>
            {
                self.summary = Some((false, text.clone()));
            }
            _ => {}
        }
    }
}

/// Flush the log file and journal its open segment.
async fn seal(
    log: &mut Option<LogWriter>,
    journal: &crate::pipeline::journal::Journal,
    out: &mut Forwarded,
) {
    let Some(w) = log.as_mut() else { return };
    match w.seal() {
        Ok(Some(seg)) => journal.emit_log(RunEvent::LogSegment(seg)).await,
        Ok(None) => {}
        Err(e) => {
            out.log_problem = Some(e.to_string());
            journal.failed(e);
            *log = None;
        }
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
