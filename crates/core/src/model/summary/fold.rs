//! Folding one event into a run's summary: the run's own events, and a
//! candidate's reports, verdict, spending and output.

use super::{AttemptSummary, CandidateSummary, Escalation, PlanProposal, RunSummary};
use crate::model::clock::Span;
use crate::model::decision::DecisionKind;
use crate::model::event::RunEvent;
use crate::model::log::Stream;
use crate::model::state::State;
use crate::model::verdict::{Layer, Report, Verdict};

impl RunSummary {
    /// Fold one event in: the run's own events here, a candidate's in
    /// `fold_candidate`, `fold_spending` and `fold_output`.
    pub(super) fn fold(&mut self, ev: &RunEvent, at: Option<i64>) {
        match ev {
            RunEvent::ReportLanded { .. }
            | RunEvent::LayerStarted { .. }
            | RunEvent::CandidateFinished { .. }
            | RunEvent::CandidateEscalated { .. }
            | RunEvent::DeclaredImpossible { .. }
            | RunEvent::AgentSummary { .. }
            | RunEvent::CandidateStarted { .. } => self.fold_candidate(ev, at),
            RunEvent::Usage { .. }
            | RunEvent::OverBudget { .. }
            | RunEvent::BudgetUnenforced { .. } => self.fold_spending(ev),
            RunEvent::LogSegment(_) | RunEvent::Log { .. } => self.fold_output(ev),
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

    /// Fold in an event about one candidate's life (its reports, verdict,
    /// escalation, start…).
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
            _ => {}
        }
    }

    /// Fold in what a candidate spent and what its budget did.
    fn fold_spending(&mut self, ev: &RunEvent) {
        match ev {
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
            _ => {}
        }
    }

    /// Fold in a candidate's output (the lines counted per stream).
    fn fold_output(&mut self, ev: &RunEvent) {
        match ev {
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
