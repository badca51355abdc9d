//! The headless printer: turns `RunEvent`s (live, or replayed from the
//! store by `rascal show`) and `rascal check` reports into plain lines. Pure:
//! the same events always print the same text. Untrusted text is sanitised.

use crate::config::spec::Task;
use crate::exec::runner::{human, Stream};
use crate::model::event::{CandidateInfo, Finalization, RunEvent, WorkingTree};
use crate::model::state::State;
use crate::model::verdict::{Report, Status, Verdict};
use crate::text::{cut, ellipsis, pad, pad_left, sanitize, width};
use std::time::Duration;

/// How many output lines of a failed check are shown.
const OUTPUT_LINES: usize = 8;
/// How many lines of feedback to an author are shown.
const FEEDBACK_LINES: usize = 20;

/// What an UNSANDBOXED mark means, and how to lift it.
pub const UNSANDBOXED_NOTE: &str = "UNSANDBOXED candidates ran as you, without bubblewrap (`sandbox: none`, or a scripted agent where bwrap is missing): apt-get install bubblewrap";

#[derive(Debug, Clone)]
pub struct Printer {
    /// Print agent log lines (otherwise only results).
    pub logs: bool,
    /// The run so far (the one fold of its events): usage per candidate.
    summary: crate::model::summary::RunSummary,
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
            summary: crate::model::summary::RunSummary::new(),
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
            RunEvent::CandidateStarted { candidate, command } => vec![format!(
                "{} started: {}",
                self.tag(candidate),
                cut(&sanitize(command), 200)
            )],
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
            RunEvent::AgentSummary { candidate, text } => vec![format!(
                "{} summary: {}",
                self.tag(candidate),
                crate::text::ellipsis(
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
                let change = crate::text::change_size(*files as u64, *lines);
                vec![self.finished_line(
                    candidate,
                    verdict,
                    &change,
                    tree.as_deref(),
                    reason.as_deref(),
                )]
            }
            RunEvent::Ranked { ranking } => {
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
            RunEvent::DecisionRecorded { decision } => vec![decision_line(decision)],
            RunEvent::RunFinished { verdict, exit_code } => {
                self.finished_run_lines(*verdict, *exit_code)
            }
            RunEvent::TaskLoaded {
                source,
                task,
                worktree,
            } => self.task_lines(source, task, worktree),
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
            RunEvent::RunInterrupted { reason } => {
                vec![format!("run interrupted: {}", sanitize(reason))]
            }
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
            RunEvent::Finalized(f) => self.finalized_lines(f),
            RunEvent::DeclaredImpossible { candidate, reason } => {
                self.declared_lines(candidate, reason)
            }
            RunEvent::PlanProposed {
                agent,
                criteria,
                constraints,
                problem,
            } => plan_lines(agent, criteria, constraints, problem.as_deref()),
            RunEvent::CriteriaOnBase { checked, vacuous } => vacuous_lines(*checked, vacuous),
            RunEvent::CandidateAdded {
                candidate,
                combined_from,
            } => self.added_lines(candidate, combined_from),
        }
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
                crate::text::plural(self.summary.candidates.len() as u64, "candidate")
            )];
            out.extend(
                crate::model::impossible::table(declared)
                    .lines()
                    .map(|l| format!("    {}", sanitize(l))),
            );
            return out;
        }
        if exit_code == crate::model::verdict::CONTESTED_EXIT_CODE {
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
        use crate::model::state::State;
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
            crate::text::plural(candidates.len() as u64, "candidate")
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
                crate::text::plural(
                    task.acceptance_criteria.len() as u64,
                    "acceptance criterion"
                ),
                crate::text::plural(task.constraints.len() as u64, "constraint"),
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

/// Where the run and each candidate stand (folded from the journal), the
/// selection and the finalize: the last lines of `rascal show`.
pub fn state_lines(s: &crate::model::summary::RunSummary) -> Vec<String> {
    let cands: Vec<String> = s
        .candidates
        .iter()
        .map(|c| {
            let note = match (&c.escalated, c.state, &c.over_budget) {
                (Some(e), State::Escalated, _) => format!(" ({})", cut(&sanitize(&e.reason), 80)),
                (_, State::Cancelled, Some(why)) => format!(" — {}", cut(&sanitize(why), 80)),
                _ if c.state == State::Impossible => format!(
                    " — declared impossible: {}",
                    ellipsis(
                        &sanitize(crate::model::impossible::first_line(
                            c.impossible.as_deref().unwrap_or("")
                        )),
                        80
                    )
                ),
                _ => String::new(),
            };
            // A run that ended before a candidate started (a plan that
            // waits for a human's approval): never QUEUED, it will not run.
            if c.state == State::Queued && s.status == "finished" {
                let why = match &s.plan {
                    Some(_)
                        if !s.decisions.iter().any(|d| {
                            matches!(
                                d.kind,
                                crate::model::decision::DecisionKind::ApprovePlan { .. }
                            )
                        }) =>
                    {
                        " (the plan was not approved)"
                    }
                    _ => "",
                };
                return format!("{} NOT STARTED{why}", sanitize(&c.id));
            }
            format!("{} {}{note}", sanitize(&c.id), c.state)
        })
        .collect();
    let mut out = vec![format!("state: run {} · {}", s.state, cands.join(" · "))];
    match (&s.selected, &s.finalized) {
        (_, Some(f)) => out.push(format!(
            "selected: {} · finalized on {} ({})",
            sanitize(&f.candidate),
            sanitize(&f.branch),
            &f.commit[..f.commit.len().min(12)]
        )),
        (Some(c), None) => out.push(format!("selected: {}", sanitize(c))),
        (None, None) => {}
    }
    if s.finalized.is_none() && s.status != "running" {
        out.extend(next_lines(s));
    }
    out
}

/// What `rascal finalize` would do with the run as it stands now (after
/// every decision): commit a candidate, or refuse and say what to run —
/// the same words finalize says, so `show` never ends on a hint that
/// finalize then refuses.
fn next_lines(s: &crate::model::summary::RunSummary) -> Vec<String> {
    use crate::model::choice::{choose, Choice};
    let run = sanitize(&s.run);
    match choose(s) {
        Ok(Choice::Selected(c)) => vec![format!(
            "next: `rascal finalize {run}` commits the selected {}",
            sanitize(&c)
        )],
        Ok(Choice::Pick(p)) => vec![format!(
            "next: `rascal finalize {run}` commits the pick, {}",
            sanitize(&p)
        )],
        Err(_) if s.state == State::Cancelled => vec![
            "next: nothing to finalize — the run was cancelled before a candidate passed; run the task again".into(),
        ],
        Err(why) => {
            let mut lines = why.lines();
            let first = lines.next().unwrap_or_default();
            let mut out = vec![format!(
                "next: finalize needs a human's choice — {}",
                sanitize(first)
            )];
            out.extend(lines.map(|l| sanitize(l).to_string()));
            out
        }
    }
}

fn mark(status: Status) -> &'static str {
    match status {
        Status::Pass => "✓",
        Status::Warn => "!",
        Status::Fail => "✗",
        Status::Skipped => "–",
    }
}

