//! Tests of the headless printer: the lines each event and report prints.

use super::*;
use rascal_core::model::verdict::Report;

/// A planned criterion's check, up to the planner's 500 characters, is
/// shown whole in `show` (the part that matters can be at its end).
#[test]
fn a_criterions_check_shows_whole_up_to_what_a_planner_may_write() {
    let check = format!("cargo test {} || true", "x".repeat(470));
    let c: rascal_core::config::spec::Criterion = serde_json::from_value(serde_json::json!({
        "description": "long",
        "type": "command",
        "check": check,
    }))
    .unwrap();
    let line = criterion_line(&c);
    assert!(line.contains(&check), "{line}");
}

/// A retry's feedback in a decision line: its lines joined, never a
/// `^J` (a control character shown for what it is).
#[test]
fn a_retrys_feedback_is_one_line_without_control_marks() {
    use rascal_core::model::decision::{Decision, DecisionKind};
    let d = Decision::new(
        Some("birch"),
        DecisionKind::Retry {
            feedback: "check negatives\n\nand zero\u{7}".into(),
        },
        "ana",
        "",
    );
    let line = decision_line(&d);
    assert!(
        line.ends_with("retry requested by ana: check negatives / and zero^G"),
        "{line}"
    );
}
use rascal_core::model::event::CandidateInfo;
use rascal_core::text::width;

fn started(ids: &[&str]) -> RunEvent {
    RunEvent::RunStarted {
        run: "r-1".into(),
        repo: "/tmp/repo".into(),
        base: "0123456789abcdef".into(),
        instruction: "do it".into(),
        launcher: "process".into(),
        candidates: ids
            .iter()
            .map(|id| CandidateInfo {
                id: id.to_string(),
                agent: "a".into(),
                runtime: "scripted".into(),
                worktree: "/tmp/w".into(),
                unsandboxed: false,
            })
            .collect(),
    }
}

#[test]
fn declarations_print_their_reasons_and_the_escalation_side_by_side() {
    let mut p = Printer::new(false);
    let declared = |id: &str, reason: &str| RunEvent::DeclaredImpossible {
        candidate: id.into(),
        reason: reason.into(),
    };
    let finished = |id: &str| RunEvent::CandidateFinished {
        candidate: id.into(),
        verdict: Verdict::Fail,
        reason: Some("the agent declared the task impossible: x".into()),
        files: 0,
        lines: 0,
        tree: None,
        cancelled: false,
    };
    p.render(&started(&["a", "b"]));
    let lines = p.render(&declared("a", "tests want 5\n\x1b[2Jno libfoo"));
    assert_eq!(
            lines,
            vec![
                "[a] ⚐ its agent declared the task impossible (impossible.md); its change is not judged, nor retried:",
                "[a]     » tests want 5",
                "[a]     » ^[[2Jno libfoo",
            ]
        );
    let line = p.render(&finished("a")).join("\n");
    assert!(line.contains("verdict FAIL (IMPOSSIBLE)"), "{line}");
    p.render(&declared("b", "no | network"));
    p.render(&finished("b"));
    let end = p.render(&RunEvent::RunFinished {
        verdict: Verdict::Fail,
        exit_code: 3,
    });
    assert_eq!(
            end,
            vec![
                "run verdict FAIL (exit 3) — 2 of 2 candidates declared the task impossible; escalated to a human",
                "    | candidate | why it declared the task impossible |",
                "    |---|---|",
                "    | a | tests want 5 ^[[2Jno libfoo |",
                "    | b | no \\| network |",
            ]
        );
    let state = state_lines(&p.summary).join("\n");
    assert!(
        state.contains("state: run ESCALATED · a IMPOSSIBLE — declared impossible: tests want 5"),
        "{state}"
    );
}

/// A failed build whose first error is far from the end of its output.
fn failed_build() -> Report {
    let mut r = Report::new(rascal_core::model::verdict::Layer::Guardrails, "build");
    r.issues.push(
        rascal_core::model::verdict::Issue::new(
            "guardrails/build",
            rascal_core::model::verdict::Severity::Error,
            "src/lib.rs:11:5: error[E0308]: mismatched types",
        )
        .at("src/lib.rs", Some(11)),
    );
    let mut out = vec![
        "   Compiling calc v0.1.0".to_string(),
        "error[E0308]: mismatched types".into(),
        "  --> src/lib.rs:11:5".into(),
        "".into(),
    ];
    out.extend((0..20).map(|i| format!("later {i}")));
    r.output = out.join("\n");
    r.finish()
}

#[test]
fn a_failed_check_shows_its_first_error_block_then_its_tail() {
    let lines = report_lines(&failed_build());
    assert_eq!(
        lines,
        vec![
            "✗ guardrails/build FAIL (0ms)",
            "    error: src/lib.rs:11:5: error[E0308]: mismatched types [guardrails/build]",
            "    │ error[E0308]: mismatched types",
            "    │   --> src/lib.rs:11:5",
            "    │ … 13 lines cut …",
            "    │ later 12",
            "    │ later 13",
            "    │ later 14",
            "    │ later 15",
            "    │ later 16",
            "    │ later 17",
            "    │ later 18",
            "    │ later 19",
        ]
    );
}

