//! The one fold of a run's events into its summary: candidates with their
//! reports, verdicts (raw and after overrides), attempts, decisions and
//! escalations; the ranking and the selection. The printer, `show`,
//! `report`, `--json`, the TUI and reattach all read this, so they cannot
//! disagree about what a run says.

use crate::config::spec::Task;
use crate::model::clock::{CandidateClock, Span};
use crate::model::decision::DecisionKind;
use crate::model::event::{Finalization, RunEvent, WorkingTree};
use crate::model::log::Stream;
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

    /// Fold one event in: the run's own events here, a candidate's in
    /// `fold_candidate`.
    fn fold(&mut self, ev: &RunEvent, at: Option<i64>) {
        match ev {
            RunEvent::ReportLanded { .. }
            | RunEvent::LayerStarted { .. }
            | RunEvent::CandidateFinished { .. }
            | RunEvent::CandidateEscalated { .. }
            | RunEvent::Usage { .. }
            | RunEvent::OverBudget { .. }
            | RunEvent::BudgetUnenforced { .. }
            | RunEvent::DeclaredImpossible { .. }
            | RunEvent::AgentSummary { .. }
            | RunEvent::CandidateStarted { .. }
            | RunEvent::LogSegment(_)
            | RunEvent::Log { .. } => self.fold_candidate(ev, at),
            RunEvent::CandidateAdded {
                candidate,
                combined_from,
            } => {
                self.reopen();
                if self.candidate_mut(&candidate.id).is_none() {
                    let mut c = CandidateSummary::queued(candidate);
                    c.combined_from = combined_from.clone();
                    self.candidates.push(c);
                }
            }
            RunEvent::RunStarted {
                run,
                base,
                instruction,
                candidates,
                ..
            } => {
                self.run = run.clone();
                self.base = base.clone();
                self.instruction = instruction.clone();
                self.wall = Span {
                    started_ms: at,
                    ended_ms: None,
                };
                self.candidates = candidates.iter().map(CandidateSummary::queued).collect();
            }
            RunEvent::TaskLoaded {
                source,
                task,
                worktree,
            } => {
                // A bare instruction is journalled only to carry the note.
                if source != "instruction" {
                    self.task_source = Some(source.clone());
                    self.task = Some((**task).clone());
                }
                self.worktree = worktree.clone();
            }
            RunEvent::AttemptStarted {
                candidate,
                attempt,
                feedback,
            } => self.start_attempt(candidate, *attempt, feedback, at),
            RunEvent::Ranked { ranking } => self.ranking = Some((**ranking).clone()),
            RunEvent::DecisionRecorded { decision } => self.record_decision(decision),
            RunEvent::RunFinished { verdict, exit_code } => {
                self.status = "finished".into();
                self.verdict = Some(*verdict);
                self.exit_code = Some(*exit_code);
                self.wall.ended_ms = at;
            }
            RunEvent::RunInterrupted { .. } => self.interrupt(at),
            RunEvent::Finalized(f) => self.finalized = Some(f.clone()),
            RunEvent::CriteriaOnBase { vacuous, .. } => self.vacuous = vacuous.clone(),
            RunEvent::PlanProposed {
                agent,
                criteria,
                constraints,
                problem,
            } => {
                self.plan = Some(PlanProposal {
                    agent: agent.clone(),
                    criteria: criteria.clone(),
                    constraints: constraints.clone(),
                    problem: problem.clone(),
                })
            }
        }
    }

    /// Fold in an event about one candidate (its reports, verdict,
    /// spending, output…).
    fn fold_candidate(&mut self, ev: &RunEvent, at: Option<i64>) {
        match ev {
            RunEvent::ReportLanded { candidate, report } => {
                self.reopen();
                if let Some(c) = self.candidate_mut(candidate) {
                    c.land_report(report, at);
                }
            }
            RunEvent::LayerStarted { candidate, .. } => {
                self.reopen();
                if let Some(c) = self.candidate_mut(candidate) {
                    c.wake();
                }
            }
            RunEvent::CandidateFinished {
                candidate,
                verdict,
                reason,
                files,
                lines,
                tree,
                cancelled,
            } => {
                if let Some(c) = self.candidate_mut(candidate) {
                    c.close_clocks(at);
                    if *cancelled {
                        c.state = State::Cancelled;
                    }
                    c.tree = tree.clone();
                    c.verdict = Some(*verdict);
                    c.reason = reason.clone();
                    c.files_changed = *files;
                    c.lines_changed = *lines;
                    c.conclude();
                }
            }
            RunEvent::CandidateEscalated {
                candidate,
                reason,
                table,
            } => {
                if let Some(c) = self.candidate_mut(candidate) {
                    c.escalated = Some(Escalation {
                        reason: reason.clone(),
                        table: table.clone(),
                        by: None,
                    });
                    c.settle();
                }
            }
            RunEvent::Usage { candidate, usage } => {
                if let Some(c) = self.candidate_mut(candidate) {
                    c.usage = Some(*usage);
                    c.spent = Some(crate::model::budget::sum(c.spent_before, *usage));
                }
            }
            RunEvent::OverBudget { candidate, reason } => {
                if let Some(c) = self.candidate_mut(candidate) {
                    c.over_budget = Some(reason.clone());
                    if c.state.live() {
                        c.state = State::Cancelled;
                    }
                }
            }
            RunEvent::BudgetUnenforced { candidate, reason } => {
                if let Some(c) = self.candidate_mut(candidate) {
                    c.budget_warning.get_or_insert_with(|| reason.clone());
                }
            }
            RunEvent::AgentSummary { candidate, text } => {
                if let Some(c) = self.candidate_mut(candidate) {
                    c.summary = Some(text.clone());
                }
            }
            RunEvent::DeclaredImpossible { candidate, reason } => {
                if let Some(c) = self.candidate_mut(candidate) {
                    c.impossible = Some(reason.clone());
                    c.settle();
                }
            }
            RunEvent::CandidateStarted { candidate, .. } => {
                self.reopen();
                if let Some(c) = self.candidate_mut(candidate) {
                    c.start(at);
                }
            }
            RunEvent::LogSegment(seg) => {
                if let Some(c) = self.started_candidate_mut(&seg.candidate) {
                    // rascal's own notes are not the agent's output.
                    c.count_output(seg.stream, seg.lines.saturating_sub(seg.own));
                }
            }
            // A run of an older rascal journalled every line.
            RunEvent::Log {
                candidate,
                stream,
                text,
                ..
            } => {
                // rascal's own notes are not the agent's output.
                if let Some(c) = self
                    .started_candidate_mut(candidate)
                    .filter(|_| !text.starts_with("rascal: "))
                {
                    c.count_output(*stream, 1);
                }
            }
            _ => {}
        }
    }

    /// The candidate with this id, to fold an event into.
    fn candidate_mut(&mut self, id: &str) -> Option<&mut CandidateSummary> {
        self.candidates.iter_mut().find(|c| c.id == id)
    }

    /// The candidate with this id once its agent started (output before
    /// that is not the agent's).
    fn started_candidate_mut(&mut self, id: &str) -> Option<&mut CandidateSummary> {
        self.candidates.iter_mut().find(|c| c.id == id && c.started)
    }

    /// A retry of a candidate begins: the attempt before is put aside, and
    /// the candidate is no longer selected.
    fn start_attempt(&mut self, candidate: &str, attempt: u32, feedback: &str, at: Option<i64>) {
        self.reopen();
        let Some(c) = self.candidate_mut(candidate) else {
            return;
        };
        c.begin_attempt(attempt, feedback, at);
        if self.selected.as_deref() == Some(candidate) {
            self.selected = None;
        }
    }

    /// A decision lands on the candidate it names, or on the run itself.
    fn record_decision(&mut self, decision: &crate::model::decision::Decision) {
        let target = decision
            .candidate
            .as_ref()
            .and_then(|id| self.candidates.iter_mut().find(|c| &c.id == id));
        match target {
            Some(c) => {
                c.decisions.push(decision.clone());
                if c.verdict.is_some() {
                    c.effective_verdict = Some(crate::model::decision::effective_verdict(
                        &c.reports,
                        &c.decisions[c.overrides_from..],
                    ));
                }
                match decision.kind {
                    DecisionKind::Select => self.selected = Some(c.id.clone()),
                    // Only what is still going can be stopped.
                    DecisionKind::Cancel if c.state.live() => c.state = State::Cancelled,
                    DecisionKind::Escalate => {
                        c.escalated = Some(Escalation {
                            reason: decision.reason.clone(),
                            table: String::new(),
                            by: Some(decision.who.clone()),
                        })
                    }
                    _ => {}
                }
                c.settle();
            }
            None => {
                if decision.kind == DecisionKind::Cancel && self.status == "running" {
                    self.cancelled = true;
                    for c in self.candidates.iter_mut().filter(|c| c.state.live()) {
                        c.state = State::Cancelled;
                    }
                }
                self.decisions.push(decision.clone())
            }
        }
    }

    /// The process running the run died: what was still going is
    /// interrupted, its clocks stopped.
    fn interrupt(&mut self, at: Option<i64>) {
        self.status = "interrupted".into();
        if self.verdict.is_none() {
            self.verdict = Some(Verdict::Fail);
        }
        self.wall.ended_ms = at;
        for c in self.candidates.iter_mut().filter(|c| c.state.live()) {
            c.state = State::Interrupted;
            for span in [&mut c.clock.attempt, &mut c.clock.agent] {
                if span.open() {
                    span.ended_ms = at;
                }
            }
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

    /// A report landed (the agent's own one closes the agent's clock).
    fn land_report(&mut self, report: &Report, at: Option<i64>) {
        if report.layer == Layer::Agent && report.check == "agent" {
            self.clock.agent.started_ms = self.clock.agent.started_ms.or(at);
            self.clock.agent.ended_ms = at.or(self.clock.agent.started_ms);
        }
        // Cross-testing again (a candidate joined the run) gives a finished
        // candidate a new `compare` report: it stands for the earlier one.
        if report.layer == Layer::Compare {
            self.reports
                .retain(|r| !(r.layer == Layer::Compare && r.check == report.check));
        }
        self.reports.push(report.clone());
        self.wake();
    }

    /// Its agent started: the agent's clock (and the attempt's, when none
    /// is running) starts.
    fn start(&mut self, at: Option<i64>) {
        self.started = true;
        self.clock.agent = Span {
            started_ms: at,
            ended_ms: None,
        };
        if self.clock.attempt.started_ms.is_none() || !self.clock.attempt.open() {
            self.clock.attempt = self.clock.agent;
        }
        self.wake();
    }

    /// It finished: the attempt's clock, and the agent's if still open, stop.
    fn close_clocks(&mut self, at: Option<i64>) {
        self.clock.attempt.ended_ms = at;
        if self.clock.agent.open() {
            self.clock.agent.ended_ms = at;
        }
    }

    /// Its verdict is known: the verdict after overrides, the checklist and
    /// the state follow.
    fn conclude(&mut self) {
        self.effective_verdict = Some(crate::model::decision::effective_verdict(
            &self.reports,
            &self.decisions[self.overrides_from..],
        ));
        self.checklist = crate::model::checklist::checklist_markdown(&self.reports);
        self.settle();
    }

    /// A new attempt: the last one's reports are kept aside with the
    /// feedback sent, and nothing is verified until it finishes.
    fn begin_attempt(&mut self, attempt: u32, feedback: &str, at: Option<i64>) {
        let agent_ms = self
            .agent_report()
            .map(|r| r.duration_ms)
            .or_else(|| self.clock.agent.length_ms(at?).map(|ms| ms as u64));
        self.clock.earlier_agent_ms.push(agent_ms.unwrap_or(0));
        self.clock.attempt = Span {
            started_ms: at,
            ended_ms: None,
        };
        self.clock.agent = Span::default();
        self.state = State::Running;
        // An escalation, a budget's stop or a declaration of impossibility
        // was about the attempt before.
        self.escalated = None;
        self.over_budget = None;
        self.impossible = None;
        self.spent_before = self.spent.unwrap_or_default();
        self.attempts.push(AttemptSummary {
            attempt: self.attempt,
            reports: std::mem::take(&mut self.reports),
            feedback: feedback.to_string(),
        });
        self.attempt = attempt;
        // A new attempt: nothing is verified (or selected) until it
        // finishes, and earlier overrides stay with the attempt they were
        // given for.
        self.verdict = None;
        self.effective_verdict = None;
        self.overrides_from = self.decisions.len();
    }

    /// Lines of the agent's output on one stream.
    fn count_output(&mut self, stream: Stream, lines: u64) {
        match stream {
            Stream::Stdout => self.output_lines[0] += lines,
            Stream::Stderr => self.output_lines[1] += lines,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::decision::{Decision, DecisionKind};
    use crate::model::event::CandidateInfo;
    use crate::model::verdict::{Issue, Severity};

    fn started() -> RunEvent {
        RunEvent::RunStarted {
            run: "r".into(),
            repo: String::new(),
            base: "b".into(),
            instruction: "do it".into(),
            launcher: "process".into(),
            candidates: vec![CandidateInfo {
                id: "a".into(),
                agent: "a".into(),
                runtime: "command".into(),
                worktree: String::new(),
                unsandboxed: false,
            }],
        }
    }

    #[test]
    fn a_candidate_added_to_a_finished_run_reopens_it_and_says_what_it_combines() {
        let mut s = RunSummary::from_events(&[
            started(),
            RunEvent::CandidateFinished {
                candidate: "a".into(),
                verdict: Verdict::Pass,
                reason: None,
                files: 1,
                lines: 1,
                tree: Some("t".into()),
                cancelled: false,
            },
            RunEvent::RunFinished {
                verdict: Verdict::Pass,
                exit_code: 0,
            },
        ]);
        assert_eq!(s.status, "finished");
        let added = RunEvent::CandidateAdded {
            candidate: CandidateInfo {
                id: "combined".into(),
                agent: "m".into(),
                runtime: "command".into(),
                worktree: "/w".into(),
                unsandboxed: false,
            },
            combined_from: vec!["a".into(), "b".into()],
        };
        s.apply(&added);
        // Twice (a replayed journal) is still one candidate.
        s.apply(&added);
        assert_eq!(s.status, "running");
        assert_eq!(s.state, State::Running);
        assert_eq!(s.candidates.len(), 2);
        let c = s.candidate("combined").unwrap();
        assert_eq!(c.state, State::Queued);
        assert_eq!(c.combined_from, ["a", "b"]);
        let json = serde_json::to_value(c).unwrap();
        assert_eq!(json["combined_from"], serde_json::json!(["a", "b"]));
        assert!(
            serde_json::to_value(s.candidate("a").unwrap()).unwrap()["combined_from"].is_null()
        );
    }

    #[test]
    fn cross_testing_again_replaces_a_candidates_agreement_report() {
        let agreement = |status_fail: bool| {
            let mut r = Report::new(Layer::Compare, "agreement");
            if status_fail {
                r.issues
                    .push(Issue::new("compare/disagrees", Severity::Error, "fails t"));
            }
            RunEvent::ReportLanded {
                candidate: "a".into(),
                report: Box::new(r.finish()),
            }
        };
        let s = RunSummary::from_events(&[started(), agreement(false), agreement(true)]);
        let c = s.candidate("a").unwrap();
        let compare: Vec<&Report> = c
            .reports
            .iter()
            .filter(|r| r.layer == Layer::Compare)
            .collect();
        assert_eq!(compare.len(), 1, "{compare:?}");
        assert_eq!(compare[0].status, Status::Fail);
    }

    fn failing(layer: Layer, check: &str, rule: &str) -> RunEvent {
        let mut r = Report::new(layer, check);
        r.issues.push(Issue::new(rule, Severity::Error, "bad"));
        RunEvent::ReportLanded {
            candidate: "a".into(),
            report: Box::new(r.finish()),
        }
    }

    fn overriding(check: &str, rule: Option<&str>) -> RunEvent {
        RunEvent::DecisionRecorded {
            decision: Decision::new(
                Some("a"),
                DecisionKind::Override {
                    layer: Layer::Guardrails,
                    check: check.into(),
                    rule: rule.map(String::from),
                },
                "me",
                "flaky",
            ),
        }
    }

    fn finished() -> RunEvent {
        RunEvent::CandidateFinished {
            candidate: "a".into(),
            verdict: Verdict::Fail,
            reason: None,
            files: 1,
            lines: 1,
            tree: None,
            cancelled: false,
        }
    }

    #[test]
    fn a_layer_is_overridden_only_when_every_failure_in_it_is_covered() {
        // Two failing guardrails; the override covers one of them.
        let mut s = RunSummary::new();
        for ev in [
            started(),
            failing(Layer::Guardrails, "build", "guardrails/exit"),
            failing(Layer::Guardrails, "lint", "guardrails/exit"),
            finished(),
            overriding("build", None),
        ] {
            s.apply(&ev);
        }
        let c = &s.candidates[0];
        assert!(!c.layer_overridden(Layer::Guardrails));
        assert_eq!(c.effective_verdict, Some(Verdict::Fail));
        // An override of another rule of the same check covers nothing.
        s.apply(&overriding("lint", Some("other/rule")));
        assert!(!s.candidates[0].layer_overridden(Layer::Guardrails));
        s.apply(&overriding("lint", None));
        assert!(s.candidates[0].layer_overridden(Layer::Guardrails));
    }

    #[test]
    fn overrides_of_an_earlier_attempt_do_not_mark_the_new_one() {
        let mut s = RunSummary::new();
        for ev in [
            started(),
            failing(Layer::Guardrails, "build", "guardrails/exit"),
            finished(),
            overriding("build", None),
        ] {
            s.apply(&ev);
        }
        assert!(s.candidates[0].layer_overridden(Layer::Guardrails));
        for ev in [
            RunEvent::AttemptStarted {
                candidate: "a".into(),
                attempt: 2,
                feedback: "again".into(),
            },
            failing(Layer::Guardrails, "build", "guardrails/exit"),
            finished(),
        ] {
            s.apply(&ev);
        }
        let c = &s.candidates[0];
        assert_eq!(c.attempt, 2);
        assert!(!c.layer_overridden(Layer::Guardrails));
        assert_eq!(c.effective_verdict, Some(Verdict::Fail));
    }

    fn decided(candidate: Option<&str>, kind: DecisionKind, note: &str) -> RunEvent {
        RunEvent::DecisionRecorded {
            decision: Decision::new(candidate, kind, "me", note),
        }
    }

    fn agent_started() -> RunEvent {
        RunEvent::CandidateStarted {
            candidate: "a".into(),
            command: "agent".into(),
        }
    }

    #[test]
    fn a_run_without_an_end_is_running_not_fail() {
        let s = RunSummary::from_events(&[started(), agent_started()]);
        assert_eq!(s.state, State::Running);
        assert_eq!(s.candidates[0].state, State::Running);
        assert_eq!(s.verdict, None);
        let doc = serde_json::to_value(&s).unwrap();
        assert_eq!(doc["state"], "running");
        assert_eq!(doc["candidates"][0]["state"], "running");
        let s = RunSummary::from_events(&[started()]);
        assert_eq!(s.candidates[0].state, State::Queued);
    }

    #[test]
    fn a_cancelled_candidate_is_cancelled_not_fail() {
        let cancelled = RunEvent::CandidateFinished {
            candidate: "a".into(),
            verdict: Verdict::Fail,
            reason: Some("cancelled before every layer ran".into()),
            files: 0,
            lines: 0,
            tree: None,
            cancelled: true,
        };
        // Stopped by quitting: the pipeline says so on the event.
        let s = RunSummary::from_events(&[started(), agent_started(), cancelled.clone()]);
        assert_eq!(s.candidates[0].state, State::Cancelled);
        assert_eq!(s.candidates[0].verdict, Some(Verdict::Fail));
        // Stopped by a cancel decision (`x`), before the candidate ended.
        let mut s = RunSummary::from_events(&[
            started(),
            agent_started(),
            decided(Some("a"), DecisionKind::Cancel, "stop"),
        ]);
        assert_eq!(s.candidates[0].state, State::Cancelled);
        s.apply(&finished());
        s.apply(&RunEvent::RunFinished {
            verdict: Verdict::Fail,
            exit_code: 1,
        });
        assert_eq!(s.candidates[0].state, State::Cancelled);
        assert_eq!(s.state, State::Cancelled, "every candidate was stopped");
        // The whole run (`X`).
        let s = RunSummary::from_events(&[
            started(),
            agent_started(),
            decided(None, DecisionKind::Cancel, "stop all"),
            cancelled,
            RunEvent::RunFinished {
                verdict: Verdict::Fail,
                exit_code: 1,
            },
        ]);
        assert_eq!(s.state, State::Cancelled);
        assert_eq!(serde_json::to_value(&s).unwrap()["state"], "cancelled");
    }

    #[test]
    fn an_escalated_candidate_shows_escalated_with_the_note() {
        let mut s = RunSummary::from_events(&[started(), agent_started(), finished()]);
        assert_eq!(s.candidates[0].state, State::Fail);
        s.apply(&decided(Some("a"), DecisionKind::Escalate, "edits CI"));
        let c = &s.candidates[0];
        assert_eq!(c.state, State::Escalated);
        let e = c.escalated.as_ref().unwrap();
        assert_eq!(
            (e.reason.as_str(), e.by.as_deref()),
            ("edits CI", Some("me"))
        );
        // By the pipeline, when retries ran out.
        let s = RunSummary::from_events(&[
            started(),
            agent_started(),
            RunEvent::CandidateEscalated {
                candidate: "a".into(),
                reason: "retries exhausted".into(),
                table: String::new(),
            },
            finished(),
            RunEvent::RunFinished {
                verdict: Verdict::Fail,
                exit_code: 3,
            },
        ]);
        assert_eq!(s.candidates[0].state, State::Escalated);
        assert_eq!(s.state, State::Escalated);
        // A retry is a new attempt: the escalation was about the last one.
        let mut s = s;
        s.apply(&RunEvent::AttemptStarted {
            candidate: "a".into(),
            attempt: 2,
            feedback: "again".into(),
        });
        assert_eq!(s.candidates[0].state, State::Running);
        assert_eq!(s.state, State::Running, "a retried run is running again");
        assert_eq!(s.verdict, None);
    }

    #[test]
    fn an_interrupted_run_and_its_unfinished_candidates_are_interrupted() {
        let s = RunSummary::from_events(&[
            started(),
            agent_started(),
            RunEvent::RunInterrupted {
                reason: "pid 7 is gone".into(),
            },
        ]);
        assert_eq!(s.state, State::Interrupted);
        assert_eq!(s.candidates[0].state, State::Interrupted);
        // A reattach resumes it: running again.
        let mut s = s;
        s.apply(&failing(Layer::Guardrails, "build", "guardrails/exit"));
        assert_eq!(s.candidates[0].state, State::Running);
        assert_eq!(s.state, State::Running);
    }

    #[test]
    fn overrides_move_the_state_with_the_effective_verdict() {
        let mut s = RunSummary::from_events(&[
            started(),
            failing(Layer::Guardrails, "build", "guardrails/exit"),
            finished(),
        ]);
        assert_eq!(s.candidates[0].state, State::Fail);
        assert!(s.candidates[0].select_refusal().is_some());
        s.apply(&overriding("build", None));
        assert_eq!(s.candidates[0].state, State::Pass);
        assert_eq!(s.candidates[0].select_refusal(), None);
    }

    #[test]
    fn clocks_count_from_journal_times_per_attempt() {
        let mut agent = Report::new(Layer::Agent, "agent");
        agent.duration_ms = 4_000;
        let agent = RunEvent::ReportLanded {
            candidate: "a".into(),
            report: Box::new(agent.finish()),
        };
        let events = vec![
            (1_000, started()),
            (2_000, agent_started()),
            (6_000, agent.clone()),
            (9_000, finished()),
            (
                10_000,
                RunEvent::RunFinished {
                    verdict: Verdict::Fail,
                    exit_code: 1,
                },
            ),
            // A retry a minute later.
            (
                70_000,
                RunEvent::AttemptStarted {
                    candidate: "a".into(),
                    attempt: 2,
                    feedback: "again".into(),
                },
            ),
            (70_500, agent_started()),
        ];
        let s = RunSummary::from_timed(&events);
        let c = &s.candidates[0];
        // The attempt's clock starts with the retry, not the run.
        assert_eq!(c.clock.attempt.length_ms(75_000), Some(5_000));
        assert_eq!(c.clock.agent_ms(75_000, None), Some(4_500));
        assert_eq!(c.clock.earlier_agent_ms, vec![4_000]);
        assert_eq!(c.clock.agent_total_ms(75_000, None), 8_500);
        // The wall clock is the run's, separately; open while it runs.
        assert_eq!(s.wall.length_ms(75_000), Some(74_000));
        // Replayed from the journal (a reattach), the same clocks.
        let again = RunSummary::from_timed(&events);
        assert_eq!(again.candidates[0].clock, c.clock);
        // The first attempt's clock ended with its verdict.
        let first = RunSummary::from_timed(&events[..4]);
        assert_eq!(
            first.candidates[0].clock.attempt.length_ms(99_999),
            Some(7_000)
        );
    }

    #[test]
    fn a_finalize_is_part_of_the_record() {
        let mut s = RunSummary::from_events(&[started(), finished()]);
        assert!(s.finalized.is_none());
        s.apply(&RunEvent::Finalized(Finalization {
            candidate: "a".into(),
            branch: "rascal/do-it-r".into(),
            commit: "abc".into(),
            title: "rascal: do it".into(),
            pr_body: "/tmp/pr_body.md".into(),
            pushed_to: None,
            pr_command: Vec::new(),
            pr_opened: false,
        }));
        assert_eq!(s.finalized.as_ref().unwrap().branch, "rascal/do-it-r");
        let doc = serde_json::to_value(&s).unwrap();
        assert_eq!(doc["finalized"]["branch"], "rascal/do-it-r");
    }

    /// A run of candidates `ids`, each ending with its verdict, the ones
    /// named in `declared` having declared the task impossible.
    fn declaring(ids: &[(&str, Verdict)], declared: &[&str], exit_code: i32) -> RunSummary {
        let mut events = vec![RunEvent::RunStarted {
            run: "r".into(),
            repo: String::new(),
            base: "b".into(),
            instruction: "do it".into(),
            launcher: "process".into(),
            candidates: ids
                .iter()
                .map(|(id, _)| CandidateInfo {
                    id: id.to_string(),
                    agent: id.to_string(),
                    runtime: "scripted".into(),
                    worktree: String::new(),
                    unsandboxed: false,
                })
                .collect(),
        }];
        for (id, verdict) in ids {
            let reason = format!("{id}: the tests contradict the task");
            let report = if declared.contains(id) {
                events.push(RunEvent::DeclaredImpossible {
                    candidate: id.to_string(),
                    reason: reason.clone(),
                });
                crate::model::impossible::report(&reason)
            } else if *verdict == Verdict::Pass {
                Report::new(Layer::Agent, "agent").finish()
            } else {
                Report::new(Layer::Agent, "agent")
                    .errored("it broke")
                    .finish()
            };
            events.push(RunEvent::ReportLanded {
                candidate: id.to_string(),
                report: Box::new(report),
            });
            events.push(RunEvent::CandidateFinished {
                candidate: id.to_string(),
                verdict: *verdict,
                reason: None,
                files: 0,
                lines: 0,
                tree: None,
                cancelled: false,
            });
        }
        let verdict = if ids.iter().any(|(_, v)| *v == Verdict::Pass) {
            Verdict::Pass
        } else {
            Verdict::Fail
        };
        events.push(RunEvent::RunFinished { verdict, exit_code });
        RunSummary::from_events(&events)
    }

    #[test]
    fn a_declaration_makes_the_candidate_impossible_with_its_reason() {
        let s = declaring(&[("a", Verdict::Fail), ("b", Verdict::Pass)], &["a"], 0);
        let a = &s.candidates[0];
        assert_eq!(a.state, State::Impossible);
        assert_eq!(
            a.impossible.as_deref(),
            Some("a: the tests contradict the task")
        );
        let refusal = a.select_refusal().unwrap();
        assert!(refusal.contains("IMPOSSIBLE"), "{refusal}");
        assert!(
            refusal.contains("the tests contradict the task"),
            "{refusal}"
        );
        assert_eq!(s.candidates[1].state, State::Pass);
        let doc = serde_json::to_value(&s).unwrap();
        assert_eq!(doc["candidates"][0]["state"], "impossible");
        assert_eq!(
            doc["candidates"][0]["impossible"],
            "a: the tests contradict the task"
        );
        assert!(doc["candidates"][1].get("impossible").is_none());
        // A lone declaration beside a passing candidate only shows.
        assert_eq!(s.state, State::Pass);
        assert_eq!(
            s.declarations().collect::<Vec<_>>(),
            vec![("a", "a: the tests contradict the task")]
        );
        // Overrides do not make it pass: it did not do the task.
        let mut s = s;
        s.apply(&RunEvent::DecisionRecorded {
            decision: Decision::new(
                Some("a"),
                DecisionKind::Override {
                    layer: Layer::Agent,
                    check: "impossible".into(),
                    rule: None,
                },
                "me",
                "try anyway",
            ),
        });
        assert_eq!(s.candidates[0].state, State::Impossible);
        assert!(s.candidates[0].select_refusal().is_some());
        // A human's retry is a new attempt: the declaration was about the
        // last one.
        s.apply(&RunEvent::AttemptStarted {
            candidate: "a".into(),
            attempt: 2,
            feedback: "the dependency is vendored now".into(),
        });
        assert_eq!(s.candidates[0].state, State::Running);
        assert_eq!(s.candidates[0].impossible, None);
    }

    #[test]
    fn declarations_escalate_the_run_when_all_or_a_majority_declare() {
        let all = declaring(
            &[("a", Verdict::Fail), ("b", Verdict::Fail)],
            &["a", "b"],
            3,
        );
        assert_eq!(all.state, State::Escalated);
        assert!(all.declarations_escalate());
        assert_eq!(all.declarations().count(), 2);
        // One passes, two declare: escalated, even with the pass.
        let most = declaring(
            &[
                ("a", Verdict::Pass),
                ("b", Verdict::Fail),
                ("c", Verdict::Fail),
            ],
            &["b", "c"],
            3,
        );
        assert_eq!(most.state, State::Escalated);
        assert_eq!(most.candidates[0].state, State::Pass);
        // The fold says so from the candidates, whatever exit code an
        // older journal holds.
        let most = declaring(
            &[
                ("a", Verdict::Pass),
                ("b", Verdict::Fail),
                ("c", Verdict::Fail),
            ],
            &["b", "c"],
            0,
        );
        assert_eq!(most.state, State::Escalated);
        // One passes, one declares: the run stands on the pass.
        let one = declaring(&[("a", Verdict::Pass), ("b", Verdict::Fail)], &["b"], 0);
        assert_eq!(one.state, State::Pass);
        assert!(!one.declarations_escalate());
    }

    #[test]
    fn folding_one_by_one_equals_folding_the_journal() {
        let events = vec![
            started(),
            failing(Layer::Guardrails, "build", "guardrails/exit"),
            finished(),
            overriding("build", None),
        ];
        let mut s = RunSummary::new();
        for ev in &events {
            s.apply(ev);
        }
        assert_eq!(s, RunSummary::from_events(&events));
    }
}
