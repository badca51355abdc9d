//! The one command table: key, action, description and when it is valid.
//! Key dispatch, the status bar and the help overlay are all derived from it.

use super::action::Action;
use super::app::{App, Mark, Screen};
use super::keys::Key;

pub struct Command {
    pub keys: &'static [Key],
    /// How the keys are written (e.g. `j/↓`).
    pub label: &'static str,
    pub desc: &'static str,
    pub screens: &'static [Screen],
    /// Shown in the status bar when valid (help shows every command).
    pub bar: bool,
    pub when: fn(&App) -> bool,
    pub action: fn(Key) -> Action,
}

const ALL: &[Screen] = &[
    Screen::Dashboard,
    Screen::Detail,
    Screen::Diff,
    Screen::Compare,
];
const DASH: &[Screen] = &[Screen::Dashboard];
const DASH_DETAIL: &[Screen] = &[Screen::Dashboard, Screen::Detail];
const SCROLLING: &[Screen] = &[
    Screen::Dashboard,
    Screen::Detail,
    Screen::Diff,
    Screen::Compare,
];
const DIFFS: &[Screen] = &[Screen::Diff, Screen::Compare];
const DIGITS: &[Key] = &[
    Key::Char('1'),
    Key::Char('2'),
    Key::Char('3'),
    Key::Char('4'),
    Key::Char('5'),
    Key::Char('6'),
    Key::Char('7'),
    Key::Char('8'),
    Key::Char('9'),
];

fn always(_: &App) -> bool {
    true
}
fn has_candidates(a: &App) -> bool {
    !a.candidates.is_empty()
}
fn several(a: &App) -> bool {
    a.candidates.len() > 1
}
fn not_dashboard(a: &App) -> bool {
    a.screen != Screen::Dashboard
}
fn can_override(a: &App) -> bool {
    let layer = a.selected_layer();
    a.focused().is_some_and(|c| {
        matches!(c.mark(layer, &a.meta), Mark::Fail | Mark::Warn) || c.has_skipped(layer)
    })
}
fn can_select(a: &App) -> bool {
    a.focused().is_some_and(|c| !c.state.live())
}
fn can_finalize(a: &App) -> bool {
    !a.live() && !a.candidates.is_empty()
}
fn finalized(a: &App) -> bool {
    a.summary.finalized.is_some()
}
fn has_failures(a: &App) -> bool {
    a.focused().is_some_and(|c| !c.failing_issues().is_empty())
}
fn can_cancel(a: &App) -> bool {
    a.live() && a.focused().is_some_and(|c| !c.finished() && !c.cancelled)
}
fn live(a: &App) -> bool {
    a.live()
}
fn digit(k: Key) -> Action {
    match k {
        Key::Char(c) => Action::FocusCandidate(c.to_digit(10).unwrap_or(1) as usize - 1),
        _ => Action::FocusCandidate(0),
    }
}

macro_rules! cmd {
    ($keys:expr, $label:expr, $desc:expr, $screens:expr, $bar:expr, $when:expr, $action:expr) => {
        Command {
            keys: $keys,
            label: $label,
            desc: $desc,
            screens: $screens,
            bar: $bar,
            when: $when,
            action: $action,
        }
    };
}

