//! The headless printer: turns `RunEvent`s (live, or replayed from the
//! store by `rascal show`) and `rascal check` reports into plain lines. Pure:
//! the same events always print the same text. Untrusted text is sanitised.

use crate::event::RunEvent;
use crate::runner::{human, Stream};
use crate::text::{cut, sanitize};
use crate::verdict::{Report, Status, Verdict};
use std::time::Duration;

/// How many output lines of a failed check are shown.
const OUTPUT_LINES: usize = 8;
/// How many lines of feedback to an author are shown.
const FEEDBACK_LINES: usize = 20;

#[derive(Debug, Clone)]
pub struct Printer {
    /// Print agent log lines (otherwise only results).
    pub logs: bool,
    /// Width of the `[candidate]` column.
    width: usize,
}

impl Printer {
    pub fn new(logs: bool) -> Self {
        Printer { logs, width: 0 }
    }

    fn tag(&self, candidate: &str) -> String {
        format!("[{:<w$}]", sanitize(candidate), w = self.width)
    }

    pub fn render(&mut self, ev: &RunEvent) -> Vec<String> {
        match ev {
            RunEvent::RunStarted {
                run,
                base,
                instruction,
                launcher,
                candidates,
                ..
            } => {
                self.width = candidates.iter().map(|c| c.id.len()).max().unwrap_or(0);
                let mut out = vec![format!(
                    "rascal run {run} · base {} · {} candidate{} · launcher {launcher}",
                    &base[..base.len().min(8)],
                    candidates.len(),
                    if candidates.len() == 1 { "" } else { "s" }
                )];
                out.push(format!(
                    "task: {}",
                    cut(&sanitize(instruction.lines().next().unwrap_or("")), 200)
                ));
                for c in candidates {
                    out.push(format!(
                        "{} agent {} ({}) in {}",
                        self.tag(&c.id),
                        sanitize(&c.agent),
                        c.runtime,
                        sanitize(&c.worktree)
                    ));
                }
                out
            }
            RunEvent::CandidateStarted { candidate, command } => vec![format!(
                "{} started: {}",
                self.tag(candidate),
                cut(&sanitize(command), 200)
            )],
            RunEvent::Log {
                candidate,
                stream,
                text,
            } => {
                if !self.logs {
                    return Vec::new();
                }
                let bar = match stream {
                    Stream::Stdout => "│",
                    Stream::Stderr => "┃",
                };
                vec![format!(
                    "{} {bar} {}",
                    self.tag(candidate),
                    cut(&sanitize(text), 300)
                )]
            }
            RunEvent::LayerStarted { .. } => Vec::new(),
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
            } => {
                let mut l = format!(
                    "{} verdict {} · {files} file{} {lines} line{} changed",
                    self.tag(candidate),
                    verdict,
                    if *files == 1 { "" } else { "s" },
                    if *lines == 1 { "" } else { "s" },
                );
                if let Some(r) = reason {
                    l.push_str(&format!(" · {}", sanitize(r)));
                }
                vec![l]
            }
            RunEvent::RunFinished { verdict, exit_code } => vec![format!(
                "run verdict {verdict} (exit {exit_code}){}",
                match (verdict, exit_code) {
                    (Verdict::Fail, 3) => " — no candidate passed; escalated to a human",
                    (Verdict::Fail, _) => " — no candidate passed",
                    _ => "",
                }
            )],
            RunEvent::TaskLoaded { source, task } => vec![format!(
                "task from {}: {} acceptance criteri{}, {} constraint{}",
                sanitize(source),
                task.acceptance_criteria.len(),
                if task.acceptance_criteria.len() == 1 {
                    "on"
                } else {
                    "a"
                },
                task.constraints.len(),
                if task.constraints.len() == 1 { "" } else { "s" },
            )],
            RunEvent::AttemptStarted {
                candidate,
                attempt,
                feedback,
            } => {
                let tag = self.tag(candidate);
                let mut out = vec![format!(
                    "{tag} ↻ attempt {attempt}: feedback sent to the author"
                )];
                let lines: Vec<&str> = feedback.lines().filter(|l| !l.trim().is_empty()).collect();
                for l in lines.iter().take(FEEDBACK_LINES) {
                    out.push(format!("{tag}     » {}", cut(&sanitize(l), 300)));
                }
                if lines.len() > FEEDBACK_LINES {
                    out.push(format!(
                        "{tag}     » … {} more lines",
                        lines.len() - FEEDBACK_LINES
                    ));
                }
                out
            }
            RunEvent::CandidateEscalated {
                candidate,
                reason,
                table,
            } => {
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
            RunEvent::RunInterrupted { reason } => {
                vec![format!("run interrupted: {}", sanitize(reason))]
            }
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

/// The lines for one report: a header, then issues, then (when it failed)
/// the output tail.
pub fn report_lines(r: &Report) -> Vec<String> {
    let mut out = Vec::new();
    if r.layer == crate::verdict::Layer::Criteria {
        // Layer 3 reads as its Markdown checklist, evidence included.
        out.push(format!(
            "{} criteria {}",
            mark(r.status),
            cut(&sanitize(&crate::layers::criteria::checklist_line(r)), 400)
        ));
        if matches!(r.status, Status::Fail | Status::Warn) {
            let lines: Vec<&str> = r.output.lines().skip(1).collect();
            let start = lines.len().saturating_sub(OUTPUT_LINES);
            for l in &lines[start..] {
                out.push(format!("    │ {}", cut(&sanitize(l), 200)));
            }
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
    for i in &r.issues {
        let loc = i
            .location()
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
        let lines: Vec<&str> = r.output.lines().collect();
        let start = lines.len().saturating_sub(OUTPUT_LINES);
        for l in &lines[start..] {
            out.push(format!("    │ {}", cut(&sanitize(l), 200)));
        }
    }
    out
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
