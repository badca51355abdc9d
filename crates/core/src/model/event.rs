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
    /// The candidate's workspace (a standalone repository at the base).
    pub worktree: String,
    /// The agent runs without a sandbox (`sandbox: none`, or a scripted
    /// agent where bubblewrap is missing).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unsandboxed: bool,
}

/// How the user's working tree stood when a run started. Agents start
/// from the base commit, and `.rascal/` is read from it unless the user
/// asked for the working tree's (`--config-from-worktree`): what is
/// uncommitted is said, never silently left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkingTree {
    /// `.rascal/` came from the working tree, not from the base commit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub config_from_worktree: bool,
    /// The files of `.rascal/` (relative to it) that differ between the
    /// working tree and the base.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config_changes: Vec<String>,
    /// How many other files have uncommitted changes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub uncommitted: usize,
    /// The first of them (at most [`NAMED_UNCOMMITTED`]), by path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uncommitted_files: Vec<String>,
}

/// How many uncommitted files the note names.
pub const NAMED_UNCOMMITTED: usize = 5;

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl WorkingTree {
    /// Nothing to say: `.rascal/` from a base it matches, nothing uncommitted.
    pub fn is_clean(&self) -> bool {
        *self == WorkingTree::default()
    }

    /// The one warning when the base's `.rascal/` is used and the working
    /// tree's differs: its changes are ignored.
    pub fn config_warning(&self, base: &str) -> Option<String> {
        (!self.config_from_worktree && !self.config_changes.is_empty()).then(|| {
            format!(
                "warning: using .rascal/ from base {}; uncommitted changes to {} are ignored — commit them or pass --config-from-worktree",
                short(base),
                self.config_changes.join(", ")
            )
        })
    }

    /// The note when `.rascal/` came from the working tree.
    pub fn config_note(&self, base: &str) -> Option<String> {
        self.config_from_worktree.then(|| {
            format!(
                "config from the working tree, not from base {}{}",
                short(base),
                if self.config_changes.is_empty() {
                    " (the same files)".to_string()
                } else {
                    format!(" (differs in {})", self.config_changes.join(", "))
                }
            )
        })
    }

    /// The note on other uncommitted changes.
    pub fn uncommitted_note(&self, base: &str) -> Option<String> {
        (self.uncommitted > 0).then(|| {
            let named = if self.uncommitted_files.is_empty() {
                String::new()
            } else {
                let more = self
                    .uncommitted
                    .saturating_sub(self.uncommitted_files.len());
                format!(
                    ": {}{}",
                    self.uncommitted_files.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                )
            };
            format!(
                "working tree has uncommitted changes ({}{named}); agents start from base {}",
                crate::text::plural(self.uncommitted as u64, "file"),
                short(base)
            )
        })
    }

    /// Every line there is to say, for a run's header.
    pub fn lines(&self, base: &str) -> Vec<String> {
        [
            self.config_warning(base),
            self.config_note(base).map(|n| format!("note: {n}")),
            self.uncommitted_note(base).map(|n| format!("note: {n}")),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

fn short(base: &str) -> &str {
    &base[..base.len().min(8)]
}

/// A criterion the unchanged base already meets, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VacuousCriterion {
    /// The criterion's description.
    pub criterion: String,
    pub why: String,
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
    /// Lines of a candidate's output, in its log file (see `Segment`).
    LogSegment(crate::model::log::Segment),
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
        /// The change as a git tree in the candidate's workspace repository.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tree: Option<String>,
        /// It was stopped (a cancel, or quitting with stop) before every
        /// layer ran.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        cancelled: bool,
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
        /// How the user's working tree stood: `.rascal/` read from it
        /// instead of the base, uncommitted changes the agents do not see.
        #[serde(default, skip_serializing_if = "WorkingTree::is_clean")]
        worktree: WorkingTree,
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
    /// The selected candidate's change was committed on a branch
    /// (`rascal finalize`, or `F` in the TUI).
    Finalized(Finalization),
    /// A budget stopped the candidate: its spending passed its agent's or
    /// the run's budget (it is cancelled, as a human's cancel would), or
    /// its next attempt would have started with the budget spent.
    /// `reason`: `budget: $0.52 spent of $0.50 (agent careful)`.
    OverBudget {
        candidate: String,
        reason: String,
    },
    /// A budget applies to the candidate but cannot be enforced: its agent
    /// reports no usage (or no cost, against a dollar limit). Said once
    /// per agent and run.
    BudgetUnenforced {
        candidate: String,
        reason: String,
    },
    /// Its agent declared the task impossible or contradictory: it left
    /// `impossible.md` in its artifacts directory. `reason` is the file's
    /// text, bounded and cleaned (see `model::impossible`). The candidate
    /// ends IMPOSSIBLE: its change is not judged, it is never retried with
    /// feedback nor picked.
    DeclaredImpossible {
        candidate: String,
        reason: String,
    },
    /// Plan, then execute: the planning agent's proposal, before any
    /// candidate starts. `problem`: why there is no usable proposal (its
    /// answer did not parse twice, it timed out…); a human decides then.
    PlanProposed {
        agent: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        criteria: Vec<crate::config::spec::Criterion>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        constraints: Vec<crate::config::spec::Constraint>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        problem: Option<String>,
    },
    /// The task's acceptance criteria checked on the unchanged base before
    /// any candidate's: those that pass there are vacuous — a change that
    /// does nothing meets them — and never count as evidence.
    CriteriaOnBase {
        checked: usize,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        vacuous: Vec<VacuousCriterion>,
    },
    /// A candidate joins a run that already started: `rascal combine` (or
    /// `C` in the TUI) adds the combining agent's candidate, written from
    /// the candidates `combined_from` (best first), in a fresh workspace
    /// at the base. It goes through every layer and is ranked with the
    /// others.
    CandidateAdded {
        candidate: CandidateInfo,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        combined_from: Vec<String>,
    },
}

/// What a finalize did: the branch, the commit, the PR body it wrote and
/// how the pull request can be (or was) opened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finalization {
    pub candidate: String,
    pub branch: String,
    pub commit: String,
    /// The commit's title (its first line).
    pub title: String,
    /// Where the PR body was written.
    pub pr_body: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushed_to: Option<String>,
    /// The `gh` command that opens the pull request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pr_command: Vec<String>,
    /// `gh` ran and succeeded.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pr_opened: bool,
}

impl RunEvent {
    pub fn kind(&self) -> &'static str {
        match self {
            RunEvent::RunStarted { .. } => "run_started",
            RunEvent::CandidateStarted { .. } => "candidate_started",
            RunEvent::Log { .. } => "log",
            RunEvent::LogSegment(_) => "log_segment",
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
            RunEvent::Finalized(_) => "finalized",
            RunEvent::OverBudget { .. } => "over_budget",
            RunEvent::BudgetUnenforced { .. } => "budget_unenforced",
            RunEvent::DeclaredImpossible { .. } => "declared_impossible",
            RunEvent::PlanProposed { .. } => "plan_proposed",
            RunEvent::CandidateAdded { .. } => "candidate_added",
            RunEvent::CriteriaOnBase { .. } => "criteria_on_base",
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
            | RunEvent::CandidateEscalated { candidate, .. }
            | RunEvent::OverBudget { candidate, .. }
            | RunEvent::BudgetUnenforced { candidate, .. }
            | RunEvent::DeclaredImpossible { candidate, .. } => Some(candidate),
            RunEvent::DecisionRecorded { decision } => decision.candidate.as_deref(),
            RunEvent::Finalized(f) => Some(&f.candidate),
            RunEvent::LogSegment(s) => Some(&s.candidate),
            RunEvent::CandidateAdded { candidate, .. } => Some(&candidate.id),
            _ => None,
        }
    }
}

pub use crate::model::verdict::{candidate_verdict, run_exit_code, run_verdict};