/// The lines for one report: a header, a test run's evidence (its ledger,
/// the base's tests, the new tests), then issues, then (when it failed)
/// the output tail.
pub fn report_lines(r: &Report) -> Vec<String> {
    let mut out = Vec::new();
    if r.layer == crate::model::verdict::Layer::Criteria {
        // Layer 3 reads as its Markdown checklist, evidence included.
        out.push(format!(
            "{} criteria {}",
            mark(r.status),
            cut(&sanitize(&crate::layers::criteria::checklist_line(r)), 400)
        ));
        if matches!(r.status, Status::Fail | Status::Warn) {
            let rest = r
                .output
                .split_once('\n')
                .map(|(_, rest)| rest)
                .unwrap_or("");
            out.extend(output_lines(rest));
        }
        return out;
    }
    let status = match r.status {
        Status::Fail => "FAIL".to_string(),
        Status::Warn => "WARN".to_string(),
        s => s.label().to_string(),
    };
    let mut head = format!(
        "{} {}/{} {status}",
        mark(r.status),
        r.layer,
        sanitize(&r.check)
    );
    if r.status != Status::Skipped {
        head.push_str(&format!(
            " ({})",
            human(Duration::from_millis(r.duration_ms))
        ));
    }
    if let Some(e) = &r.errored {
        head.push_str(&format!(" — could not verify: {}", sanitize(e)));
    } else if r.status == Status::Skipped && !r.output.is_empty() {
        head.push_str(&format!(" — {}", sanitize(&r.output)));
    }
    out.push(head);
    // A test run's evidence (a failed one's output carries it already).
    if let (Some(l), false) = (&r.ledger, r.status == Status::Fail) {
        let lines = std::iter::once(l.summary())
            .chain(l.base_tests.as_ref().map(|b| b.summary()))
            .chain(l.base_tests.as_ref().and_then(|b| b.release_summary()))
            .chain(l.new_tests.as_ref().map(|n| n.summary()));
        out.extend(lines.map(|t| format!("    {}", cut(&sanitize(&t), 300))));
    }
    for i in &r.issues {
        let loc = i
            .location_to_print()
            .map(|l| format!("{} ", sanitize(&l)))
            .unwrap_or_default();
        let sev = i.effective_severity(r.advisory);
        out.push(format!(
            "    {loc}{}: {} [{}]",
            sev.label(),
            cut(&sanitize(&i.message), 300),
            sanitize(&i.rule)
        ));
    }
    if matches!(r.status, Status::Fail | Status::Warn) && r.status != Status::Skipped {
        out.extend(output_lines(&r.output));
    }
    out
}

