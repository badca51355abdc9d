//! Wide text (CJK, emoji) on the TestBackend: names, log lines, check names
//! and diff lines take two columns a character, and the columns after them
//! stay where they are for ASCII text.

use crate::common::fixture::{self, T0};
use rascal_core::model::event::RunEvent;
use rascal_core::model::log::Stream;
use rascal_core::model::verdict::Layer;
use rascal_tui::update::update;
use rascal_tui::{Action, App, Key, RunMeta, Theme};
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::Terminal;

const WIDE: &str = "日本語エージェント";
const EMOJI: &str = "速い🚀";
const CJK_LOG: &str = "ログ: 関数を追加しました ✅ 完了";

/// The fixture run with the first two candidates renamed to wide names, a
/// guardrail check with a wide name, and wide log lines.
fn wide_app() -> App {
    let mut events = Vec::new();
    for (ev, at) in fixture::events(3, true) {
        let json = serde_json::to_string(&ev)
            .unwrap()
            .replace("\"careful\"", &format!("\"{WIDE}\""))
            .replace("\"hasty\"", &format!("\"{EMOJI}\""))
            .replace("\"banned-patterns\"", "\"禁止パターン検査\"")
            .replace("\"secrets\"", "\"秘密🔑\"");
        let ev: RunEvent = serde_json::from_str(&json).unwrap();
        let started = matches!(&ev, RunEvent::CandidateStarted { .. });
        let candidate = match &ev {
            RunEvent::CandidateStarted { candidate, .. } => candidate.clone(),
            _ => String::new(),
        };
        events.push((ev, at));
        if started {
            for text in [CJK_LOG, "ascii line after the wide one"] {
                events.push((
                    RunEvent::Log {
                        candidate: candidate.clone(),
                        stream: Stream::Stdout,
                        text: text.into(),
                        display: None,
                    },
                    at,
                ));
            }
        }
    }
    let meta = RunMeta {
        strategy: "compare".into(),
        layers_on: vec![Layer::Agent, Layer::Guardrails, Layer::Permissions],
        detachable: false,
        attached: false,
        combine: false,
    };
    let theme = Theme::named("dark", false).unwrap();
    let mut app = App::new(meta, theme, "Ada Lovelace <ada@example.com>".into());
    for (ev, at) in events {
        update(&mut app, Action::Run(Box::new(ev), at));
    }
    update(&mut app, Action::Tick(T0 + 15_000));
    app
}

fn keys(app: &mut App, ks: &[Key]) {
    for k in ks {
        if let Some(a) = rascal_tui::commands::dispatch(app, *k) {
            update(app, a);
        }
    }
}

fn render(app: &App, w: u16, h: u16) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| rascal_tui::draw::draw(f, app)).unwrap();
    t.backend().buffer().clone()
}

/// Row `y` as drawn: each cell's symbol with the cells hidden under a wide
/// character left out, and the screen column where each byte starts.
fn row(buf: &Buffer, y: u16) -> (String, Vec<u16>) {
    let mut text = String::new();
    let mut cols = Vec::new();
    let mut x = 0;
    while x < buf.area.width {
        let s = buf[(x, y)].symbol();
        for _ in 0..s.len() {
            cols.push(x);
        }
        text.push_str(s);
        x += rascal_core::text::width(s).max(1) as u16;
    }
    (text, cols)
}

/// The screen column where `needle` starts on row `y`.
fn column(buf: &Buffer, y: u16, needle: &str) -> Option<u16> {
    let (text, cols) = row(buf, y);
    text.find(needle).map(|i| cols[i])
}

/// The first row containing `needle`.
fn find_row(buf: &Buffer, needle: &str) -> u16 {
    (0..buf.area.height)
        .find(|&y| row(buf, y).0.contains(needle))
        .unwrap_or_else(|| panic!("`{needle}` is not on screen:\n{}", dump(buf)))
}

fn dump(buf: &Buffer) -> String {
    (0..buf.area.height)
        .map(|y| row(buf, y).0.trim_end().to_string() + "\n")
        .collect()
}

#[test]
fn wide_log_lines_and_names_keep_the_dashboard_columns() {
    let app = wide_app();
    let buf = render(&app, 200, 50);
    let screen = dump(&buf);
    assert!(
        screen.contains(CJK_LOG),
        "the wide log line is whole:\n{screen}"
    );
    assert!(screen.contains(&format!(" 1 {WIDE} ")), "{screen}");
    assert!(screen.contains(&format!(" 2 {EMOJI} ")), "{screen}");
    // In each of the three columns the wide line and the ASCII line under
    // it start in the same screen column (a column whose failure takes two
    // rows has its log a row lower).
    let starts = |y: u16, needle: &str| -> Vec<u16> {
        let (t, c) = row(&buf, y);
        t.match_indices(needle).map(|(i, _)| c[i]).collect()
    };
    let borders = |y: u16| -> Vec<u16> {
        (0..buf.area.width)
            .filter(|&x| buf[(x, y)].symbol() == "│")
            .collect()
    };
    let mut columns = 0;
    for y in (0..buf.area.height - 1).filter(|&y| row(&buf, y).0.contains(CJK_LOG)) {
        let wide = starts(y, CJK_LOG);
        columns += wide.len();
        let under: Vec<u16> = starts(y + 1, "ascii line after")
            .into_iter()
            .filter(|x| wide.contains(x))
            .collect();
        assert_eq!(under, wide, "{screen}");
        assert_eq!(borders(y), borders(y + 1), "{screen}");
        assert_eq!(
            borders(y).len(),
            6,
            "three columns, two borders each:\n{screen}"
        );
    }
    assert_eq!(columns, 3, "{screen}");
}

