//! One candidate, start to end: its attempts (agent, then the layers in
//! `sequence`), the retry policy between them, and how it finished.

use crate::layers::review::ReviewOutcome;
use crate::pipeline::content::ContentRead;
use crate::pipeline::first_failure;
use crate::pipeline::journal::Journal;
use crate::pipeline::request::RunRequest;
use crate::pipeline::sequence::{Origin, Progress, Verification};
use crate::pipeline::{policy, sequence};
use rascal_core::config::spec::Task;
use rascal_core::config::Config;
use rascal_core::model::changeset::ChangeSet;
use rascal_core::model::event::{candidate_verdict, CandidateInfo, RunEvent};
use rascal_core::model::verdict::{Issue, Layer, Report, Severity, Status, Verdict};
use rascal_exec::agents::ask::Site;
use rascal_exec::agents::events::Usage;
use rascal_exec::agents::{self};
use rascal_exec::exec::launch::kubernetes::KubernetesLauncher;
use rascal_exec::exec::launch::{Launcher, Resume};
use rascal_exec::exec::place::{Backend, Contained, Place, Sandboxed};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

mod checks;

/// What one attempt of a candidate produced.
pub(crate) struct Attempt {
    pub(crate) reports: Vec<Report>,
    pub(crate) files: usize,
    pub(crate) lines: u64,
    /// Layer 5's outcome, when the review ran.
    pub(crate) review: Option<ReviewOutcome>,
    /// The change, for the comparator (None when it could not be read).
    pub(crate) changes: Option<rascal_core::model::changeset::ChangeSet>,
    /// Tokens and cost the agent reported.
    pub(crate) usage: Option<Usage>,
    /// The agent finished cleanly (not errored, cancelled or timed out).
    pub(crate) agent_ok: bool,
    /// Where its checks ran, for cross-testing after the gate.
    pub(crate) place: Option<Place>,
    /// Its agent declared the task impossible: the reason.
    pub(crate) impossible: Option<String>,
}

impl Attempt {
    /// An attempt whose agent never started: its reports, nothing else.
    fn not_started(reports: Vec<Report>) -> Attempt {
        Attempt {
            reports,
            files: 0,
            lines: 0,
            review: None,
            changes: None,
            usage: None,
            agent_ok: false,
            place: None,
            impossible: None,
        }
    }
}

/// Where one attempt works: the candidate's workspace and its own
/// directory under the run's.
#[derive(Clone, Copy)]
struct AttemptDirs<'a> {
    workdir: &'a std::path::Path,
    candidate_dir: &'a std::path::Path,
}

/// How a candidate ended.
pub(crate) struct CandidateOutcome {
    pub(crate) id: String,
    /// The last attempt made.
    pub(crate) attempt: u32,
    pub(crate) verdict: Verdict,
    pub(crate) escalated: bool,
    pub(crate) finished_cleanly: bool,
    pub(crate) reports: Vec<Report>,
    pub(crate) changes: Option<rascal_core::model::changeset::ChangeSet>,
    pub(crate) usage: Option<Usage>,
    /// Where its checks ran (None when they did not).
    pub(crate) place: Option<Place>,
}

pub(crate) struct CandidateJob {
    pub(crate) run: String,
    pub(crate) info: CandidateInfo,
    pub(crate) agent: rascal_core::config::AgentConfig,
    pub(crate) config: Arc<Config>,
    pub(crate) base: git2::Oid,
    pub(crate) state: PathBuf,
    pub(crate) request: RunRequest,
    pub(crate) journal: Journal,
    pub(crate) launcher: Arc<dyn Launcher>,
    pub(crate) cancel: CancellationToken,
    pub(crate) task: Arc<Task>,
    pub(crate) repo: PathBuf,
    pub(crate) resume: Option<Resume>,
    /// The agent's report, when it landed before a reattach.
    pub(crate) landed: Option<Report>,
    /// For a human's retry: the attempt number and the feedback to send.
    pub(crate) start: Option<(u32, String)>,
    /// Retry decisions that arrived while the run was live, by candidate:
    /// taken after the current attempt.
    pub(crate) human_feedback: HumanFeedback,
    /// The run's budgets: what this candidate and the run have spent.
    pub(crate) budgets: crate::pipeline::budget::Budgets,
    /// What its author is asked instead of the task (the combining
    /// agent's brief, `rascal combine`).
    pub(crate) brief: Option<Arc<Brief>>,
}

/// An author's own brief: the prompt it gets instead of the task's
/// instruction (follow-ups quote it as the task), and the directory of
/// material rascal laid out for it (`$RASCAL_COMBINE_DIR`).
#[derive(Debug, Clone)]
pub(crate) struct Brief {
    pub(crate) prompt: String,
    pub(crate) inputs: PathBuf,
}

