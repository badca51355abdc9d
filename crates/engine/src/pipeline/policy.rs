//! The retry policy: after an attempt, `next_step` decides what follows —
//! finish, retry with feedback (failing criteria and reviewer issues sent
//! back to the author), or escalate to a human with the table of what still
//! fails. Bounded by `max_retries`.

use crate::layers::criteria::{self};
use crate::layers::diagnostics;
use crate::layers::review::ReviewOutcome;
use rascal_core::config::verification::{OnRequestChanges, DEFAULT_MAX_RETRIES, MAX_RETRIES_CAP};
use rascal_core::config::Config;
use rascal_core::model::verdict::{Layer, Report, Status};

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

/// Decide what follows `attempt`. A declaration that the task is
/// impossible is final: it is never argued with by feedback. Guardrail,
/// permission and agent failures are final too (a retry is for work that
/// is valid but not yet right). Failing
/// criteria and requested changes are retried while retries remain, then
/// escalated; with `on_request_changes: fail` they fail the candidate.
pub fn next_step(
    attempt: u32,
    policy: &Policy,
    reports: &[Report],
    review: Option<&ReviewOutcome>,
) -> Next {
    if rascal_core::model::impossible::declared(reports) {
        return Next::Finish;
    }
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

/// At most this many lines of a check's first error go back to the author.
const FEEDBACK_BLOCK_LINES: usize = 12;

fn one_line(s: &str) -> String {
    rascal_core::text::ellipsis(&s.split_whitespace().collect::<Vec<_>>().join(" "), 300)
}

/// What still fails after `attempt`, for the author: failing criteria
/// (with their evidence) and the reviewers' issues.
pub fn feedback_text(attempt: u32, reports: &[Report], review: Option<&ReviewOutcome>) -> String {
    let mut out = format!("What still fails after attempt {attempt}:\n");
    for r in reports.iter().filter(|r| r.layer == Layer::Criteria) {
        // A held-out criterion is named by nothing the user or the
        // candidate wrote: one fixed line, whatever its report holds.
        if criteria::is_held_out(r) {
            if matches!(r.status, Status::Fail | Status::Warn) {
                out.push_str(&format!("- [ ] {}\n", rascal_exec::git::holdout::FAILED));
            }
            continue;
        }
        if matches!(r.status, Status::Fail | Status::Warn) {
            out.push_str(&format!("{}\n", one_line(&criteria::checklist_line(r))));
            if let Some(block) = diagnostics::fenced_first_error(r, FEEDBACK_BLOCK_LINES) {
                out.push_str(&format!("{block}\n"));
            }
        }
    }
    if let Some(ReviewOutcome::ChangesRequested(issues)) = review {
        for i in issues {
            let who = i.rule.strip_prefix("review/").unwrap_or(&i.rule);
            let sev = match i.severity {
                rascal_core::model::verdict::Severity::Critical => "critical",
                rascal_core::model::verdict::Severity::Error => "major",
                _ => "minor",
            };
            let loc = i
                .location_to_print()
                .map(|l| format!(" at {l}"))
                .unwrap_or_default();
            out.push_str(&format!(
                "- reviewer `{who}` ({sev}){loc}: {}\n",
                one_line(&i.message)
            ));
        }
    }
    out
}

/// A human's retry feedback, prefilled (the TUI's retry dialog): each
/// failing (or warning) report's error and issues, one line each, with
/// the compiler's or runner's first error as it printed it.
pub fn retry_feedback_lines(reports: &[Report]) -> Vec<String> {
    let first_line = |s: &str| rascal_core::text::sanitize(s.lines().next().unwrap_or(""));
    let mut out = Vec::new();
    for r in reports {
        if !matches!(r.status, Status::Fail | Status::Warn) {
            continue;
        }
        // What an agent may hear of a held-out criterion: one fixed line
        // (its report's note to the operator stays with the operator).
        if criteria::is_held_out(r) {
            out.push(format!(
                "- {} {}: {}",
                r.layer,
                r.check,
                rascal_exec::git::holdout::FAILED
            ));
            continue;
        }
        if let Some(e) = &r.errored {
            out.push(format!("- {} {}: {}", r.layer, r.check, first_line(e)));
        }
        for i in &r.issues {
            let loc = i.location().map(|l| format!(" ({l})")).unwrap_or_default();
            out.push(format!(
                "- {} {}: [{}] {}{loc}",
                r.layer,
                r.check,
                i.rule,
                first_line(&i.message)
            ));
        }
        // The compiler's or runner's first error, as it printed it.
        if let Some(block) = diagnostics::fenced_first_error(r, 12) {
            out.extend(block.lines().map(rascal_core::text::sanitize));
        }
    }
    out
}

/// The follow-up instruction for the author's next attempt, in the same
/// worktree; like every prompt rascal composes, it offers the honest way
/// out (`agents::prompt::WAY_OUT`).
pub fn follow_up(instruction: &str, attempt: u32, max_attempts: u32, feedback: &str) -> String {
    rascal_exec::agents::prompt::with_way_out(&format!(
        "This is attempt {attempt} of at most {max_attempts} on the task below. Your previous change is \
still in this working tree. Fix every problem listed under \"What still fails\", keep what already \
works, and do not start over.\n\n## What still fails\n\n{}\n\n## The task (unchanged)\n\n{}\n",
        feedback.trim(),
        instruction.trim()
    ))
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
            let loc = i
                .location_to_print()
                .map(|l| format!("{l}: "))
                .unwrap_or_default();
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

#[cfg(test)]
mod tests {
    use super::*;
    use rascal_core::model::verdict::{Issue, Severity};

    fn crit_fail() -> Report {
        let mut r = Report::new(Layer::Criteria, "health works");
        r.issues
            .push(Issue::new("criteria/test", Severity::Error, "exit 101"));
        r.finish()
    }

    #[test]
    fn feedback_carries_the_first_error_of_a_failed_command_fenced() {
        let mut r = Report::new(Layer::Criteria, "health works").input("command", "cargo test");
        r.issues.push(
            Issue::new(
                "criteria/test",
                Severity::Error,
                "`cargo test` exited with code 101 — src/lib.rs:11:9: test t panicked: boom",
            )
            .at("src/lib.rs", Some(11)),
        );
        r.output = "`cargo test` exited with code 101\n---- t stdout ----\nthread 't' panicked at src/lib.rs:11:9:\nboom\nnote: run with `RUST_BACKTRACE=1`\n... 3 more lines".into();
        let text = feedback_text(1, &[r.finish()], None);
        assert!(
            text.contains(
                "```\n---- t stdout ----\nthread 't' panicked at src/lib.rs:11:9:\nboom\n```\n"
            ),
            "{text}"
        );
        // A check that ran no command has no block.
        assert!(!feedback_text(1, &[crit_fail()], None).contains("```"));
    }

    /// Issue 53: the operator is told a held-out filter matched nothing
    /// (the report's error); the retry dialog's text, which a human sends
    /// on to the agent, says only that held-out tests failed.
    #[test]
    fn the_retry_dialog_carries_no_operator_note_of_a_held_out_report() {
        let mut r = Report::new(Layer::Criteria, "held-out acceptance tests")
            .input("type", "holdout")
            .errored(crate::layers::criteria::unmatched_holdout(
                "hold_typo",
                "pytest --collect-only -q -k hold_typo",
            ));
        r.issues.push(Issue::new(
            "criteria/holdout",
            Severity::Error,
            rascal_exec::git::holdout::FAILED,
        ));
        let lines = retry_feedback_lines(&[r.finish()]);
        assert_eq!(
            lines,
            vec![format!(
                "- criteria held-out acceptance tests: {}",
                rascal_exec::git::holdout::FAILED
            )]
        );
    }

    #[test]
    fn a_held_out_failure_is_one_fixed_line_whatever_its_report_holds() {
        // A report as an older rascal (or a bug) might have filled it: a
        // count, output, a description naming the tests.
        let mut r = Report::new(Layer::Criteria, "tests/secret_x.rs passes")
            .input("type", "holdout")
            .input("command", "cargo test secret_x");
        r.issues.push(Issue::new(
            "criteria/holdout",
            Severity::Error,
            "held-out tests failed (117769185001473 ran)",
        ));
        r.output = "running 117769185001473 tests\nsecret_x ... FAILED".into();
        let text = feedback_text(1, &[r.finish()], None);
        assert_eq!(
            text,
            format!(
                "What still fails after attempt 1:\n- [ ] {}\n",
                rascal_exec::git::holdout::FAILED
            )
        );
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
    fn a_declaration_of_impossibility_is_never_retried() {
        let p = Policy {
            retry: true,
            max_retries: 2,
        };
        let declared = rascal_core::model::impossible::report("no libfoo");
        // Even beside a failing criterion a retry would fix.
        assert_eq!(
            next_step(1, &p, &[declared, crit_fail()], None),
            Next::Finish
        );
        let changes = ReviewOutcome::ChangesRequested(Vec::new());
        assert!(matches!(
            next_step(1, &p, &[crit_fail()], Some(&changes)),
            Next::Retry(_)
        ));
    }

    #[test]
    fn a_follow_up_offers_the_way_out_once() {
        let text = follow_up(
            &rascal_exec::agents::prompt::with_way_out("Add shout()."),
            2,
            3,
            "- [ ] tests pass",
        );
        assert!(
            text.contains("## The task (unchanged)\n\nAdd shout()."),
            "{text}"
        );
        assert_eq!(
            text.matches(rascal_exec::agents::prompt::WAY_OUT).count(),
            1,
            "{text}"
        );
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
