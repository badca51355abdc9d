//! The judgement half of a candidate's attempt and the bounded
//! retry-with-feedback loop around it. After L2 guardrails and L4
//! permissions pass, `later_layers` runs L3 criteria and then — only if
//! they pass — L5 review. `next_step` decides what follows an attempt:
//! finish, retry with feedback (failing criteria and reviewer issues sent
//! back to the author), or escalate to a human. Correctness is always
//! re-checked before review, never the reverse.

use crate::config::spec::{CriterionKind, Task};
use crate::config::verification::{OnRequestChanges, DEFAULT_MAX_RETRIES, MAX_RETRIES_CAP};
use crate::config::{AgentConfig, Config};
use crate::layers::criteria::{self, CriteriaRun, Judge};
use crate::layers::review::{self, ReviewOutcome, ReviewRun, Site};
use crate::model::changeset::ChangeSet;
use crate::model::verdict::{Layer, Report, Status};
use crate::pipeline::sequence::Progress;
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// How many times a candidate may be sent back to its author.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// `on_request_changes: retry` (with a review configured).
    pub retry: bool,
    pub max_retries: u32,
}

impl Policy {
    pub fn of(config: &Config) -> Policy {
        match config.verification.as_ref().and_then(|v| v.review.as_ref()) {
            Some(r) => Policy {
                retry: r.on_request_changes == OnRequestChanges::Retry,
                max_retries: r.max_retries.min(MAX_RETRIES_CAP),
            },
            None => Policy {
                retry: false,
                max_retries: DEFAULT_MAX_RETRIES,
            },
        }
    }

    /// Attempts in all: the first plus the retries.
    pub fn max_attempts(&self) -> u32 {
        1 + if self.retry { self.max_retries } else { 0 }
    }
}

/// What follows an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// The verdict stands (pass, warn, or a fail that is not retried).
    Finish,
    /// Send this feedback to the author and verify again.
    Retry(String),
    /// A human must decide.
    Escalate { reason: String, table: String },
}

fn failed_in(reports: &[Report], layers: &[Layer]) -> bool {
    reports
        .iter()
        .any(|r| r.status == Status::Fail && layers.contains(&r.layer))
}

/// Decide what follows `attempt`. Guardrail, permission and agent failures
/// are final (a retry is for work that is valid but not yet right). Failing
/// criteria and requested changes are retried while retries remain, then
/// escalated; with `on_request_changes: fail` they fail the candidate.
pub fn next_step(
    attempt: u32,
    policy: &Policy,
    reports: &[Report],
    review: Option<&ReviewOutcome>,
) -> Next {
    if let Some(ReviewOutcome::Escalate(why)) = review {
        return Next::Escalate {
            reason: format!("the review could not be trusted: {why}"),
            table: escalation_table(reports),
        };
    }
    if failed_in(
        reports,
        &[Layer::Agent, Layer::Guardrails, Layer::Permissions],
    ) {
        return Next::Finish;
    }
    let criteria_failed = failed_in(reports, &[Layer::Criteria]);
    let changes_requested = matches!(review, Some(ReviewOutcome::ChangesRequested(_)));
    if !(criteria_failed || changes_requested) || !policy.retry {
        return Next::Finish;
    }
    if attempt > policy.max_retries {
        return Next::Escalate {
            reason: format!(
                "still failing after {} retr{} with feedback (max_retries: {})",
                attempt - 1,
                if attempt == 2 { "y" } else { "ies" },
                policy.max_retries
            ),
            table: escalation_table(reports),
        };
    }
    Next::Retry(feedback_text(attempt, reports, review))
}

fn one_line(s: &str) -> String {
    crate::text::ellipsis(&s.split_whitespace().collect::<Vec<_>>().join(" "), 300)
}