/// Where a candidate's checks' commands run: a docker candidate's in a
/// fresh container from its image, a kubernetes candidate's in a Job of
/// their own; the others in bubblewrap. `who`: the run, the candidate and
/// its agent.
pub(crate) fn check_place(
    config: &Config,
    launcher: &str,
    who: (&str, &str, &rascal_core::config::AgentConfig),
    copy: Sandboxed,
    attempt: u32,
) -> Place {
    let (run, candidate, agent) = who;
    let backend = match launcher {
        "docker" => Some(Backend::Docker),
        "kubernetes" => Some(Backend::Kubernetes(Arc::new(KubernetesLauncher::new(
            config.main.kubernetes.clone().unwrap_or_default(),
        )))),
        _ => None,
    };
    match (backend, &agent.image) {
        (Some(backend), Some(image)) => Place::Container(Arc::new(Contained {
            copy,
            run: run.to_string(),
            candidate: candidate.to_string(),
            image: image.clone(),
            agent: agent.clone(),
            seq: Default::default(),
            attempt,
            backend,
        })),
        _ => Place::Sandboxed(Arc::new(copy)),
    }
}

/// Feedback from live retry decisions, waiting for its candidate.
pub(crate) type HumanFeedback = Arc<std::sync::Mutex<std::collections::BTreeMap<String, String>>>;

