//! The headless printer: turns `RunEvent`s (live, or replayed from the
//! store by `rascal show`) and `rascal check` reports into plain lines. Pure:
//! the same events always print the same text. Untrusted text is sanitised.

use rascal_core::config::spec::Task;
use rascal_core::model::event::{CandidateInfo, Finalization, RunEvent, WorkingTree};
use rascal_core::model::state::State;
use rascal_core::model::verdict::Verdict;
use rascal_core::text::{cut, pad, sanitize, width};
use rascal_exec::exec::runner::Stream;

mod plan;
mod ranking;
mod reports;
mod state;

pub use plan::{constraint_line, criterion_line};
use plan::{plan_lines, vacuous_lines};
use ranking::NONE_PASSED_PICK;
pub use ranking::{probes_line, ranking_lines};
pub use reports::report_lines;
pub use state::{decision_line, state_lines};

/// How many lines of feedback to an author are shown.
const FEEDBACK_LINES: usize = 20;

/// What an UNSANDBOXED mark means, and how to lift it.
pub const UNSANDBOXED_NOTE: &str = "UNSANDBOXED candidates ran as you, without bubblewrap (`sandbox: none`, or a scripted agent where bwrap is missing): apt-get install bubblewrap";

#[derive(Debug, Clone)]
pub struct Printer {
    /// Print agent log lines (otherwise only results).
    pub logs: bool,
    /// The run so far (the one fold of its events): usage per candidate.
    summary: rascal_core::model::summary::RunSummary,
    /// Width of the `[candidate]` column.
    width: usize,
    /// Each candidate's `[candidate]` column, made once (a log line is
    /// printed with it a million times in a flood).
    tags: std::collections::HashMap<String, String>,
}

impl Printer {
    pub fn new(logs: bool) -> Self {
        Printer {
            logs,
            width: 0,
            summary: rascal_core::model::summary::RunSummary::new(),
            tags: Default::default(),
        }
    }

    fn tag(&self, candidate: &str) -> String {
        match self.tags.get(candidate) {
            Some(t) => t.clone(),
            None => format!("[{}]", pad(&sanitize(candidate), self.width)),
        }
    }

    /// One agent log line as printed (its readable form when parsed).
    pub fn log_line(
        &self,
        candidate: &str,
        stream: Stream,
        text: &str,
        display: Option<&str>,
    ) -> String {
        let text = display.unwrap_or(text);
        let bar = match stream {
            Stream::Stdout => "│",
            Stream::Stderr => "┃",
        };
        let tag = self.tags.get(candidate).map(String::as_str);
        let made;
        let tag = match tag {
            Some(t) => t,
            None => {
                made = self.tag(candidate);
                &made
            }
        };
        format!("{tag} {bar} {}", cut(&sanitize(text), 300))
    }

    pub fn render(&mut self, ev: &RunEvent) -> Vec<String> {
        if !matches!(ev, RunEvent::Log { .. }) {
            self.summary.apply(ev);
        }
        match ev {
            RunEvent::RunStarted {
                run,
                base,
                instruction,
                launcher,
                candidates,
                ..
            } => self.run_header(run, base, instruction, launcher, candidates),
            RunEvent::Log {
                candidate,
                stream,
                text,
                display,
            } => {
                if !self.logs {
                    return Vec::new();
                }
                vec![self.log_line(candidate, *stream, text, display.as_deref())]
            }
            // Its lines are printed from the log file (`cli::run::print_event`).
            RunEvent::LogSegment(_) => Vec::new(),
            RunEvent::LayerStarted { .. } => Vec::new(),
            RunEvent::Usage { .. } => Vec::new(),
            RunEvent::Ranked { ranking } => self.ranked_lines(ranking),
            RunEvent::DecisionRecorded { decision } => vec![decision_line(decision)],
            RunEvent::RunFinished { verdict, exit_code } => {
                self.finished_run_lines(*verdict, *exit_code)
            }
            RunEvent::TaskLoaded {
                source,
                task,
                worktree,
            } => self.task_lines(source, task, worktree),
            RunEvent::RunInterrupted { reason } => {
                vec![format!("run interrupted: {}", sanitize(reason))]
            }
            RunEvent::Finalized(f) => self.finalized_lines(f),
            RunEvent::PlanProposed {
                agent,
                criteria,
                constraints,
                problem,
            } => plan_lines(agent, criteria, constraints, problem.as_deref()),
            RunEvent::CriteriaOnBase { checked, vacuous } => vacuous_lines(*checked, vacuous),
            RunEvent::CandidateStarted { .. }
            | RunEvent::AgentSummary { .. }
            | RunEvent::ReportLanded { .. }
            | RunEvent::CandidateFinished { .. }
            | RunEvent::AttemptStarted { .. }
            | RunEvent::CandidateEscalated { .. }
            | RunEvent::OverBudget { .. }
            | RunEvent::BudgetUnenforced { .. }
            | RunEvent::DeclaredImpossible { .. }
            | RunEvent::CandidateAdded { .. } => self.candidate_event_lines(ev),
        }
    }

