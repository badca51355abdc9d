//! An API the task asked to change, told from one a candidate broke. A
//! candidate whose base tests no longer build as the base wrote them, and
//! whose own updated versions of them pass, gets a note
//! (`base-tests/api-changed`, `test_evidence`): it may have done what the
//! task said ("make `decode` return a `Result` … update the tests"). Once
//! every candidate has finished, the others settle it:
//!
//! - another candidate updated the same tests too: independent authors
//!   changed the API, so the task asked for it — the updated tests stand,
//!   and cross-testing runs each one's versions on the others (which
//!   shows whether they changed it the same way);
//! - otherwise, another candidate built and passed those very tests
//!   unchanged: the API was not the task's to change — this candidate
//!   broke it (`base-tests/broke-api`, a FAIL naming who kept it; a task
//!   that does ask for it names the tests in the spec's
//!   `allow_test_changes`);
//! - otherwise (nobody kept it, nobody else changed it — one candidate
//!   alone, say) the change's version of the test stands in for the
//!   base's with nothing to corroborate it: a warning
//!   (`base-tests/api-changed-alone`) for a human to read, never a clean
//!   PASS — a cheater could change an API only to replace the base's test.

use crate::pipeline::candidate::CandidateOutcome;
use crate::pipeline::compare::agree::land;
use crate::pipeline::journal::Journal;
use rascal_core::model::ledger::BaseTests;
use rascal_core::model::verdict::{Issue, Layer, Report, Severity};

/// Rule: a base test this change updated for an API it altered, which
/// another candidate built and passed as the base wrote it.
pub const RULE_BROKE_API: &str = "base-tests/broke-api";

/// Rule (a warning): a base test this change updated for an API it
/// altered, which no other candidate changed or kept — nothing
/// corroborates that the task asked for it, and the change's own version
/// of the test stands in for the base's.
pub const RULE_API_ALONE: &str = "base-tests/api-changed-alone";

/// The name of the report.
pub const API: &str = "api";

/// Each test guardrail's base-tests ledger of `o`, by guardrail.
fn base_tests(o: &CandidateOutcome) -> Vec<(&str, &BaseTests)> {
    o.reports
        .iter()
        .filter_map(|r| Some((r.check.as_str(), r.ledger.as_ref()?.base_tests.as_ref()?)))
        .collect()
}

/// Whether `b` (another candidate's) shows base test `t` built and passed
/// as the base wrote it.
fn kept(b: &BaseTests, t: &String) -> bool {
    b.listed > 0
        && b.passed > 0
        && !b.not_passing.contains(t)
        && !b.updated.contains(t)
        // A list cut short names only some of what did not pass.
        && b.not_passing.len() < 50
}

/// One updated base test's finding: severity, rule, message.
type Finding = (Severity, &'static str, String);

/// Settle every candidate's updated base tests against the others'.
pub(crate) fn settle(results: &mut [CandidateOutcome], journal: &Journal) {
    let mut found: Vec<(usize, Vec<Finding>)> = Vec::new();
    for (i, o) in results.iter().enumerate() {
        let mut lines = Vec::new();
        for (check, mine) in base_tests(o) {
            for t in &mine.updated {
                let also_updated = results.iter().any(|other| {
                    other.id != o.id
                        && base_tests(other)
                            .iter()
                            .any(|(c, b)| *c == check && b.updated.contains(t))
                });
                if also_updated {
                    continue;
                }
                let keepers: Vec<&str> = results
                    .iter()
                    .filter(|other| other.id != o.id)
                    .filter(|other| {
                        base_tests(other)
                            .iter()
                            .any(|(c, b)| *c == check && kept(b, t))
                    })
                    .map(|other| other.id.as_str())
                    .collect();
                if keepers.is_empty() {
                    lines.push((
                        Severity::Warning,
                        RULE_API_ALONE,
                        format!(
                            "`{t}` does not build on this change as the base wrote it, and this change's own version of it stands in: no other candidate changed or kept that API, so nothing shows the task asked for it — read the new version (a task that does ask names the test in the spec's `allow_test_changes`)"
                        ),
                    ));
                } else {
                    lines.push((
                        Severity::Error,
                        RULE_BROKE_API,
                        format!(
                            "`{t}` does not build on this change as the base wrote it, and passes unchanged on {} (no other candidate changed it): this change broke an API the task did not ask to change (if it did, name the test in the spec's `allow_test_changes`)",
                            keepers.join(", ")
                        ),
                    ));
                }
            }
        }
        if !lines.is_empty() {
            found.push((i, lines));
        }
    }
    for (i, lines) in found {
        let mut r = Report::new(Layer::Compare, API);
        r.required = true;
        let broke = lines.iter().filter(|l| l.0 == Severity::Error).count();
        r.output = if broke > 0 {
            format!(
                "{} updated with an API that other candidates kept",
                rascal_core::text::plural(broke as u64, "base test")
            )
        } else {
            format!(
                "{} updated with an API no other candidate changed",
                rascal_core::text::plural(lines.len() as u64, "base test")
            )
        };
        for (severity, rule, l) in lines {
            r.issues.push(Issue::new(rule, severity, l));
        }
        land(journal, &mut results[i], r.finish());
    }
}
