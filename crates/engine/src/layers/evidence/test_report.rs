//! A test run's report: its own run (exit code, the output a report keeps,
//! the errors of a failed run with their places) and its evidence lines
//! (`base tests: …`, `new tests: …`) after the ledger's. Shared by the test
//! guardrails of known runners and of JUnit-reporting ones.

use crate::layers::test_results::Whole;
use crate::Error;
use rascal_core::config::{Guardrail, GuardrailKind};
use rascal_core::model::ledger::BaseTests;
use rascal_core::model::verdict::{Issue, Report};
use rascal_exec::exec::place::Place;

/// The guardrail `g`'s own run into its report: exit code, the output a
/// report keeps (read as plain lines, `go test -json` unwrapped), and the
/// errors of a failed run with their places. A run that did not end
/// cleanly (timeout, signal, limit) says why.
pub(crate) fn own_run_of(
    r: &mut Report,
    g: &Guardrail,
    timeout: std::time::Duration,
    place: &Place,
    own: &Whole,
) -> Option<String> {
    let exit = &own.outcome.exit;
    r.duration_ms = exit.duration_ms;
    r.exit_code = exit.code;
    let seen = crate::layers::diagnostics::Captured::from_text(&own.text);
    let tail_lines = rascal_exec::exec::runner::TAIL_LINES;
    r.output = if exit.success() {
        seen.last(&own.outcome.tail, tail_lines)
    } else {
        seen.kept(&own.outcome.tail, tail_lines)
    };
    if let Some(problem) = exit.problem(timeout) {
        return Some(problem);
    }
    if !exit.success() {
        let GuardrailKind::Command { command, .. } = &g.kind else {
            return None;
        };
        r.issues =
            crate::layers::guardrails::failure_issues(&g.name, command, exit.code, place, &seen);
    }
    None
}

/// How the base's own tests fared on the change, into the report: their
/// line after the ledger's, their issue, or why they could not run.
pub(crate) fn merge_base_tests(
    mut r: Report,
    s: &mut rascal_core::model::ledger::Ledger,
    base: Result<(Option<BaseTests>, Vec<Issue>), Error>,
) -> Report {
    match base {
        Ok((b, issue)) => {
            if let Some(b) = b {
                r.output = with_evidence(&r.output, &b.summary());
                s.base_tests = Some(b);
            }
            r.issues.extend(issue);
        }
        Err(e) => r = r.errored(format!("running the base's own tests: {e}")),
    }
    r
}

/// How the base's tests fared in the release profile, into the report:
/// their line after the base tests', their issue, or why they could not
/// run (a check that could not run is a failure).
pub(crate) fn merge_shipped(
    mut r: Report,
    s: &mut rascal_core::model::ledger::Ledger,
    shipped: Result<crate::layers::evidence::shipped::Shipped, Error>,
) -> Report {
    match shipped {
        Ok((counts, issues)) => {
            if let (Some(counts), Some(b)) = (counts, s.base_tests.as_mut()) {
                b.release = Some(counts);
                if let Some(line) = b.release_summary() {
                    r.output = with_evidence(&r.output, &line);
                }
            }
            r.issues.extend(issues);
        }
        Err(e) => {
            r = r.errored(format!(
                "running the base's tests in the release profile: {e}"
            ))
        }
    }
    r
}

/// How the change's new tests fared on the base's code, into the report:
/// their line after the base tests', or a warning saying why they could
/// not run there (evidence, not a gate).
pub(crate) fn merge_new_tests(
    mut r: Report,
    s: &mut rascal_core::model::ledger::Ledger,
    new: Result<(Option<rascal_core::model::ledger::NewTests>, Vec<Issue>), Error>,
) -> Report {
    match new {
        Ok((n, issues)) => {
            if let Some(n) = n {
                r.output = with_evidence(&r.output, &n.summary());
                s.new_tests = Some(n);
            }
            r.issues.extend(issues);
        }
        Err(e) => r.issues.push(Issue::new(
            "test-run/new-tests",
            rascal_core::model::verdict::Severity::Warning,
            format!("new tests: not run on the base's code: {e}"),
        )),
    }
    r
}

/// `output` with `line` after its evidence lines: the ledger's summary
/// first, then `base tests: …`, then `new tests: …`.
pub(crate) fn with_evidence(output: &str, line: &str) -> String {
    let lines: Vec<&str> = output.lines().collect();
    let at = 1 + lines
        .iter()
        .skip(1)
        .take_while(|l| {
            [
                "base tests:",
                "release profile:",
                "new tests:",
                "fails at the base too:",
            ]
            .iter()
            .any(|p| l.starts_with(p))
        })
        .count();
    let at = at.min(lines.len());
    let mut out: Vec<&str> = lines[..at].to_vec();
    out.push(line);
    out.extend(&lines[at..]);
    out.join("\n")
}
