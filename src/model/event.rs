//! `RunEvent`: everything that happens in a run, in order. The pipeline
//! emits them; the store journals them; the headless printer, `--json` and
//! `rascal show` are all built from the same sequence, so a run replayed
//! from the store reads exactly as it did live.

use crate::config::spec::Task;
use crate::model::log::Stream;
use crate::model::verdict::{Layer, Report, Verdict};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CandidateInfo {
    pub id: String,
    pub agent: String,
    pub runtime: String,
    pub worktree: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RunEvent {
    RunStarted {
        run: String,
        repo: String,
        base: String,
        instruction: String,
        launcher: String,
        candidates: Vec<CandidateInfo>,
    },
    CandidateStarted {
        candidate: String,
        command: String,
    },
    Log {
        candidate: String,
        stream: Stream,
        /// The raw line (credentials redacted, cut when huge).
        text: String,
        /// The readable form when the runtime's event stream was parsed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<String>,
    },
    /// Tokens and cost so far (the session's running totals).
    Usage {
        candidate: String,
        usage: crate::model::usage::Usage,
    },
    /// The agent's final message, its summary of the work.
    AgentSummary {
        candidate: String,
        text: String,
    },
    LayerStarted {
        candidate: String,
        layer: Layer,
    },
    ReportLanded {
        candidate: String,
        report: Box<Report>,
    },
    CandidateFinished {
        candidate: String,
        verdict: Verdict,
        /// One line: why, when not PASS.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        files: usize,
        lines: u64,
    },
    /// The comparator ranked the finished candidates (Layer 1).
    Ranked {
        ranking: Box<crate::model::ranking::Ranking>,
    },
    /// A human (or the auto policy) decided something.
    DecisionRecorded {
        decision: crate::model::decision::Decision,
    },
    RunFinished {
        verdict: Verdict,
        exit_code: i32,
    },
    /// Found by a later rascal: the process running this run died.
    RunInterrupted {
        reason: String,
    },
    /// The task came from a spec or an issue: its criteria and constraints
    /// (Layer 3). Emitted right after `RunStarted`.
    TaskLoaded {
        /// `spec NAME`, `issue FILE` or `instruction`.
        source: String,
        task: Box<Task>,
    },
    /// A retry: the candidate's author gets `feedback` (what still fails)
    /// in its worktree, then layers 2 → 4 → 3 → 5 run again.
    AttemptStarted {
        candidate: String,
        attempt: u32,
        feedback: String,
    },
    /// The candidate needs a human: retries exhausted, or the reviewer's
    /// output was unusable twice. `table` is Markdown: what still fails.
    CandidateEscalated {
        candidate: String,
        reason: String,
        table: String,
    },
}

impl RunEvent {
    pub fn kind(&self) -> &'static str {
        match self {
            RunEvent::RunStarted { .. } => "run_started",
            RunEvent::CandidateStarted { .. } => "candidate_started",
            RunEvent::Log { .. } => "log",
            RunEvent::Usage { .. } => "usage",
            RunEvent::AgentSummary { .. } => "agent_summary",
            RunEvent::LayerStarted { .. } => "layer_started",
            RunEvent::ReportLanded { .. } => "report_landed",
            RunEvent::CandidateFinished { .. } => "candidate_finished",
            RunEvent::Ranked { .. } => "ranked",
            RunEvent::DecisionRecorded { .. } => "decision_recorded",
            RunEvent::RunFinished { .. } => "run_finished",
            RunEvent::RunInterrupted { .. } => "run_interrupted",
            RunEvent::TaskLoaded { .. } => "task_loaded",
            RunEvent::AttemptStarted { .. } => "attempt_started",
            RunEvent::CandidateEscalated { .. } => "candidate_escalated",
        }
    }

    pub fn candidate(&self) -> Option<&str> {
        match self {
            RunEvent::CandidateStarted { candidate, .. }
            | RunEvent::Log { candidate, .. }
            | RunEvent::Usage { candidate, .. }
            | RunEvent::AgentSummary { candidate, .. }
            | RunEvent::LayerStarted { candidate, .. }
            | RunEvent::ReportLanded { candidate, .. }
            | RunEvent::CandidateFinished { candidate, .. }
            | RunEvent::AttemptStarted { candidate, .. }
            | RunEvent::CandidateEscalated { candidate, .. } => Some(candidate),
            RunEvent::DecisionRecorded { decision } => decision.candidate.as_deref(),
            _ => None,
        }
    }
}