pub static COMMANDS: &[Command] = &[
    cmd!(
        &[Key::Tab],
        "Tab",
        "next candidate",
        ALL,
        true,
        several,
        |_| Action::FocusNext
    ),
    cmd!(
        &[Key::BackTab],
        "S-Tab",
        "previous candidate",
        ALL,
        false,
        several,
        |_| Action::FocusPrev
    ),
    cmd!(DIGITS, "1-9", "candidate", ALL, true, has_candidates, digit),
    cmd!(
        &[Key::Char('h'), Key::Left],
        "h/←",
        "previous layer",
        DASH_DETAIL,
        false,
        has_candidates,
        |_| Action::LayerPrev
    ),
    cmd!(
        &[Key::Char('l'), Key::Right],
        "l/→",
        "next layer",
        DASH_DETAIL,
        false,
        has_candidates,
        |_| Action::LayerNext
    ),
    cmd!(
        &[Key::Char('k'), Key::Up],
        "k/↑",
        "up",
        SCROLLING,
        false,
        always,
        |_| Action::Up
    ),
    cmd!(
        &[Key::Char('j'), Key::Down],
        "j/↓",
        "down",
        SCROLLING,
        false,
        always,
        |_| Action::Down
    ),
    cmd!(
        &[Key::PageUp, Key::Ctrl('u')],
        "PgUp",
        "page up",
        SCROLLING,
        false,
        always,
        |_| Action::PageUp
    ),
    cmd!(
        &[Key::PageDown, Key::Ctrl('d')],
        "PgDn",
        "page down",
        SCROLLING,
        false,
        always,
        |_| Action::PageDown
    ),
    cmd!(
        &[Key::Char('g'), Key::Home],
        "g",
        "top",
        SCROLLING,
        false,
        always,
        |_| Action::Top
    ),
    cmd!(
        &[Key::Char('G')],
        "G",
        "bottom",
        SCROLLING,
        false,
        always,
        |_| Action::Bottom
    ),
    cmd!(
        &[Key::End],
        "End",
        "follow log",
        DASH,
        true,
        |a| a.focused().is_some_and(|c| !c.logs.follow),
        |_| Action::Follow
    ),
    cmd!(
        &[Key::Enter],
        "Enter",
        "layer detail",
        DASH,
        true,
        has_candidates,
        |_| Action::Open
    ),
    cmd!(
        &[Key::Enter],
        "Enter",
        "jump to diff",
        &[Screen::Detail],
        true,
        has_candidates,
        |_| Action::Open
    ),
    cmd!(
        &[Key::Enter],
        "Enter",
        "select winner",
        &[Screen::Compare],
        true,
        has_candidates,
        |_| Action::Open
    ),
    cmd!(
        &[Key::Char('/')],
        "/",
        "filter log",
        DASH,
        true,
        has_candidates,
        |_| Action::Filter
    ),
    cmd!(
        &[Key::Char('v')],
        "v",
        "raw/readable log",
        DASH,
        false,
        has_candidates,
        |_| Action::ToggleRawLogs
    ),
    cmd!(
        &[Key::Char('d')],
        "d",
        "diff",
        DASH_DETAIL,
        true,
        has_candidates,
        |_| Action::Diff
    ),
    cmd!(
        &[Key::Char('c')],
        "c",
        "compare",
        &[Screen::Dashboard, Screen::Detail, Screen::Diff],
        true,
        several,
        |_| Action::Compare
    ),
    cmd!(
        &[Key::Char('s')],
        "s",
        "side-by-side",
        DIFFS,
        true,
        always,
        |_| Action::ToggleSideBySide
    ),
    cmd!(
        &[Key::Char('n')],
        "n/p",
        "next/prev hunk",
        DIFFS,
        true,
        always,
        |_| Action::NextHunk
    ),
    cmd!(
        &[Key::Char('p')],
        "p",
        "previous hunk",
        DIFFS,
        false,
        always,
        |_| Action::PrevHunk
    ),
    cmd!(
        &[Key::Char(']')],
        "]/[",
        "next/prev file",
        DIFFS,
        true,
        always,
        |_| Action::NextFile
    ),
    cmd!(
        &[Key::Char('[')],
        "[",
        "previous file",
        DIFFS,
        false,
        always,
        |_| Action::PrevFile
    ),
    cmd!(
        &[Key::Char('o')],
        "o",
        "override",
        DASH_DETAIL,
        true,
        can_override,
        |_| Action::Override
    ),
    cmd!(
        &[Key::Char('e')],
        "e",
        "escalate",
        DASH_DETAIL,
        true,
        has_candidates,
        |_| Action::Escalate
    ),
    cmd!(
        &[Key::Char(' ')],
        "Space",
        "select to finalize",
        DASH_DETAIL,
        false,
        can_select,
        |_| Action::Select
    ),
    cmd!(
        &[Key::Char('E')],
        "E",
        "open workspace in $EDITOR",
        ALL,
        false,
        has_candidates,
        |_| Action::Jump(crate::tui::jump::JumpKind::Editor)
    ),
    cmd!(
        &[Key::Char('S')],
        "S",
        "shell in workspace",
        ALL,
        false,
        has_candidates,
        |_| Action::Jump(crate::tui::jump::JumpKind::Shell)
    ),
    cmd!(
        &[Key::Char('y')],
        "y",
        "copy path/tree/diff",
        ALL,
        false,
        has_candidates,
        |_| Action::Copy
    ),
    cmd!(
        &[Key::Char('F')],
        "F",
        "finalize (branch + PR body)",
        &[Screen::Dashboard, Screen::Detail, Screen::Compare],
        true,
        can_finalize,
        |_| Action::Finalize
    ),
    cmd!(
        &[Key::Char('P')],
        "P",
        "open the PR (gh)",
        &[Screen::Dashboard, Screen::Detail, Screen::Compare],
        true,
        finalized,
        |_| Action::OpenPr
    ),
    cmd!(
        &[Key::Char('r')],
        "r",
        "retry",
        DASH_DETAIL,
        true,
        has_failures,
        |_| Action::Retry
    ),
    cmd!(
        &[Key::Char('x')],
        "x",
        "cancel candidate",
        DASH,
        true,
        can_cancel,
        |_| Action::CancelCandidate
    ),
    cmd!(
        &[Key::Char('X')],
        "X",
        "cancel run",
        DASH,
        false,
        live,
        |_| Action::CancelRun
    ),
    cmd!(&[Key::Esc], "Esc", "back", ALL, true, not_dashboard, |_| {
        Action::Back
    }),
    cmd!(&[Key::Char('?')], "?", "help", ALL, true, always, |_| {
        Action::Help
    }),
    cmd!(
        &[Key::Char('q'), Key::Ctrl('c')],
        "q",
        "quit",
        ALL,
        true,
        always,
        |_| Action::Quit
    ),
];