/// A failed check's output as printed: its first error's block, when that
/// lies before the last `OUTPUT_LINES`, then those lines.
fn output_lines(output: &str) -> Vec<String> {
    crate::layers::diagnostics::shown(output, OUTPUT_LINES)
        .iter()
        .map(|l| format!("    │ {}", cut(&sanitize(l), 200)))
        .collect()
}

/// `rascal check` output: every report then the verdict.
pub fn check_lines(reports: &[Report], verdict: Verdict, base: &str) -> Vec<String> {
    let mut out = vec![format!(
        "rascal check · working tree against {}",
        &base[..base.len().min(8)]
    )];
    if reports.is_empty() {
        out.push(
            "no layers configured (add .rascal/guardrails.yaml or .rascal/permissions.yaml)".into(),
        );
    }
    for r in reports {
        out.extend(report_lines(r));
    }
    out.push(format!("verdict {verdict}"));
    out
}

/// The comparator's ranking, the similarity matrix and its pick.
pub fn ranking_lines(r: &crate::model::ranking::Ranking, run: &str) -> Vec<String> {
    let mut out = Vec::new();
    // One candidate is not a comparison: only the pick is said.
    let compared = r.positions.len() > 1;
    if compared {
        out.push("ranking (compare):".to_string());
    }
    for p in r.positions.iter().filter(|_| compared) {
        out.push(format!(
            "  {}. {} {} · similarity {} · {} — {}",
            p.position,
            sanitize(&p.candidate),
            p.verdict,
            p.consensus_text(),
            crate::text::change_size(p.files as u64, p.lines),
            sanitize(&p.reason)
        ));
    }
    if r.ids.len() > 1 {
        let w = r
            .ids
            .iter()
            .map(|i| width(&sanitize(i)))
            .max()
            .unwrap_or(4)
            .max(4);
        let mut head = format!("  {:w$}", "similarity");
        let w = w.max(10);
        head = format!("  {:<w$}", head.trim());
        for id in &r.ids {
            head.push_str(&format!(" {}", pad_left(&ellipsis(&sanitize(id), 8), 8)));
        }
        out.push(head);
        for (i, id) in r.ids.iter().enumerate() {
            let mut row = format!("  {}", pad(&ellipsis(&sanitize(id), w), w));
            for v in &r.matrix[i] {
                row.push_str(&format!(" {v:>8.2}"));
            }
            out.push(row);
        }
    }
    if let Some(a) = &r.agreement {
        out.push("  agreement (rows: candidates' code; columns: tests they wrote that fail at the base):".into());
        out.extend(a.render().iter().map(|l| format!("    {}", sanitize(l))));
    }
    if let Some(j) = &r.judge {
        out.push(match (&j.pick, &j.problem) {
            (_, Some(p)) => format!(
                "judge `{}` was not used ({}): the ranking stands",
                sanitize(&j.agent),
                sanitize(p)
            ),
            (Some(pick), None) => format!(
                "judge `{}` picked {} among {}: {}",
                sanitize(&j.agent),
                sanitize(pick),
                sanitize(&j.tied.join(", ")),
                sanitize(&j.reason)
            ),
            (None, None) => format!("judge `{}` gave no pick", sanitize(&j.agent)),
        });
    }
    if let Some(p) = &r.probes {
        out.push(probes_line(p));
    }
    out.push(match &r.pick {
        Some(p) if !r.unseparated.is_empty() => format!(
            "pick: {} — no test separates it from {} (its code differs; it ranks first, it is not shown better) (finalize it with `rascal finalize {}`, or choose another with `rascal select {} CANDIDATE`)",
            sanitize(p),
            sanitize(&r.unseparated.join(", ")),
            sanitize(run),
            sanitize(run)
        ),
        Some(p) => format!(
            "pick: {} (finalize it with `rascal finalize {}`, or choose another with `rascal select {} CANDIDATE`)",
            sanitize(p),
            sanitize(run),
            sanitize(run)
        ),
        None => match &r.contested {
            Some(why) => format!("pick: none — {}", sanitize(why)),
            None => NONE_PASSED_PICK.to_string(),
        },
    });
    if r.pick.is_none() && r.contested.is_some() {
        out.extend(question_lines(r, run));
    }
    out
}