/// One candidate's results, folded from events.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CandidateSummary {
    pub id: String,
    pub agent: String,
    pub runtime: String,
    pub worktree: String,
    /// None while still running (or when the run was interrupted).
    pub verdict: Option<Verdict>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub files_changed: usize,
    pub lines_changed: u64,
    /// The reports of the latest attempt (the ones the verdict is from).
    pub reports: Vec<Report>,
    /// Decisions about this candidate (overrides, selection, …), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<crate::model::decision::Decision>,
    /// Tokens and cost when the agent's stream reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::model::usage::Usage>,
    /// The agent's final message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Overrides apply to the attempt they were given for: the index in
    /// `decisions` where the current attempt's begin.
    #[serde(skip)]
    pub overrides_from: usize,
    /// The verdict once overrides are applied (equals `verdict` without any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective_verdict: Option<Verdict>,
    /// The latest attempt (1 unless the candidate was retried).
    #[serde(default = "first_attempt")]
    pub attempt: u32,
    /// Earlier attempts, kept whole: their reports and the feedback sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<AttemptSummary>,
    /// Layer 3 as a Markdown checklist (latest attempt).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub checklist: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalated: Option<Escalation>,
}

fn first_attempt() -> u32 {
    1
}

/// One finished attempt of a candidate that was retried.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AttemptSummary {
    pub attempt: u32,
    pub reports: Vec<Report>,
    /// What was sent to the author after this attempt.
    pub feedback: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Escalation {
    pub reason: String,
    pub table: String,
}

/// A run's results, folded from events: the `--json` document.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunSummary {
    pub run: String,
    pub status: String,
    pub verdict: Option<Verdict>,
    pub exit_code: Option<i32>,
    pub base: String,
    pub instruction: String,
    /// Where the task came from and its criteria, when not a bare instruction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Task>,
    pub candidates: Vec<CandidateSummary>,
    /// The comparator's ranking (Layer 1), once every candidate finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranking: Option<crate::model::ranking::Ranking>,
    /// The candidate selected for finalizing (the latest select decision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected: Option<String>,
    /// Decisions about the whole run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<crate::model::decision::Decision>,
}

