//! The pipeline as a library: events in order on the channel, journalled
//! before they arrive, and live decisions (cancel) acting at once.

use crate::common;
use common::TestRepo;
use rascal_core::model::decision::{Decision, DecisionKind};
use rascal_core::model::event::RunEvent;
use rascal_core::model::verdict::Verdict;
use rascal_engine::pipeline::{self, RunRequest};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn repo() -> TestRepo {
    TestRepo::new(&[
        (
            ".rascal/config.yaml",
            "agents:\n  stuck: { runtime: scripted, scenario: hang }\n  good: { runtime: scripted, steps: [{ do: say, text: hi }, { do: write, path: b.txt, content: \"b\\n\" }] }\n",
        ),
        (".rascal/guardrails.yaml", "guardrails:\n  - { name: ok, command: \"true\" }\n"),
        ("a.txt", "a\n"),
    ])
}

/// Start a live run of `agents` in `t`: its join handle, the event stream
/// and the decision sender.
#[allow(clippy::type_complexity)]
fn start(
    t: &TestRepo,
    agents: &[&str],
) -> (
    tokio::task::JoinHandle<Result<pipeline::RunOutcome, pipeline::PipelineError>>,
    tokio::sync::mpsc::Receiver<RunEvent>,
    tokio::sync::mpsc::UnboundedSender<Decision>,
) {
    let req = RunRequest::new(
        t.path().to_path_buf(),
        "do it",
        agents.iter().map(|a| a.to_string()).collect(),
        common::bin(),
    );
    let prepared = pipeline::prepare(req).unwrap();
    let (tx, rx) = rascal_engine::pipeline::view_channel();
    let (dtx, drx) = tokio::sync::mpsc::unbounded_channel();
    let run = tokio::spawn(pipeline::execute_with(
        prepared,
        tx,
        CancellationToken::new(),
        drx,
    ));
    (run, rx, dtx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_decision_stops_one_candidate_and_the_other_finishes() {
    let t = repo();
    let (run, mut rx, dtx) = start(&t, &["stuck", "good"]);
    let mut events = Vec::new();
    let mut sent = false;
    while let Some(ev) = rx.recv().await {
        if !sent {
            // The agent's lines are in its log file, named by the segment.
            if let RunEvent::LogSegment(seg) = &ev {
                let lines = rascal_engine::store::log_lines(&t.files(), seg).unwrap();
                if seg.candidate == "stuck" && lines.iter().any(|l| l.contains("thinking")) {
                    dtx.send(Decision::new(
                        Some("stuck"),
                        DecisionKind::Cancel,
                        "me",
                        "too slow",
                    ))
                    .unwrap();
                    sent = true;
                }
            }
        }
        events.push(ev);
    }
    let outcome = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(outcome.verdict, Verdict::Pass);
    // Order: RunStarted first, RunFinished last; per candidate, started before
    // its reports, and finished after them.
    assert!(matches!(events.first(), Some(RunEvent::RunStarted { .. })));
    assert!(matches!(events.last(), Some(RunEvent::RunFinished { .. })));
    for cand in ["stuck", "good"] {
        let idx = |pred: &dyn Fn(&RunEvent) -> bool| events.iter().position(pred).unwrap();
        let started = idx(
            &|e| matches!(e, RunEvent::CandidateStarted { candidate, .. } if candidate == cand),
        );
        let finished = idx(
            &|e| matches!(e, RunEvent::CandidateFinished { candidate, .. } if candidate == cand),
        );
        assert!(started < finished);
    }
    let stuck = events
        .iter()
        .find_map(|e| match e {
            RunEvent::CandidateFinished {
                candidate,
                verdict,
                reason,
                ..
            } if candidate == "stuck" => Some((*verdict, reason.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(stuck.0, Verdict::Fail);
    assert!(stuck.1.unwrap().contains("cancelled"));
    assert!(events.iter().any(|e| matches!(e, RunEvent::DecisionRecorded { decision } if decision.kind == DecisionKind::Cancel)));

    // Everything that arrived was journalled first.
    let store = rascal_engine::store::Store::open(&t.path().join(".git/rascal/rascal.db")).unwrap();
    let journalled = store.events(&outcome.run).unwrap();
    assert_eq!(journalled, events);
}

/// The user's cancel of a candidate while its reviewer runs is a decision
/// (issue 31, item 3): no fresh reviewer, no escalation, exit 1 not 3.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_while_the_reviewer_runs_is_a_decision_not_a_reviewer_failure() {
    let t = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            "agents:\n  author: { runtime: scripted, steps: [{ do: write, path: b.txt, content: \"b\\n\" }] }\n  reviewer: { runtime: scripted, scenario: review-hang, provider: other-lab }\n",
        ),
        (
            ".rascal/verification.yaml",
            "review:\n  reviewers: [reviewer]\n  timeout: 120s\n",
        ),
        ("a.txt", "a\n"),
    ]);
    let (run, mut rx, dtx) = start(&t, &["author"]);
    let mut events = Vec::new();
    let mut sent = false;
    while let Some(ev) = rx.recv().await {
        if !sent {
            if let RunEvent::LayerStarted { layer, .. } = &ev {
                if *layer == rascal_core::model::verdict::Layer::Review {
                    dtx.send(Decision::new(
                        Some("author"),
                        DecisionKind::Cancel,
                        "me",
                        "not needed after all",
                    ))
                    .unwrap();
                    sent = true;
                }
            }
        }
        events.push(ev);
    }
    assert!(sent, "the review never started: {events:#?}");
    let outcome = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_ne!(outcome.exit_code, 3, "escalated: {events:#?}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, RunEvent::CandidateEscalated { .. })),
        "{events:#?}"
    );
    let reports: Vec<&rascal_core::model::verdict::Report> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ReportLanded { report, .. } => Some(&**report),
            _ => None,
        })
        .collect();
    assert!(
        !reports.iter().any(|r| r.check.contains("fresh reviewer")
            || r.errored
                .as_deref()
                .unwrap_or("")
                .contains("fresh reviewer")),
        "retried with a fresh reviewer: {reports:#?}"
    );
    let reason = events
        .iter()
        .find_map(|e| match e {
            RunEvent::CandidateFinished { reason, .. } => reason.clone(),
            _ => None,
        })
        .unwrap_or_default();
    assert!(
        reason.contains("cancelled") && !reason.contains("escalated"),
        "{reason}"
    );
}

