//! The one fold of a run's events into its summary: candidates with their
//! reports, verdicts (raw and after overrides), attempts, decisions and
//! escalations; the ranking and the selection. The printer, `show`,
//! `report`, `--json`, the TUI and reattach all read this, so they cannot
//! disagree about what a run says.

use crate::config::spec::Task;
use crate::model::clock::{CandidateClock, Span};
use crate::model::decision::DecisionKind;
use crate::model::event::{Finalization, RunEvent, WorkingTree};
use crate::model::state::State;
use crate::model::verdict::{Layer, Report, Status, Verdict};
use serde::{Deserialize, Serialize};

/// One candidate's results, folded from events.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CandidateSummary {
    pub id: String,
    pub agent: String,
    pub runtime: String,
    pub worktree: String,
    /// The agent ran without a sandbox.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unsandboxed: bool,
    /// The change as a git tree in the workspace repository (what was
    /// verified, and what `finalize` commits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
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
    /// Tokens and cost when the agent's stream reported them (the latest
    /// attempt's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::model::usage::Usage>,
    /// Tokens and cost over all its attempts: what counts against budgets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spent: Option<crate::model::usage::Usage>,
    /// What its attempts before the current one spent.
    #[serde(skip)]
    spent_before: crate::model::usage::Usage,
    /// Why a budget stopped it (it is CANCELLED): `budget: $0.52 spent of
    /// $0.50 (agent careful)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_budget: Option<String>,
    /// A budget applies to it but cannot be enforced (its agent reports no
    /// usage, or no cost against a dollar limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_warning: Option<String>,
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
    /// Why its agent declared the task impossible (the latest attempt's
    /// `impossible.md`, bounded and cleaned): it is IMPOSSIBLE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impossible: Option<String>,
    /// The agent started (a `candidate_started` event landed).
    #[serde(skip)]
    pub started: bool,
    /// Lines of the agent's own output journalled so far, stdout and
    /// stderr (rascal's notes excluded): where a reattach resumes.
    #[serde(skip)]
    pub output_lines: [u64; 2],
    /// Where it stands: queued, running, its verdict after overrides, or
    /// cancelled, escalated, interrupted, impossible.
    #[serde(default)]
    pub state: State,
    /// Its clocks, from journal times (only when the fold was given them).
    #[serde(skip)]
    pub clock: CandidateClock,
    /// It was written by the combining agent from these candidates (best
    /// first): `rascal combine`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub combined_from: Vec<String>,
}

impl CandidateSummary {
    /// The decisions that apply to the current attempt (overrides given for
    /// an earlier attempt do not).
    pub fn current_decisions(&self) -> &[crate::model::decision::Decision] {
        &self.decisions[self.overrides_from.min(self.decisions.len())..]
    }

    /// A layer shows as overridden (⊘) when it failed, warned or was
    /// skipped and every such report in it is covered by an override of
    /// the current attempt — the same rule `effective_verdict` applies.
    pub fn layer_overridden(&self, layer: Layer) -> bool {
        let decisions = self.current_decisions();
        let mut bad = self
            .reports
            .iter()
            .filter(|r| {
                r.layer == layer
                    && matches!(r.status, Status::Fail | Status::Warn | Status::Skipped)
            })
            .peekable();
        bad.peek().is_some() && bad.all(|r| decisions.iter().any(|d| d.overrides(r)))
    }

    /// The report of the agent itself, once it landed.
    pub fn agent_report(&self) -> Option<&Report> {
        self.reports
            .iter()
            .find(|r| r.layer == Layer::Agent && r.check == "agent")
    }

    /// What still keeps it from passing (after the current overrides).
    pub fn blockers(&self) -> crate::model::decision::Blockers {
        crate::model::decision::blockers(&self.reports, self.current_decisions())
    }