    /// The lines of an event about one candidate, under its tag.
    fn candidate_event_lines(&mut self, ev: &RunEvent) -> Vec<String> {
        match ev {
            RunEvent::CandidateStarted { candidate, command } => vec![format!(
                "{} started: {}",
                self.tag(candidate),
                cut(&sanitize(command), 200)
            )],
            RunEvent::AgentSummary { candidate, text } => vec![format!(
                "{} summary: {}",
                self.tag(candidate),
                rascal_core::text::ellipsis(
                    &sanitize(&text.split_whitespace().collect::<Vec<_>>().join(" ")),
                    300
                )
            )],
            RunEvent::ReportLanded { candidate, report } => {
                let tag = self.tag(candidate);
                report_lines(report)
                    .into_iter()
                    .map(|l| format!("{tag} {l}"))
                    .collect()
            }
            RunEvent::CandidateFinished {
                candidate,
                verdict,
                reason,
                files,
                lines,
                tree,
                ..
            } => {
                let change = rascal_core::text::change_size(*files as u64, *lines);
                vec![self.finished_line(
                    candidate,
                    verdict,
                    &change,
                    tree.as_deref(),
                    reason.as_deref(),
                )]
            }
            RunEvent::AttemptStarted {
                candidate,
                attempt,
                feedback,
            } => self.attempt_lines(candidate, *attempt, feedback),
            RunEvent::CandidateEscalated {
                candidate,
                reason,
                table,
            } => self.escalated_lines(candidate, reason, table),
            RunEvent::OverBudget { candidate, reason } => vec![format!(
                "{} ⊘ stopped: {}",
                self.tag(candidate),
                sanitize(reason)
            )],
            RunEvent::BudgetUnenforced { candidate, reason } => vec![format!(
                "{} warning: {}",
                self.tag(candidate),
                sanitize(reason)
            )],
            RunEvent::DeclaredImpossible { candidate, reason } => {
                self.declared_lines(candidate, reason)
            }
            RunEvent::CandidateAdded {
                candidate,
                combined_from,
            } => self.added_lines(candidate, combined_from),
            // The run's own events are `render`'s.
            _ => Vec::new(),
        }
    }

    /// The ranking's lines; a pick of none says why when the run was
    /// cancelled before a candidate passed.
    fn ranked_lines(&self, ranking: &rascal_core::model::ranking::Ranking) -> Vec<String> {
        let mut lines = ranking_lines(ranking, &self.summary.run);
        if let Some(why) = self.cancelled_before_a_pass() {
            for l in &mut lines {
                if l == NONE_PASSED_PICK {
                    *l = format!("pick: none — {why}");
                }
            }
        }
        lines
    }

    /// A candidate that joined the run (`rascal combine`): its line as the
    /// header would have shown it, and what it combines.
    fn added_lines(&mut self, c: &CandidateInfo, combined_from: &[String]) -> Vec<String> {
        let mut all: Vec<CandidateInfo> = self
            .summary
            .candidates
            .iter()
            .map(|s| CandidateInfo {
                id: s.id.clone(),
                agent: s.agent.clone(),
                runtime: s.runtime.clone(),
                worktree: s.worktree.clone(),
                unsandboxed: s.unsandboxed,
            })
            .collect();
        if !all.iter().any(|a| a.id == c.id) {
            all.push(c.clone());
        }
        self.set_columns(&all);
        let mut out = vec![format!(
            "{} added: combining {} (best first) in a fresh workspace from the base",
            self.tag(&c.id),
            sanitize(&combined_from.join(", "))
        )];
        out.extend(self.candidate_lines(std::slice::from_ref(c)));
        out
    }