/// The planner's proposal: its criteria and constraints, or why there is
/// none.
fn plan_lines(
    agent: &str,
    criteria: &[crate::config::spec::Criterion],
    constraints: &[crate::config::spec::Constraint],
    problem: Option<&str>,
) -> Vec<String> {
    let mut out = vec![match problem {
        Some(p) => format!(
            "plan by {}: no usable proposal: {}",
            sanitize(agent),
            cut(&sanitize(p), 300)
        ),
        None => format!(
            "plan proposed by {}: {}, {}",
            sanitize(agent),
            crate::text::plural(criteria.len() as u64, "acceptance criterion"),
            crate::text::plural(constraints.len() as u64, "constraint")
        ),
    }];
    out.extend(criteria.iter().map(criterion_line));
    out.extend(constraints.iter().map(constraint_line));
    out
}

/// One criterion of a plan or a planned task.
pub fn criterion_line(c: &crate::config::spec::Criterion) -> String {
    format!(
        "    - {}{} ({}: `{}`{})",
        cut(&sanitize(&c.description), 200),
        if c.required { "" } else { " [optional]" },
        c.kind.name(),
        // As long as a planner may write one (`plan_answer::MAX_CHECK`):
        // what a human approves is shown whole.
        cut(&sanitize(&c.check), 500),
        if c.new_test { ", a new test" } else { "" }
    )
}