    /// Why selecting it needs a human's explicit word (it did not pass,
    /// or has no verdict yet), or None when it passed. `finalize` refuses
    /// such a candidate until its failures are overridden.
    pub fn select_refusal(&self) -> Option<String> {
        // Whatever was overridden: it did not do the task, and said why.
        if let Some(why) = &self.impossible {
            return Some(format!(
                "candidate `{}` is IMPOSSIBLE: its agent declared the task impossible ({}); its change was not verified",
                self.id,
                crate::model::impossible::first_line(why)
            ));
        }
        // Whole: the reason is what the human must weigh before forcing.
        let why = self
            .reason
            .as_deref()
            .map(|r| format!(": {}", r.trim()))
            .unwrap_or_default();
        match self.effective_verdict.or(self.verdict) {
            Some(Verdict::Pass | Verdict::Warn) => None,
            Some(Verdict::Fail) => Some(format!(
                "candidate `{}` is {}{why}",
                self.id,
                if self.state.live() {
                    "FAIL"
                } else {
                    self.state.label()
                }
            )),
            None => Some(format!(
                "candidate `{}` has no verdict yet: it is {}",
                self.id,
                self.state.label()
            )),
        }
    }

    /// The state its verdict says, unless it was stopped, escalated or
    /// declared the task impossible.
    fn settle(&mut self) {
        if self.state == State::Cancelled || self.verdict.is_none() {
            return;
        }
        self.state = if self.escalated.is_some() {
            State::Escalated
        } else if self.impossible.is_some() {
            State::Impossible
        } else {
            State::of(
                self.effective_verdict
                    .or(self.verdict)
                    .unwrap_or(Verdict::Fail),
            )
        };
    }

    /// Something ran for it: a queued or interrupted candidate is running.
    fn wake(&mut self) {
        if matches!(self.state, State::Queued | State::Interrupted) && self.verdict.is_none() {
            self.state = State::Running;
        }
    }
}

fn first_attempt() -> u32 {
    1
}

fn running() -> State {
    State::Running
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
    /// The human who escalated it with a note (None: the pipeline did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
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
    /// How the user's working tree stood (`.rascal/` from it, uncommitted
    /// changes), when there was something to say.
    #[serde(default, skip_serializing_if = "WorkingTree::is_clean")]
    pub worktree: WorkingTree,
    /// Plan, then execute: the planner's proposal (the approved criteria
    /// are `task`'s, the approval one of `decisions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanProposal>,
    /// The task's criteria that the unchanged base already meets
    /// (`RunEvent::CriteriaOnBase`): never evidence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vacuous: Vec<crate::model::event::VacuousCriterion>,
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
    /// Where the run stands: running, its verdict, or cancelled,
    /// escalated, interrupted.
    #[serde(default = "running")]
    pub state: State,
    /// The latest finalize: the branch and commit of the selected change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalized: Option<Finalization>,
    /// The run's wall clock, from journal times (only when the fold was
    /// given them).
    #[serde(skip)]
    pub wall: Span,
    /// A human cancelled the whole run since it last started.
    #[serde(skip)]
    cancelled: bool,
    /// The journal's chain head, when the summary was read from the store
    /// (which checked the chain first); the PR body publishes it. Not part
    /// of the JSON document (`rascal verify RUN --json` prints it).
    #[serde(skip)]
    pub journal: Option<ChainHead>,
}

/// What the planning agent proposed (`RunEvent::PlanProposed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanProposal {
    pub agent: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub criteria: Vec<crate::config::spec::Criterion>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<crate::config::spec::Constraint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// The end of a run's journal as checked by the store: how many events
/// it holds and the last event's chain hash (`None`: the run was recorded
/// by an older rascal, before the journal was chained, so there is
/// nothing to check).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainHead {
    pub events: u64,
    pub head: Option<String>,
}

impl Default for RunSummary {
    fn default() -> Self {
        RunSummary::new()
    }
}

impl RunSummary {
    /// Candidate `id`, or an error listing the run's candidates.
    pub fn candidate(&self, id: &str) -> Result<&CandidateSummary, crate::Error> {
        self.candidates
            .iter()
            .find(|c| c.id == id)
            .ok_or_else(|| crate::Error::UnknownCandidate {
                run: self.run.clone(),
                id: id.to_string(),
                candidates: self.candidates.iter().map(|c| c.id.clone()).collect(),
            })
    }

    /// A run before its first event.
    pub fn new() -> RunSummary {
        RunSummary {
            run: String::new(),
            status: "running".into(),
            verdict: None,
            exit_code: None,
            base: String::new(),
            instruction: String::new(),
            task_source: None,
            task: None,
            worktree: WorkingTree::default(),
            plan: None,
            vacuous: Vec::new(),
            candidates: Vec::new(),
            ranking: None,
            selected: None,
            decisions: Vec::new(),
            state: State::Running,
            finalized: None,
            wall: Span::default(),
            cancelled: false,
            journal: None,
        }
    }

