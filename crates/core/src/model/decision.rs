//! Decisions: what a human (or the headless auto policy) did about a run —
//! select a candidate, override a verdict, retry with feedback, escalate,
//! cancel. Always recorded with who, when and why; an override never erases
//! the verdict it overrides.

use crate::model::verdict::{Layer, Report, Status, Verdict};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DecisionKind {
    /// This candidate is the one to finalize.
    Select,
    /// Accept a failed check (or one issue of it, when `rule` is set).
    Override {
        layer: Layer,
        check: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule: Option<String>,
    },
    /// Hand the candidate (or the run) to a human.
    Escalate,
    /// Run the author again in the same worktree with this feedback.
    Retry { feedback: String },
    /// Stop a candidate (or, with no candidate, the run).
    Cancel,
    /// Plan, then execute: the acceptance criteria the candidates start
    /// with, as approved (`changes`: what differs from the planner's
    /// proposal, in words; empty when it was accepted as proposed).
    ApprovePlan {
        criteria: Vec<crate::config::spec::Criterion>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        constraints: Vec<crate::config::spec::Constraint>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        changes: Vec<String>,
    },
    /// Hand the best passing candidates (`from`, best first) to the
    /// combining agent, whose change becomes the candidate the decision
    /// names (`rascal combine`).
    Combine { from: Vec<String> },
}

impl DecisionKind {
    pub fn name(&self) -> &'static str {
        match self {
            DecisionKind::Select => "select",
            DecisionKind::Override { .. } => "override",
            DecisionKind::Escalate => "escalate",
            DecisionKind::Retry { .. } => "retry",
            DecisionKind::Cancel => "cancel",
            DecisionKind::ApprovePlan { .. } => "approve-plan",
            DecisionKind::Combine { .. } => "combine",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// None: the decision is about the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<String>,
    #[serde(flatten)]
    pub kind: DecisionKind,
    pub who: String,
    /// Why (required for overrides, a note for escalations).
    pub reason: String,
    pub at_ms: i64,
}

/// Why a decision is refused: the decision variants of the crate's one
/// error (`NoReason`, `NoNote`, `NoCandidate`, `NothingToOverride`).
pub use crate::error::Error as DecisionError;

impl Decision {
    pub fn new(candidate: Option<&str>, kind: DecisionKind, who: &str, reason: &str) -> Decision {
        Decision {
            candidate: candidate.map(str::to_string),
            kind,
            who: who.to_string(),
            reason: reason.trim().to_string(),
            at_ms: crate::model::clock::now_ms(),
        }
    }

    /// Check a decision against a candidate's reports before recording it.
    pub fn validate(&self, reports: Option<&[Report]>) -> Result<(), DecisionError> {
        if self.kind == DecisionKind::Escalate && self.reason.is_empty() {
            return Err(DecisionError::NoNote);
        }
        if let DecisionKind::Override { layer, check, rule } = &self.kind {
            if self.reason.is_empty() {
                return Err(DecisionError::NoReason);
            }
            let candidate = self.candidate.clone().unwrap_or_default();
            let reports = reports.ok_or_else(|| DecisionError::NoCandidate(candidate.clone()))?;
            let found = reports.iter().any(|r| {
                r.layer == *layer
                    && &r.check == check
                    && matches!(r.status, Status::Fail | Status::Warn | Status::Skipped)
                    && rule
                        .as_ref()
                        .map(|ru| r.issues.iter().any(|i| &i.rule == ru))
                        .unwrap_or(true)
            });
            if !found {
                return Err(DecisionError::NothingToOverride {
                    candidate,
                    layer: *layer,
                    check: check.clone(),
                });
            }
        }
        Ok(())
    }

    /// Does this decision override `report`?
    pub fn overrides(&self, report: &Report) -> bool {
        match &self.kind {
            DecisionKind::Override { layer, check, rule } => {
                *layer == report.layer
                    && *check == report.check
                    && rule.as_ref().is_none_or(|ru| {
                        // An issue-level override covers the report only when
                        // it was that report's only blocking rule (and the
                        // check did run: an errored report has no rule).
                        report.errored.is_none()
                            && !report.issues.is_empty()
                            && report.issues.iter().all(|i| &i.rule == ru)
                    })
            }
            _ => false,
        }
    }
}

/// What keeps a candidate from passing once `decisions` apply: checks
/// that still fail, and checks that never ran (skipped because of a
/// failure, or cancelled) that nobody accepted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Blockers {
    pub failing: Vec<(Layer, String)>,
    pub skipped: Vec<(Layer, String)>,
}

