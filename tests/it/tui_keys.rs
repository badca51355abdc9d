//! Key handling as state transitions: keys in (through the command table),
//! state and effects out. No terminal involved.

use crate::common::fixture::{self, DIFF};
use rascal_core::model::verdict::{Layer, Status};
use rascal_tui::app::{Dialog, Mark, Screen, STRIP};
use rascal_tui::commands::{dispatch, status_hints};
use rascal_tui::update::{update, Effect};
use rascal_tui::{Action, App, DecisionKind, Key};

fn press(app: &mut App, k: Key) -> Vec<Effect> {
    match dispatch(app, k) {
        Some(a) => update(app, a),
        None => Vec::new(),
    }
}

fn press_all(app: &mut App, ks: &[Key]) -> Vec<Effect> {
    ks.iter().flat_map(|k| press(app, *k)).collect()
}

/// Three finished candidates, the diff view open on careful's fixture diff.
fn diff_open() -> App {
    let mut app = fixture::app(3, true, false);
    press(&mut app, Key::Char('d'));
    update(
        &mut app,
        Action::DiffLoaded {
            candidate: "careful".into(),
            text: DIFF.into(),
        },
    );
    app
}

fn type_text(app: &mut App, s: &str) {
    for c in s.chars() {
        press(app, Key::Char(c));
    }
}

#[test]
fn digits_tab_and_backtab_move_focus() {
    let mut app = fixture::app(3, true, false);
    press(&mut app, Key::Char('3'));
    assert_eq!(app.focus, 2);
    press(&mut app, Key::Tab);
    assert_eq!(app.focus, 0);
    press(&mut app, Key::BackTab);
    assert_eq!(app.focus, 2);
    press(&mut app, Key::Char('9'));
    assert_eq!(app.focus, 2, "a digit past the last candidate does nothing");
}

#[test]
fn enter_opens_the_selected_layer_and_esc_goes_back() {
    let mut app = fixture::app(3, true, false);
    press_all(&mut app, &[Key::Char('2'), Key::Right, Key::Enter]);
    assert_eq!(app.screen, Screen::Detail);
    assert_eq!(app.selected_layer(), Layer::Guardrails);
    assert!(!app.detail_rows().is_empty());
    press(&mut app, Key::Esc);
    assert_eq!(app.screen, Screen::Dashboard);
}

#[test]
fn enter_on_an_issue_jumps_to_its_line_in_the_diff() {
    let mut app = fixture::app(3, true, false);
    press_all(&mut app, &[Key::Char('2'), Key::Char('l'), Key::Enter]);
    // rows: secrets, banned-patterns, its issue, …; the detail opens on
    // the first failed check (banned-patterns).
    press_all(&mut app, &[Key::Char('j')]);
    let fx = press(&mut app, Key::Enter);
    assert_eq!(app.screen, Screen::Diff);
    assert_eq!(fx, vec![Effect::LoadDiff("hasty".into())]);
    update(
        &mut app,
        Action::DiffLoaded {
            candidate: "hasty".into(),
            text: DIFF.into(),
        },
    );
    let d = &app.diffs["hasty"];
    // The issue's line is marked, with a few lines of context above it.
    let (file, at) = app.diff_view.mark.expect("the issue's line is marked");
    assert_eq!(file, app.diff_view.file);
    let line = &d.files[file].lines[at];
    assert_eq!(line.new, Some(10));
    assert!(line.text.contains("dbg!"));
    assert_eq!(
        app.diff_view.scroll,
        at.saturating_sub(rascal_tui::app::DiffView::CONTEXT)
    );
    assert!(app.diff_view.scroll < at, "context above the line");
    press(&mut app, Key::Esc);
    assert_eq!(
        app.screen,
        Screen::Detail,
        "Esc returns to the layer detail"
    );
}

#[test]
fn diff_keys_jump_hunks_and_files_and_toggle_side_by_side() {
    let mut app = diff_open();
    press(&mut app, Key::Char('n'));
    assert_eq!((app.diff_view.file, app.diff_view.scroll), (0, 14));
    press(&mut app, Key::Char('n'));
    assert_eq!(app.diff_view.file, 1, "past the last hunk: next file");
    press(&mut app, Key::Char('p'));
    assert_eq!((app.diff_view.file, app.diff_view.scroll), (0, 14));
    press(&mut app, Key::Char('['));
    assert_eq!((app.diff_view.file, app.diff_view.scroll), (0, 0));
    press(&mut app, Key::Char(']'));
    assert_eq!(app.diff_view.file, 1);
    press(&mut app, Key::Char('s'));
    assert!(app.diff_view.side_by_side);
}

#[test]
fn override_requires_a_reason_and_records_a_decision() {
    let mut app = fixture::app(3, true, false);
    press_all(&mut app, &[Key::Char('2'), Key::Char('l')]);
    assert_eq!(
        app.candidates[1].mark(Layer::Guardrails, &app.meta),
        Mark::Fail
    );
    press(&mut app, Key::Char('o'));
    let fx = press(&mut app, Key::Enter);
    assert!(fx.is_empty());
    assert!(
        matches!(&app.dialog, Some(Dialog::Override { error: Some(e), .. }) if e.contains("reason"))
    );
    type_text(&mut app, "flaky");
    let fx = press(&mut app, Key::Enter);
    let [Effect::Decide(d)] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    assert_eq!(d.candidate.as_deref(), Some("hasty"));
    assert_eq!(d.reason, "flaky");
    assert_eq!(d.who, "Ada Lovelace <ada@example.com>");
    assert!(matches!(
        &d.kind,
        DecisionKind::Override {
            layer: Layer::Guardrails,
            ..
        }
    ));
    assert!(app.dialog.is_none());
    // hasty failed two guardrails; one override does not make the layer ⊘
    // (the run summary's rule: every failing report must be covered).
    let DecisionKind::Override { check: first, .. } = &d.kind else {
        unreachable!()
    };
    assert_eq!(
        app.candidates[1].mark(Layer::Guardrails, &app.meta),
        Mark::Fail
    );
    let other = if first == "build" {
        "banned-patterns"
    } else {
        "build"
    };
    let second = rascal_core::model::decision::Decision::new(
        Some("hasty"),
        DecisionKind::Override {
            layer: Layer::Guardrails,
            check: other.into(),
            rule: None,
        },
        "Ada Lovelace <ada@example.com>",
        "flaky too",
    );
    app.apply_decision(&second);
    // Its `tests` guardrail never ran (skipped after the build failed):
    // until someone accepts it too, the layer is not all accepted.
    assert_eq!(
        app.candidates[1].mark(Layer::Guardrails, &app.meta),
        Mark::Fail
    );
    let skipped = rascal_core::model::decision::Decision::new(
        Some("hasty"),
        DecisionKind::Override {
            layer: Layer::Guardrails,
            check: "tests".into(),
            rule: None,
        },
        "Ada Lovelace <ada@example.com>",
        "not run: flaky",
    );
    app.apply_decision(&skipped);
    assert_eq!(
        app.candidates[1].mark(Layer::Guardrails, &app.meta),
        Mark::Overridden
    );
}