/// The action a key stands for now, with dialogs, help and the log filter
/// taking keys first.
pub fn dispatch(app: &App, key: Key) -> Option<Action> {
    if let Some(d) = &app.dialog {
        use super::app::Dialog;
        if let Dialog::Finalize(_) = d {
            // No text to type: keys scroll the preview or flip the option.
            return Some(match key {
                Key::Esc | Key::Ctrl('c') => Action::Back,
                Key::Enter => Action::Submit,
                Key::Char('p') | Key::Tab => Action::Toggle,
                Key::Char('j') | Key::Down => Action::Down,
                Key::Char('k') | Key::Up => Action::Up,
                Key::PageDown | Key::Char(' ') => Action::PageDown,
                Key::PageUp => Action::PageUp,
                Key::Char('g') | Key::Home => Action::Top,
                _ => return None,
            });
        }
        return Some(match (d, key) {
            (_, Key::Esc) => Action::Back,
            (_, Key::Enter) => Action::Submit,
            (Dialog::Override { .. }, Key::Tab) => Action::Toggle,
            (super::app::Dialog::Quit, Key::Ctrl('c')) => Action::ForceQuit,
            (
                super::app::Dialog::Quit
                | super::app::Dialog::Cancel { .. }
                | super::app::Dialog::Copy { .. }
                | super::app::Dialog::Hazards { .. },
                Key::Char(c),
            ) => Action::Choose(c),
            (_, Key::Backspace) => Action::Backspace,
            (_, Key::Char(c)) => Action::Input(c),
            (_, Key::Ctrl('c')) => Action::Back,
            _ => return None,
        });
    }
    if app.filter_editing {
        return Some(match key {
            Key::Esc => Action::Back,
            Key::Enter => Action::Submit,
            Key::Backspace => Action::Backspace,
            Key::Char(c) => Action::Input(c),
            _ => return None,
        });
    }
    if app.help {
        return match key {
            Key::Char('q') | Key::Ctrl('c') => Some(Action::Quit),
            _ => Some(Action::Back),
        };
    }
    valid(app)
        .find(|c| c.keys.contains(&key))
        .map(|c| (c.action)(key))
}

/// Commands valid on the current screen in the current state.
pub fn valid(app: &App) -> impl Iterator<Item = &'static Command> + '_ {
    COMMANDS
        .iter()
        .filter(move |c| c.screens.contains(&app.screen) && (c.when)(app))
}

/// `(key, description)` pairs for the status bar.
pub fn status_hints(app: &App) -> Vec<(&'static str, &'static str)> {
    if app.dialog.is_some() {
        use super::app::Dialog;
        return match &app.dialog {
            Some(Dialog::Quit) => vec![("s", "stop agents and quit"), ("Esc", "back")],
            Some(Dialog::Cancel { .. }) => vec![("y", "yes"), ("n/Esc", "no")],
            Some(Dialog::Copy { .. }) => vec![
                ("p", "path"),
                ("t", "tree id"),
                ("d", "diff"),
                ("Esc", "cancel"),
            ],
            Some(Dialog::Hazards { .. }) => vec![("y", "open anyway"), ("n/Esc", "no")],
            Some(Dialog::Finalize(_)) => vec![
                ("Enter", "finalize"),
                ("p", "open the PR too"),
                ("j/k", "scroll"),
                ("Esc", "cancel"),
            ],
            Some(Dialog::Override { left, .. }) if !left.skipped.is_empty() => vec![
                ("Enter", "confirm"),
                ("Tab", "with skipped"),
                ("Esc", "cancel"),
            ],
            _ => vec![("Enter", "confirm"), ("Esc", "cancel")],
        };
    }
    if app.filter_editing {
        return vec![("Enter", "apply filter"), ("Esc", "clear")];
    }
    if app.help {
        return vec![("any key", "close help")];
    }
    let mut seen = Vec::new();
    for c in valid(app).filter(|c| c.bar) {
        if !seen.iter().any(|(l, _)| *l == c.label) {
            seen.push((c.label, c.desc));
        }
    }
    seen
}
