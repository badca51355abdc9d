//! Unit tests of how decisions and retries fold into a run's summary:
//! what a cancel can reach, what a retry unselects, and which earlier
//! report a new one replaces (the mutation check's survivors in `fold`).

use super::tests::{agent_started, decided, finished, started};
use super::*;
use crate::model::decision::DecisionKind;
use crate::model::verdict::{Issue, Severity};

#[test]
fn a_cancel_reaches_only_what_is_still_going() {
    // A finished candidate keeps its state when told to stop.
    let mut s = RunSummary::from_events(&[started(), agent_started(), finished()]);
    let before = s.candidates[0].state;
    assert_ne!(before, State::Cancelled);
    s.apply(&decided(Some("a"), DecisionKind::Cancel, "stop"));
    assert_eq!(s.candidates[0].state, before, "it had already ended");
    // A run-level decision that is not a cancel stops nothing.
    let s = RunSummary::from_events(&[
        started(),
        agent_started(),
        decided(None, DecisionKind::Escalate, "look at this"),
    ]);
    assert!(!s.cancelled);
    assert_eq!(s.candidates[0].state, State::Running);
    // A run-level cancel once the run is over stops nothing either.
    let mut s = RunSummary::from_events(&[started(), agent_started(), finished()]);
    s.apply(&RunEvent::RunFinished {
        verdict: Verdict::Fail,
        exit_code: 1,
    });
    s.apply(&decided(None, DecisionKind::Cancel, "stop all"));
    assert!(!s.cancelled, "the run had finished");
    // While it runs, it stops everything still going.
    let s = RunSummary::from_events(&[
        started(),
        agent_started(),
        decided(None, DecisionKind::Cancel, "stop all"),
    ]);
    assert!(s.cancelled);
    assert_eq!(s.candidates[0].state, State::Cancelled);
}

#[test]
fn a_retry_unselects_only_the_candidate_it_retries() {
    let mut two = started();
    if let RunEvent::RunStarted { candidates, .. } = &mut two {
        let mut b = candidates[0].clone();
        b.id = "b".into();
        b.agent = "b".into();
        candidates.push(b);
    }
    let retry = |id: &str| RunEvent::AttemptStarted {
        candidate: id.into(),
        attempt: 2,
        feedback: "again".into(),
    };
    let mut s = RunSummary::from_events(&[two, decided(Some("a"), DecisionKind::Select, "")]);
    assert_eq!(s.selected.as_deref(), Some("a"));
    s.apply(&retry("b"));
    assert_eq!(
        s.selected.as_deref(),
        Some("a"),
        "b's retry leaves a picked"
    );
    s.apply(&retry("a"));
    assert_eq!(s.selected, None, "a's own retry unpicks it");
}

#[test]
fn a_new_compare_report_replaces_only_its_own_earlier_one() {
    let compare = |check: &str, fail: bool| {
        let mut r = Report::new(Layer::Compare, check);
        if fail {
            r.issues
                .push(Issue::new("compare/x", Severity::Error, "disagrees"));
        }
        RunEvent::ReportLanded {
            candidate: "a".into(),
            report: Box::new(r.finish()),
        }
    };
    let s = RunSummary::from_events(&[
        started(),
        agent_started(),
        compare("api change", true),
        compare("agreement", false),
        compare("agreement", false),
    ]);
    let checks: Vec<&str> = s.candidates[0]
        .reports
        .iter()
        .map(|r| r.check.as_str())
        .collect();
    assert_eq!(checks, ["api change", "agreement"], "the failing one stays");
}

#[test]
fn going_over_budget_stops_only_what_is_still_going() {
    let over = RunEvent::OverBudget {
        candidate: "a".into(),
        reason: "spent $2.10 of $2.00".into(),
    };
    let s = RunSummary::from_events(&[started(), agent_started(), over.clone()]);
    let c = &s.candidates[0];
    assert_eq!(c.state, State::Cancelled);
    assert_eq!(c.over_budget.as_deref(), Some("spent $2.10 of $2.00"));
    let s = RunSummary::from_events(&[started(), agent_started(), finished(), over]);
    assert_ne!(
        s.candidates[0].state,
        State::Cancelled,
        "it had already ended"
    );
}
