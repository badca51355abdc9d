//! Folding the run's events and the human's decisions into the TUI's
//! state: the run summary first, then what only the screen keeps (logs,
//! the running layer, the run's phase, the plan).

use super::*;

impl App {
    /// Fold one run event into the state.
    pub fn apply(&mut self, ev: &RunEvent, at_ms: i64) {
        self.now_ms = self.now_ms.max(at_ms);
        if let RunEvent::DecisionRecorded { decision } = ev {
            self.apply_decision(decision);
            return;
        }
        // A log line reaches the screen as it was read from the log file;
        // the summary counts the segment it came in.
        if !matches!(ev, RunEvent::Log { .. }) {
            self.summary.apply_at(ev, Some(at_ms));
        }
        self.apply_ui(ev, at_ms);
        match ev.candidate() {
            Some(_) if matches!(ev, RunEvent::Log { .. } | RunEvent::LogSegment(_)) => {}
            Some(id) => self.sync(id),
            // About the whole run: any candidate's state may follow.
            None => self.sync_all(),
        }
        self.dirty = true;
    }

    /// What an event changes beyond the run summary: the screen's own
    /// state (logs, the running layer, the run's phase).
    fn apply_ui(&mut self, ev: &RunEvent, _at_ms: i64) {
        match ev {
            RunEvent::RunStarted {
                run,
                base,
                instruction,
                launcher,
                candidates,
                ..
            } => {
                self.run = run.clone();
                self.base = base.clone();
                self.instruction = instruction.clone();
                self.launcher = launcher.clone();
                self.candidates = candidates.iter().cloned().map(Candidate::new).collect();
                self.state = RunState::Running;
                self.compare_b = if self.candidates.len() > 1 { 1 } else { 0 };
            }
            RunEvent::CandidateStarted { .. } => {}
            // A candidate joined the run (`C`, `rascal combine`): it is
            // listed and streams like the others.
            RunEvent::CandidateAdded { candidate, .. } => {
                if matches!(self.state, RunState::Finished { .. }) {
                    self.state = RunState::Running;
                }
                if self.index_of(&candidate.id).is_none() {
                    self.candidates.push(Candidate::new(candidate.clone()));
                    // The one a human asked for: watch it work.
                    self.focus = self.candidates.len() - 1;
                }
            }
            RunEvent::Log {
                candidate,
                stream,
                text,
                display,
            } => {
                let color = self.color;
                if let Some(c) = self.cand_mut(candidate) {
                    c.see_network(text);
                    match display {
                        Some(d) => c.logs.push_with_raw(*stream, d, Some(text), color),
                        None => c.logs.push(*stream, text, color),
                    }
                }
            }
            RunEvent::Usage { .. } | RunEvent::AgentSummary { .. } => {}
            RunEvent::LogSegment(seg) => {
                if let Some(c) = self.cand_mut(&seg.candidate) {
                    c.logs.segment(seg);
                }
            }
            RunEvent::Ranked { ranking } => self.ranking = Some((**ranking).clone()),
            RunEvent::TaskLoaded { .. } => {}
            RunEvent::CriteriaOnBase { .. } | RunEvent::PlanProposed { .. } => self.apply_plan(ev),
            RunEvent::AttemptStarted { .. }
            | RunEvent::DeclaredImpossible { .. }
            | RunEvent::OverBudget { .. }
            | RunEvent::BudgetUnenforced { .. } => self.note_in_log(ev),
            RunEvent::CandidateEscalated { .. } | RunEvent::DecisionRecorded { .. } => {}
            RunEvent::LayerStarted { candidate, layer } => {
                if let Some(c) = self.cand_mut(candidate) {
                    c.running_layer = Some(*layer);
                }
            }
            RunEvent::ReportLanded { .. } => {}
            RunEvent::CandidateFinished { candidate, .. } => {
                if let Some(c) = self.cand_mut(candidate) {
                    c.running_layer = None;
                }
            }
            RunEvent::RunFinished { verdict, exit_code } => {
                if self.screen == Screen::Plan {
                    self.screen = Screen::Dashboard;
                }
                self.state = RunState::Finished {
                    verdict: *verdict,
                    exit_code: *exit_code,
                };
                for c in &mut self.candidates {
                    c.running_layer = None;
                }
            }
            RunEvent::RunInterrupted { reason } => {
                self.state = RunState::Interrupted(reason.clone());
                for c in &mut self.candidates {
                    c.running_layer = None;
                }
            }
            RunEvent::Finalized(_) => {}
        }
    }