    /// The run's verdict and exit code; when the candidates' declarations
    /// escalated it, why, with their reasons side by side.
    fn finished_run_lines(&self, verdict: Verdict, exit_code: i32) -> Vec<String> {
        let declared: Vec<(&str, &str)> = self.summary.declarations().collect();
        if self.summary.declarations_escalate() {
            let mut out = vec![format!(
                "run verdict {verdict} (exit {exit_code}) — {} of {} declared the task impossible; escalated to a human",
                declared.len(),
                rascal_core::text::plural(self.summary.candidates.len() as u64, "candidate")
            )];
            out.extend(
                rascal_core::model::impossible::table(declared)
                    .lines()
                    .map(|l| format!("    {}", sanitize(l))),
            );
            return out;
        }
        if exit_code == rascal_core::model::verdict::CONTESTED_EXIT_CODE {
            let why = self
                .summary
                .ranking
                .as_ref()
                .and_then(|r| r.contested.as_deref())
                .unwrap_or("the candidates disagree");
            return vec![format!(
                "run verdict CONTESTED (exit {exit_code}) — no pick: {}; decide with `rascal select {} CANDIDATE`",
                sanitize(why),
                self.summary.run
            )];
        }
        let cancelled = self.cancelled_before_a_pass();
        vec![format!(
            "run verdict {verdict} (exit {exit_code}){}",
            match (verdict, exit_code, cancelled) {
                (Verdict::Fail, _, Some(why)) => format!(" — {why}"),
                (Verdict::Fail, 3, None) => " — no candidate passed; escalated to a human".into(),
                (Verdict::Fail, _, None) => " — no candidate passed".into(),
                _ => String::new(),
            }
        )]
    }

    /// When nothing passed because candidates were cancelled (Ctrl-C, `x`,
    /// a budget): what to say instead of "no candidate passed".
    fn cancelled_before_a_pass(&self) -> Option<String> {
        use rascal_core::model::state::State;
        let cs = &self.summary.candidates;
        let cancelled = cs.iter().filter(|c| c.state == State::Cancelled).count();
        let passed = cs
            .iter()
            .any(|c| matches!(c.state, State::Pass | State::Warn));
        (cancelled > 0 && !passed).then(|| {
            if cancelled == cs.len() {
                "cancelled: no candidate finished, so none passed".to_string()
            } else {
                format!(
                    "no candidate passed ({} of {} cancelled before finishing)",
                    cancelled,
                    cs.len()
                )
            }
        })
    }

    /// A declaration that the task is impossible: the reason, line by line
    /// (its first `FEEDBACK_LINES`).
    fn declared_lines(&self, candidate: &str, reason: &str) -> Vec<String> {
        let tag = self.tag(candidate);
        let mut out = vec![format!(
            "{tag} ⚐ its agent declared the task impossible (impossible.md); its change is not judged, nor retried:"
        )];
        out.extend(quoted(&tag, reason));
        out
    }

    /// The run's header: its id, base, launcher and task, then one line per
    /// candidate.
    fn run_header(
        &mut self,
        run: &str,
        base: &str,
        instruction: &str,
        launcher: &str,
        candidates: &[CandidateInfo],
    ) -> Vec<String> {
        self.set_columns(candidates);
        let mut out = vec![format!(
            "rascal run {run} · base {} · {} · launcher {launcher}",
            &base[..base.len().min(8)],
            rascal_core::text::plural(candidates.len() as u64, "candidate")
        )];
        out.push(format!(
            "task: {}",
            cut(&sanitize(instruction.lines().next().unwrap_or("")), 200)
        ));
        out.extend(self.candidate_lines(candidates));
        out
    }

    /// Sizes the `[candidate]` column to the widest name and makes each tag.
    fn set_columns(&mut self, candidates: &[CandidateInfo]) {
        self.width = candidates
            .iter()
            .map(|c| width(&sanitize(&c.id)))
            .max()
            .unwrap_or(0);
        self.tags = candidates
            .iter()
            .map(|c| {
                let tag = format!("[{}]", pad(&sanitize(&c.id), self.width));
                (c.id.clone(), tag)
            })
            .collect();
    }

    /// One line per candidate under the run header (agent, runtime,
    /// worktree), then the UNSANDBOXED note when one ran without a sandbox.
    fn candidate_lines(&self, candidates: &[CandidateInfo]) -> Vec<String> {
        let mut out = Vec::new();
        for c in candidates {
            out.push(format!(
                "{} agent {} ({}){} in {}",
                self.tag(&c.id),
                sanitize(&c.agent),
                c.runtime,
                if c.unsandboxed { " UNSANDBOXED" } else { "" },
                sanitize(&c.worktree)
            ));
        }
        if candidates.iter().any(|c| c.unsandboxed) {
            out.push(format!("note: {UNSANDBOXED_NOTE}"));
        }
        out
    }

