//! The author agent of one attempt: its invocation, the launcher, and its
//! output streamed to the log file and the journal (credentials redacted,
//! stream events parsed into readable lines, usage and summary taken).

use crate::agents::events::{self, AgentEvent, Usage};
use crate::agents::{self, LaunchContext};
use crate::exec::confine::{expand_home, Confinement};
use crate::exec::launch::LaunchSpec;
use crate::exec::runner::{human, LogLine};
use crate::model::event::RunEvent;
use crate::model::verdict::{Issue, Layer, Report, Severity};
use crate::pipeline::candidate::CandidateJob;
use std::io::Write;
use std::path::Path;
use std::time::Duration;
use tokio::sync::mpsc;

impl CandidateJob {
    /// The task's held-out tests at the base (none when it has none; a
    /// holdout that no longer resolves leaves its criteria nothing to run,
    /// which fails them).
    pub(crate) fn holdout(&self) -> crate::git::holdout::Holdout {
        git2::Repository::discover(&self.repo)
            .ok()
            .and_then(|r| {
                crate::git::holdout::Holdout::resolve(&r, self.base, &self.task.holdout).ok()
            })
            .unwrap_or_default()
    }

    /// What no candidate code may see (see `confine::private_paths`).
    pub(crate) fn hidden(&self) -> Vec<std::path::PathBuf> {
        crate::exec::confine::private_paths(&self.repo, &self.state)
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
            tempo: self.request.tempo,
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
            self.budgets
                .before_agent(&self.journal, id, self.agent.runtime);
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
            confine: (self.launcher.name() == "process" && !self.info.unsandboxed)
                .then(|| self.confinement(workdir, run_dir, &artifacts)),
        };
        let (tx, mut rx) = mpsc::unbounded_channel::<LogLine>();
        let journal = self.journal.clone();
        let cid = id.clone();
        let log_path = run_dir.join("agent.log");
        let runtime = self.agent.runtime;
        let resumed = resume.is_some();
        let (budgets, stop) = (self.budgets.clone(), self.cancel.clone());
        let forward = tokio::spawn(async move {
            // A reattach appends to the log written before.
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(resumed)
                .write(true)
                .truncate(!resumed)
                .open(&log_path)
                .ok()
                .map(std::io::BufWriter::new);
            // Buffered: flushed whenever the agent's output is caught up
            // with, at least every 100 ms during a flood, and at the end.
            let mut flushed = std::time::Instant::now();
            let mut last = String::new();
            let mut usage = Usage::default();
            let mut summary: Option<(bool, String)> = None;
            while let Some(line) = rx.recv().await {
                let text = redact(line.text, &secrets);
                if let Some(f) = file.as_mut() {
                    let _ = writeln!(f, "{text}");
                    if rx.is_empty() || flushed.elapsed() >= std::time::Duration::from_millis(100) {
                        let _ = f.flush();
                        flushed = std::time::Instant::now();
                    }
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
                            budgets.report(&journal, &cid, usage, &stop);
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
            if let Some(f) = file.as_mut() {
                let _ = f.flush();
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
        let network = self.launcher.network(&self.run, id);
        report =
            crate::egress::annotate(report, &self.agent, self.launcher.name(), network.as_ref());
        self.budgets.after_agent(&self.journal, id);
        if let Some(why) = self.budgets.stopped(id) {
            // Whatever it had done, it was stopped: nothing of it is judged.
            report = report.errored(format!("stopped: {why}"));
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
    pub(crate) fn finish_with_issue(mut self, issue: Issue) -> Report {
        self.issues.push(issue);
        self.finish()
    }
}