#[test]
fn a_passing_test_runs_evidence_is_printed_under_it() {
    use rascal_core::model::ledger::{BaseTests, Ledger, NewTests};
    let mut r = Report::new(rascal_core::model::verdict::Layer::Guardrails, "tests");
    r.ledger = Some(Box::new(Ledger {
        runner: "cargo".into(),
        at_base: 2,
        now: 4,
        ran: 4,
        passed: 4,
        base_tests: Some(BaseTests {
            listed: 2,
            passed: 2,
            ..BaseTests::default()
        }),
        new_tests: Some(NewTests {
            added: 2,
            proving: 1,
            pass_without_new_code: vec!["tests::names_it".into()],
            ..NewTests::default()
        }),
        ..Ledger::default()
    }));
    let lines = report_lines(&r.finish());
    assert_eq!(
            lines[1..],
            [
                "    2 tests at base · 4 now · 4 ran · 4 passed",
                "    base tests: 2/2 pass on this change",
                "    new tests: 1 of 2 fail at the base and pass here — not failing with the change's new functions stubbed out: tests::names_it",
            ]
        );
}

#[test]
fn the_working_tree_is_noted_under_the_run_header() {
    let mut p = Printer::new(false);
    p.render(&started(&["a"]));
    let lines = p.render(&RunEvent::TaskLoaded {
        source: "instruction".into(),
        task: Box::new(rascal_core::config::spec::Task::from_instruction("do it")),
        worktree: rascal_core::model::event::WorkingTree {
            config_from_worktree: false,
            config_changes: vec!["guardrails.yaml".into()],
            uncommitted: 7,
            uncommitted_files: ["a.rs", "b.rs", "c.rs", "d.rs", "e.rs"]
                .map(String::from)
                .to_vec(),
        },
    });
    assert_eq!(
            lines,
            vec![
                "warning: using .rascal/ from base 01234567; uncommitted changes to guardrails.yaml are ignored — commit them or pass --config-from-worktree",
                "note: working tree has uncommitted changes (7 files: a.rs, b.rs, c.rs, d.rs, e.rs and 2 more); agents start from base 01234567",
            ]
        );
}

#[test]
fn the_candidate_column_is_as_wide_as_the_widest_name_on_screen() {
    let mut p = Printer::new(true);
    p.render(&started(&["日本語エージェント", "claude", "🚀"]));
    let logs: Vec<String> = ["日本語エージェント", "claude", "🚀"]
        .iter()
        .map(|c| {
            p.render(&RunEvent::Log {
                candidate: c.to_string(),
                stream: Stream::Stdout,
                text: "ログ line".into(),
                display: None,
            })
            .remove(0)
        })
        .collect();
    let bars: Vec<usize> = logs
        .iter()
        .map(|l| width(&l[..l.find('│').unwrap()]))
        .collect();
    assert_eq!(bars, [21, 21, 21], "{logs:#?}");
    assert_eq!(logs[1], "[claude            ] │ ログ line");
}

#[test]
fn direction_overrides_in_printed_paths_are_shown_escaped() {
    let mut r = Report::new(rascal_core::model::verdict::Layer::Permissions, "paths");
    r.issues.push(
        rascal_core::model::verdict::Issue::new(
            "denied",
            rascal_core::model::verdict::Severity::Error,
            "m\u{FEFF}",
        )
        .at("a/\u{202E}b.rs", Some(1)),
    );
    let lines = report_lines(&r.finish()).join("\n");
    assert!(lines.contains("a/<U+202E>b.rs:1"), "{lines}");
    assert!(lines.contains("m<U+FEFF>"), "{lines}");
    assert!(!lines.contains('\u{202E}') && !lines.contains('\u{FEFF}'));
}

#[test]
fn one_candidate_is_not_called_a_comparison_and_the_hint_names_the_run() {
    let r = rascal_core::model::ranking::Ranking {
        positions: vec![rascal_core::model::ranking::Ranked {
            position: 1,
            candidate: "fixer".into(),
            verdict: Verdict::Pass,
            layers_passed: 5,
            criteria_met: 0,
            consensus: 1.0,
            lines: 3,
            files: 1,
            reason: "all layers pass".into(),
            usage: None,
            agreement: None,
        }],
        ids: vec!["fixer".into()],
        matrix: vec![vec![1.0]],
        pick: Some("fixer".into()),
        judge: None,
        agreement: None,
        contested: None,
        unseparated: Vec::new(),
        probes: None,
    };
    let lines = ranking_lines(&r, "r-7");
    assert!(
        !lines.iter().any(|l| l.contains("ranking (compare)")),
        "{lines:#?}"
    );
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(lines[0].contains("rascal finalize r-7"), "{lines:#?}");
    assert!(!lines[0].contains("RUN"), "{lines:#?}");
}

#[test]
fn the_similarity_matrix_lines_up_with_wide_names() {
    let r = rascal_core::model::ranking::Ranking {
        positions: Vec::new(),
        ids: vec!["日本語エージェント".into(), "ab".into()],
        matrix: vec![vec![1.0, 0.5], vec![0.5, 1.0]],
        pick: None,
        judge: None,
        agreement: None,
        contested: None,
        unseparated: Vec::new(),
        probes: None,
    };
    let lines = ranking_lines(&r, "r-1");
    let rows: Vec<&String> = lines.iter().filter(|l| l.contains("0.50")).collect();
    assert_eq!(rows.len(), 2, "{lines:#?}");
    let col = |l: &str, needle: &str| width(&l[..l.find(needle).unwrap()]);
    assert_eq!(col(rows[0], "0.50"), col(rows[1], "1.00"), "{lines:#?}");
    let head = lines.iter().find(|l| l.contains("similarity")).unwrap();
    assert_eq!(width(head), width(rows[0]), "{lines:#?}");
}