/// A human's retry decision while the run is live: for a candidate still
/// running it is taken after its current attempt; for one that already
/// finished, its next attempt runs before the run ends. Both in the same
/// worktree and journal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_retry_decisions_run_the_next_attempt_with_the_feedback() {
    let agents = r#"agents:
  fast:
    runtime: scripted
    steps:
      - do: when
        attempt: 1
        then: [{ do: write, path: f.txt, content: "TODO\n" }]
        otherwise: [{ do: write, path: f.txt, content: "done\n" }]
  slow:
    runtime: scripted
    steps:
      - { do: say, text: working }
      - do: when
        attempt: 1
        then: [{ do: sleep, ms: 1500 }, { do: write, path: s.txt, content: "TODO\n" }]
        otherwise: [{ do: write, path: s.txt, content: "done\n" }]
"#;
    let t = TestRepo::new(&[
        (".rascal/config.yaml", agents),
        (
            ".rascal/guardrails.yaml",
            "guardrails:\n  - { name: no-todo, patterns: ['TODO'] }\n",
        ),
        ("a.txt", "a\n"),
    ]);
    let (run, mut rx, dtx) = start(&t, &["fast", "slow"]);
    let retry = |c: &str| {
        Decision::new(
            Some(c),
            DecisionKind::Retry {
                feedback: "remove the TODO".into(),
            },
            "me",
            "",
        )
    };
    let (mut sent_fast, mut sent_slow) = (false, false);
    let mut events = Vec::new();
    while let Some(ev) = rx.recv().await {
        match &ev {
            RunEvent::LogSegment(seg) if seg.candidate == "slow" && !sent_slow => {
                dtx.send(retry("slow")).unwrap();
                sent_slow = true;
            }
            RunEvent::CandidateFinished {
                candidate, verdict, ..
            } if candidate == "fast" && !sent_fast => {
                assert_eq!(*verdict, Verdict::Fail);
                dtx.send(retry("fast")).unwrap();
                sent_fast = true;
            }
            _ => {}
        }
        events.push(ev);
    }
    let outcome = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(outcome.verdict, Verdict::Pass);
    let summary = rascal_core::model::summary::RunSummary::from_events(&events);
    for c in &summary.candidates {
        assert_eq!(c.verdict, Some(Verdict::Pass), "{}: {:?}", c.id, c.reason);
        assert_eq!(c.attempt, 2, "{}", c.id);
        assert_eq!(c.attempts[0].feedback, "remove the TODO");
    }
}

