//! The one command table: key, action, description and when it is valid.
//! Key dispatch, the status bar and the help overlay are all derived from it.

use super::action::Action;
use super::app::{App, Screen};
use super::keys::Key;

mod table;

pub use table::COMMANDS;

pub struct Command {
    pub keys: &'static [Key],
    /// How the keys are written (e.g. `j/↓`).
    pub label: &'static str,
    pub desc: &'static str,
    pub screens: &'static [Screen],
    /// Whether (and how urgently) the status bar shows it when valid; help
    /// shows every command.
    pub bar: Bar,
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
const PLAN: &[Screen] = &[Screen::Plan];
/// Every screen, the plan screen too (help and quit).
const EVERY: &[Screen] = &[
    Screen::Dashboard,
    Screen::Detail,
    Screen::Diff,
    Screen::Compare,
    Screen::Plan,
];
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
    a.override_layer().is_some()
}
/// The evidence pane is open on a run whose agreement matrix has tests.
fn has_matrix_tests(a: &App) -> bool {
    a.evidence.is_some() && !matrix_tests(a).is_empty()
}

/// The tests of the run's agreement matrix (none without one).
pub fn matrix_tests(a: &App) -> &[rascal_core::model::agreement::CrossTest] {
    a.ranking
        .as_ref()
        .and_then(|r| r.agreement.as_ref())
        .map(|m| m.tests.as_slice())
        .unwrap_or(&[])
}

/// The run is over, contested, and its candidates disagree on tests.
fn contested(a: &App) -> bool {
    !a.live()
        && a.ranking
            .as_ref()
            .is_some_and(|r| r.pick.is_none() && r.contested.is_some() && r.has_question())
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
/// A diff search is set (typed and applied): `n`/`N` go to its matches.
fn searching(a: &App) -> bool {
    a.search.as_ref().is_some_and(super::search::Search::active)
}
/// The plan screen waits for its approval.
fn planning(a: &App) -> bool {
    a.plan.as_ref().is_some_and(|p| !p.approved)
}
fn plan_has_rows(a: &App) -> bool {
    planning(a)
        && a.plan
            .as_ref()
            .is_some_and(|p| !p.items.is_empty() || !p.constraints.is_empty())
}
fn digit(k: Key) -> Action {
    match k {
        Key::Char(c) => Action::FocusCandidate(c.to_digit(10).unwrap_or(1) as usize - 1),
        _ => Action::FocusCandidate(0),
    }
}

/// A command's place in the status bar. When the bar is too narrow the
/// lowest go first; `Always` (help and quit) are never dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bar {
    /// Help only.
    Hidden,
    Low,
    Mid,
    High,
    Always,
}

impl Bar {
    /// `true` is an ordinary status-bar hint, `false` a help-only command.
    const fn shown(shown: bool) -> Bar {
        if shown {
            Bar::Mid
        } else {
            Bar::Hidden
        }
    }
}