#[test]
fn override_in_the_detail_names_the_check_and_rule() {
    let mut app = fixture::app(3, true, false);
    press_all(
        &mut app,
        &[
            Key::Char('2'),
            Key::Char('l'),
            Key::Enter,
            Key::Char('j'),
            Key::Char('o'),
        ],
    );
    match &app.dialog {
        Some(Dialog::Override { check, rule, .. }) => {
            assert_eq!(check, "banned-patterns");
            assert_eq!(rule.as_deref(), Some("guardrails/banned-patterns"));
        }
        d => panic!("{d:?}"),
    }
}

#[test]
fn override_is_not_offered_on_a_candidate_with_nothing_to_override() {
    let mut app = fixture::app(3, true, false);
    // careful passed every layer.
    assert!(dispatch(&app, Key::Char('o')).is_none());
    assert!(!status_hints(&app).iter().any(|(k, _)| *k == "o"));
    press(&mut app, Key::Char('2'));
    assert!(status_hints(&app).iter().any(|(k, _)| *k == "o"));
    // In a passing layer's detail there is nothing to override.
    press_all(&mut app, &[Key::Enter]);
    assert_eq!(app.screen, Screen::Detail);
    app.layer_sel = 0;
    assert_eq!(app.selected_layer(), Layer::Agent);
    assert!(dispatch(&app, Key::Char('o')).is_none());
}

/// Issue 53: on the dashboard `o` did nothing and said nothing until a
/// failing layer was selected with `l`; the guide lists `o` there.
#[test]
fn o_on_the_dashboard_overrides_the_first_failing_layer_without_selecting_it() {
    let mut app = fixture::app(3, true, false);
    press(&mut app, Key::Char('2'));
    assert_eq!(app.selected_layer(), Layer::Agent, "nothing selected yet");
    press(&mut app, Key::Char('o'));
    match &app.dialog {
        Some(Dialog::Override { layer, check, .. }) => {
            assert_eq!(*layer, Layer::Guardrails);
            assert!(
                ["build", "banned-patterns"].contains(&check.as_str()),
                "{check}"
            );
        }
        d => panic!("{d:?}"),
    }
    assert_eq!(
        app.selected_layer(),
        Layer::Guardrails,
        "the strip shows which"
    );
}

#[test]
fn retry_is_prefilled_with_the_failing_issues_and_editable() {
    let mut app = fixture::app(3, true, false);
    press_all(&mut app, &[Key::Char('2'), Key::Char('r')]);
    let Some(Dialog::Retry { input, .. }) = &app.dialog else {
        panic!()
    };
    assert!(input.contains("[guardrails/build]"), "{input}");
    assert!(input.contains("src/lib.rs:10"), "{input}");
    // The compiler's first error, as it printed it, fenced.
    assert!(input.contains("error[E0308]: mismatched types"), "{input}");
    assert!(input.contains("```"), "{input}");
    press(&mut app, Key::Backspace);
    type_text(&mut app, "!");
    let fx = press(&mut app, Key::Enter);
    match fx.as_slice() {
        [Effect::Decide(d)] => match &d.kind {
            DecisionKind::Retry { feedback } => assert!(feedback.ends_with('!')),
            k => panic!("{k:?}"),
        },
        fx => panic!("{fx:?}"),
    }
}

#[test]
fn escalate_and_select_record_decisions() {
    let mut app = fixture::app(3, true, false);
    press_all(&mut app, &[Key::Char('3'), Key::Char('!')]);
    type_text(&mut app, "edits CI");
    let fx = press(&mut app, Key::Enter);
    assert!(
        matches!(&fx[..], [Effect::Decide(d)] if d.kind == DecisionKind::Escalate && d.reason == "edits CI")
    );
    press_all(&mut app, &[Key::Char('1'), Key::Char('c')]);
    assert_eq!(app.screen, Screen::Compare);
    let fx = press_all(&mut app, &[Key::Enter, Key::Enter]);
    assert!(
        matches!(&fx[..], [Effect::Decide(d)] if d.kind == DecisionKind::Select && d.candidate.as_deref() == Some("careful"))
    );
}

#[test]
fn compare_digits_pick_the_other_candidate() {
    let mut app = fixture::app(3, true, false);
    let fx = press(&mut app, Key::Char('c'));
    assert_eq!(
        fx,
        vec![Effect::LoadCompare("careful".into(), "hasty".into())]
    );
    let fx = press(&mut app, Key::Char('3'));
    assert_eq!(
        fx,
        vec![Effect::LoadCompare("careful".into(), "sneaky".into())]
    );
    assert_eq!(app.compare_b, 2);
}