    /// A candidate's verdict line: its state when not the whole story, the
    /// change size, usage, tree and reason.
    fn finished_line(
        &self,
        candidate: &str,
        verdict: &Verdict,
        change: &str,
        tree: Option<&str>,
        reason: Option<&str>,
    ) -> String {
        let cand = self.summary.candidates.iter().find(|c| c.id == candidate);
        let usage = cand
            .and_then(|c| c.usage)
            .map(|u| format!(" · {}", u.short()))
            .unwrap_or_default();
        // A verdict that is not the whole story says so.
        let state = cand
            .map(|c| c.state)
            .filter(|s| matches!(s, State::Cancelled | State::Escalated | State::Impossible))
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        let mut l = format!(
            "{} verdict {}{state} · {} changed",
            self.tag(candidate),
            verdict,
            change,
        );
        l.push_str(&usage);
        if let Some(t) = tree {
            l.push_str(&format!(" · tree {}", &t[..t.len().min(12)]));
        }
        if let Some(r) = reason {
            l.push_str(&format!(" · {}", sanitize(r)));
        }
        l
    }

    /// The working tree's note and where the task came from (its criteria
    /// and constraints counted).
    fn task_lines(&self, source: &str, task: &Task, worktree: &WorkingTree) -> Vec<String> {
        let mut out = worktree.lines(&self.summary.base);
        // A bare instruction is journalled only for the note.
        if source != "instruction" {
            out.push(format!(
                "task from {}: {}, {}",
                sanitize(source),
                rascal_core::text::plural(
                    task.acceptance_criteria.len() as u64,
                    "acceptance criterion"
                ),
                rascal_core::text::plural(task.constraints.len() as u64, "constraint"),
            ));
            // A planned task's criteria were approved: they are the run's.
            if task.plan {
                out.extend(task.acceptance_criteria.iter().map(criterion_line));
                out.extend(task.constraints.iter().map(constraint_line));
            }
        }
        out.iter().map(|l| sanitize(l)).collect()
    }

    /// A retry's header and the first `FEEDBACK_LINES` of the feedback sent.
    fn attempt_lines(&self, candidate: &str, attempt: u32, feedback: &str) -> Vec<String> {
        let tag = self.tag(candidate);
        let mut out = vec![format!(
            "{tag} ↻ attempt {attempt}: feedback sent to the author"
        )];
        out.extend(quoted(&tag, feedback));
        out
    }

    /// An escalation's reason, then its table of what still fails.
    fn escalated_lines(&self, candidate: &str, reason: &str, table: &str) -> Vec<String> {
        let tag = self.tag(candidate);
        let mut out = vec![format!(
            "{tag} ⚑ escalated to a human: {}",
            cut(&sanitize(reason), 300)
        )];
        for l in table.lines() {
            out.push(format!("{tag}     {}", cut(&sanitize(l), 300)));
        }
        out
    }

    /// A finalize: the commit and branch, the PR body, the push and the PR.
    fn finalized_lines(&self, f: &Finalization) -> Vec<String> {
        let mut out = vec![format!(
            "{} finalized: committed {} on branch {}",
            self.tag(&f.candidate),
            &f.commit[..f.commit.len().min(12)],
            sanitize(&f.branch)
        )];
        out.push(format!("    PR body: {}", sanitize(&f.pr_body)));
        if let Some(r) = &f.pushed_to {
            out.push(format!("    pushed to {}", sanitize(r)));
        }
        if f.pr_opened {
            out.push("    pull request opened with gh".into());
        }
        out
    }
}

/// Untrusted text an agent or a human wrote, quoted under `tag`: its first
/// `FEEDBACK_LINES` non-empty lines, sanitised, then how many more.
fn quoted(tag: &str, text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut out: Vec<String> = lines
        .iter()
        .take(FEEDBACK_LINES)
        .map(|l| format!("{tag}     » {}", cut(&sanitize(l), 300)))
        .collect();
    if lines.len() > FEEDBACK_LINES {
        out.push(format!(
            "{tag}     » … {} more lines",
            lines.len() - FEEDBACK_LINES
        ));
    }
    out
}

#[cfg(test)]
mod tests;