impl Blockers {
    pub fn is_empty(&self) -> bool {
        self.failing.is_empty() && self.skipped.is_empty()
    }
}

pub fn blockers(reports: &[Report], decisions: &[Decision]) -> Blockers {
    let covered = |r: &Report| decisions.iter().any(|d| d.overrides(r));
    let mut out = Blockers::default();
    for r in reports.iter().filter(|r| !covered(r)) {
        let key = (r.layer, r.check.clone());
        let list = match r.status {
            Status::Fail => &mut out.failing,
            Status::Skipped => &mut out.skipped,
            _ => continue,
        };
        if !list.contains(&key) {
            list.push(key);
        }
    }
    out
}

/// The overrides that accept every check of `reports` that was skipped
/// and is not accepted yet (`--with-skipped`, and the TUI's "with skipped"
/// option), each to be recorded with [`not_run`] of the reason: a skipped
/// check never ran, so overriding the failure that skipped it does not
/// make it pass.
pub fn accept_skipped(reports: &[Report], decisions: &[Decision]) -> Vec<DecisionKind> {
    blockers(reports, decisions)
        .skipped
        .into_iter()
        .map(|(layer, check)| DecisionKind::Override {
            layer,
            check,
            rule: None,
        })
        .collect()
}

/// The reason recorded for accepting a check that never ran.
pub fn not_run(reason: &str) -> String {
    format!("not run: {}", reason.trim())
}

