//! The one fold of a run's events into its summary: candidates with their
//! reports, verdicts (raw and after overrides), attempts, decisions and
//! escalations; the ranking and the selection. The printer, `show`,
//! `report`, `--json`, the TUI and reattach all read this, so they cannot
//! disagree about what a run says.

use crate::config::spec::Task;
use crate::model::event::{RunEvent, WorkingTree};
use crate::model::log::Stream;
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
    /// The agent started (a `candidate_started` event landed).
    #[serde(skip)]
    pub started: bool,
    /// Lines of the agent's own output journalled so far, stdout and
    /// stderr (rascal's notes excluded): where a reattach resumes.
    #[serde(skip)]
    pub output_lines: [u64; 2],
}

impl CandidateSummary {
    /// The decisions that apply to the current attempt (overrides given for
    /// an earlier attempt do not).
    pub fn current_decisions(&self) -> &[crate::model::decision::Decision] {
        &self.decisions[self.overrides_from.min(self.decisions.len())..]
    }

    /// A layer shows as overridden (⊘) when it failed or warned and every
    /// failing or warning report in it is covered by an override of the
    /// current attempt — the same rule `effective_verdict` applies.
    pub fn layer_overridden(&self, layer: Layer) -> bool {
        let decisions = self.current_decisions();
        let mut bad = self
            .reports
            .iter()
            .filter(|r| r.layer == layer && matches!(r.status, Status::Fail | Status::Warn))
            .peekable();
        bad.peek().is_some() && bad.all(|r| decisions.iter().any(|d| d.overrides(r)))
    }

    /// The report of the agent itself, once it landed.
    pub fn agent_report(&self) -> Option<&Report> {
        self.reports
            .iter()
            .find(|r| r.layer == Layer::Agent && r.check == "agent")
    }
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
    /// How the user's working tree stood (`.rascal/` from it, uncommitted
    /// changes), when there was something to say.
    #[serde(default, skip_serializing_if = "WorkingTree::is_clean")]
    pub worktree: WorkingTree,
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
    /// The journal's chain head, when the summary was read from the store
    /// (which checked the chain first); the PR body publishes it. Not part
    /// of the JSON document (`rascal verify RUN --json` prints it).
    #[serde(skip)]
    pub journal: Option<ChainHead>,
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
            candidates: Vec::new(),
            ranking: None,
            selected: None,
            decisions: Vec::new(),
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

    /// Fold one more event in. This is the one fold of a run's history: the
    /// printer, `show`, `report`, the TUI and reattach all read it.
    pub fn apply(&mut self, ev: &RunEvent) {
        let s = self;
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
                        summary: None,
                        attempt: 1,
                        attempts: Vec::new(),
                        checklist: String::new(),
                        escalated: None,
                        started: false,
                        output_lines: [0, 0],
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
                tree,
            } => {
                if let Some(c) = s.candidates.iter_mut().find(|c| &c.id == candidate) {
                    c.tree = tree.clone();
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
            RunEvent::TaskLoaded {
                source,
                task,
                worktree,
            } => {
                // A bare instruction is journalled only to carry the note.
                if source != "instruction" {
                    s.task_source = Some(source.clone());
                    s.task = Some((**task).clone());
                }
                s.worktree = worktree.clone();
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
                            c.effective_verdict = Some(crate::model::decision::effective_verdict(
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
            RunEvent::CandidateStarted { candidate, .. } => {
                if let Some(c) = s.candidates.iter_mut().find(|c| &c.id == candidate) {
                    c.started = true;
                }
            }
            RunEvent::Log {
                candidate,
                stream,
                text,
                ..
            } => {
                // rascal's own notes are not the agent's output.
                if let Some(c) = s
                    .candidates
                    .iter_mut()
                    .find(|c| &c.id == candidate && c.started)
                    .filter(|_| !text.starts_with("rascal: "))
                {
                    match stream {
                        Stream::Stdout => c.output_lines[0] += 1,
                        Stream::Stderr => c.output_lines[1] += 1,
                    }
                }
            }
            _ => {}
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