    /// The summary of a whole journal.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a RunEvent>) -> RunSummary {
        let mut s = RunSummary::new();
        for ev in events {
            s.apply(ev);
        }
        s
    }

    /// The summary of a whole journal with each event's time (ms): the
    /// same summary, with its clocks.
    pub fn from_timed<'a>(events: impl IntoIterator<Item = &'a (i64, RunEvent)>) -> RunSummary {
        let mut s = RunSummary::new();
        for (at, ev) in events {
            s.apply_at(ev, Some(*at));
        }
        s
    }

    /// Fold one more event in. This is the one fold of a run's history: the
    /// printer, `show`, `report`, the TUI and reattach all read it.
    pub fn apply(&mut self, ev: &RunEvent) {
        self.apply_at(ev, None)
    }

    /// The run is driven again (a retry after it ended, a reattach after
    /// it was interrupted): no verdict until it ends again.
    fn reopen(&mut self) {
        if self.status != "running" {
            self.status = "running".into();
            self.verdict = None;
            self.exit_code = None;
            self.wall.ended_ms = None;
            self.cancelled = false;
        }
    }

    /// The run's state, from its status, decisions and candidates.
    fn settle(&mut self) {
        self.state = match self.status.as_str() {
            "running" => State::Running,
            "interrupted" => State::Interrupted,
            _ if self.cancelled
                || (!self.candidates.is_empty()
                    && self.candidates.iter().all(|c| c.state == State::Cancelled)) =>
            {
                State::Cancelled
            }
            _ if self.exit_code == Some(3)
                || self
                    .decisions
                    .iter()
                    .any(|d| d.kind == DecisionKind::Escalate)
                || self.declarations_escalate() =>
            {
                State::Escalated
            }
            _ if self.exit_code == Some(crate::model::verdict::CONTESTED_EXIT_CODE) => {
                State::Contested
            }
            _ => State::of(self.verdict.unwrap_or(Verdict::Fail)),
        };
    }

    /// The candidates' declarations of impossibility escalate the run (see
    /// `model::impossible::escalates`).
    pub fn declarations_escalate(&self) -> bool {
        let states: Vec<State> = self.candidates.iter().map(|c| c.state).collect();
        crate::model::impossible::escalates(&states)
    }

    /// The candidates that declared the task impossible, with their reasons.
    pub fn declarations(&self) -> impl Iterator<Item = (&str, &str)> {
        self.candidates
            .iter()
            .filter(|c| c.state == State::Impossible)
            .filter_map(|c| Some((c.id.as_str(), c.impossible.as_deref()?)))
    }

    /// Fold one more event in, `at` the time it was journalled when known
    /// (the clocks need it; nothing else does).
    pub fn apply_at(&mut self, ev: &RunEvent, at: Option<i64>) {
        self.fold(ev, at);
        if !matches!(ev, RunEvent::Log { .. } | RunEvent::LogSegment(_)) {
            self.settle();
        }
    }
}

impl CandidateSummary {
    /// A candidate as the run starts: queued, nothing run yet.
    pub fn queued(c: &crate::model::event::CandidateInfo) -> CandidateSummary {
        CandidateSummary {
            id: c.id.clone(),
            agent: c.agent.clone(),
            runtime: c.runtime.clone(),
            worktree: c.worktree.clone(),
            unsandboxed: c.unsandboxed,
            tree: None,
            verdict: None,
            reason: None,
            files_changed: 0,
            lines_changed: 0,
            reports: Vec::new(),
            decisions: Vec::new(),
            overrides_from: 0,
            effective_verdict: None,
            usage: None,
            spent: None,
            spent_before: Default::default(),
            over_budget: None,
            budget_warning: None,
            summary: None,
            attempt: 1,
            attempts: Vec::new(),
            checklist: String::new(),
            escalated: None,
            impossible: None,
            started: false,
            output_lines: [0, 0],
            state: State::Queued,
            clock: CandidateClock::default(),
            combined_from: Vec::new(),
        }
    }
}

mod fold;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_decisions;