#[test]
fn quit_asks_while_candidates_run_and_not_after() {
    let mut app = fixture::app(3, false, false);
    let fx = press(&mut app, Key::Char('q'));
    assert!(fx.is_empty());
    assert_eq!(app.dialog, Some(Dialog::Quit));
    assert!(
        press(&mut app, Key::Char('l')).is_empty(),
        "no docker agents to leave running"
    );
    assert!(app.flash.is_some());
    assert_eq!(
        press(&mut app, Key::Char('s')),
        vec![Effect::Quit { stop: true }]
    );
    assert!(app.quit);

    let mut done = fixture::app(3, true, false);
    assert_eq!(
        press(&mut done, Key::Char('q')),
        vec![Effect::Quit { stop: false }]
    );
}

#[test]
fn cancel_a_candidate_asks_then_records_and_stops_it() {
    let mut app = fixture::app(3, false, false);
    press_all(&mut app, &[Key::Char('2'), Key::Char('x')]);
    assert_eq!(
        app.dialog,
        Some(Dialog::Cancel {
            candidate: Some("hasty".into())
        })
    );
    let fx = press(&mut app, Key::Char('y'));
    assert!(matches!(&fx[0], Effect::Decide(d) if d.kind == DecisionKind::Cancel));
    assert_eq!(fx[1], Effect::CancelCandidate("hasty".into()));
    assert!(app.candidates[1].cancelled);
}

#[test]
fn scrolling_up_pauses_follow_and_end_resumes() {
    let mut app = fixture::app(3, false, false);
    press(&mut app, Key::Char('k'));
    assert!(!app.candidates[0].logs.follow);
    assert!(status_hints(&app).iter().any(|(k, _)| *k == "End"));
    press(&mut app, Key::End);
    assert!(app.candidates[0].logs.follow);
}

#[test]
fn filter_takes_typed_keys_until_enter() {
    let mut app = fixture::app(3, true, false);
    press(&mut app, Key::Char('/'));
    type_text(&mut app, "Edit");
    assert_eq!(
        app.screen,
        Screen::Dashboard,
        "typed `d` did not open the diff"
    );
    press(&mut app, Key::Enter);
    assert_eq!(app.filter.as_deref(), Some("Edit"));
    assert!(!app.filter_editing);
}

#[test]
fn help_lists_every_key_once_and_scrolls_until_closed() {
    let entries = rascal_tui::draw::help::entries();
    for c in rascal_tui::commands::COMMANDS {
        // Its own entry, or part of one in its group (`p` in `n/p`).
        assert!(
            entries
                .iter()
                .any(|(_, k, _)| *k == c.label || k.split('/').any(|p| p == c.label)),
            "{} {}",
            c.label,
            c.desc
        );
    }
    for (i, (s, k, _)) in entries.iter().enumerate() {
        assert!(
            !entries[..i].iter().any(|(s2, k2, _)| s2 == s && k2 == k),
            "`{k}` twice in {s}"
        );
    }
    assert!(!entries.iter().any(|(_, k, _)| *k == "p"), "p is in n/p");

    let mut app = fixture::app(3, true, false);
    update(&mut app, Action::Resize(80, 24));
    press(&mut app, Key::Char('?'));
    assert!(app.help);
    press(&mut app, Key::Char('x'));
    assert!(app.help, "keys that are not help's do nothing");
    assert_eq!(app.dialog, None, "x did not reach the dashboard");
    press(&mut app, Key::Char('j'));
    assert_eq!(app.help_scroll, 1);
    press(&mut app, Key::Char('G'));
    let bottom = app.help_scroll;
    assert!(bottom > 1, "at 80×24 the help scrolls");
    press(&mut app, Key::PageDown);
    assert_eq!(app.help_scroll, bottom, "no scrolling past the end");
    press(&mut app, Key::Char('g'));
    assert_eq!(app.help_scroll, 0);
    press(&mut app, Key::Esc);
    assert!(!app.help);
    press(&mut app, Key::Char('?'));
    press(&mut app, Key::Char('q'));
    assert!(!app.help && !app.quit, "q closes help, it does not quit");
    press(&mut app, Key::Char('?'));
    press(&mut app, Key::Char('?'));
    assert!(!app.help);
    // Reopened, it starts at the top.
    press_all(
        &mut app,
        &[Key::Char('?'), Key::Char('G'), Key::Esc, Key::Char('?')],
    );
    assert_eq!(app.help_scroll, 0);
}

#[test]
fn mouse_click_focuses_a_column() {
    let mut app = fixture::app(3, true, false);
    update(&mut app, Action::Resize(200, 50));
    update(&mut app, Action::Click(150, 20));
    assert_eq!(app.focus, 2);
    update(&mut app, Action::Scroll(-3));
    assert!(!app.candidates[2].logs.follow);
    // Tabs (a narrow terminal): a click on a tab title focuses it.
    update(&mut app, Action::Resize(44, 20));
    let area = ratatui::layout::Rect::new(0, 0, 44, 20);
    let lay = rascal_tui::draw::dashboard::layout_of(&app, area);
    // Two titles fit beside the count of the one left out; the focused
    // one (the third) is among them.
    let shown: Vec<usize> = lay.tabs.iter().map(|(i, _)| *i).collect();
    assert_eq!(shown, [1, 2]);
    assert_eq!(lay.more.map(|(n, _)| n), Some(1));
    let (i, r) = lay.tabs[0];
    update(&mut app, Action::Click(r.x + 1, r.y));
    assert_eq!(app.focus, i);
}

#[test]
fn layer_strip_marks_follow_the_events() {
    let app = fixture::app(3, false, false);
    let c = &app.candidates[1];
    assert_eq!(c.mark(Layer::Agent, &app.meta), Mark::Pass);
    assert_eq!(c.mark(Layer::Guardrails, &app.meta), Mark::Running);
    assert_eq!(c.mark(Layer::Permissions, &app.meta), Mark::Pending);
    assert_eq!(
        c.mark(Layer::Criteria, &app.meta),
        Mark::Off,
        "not configured"
    );
    assert_eq!(STRIP.len(), 5);
    assert!(app.animating());
    let done = fixture::app(3, true, false);
    assert!(
        !done.animating(),
        "nothing moves once the run finished: no ticks, no redraws"
    );
}