/// The candidate's verdict once human overrides are applied: an overridden
/// report counts as passed (and is shown as "overridden", never erased).
///
/// A layer that was skipped (fail fast, cancel) never ran: once an override
/// lifts the failure that skipped it, the candidate is still not verified,
/// so it stays FAIL until those layers run (`rascal retry`).
pub fn effective_verdict(reports: &[Report], decisions: &[Decision]) -> Verdict {
    let covered = |r: &Report| decisions.iter().any(|d| d.overrides(r));
    let overridden = reports.iter().any(covered);
    // A skipped check counts only when a human accepted it explicitly too.
    if overridden
        && reports
            .iter()
            .any(|r| r.status == Status::Skipped && !covered(r))
    {
        return Verdict::Fail;
    }
    let adjusted: Vec<Report> = reports
        .iter()
        .map(|r| {
            if decisions.iter().any(|d| d.overrides(r)) {
                let mut r = r.clone();
                r.status = Status::Skipped;
                r.errored = None;
                r.issues.clear();
                r
            } else {
                r.clone()
            }
        })
        .collect();
    crate::model::verdict::candidate_verdict(&adjusted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::verdict::{Issue, Severity};

    fn failed(check: &str) -> Report {
        let mut r = Report::new(Layer::Guardrails, check);
        r.issues
            .push(Issue::new("guardrails/x", Severity::Error, "bad"));
        r.finish()
    }

    #[test]
    fn override_needs_reason_and_a_failed_check() {
        let reports = vec![failed("build")];
        let kind = DecisionKind::Override {
            layer: Layer::Guardrails,
            check: "build".into(),
            rule: None,
        };
        let d = Decision::new(Some("a"), kind.clone(), "me", "  ");
        assert_eq!(d.validate(Some(&reports)), Err(DecisionError::NoReason));
        let d = Decision::new(Some("a"), kind, "me", "flaky CI");
        assert_eq!(d.validate(Some(&reports)), Ok(()));
        let other = Decision::new(
            Some("a"),
            DecisionKind::Override {
                layer: Layer::Guardrails,
                check: "tests".into(),
                rule: None,
            },
            "me",
            "why",
        );
        assert!(other.validate(Some(&reports)).is_err());
    }

    #[test]
    fn checks_skipped_after_an_overridden_failure_keep_it_failing_until_accepted() {
        let reports = vec![
            failed("build"),
            Report::skipped(
                Layer::Permissions,
                "permissions",
                "skipped: guardrails failed",
            ),
        ];
        let over = |layer, check: &str| {
            Decision::new(
                Some("a"),
                DecisionKind::Override {
                    layer,
                    check: check.into(),
                    rule: None,
                },
                "me",
                "why",
            )
        };
        let build = over(Layer::Guardrails, "build");
        assert_eq!(
            effective_verdict(&reports, std::slice::from_ref(&build)),
            Verdict::Fail
        );
        let perm = over(Layer::Permissions, "permissions");
        assert_eq!(perm.validate(Some(&reports)), Ok(()));
        assert_eq!(effective_verdict(&reports, &[build, perm]), Verdict::Pass);
    }

    #[test]
    fn an_escalation_needs_a_note() {
        let d = Decision::new(Some("a"), DecisionKind::Escalate, "me", "  ");
        assert_eq!(d.validate(None), Err(DecisionError::NoNote));
        let d = Decision::new(Some("a"), DecisionKind::Escalate, "me", "edits CI");
        assert_eq!(d.validate(None), Ok(()));
    }

    #[test]
    fn blockers_name_what_is_left_and_accepting_skipped_clears_it() {
        let reports = vec![
            failed("build"),
            failed("lint"),
            Report::skipped(Layer::Guardrails, "tests", "skipped: build failed"),
            Report::skipped(Layer::Criteria, "works", "skipped: guardrails failed"),
        ];
        let build = Decision::new(
            Some("a"),
            DecisionKind::Override {
                layer: Layer::Guardrails,
                check: "build".into(),
                rule: None,
            },
            "me",
            "flaky",
        );
        let left = blockers(&reports, std::slice::from_ref(&build));
        assert_eq!(left.failing, vec![(Layer::Guardrails, "lint".to_string())]);
        assert_eq!(
            left.skipped,
            vec![
                (Layer::Guardrails, "tests".to_string()),
                (Layer::Criteria, "works".to_string())
            ]
        );
        let mut all = vec![build];
        let more: Vec<Decision> = accept_skipped(&reports, &all)
            .into_iter()
            .map(|k| Decision::new(Some("a"), k, "me", &not_run("flaky")))
            .collect();
        all.extend(more);
        assert_eq!(all.len(), 3);
        assert_eq!(all[1].reason, "not run: flaky");
        let left = blockers(&reports, &all);
        assert!(left.skipped.is_empty());
        assert_eq!(effective_verdict(&reports, &all), Verdict::Fail, "lint");
    }

    #[test]
    fn override_turns_fail_into_pass_without_erasing_the_report() {
        let reports = vec![failed("build")];
        assert_eq!(effective_verdict(&reports, &[]), Verdict::Fail);
        let d = Decision::new(
            Some("a"),
            DecisionKind::Override {
                layer: Layer::Guardrails,
                check: "build".into(),
                rule: None,
            },
            "me",
            "known flake",
        );
        assert_eq!(effective_verdict(&reports, &[d]), Verdict::Pass);
        assert_eq!(reports[0].status, Status::Fail);
    }

    #[test]
    fn an_override_of_one_rule_covers_a_report_only_when_that_rule_is_all_that_blocks_it() {
        let by_rule = |rule: &str| {
            Decision::new(
                Some("a"),
                DecisionKind::Override {
                    layer: Layer::Guardrails,
                    check: "build".into(),
                    rule: Some(rule.into()),
                },
                "me",
                "known",
            )
        };
        let reports = vec![failed("build")];
        let right = by_rule("guardrails/x");
        assert_eq!(right.validate(Some(&reports)), Ok(()));
        assert_eq!(
            effective_verdict(&reports, std::slice::from_ref(&right)),
            Verdict::Pass
        );
        let wrong = by_rule("guardrails/y");
        assert!(wrong.validate(Some(&reports)).is_err(), "no such issue");
        assert_eq!(effective_verdict(&reports, &[wrong]), Verdict::Fail);
        let mut two = Report::new(Layer::Guardrails, "build");
        two.issues
            .push(Issue::new("guardrails/x", Severity::Error, "bad"));
        two.issues
            .push(Issue::new("guardrails/z", Severity::Error, "worse"));
        let two = [two.finish()];
        assert_eq!(
            effective_verdict(&two, std::slice::from_ref(&right)),
            Verdict::Fail
        );
        let errored = [Report::new(Layer::Guardrails, "build")
            .errored("timed out")
            .finish()];
        assert_eq!(effective_verdict(&errored, &[right]), Verdict::Fail);
    }

    #[test]
    fn blockers_are_empty_only_with_nothing_failing_or_skipped() {
        assert!(blockers(&[], &[]).is_empty());
        assert!(!blockers(&[failed("build")], &[]).is_empty());
        let skipped = [Report::skipped(Layer::Criteria, "works", "skipped")];
        assert!(!blockers(&skipped, &[]).is_empty());
    }
}