/// What still fails after `attempt`, for the author: failing criteria
/// (with their evidence) and the reviewers' issues.
pub fn feedback_text(attempt: u32, reports: &[Report], review: Option<&ReviewOutcome>) -> String {
    let mut out = format!("What still fails after attempt {attempt}:\n");
    for r in reports.iter().filter(|r| r.layer == Layer::Criteria) {
        if matches!(r.status, Status::Fail | Status::Warn) {
            out.push_str(&format!("{}\n", one_line(&criteria::checklist_line(r))));
        }
    }
    if let Some(ReviewOutcome::ChangesRequested(issues)) = review {
        for i in issues {
            let who = i.rule.strip_prefix("review/").unwrap_or(&i.rule);
            let sev = match i.severity {
                crate::model::verdict::Severity::Critical => "critical",
                crate::model::verdict::Severity::Error => "major",
                _ => "minor",
            };
            let loc = i.location().map(|l| format!(" at {l}")).unwrap_or_default();
            out.push_str(&format!(
                "- reviewer `{who}` ({sev}){loc}: {}\n",
                one_line(&i.message)
            ));
        }
    }
    out
}

/// The follow-up instruction for the author's next attempt, in the same
/// worktree.
pub fn follow_up(instruction: &str, attempt: u32, max_attempts: u32, feedback: &str) -> String {
    format!(
        "This is attempt {attempt} of at most {max_attempts} on the task below. Your previous change is \
still in this working tree. Fix every problem listed under \"What still fails\", keep what already \
works, and do not start over.\n\n## What still fails\n\n{}\n\n## The task (unchanged)\n\n{}\n",
        feedback.trim(),
        instruction.trim()
    )
}

fn cell(s: &str) -> String {
    one_line(s).replace('|', "\\|")
}

/// The Markdown table of what still fails (or warns) in `reports`.
pub fn escalation_table(reports: &[Report]) -> String {
    let mut rows = Vec::new();
    for r in reports {
        if !matches!(r.status, Status::Fail | Status::Warn) {
            continue;
        }
        let status = if r.status == Status::Fail {
            "FAIL"
        } else {
            "WARN"
        };
        if let Some(e) = &r.errored {
            rows.push(format!(
                "| {} | {} | {status} | {} |",
                r.layer,
                cell(&r.check),
                cell(e)
            ));
        }
        for i in r.issues.iter().take(10) {
            let loc = i.location().map(|l| format!("{l}: ")).unwrap_or_default();
            rows.push(format!(
                "| {} | {} | {status} | {} |",
                r.layer,
                cell(&r.check),
                cell(&format!("{loc}{}", i.message))
            ));
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "| layer | check | status | what fails |\n|---|---|---|---|\n{}\n",
        rows.join("\n")
    )
}

/// Reports for Layers 3 and 5 when they will not run this attempt.
pub fn skipped(config: &Config, task: &Task, why: &str) -> Vec<Report> {
    let mut out = Vec::new();
    for c in &task.acceptance_criteria {
        out.push(Report::skipped(Layer::Criteria, &c.description, why));
    }
    for c in &task.constraints {
        out.push(Report::skipped(Layer::Criteria, &c.description, why));
    }
    if let Some(r) = config.verification.as_ref().and_then(|v| v.review.as_ref()) {
        for name in &r.reviewers {
            out.push(Report::skipped(Layer::Review, name, why));
        }
    }
    out
}

/// What Layers 3 and 5 need for one attempt.
pub struct LaterLayers<'a> {
    pub config: &'a Config,
    pub task: &'a Task,
    pub workdir: &'a Path,
    pub base: git2::Oid,
    pub changes: &'a ChangeSet,
    pub author: (&'a str, &'a AgentConfig),
    pub site: Site,
    pub cancel: CancellationToken,
}