    /// The plan proposed before the agents run, and which of its criteria
    /// the base already meets.
    fn apply_plan(&mut self, ev: &RunEvent) {
        match ev {
            RunEvent::CriteriaOnBase { vacuous, .. } => {
                if let Some(plan) = self.plan.as_mut() {
                    plan.on_base = Some(vacuous.clone());
                }
            }
            RunEvent::PlanProposed {
                agent,
                criteria,
                constraints,
                problem,
            } => {
                let mut plan =
                    crate::plan::PlanScreen::new(agent, criteria, constraints, problem.as_deref());
                plan.existing = self
                    .summary
                    .task
                    .iter()
                    .flat_map(|t| &t.acceptance_criteria)
                    .map(|c| c.description.clone())
                    .collect();
                self.plan = Some(plan);
                // Only a live run waits for the approval.
                if self.live() {
                    self.screen = Screen::Plan;
                }
            }
            // Only the events above are routed here.
            _ => {}
        }
    }

    /// What rascal says in a candidate's log: a new attempt, a declaration
    /// of impossibility, a budget's stop or warning.
    fn note_in_log(&mut self, ev: &RunEvent) {
        match ev {
            RunEvent::AttemptStarted {
                candidate,
                attempt,
                feedback,
            } => {
                let color = self.color;
                if matches!(self.state, RunState::Finished { .. }) {
                    // A retry after the run: it is live again.
                    self.state = RunState::Running;
                }
                if let Some(c) = self.cand_mut(candidate) {
                    // The layers run again: the strip shows this attempt.
                    c.running_layer = None;
                    c.logs.push(
                        rascal_core::model::log::Stream::Stderr,
                        &format!(
                            "── attempt {attempt}: {}",
                            feedback.lines().next().unwrap_or("")
                        ),
                        color,
                    );
                }
            }
            // Said in the candidate's log too, where it reads in full.
            RunEvent::DeclaredImpossible { candidate, reason } => {
                let color = self.color;
                if let Some(c) = self.cand_mut(candidate) {
                    let head = "rascal: its agent declared the task impossible (impossible.md):";
                    c.logs
                        .push(rascal_core::model::log::Stream::Stderr, head, color);
                    for l in reason.lines() {
                        c.logs.push(
                            rascal_core::model::log::Stream::Stderr,
                            &format!("rascal:   {l}"),
                            color,
                        );
                    }
                }
            }
            // Said in the candidate's log, where its other notes are.
            RunEvent::OverBudget { candidate, reason }
            | RunEvent::BudgetUnenforced { candidate, reason } => {
                let (color, over) = (self.color, matches!(ev, RunEvent::OverBudget { .. }));
                if let Some(c) = self.cand_mut(candidate) {
                    let text = format!(
                        "rascal: {}{reason}",
                        if over { "stopped: " } else { "warning: " }
                    );
                    c.logs
                        .push(rascal_core::model::log::Stream::Stderr, &text, color);
                }
            }
            // Only the events above are routed here.
            _ => {}
        }
    }

    /// Record a decision in the state (its marks: ⊘, cancelled…).
    pub fn apply_decision(&mut self, d: &Decision) {
        if self.decisions.contains(d) {
            return;
        }
        self.decisions.push(d.clone());
        if let rascal_core::model::decision::DecisionKind::ApprovePlan { .. } = d.kind {
            if let Some(p) = &mut self.plan {
                p.approved = true;
            }
            if self.screen == Screen::Plan {
                self.screen = Screen::Dashboard;
            }
        }
        self.summary.apply(&RunEvent::DecisionRecorded {
            decision: d.clone(),
        });
        match &d.candidate {
            Some(id) => self.sync(id),
            None => self.sync_all(),
        }
        self.dirty = true;
    }

    /// Refresh every candidate from the run summary.
    fn sync_all(&mut self) {
        for s in &self.summary.candidates {
            if let Some(c) = self.candidates.iter_mut().find(|c| c.info.id == s.id) {
                c.sync(s);
            }
        }
    }

    /// Refresh candidate `id` from the run summary.
    fn sync(&mut self, id: &str) {
        let Some(s) = self.summary.candidates.iter().find(|c| c.id == id) else {
            return;
        };
        if let Some(c) = self.candidates.iter_mut().find(|c| c.info.id == id) {
            c.sync(s);
        }
    }
}
