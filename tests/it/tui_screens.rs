//! Snapshot tests of every TUI screen and dialog, rendered on ratatui's
//! TestBackend from fixed state at two terminal sizes, plus NO_COLOR.

use crate::common::fixture::{self, DIFF};
use rascal_tui::update::update;
use rascal_tui::{Action, App, Key};
use ratatui::backend::TestBackend;
use ratatui::style::Modifier;
use ratatui::Terminal;

const SIZES: [(u16, u16); 2] = [(200, 50), (100, 30)];

fn terminal(app: &App, w: u16, h: u16) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| rascal_tui::draw::draw(f, app)).unwrap();
    t
}

fn text(t: &Terminal<TestBackend>) -> String {
    let buf = t.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        for x in 0..buf.area.width {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn keys(app: &mut App, ks: &[Key]) {
    for k in ks {
        if let Some(a) = rascal_tui::commands::dispatch(app, *k) {
            update(app, a);
        }
    }
}

fn type_text(app: &mut App, s: &str) {
    for c in s.chars() {
        keys(app, &[Key::Char(c)]);
    }
}

/// Each screen: a name and how to get there from the finished fixture.
type Setup = Box<dyn Fn(&mut App)>;

fn screens() -> Vec<(&'static str, Setup)> {
    vec![
        ("dashboard", Box::new(|_| {})),
        (
            "detail_guardrails_hasty",
            Box::new(|a| {
                keys(
                    a,
                    &[Key::Char('2'), Key::Char('l'), Key::Enter, Key::Char('j')],
                )
            }),
        ),
        (
            "detail_off_layer",
            Box::new(|a| {
                keys(
                    a,
                    &[Key::Char('l'), Key::Char('l'), Key::Char('l'), Key::Enter],
                )
            }),
        ),
        (
            "diff_unified",
            Box::new(|a| {
                keys(a, &[Key::Char('2'), Key::Char('d')]);
                update(
                    a,
                    Action::DiffLoaded {
                        candidate: "hasty".into(),
                        text: DIFF.into(),
                    },
                );
            }),
        ),
        (
            "diff_side_by_side",
            Box::new(|a| {
                keys(a, &[Key::Char('2'), Key::Char('d'), Key::Char('s')]);
                update(
                    a,
                    Action::DiffLoaded {
                        candidate: "hasty".into(),
                        text: DIFF.into(),
                    },
                );
            }),
        ),
        (
            "compare",
            Box::new(|a| {
                keys(a, &[Key::Char('c')]);
                update(
                    a,
                    Action::CompareLoaded {
                        a: "careful".into(),
                        b: "hasty".into(),
                        text: fixture::COMPARE_CAREFUL_HASTY.into(),
                    },
                );
            }),
        ),
        (
            "diff_unreadable",
            Box::new(|a| {
                keys(a, &[Key::Char('2'), Key::Char('d')]);
                update(
                    a,
                    Action::DiffUnreadable {
                        candidate: "hasty".into(),
                        why: rascal_engine::changes::GONE.into(),
                    },
                );
            }),
        ),
        (
            "compare_evidence",
            Box::new(|a| keys(a, &[Key::Char('c'), Key::Char('e')])),
        ),
        (
            "compare_test_source",
            Box::new(|a| {
                use rascal_core::model::agreement::{Agreement, Cell, CrossTest};
                a.ranking.as_mut().unwrap().agreement = Some(Agreement {
                    candidates: vec!["careful".into(), "hasty".into()],
                    tests: vec![CrossTest {
                        author: "careful".into(),
                        name: "tests::shouts".into(),
                    }],
                    cells: vec![vec![Cell::Passed], vec![Cell::Failed]],
                    runs: 1,
                    reused: 0,
                    skipped: None,
                    notes: Vec::new(),
                    sources: Vec::new(),
                    witnesses: Vec::new(),
                });
                keys(a, &[Key::Char('c'), Key::Char('e'), Key::Enter]);
                update(
                    a,
                    Action::TestSourceLoaded {
                        index: 0,
                        found: Ok(rascal_tui::test_source::TestSource {
                            path: "src/lib.rs".into(),
                            line: 24,
                            lines: vec![
                                "    #[test]".into(),
                                "    fn shouts() {".into(),
                                "        assert_eq!(shout(\"Ada\"), \"HELLO, ADA!\");".into(),
                                "    }".into(),
                            ],
                        }),
                    },
                );
            }),
        ),
        ("help", Box::new(|a| keys(a, &[Key::Char('?')]))),
        (
            "dialog_override",
            Box::new(|a| {
                keys(a, &[Key::Char('2'), Key::Char('l'), Key::Char('o')]);
                type_text(a, "flaky offline build");
            }),
        ),
        (
            "dialog_override_needs_reason",
            Box::new(|a| {
                keys(
                    a,
                    &[Key::Char('2'), Key::Char('l'), Key::Char('o'), Key::Enter],
                )
            }),
        ),
        (
            "dialog_escalate",
            Box::new(|a| {
                keys(a, &[Key::Char('3'), Key::Char('!')]);
                type_text(a, "touches CI");
            }),
        ),
        (
            "dialog_retry",
            Box::new(|a| keys(a, &[Key::Char('2'), Key::Char('r')])),
        ),
        (
            "dialog_select",
            Box::new(|a| keys(a, &[Key::Char('c'), Key::Enter])),
        ),
        (
            "dialog_override_with_skipped",
            Box::new(|a| {
                keys(a, &[Key::Char('2'), Key::Char('l'), Key::Char('o')]);
                type_text(a, "flaky offline build");
                keys(a, &[Key::Tab]);
            }),
        ),
        (
            "dialog_escalate_needs_note",
            Box::new(|a| keys(a, &[Key::Char('3'), Key::Char('!'), Key::Enter])),
        ),
        (
            "escalated_column",
            Box::new(|a| {
                keys(a, &[Key::Char('3'), Key::Char('!')]);
                type_text(a, "edits CI: needs an owner's eye");
                keys(a, &[Key::Enter]);
            }),
        ),
        (
            "dialog_select_fail",
            Box::new(|a| {
                keys(a, &[Key::Char('2'), Key::Char('c'), Key::Enter, Key::Enter]);
            }),
        ),
        (
            "dialog_finalize",
            Box::new(|a| {
                keys(a, &[Key::Char('F')]);
                update(
                    a,
                    Action::FinalizePreviewed(Ok(rascal_engine::finalize::Preview {
                        candidate: "careful".into(),
                        branch: "rascal/add-a-shout-name-function-r-20270115-1a2b".into(),
                        message: "feat: add shout()\n\nRascal-Run: r-20270115-1a2b\n".into(),
                        pr_body: (1..=60)
                            .map(|i| format!("line {i} of the PR body"))
                            .collect::<Vec<_>>()
                            .join("\n"),
                    })),
                );
                keys(a, &[Key::Char('j'), Key::Char('j'), Key::Char('p')]);
            }),
        ),
        (
            "header_finalized",
            Box::new(|a| {
                update(
                    a,
                    Action::Run(
                        Box::new(rascal_core::model::event::RunEvent::DecisionRecorded {
                            decision: rascal_core::model::decision::Decision::new(
                                Some("careful"),
                                rascal_tui::DecisionKind::Select,
                                "Ada Lovelace <ada@example.com>",
                                "",
                            ),
                        }),
                        fixture::T0 + 13_000,
                    ),
                );
                update(
                    a,
                    Action::Run(
                        Box::new(rascal_core::model::event::RunEvent::Finalized(
                            rascal_core::model::event::Finalization {
                                candidate: "careful".into(),
                                branch: "rascal/add-a-shout-name-function-r-20270115-1a2b".into(),
                                commit: "3f2a1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c".into(),
                                title: "feat: add shout()".into(),
                                pr_body: "/tmp/pr_body.md".into(),
                                pushed_to: None,
                                pr_command: vec!["gh".into()],
                                pr_opened: false,
                            },
                        )),
                        fixture::T0 + 14_000,
                    ),
                );
            }),
        ),
        (
            "overridden_mark",
            Box::new(|a| {
                keys(a, &[Key::Char('2'), Key::Char('l'), Key::Char('o')]);
                type_text(a, "known flake");
                // With skipped: its `tests` guardrail never ran.
                keys(a, &[Key::Tab, Key::Enter]);
                // hasty failed two guardrails: the layer is ⊘ only once
                // both are overridden (the run summary's rule).
                let covered: Vec<String> = a
                    .decisions
                    .iter()
                    .filter_map(|d| match &d.kind {
                        rascal_core::model::decision::DecisionKind::Override { check, .. } => {
                            Some(check.clone())
                        }
                        _ => None,
                    })
                    .collect();
                let other = ["banned-patterns", "build"]
                    .into_iter()
                    .find(|c| !covered.iter().any(|x| x == c))
                    .unwrap();
                a.apply_decision(&rascal_core::model::decision::Decision::new(
                    Some("hasty"),
                    rascal_core::model::decision::DecisionKind::Override {
                        layer: rascal_core::model::verdict::Layer::Guardrails,
                        check: other.into(),
                        rule: None,
                    },
                    "Ada Lovelace <ada@example.com>",
                    "known flake",
                ));
            }),
        ),
    ]
}

#[test]
fn every_screen_and_dialog_at_two_sizes() {
    for (name, go) in screens() {
        for (w, h) in SIZES {
            let mut app = fixture::app(3, true, false);
            go(&mut app);
            let t = terminal(&app, w, h);
            insta::assert_snapshot!(format!("{name}_{w}x{h}"), text(&t));
        }
    }
}

/// Issue 31, item 9: `l` (leave agents running) is offered only in a run
/// with docker agents, and names the run to attach to.
#[test]
fn the_quit_dialog_offers_to_leave_agents_running_only_with_docker_agents() {
    let mut app = fixture::app(3, false, false);
    keys(&mut app, &[Key::Char('q')]);
    let plain = text(&terminal(&app, 200, 50));
    assert!(plain.contains("stop them and quit"), "{plain}");
    assert!(!plain.contains("leave docker agents"), "{plain}");
    let mut app = fixture::app(3, false, false);
    app.meta.detachable = true;
    keys(&mut app, &[Key::Char('q')]);
    let docker = text(&terminal(&app, 200, 50));
    let run = app.run.clone();
    assert!(
        docker.contains(&format!(
            "leave docker agents running (rascal attach {run} later)"
        )),
        "{docker}"
    );
}

#[test]
fn live_run_dialogs_and_spinners() {
    let mut app = fixture::app(3, false, false);
    insta::assert_snapshot!("dashboard_running_200x50", text(&terminal(&app, 200, 50)));
    keys(&mut app, &[Key::Char('q')]);
    insta::assert_snapshot!("dialog_quit_200x50", text(&terminal(&app, 200, 50)));
    update(&mut app, Action::Back);
    keys(&mut app, &[Key::Char('2'), Key::Char('x')]);
    insta::assert_snapshot!("dialog_cancel_100x30", text(&terminal(&app, 100, 30)));
}

#[test]
fn narrow_terminals_use_a_grid_then_tabs() {
    let app = fixture::app(8, true, false);
    insta::assert_snapshot!("dashboard_8_grid_140x40", text(&terminal(&app, 140, 40)));
    insta::assert_snapshot!("dashboard_8_tabs_60x20", text(&terminal(&app, 60, 20)));
}

#[test]
fn no_color_has_no_colours_but_focus_and_selection_stay_visible() {
    for (w, h) in SIZES {
        let mut app = fixture::app(3, true, true);
        keys(&mut app, &[Key::Char('2')]);
        let t = terminal(&app, w, h);
        insta::assert_snapshot!(format!("dashboard_no_color_{w}x{h}"), text(&t));
        let buf = t.backend().buffer();
        let mut reversed = 0;
        for c in buf.content() {
            assert_eq!(
                c.fg,
                ratatui::style::Color::Reset,
                "a colour under NO_COLOR at {c:?}"
            );
            assert_eq!(c.bg, ratatui::style::Color::Reset);
            if c.modifier.contains(Modifier::REVERSED) {
                reversed += 1;
            }
        }
        assert!(reversed > 0, "focus/selection must show as reverse video");
    }
}

#[test]
fn control_bytes_from_agents_render_as_carets() {
    let app = fixture::app(3, true, false);
    let s = text(&terminal(&app, 200, 50));
    assert!(
        s.contains("a NUL byte ^@ and a screen clear ^[[2J stay visible"),
        "{s}"
    );
    assert!(
        s.contains("plan: add `shout`"),
        "ANSI colour codes are not shown as text"
    );
}

/// The fixture's diff with one added line too long for any of the sizes,
/// so the view cuts it with `›`.
fn wide_diff() -> String {
    DIFF.replacen(
        "+pub fn shout(name: &str) -> String {\n",
        "+pub fn shout(name: &str) -> String {\n+    // Shouting is greeting in upper case: the same words, louder, for whoever is at the far end of a long corridor, across a noisy room, or on the other side of a very wide terminal.\n",
        1,
    )
}

/// A colour as the style dump writes it.
fn colour(c: ratatui::style::Color) -> String {
    match c {
        ratatui::style::Color::Reset => "-".into(),
        ratatui::style::Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        other => format!("{other:?}").to_lowercase(),
    }
}

/// Runs of cells of one row with the same colours and modifiers, as
/// `x0-x1 fg/bg +mods`, so a snapshot catches colour regressions.
fn style_runs(t: &Terminal<TestBackend>, y: u16) -> String {
    let buf = t.backend().buffer();
    let key = |x: u16| {
        let c = &buf[(x, y)];
        let mods = if c.modifier.is_empty() {
            String::new()
        } else {
            format!(" +{:?}", c.modifier)
                .replace("Modifier(", "")
                .replace(')', "")
                .replace(" | ", "+")
                .to_lowercase()
        };
        format!("{}/{}{mods}", colour(c.fg), colour(c.bg))
    };
    let mut runs = Vec::new();
    let mut start = 0;
    for x in 1..=buf.area.width {
        if x == buf.area.width || key(x) != key(start) {
            runs.push(format!("{start}-{} {}", x - 1, key(start)));
            start = x;
        }
    }
    runs.join(" | ")
}

/// The screen's text, then the style runs of the first row holding each
/// needle (and of the status bar).
fn text_and_styles(t: &Terminal<TestBackend>, needles: &[&str]) -> String {
    let screen = text(t);
    let rows: Vec<&str> = screen.lines().collect();
    let mut out = screen.clone();
    out.push_str("\n-- styles (fg/bg per run of columns) --\n");
    let last = rows.len() as u16 - 1;
    for n in needles {
        let y = rows
            .iter()
            .position(|r| r.contains(n))
            .unwrap_or_else(|| panic!("`{n}` not on screen:\n{screen}")) as u16;
        out.push_str(&format!("row {y} ({n}): {}\n", style_runs(t, y)));
    }
    out.push_str(&format!(
        "row {last} (status bar): {}\n",
        style_runs(t, last)
    ));
    out
}

#[test]
fn every_theme_at_80x24_and_200x50_with_its_colours() {
    for theme in rascal_tui::Theme::available() {
        for (w, h) in [(80u16, 24u16), (200, 50)] {
            let fresh = || {
                let mut app =
                    fixture::app_themed(3, true, rascal_tui::Theme::named(theme, false).unwrap());
                update(&mut app, Action::Resize(w, h));
                app
            };
            let app = fresh();
            let t = terminal(&app, w, h);
            insta::assert_snapshot!(
                format!("theme_{theme}_dashboard_{w}x{h}"),
                text_and_styles(
                    &t,
                    &[" rascal ", "1 careful", "careful (scripted)", "✓agent"]
                )
            );

            let mut app = fresh();
            keys(&mut app, &[Key::Char('2'), Key::Char('d')]);
            update(
                &mut app,
                Action::DiffLoaded {
                    candidate: "hasty".into(),
                    text: wide_diff(),
                },
            );
            let t = terminal(&app, w, h);
            let s = text(&t);
            assert!(s.contains('›'), "the long line is cut with ›:\n{s}");
            insta::assert_snapshot!(
                format!("theme_{theme}_diff_{w}x{h}"),
                text_and_styles(&t, &["Hello, {name}!!", "// Shouting", "pub fn greet"])
            );

            let mut app = fresh();
            keys(&mut app, &[Key::Char('?')]);
            let t = terminal(&app, w, h);
            insta::assert_snapshot!(
                format!("theme_{theme}_help_{w}x{h}"),
                text_and_styles(&t, &[" keys ", "everywhere", "Tab "])
            );
        }
    }
}

#[test]
fn added_and_removed_lines_are_tinted_to_the_edge_and_matches_marked() {
    let theme = rascal_tui::Theme::named("light", false).unwrap();
    let mut app = fixture::app_themed(3, true, theme.clone());
    keys(&mut app, &[Key::Char('2'), Key::Char('d')]);
    update(
        &mut app,
        Action::DiffLoaded {
            candidate: "hasty".into(),
            text: wide_diff(),
        },
    );
    let t = terminal(&app, 120, 30);
    let s = text(&t);
    let row = |needle: &str| s.lines().position(|l| l.contains(needle)).unwrap() as u16;
    let buf = t.backend().buffer();
    // The added line `+/// Greets someone loudly.` is tinted from its
    // marker to the border, past its text.
    let y = row("Greets someone loudly");
    let right_edge = buf.area.width - 2;
    assert_eq!(buf[(right_edge, y)].bg, theme.diff_add_line.bg.unwrap());
    let y = row("Hello, {name}!\")");
    assert_eq!(buf[(right_edge, y)].bg, theme.diff_del_line.bg.unwrap());
    // Context lines are not.
    let y = row("pub fn greet");
    assert_ne!(buf[(right_edge, y)].bg, theme.diff_add_line.bg.unwrap());

    // `/` search: the match is marked and the status bar says n/N.
    keys(&mut app, &[Key::Char('/')]);
    type_text(&mut app, "LOUDLY");
    keys(&mut app, &[Key::Enter]);
    assert!(app.flash.as_deref().unwrap_or("").contains("no match"));
    keys(&mut app, &[Key::Char('/')]);
    type_text(&mut app, "loudly");
    keys(&mut app, &[Key::Enter]);
    let t = terminal(&app, 120, 30);
    let s = text(&t);
    assert!(s.contains("/loudly"), "{s}");
    assert!(s.contains("match 1/1"), "{s}");
    assert!(s.contains(" n/N  next/prev match"), "{s}");
    let y = s
        .lines()
        .position(|l| l.contains("Greets someone loudly"))
        .unwrap() as u16;
    let x = s.lines().nth(y as usize).unwrap().find("loudly").unwrap();
    let x = s.lines().nth(y as usize).unwrap()[..x].chars().count() as u16;
    assert_eq!(
        t.backend().buffer()[(x, y)].bg,
        theme.search_match.bg.unwrap()
    );
}

/// The candidate's column says its network: the proxy's decisions seen in
/// the log while it runs, then what the agent's report says.
#[test]
fn each_column_says_its_network_live_then_from_the_report() {
    use rascal_core::model::event::RunEvent;
    use rascal_core::model::log::Stream;
    let mut app = fixture::app(2, false, true);
    let id = app.candidates[0].info.id.clone();
    let shown = |app: &App| text(&terminal(app, 200, 50));
    assert!(!shown(&app).contains("net "), "{}", shown(&app));
    for line in [
        "rascal: network: allowed api.anthropic.com:443 (1.2.3.4:443)",
        "rascal: network: refused evil.example:443: not on the allowlist",
        "rascal: network: refused 10.1.2.3:443: an IP address",
    ] {
        let ev = RunEvent::Log {
            candidate: id.clone(),
            stream: Stream::Stderr,
            text: line.into(),
            display: None,
        };
        update(&mut app, Action::Run(Box::new(ev), 0));
    }
    let screen = shown(&app);
    assert!(
        screen.contains("net so far · 1 allowed · 2 refused"),
        "{screen}"
    );

    let mut report = rascal_core::model::verdict::Report::new(
        rascal_core::model::verdict::Layer::Agent,
        "agent",
    );
    report.network = Some(Box::new(rascal_core::model::network::NetworkSummary {
        mode: "allowlist".into(),
        allow: vec!["api.anthropic.com".into(), "statsig.anthropic.com".into()],
        allowed: 4,
        refused: 3,
        opened: 4,
        on_refused: Default::default(),
        host_open: None,
    }));
    let ev = RunEvent::ReportLanded {
        candidate: id,
        report: Box::new(report),
    };
    update(&mut app, Action::Run(Box::new(ev), 0));
    let screen = shown(&app);
    assert!(
        screen.contains("net allowlist: api.anthropic.com +1 · 4 allowed · 3 refused"),
        "{screen}"
    );
    assert!(!screen.contains("net so far"), "{screen}");
}

/// Issue 31, item 6: Enter on an issue opens the diff with a few lines of
/// context above the issue's line, and the line marked `▶`.
#[test]
fn an_issue_jumped_to_is_marked_below_its_context() {
    let mut app = fixture::app(3, true, false);
    // hasty's guardrails: the detail opens on banned-patterns; `j` is its
    // issue (line 10 of src/lib.rs).
    keys(
        &mut app,
        &[
            Key::Char('2'),
            Key::Char('l'),
            Key::Enter,
            Key::Char('j'),
            Key::Enter,
        ],
    );
    update(
        &mut app,
        Action::DiffLoaded {
            candidate: "hasty".into(),
            text: DIFF.into(),
        },
    );
    let screen = text(&terminal(&app, 100, 30));
    let rows: Vec<&str> = screen.lines().collect();
    let marked: Vec<usize> = (0..rows.len()).filter(|&y| rows[y].contains('▶')).collect();
    assert_eq!(marked.len(), 1, "one line is marked:\n{screen}");
    let y = marked[0];
    assert!(
        rows[y].contains("dbg!") && rows[y].contains("  10"),
        "{screen}"
    );
    // The diff pane's first row is its border's next: the mark is below
    // the top by the context lines, which show the lines before it.
    let top = rows
        .iter()
        .position(|r| r.contains("hasty · src/lib.rs"))
        .expect("the diff pane")
        + 1;
    assert_eq!(
        y - top,
        rascal_tui::app::DiffView::CONTEXT,
        "context above the line:\n{screen}"
    );
    assert!(
        rows[y - 1].contains("   9"),
        "the line before it:\n{screen}"
    );
}

/// Issue 31, item 6: finalizing a candidate that did not pass says why
/// once, whole (wrapped in the dialog), and Enter adds what to do — not
/// the same reason a second time.
#[test]
fn a_refused_finalize_says_why_once_and_whole() {
    let mut app = fixture::app(3, true, false);
    keys(&mut app, &[Key::Char('2'), Key::Char('F')]);
    let why = app
        .candidates
        .iter()
        .find(|c| c.info.id == "hasty")
        .and_then(|c| c.select_refusal.clone())
        .expect("hasty did not pass");
    keys(&mut app, &[Key::Enter]);
    // Narrow enough that the reason takes two rows.
    let screen = text(&terminal(&app, 60, 30));
    let dialog: Vec<&str> = screen
        .lines()
        .map(|l| l.trim_matches(|c: char| c == '│' || c == ' '))
        .collect();
    let joined = dialog.join(" ");
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let said = format!("{why}: it did not pass");
    assert!(
        words(&joined).contains(&words(&said)),
        "the whole reason:\n{screen}"
    );
    assert_eq!(
        words(&joined).matches(&words(&why)).count(),
        1,
        "said once:\n{screen}"
    );
    assert!(
        words(&joined).contains("finalize refuses a candidate that did not pass"),
        "{screen}"
    );
}

#[test]
fn a_candidate_that_declared_the_task_impossible_shows_it_and_its_reason() {
    use rascal_core::model::event::RunEvent;
    let mut app = fixture::app(2, false, true);
    let reason = "test_adds contradicts the instruction\nsee tests/test_calc.py line 4";
    for ev in [
        RunEvent::DeclaredImpossible {
            candidate: "hasty".into(),
            reason: reason.into(),
        },
        RunEvent::ReportLanded {
            candidate: "hasty".into(),
            report: Box::new(rascal_core::model::impossible::report(reason)),
        },
        RunEvent::CandidateFinished {
            candidate: "hasty".into(),
            verdict: rascal_core::model::verdict::Verdict::Fail,
            reason: Some(rascal_core::model::impossible::verdict_reason(reason)),
            files: 0,
            lines: 0,
            tree: None,
            cancelled: false,
        },
    ] {
        update(&mut app, Action::Run(Box::new(ev), fixture::T0 + 14_000));
    }
    let dash = text(&terminal(&app, 200, 50));
    assert!(dash.contains("IMPOSSIBLE"), "{dash}");
    assert!(
        dash.contains("⚐ impossible: test_adds contradicts the instruction"),
        "{dash}"
    );
    // Its detail: the declaration's check, with the whole reason below.
    app.focus = app
        .candidates
        .iter()
        .position(|c| c.info.id == "hasty")
        .unwrap();
    app.layer_sel = 0;
    app.screen = rascal_tui::app::Screen::Detail;
    let c = app.focused().unwrap();
    app.detail_sel = app
        .detail_rows()
        .iter()
        .position(|(ri, ii)| ii.is_none() && c.reports[*ri].check == "impossible")
        .unwrap();
    let detail = text(&terminal(&app, 200, 50));
    assert!(detail.contains("see tests/test_calc.py line 4"), "{detail}");
}

/// Issue 31, item 6: why a check could not run is read whole — cut to its
/// row while another row is selected, wrapped under it once selected —
/// at 80×24 and 120×40.
#[test]
fn why_a_check_could_not_run_shows_whole_once_selected() {
    const WHY: &str = "the build sandbox could not start: bwrap: setting up uid map: Permission denied (install bubblewrap 0.8 or later, or set `sandbox: none` for this guardrail)";
    for (w, h) in [(80, 24), (120, 40)] {
        let mut app = fixture::app(3, true, false);
        let hasty = &mut app.candidates[1];
        let r = hasty
            .reports
            .iter_mut()
            .find(|r| r.layer == rascal_core::model::verdict::Layer::Guardrails)
            .expect("hasty has a guardrail report");
        r.errored = Some(WHY.into());
        let check = r.check.clone();
        keys(&mut app, &[Key::Char('2'), Key::Char('l'), Key::Enter]);
        // Select the check's own row (not one of its issues).
        let rows = app.detail_rows();
        let at = rows
            .iter()
            .position(|&(ri, ii)| ii.is_none() && app.candidates[1].reports[ri].check == check)
            .expect("the check's row");
        app.detail_sel = at;
        let screen = text(&terminal(&app, w, h));
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let flat = words(&screen.replace('│', " "));
        assert!(flat.contains(&words(WHY)), "{w}×{h}:\n{screen}");
    }
}