/// L3 criteria, then — only when they pass — L5 review. Returns the
/// reports and, when the review ran, its outcome.
pub async fn later_layers(
    l: &LaterLayers<'_>,
    sink: &(dyn Fn(Progress) + Send + Sync),
) -> (Vec<Report>, Option<ReviewOutcome>) {
    let review_cfg = l
        .config
        .verification
        .as_ref()
        .and_then(|v| v.review.as_ref());
    let needs_diff = review_cfg.is_some()
        || l.task
            .acceptance_criteria
            .iter()
            .any(|c| c.kind == CriterionKind::LlmJudge);
    let diff = if needs_diff {
        match crate::git::workspace::diff_text(l.workdir, l.base) {
            Ok(d) => d,
            Err(e) => {
                let r = Report::new(Layer::Review, "diff")
                    .errored(format!("could not compute the diff: {e}"))
                    .finish();
                sink(Progress::Report(r.clone()));
                return (vec![r], None);
            }
        }
    } else {
        String::new()
    };
    let report_sink = |r: Report| sink(Progress::Report(r));
    let mut reports = Vec::new();
    if l.task.has_criteria() {
        sink(Progress::LayerStarted(Layer::Criteria));
        let settings = l
            .config
            .verification
            .as_ref()
            .and_then(|v| v.criteria.as_ref());
        let judge = settings.and_then(|s| s.judge.as_deref()).and_then(|name| {
            l.config.main.agents.get(name).map(|agent| Judge {
                name,
                agent,
                site: l.site.clone(),
                timeout: settings
                    .and_then(|s| s.timeout)
                    .map(|d| d.get())
                    .unwrap_or(criteria::DEFAULT_TIMEOUT),
            })
        });
        let run = CriteriaRun {
            task: l.task,
            config: l.config,
            workdir: l.workdir,
            base: l.base,
            changes: l.changes,
            diff: &diff,
            judge,
            cancel: l.cancel.clone(),
        };
        reports.extend(criteria::evaluate(&run, &report_sink).await);
    }
    let Some(review_cfg) = review_cfg else {
        return (reports, None);
    };
    if reports.iter().any(|r| r.status == Status::Fail) {
        for name in &review_cfg.reviewers {
            let r = Report::skipped(
                Layer::Review,
                name,
                "skipped: acceptance criteria failed (correctness is checked before review)",
            );
            sink(Progress::Report(r.clone()));
            reports.push(r);
        }
        return (reports, None);
    }
    sink(Progress::LayerStarted(Layer::Review));
    let run = ReviewRun {
        config: l.config,
        review: review_cfg,
        author: l.author,
        task: l.task,
        diff: &diff,
        changes: l.changes,
        site: l.site.clone(),
        cancel: l.cancel.clone(),
    };
    let (rs, outcome) = review::review(&run, &report_sink).await;
    reports.extend(rs);
    (reports, Some(outcome))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::verdict::{Issue, Severity};

    fn crit_fail() -> Report {
        let mut r = Report::new(Layer::Criteria, "health works");
        r.issues
            .push(Issue::new("criteria/test", Severity::Error, "exit 101"));
        r.finish()
    }

    #[test]
    fn retries_then_escalates() {
        let p = Policy {
            retry: true,
            max_retries: 2,
        };
        let reports = vec![crit_fail()];
        assert!(matches!(next_step(1, &p, &reports, None), Next::Retry(_)));
        assert!(matches!(next_step(2, &p, &reports, None), Next::Retry(_)));
        match next_step(3, &p, &reports, None) {
            Next::Escalate { table, .. } => assert!(
                table.contains("| criteria | health works | FAIL | exit 101 |"),
                "{table}"
            ),
            other => panic!("{other:?}"),
        }
        let fail = Policy {
            retry: false,
            max_retries: 2,
        };
        assert_eq!(next_step(1, &fail, &reports, None), Next::Finish);
    }

    #[test]
    fn guardrail_failures_are_final_and_garbled_review_escalates() {
        let p = Policy {
            retry: true,
            max_retries: 2,
        };
        let mut g = Report::new(Layer::Guardrails, "build");
        g.issues.push(Issue::new("x", Severity::Error, "broken"));
        let g = g.finish();
        assert_eq!(next_step(1, &p, &[g, crit_fail()], None), Next::Finish);
        let esc = ReviewOutcome::Escalate("garbled".into());
        assert!(matches!(
            next_step(1, &p, &[], Some(&esc)),
            Next::Escalate { .. }
        ));
    }
}