impl CandidateJob {
    /// The candidate's attempts: the first on the task, then — while Layer 3
    /// or Layer 5 send it back and retries remain — follow-ups with
    /// feedback in the same worktree (see `policy::next_step`).
    pub(crate) async fn run(self) -> CandidateOutcome {
        let policy = policy::Policy::of(&self.config);
        let mut attempt = 1;
        let mut instruction = self.task_text().to_string();
        if let Some((n, text)) = &self.start {
            attempt = *n;
            instruction = policy::follow_up(
                self.task_text(),
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
        // A candidate queued behind others, or retried, may find the
        // budget spent before it starts (one a reattach resumes has started).
        let resumed = self.resume.is_some() || self.landed.is_some();
        if let Some(why) = (!resumed)
            .then(|| self.budgets.refusal(&self.info.id, attempt))
            .flatten()
        {
            return self.refused(attempt, why);
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
            // A cancel (the user's, or a budget's) is a decision: no
            // retry, no escalation, whatever the layers it cut short said.
            if self.cancel.is_cancelled() && human.is_none() {
                return self.finish(attempt, done, None);
            }
            let step = policy::next_step(attempt, &policy, &done.reports, done.review.as_ref());
            // Another attempt only while the budgets have something left.
            let again = human.is_some() || matches!(step, policy::Next::Retry(_));
            if let Some(why) = again
                .then(|| self.budgets.refusal(&self.info.id, attempt + 1))
                .flatten()
            {
                self.budgets
                    .stop(&self.journal, &self.info.id, why, &self.cancel);
                return self.finish(attempt, done, None);
            }
            if let Some(text) = human {
                attempt += 1;
                instruction = policy::follow_up(
                    self.task_text(),
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
            match step {
                policy::Next::Retry(text) => {
                    attempt += 1;
                    instruction =
                        policy::follow_up(self.task_text(), attempt, policy.max_attempts(), &text);
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

    /// What the author is asked: its brief's prompt, else the task.
    fn task_text(&self) -> &str {
        self.brief
            .as_ref()
            .map_or(self.request.instruction.as_str(), |b| b.prompt.as_str())
    }

    fn finish(&self, attempt: u32, done: Attempt, escalated: Option<String>) -> CandidateOutcome {
        let mut verdict = candidate_verdict(&done.reports);
        let mut reason = first_failure(&done.reports);
        if let Some(why) = &done.impossible {
            verdict = Verdict::Fail;
            reason = Some(rascal_core::model::impossible::verdict_reason(why));
        }
        if let Some(why) = &escalated {
            verdict = Verdict::Fail;
            reason = Some(format!("escalated: {why}"));
        } else if self.cancel.is_cancelled() {
            // Whatever had passed, a cancelled candidate was not verified.
            verdict = Verdict::Fail;
            reason = Some(
                self.budgets
                    .stopped(&self.info.id)
                    .unwrap_or_else(|| "cancelled before every layer ran".into()),
            );
        }
        self.journal.emit(RunEvent::CandidateFinished {
            candidate: self.info.id.clone(),
            verdict,
            reason,
            files: done.files,
            lines: done.lines,
            tree: done
                .changes
                .as_ref()
                .map(|c| c.tree.clone())
                .filter(|t| !t.is_empty()),
            cancelled: self.cancel.is_cancelled() && escalated.is_none(),
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
            place: done.place,
        }
    }

    /// One attempt: the agent, then L2 → L4 → L3 → L5 on its change.
    async fn attempt(&self, attempt: u32, instruction: &str) -> Attempt {
        let id = self.info.id.clone();
        let mut reports: Vec<Report> = Vec::new();
        let workdir = PathBuf::from(&self.info.worktree);
        let candidate_dir = agents::candidate_dir(&self.state, &self.run, &id);
        let run_dir = if attempt == 1 {
            candidate_dir.clone()
        } else {
            candidate_dir.join(format!("attempt-{attempt}"))
        };
        // The last attempt's change tree names the held-out tests: it
        // leaves the workspace's object store before the agent is back.
        if attempt > 1 && !self.task.holdout.is_empty() {
            if let Err(e) = rascal_exec::git::forget::forget_unreachable_trees(&workdir) {
                let r = Report::new(Layer::Agent, "agent")
                    .errored(format!(
                        "could not clear the last attempt's trees from the workspace's object store: {e}"
                    ))
                    .finish();
                self.land(r, &mut reports);
                self.skip_layers(&mut reports, "skipped: the agent did not start");
                return Attempt::not_started(reports);
            }
        }
        let (agent_ok, usage) = match self.landed.clone().filter(|_| attempt == 1) {
            Some(r) => {
                let ok = r.status != Status::Fail;
                reports.push(r);
                (ok, None)
            }
            None => {
                // A reattach finds the running agent's declaration as it
                // left it; any other start clears an earlier attempt's.
                if attempt > 1 || self.resume.is_none() {
                    if let Some(r) = self.clear_declaration(attempt) {
                        self.land(r, &mut reports);
                        self.skip_layers(&mut reports, "skipped: the agent did not start");
                        return Attempt::not_started(reports);
                    }
                }
                let (agent_report, usage) = self
                    .run_agent(&workdir, &run_dir, attempt, instruction)
                    .await;
                let ok = agent_report.status != Status::Fail;
                self.land(agent_report, &mut reports);
                (ok, usage)
            }
        };
        self.launcher.release(&self.run, &id, &self.agent).await;

        let mut done = Attempt {
            reports,
            files: 0,
            lines: 0,
            review: None,
            changes: None,
            usage,
            agent_ok,
            place: None,
            impossible: None,
        };
        // The honest way out: whatever else it did, the agent said the task
        // cannot be done, and its change is not judged. A cancel stands
        // over it.
        if !self.cancel.is_cancelled() {
            done.impossible = self.take_declaration(&mut done.reports);
        }
        if done.impossible.is_some() {
            done.agent_ok = false;
        } else if agent_ok {
            let dirs = AttemptDirs {
                workdir: &workdir,
                candidate_dir: &candidate_dir,
            };
            if self.check_change(attempt, dirs, &mut done).await.is_break() {
                return done;
            }
        } else {
            self.skip_layers(
                &mut done.reports,
                "skipped: the agent did not finish cleanly",
            );
        }
        // The workspace's `.git` is rascal's again: nothing the agent put
        // there (config, hooks, info files) reaches a person's shell.
        if let Err(e) = rascal_exec::git::gitdir::reclaim(&workdir) {
            let r = Report::new(Layer::Agent, "workspace-git")
                .errored(format!(
                    "could not rewrite the workspace's .git from rascal's template: {e}\n  hint: do not run git in {} before removing it",
                    workdir.display()
                ))
                .finish();
            self.land(r, &mut done.reports);
        }
        done
    }

    /// A report of the attempt: journalled, and kept with the others.
    pub(crate) fn land(&self, r: Report, reports: &mut Vec<Report>) {
        self.journal.emit(RunEvent::ReportLanded {
            candidate: self.info.id.clone(),
            report: Box::new(r.clone()),
        });
        reports.push(r);
    }

    /// Its budget, or the run's, was spent before attempt `attempt` could
    /// start: stopped, the agent never runs, every layer is skipped.
    fn refused(&self, attempt: u32, why: String) -> CandidateOutcome {
        self.budgets
            .stop(&self.journal, &self.info.id, why.clone(), &self.cancel);
        let agent = Report::new(Layer::Agent, "agent")
            .errored(format!("not started: {why}"))
            .finish();
        self.journal.emit(RunEvent::ReportLanded {
            candidate: self.info.id.clone(),
            report: Box::new(agent.clone()),
        });
        let mut reports = vec![agent];
        self.skip_layers(
            &mut reports,
            "skipped: the agent did not start (budget spent)",
        );
        self.finish(attempt, Attempt::not_started(reports), None)
    }

    pub(crate) fn skip_layers(&self, reports: &mut Vec<Report>, why: &str) {
        let skipped = sequence::skip_all(&self.config, &self.task, why);
        for r in skipped {
            self.journal.emit(RunEvent::ReportLanded {
                candidate: self.info.id.clone(),
                report: Box::new(r.clone()),
            });
            reports.push(r);
        }
    }
}
