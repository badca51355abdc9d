//! The table itself: every command with its keys, how they are written,
//! its description, the screens it works on, its place in the status bar,
//! when it is valid and the action it stands for.

use super::*;

/// One command; its bar place is a `Bar` or, for an ordinary hint, `true`
/// (`false`: help only).
macro_rules! cmd {
    ($keys:expr, $label:expr, $desc:expr, $screens:expr, $bar:literal, $when:expr, $action:expr) => {
        cmd!(
            $keys,
            $label,
            $desc,
            $screens,
            Bar::shown($bar),
            $when,
            $action
        )
    };
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
        Bar::High,
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
    cmd!(
        DIGITS,
        "1-9",
        "candidate",
        ALL,
        Bar::Low,
        has_candidates,
        digit
    ),
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
        Bar::High,
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
        |a| has_candidates(a) && a.evidence.is_none(),
        |_| Action::Open
    ),
    cmd!(
        &[Key::Enter],
        "Enter",
        "the test's source",
        &[Screen::Compare],
        true,
        has_matrix_tests,
        |_| Action::Open
    ),
    cmd!(
        &[Key::Char('e')],
        "e",
        "evidence/diff",
        &[Screen::Compare],
        Bar::High,
        several,
        |_| Action::Evidence
    ),
    cmd!(
        &[Key::Char('/')],
        "/",
        "filter log",
        DASH,
        Bar::Low,
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
        Bar::High,
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
        &[Key::Char('/')],
        "/",
        "search",
        DIFFS,
        true,
        always,
        |_| Action::Search
    ),
    cmd!(
        &[Key::Char('n')],
        "n/N",
        "next/prev match (while searching)",
        DIFFS,
        Bar::High,
        searching,
        |_| Action::NextMatch
    ),
    cmd!(
        &[Key::Char('N')],
        "N",
        "previous match",
        DIFFS,
        false,
        searching,
        |_| Action::PrevMatch
    ),
    cmd!(
        &[Key::Char('n')],
        "n/p",
        "next/prev hunk",
        DIFFS,
        true,
        |a| !searching(a),
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
        Bar::Low,
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
        &[Key::Char('h'), Key::Left],
        "h/←",
        "scroll left",
        DIFFS,
        false,
        always,
        |_| Action::ScrollLeft
    ),
    cmd!(
        &[Key::Char('l'), Key::Right],
        "l/→",
        "scroll right",
        DIFFS,
        false,
        always,
        |_| Action::ScrollRight
    ),
    cmd!(
        &[Key::Char('o')],
        "o",
        "override",
        DASH_DETAIL,
        Bar::High,
        can_override,
        |_| Action::Override
    ),
    cmd!(
        &[Key::Char('!')],
        "!",
        "escalate",
        DASH_DETAIL,
        Bar::Low,
        has_candidates,
        |_| Action::Escalate
    ),
    cmd!(
        &[Key::Char('a')],
        "a",
        "answer: who is right here",
        DASH_DETAIL,
        Bar::High,
        contested,
        |_| Action::Answer
    ),
    cmd!(
        &[Key::Char(' ')],
        "Space",
        "select to finalize",
        DASH_DETAIL,
        Bar::Low,
        can_select,
        |_| Action::Select
    ),
    cmd!(
        &[Key::Char('E')],
        "E",
        "open workspace in $EDITOR",
        ALL,
        Bar::Low,
        has_candidates,
        |_| Action::Jump(crate::jump::JumpKind::Editor)
    ),
    cmd!(
        &[Key::Char('S')],
        "S",
        "shell in workspace",
        ALL,
        Bar::Low,
        has_candidates,
        |_| Action::Jump(crate::jump::JumpKind::Shell)
    ),
    cmd!(
        &[Key::Char('y')],
        "y",
        "copy path/tree/diff",
        ALL,
        Bar::Low,
        has_candidates,
        |_| Action::Copy
    ),
    cmd!(
        &[Key::Char('C')],
        "C",
        "combine candidates",
        &[Screen::Compare],
        Bar::High,
        several,
        |_| Action::Combine
    ),
    cmd!(
        &[Key::Char('F')],
        "F",
        "finalize (branch + PR body)",
        &[Screen::Dashboard, Screen::Detail, Screen::Compare],
        Bar::High,
        can_finalize,
        |_| Action::Finalize
    ),
    cmd!(
        &[Key::Char('P')],
        "P",
        "open the PR (gh)",
        &[Screen::Dashboard, Screen::Detail, Screen::Compare],
        Bar::Low,
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
        Bar::Low,
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
    cmd!(
        &[Key::Char('k'), Key::Up],
        "k/↑",
        "previous criterion",
        PLAN,
        false,
        always,
        |_| Action::Up
    ),
    cmd!(
        &[Key::Char('j'), Key::Down],
        "j/↓",
        "next criterion",
        PLAN,
        false,
        always,
        |_| Action::Down
    ),
    cmd!(
        &[Key::Char(' ')],
        "Space",
        "keep/drop the criterion",
        PLAN,
        Bar::High,
        plan_has_rows,
        |_| Action::PlanToggle
    ),
    cmd!(
        &[Key::Char('e')],
        "e",
        "edit its description",
        PLAN,
        Bar::High,
        plan_has_rows,
        |_| Action::PlanEdit(crate::plan::PlanField::Description)
    ),
    cmd!(
        &[Key::Char('c')],
        "c",
        "edit its check",
        PLAN,
        true,
        plan_has_rows,
        |_| Action::PlanEdit(crate::plan::PlanField::Check)
    ),
    cmd!(
        &[Key::Char('o')],
        "o",
        "required/optional",
        PLAN,
        true,
        plan_has_rows,
        |_| Action::PlanOptional
    ),
    cmd!(
        &[Key::Char('a')],
        "a",
        "add a criterion",
        PLAN,
        true,
        planning,
        |_| Action::PlanEdit(crate::plan::PlanField::New)
    ),
    cmd!(
        &[Key::Char('w')],
        "w",
        "save as a spec in the repository",
        PLAN,
        Bar::Low,
        planning,
        |_| Action::PlanSave
    ),
    cmd!(
        &[Key::Enter],
        "Enter",
        "approve and start the candidates",
        PLAN,
        Bar::Always,
        planning,
        |_| Action::PlanApprove
    ),
    cmd!(
        &[Key::Esc],
        "Esc",
        "clear search",
        DIFFS,
        Bar::High,
        searching,
        |_| { Action::Back }
    ),
    cmd!(
        &[Key::Esc],
        "Esc",
        "back",
        ALL,
        Bar::High,
        not_dashboard,
        |_| { Action::Back }
    ),
    cmd!(
        &[Key::Char('q'), Key::Ctrl('c')],
        "q",
        "quit",
        EVERY,
        Bar::Always,
        always,
        |_| Action::Quit
    ),
    cmd!(
        &[Key::Char('?')],
        "?",
        "help",
        EVERY,
        Bar::Always,
        always,
        |_| { Action::Help }
    ),
];
