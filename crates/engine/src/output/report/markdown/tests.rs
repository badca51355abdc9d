//! Tests of the PR body: checklists, declarations, combined candidates and
//! escaped text.

use super::*;
use rascal_core::model::event::{CandidateInfo, RunEvent, WorkingTree};
use rascal_core::model::verdict::{Issue, Severity};

fn run_with(report: Report, worktree: WorkingTree) -> RunSummary {
    let events = vec![
        RunEvent::RunStarted {
            run: "r-1".into(),
            repo: "/tmp/repo".into(),
            base: "0123456789abcdef".into(),
            instruction: "add name()".into(),
            launcher: "process".into(),
            candidates: vec![CandidateInfo {
                id: "a".into(),
                agent: "a".into(),
                runtime: "scripted".into(),
                worktree: "/tmp/w".into(),
                unsandboxed: false,
            }],
        },
        RunEvent::TaskLoaded {
            source: "instruction".into(),
            task: Box::new(rascal_core::config::spec::Task::from_instruction(
                "add name()",
            )),
            worktree,
        },
        RunEvent::ReportLanded {
            candidate: "a".into(),
            report: Box::new(report),
        },
    ];
    RunSummary::from_events(&events)
}

#[test]
fn a_failed_command_shows_its_first_error_fenced_and_the_config_source_is_said() {
    let mut r = Report::new(Layer::Guardrails, "build").input("command", "cargo build");
    r.issues.push(
        Issue::new(
            "guardrails/build",
            Severity::Error,
            "src/lib.rs:6:5: error[E0308]: mismatched types",
        )
        .at("src/lib.rs", Some(6)),
    );
    r.output = "   Compiling calc\nerror[E0308]: mismatched types\n --> src/lib.rs:6:5\n  |\n6 |     \"x\"\n\nerror: could not compile `calc`".into();
    let body = pr_body(
        &run_with(
            r.finish(),
            WorkingTree {
                config_from_worktree: true,
                config_changes: vec!["guardrails.yaml".into()],
                uncommitted: 3,
                uncommitted_files: Vec::new(),
            },
        ),
        None,
        None,
    );
    assert!(
            body.contains("- [ ] build ← FAILED: src/lib.rs:6:5: error[E0308]: mismatched types\n  ```\n  error[E0308]: mismatched types\n   --> src/lib.rs:6:5\n    |\n  6 |     \"x\"\n  ```\n"),
            "{body}"
        );
    assert!(
            body.contains("**Note: config from the working tree, not from base 01234567 (differs in guardrails.yaml)**"),
            "{body}"
        );
    // The base's own config: nothing to say.
    let clean = pr_body(
        &run_with(
            Report::new(Layer::Guardrails, "x").finish(),
            WorkingTree::default(),
        ),
        None,
        None,
    );
    assert!(!clean.contains("working tree"), "{clean}");
}

#[test]
fn declarations_of_impossibility_are_listed_with_their_reasons() {
    let mut s = run_with(
        rascal_core::model::impossible::report("tests want <b>5</b>"),
        WorkingTree::default(),
    );
    assert!(!pr_body(&s, None, None).contains("Declared impossible"));
    s.apply(&RunEvent::DeclaredImpossible {
        candidate: "a".into(),
        reason: "tests want <b>5</b>\nand more".into(),
    });
    s.apply(&RunEvent::CandidateFinished {
        candidate: "a".into(),
        verdict: rascal_core::model::verdict::Verdict::Fail,
        reason: None,
        files: 0,
        lines: 0,
        tree: None,
        cancelled: false,
    });
    let body = pr_body(&s, None, None);
    assert!(
        body.contains("### Declared impossible\n\n1 of 1 candidate declared the task impossible"),
        "{body}"
    );
    assert!(body.contains("- **a**: tests want "), "{body}");
    assert!(!body.contains("<b>"), "{body}");
}

#[test]
fn a_combined_candidate_says_what_it_was_combined_from_and_who_decided() {
    let mut s = run_with(
        Report::new(Layer::Agent, "agent").finish(),
        WorkingTree::default(),
    );
    s.apply(&RunEvent::CandidateAdded {
        candidate: CandidateInfo {
            id: "combined".into(),
            agent: "merger".into(),
            runtime: "command".into(),
            worktree: "/tmp/c".into(),
            unsandboxed: false,
        },
        combined_from: vec!["a".into(), "b".into()],
    });
    s.apply(&RunEvent::DecisionRecorded {
        decision: rascal_core::model::decision::Decision::new(
            Some("combined"),
            DecisionKind::Combine {
                from: vec!["a".into(), "b".into()],
            },
            "Ann <ann@example.com>",
            "",
        ),
    });
    s.apply(&RunEvent::CandidateFinished {
        candidate: "combined".into(),
        verdict: rascal_core::model::verdict::Verdict::Pass,
        reason: None,
        files: 2,
        lines: 4,
        tree: Some("abc".into()),
        cancelled: false,
    });
    s.selected = Some("combined".into());
    let body = pr_body(&s, None, None);
    assert!(
            body.contains("Candidate **combined** was written by the combining agent merger from candidates **a**, **b** (best first)"),
            "{body}"
        );
    assert!(
        body.contains("[combined] combine of a, b requested by Ann"),
        "{body}"
    );
}

#[test]
fn direction_overrides_in_paths_and_messages_are_shown_escaped() {
    let mut r = Report::new(Layer::Permissions, "paths");
    r.issues.push(
        Issue::new("denied", Severity::Error, "touched cod\u{202E}e.rs")
            .at("src/\u{202E}txt.rs\u{200B}", Some(3)),
    );
    let r = r.finish();
    let events = [
        RunEvent::RunStarted {
            run: "r-1".into(),
            repo: "/tmp/repo".into(),
            base: "0123456789abcdef".into(),
            instruction: "fix \u{2066}it\u{2069}".into(),
            launcher: "process".into(),
            candidates: vec![CandidateInfo {
                id: "c1".into(),
                agent: "a".into(),
                runtime: "scripted".into(),
                worktree: "/tmp/w".into(),
                unsandboxed: false,
            }],
        },
        RunEvent::ReportLanded {
            candidate: "c1".into(),
            report: Box::new(r),
        },
        RunEvent::CandidateFinished {
            candidate: "c1".into(),
            verdict: rascal_core::model::verdict::Verdict::Fail,
            reason: None,
            files: 1,
            lines: 1,
            tree: None,
            cancelled: false,
        },
    ];
    let s = RunSummary::from_events(&events);
    let body = pr_body(&s, None, None);
    assert!(
        body.contains("src/&lt;U+202E&gt;txt.rs&lt;U+200B&gt;:3"),
        "{body}"
    );
    assert!(
        body.contains("fix &lt;U+2066&gt;it&lt;U+2069&gt;"),
        "{body}"
    );
    for c in ['\u{202E}', '\u{200B}', '\u{2066}', '\u{2069}'] {
        assert!(!body.contains(c), "{c:?} in {body}");
    }
}