/// The action a key stands for now, with dialogs, help and the log filter
/// taking keys first.
pub fn dispatch(app: &App, key: Key) -> Option<Action> {
    if let Some(d) = &app.dialog {
        use super::app::Dialog;
        if let Dialog::TestSource { .. } = d {
            // A source to read: keys scroll it or go to another test.
            return Some(match key {
                Key::Esc | Key::Ctrl('c') | Key::Enter | Key::Char('q') => Action::Back,
                Key::Char('n') | Key::Right | Key::Tab => Action::NextMatch,
                Key::Char('p') | Key::Left | Key::BackTab => Action::PrevMatch,
                Key::Char('j') | Key::Down => Action::Down,
                Key::Char('k') | Key::Up => Action::Up,
                Key::PageDown | Key::Char(' ') => Action::PageDown,
                Key::PageUp => Action::PageUp,
                Key::Char('g') | Key::Home => Action::Top,
                _ => return None,
            });
        }
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
                | super::app::Dialog::Question { .. }
                | super::app::Dialog::Hazards { .. },
                Key::Char(c),
            ) => Action::Choose(c),
            (_, Key::Backspace) => Action::Backspace,
            (_, Key::Char(c)) => Action::Input(c),
            (_, Key::Ctrl('c')) => Action::Back,
            _ => return None,
        });
    }
    let typing = app.filter_editing
        || app.search.as_ref().is_some_and(|s| s.editing)
        || (app.screen == Screen::Plan && app.plan.as_ref().is_some_and(|p| p.edit.is_some()));
    if typing {
        return Some(match key {
            Key::Esc => Action::Back,
            Key::Enter => Action::Submit,
            Key::Backspace => Action::Backspace,
            Key::Char(c) => Action::Input(c),
            _ => return None,
        });
    }
    if app.help {
        // Scroll keys scroll the overlay; Esc, `?` and `q` close it.
        return match key {
            Key::Esc | Key::Char('?') | Key::Char('q') => Some(Action::Help),
            Key::Ctrl('c') => Some(Action::Quit),
            Key::Char('j') | Key::Down => Some(Action::Down),
            Key::Char('k') | Key::Up => Some(Action::Up),
            Key::PageDown | Key::Ctrl('d') | Key::Char(' ') => Some(Action::PageDown),
            Key::PageUp | Key::Ctrl('u') => Some(Action::PageUp),
            Key::Char('g') | Key::Home => Some(Action::Top),
            Key::Char('G') | Key::End => Some(Action::Bottom),
            _ => None,
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

/// One status-bar hint: the keys, what they do, how much it matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hint {
    pub key: &'static str,
    pub desc: &'static str,
    pub bar: Bar,
}

const fn hint(key: &'static str, desc: &'static str, bar: Bar) -> Hint {
    Hint { key, desc, bar }
}

/// `(key, description)` pairs for the status bar, every one that applies
/// now, in order (before fitting to the width).
pub fn status_hints(app: &App) -> Vec<(&'static str, &'static str)> {
    hints(app).into_iter().map(|h| (h.key, h.desc)).collect()
}

/// The hints that apply now: a dialog's, the filter or search prompt's,
/// the help overlay's, or the valid commands of the screen.
pub fn hints(app: &App) -> Vec<Hint> {
    use Bar::{Always, High, Low, Mid};
    if app.dialog.is_some() {
        use super::app::Dialog;
        return match &app.dialog {
            Some(Dialog::Quit) => vec![
                hint("s", "stop agents and quit", Always),
                hint("Esc", "back", Always),
            ],
            Some(Dialog::Cancel { .. }) => {
                vec![hint("y", "yes", Always), hint("n/Esc", "no", Always)]
            }
            Some(Dialog::Copy { .. }) => vec![
                hint("p", "path", Always),
                hint("t", "tree id", Always),
                hint("d", "diff", Always),
                hint("Esc", "cancel", Always),
            ],
            Some(Dialog::Hazards { .. }) => vec![
                hint("y", "open anyway", Always),
                hint("n/Esc", "no", Always),
            ],
            Some(Dialog::Question { candidates, .. }) => vec![
                hint(
                    if candidates.len() > 1 { "1-9" } else { "1" },
                    "who is right here",
                    Always,
                ),
                hint("0", "neither: retry with it", Always),
                hint("Esc", "not now", Always),
            ],
            Some(Dialog::Finalize(_)) => vec![
                hint("Enter", "finalize", Always),
                hint("p", "open the PR too", Mid),
                hint("j/k", "scroll", Low),
                hint("Esc", "cancel", Always),
            ],
            Some(Dialog::TestSource { .. }) => vec![
                hint("n/p", "next/previous test", Always),
                hint("j/k", "scroll", High),
                hint("Esc", "close", Always),
            ],
            Some(Dialog::Override { left, .. }) if !left.skipped.is_empty() => vec![
                hint("Enter", "confirm", Always),
                hint("Tab", "with skipped", High),
                hint("Esc", "cancel", Always),
            ],
            _ => vec![
                hint("Enter", "confirm", Always),
                hint("Esc", "cancel", Always),
            ],
        };
    }
    if app.filter_editing {
        return vec![
            hint("Enter", "apply filter", Always),
            hint("Esc", "clear", Always),
        ];
    }
    if app.search.as_ref().is_some_and(|s| s.editing) {
        return vec![hint("Enter", "find", Always), hint("Esc", "cancel", Always)];
    }
    if app.screen == Screen::Plan && app.plan.as_ref().is_some_and(|p| p.edit.is_some()) {
        return vec![
            hint("Enter", "apply", Always),
            hint("Esc", "cancel", Always),
        ];
    }
    if app.help {
        return vec![
            hint("j/k PgDn/PgUp g/G", "scroll", High),
            hint("Esc/?/q", "close help", Always),
        ];
    }
    let mut seen: Vec<Hint> = Vec::new();
    for c in valid(app).filter(|c| c.bar > Bar::Hidden) {
        if !seen.iter().any(|h| h.key == c.label) {
            // The bar says what a key does; the help adds the details in
            // parentheses (`finalize (branch + PR body)`).
            let desc = c.desc.split(" (").next().unwrap_or(c.desc);
            seen.push(hint(c.label, desc, c.bar));
        }
    }
    seen
}

/// The columns one hint takes in the bar: ` key ` ` desc `.
pub fn hint_width(h: &Hint) -> usize {
    rascal_core::text::width(h.key) + rascal_core::text::width(h.desc) + 4
}

/// A hint's description in a word or two, for a narrow bar.
fn brief(desc: &'static str) -> &'static str {
    match desc {
        "next candidate" => "next",
        "layer detail" => "detail",
        "jump to diff" => "jump",
        "select winner" | "select to finalize" => "select",
        "filter log" => "filter",
        "evidence/diff" => "evidence",
        "next/prev hunk" => "hunk",
        "next/prev file" => "file",
        "next/prev match (while searching)" => "match",
        "side-by-side" => "split",
        "copy path/tree/diff" => "copy",
        "open workspace in $EDITOR" => "editor",
        "shell in workspace" => "shell",
        "cancel candidate" => "cancel",
        "follow log" => "follow",
        "open the PR (gh)" => "PR",
        "next/previous test" => "tests",
        "combine candidates" => "combine",
        "stop agents and quit" => "stop+quit",
        "keep/drop the criterion" => "keep/drop",
        "edit its description" => "edit",
        "edit its check" => "check",
        "required/optional" => "optional",
        "add a criterion" => "add",
        "save as a spec in the repository" => "save",
        "approve and start the candidates" => "approve",
        d => d.split(" (").next().unwrap_or(d),
    }
}

/// The hints that fit in `room` columns (see `fit_by_priority`): with
/// their whole descriptions, or in brief when that shows more of the
/// ordinary and important ones — at 80 columns `F finalize` and
/// `c compare` are worth more than words.
pub fn fit_hints(hints: &[Hint], room: usize) -> Vec<Hint> {
    let whole = fit_by_priority(hints, room);
    let short: Vec<Hint> = hints
        .iter()
        .map(|h| Hint {
            desc: brief(h.desc),
            ..*h
        })
        .collect();
    let briefly = fit_by_priority(&short, room);
    let important = |hs: &[Hint]| hs.iter().filter(|h| h.bar >= Bar::Mid).count();
    if important(&briefly) > important(&whole) {
        briefly
    } else {
        whole
    }
}

/// The hints that fit in `room` columns, in their order: `Always` ones
/// (help and quit, last in the table, so the bar ends with `? help`) are
/// kept, then the most important of the rest: the lowest priority (and,
/// among equals, the rightmost) is dropped first, and nothing of a lower
/// priority than a dropped hint is kept.
fn fit_by_priority(hints: &[Hint], room: usize) -> Vec<Hint> {
    let mut keep: Vec<bool> = hints.iter().map(|h| h.bar == Bar::Always).collect();
    let mut used: usize = hints
        .iter()
        .filter(|h| h.bar == Bar::Always)
        .map(hint_width)
        .sum();
    let mut order: Vec<usize> = (0..hints.len()).filter(|&i| !keep[i]).collect();
    // Most important first; among equals, leftmost first.
    order.sort_by_key(|&i| (std::cmp::Reverse(hints[i].bar), i));
    for i in order {
        let w = hint_width(&hints[i]);
        if used + w > room {
            break;
        }
        used += w;
        keep[i] = true;
    }
    hints
        .iter()
        .zip(keep)
        .filter_map(|(h, k)| k.then_some(*h))
        .collect()
}
