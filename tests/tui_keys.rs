//! Key handling as state transitions: keys in (through the command table),
//! state and effects out. No terminal involved.

use rascal::model::verdict::Layer;
use rascal::tui::app::{Dialog, Mark, Screen, STRIP};
use rascal::tui::commands::{dispatch, status_hints};
use rascal::tui::fixture::{self, DIFF};
use rascal::tui::update::{update, Effect};
use rascal::tui::{Action, App, DecisionKind, Key};

fn press(app: &mut App, k: Key) -> Vec<Effect> {
    match dispatch(app, k) {
        Some(a) => update(app, a),
        None => Vec::new(),
    }
}

fn press_all(app: &mut App, ks: &[Key]) -> Vec<Effect> {
    ks.iter().flat_map(|k| press(app, *k)).collect()
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
    // rows: secrets, banned-patterns, its issue, …
    press_all(&mut app, &[Key::Char('j'), Key::Char('j')]);
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
    let line = &d.files[app.diff_view.file].lines[app.diff_view.scroll];
    assert_eq!(line.new, Some(10));
    assert!(line.text.contains("dbg!"));
    press(&mut app, Key::Esc);
    assert_eq!(
        app.screen,
        Screen::Detail,
        "Esc returns to the layer detail"
    );
}

#[test]
fn diff_keys_jump_hunks_and_files_and_toggle_side_by_side() {
    let mut app = fixture::app(3, true, false);
    press(&mut app, Key::Char('d'));
    update(
        &mut app,
        Action::DiffLoaded {
            candidate: "careful".into(),
            text: DIFF.into(),
        },
    );
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
    let second = rascal::model::decision::Decision::new(
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
    let skipped = rascal::model::decision::Decision::new(
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
fn override_is_not_offered_on_a_passing_layer() {
    let mut app = fixture::app(3, true, false);
    assert!(dispatch(&app, Key::Char('o')).is_none());
    assert!(!status_hints(&app).iter().any(|(k, _)| *k == "o"));
    press(&mut app, Key::Char('2'));
    press(&mut app, Key::Char('l'));
    assert!(status_hints(&app).iter().any(|(k, _)| *k == "o"));
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
    press_all(&mut app, &[Key::Char('3'), Key::Char('e')]);
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
fn help_lists_every_command_of_the_table() {
    let entries = rascal::tui::draw::help::entries();
    for c in rascal::tui::commands::COMMANDS {
        assert!(
            entries
                .iter()
                .any(|(_, k, d)| *k == c.label && *d == c.desc),
            "{}",
            c.desc
        );
    }
    let mut app = fixture::app(3, true, false);
    press(&mut app, Key::Char('?'));
    assert!(app.help);
    press(&mut app, Key::Char('x'));
    assert!(!app.help, "any key closes help");
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
    update(&mut app, Action::Resize(40, 20));
    let area = ratatui::layout::Rect::new(0, 0, 40, 20);
    let lay = rascal::tui::draw::dashboard::layout_of(&app, area);
    let (i, r) = lay.tabs[1];
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
        &rascal::model::event::RunEvent::Log {
            candidate: id,
            stream: rascal::exec::runner::Stream::Stdout,
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