/// One constraint of a plan or a planned task.
pub fn constraint_line(c: &crate::config::spec::Constraint) -> String {
    use crate::config::spec::ConstraintKind;
    let v = match &c.kind {
        ConstraintKind::NoTouchFiles(g) => format!(": `{}`", sanitize(g.as_str())),
        ConstraintKind::MaxLines(n) => format!(": {n}"),
        ConstraintKind::NoNewDeps => String::new(),
    };
    format!(
        "    - constraint {} ({}{v})",
        cut(&sanitize(&c.description), 200),
        c.kind.name()
    )
}

/// One decision, as the journal shows it.
pub fn decision_line(d: &crate::model::decision::Decision) -> String {
    use crate::model::decision::DecisionKind;
    let who = sanitize(&d.who);
    let target = d
        .candidate
        .as_deref()
        .map(|c| format!("[{}] ", sanitize(c)))
        .unwrap_or_default();
    let reason = if d.reason.is_empty() {
        String::new()
    } else {
        format!(": {}", sanitize(&d.reason))
    };
    match &d.kind {
        DecisionKind::Select => format!("{target}selected by {who}{reason}"),
        DecisionKind::Override { layer, check, rule } => format!(
            "{target}{layer}/{}{} FAIL → overridden by {who}{reason}",
            sanitize(check),
            rule.as_deref()
                .map(|r| format!(" ({})", sanitize(r)))
                .unwrap_or_default()
        ),
        DecisionKind::Escalate => format!("{target}escalated by {who}{reason}"),
        DecisionKind::Retry { feedback } => {
            // One line: the feedback's lines joined, never a `^J`.
            let lines: Vec<&str> = feedback
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            format!(
                "{target}retry requested by {who}: {}",
                cut(&sanitize(&lines.join(" / ")), 200)
            )
        }
        DecisionKind::Cancel => format!("{target}cancelled by {who}{reason}"),
        DecisionKind::ApprovePlan {
            criteria,
            constraints,
            changes,
        } => format!(
            "plan approved by {who}{reason} — {}, {}{}",
            crate::text::plural(criteria.len() as u64, "acceptance criterion"),
            crate::text::plural(constraints.len() as u64, "constraint"),
            if changes.is_empty() {
                String::new()
            } else {
                format!("; changed: {}", cut(&sanitize(&changes.join("; ")), 400))
            }
        ),
        DecisionKind::Combine { from } => format!(
            "{target}combine of {} requested by {who}{reason}",
            sanitize(&from.join(", "))
        ),
    }
}

/// The criteria checked on the unchanged base: one line, and one per
/// vacuous criterion.
fn vacuous_lines(checked: usize, vacuous: &[crate::model::event::VacuousCriterion]) -> Vec<String> {
    if vacuous.is_empty() {
        return vec![format!(
            "criteria on the base: {} checked, none met by the unchanged base",
            checked
        )];
    }
    let mut out = vec![format!(
        "criteria on the base: {} of {checked} vacuous — the unchanged base already meets {}: never counted as evidence",
        vacuous.len(),
        if vacuous.len() == 1 { "it" } else { "them" }
    )];
    out.extend(vacuous.iter().map(|v| {
        format!(
            "  vacuous: {} — {}",
            sanitize(&v.criterion),
            sanitize(&v.why)
        )
    }));
    out
}

/// What the discriminator's probe found, in one line.
pub fn probes_line(p: &crate::model::ranking::Probes) -> String {
    let who = format!(
        "discriminator `{}` probed {}",
        sanitize(&p.agent),
        sanitize(&p.candidates.join(", "))
    );
    match (&p.problem, p.differences.len()) {
        (Some(why), _) => format!("{who}: no finding — {}", sanitize(why)),
        (None, 0) => format!(
            "{who}: {} with the same output on each — no input tells them apart",
            crate::text::plural(p.calls as u64, "call")
        ),
        (None, n) => format!(
            "{who}: {} of {} differ (below) — a human answers which is right",
            n,
            crate::text::plural(p.calls as u64, "call")
        ),
    }
}