/// The run's one owner: the session starts the pipeline, hands back its
/// outcome, and after the run takes decisions itself — a retry runs the
/// candidate's next attempt in the same journal (its events on their own
/// receiver), anything else is recorded. The CLI and the TUI only call it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_owns_the_run_and_its_retries_after_it() {
    let agents = r#"agents:
  fixer:
    runtime: scripted
    steps:
      - do: when
        attempt: 1
        then: [{ do: write, path: f.txt, content: "TODO\n" }]
        otherwise: [{ do: write, path: f.txt, content: "done\n" }]
"#;
    let t = TestRepo::new(&[
        (".rascal/config.yaml", agents),
        (
            ".rascal/guardrails.yaml",
            "guardrails:\n  - { name: no-todo, patterns: ['TODO'] }\n",
        ),
        ("a.txt", "a\n"),
    ]);
    let req = RunRequest::new(
        t.path().to_path_buf(),
        "do it",
        vec!["fixer".into()],
        common::bin(),
    );
    let (session, mut rx) = pipeline::Session::start(pipeline::prepare(req).unwrap());
    let mut events = Vec::new();
    while let Some(ev) = rx.recv().await {
        events.push(ev);
    }
    let outcome = session.outcome().await.unwrap().unwrap();
    assert_eq!(outcome.verdict, Verdict::Fail);
    assert!(
        session.outcome().await.is_none(),
        "the outcome is taken once"
    );

    // After the run: an escalation is recorded in the journal.
    let escalate = Decision::new(Some("fixer"), DecisionKind::Escalate, "me", "look");
    match session.decide(&escalate, false).unwrap() {
        pipeline::Decided::Recorded(RunEvent::DecisionRecorded { decision }) => {
            assert_eq!(decision.who, "me")
        }
        _ => panic!("an escalation after the run is recorded"),
    }
    // A retry starts attempt 2, which passes, in the same journal.
    let retry = Decision::new(
        Some("fixer"),
        DecisionKind::Retry {
            feedback: "remove the TODO".into(),
        },
        "me",
        "",
    );
    let pipeline::Decided::Retrying(mut more) = session.decide(&retry, false).unwrap() else {
        panic!("a retry after the run starts the next attempt");
    };
    let next = tokio::time::timeout(Duration::from_secs(60), async {
        let mut out = Vec::new();
        while let Some(ev) = more.recv().await {
            out.push(ev);
        }
        out
    })
    .await
    .unwrap();
    events.extend(next);
    let summary = rascal_core::model::summary::RunSummary::from_events(&events);
    let c = &summary.candidates[0];
    assert_eq!(c.attempt, 2);
    assert_eq!(c.verdict, Some(Verdict::Pass), "{:?}", c.reason);
    // The journal holds both attempts and the escalation.
    let list = t.rascal(&["show", session.run(), "--json"]);
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(text.contains("remove the TODO"), "{text}");
}