impl RunSummary {
    /// Candidate `id`, or an error listing the run's candidates.
    pub fn candidate(&self, id: &str) -> Result<&CandidateSummary, String> {
        self.candidates.iter().find(|c| c.id == id).ok_or_else(|| {
            let ids: Vec<&str> = self.candidates.iter().map(|c| c.id.as_str()).collect();
            format!(
                "no candidate `{id}` in run {}\n  hint: candidates: {}",
                self.run,
                ids.join(", ")
            )
        })
    }

    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a RunEvent>) -> RunSummary {
        let mut s = RunSummary {
            run: String::new(),
            status: "running".into(),
            verdict: None,
            exit_code: None,
            base: String::new(),
            instruction: String::new(),
            task_source: None,
            task: None,
            candidates: Vec::new(),
            ranking: None,
            selected: None,
            decisions: Vec::new(),
        };
        for ev in events {
            match ev {
                RunEvent::RunStarted {
                    run,
                    base,
                    instruction,
                    candidates,
                    ..
                } => {
                    s.run = run.clone();
                    s.base = base.clone();
                    s.instruction = instruction.clone();
                    s.candidates = candidates
                        .iter()
                        .map(|c| CandidateSummary {
                            id: c.id.clone(),
                            agent: c.agent.clone(),
                            runtime: c.runtime.clone(),
                            worktree: c.worktree.clone(),
                            verdict: None,
                            reason: None,
                            files_changed: 0,
                            lines_changed: 0,
                            reports: Vec::new(),
                            decisions: Vec::new(),
                            overrides_from: 0,
                            effective_verdict: None,
                            usage: None,
                            summary: None,
                            attempt: 1,
                            attempts: Vec::new(),
                            checklist: String::new(),
                            escalated: None,
                        })
                        .collect();
                }
                RunEvent::ReportLanded { candidate, report } => {
                    if let Some(c) = s.candidates.iter_mut().find(|c| &c.id == candidate) {
                        c.reports.push((**report).clone());
                    }
                }
                RunEvent::CandidateFinished {
                    candidate,
                    verdict,
                    reason,
                    files,
                    lines,
                } => {
                    if let Some(c) = s.candidates.iter_mut().find(|c| &c.id == candidate) {
                        c.verdict = Some(*verdict);
                        c.effective_verdict = Some(crate::model::decision::effective_verdict(
                            &c.reports,
                            &c.decisions[c.overrides_from..],
                        ));
                        c.reason = reason.clone();
                        c.files_changed = *files;
                        c.lines_changed = *lines;
                        c.checklist = crate::model::checklist::checklist_markdown(&c.reports);
                    }
                }
                RunEvent::TaskLoaded { source, task } => {
                    s.task_source = Some(source.clone());
                    s.task = Some((**task).clone());
                }
                RunEvent::AttemptStarted {
                    candidate,
                    attempt,
                    feedback,
                } => {
                    if let Some(c) = s.candidates.iter_mut().find(|c| &c.id == candidate) {
                        c.attempts.push(AttemptSummary {
                            attempt: c.attempt,
                            reports: std::mem::take(&mut c.reports),
                            feedback: feedback.clone(),
                        });
                        c.attempt = *attempt;
                        // A new attempt: nothing is verified (or selected)
                        // until it finishes, and earlier overrides stay with
                        // the attempt they were given for.
                        c.verdict = None;
                        c.effective_verdict = None;
                        c.overrides_from = c.decisions.len();
                        if s.selected.as_deref() == Some(c.id.as_str()) {
                            s.selected = None;
                        }
                    }
                }
                RunEvent::CandidateEscalated {
                    candidate,
                    reason,
                    table,
                } => {
                    if let Some(c) = s.candidates.iter_mut().find(|c| &c.id == candidate) {
                        c.escalated = Some(Escalation {
                            reason: reason.clone(),
                            table: table.clone(),
                        });
                    }
                }
                RunEvent::Ranked { ranking } => s.ranking = Some((**ranking).clone()),
                RunEvent::Usage { candidate, usage } => {
                    if let Some(c) = s.candidates.iter_mut().find(|c| &c.id == candidate) {
                        c.usage = Some(*usage);
                    }
                }
                RunEvent::AgentSummary { candidate, text } => {
                    if let Some(c) = s.candidates.iter_mut().find(|c| &c.id == candidate) {
                        c.summary = Some(text.clone());
                    }
                }
                RunEvent::DecisionRecorded { decision } => {
                    use crate::model::decision::DecisionKind;
                    let target = decision
                        .candidate
                        .as_ref()
                        .and_then(|id| s.candidates.iter_mut().find(|c| &c.id == id));
                    match target {
                        Some(c) => {
                            c.decisions.push(decision.clone());
                            if c.verdict.is_some() {
                                c.effective_verdict =
                                    Some(crate::model::decision::effective_verdict(
                                        &c.reports,
                                        &c.decisions[c.overrides_from..],
                                    ));
                            }
                            if decision.kind == DecisionKind::Select {
                                s.selected = Some(c.id.clone());
                            }
                        }
                        None => s.decisions.push(decision.clone()),
                    }
                }
                RunEvent::RunFinished { verdict, exit_code } => {
                    s.status = "finished".into();
                    s.verdict = Some(*verdict);
                    s.exit_code = Some(*exit_code);
                }
                RunEvent::RunInterrupted { .. } => {
                    s.status = "interrupted".into();
                    if s.verdict.is_none() {
                        s.verdict = Some(Verdict::Fail);
                    }
                }
                _ => {}
            }
        }
        s
    }
}

pub use crate::model::verdict::{candidate_verdict, run_exit_code, run_verdict};