#[test]
fn v_toggles_between_readable_and_raw_agent_lines() {
    let mut app = fixture::app(3, true, false);
    let id = app.candidates[0].info.id.clone();
    app.apply(
        &rascal_core::model::event::RunEvent::Log {
            candidate: id,
            stream: rascal_exec::exec::runner::Stream::Stdout,
            text:
                r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Edit"}]}}"#
                    .into(),
            display: Some("▸ Edit src/health.rs".into()),
        },
        0,
    );
    let last = |app: &App| -> String {
        let e = app.candidates[0].logs.visible(1, None)[0];
        let line = match (&e.raw, app.raw_logs) {
            (Some(r), true) => r,
            _ => &e.line,
        };
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    };
    assert_eq!(last(&app), "▸ Edit src/health.rs");
    press(&mut app, Key::Char('v'));
    assert!(app.raw_logs);
    assert!(
        last(&app).starts_with(r#"{"type":"assistant""#),
        "{}",
        last(&app)
    );
    press(&mut app, Key::Char('v'));
    assert_eq!(last(&app), "▸ Edit src/health.rs");
}

#[test]
fn selecting_a_failed_candidate_asks_for_a_reason_first() {
    let mut app = fixture::app(3, true, false);
    // hasty FAILed its guardrails: the dialog says so and wants a reason.
    press_all(&mut app, &[Key::Char('2'), Key::Char(' ')]);
    let Some(Dialog::Select { refusal, .. }) = &app.dialog else {
        panic!("{:?}", app.dialog)
    };
    assert!(refusal.as_deref().unwrap().contains("FAIL"), "{refusal:?}");
    let fx = press(&mut app, Key::Enter);
    assert!(fx.is_empty(), "nothing recorded without a reason: {fx:?}");
    assert!(
        matches!(&app.dialog, Some(Dialog::Select { error: Some(e), .. }) if e.contains("reason"))
    );
    type_text(&mut app, "the build failure is the CI image");
    let fx = press(&mut app, Key::Enter);
    assert!(
        matches!(&fx[..], [Effect::Decide(d)] if d.kind == DecisionKind::Select
            && d.candidate.as_deref() == Some("hasty")
            && d.reason == "the build failure is the CI image"),
        "{fx:?}"
    );
    assert_eq!(app.summary.selected.as_deref(), Some("hasty"));
    // A candidate that passed is selected without a question.
    press_all(&mut app, &[Key::Char('1'), Key::Char(' ')]);
    assert!(matches!(
        &app.dialog,
        Some(Dialog::Select { refusal: None, .. })
    ));
    let fx = press(&mut app, Key::Enter);
    assert!(matches!(&fx[..], [Effect::Decide(d)] if d.candidate.as_deref() == Some("careful")));
}

#[test]
fn a_combined_candidate_with_new_code_needs_a_reason_to_select_or_finalize() {
    let mut app = fixture::app(3, true, false);
    // `careful` passed, but its change has a line in no candidate it was
    // combined from.
    let traced = rascal_engine::layers::Traced {
        added: 3,
        from: Default::default(),
        new: vec![rascal_engine::layers::NewLine {
            file: "src/b.rs".into(),
            line: 7,
            text: "if x == 7 { return 0 }".into(),
            glue: false,
        }],
    };
    app.candidates[0]
        .reports
        .push(rascal_engine::layers::provenance_report(&traced, false));
    press_all(&mut app, &[Key::Char('1'), Key::Char(' ')]);
    let Some(Dialog::Select {
        refusal, new_code, ..
    }) = &app.dialog
    else {
        panic!("{:?}", app.dialog)
    };
    assert_eq!(refusal, &None, "it passed");
    assert!(
        new_code.as_deref().unwrap().contains("1 line of new code"),
        "{new_code:?}"
    );
    assert!(
        press(&mut app, Key::Enter).is_empty(),
        "no reason, no choice"
    );
    press(&mut app, Key::Esc);
    // `F` with nothing selected does not select it silently.
    let fx = press(&mut app, Key::Char('F'));
    assert!(fx.is_empty(), "{fx:?}");
    assert!(app.dialog.is_none(), "{:?}", app.dialog);
    assert!(
        app.flash
            .as_deref()
            .unwrap_or("")
            .contains("select it with a reason first"),
        "{:?}",
        app.flash
    );
}

#[test]
fn compare_opens_on_the_best_ranked_other_candidate() {
    let mut app = fixture::app(3, true, false);
    let order: Vec<usize> = app
        .ranking
        .as_ref()
        .unwrap()
        .positions
        .iter()
        .map(|p| app.index_of(&p.candidate).unwrap())
        .collect();
    assert!(order.len() >= 2, "{order:?}");
    // Focused on another: compared with the pick.
    let other = (0..3).find(|i| *i != order[0]).unwrap();
    press_all(
        &mut app,
        &[Key::Char(char::from(b'1' + other as u8)), Key::Char('c')],
    );
    assert_eq!((app.focus, app.compare_b), (other, order[0]));
    // Focused on the pick: compared with its runner-up.
    press(&mut app, Key::Esc);
    press_all(
        &mut app,
        &[Key::Char(char::from(b'1' + order[0] as u8)), Key::Char('c')],
    );
    assert_eq!((app.focus, app.compare_b), (order[0], order[1]));
}

#[test]
fn e_is_never_escalate_and_evidence_both() {
    // On the dashboard `e` does nothing; `!` escalates.
    let mut app = fixture::app(3, true, false);
    press_all(&mut app, &[Key::Char('3'), Key::Char('e')]);
    assert!(app.dialog.is_none(), "{:?}", app.dialog);
    press(&mut app, Key::Char('!'));
    assert!(app.dialog.is_some());
}

#[test]
fn override_with_skipped_accepts_the_checks_that_never_ran_in_one_step() {
    let mut app = fixture::app(3, true, false);
    press_all(&mut app, &[Key::Char('2'), Key::Char('l'), Key::Char('o')]);
    let Some(Dialog::Override {
        check,
        left,
        with_skipped,
        ..
    }) = &app.dialog
    else {
        panic!("{:?}", app.dialog)
    };
    assert_eq!(check, "banned-patterns");
    assert!(!with_skipped);
    // The dialog says what else must be accepted: the other failed check
    // and the skipped `tests` guardrail.
    assert_eq!(left.failing, vec![(Layer::Guardrails, "build".to_string())]);
    assert_eq!(left.skipped, vec![(Layer::Guardrails, "tests".to_string())]);
    assert!(status_hints(&app).iter().any(|(k, _)| *k == "Tab"));
    type_text(&mut app, "dbg! is fine here");
    press(&mut app, Key::Tab);
    assert!(matches!(
        &app.dialog,
        Some(Dialog::Override {
            with_skipped: true,
            ..
        })
    ));
    let fx = press(&mut app, Key::Enter);
    let checks: Vec<(String, String)> = fx
        .iter()
        .map(|e| match e {
            Effect::Decide(d) => match &d.kind {
                DecisionKind::Override { check, .. } => (check.clone(), d.reason.clone()),
                k => panic!("{k:?}"),
            },
            e => panic!("{e:?}"),
        })
        .collect();
    assert_eq!(
        checks,
        vec![
            ("banned-patterns".into(), "dbg! is fine here".into()),
            ("tests".into(), "not run: dbg! is fine here".into())
        ]
    );
    // Still FAIL (build), and the column and the message say why.
    let c = &app.candidates[1];
    assert_eq!(
        c.effective,
        Some(rascal_core::model::verdict::Verdict::Fail)
    );
    assert_eq!(
        c.blockers.failing,
        vec![(Layer::Guardrails, "build".to_string())]
    );
    assert!(c.blockers.skipped.is_empty());
    assert!(
        app.flash
            .as_deref()
            .unwrap()
            .contains("still FAIL: 1 failing (guard build)"),
        "{:?}",
        app.flash
    );
    // Overriding the build too makes it pass: FAIL → PASS, layer ⊘.
    press(&mut app, Key::Char('o'));
    type_text(&mut app, "offline CI");
    press(&mut app, Key::Enter);
    let c = &app.candidates[1];
    assert_eq!(
        c.effective,
        Some(rascal_core::model::verdict::Verdict::Pass)
    );
    assert_eq!(c.status_text(), "PASS ⊘ (was FAIL)");
    assert_eq!(c.mark(Layer::Guardrails, &app.meta), Mark::Overridden);
}

#[test]
fn o_works_on_a_layer_that_was_skipped() {
    use rascal_core::model::event::RunEvent;
    use rascal_core::model::verdict::Report;
    let mut app = fixture::app(3, true, false);
    // hasty's later layers never ran because its guardrails failed.
    app.apply(
        &RunEvent::ReportLanded {
            candidate: "hasty".into(),
            report: Box::new(Report::skipped(
                Layer::Permissions,
                "permissions",
                "skipped: guardrails or permissions failed",
            )),
        },
        fixture::T0 + 12_500,
    );
    press_all(&mut app, &[Key::Char('2'), Key::Char('l'), Key::Char('l')]);
    assert_eq!(app.selected_layer(), Layer::Permissions);
    assert_eq!(
        app.candidates[1].mark(Layer::Permissions, &app.meta),
        Mark::Off
    );
    assert!(status_hints(&app).iter().any(|(k, _)| *k == "o"));
    press(&mut app, Key::Char('o'));
    let Some(Dialog::Override { layer, check, .. }) = &app.dialog else {
        panic!("o on a skipped layer opens the override: {:?}", app.flash)
    };
    assert_eq!(
        (*layer, check.as_str()),
        (Layer::Permissions, "permissions")
    );
    type_text(&mut app, "paths were reviewed by hand");
    let fx = press(&mut app, Key::Enter);
    assert_eq!(fx.len(), 1);
    assert_eq!(
        app.candidates[1].mark(Layer::Permissions, &app.meta),
        Mark::Overridden
    );
}

#[test]
fn escalate_requires_a_note_and_shows_escalated_with_it() {
    let mut app = fixture::app(3, true, false);
    press_all(&mut app, &[Key::Char('3'), Key::Char('!')]);
    let fx = press(&mut app, Key::Enter);
    assert!(fx.is_empty(), "an empty note is refused: {fx:?}");
    assert!(
        matches!(&app.dialog, Some(Dialog::Escalate { error: Some(e), .. }) if e.contains("note"))
    );
    type_text(&mut app, "   ");
    assert!(press(&mut app, Key::Enter).is_empty(), "blank is empty");
    type_text(&mut app, "edits CI");
    let fx = press(&mut app, Key::Enter);
    assert!(matches!(&fx[..], [Effect::Decide(d)] if d.kind == DecisionKind::Escalate));
    let c = &app.candidates[2];
    assert_eq!(c.state, rascal_core::model::state::State::Escalated);
    assert_eq!(c.status_text(), "ESCALATED");
    assert_eq!(
        c.escalated.as_ref().map(|(n, _)| n.as_str()),
        Some("edits CI")
    );
}

#[test]
fn f_previews_then_selects_and_finalizes_on_enter() {
    let mut app = fixture::app(3, true, false);
    assert!(
        dispatch(&fixture::app(3, false, false), Key::Char('F')).is_none(),
        "not while the run is live"
    );
    // Nothing selected: F offers the focused candidate.
    let fx = press(&mut app, Key::Char('F'));
    assert_eq!(fx, vec![Effect::PreviewFinalize("careful".into())]);
    let Some(Dialog::Finalize(d)) = &app.dialog else {
        panic!("{:?}", app.dialog)
    };
    assert!(d.select_first && d.refusal.is_none());
    let preview = rascal_engine::finalize::Preview {
        candidate: "careful".into(),
        branch: "rascal/x-r-1".into(),
        message: "feat: x".into(),
        pr_body: "a\nb\nc".into(),
    };
    update(&mut app, Action::FinalizePreviewed(Ok(preview.clone())));
    press_all(&mut app, &[Key::Char('j'), Key::Char('j'), Key::Char('j')]);
    let Some(Dialog::Finalize(d)) = &app.dialog else {
        panic!()
    };
    assert_eq!(d.scroll, 2, "scrolls the PR body, no further than its end");
    press(&mut app, Key::Char('p'));
    let fx = press(&mut app, Key::Enter);
    assert!(
        matches!(&fx[..], [Effect::Decide(d), Effect::Finalize { candidate, open_pr: true }]
            if d.kind == DecisionKind::Select && candidate == "careful"),
        "{fx:?}"
    );
    assert!(press(&mut app, Key::Enter).is_empty(), "busy: once only");
    // A refusal from finalize stays in the dialog.
    update(
        &mut app,
        Action::FinalizeDone(Err("candidate `careful`'s worktree changed".into())),
    );
    let Some(Dialog::Finalize(d)) = &app.dialog else {
        panic!()
    };
    assert!(!d.busy && d.error.as_deref().unwrap().contains("changed"));
    // Esc cancels.
    press(&mut app, Key::Esc);
    assert!(app.dialog.is_none());
}

#[test]
fn f_on_a_failed_candidate_refuses_in_the_dialog() {
    let mut app = fixture::app(3, true, false);
    press_all(&mut app, &[Key::Char('2'), Key::Char('F')]);
    let fx = press(&mut app, Key::Enter);
    assert!(fx.is_empty(), "{fx:?}");
    let Some(Dialog::Finalize(d)) = &app.dialog else {
        panic!()
    };
    assert!(
        d.error.as_deref().unwrap().contains("did not pass"),
        "{:?}",
        d.error
    );
}

#[test]
fn a_retry_restarts_the_attempt_clock_not_the_run_and_a_replay_shows_the_same() {
    use rascal_core::model::event::RunEvent;
    let retry = [
        (
            RunEvent::AttemptStarted {
                candidate: "hasty".into(),
                attempt: 2,
                feedback: "fix the build".into(),
            },
            fixture::T0 + 80_000,
        ),
        (
            RunEvent::CandidateStarted {
                candidate: "hasty".into(),
                command: "agent".into(),
            },
            fixture::T0 + 80_000,
        ),
    ];
    let fold = |now: i64| {
        let mut app = fixture::app(3, true, false);
        for (ev, at) in retry.iter().cloned() {
            update(&mut app, Action::Run(Box::new(ev), at));
        }
        update(&mut app, Action::Tick(now));
        app
    };
    let app = fold(fixture::T0 + 85_000);
    let c = &app.candidates[1];
    assert_eq!(c.attempt, 2);
    assert_eq!(c.elapsed_ms(app.now_ms), Some(5_000), "from the retry");
    let (now, all) = c.agent_ms(app.now_ms);
    assert_eq!(now, Some(5_000));
    assert_eq!(
        all,
        5_000 + 2_300,
        "this attempt's agent and the first one's"
    );
    assert_eq!(
        app.summary.wall.length_ms(app.now_ms),
        Some(85_000),
        "the run's wall clock"
    );
    assert_eq!(c.status_text(), "RUNNING · agent");
    // The same journal replayed later (a reattach): the finished
    // candidates' clocks are what they were, not restarted.
    let later = fold(fixture::T0 + 600_000);
    assert_eq!(
        later.candidates[0].elapsed_ms(later.now_ms),
        app.candidates[0].elapsed_ms(app.now_ms)
    );
}

#[test]
fn layer_detail_opens_on_the_first_failed_check() {
    let mut app = fixture::app(3, true, false);
    // `hasty` failed guardrails (banned-patterns first, then build); its
    // agent layer, where the strip starts, passed.
    press_all(&mut app, &[Key::Char('2'), Key::Enter]);
    assert_eq!(app.screen, Screen::Detail);
    assert_eq!(app.selected_layer(), Layer::Guardrails);
    let rows = app.detail_rows();
    let (ri, _) = rows[app.detail_sel];
    let c = app.focused().unwrap();
    assert_eq!(c.reports[ri].check, "banned-patterns");
    assert_eq!(c.reports[ri].status, Status::Fail);
}

#[test]
fn jumping_out_asks_the_shell_and_a_hazard_needs_a_y() {
    use rascal_tui::jump::{CopyWhat, JumpKind};
    let mut app = fixture::app(2, true, false);
    let fx = press_all(&mut app, &[Key::Char('1'), Key::Char('E')]);
    let Some(Effect::Jump(j)) = fx.first() else {
        panic!("E asks the shell to jump: {fx:?}")
    };
    assert_eq!(j.kind, JumpKind::Editor);
    assert!(!j.confirmed, "the shell looks for hazards first");
    assert_eq!(j.dir.to_string_lossy(), app.candidates[0].info.worktree);

    // The shell found a planted fsmonitor: a dialog; Enter does not open.
    update(
        &mut app,
        Action::JumpHazards(j.clone(), vec![".git/config: core.fsmonitor = x".into()]),
    );
    assert!(matches!(app.dialog, Some(Dialog::Hazards { .. })));
    assert!(press(&mut app, Key::Enter).is_empty());
    assert!(app.dialog.is_some());
    let fx = press(&mut app, Key::Char('y'));
    assert!(
        matches!(fx.as_slice(), [Effect::Jump(j)] if j.confirmed && j.kind == JumpKind::Editor),
        "{fx:?}"
    );
    assert!(app.dialog.is_none());

    // S is the shell; y asks what to copy.
    let fx = press(&mut app, Key::Char('S'));
    assert!(matches!(fx.as_slice(), [Effect::Jump(j)] if j.kind == JumpKind::Shell));
    press(&mut app, Key::Char('y'));
    assert!(matches!(app.dialog, Some(Dialog::Copy { .. })));
    let fx = press(&mut app, Key::Char('t'));
    assert!(
        matches!(
            fx.as_slice(),
            [Effect::Copy {
                what: CopyWhat::Tree,
                ..
            }]
        ),
        "{fx:?}"
    );
}

#[test]
fn slash_searches_the_diff_n_and_shift_n_step_through_matches_esc_clears() {
    let mut app = diff_open();
    press(&mut app, Key::Char('/'));
    // Typed keys are the query, not commands (`s` would go side by side).
    type_text(&mut app, "shout");
    assert!(!app.diff_view.side_by_side);
    assert!(status_hints(&app).contains(&("Enter", "find")));
    press(&mut app, Key::Enter);
    let line = |app: &App| {
        let d = &app.diffs["careful"];
        d.files[app.diff_view.file].lines[app.diff_view.scroll]
            .text
            .clone()
    };
    // The first match below the top: the new function's line.
    assert_eq!(line(&app), "pub fn shout(name: &str) -> String {");
    let first = (app.diff_view.file, app.diff_view.scroll);
    assert!(status_hints(&app).contains(&("n/N", "next/prev match")));
    assert!(!status_hints(&app).iter().any(|(k, _)| *k == "n/p"));
    press(&mut app, Key::Char('n'));
    let second = (app.diff_view.file, app.diff_view.scroll);
    assert!(second > first, "{second:?} after {first:?}");
    assert!(line(&app).to_lowercase().contains("shout"));
    press(&mut app, Key::Char('N'));
    assert_eq!((app.diff_view.file, app.diff_view.scroll), first);
    // Before the first: wraps to the last (in README.md).
    press(&mut app, Key::Char('N'));
    assert_eq!(app.diff_view.file, 1, "wrapped to the last match");
    assert_eq!(app.flash.as_deref(), Some("search wrapped around"));
    // Esc clears the search and stays; `n` is the next hunk again.
    press(&mut app, Key::Esc);
    assert!(app.search.is_none());
    assert_eq!(app.screen, Screen::Diff);
    assert!(status_hints(&app).iter().any(|(k, _)| *k == "n/p"));
    press(&mut app, Key::Esc);
    assert_eq!(app.screen, Screen::Dashboard);
}

#[test]
fn arrows_and_h_l_scroll_diffs_sideways_but_pick_layers_on_the_dashboard() {
    let mut app = fixture::app(3, true, false);
    press(&mut app, Key::Char('l'));
    assert_eq!(
        app.layer_sel, 1,
        "l selects the next layer on the dashboard"
    );
    assert_eq!(app.hscroll, 0);
    press(&mut app, Key::Char('d'));
    update(
        &mut app,
        Action::DiffLoaded {
            candidate: "careful".into(),
            text: DIFF.into(),
        },
    );
    press(&mut app, Key::Right);
    assert_eq!(app.hscroll, 8);
    press(&mut app, Key::Char('l'));
    assert_eq!(app.hscroll, 16);
    assert_eq!(app.layer_sel, 1, "l scrolls in the diff, the layer stays");
    for _ in 0..50 {
        press(&mut app, Key::Right);
    }
    let widest = app.diffs["careful"]
        .files
        .iter()
        .flat_map(|f| &f.lines)
        .map(|l| l.text.chars().count())
        .max()
        .unwrap();
    assert!(app.hscroll < widest, "no scrolling past every line's end");
    press(&mut app, Key::Char('h'));
    press(&mut app, Key::Left);
    for _ in 0..50 {
        press(&mut app, Key::Char('h'));
    }
    assert_eq!(app.hscroll, 0);
}

/// A segment of `lines` lines of `candidate`'s log landing.
fn segment(app: &mut App, candidate: &str, offset: u64, lines: u64) {
    let seg = rascal_core::model::log::Segment {
        candidate: candidate.into(),
        stream: rascal_core::model::log::Stream::Stdout,
        file: format!("runs/r/{candidate}/agent.log"),
        offset,
        bytes: lines * 10,
        lines,
        sha256: String::new(),
        own: 0,
    };
    let ev = rascal_core::model::event::RunEvent::LogSegment(seg);
    update(app, Action::Run(Box::new(ev), 0));
}

#[test]
fn the_filter_searches_the_whole_log_file_and_loads_matches_as_the_view_moves() {
    let mut app = fixture::app(2, true, false);
    let (a, b) = (
        app.candidates[0].info.id.clone(),
        app.candidates[1].info.id.clone(),
    );
    segment(&mut app, &a, 0, 50_000);
    segment(&mut app, &b, 0, 70);
    press(&mut app, Key::Char('/'));
    type_text(&mut app, "needle");
    let fx = press(&mut app, Key::Enter);
    assert_eq!(
        fx,
        vec![Effect::SearchLog {
            candidate: a.clone(),
            query: "needle".into(),
            from: 0,
            upto: 50_000,
            ring_from: app.candidates[0].logs.ring_from(),
        }]
    );
    // The result: 1,000 matches, the last 400 of them read.
    let hits: Vec<u64> = (0..1_000).map(|i| i * 50).collect();
    let lines: Vec<_> = (600..1_000)
        .map(|i| {
            (
                rascal_core::model::log::Stream::Stdout,
                format!("needle {i}"),
                None,
            )
        })
        .collect();
    let fx = update(
        &mut app,
        Action::LogSearched {
            candidate: a.clone(),
            query: "needle".into(),
            from: 0,
            upto: 50_000,
            ring_from: 0,
            hits,
            more: 0,
            first: 600,
            lines,
        },
    );
    assert!(
        fx.is_empty(),
        "the newest matches came with the result: {fx:?}"
    );
    assert!(app.found_shown(0));
    // `g`: the first match, which is not loaded: its lines are asked for.
    let fx = press(&mut app, Key::Char('g'));
    match fx.as_slice() {
        [Effect::LoadFound {
            candidate,
            first: 0,
            lines,
            ..
        }] => {
            assert_eq!(candidate, &a);
            assert_eq!(lines[..3], [0, 50, 100]);
        }
        other => panic!("{other:?}"),
    }
    // A stale answer (another query) changes nothing.
    update(
        &mut app,
        Action::FoundLoaded {
            candidate: a.clone(),
            query: "other".into(),
            first: 0,
            lines: vec![(rascal_core::model::log::Stream::Stdout, "x".into(), None)],
        },
    );
    assert!(app.candidates[0].found.as_ref().unwrap().entry(0).is_none());
    // The other candidate gets its own search when it is focused.
    let fx = press(&mut app, Key::Tab);
    assert!(
        matches!(fx.as_slice(), [Effect::SearchLog { candidate, upto: 70, .. }] if candidate == &b),
        "{fx:?}"
    );
    // Esc in the prompt clears the filter and every search.
    press_all(&mut app, &[Key::Char('/'), Key::Esc]);
    assert!(app.filter.is_none());
    assert!(app.candidates.iter().all(|c| c.found.is_none()));
}

/// The compare view's `e`: the evidence pane in place of the A-vs-B diff;
/// there `Enter` shows the agreement matrix's first test (read by the
/// shell from its author's change), `n`/`p` the next and previous one
/// (wrapping), Esc closes it; without the pane `Enter` still selects.
#[test]
fn the_evidence_pane_opens_each_tests_source_and_enter_still_selects_without_it() {
    use rascal_core::model::agreement::{Agreement, Cell, CrossTest};
    let mut app = fixture::app(3, true, false);
    let test = |author: &str, name: &str| CrossTest {
        author: author.into(),
        name: name.into(),
    };
    app.ranking.as_mut().expect("the fixture ranks").agreement = Some(Agreement {
        candidates: vec!["careful".into(), "hasty".into()],
        tests: vec![test("careful", "tests::a"), test("hasty", "tests::b")],
        cells: vec![vec![Cell::Passed; 2], vec![Cell::Passed, Cell::Failed]],
        runs: 2,
        reused: 0,
        skipped: None,
        notes: Vec::new(),
        sources: Vec::new(),
        witnesses: Vec::new(),
    });
    press(&mut app, Key::Char('c'));
    assert_eq!(app.screen, Screen::Compare);
    press(&mut app, Key::Char('e'));
    assert!(app.evidence.is_some());
    let fx = press(&mut app, Key::Enter);
    assert_eq!(
        fx,
        vec![Effect::LoadTestSource {
            index: 0,
            author: "careful".into(),
            name: "tests::a".into()
        }]
    );
    assert!(matches!(
        app.dialog,
        Some(Dialog::TestSource {
            index: 0,
            found: None,
            ..
        })
    ));
    let src = rascal_tui::test_source::TestSource {
        path: "src/lib.rs".into(),
        line: 9,
        lines: vec!["#[test]".into(), "fn a() {}".into()],
    };
    // An answer for another test than the one shown is dropped.
    update(
        &mut app,
        Action::TestSourceLoaded {
            index: 1,
            found: Err("late".into()),
        },
    );
    assert!(matches!(
        app.dialog,
        Some(Dialog::TestSource { found: None, .. })
    ));
    update(
        &mut app,
        Action::TestSourceLoaded {
            index: 0,
            found: Ok(src.clone()),
        },
    );
    assert!(
        matches!(&app.dialog, Some(Dialog::TestSource { found: Some(Ok(s)), .. }) if *s == src)
    );
    let fx = press(&mut app, Key::Char('n'));
    assert!(
        matches!(&fx[..], [Effect::LoadTestSource { index: 1, author, .. }] if author == "hasty")
    );
    let fx = press(&mut app, Key::Char('n'));
    assert!(
        matches!(&fx[..], [Effect::LoadTestSource { index: 0, .. }]),
        "wraps"
    );
    let fx = press(&mut app, Key::Char('p'));
    assert!(matches!(&fx[..], [Effect::LoadTestSource { index: 1, .. }]));
    press(&mut app, Key::Esc);
    assert!(app.dialog.is_none());
    assert_eq!(app.screen, Screen::Compare, "Esc closes the source only");
    // Scrolling the pane stops at its last line.
    press_all(&mut app, &[Key::Char('G'), Key::Char('j')]);
    let at_end = app.evidence.unwrap().scroll;
    assert!(at_end > 0);
    press(&mut app, Key::Char('j'));
    assert_eq!(app.evidence.unwrap().scroll, at_end);
    press(&mut app, Key::Char('e'));
    assert!(app.evidence.is_none());
    press(&mut app, Key::Enter);
    assert!(matches!(app.dialog, Some(Dialog::Select { .. })));
}

#[test]
fn capital_c_in_compare_combines_when_configured_and_says_how_when_not() {
    // Off: a line saying how to configure it, nothing decided.
    let mut app = fixture::app(3, true, false);
    press(&mut app, Key::Char('c'));
    assert_eq!(app.screen, Screen::Compare);
    assert!(
        status_hints(&app).iter().any(|(k, _)| *k == "C"),
        "{:?}",
        status_hints(&app)
    );
    let fx = press(&mut app, Key::Char('C'));
    assert!(fx.is_empty(), "{fx:?}");
    let flash = app.flash.clone().unwrap_or_default();
    assert!(
        flash.contains("combining is off")
            && flash.contains("combine: { agent: NAME, top: 3 }")
            && flash.contains(".rascal/verification.yaml"),
        "{flash}"
    );
    // On, after the run: the combine decision goes to the session, and the
    // dashboard is where the new candidate will stream.
    let mut app = fixture::app(3, true, false);
    app.meta.combine = true;
    press(&mut app, Key::Char('c'));
    let fx = press(&mut app, Key::Char('C'));
    let decided: Vec<_> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Decide(d) => Some(d),
            _ => None,
        })
        .collect();
    assert_eq!(decided.len(), 1, "{fx:?}");
    assert!(
        matches!(decided[0].kind, DecisionKind::Combine { .. }),
        "{decided:?}"
    );
    assert_eq!(decided[0].who, "Ada Lovelace <ada@example.com>");
    assert_eq!(app.screen, Screen::Dashboard);
    // While candidates run: not yet.
    let mut app = fixture::app(3, false, false);
    app.meta.combine = true;
    press(&mut app, Key::Char('c'));
    let fx = press(&mut app, Key::Char('C'));
    assert!(fx.is_empty(), "{fx:?}");
    assert!(
        app.flash
            .clone()
            .unwrap_or_default()
            .contains("still going"),
        "{:?}",
        app.flash
    );
}
