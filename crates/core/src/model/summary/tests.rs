//! Unit tests of `summary`.

use super::*;
use crate::model::decision::{Decision, DecisionKind};
use crate::model::event::CandidateInfo;
use crate::model::verdict::{Issue, Severity};

pub(super) fn started() -> RunEvent {
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

#[test]
fn a_candidate_added_to_a_finished_run_reopens_it_and_says_what_it_combines() {
    let mut s = RunSummary::from_events(&[
        started(),
        RunEvent::CandidateFinished {
            candidate: "a".into(),
            verdict: Verdict::Pass,
            reason: None,
            files: 1,
            lines: 1,
            tree: Some("t".into()),
            cancelled: false,
        },
        RunEvent::RunFinished {
            verdict: Verdict::Pass,
            exit_code: 0,
        },
    ]);
    assert_eq!(s.status, "finished");
    let added = RunEvent::CandidateAdded {
        candidate: CandidateInfo {
            id: "combined".into(),
            agent: "m".into(),
            runtime: "command".into(),
            worktree: "/w".into(),
            unsandboxed: false,
        },
        combined_from: vec!["a".into(), "b".into()],
    };
    s.apply(&added);
    // Twice (a replayed journal) is still one candidate.
    s.apply(&added);
    assert_eq!(s.status, "running");
    assert_eq!(s.state, State::Running);
    assert_eq!(s.candidates.len(), 2);
    let c = s.candidate("combined").unwrap();
    assert_eq!(c.state, State::Queued);
    assert_eq!(c.combined_from, ["a", "b"]);
    let json = serde_json::to_value(c).unwrap();
    assert_eq!(json["combined_from"], serde_json::json!(["a", "b"]));
    assert!(serde_json::to_value(s.candidate("a").unwrap()).unwrap()["combined_from"].is_null());
}

#[test]
fn cross_testing_again_replaces_a_candidates_agreement_report() {
    let agreement = |status_fail: bool| {
        let mut r = Report::new(Layer::Compare, "agreement");
        if status_fail {
            r.issues
                .push(Issue::new("compare/disagrees", Severity::Error, "fails t"));
        }
        RunEvent::ReportLanded {
            candidate: "a".into(),
            report: Box::new(r.finish()),
        }
    };
    let s = RunSummary::from_events(&[started(), agreement(false), agreement(true)]);
    let c = s.candidate("a").unwrap();
    let compare: Vec<&Report> = c
        .reports
        .iter()
        .filter(|r| r.layer == Layer::Compare)
        .collect();
    assert_eq!(compare.len(), 1, "{compare:?}");
    assert_eq!(compare[0].status, Status::Fail);
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

pub(super) fn finished() -> RunEvent {
    RunEvent::CandidateFinished {
        candidate: "a".into(),
        verdict: Verdict::Fail,
        reason: None,
        files: 1,
        lines: 1,
        tree: None,
        cancelled: false,
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

pub(super) fn decided(candidate: Option<&str>, kind: DecisionKind, note: &str) -> RunEvent {
    RunEvent::DecisionRecorded {
        decision: Decision::new(candidate, kind, "me", note),
    }
}

pub(super) fn agent_started() -> RunEvent {
    RunEvent::CandidateStarted {
        candidate: "a".into(),
        command: "agent".into(),
    }
}

#[test]
fn a_run_without_an_end_is_running_not_fail() {
    let s = RunSummary::from_events(&[started(), agent_started()]);
    assert_eq!(s.state, State::Running);
    assert_eq!(s.candidates[0].state, State::Running);
    assert_eq!(s.verdict, None);
    let doc = serde_json::to_value(&s).unwrap();
    assert_eq!(doc["state"], "running");
    assert_eq!(doc["candidates"][0]["state"], "running");
    let s = RunSummary::from_events(&[started()]);
    assert_eq!(s.candidates[0].state, State::Queued);
}

#[test]
fn a_cancelled_candidate_is_cancelled_not_fail() {
    let cancelled = RunEvent::CandidateFinished {
        candidate: "a".into(),
        verdict: Verdict::Fail,
        reason: Some("cancelled before every layer ran".into()),
        files: 0,
        lines: 0,
        tree: None,
        cancelled: true,
    };
    // Stopped by quitting: the pipeline says so on the event.
    let s = RunSummary::from_events(&[started(), agent_started(), cancelled.clone()]);
    assert_eq!(s.candidates[0].state, State::Cancelled);
    assert_eq!(s.candidates[0].verdict, Some(Verdict::Fail));
    // Stopped by a cancel decision (`x`), before the candidate ended.
    let mut s = RunSummary::from_events(&[
        started(),
        agent_started(),
        decided(Some("a"), DecisionKind::Cancel, "stop"),
    ]);
    assert_eq!(s.candidates[0].state, State::Cancelled);
    s.apply(&finished());
    s.apply(&RunEvent::RunFinished {
        verdict: Verdict::Fail,
        exit_code: 1,
    });
    assert_eq!(s.candidates[0].state, State::Cancelled);
    assert_eq!(s.state, State::Cancelled, "every candidate was stopped");
    // The whole run (`X`).
    let s = RunSummary::from_events(&[
        started(),
        agent_started(),
        decided(None, DecisionKind::Cancel, "stop all"),
        cancelled,
        RunEvent::RunFinished {
            verdict: Verdict::Fail,
            exit_code: 1,
        },
    ]);
    assert_eq!(s.state, State::Cancelled);
    assert_eq!(serde_json::to_value(&s).unwrap()["state"], "cancelled");
}

#[test]
fn an_escalated_candidate_shows_escalated_with_the_note() {
    let mut s = RunSummary::from_events(&[started(), agent_started(), finished()]);
    assert_eq!(s.candidates[0].state, State::Fail);
    s.apply(&decided(Some("a"), DecisionKind::Escalate, "edits CI"));
    let c = &s.candidates[0];
    assert_eq!(c.state, State::Escalated);
    let e = c.escalated.as_ref().unwrap();
    assert_eq!(
        (e.reason.as_str(), e.by.as_deref()),
        ("edits CI", Some("me"))
    );
    // By the pipeline, when retries ran out.
    let s = RunSummary::from_events(&[
        started(),
        agent_started(),
        RunEvent::CandidateEscalated {
            candidate: "a".into(),
            reason: "retries exhausted".into(),
            table: String::new(),
        },
        finished(),
        RunEvent::RunFinished {
            verdict: Verdict::Fail,
            exit_code: 3,
        },
    ]);
    assert_eq!(s.candidates[0].state, State::Escalated);
    assert_eq!(s.state, State::Escalated);
    // A retry is a new attempt: the escalation was about the last one.
    let mut s = s;
    s.apply(&RunEvent::AttemptStarted {
        candidate: "a".into(),
        attempt: 2,
        feedback: "again".into(),
    });
    assert_eq!(s.candidates[0].state, State::Running);
    assert_eq!(s.state, State::Running, "a retried run is running again");
    assert_eq!(s.verdict, None);
}

#[test]
fn an_interrupted_run_and_its_unfinished_candidates_are_interrupted() {
    let s = RunSummary::from_events(&[
        started(),
        agent_started(),
        RunEvent::RunInterrupted {
            reason: "pid 7 is gone".into(),
        },
    ]);
    assert_eq!(s.state, State::Interrupted);
    assert_eq!(s.candidates[0].state, State::Interrupted);
    // A reattach resumes it: running again.
    let mut s = s;
    s.apply(&failing(Layer::Guardrails, "build", "guardrails/exit"));
    assert_eq!(s.candidates[0].state, State::Running);
    assert_eq!(s.state, State::Running);
}

#[test]
fn overrides_move_the_state_with_the_effective_verdict() {
    let mut s = RunSummary::from_events(&[
        started(),
        failing(Layer::Guardrails, "build", "guardrails/exit"),
        finished(),
    ]);
    assert_eq!(s.candidates[0].state, State::Fail);
    assert!(s.candidates[0].select_refusal().is_some());
    s.apply(&overriding("build", None));
    assert_eq!(s.candidates[0].state, State::Pass);
    assert_eq!(s.candidates[0].select_refusal(), None);
}

#[test]
fn clocks_count_from_journal_times_per_attempt() {
    let mut agent = Report::new(Layer::Agent, "agent");
    agent.duration_ms = 4_000;
    let agent = RunEvent::ReportLanded {
        candidate: "a".into(),
        report: Box::new(agent.finish()),
    };
    let events = vec![
        (1_000, started()),
        (2_000, agent_started()),
        (6_000, agent.clone()),
        (9_000, finished()),
        (
            10_000,
            RunEvent::RunFinished {
                verdict: Verdict::Fail,
                exit_code: 1,
            },
        ),
        // A retry a minute later.
        (
            70_000,
            RunEvent::AttemptStarted {
                candidate: "a".into(),
                attempt: 2,
                feedback: "again".into(),
            },
        ),
        (70_500, agent_started()),
    ];
    let s = RunSummary::from_timed(&events);
    let c = &s.candidates[0];
    // The attempt's clock starts with the retry, not the run.
    assert_eq!(c.clock.attempt.length_ms(75_000), Some(5_000));
    assert_eq!(c.clock.agent_ms(75_000, None), Some(4_500));
    assert_eq!(c.clock.earlier_agent_ms, vec![4_000]);
    assert_eq!(c.clock.agent_total_ms(75_000, None), 8_500);
    // The wall clock is the run's, separately; open while it runs.
    assert_eq!(s.wall.length_ms(75_000), Some(74_000));
    // Replayed from the journal (a reattach), the same clocks.
    let again = RunSummary::from_timed(&events);
    assert_eq!(again.candidates[0].clock, c.clock);
    // The first attempt's clock ended with its verdict.
    let first = RunSummary::from_timed(&events[..4]);
    assert_eq!(
        first.candidates[0].clock.attempt.length_ms(99_999),
        Some(7_000)
    );
}

#[test]
fn a_finalize_is_part_of_the_record() {
    let mut s = RunSummary::from_events(&[started(), finished()]);
    assert!(s.finalized.is_none());
    s.apply(&RunEvent::Finalized(Finalization {
        candidate: "a".into(),
        branch: "rascal/do-it-r".into(),
        commit: "abc".into(),
        title: "rascal: do it".into(),
        pr_body: "/tmp/pr_body.md".into(),
        pushed_to: None,
        pr_command: Vec::new(),
        pr_opened: false,
    }));
    assert_eq!(s.finalized.as_ref().unwrap().branch, "rascal/do-it-r");
    let doc = serde_json::to_value(&s).unwrap();
    assert_eq!(doc["finalized"]["branch"], "rascal/do-it-r");
}

/// A run of candidates `ids`, each ending with its verdict, the ones
/// named in `declared` having declared the task impossible.
fn declaring(ids: &[(&str, Verdict)], declared: &[&str], exit_code: i32) -> RunSummary {
    let mut events = vec![RunEvent::RunStarted {
        run: "r".into(),
        repo: String::new(),
        base: "b".into(),
        instruction: "do it".into(),
        launcher: "process".into(),
        candidates: ids
            .iter()
            .map(|(id, _)| CandidateInfo {
                id: id.to_string(),
                agent: id.to_string(),
                runtime: "scripted".into(),
                worktree: String::new(),
                unsandboxed: false,
            })
            .collect(),
    }];
    for (id, verdict) in ids {
        let reason = format!("{id}: the tests contradict the task");
        let report = if declared.contains(id) {
            events.push(RunEvent::DeclaredImpossible {
                candidate: id.to_string(),
                reason: reason.clone(),
            });
            crate::model::impossible::report(&reason)
        } else if *verdict == Verdict::Pass {
            Report::new(Layer::Agent, "agent").finish()
        } else {
            Report::new(Layer::Agent, "agent")
                .errored("it broke")
                .finish()
        };
        events.push(RunEvent::ReportLanded {
            candidate: id.to_string(),
            report: Box::new(report),
        });
        events.push(RunEvent::CandidateFinished {
            candidate: id.to_string(),
            verdict: *verdict,
            reason: None,
            files: 0,
            lines: 0,
            tree: None,
            cancelled: false,
        });
    }
    let verdict = if ids.iter().any(|(_, v)| *v == Verdict::Pass) {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    events.push(RunEvent::RunFinished { verdict, exit_code });
    RunSummary::from_events(&events)
}

#[test]
fn a_declaration_makes_the_candidate_impossible_with_its_reason() {
    let s = declaring(&[("a", Verdict::Fail), ("b", Verdict::Pass)], &["a"], 0);
    let a = &s.candidates[0];
    assert_eq!(a.state, State::Impossible);
    assert_eq!(
        a.impossible.as_deref(),
        Some("a: the tests contradict the task")
    );
    let refusal = a.select_refusal().unwrap();
    assert!(refusal.contains("IMPOSSIBLE"), "{refusal}");
    assert!(
        refusal.contains("the tests contradict the task"),
        "{refusal}"
    );
    assert_eq!(s.candidates[1].state, State::Pass);
    let doc = serde_json::to_value(&s).unwrap();
    assert_eq!(doc["candidates"][0]["state"], "impossible");
    assert_eq!(
        doc["candidates"][0]["impossible"],
        "a: the tests contradict the task"
    );
    assert!(doc["candidates"][1].get("impossible").is_none());
    // A lone declaration beside a passing candidate only shows.
    assert_eq!(s.state, State::Pass);
    assert_eq!(
        s.declarations().collect::<Vec<_>>(),
        vec![("a", "a: the tests contradict the task")]
    );
    // Overrides do not make it pass: it did not do the task.
    let mut s = s;
    s.apply(&RunEvent::DecisionRecorded {
        decision: Decision::new(
            Some("a"),
            DecisionKind::Override {
                layer: Layer::Agent,
                check: "impossible".into(),
                rule: None,
            },
            "me",
            "try anyway",
        ),
    });
    assert_eq!(s.candidates[0].state, State::Impossible);
    assert!(s.candidates[0].select_refusal().is_some());
    // A human's retry is a new attempt: the declaration was about the
    // last one.
    s.apply(&RunEvent::AttemptStarted {
        candidate: "a".into(),
        attempt: 2,
        feedback: "the dependency is vendored now".into(),
    });
    assert_eq!(s.candidates[0].state, State::Running);
    assert_eq!(s.candidates[0].impossible, None);
}

#[test]
fn declarations_escalate_the_run_when_all_or_a_majority_declare() {
    let all = declaring(
        &[("a", Verdict::Fail), ("b", Verdict::Fail)],
        &["a", "b"],
        3,
    );
    assert_eq!(all.state, State::Escalated);
    assert!(all.declarations_escalate());
    assert_eq!(all.declarations().count(), 2);
    // One passes, two declare: escalated, even with the pass.
    let most = declaring(
        &[
            ("a", Verdict::Pass),
            ("b", Verdict::Fail),
            ("c", Verdict::Fail),
        ],
        &["b", "c"],
        3,
    );
    assert_eq!(most.state, State::Escalated);
    assert_eq!(most.candidates[0].state, State::Pass);
    // The fold says so from the candidates, whatever exit code an
    // older journal holds.
    let most = declaring(
        &[
            ("a", Verdict::Pass),
            ("b", Verdict::Fail),
            ("c", Verdict::Fail),
        ],
        &["b", "c"],
        0,
    );
    assert_eq!(most.state, State::Escalated);
    // One passes, one declares: the run stands on the pass.
    let one = declaring(&[("a", Verdict::Pass), ("b", Verdict::Fail)], &["b"], 0);
    assert_eq!(one.state, State::Pass);
    assert!(!one.declarations_escalate());
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