/// The pick line when nothing passed (the printer says why when it was
/// a cancel).
const NONE_PASSED_PICK: &str = "pick: none — no candidate passed";

/// A contested run's question: the tests that separate the candidates, as
/// examples, and how to answer.
pub fn question_lines(r: &crate::model::ranking::Ranking, run: &str) -> Vec<String> {
    let q = r.question(6);
    if q.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!("question — which is right? {}:", r.question_lead())];
    out.extend(q.iter().map(|l| format!("  {}", sanitize(l))));
    out.push(format!(
        "  answer: `rascal finalize {run} --pick CANDIDATE --reason \"CANDIDATE is right here\"` (or `rascal select {run} CANDIDATE`)",
        run = sanitize(run)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A planned criterion's check, up to the planner's 500 characters, is
    /// shown whole in `show` (the part that matters can be at its end).
    #[test]
    fn a_criterions_check_shows_whole_up_to_what_a_planner_may_write() {
        let check = format!("cargo test {} || true", "x".repeat(470));
        let c: crate::config::spec::Criterion = serde_json::from_value(serde_json::json!({
            "description": "long",
            "type": "command",
            "check": check,
        }))
        .unwrap();
        let line = criterion_line(&c);
        assert!(line.contains(&check), "{line}");
    }

    /// A retry's feedback in a decision line: its lines joined, never a
    /// `^J` (a control character shown for what it is).
    #[test]
    fn a_retrys_feedback_is_one_line_without_control_marks() {
        use crate::model::decision::{Decision, DecisionKind};
        let d = Decision::new(
            Some("birch"),
            DecisionKind::Retry {
                feedback: "check negatives\n\nand zero\u{7}".into(),
            },
            "ana",
            "",
        );
        let line = decision_line(&d);
        assert!(
            line.ends_with("retry requested by ana: check negatives / and zero^G"),
            "{line}"
        );
    }
    use crate::model::event::CandidateInfo;
    use crate::text::width;

    fn started(ids: &[&str]) -> RunEvent {
        RunEvent::RunStarted {
            run: "r-1".into(),
            repo: "/tmp/repo".into(),
            base: "0123456789abcdef".into(),
            instruction: "do it".into(),
            launcher: "process".into(),
            candidates: ids
                .iter()
                .map(|id| CandidateInfo {
                    id: id.to_string(),
                    agent: "a".into(),
                    runtime: "scripted".into(),
                    worktree: "/tmp/w".into(),
                    unsandboxed: false,
                })
                .collect(),
        }
    }

    #[test]
    fn declarations_print_their_reasons_and_the_escalation_side_by_side() {
        let mut p = Printer::new(false);
        let declared = |id: &str, reason: &str| RunEvent::DeclaredImpossible {
            candidate: id.into(),
            reason: reason.into(),
        };
        let finished = |id: &str| RunEvent::CandidateFinished {
            candidate: id.into(),
            verdict: Verdict::Fail,
            reason: Some("the agent declared the task impossible: x".into()),
            files: 0,
            lines: 0,
            tree: None,
            cancelled: false,
        };
        p.render(&started(&["a", "b"]));
        let lines = p.render(&declared("a", "tests want 5\n\x1b[2Jno libfoo"));
        assert_eq!(
            lines,
            vec![
                "[a] ⚐ its agent declared the task impossible (impossible.md); its change is not judged, nor retried:",
                "[a]     » tests want 5",
                "[a]     » ^[[2Jno libfoo",
            ]
        );
        let line = p.render(&finished("a")).join("\n");
        assert!(line.contains("verdict FAIL (IMPOSSIBLE)"), "{line}");
        p.render(&declared("b", "no | network"));
        p.render(&finished("b"));
        let end = p.render(&RunEvent::RunFinished {
            verdict: Verdict::Fail,
            exit_code: 3,
        });
        assert_eq!(
            end,
            vec![
                "run verdict FAIL (exit 3) — 2 of 2 candidates declared the task impossible; escalated to a human",
                "    | candidate | why it declared the task impossible |",
                "    |---|---|",
                "    | a | tests want 5 ^[[2Jno libfoo |",
                "    | b | no \\| network |",
            ]
        );
        let state = state_lines(&p.summary).join("\n");
        assert!(
            state.contains(
                "state: run ESCALATED · a IMPOSSIBLE — declared impossible: tests want 5"
            ),
            "{state}"
        );
    }

    /// A failed build whose first error is far from the end of its output.
    fn failed_build() -> Report {
        let mut r = Report::new(crate::model::verdict::Layer::Guardrails, "build");
        r.issues.push(
            crate::model::verdict::Issue::new(
                "guardrails/build",
                crate::model::verdict::Severity::Error,
                "src/lib.rs:11:5: error[E0308]: mismatched types",
            )
            .at("src/lib.rs", Some(11)),
        );
        let mut out = vec![
            "   Compiling calc v0.1.0".to_string(),
            "error[E0308]: mismatched types".into(),
            "  --> src/lib.rs:11:5".into(),
            "".into(),
        ];
        out.extend((0..20).map(|i| format!("later {i}")));
        r.output = out.join("\n");
        r.finish()
    }

    #[test]
    fn a_failed_check_shows_its_first_error_block_then_its_tail() {
        let lines = report_lines(&failed_build());
        assert_eq!(
            lines,
            vec![
                "✗ guardrails/build FAIL (0ms)",
                "    error: src/lib.rs:11:5: error[E0308]: mismatched types [guardrails/build]",
                "    │ error[E0308]: mismatched types",
                "    │   --> src/lib.rs:11:5",
                "    │ … 13 lines cut …",
                "    │ later 12",
                "    │ later 13",
                "    │ later 14",
                "    │ later 15",
                "    │ later 16",
                "    │ later 17",
                "    │ later 18",
                "    │ later 19",
            ]
        );
    }

    #[test]
    fn a_passing_test_runs_evidence_is_printed_under_it() {
        use crate::model::ledger::{BaseTests, Ledger, NewTests};
        let mut r = Report::new(crate::model::verdict::Layer::Guardrails, "tests");
        r.ledger = Some(Box::new(Ledger {
            runner: "cargo".into(),
            at_base: 2,
            now: 4,
            ran: 4,
            passed: 4,
            base_tests: Some(BaseTests {
                listed: 2,
                passed: 2,
                ..BaseTests::default()
            }),
            new_tests: Some(NewTests {
                added: 2,
                proving: 1,
                pass_without_new_code: vec!["tests::names_it".into()],
                ..NewTests::default()
            }),
            ..Ledger::default()
        }));
        let lines = report_lines(&r.finish());
        assert_eq!(
            lines[1..],
            [
                "    2 tests at base · 4 now · 4 ran · 4 passed",
                "    base tests: 2/2 pass on this change",
                "    new tests: 1 of 2 fail at the base and pass here — not failing with the change's new functions stubbed out: tests::names_it",
            ]
        );
    }

    #[test]
    fn the_working_tree_is_noted_under_the_run_header() {
        let mut p = Printer::new(false);
        p.render(&started(&["a"]));
        let lines = p.render(&RunEvent::TaskLoaded {
            source: "instruction".into(),
            task: Box::new(crate::config::spec::Task::from_instruction("do it")),
            worktree: crate::model::event::WorkingTree {
                config_from_worktree: false,
                config_changes: vec!["guardrails.yaml".into()],
                uncommitted: 7,
                uncommitted_files: ["a.rs", "b.rs", "c.rs", "d.rs", "e.rs"]
                    .map(String::from)
                    .to_vec(),
            },
        });
        assert_eq!(
            lines,
            vec![
                "warning: using .rascal/ from base 01234567; uncommitted changes to guardrails.yaml are ignored — commit them or pass --config-from-worktree",
                "note: working tree has uncommitted changes (7 files: a.rs, b.rs, c.rs, d.rs, e.rs and 2 more); agents start from base 01234567",
            ]
        );
    }

    #[test]
    fn the_candidate_column_is_as_wide_as_the_widest_name_on_screen() {
        let mut p = Printer::new(true);
        p.render(&started(&["日本語エージェント", "claude", "🚀"]));
        let logs: Vec<String> = ["日本語エージェント", "claude", "🚀"]
            .iter()
            .map(|c| {
                p.render(&RunEvent::Log {
                    candidate: c.to_string(),
                    stream: Stream::Stdout,
                    text: "ログ line".into(),
                    display: None,
                })
                .remove(0)
            })
            .collect();
        let bars: Vec<usize> = logs
            .iter()
            .map(|l| width(&l[..l.find('│').unwrap()]))
            .collect();
        assert_eq!(bars, [21, 21, 21], "{logs:#?}");
        assert_eq!(logs[1], "[claude            ] │ ログ line");
    }

    #[test]
    fn direction_overrides_in_printed_paths_are_shown_escaped() {
        let mut r = Report::new(crate::model::verdict::Layer::Permissions, "paths");
        r.issues.push(
            crate::model::verdict::Issue::new(
                "denied",
                crate::model::verdict::Severity::Error,
                "m\u{FEFF}",
            )
            .at("a/\u{202E}b.rs", Some(1)),
        );
        let lines = report_lines(&r.finish()).join("\n");
        assert!(lines.contains("a/<U+202E>b.rs:1"), "{lines}");
        assert!(lines.contains("m<U+FEFF>"), "{lines}");
        assert!(!lines.contains('\u{202E}') && !lines.contains('\u{FEFF}'));
    }

    #[test]
    fn one_candidate_is_not_called_a_comparison_and_the_hint_names_the_run() {
        let r = crate::model::ranking::Ranking {
            positions: vec![crate::model::ranking::Ranked {
                position: 1,
                candidate: "fixer".into(),
                verdict: Verdict::Pass,
                layers_passed: 5,
                criteria_met: 0,
                consensus: 1.0,
                lines: 3,
                files: 1,
                reason: "all layers pass".into(),
                usage: None,
                agreement: None,
            }],
            ids: vec!["fixer".into()],
            matrix: vec![vec![1.0]],
            pick: Some("fixer".into()),
            judge: None,
            agreement: None,
            contested: None,
            unseparated: Vec::new(),
            probes: None,
        };
        let lines = ranking_lines(&r, "r-7");
        assert!(
            !lines.iter().any(|l| l.contains("ranking (compare)")),
            "{lines:#?}"
        );
        assert_eq!(lines.len(), 1, "{lines:#?}");
        assert!(lines[0].contains("rascal finalize r-7"), "{lines:#?}");
        assert!(!lines[0].contains("RUN"), "{lines:#?}");
    }

    #[test]
    fn the_similarity_matrix_lines_up_with_wide_names() {
        let r = crate::model::ranking::Ranking {
            positions: Vec::new(),
            ids: vec!["日本語エージェント".into(), "ab".into()],
            matrix: vec![vec![1.0, 0.5], vec![0.5, 1.0]],
            pick: None,
            judge: None,
            agreement: None,
            contested: None,
            unseparated: Vec::new(),
            probes: None,
        };
        let lines = ranking_lines(&r, "r-1");
        let rows: Vec<&String> = lines.iter().filter(|l| l.contains("0.50")).collect();
        assert_eq!(rows.len(), 2, "{lines:#?}");
        let col = |l: &str, needle: &str| width(&l[..l.find(needle).unwrap()]);
        assert_eq!(col(rows[0], "0.50"), col(rows[1], "1.00"), "{lines:#?}");
        let head = lines.iter().find(|l| l.contains("similarity")).unwrap();
        assert_eq!(width(head), width(rows[0]), "{lines:#?}");
    }
}