#[test]
fn wide_names_get_whole_tabs() {
    let app = wide_app();
    let buf = render(&app, 60, 20);
    let y = find_row(&buf, WIDE);
    let (text, _) = row(&buf, y);
    assert!(
        text.contains(&format!(" 1 {WIDE} PASS  2 {EMOJI} FAIL  3 sneaky FAIL ")),
        "tabs are as wide as their titles:\n{}",
        dump(&buf)
    );
}

#[test]
fn wide_check_names_keep_the_detail_columns() {
    let mut app = wide_app();
    keys(&mut app, &[Key::Char('2'), Key::Char('l'), Key::Enter]);
    for (w, h) in [(200, 50), (100, 30)] {
        let buf = render(&app, w, h);
        let screen = dump(&buf);
        let rows: Vec<u16> = ["秘密🔑", "禁止パターン検査", "build", "tests"]
            .iter()
            .map(|c| find_row(&buf, c))
            .collect();
        let status: Vec<Option<u16>> = rows
            .iter()
            .zip(["pass", "fail", "fail", "skipped"])
            .map(|(&y, label)| column(&buf, y, &format!(" {label} ")))
            .collect();
        assert!(status[0].is_some(), "{screen}");
        assert!(
            status.iter().all(|x| *x == status[0]),
            "status column {status:?}:\n{screen}"
        );
    }
}

#[test]
fn wide_names_keep_the_scoreboard_and_similarity_columns() {
    let mut app = wide_app();
    keys(&mut app, &[Key::Char('c')]);
    let buf = render(&app, 200, 50);
    let screen = dump(&buf);
    // Scoreboard: each candidate's cell starts in the column of its name.
    let head = find_row(&buf, "A 1 日本語");
    let verdict = find_row(&buf, "verdict");
    let files = find_row(&buf, "files changed");
    let name_cols: Vec<u16> = ["A 1 日本語", "B 2 速い", "3 sneaky"]
        .iter()
        .map(|n| column(&buf, head, n).unwrap())
        .collect();
    let (vtext, vcols) = row(&buf, verdict);
    let verdict_cols: Vec<u16> = vtext
        .match_indices(['P', 'F'])
        .filter(|(i, _)| vtext[*i..].starts_with("PASS") || vtext[*i..].starts_with("FAIL"))
        .map(|(i, _)| vcols[i])
        .take(3)
        .collect();
    assert_eq!(verdict_cols, name_cols, "{screen}");
    let (ftext, fcols) = row(&buf, files);
    let after_label = ftext.find("files changed").unwrap() + "files changed".len();
    let file_cols: Vec<u16> = ftext[after_label..]
        .match_indices(|c: char| c.is_ascii_digit())
        .map(|(i, _)| fcols[after_label + i])
        .take(3)
        .collect();
    assert_eq!(file_cols, name_cols, "{screen}");
    // Similarity matrix: the numbers of every row in the same columns.
    let r1 = find_row(&buf, "1.00");
    let nums = |y: u16| -> Vec<u16> {
        let (t, c) = row(&buf, y);
        t.match_indices('.')
            .filter(|(i, _)| t[..*i].ends_with(|ch: char| ch.is_ascii_digit()))
            .filter(|(i, _)| t[*i + 1..].starts_with(|ch: char| ch.is_ascii_digit()))
            .map(|(i, _)| c[i])
            .collect()
    };
    let first = nums(r1);
    assert_eq!(first.len(), 3, "{screen}");
    assert_eq!(nums(r1 + 1), first, "{screen}");
    assert_eq!(nums(r1 + 2), first, "{screen}");
}

#[test]
fn wide_diff_lines_keep_the_side_by_side_divider() {
    let mut app = wide_app();
    keys(&mut app, &[Key::Char('2'), Key::Char('d'), Key::Char('s')]);
    let diff = "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,3 @@\n # greeter\n-こんにちは、世界。これは長い日本語の行で、半分の幅より長くなるように書かれています。まだ続きます。\n+こんにちは 🌏 世界!\n ascii context line\n";
    update(
        &mut app,
        Action::DiffLoaded {
            candidate: EMOJI.into(),
            text: diff.into(),
        },
    );
    for (w, h) in [(200, 50), (100, 30)] {
        let buf = render(&app, w, h);
        let screen = dump(&buf);
        let rows = [
            find_row(&buf, "# greeter"),
            find_row(&buf, "こんにちは"),
            find_row(&buf, "ascii context line"),
        ];
        // The divider is the last `│` before the right-hand line number.
        let divider = |y: u16| {
            let (t, c) = row(&buf, y);
            let right = t.rfind(|ch: char| ch.is_ascii_digit()).unwrap();
            t[..right].rfind('│').map(|i| c[i])
        };
        let d = divider(rows[0]);
        assert!(d.is_some(), "{screen}");
        for y in rows {
            assert_eq!(divider(y), d, "row {y}:\n{screen}");
        }
    }
}
