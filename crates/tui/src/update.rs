//! `update(state, action) → effects`: the only place the TUI's state
//! changes. Effects are what the shell must do (load a diff, send a
//! decision, stop agents, quit); `update` itself does no I/O.

use super::action::Action;
use super::app::{blockers_text, App, Dialog, FinalizeDialog, Screen, STRIP};
use super::decision::{Decision, DecisionKind};
use super::diff::Diff;
use super::search::{flat_hits, hits, step, Toward};
use rascal_core::model::decision::{accept_skipped, blockers, not_run};
use rascal_core::model::verdict::Status;

mod answer;
mod logs;
mod navigate;
mod open_dialog;
use answer::{choose, decision, dialog_answers, input_of, submit};
use logs::{find, load_found, log_rows, logs, search_log, search_more, widest_line};
use navigate::{back, focus, load_compare, loaded, navigate, open, scroll, show_test};
use open_dialog::{combine, open_question, open_select, start_finalize, start_override};

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    LoadDiff(String),
    /// Read the candidate's log file lines `from..from + count`.
    LoadLog {
        candidate: String,
        from: u64,
        count: u64,
    },
    /// Search the candidate's log file lines `from..upto` for `query`
    /// (the whole-log filter); `ring_from` comes back with the result.
    SearchLog {
        candidate: String,
        query: String,
        from: u64,
        upto: u64,
        ring_from: u64,
    },
    /// Read the lines of the whole-log filter's matches `first..`: the
    /// file lines `lines`.
    LoadFound {
        candidate: String,
        query: String,
        first: usize,
        lines: Vec<u64>,
    },
    LoadCompare(String, String),
    /// Read test `index` of the agreement matrix (`name`, written by
    /// candidate `author`) from its author's change.
    LoadTestSource {
        index: usize,
        author: String,
        name: String,
    },
    Decide(Decision),
    /// Read what finalizing this candidate would do.
    PreviewFinalize(String),
    /// Commit the selected candidate on its branch (`rascal finalize`),
    /// then open the pull request with `gh` when `open_pr`.
    Finalize {
        candidate: String,
        open_pr: bool,
    },
    /// Run `gh` with this command line.
    OpenPr(Vec<String>),
    /// Suspend the TUI and open the candidate's workspace in the editor or
    /// a shell (after a look for files that run code when opened).
    Jump(crate::jump::Jump),
    /// Put the candidate's path, tree id or diff on the clipboard.
    Copy {
        candidate: String,
        what: crate::jump::CopyWhat,
    },
    /// Stop one candidate's agent and checks.
    CancelCandidate(String),
    CancelRun,
    /// Leave the TUI; `stop` also stops running agents.
    Quit {
        stop: bool,
    },
    /// Write `text` to `path` (relative to the repository), never over a
    /// file that is there: the plan's criteria saved as a spec (`w`).
    SaveSpec {
        path: String,
        text: String,
    },
}

/// Rows a page scroll moves.
const PAGE: usize = 10;
/// Columns `←`/`→` scroll the diff screens.
const HSTEP: usize = 8;

pub fn update(app: &mut App, action: Action) -> Vec<Effect> {
    let mut fx = Vec::new();
    app.dirty = true;
    if !matches!(action, Action::Run(..) | Action::Tick(_)) {
        app.flash = None;
    }
    let action = if app.screen == Screen::Plan && app.dialog.is_none() && !app.help {
        match planning(app, action, &mut fx) {
            Some(other) => other,
            None => return fx,
        }
    } else {
        action
    };
    match action {
        action @ (Action::Run(..)
        | Action::Tick(_)
        | Action::Resize(..)
        | Action::Quit
        | Action::ForceQuit) => running(app, action, &mut fx),
        action @ (Action::FocusNext
        | Action::FocusPrev
        | Action::FocusCandidate(_)
        | Action::LayerNext
        | Action::LayerPrev
        | Action::Up
        | Action::Down
        | Action::PageUp
        | Action::PageDown
        | Action::Scroll(_)) => moving(app, action, &mut fx),
        action @ (Action::Top
        | Action::Bottom
        | Action::LogLoaded { .. }
        | Action::LogSearched { .. }
        | Action::FoundLoaded { .. }
        | Action::Follow) => logs(app, action, &mut fx),
        Action::Open => open(app, &mut fx),
        Action::Back => back(app),
        Action::Help => {
            app.help = !app.help;
            app.help_scroll = 0;
        }
        Action::Filter => {
            app.filter_editing = true;
            app.filter.get_or_insert_with(String::new);
        }
        action @ (Action::Diff
        | Action::Compare
        | Action::Evidence
        | Action::ToggleSideBySide
        | Action::Search
        | Action::NextMatch
        | Action::PrevMatch
        | Action::ScrollLeft
        | Action::ScrollRight
        | Action::ToggleRawLogs
        | Action::NextHunk
        | Action::PrevHunk
        | Action::NextFile
        | Action::PrevFile) => viewing(app, action, &mut fx),
        action @ (Action::Override
        | Action::Escalate
        | Action::Select
        | Action::Finalize
        | Action::Answer
        | Action::Jump(_)
        | Action::Copy
        | Action::JumpHazards(..)) => acting(app, action, &mut fx),
        Action::Said(msg) => app.flash = Some(msg),
        Action::Combine => combine(app, &mut fx),
        action @ (Action::OpenPr
        | Action::Toggle
        | Action::FinalizePreviewed(_)
        | Action::FinalizeDone(_)
        | Action::PrOpened(_)) => dialog_answers(app, action, &mut fx),
        Action::NotifyFailed(e) => app.flash = Some(format!("notify command failed: {e}")),
        action @ (Action::Retry
        | Action::CancelCandidate
        | Action::CancelRun
        | Action::Input(_)
        | Action::Backspace) => asking(app, action),
        Action::Submit => submit(app, &mut fx),
        // The plan screen's own (see `planning`).
        Action::PlanToggle
        | Action::PlanEdit(_)
        | Action::PlanOptional
        | Action::PlanApprove
        | Action::PlanSave => {}
        Action::Choose(ch) => choose(app, ch, &mut fx),
        action @ (Action::Click(..)
        | Action::DiffLoaded { .. }
        | Action::CompareLoaded { .. }
        | Action::DiffUnreadable { .. }
        | Action::CompareUnreadable { .. }
        | Action::TestSourceLoaded { .. }) => loaded(app, action),
    }
    fx
}

/// What the loop hands in (the run's events, the time, the terminal's
/// size) and quitting.
fn running(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    match action {
        Action::Run(ev, at) => {
            app.apply(&ev, at);
            if let rascal_core::model::event::RunEvent::LogSegment(seg) = ev.as_ref() {
                fx.extend(search_more(app, &seg.candidate));
            }
        }
        Action::Tick(now) => {
            app.now_ms = app.now_ms.max(now);
            app.spinner = app.spinner.wrapping_add(1);
        }
        Action::Resize(w, h) => {
            app.width = w;
            app.height = h;
        }
        Action::Quit => {
            if app.help {
                app.help = false;
            }
            if app.live() && !app.meta.attached {
                app.dialog = Some(Dialog::Quit);
            } else {
                app.quit = true;
                fx.push(Effect::Quit { stop: false });
            }
        }
        Action::ForceQuit => {
            app.quit = true;
            fx.push(Effect::Quit { stop: true });
        }
        // Only the actions above are routed here.
        _ => {}
    }
}

/// Moving the focus between candidates and layers, and scrolling.
fn moving(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    match action {
        Action::FocusNext | Action::FocusPrev | Action::FocusCandidate(_) => focus(app, action, fx),
        Action::LayerNext => {
            app.layer_sel = (app.layer_sel + 1).min(STRIP.len() - 1);
            app.detail_sel = 0;
        }
        Action::LayerPrev => {
            app.layer_sel = app.layer_sel.saturating_sub(1);
            app.detail_sel = 0;
        }
        Action::Up => fx.extend(scroll(app, -1)),
        Action::Down => fx.extend(scroll(app, 1)),
        Action::PageUp => fx.extend(scroll(app, -(PAGE as i64))),
        Action::PageDown => fx.extend(scroll(app, PAGE as i64)),
        Action::Scroll(n) => fx.extend(scroll(app, n as i64)),
        // Only the actions above are routed here.
        _ => {}
    }
}

/// The plan screen's keys (plan, then execute): move, keep or drop, edit,
/// add, mark optional, save, approve. Anything else is given back to
/// `update` (events, ticks, quit, help).
fn planning(app: &mut App, action: Action, fx: &mut Vec<Effect>) -> Option<Action> {
    let who = app.who.clone();
    let instruction = app.instruction.clone();
    let Some(p) = app.plan.as_mut() else {
        app.screen = Screen::Dashboard;
        return Some(action);
    };
    if p.edit.is_some() {
        match action {
            Action::Input(c) => p.input(c),
            Action::Backspace => p.backspace(),
            Action::Submit => p.submit_edit(),
            Action::Back => p.cancel_edit(),
            other => return Some(other),
        }
        return None;
    }
    match action {
        Action::Up => p.up(),
        Action::Down => p.down(),
        Action::PlanToggle => p.toggle(),
        Action::PlanOptional => p.toggle_required(),
        Action::PlanEdit(field) => p.start_edit(field),
        Action::PlanSave => match p.spec_yaml(&instruction) {
            Ok(text) => fx.push(Effect::SaveSpec {
                path: format!(
                    "{}/{}.yaml",
                    rascal_core::config::spec::SPECS_DIR,
                    rascal_core::text::slug(&instruction)
                ),
                text,
            }),
            Err(e) => p.error = Some(e.to_string()),
        },
        Action::PlanApprove | Action::Submit if !p.approved => match p.decision(&who) {
            Ok(d) => {
                p.approved = true;
                p.error = None;
                fx.push(Effect::Decide(d));
            }
            Err(e) => p.error = Some(e.to_string()),
        },
        other => return Some(other),
    }
    None
}

/// The diff and compare screens: opening them, searching, scrolling
/// sideways, moving between hunks and files; and the raw log toggle.
fn viewing(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    if let Some(Dialog::TestSource { index, .. }) = app.dialog {
        // n/p in a test's source: the next or previous test.
        let n = super::commands::matrix_tests(app).len().max(1);
        match action {
            Action::NextMatch => show_test(app, (index + 1) % n, fx),
            Action::PrevMatch => show_test(app, (index + n - 1) % n, fx),
            _ => {}
        }
        return;
    }
    match action {
        Action::Evidence => {
            app.evidence = match app.evidence {
                Some(_) => None,
                None => Some(super::app::Evidence::default()),
            };
        }
        Action::Diff => {
            if let Some(c) = app.focused() {
                let id = c.info.id.clone();
                if app.diff_view.candidate != id {
                    app.diff_view.file = 0;
                    app.diff_view.scroll = 0;
                }
                app.diff_view.candidate = id.clone();
                app.diff_view.mark = None;
                app.diff_from_detail = false;
                app.pending_jump = None;
                app.screen = Screen::Diff;
                fx.push(Effect::LoadDiff(id));
            }
        }
        Action::Compare if app.candidates.len() > 1 => {
            // The other side: the best-ranked candidate that is not the
            // focused one — the pick, or its runner-up when the pick is
            // focused.
            let best_other = app.ranking.as_ref().and_then(|r| {
                r.positions
                    .iter()
                    .filter_map(|p| app.index_of(&p.candidate))
                    .find(|&i| i != app.focus)
            });
            if let Some(i) = best_other {
                app.compare_b = i;
            }
            if app.compare_b == app.focus {
                app.compare_b = (app.focus + 1) % app.candidates.len();
            }
            app.screen = Screen::Compare;
            load_compare(app, fx);
        }
        Action::ToggleSideBySide => app.diff_view.side_by_side = !app.diff_view.side_by_side,
        Action::Search => {
            app.search = Some(super::search::Search {
                query: String::new(),
                editing: true,
            })
        }
        Action::NextMatch => find(app, Toward::Next),
        Action::PrevMatch => find(app, Toward::Prev),
        Action::ScrollLeft => app.hscroll = app.hscroll.saturating_sub(HSTEP),
        Action::ScrollRight => {
            app.hscroll = (app.hscroll + HSTEP).min(widest_line(app).saturating_sub(HSTEP))
        }
        Action::ToggleRawLogs => app.raw_logs = !app.raw_logs,
        Action::NextHunk | Action::PrevHunk | Action::NextFile | Action::PrevFile => {
            navigate(app, action)
        }
        // Only the actions above are routed here.
        _ => {}
    }
}

/// What the human does to the focused candidate: override, escalate,
/// select, finalize, jump out to an editor or a shell, copy.
fn acting(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    match action {
        Action::Override => start_override(app),
        Action::Escalate => {
            if let Some(c) = app.focused() {
                app.dialog = Some(Dialog::Escalate {
                    candidate: c.info.id.clone(),
                    input: String::new(),
                    error: None,
                });
            }
        }
        Action::Select => {
            if let Some(c) = app.focused() {
                let id = c.info.id.clone();
                open_select(app, id);
            }
        }
        Action::Finalize => start_finalize(app, fx),
        Action::Answer => open_question(app),
        Action::Jump(kind) => {
            if let Some(c) = app.focused() {
                fx.push(Effect::Jump(crate::jump::Jump {
                    kind,
                    candidate: c.info.id.clone(),
                    dir: c.info.worktree.clone().into(),
                    confirmed: false,
                }));
            }
        }
        Action::Copy => {
            if let Some(c) = app.focused() {
                app.dialog = Some(Dialog::Copy {
                    candidate: c.info.id.clone(),
                });
            }
        }
        Action::JumpHazards(jump, hazards) => {
            app.dialog = Some(Dialog::Hazards { jump, hazards });
        }
        // Only the actions above are routed here.
        _ => {}
    }
}

/// The retry and cancel dialogs, and typing in a dialog.
fn asking(app: &mut App, action: Action) {
    match action {
        Action::Retry => {
            if let Some(c) = app.focused() {
                let mut text = String::from("Please fix what the checks found:\n");
                text.push_str(&c.failing_issues().join("\n"));
                app.dialog = Some(Dialog::Retry {
                    candidate: c.info.id.clone(),
                    input: text,
                    error: None,
                });
            }
        }
        Action::CancelCandidate => {
            if let Some(c) = app.focused() {
                app.dialog = Some(Dialog::Cancel {
                    candidate: Some(c.info.id.clone()),
                });
            }
        }
        Action::CancelRun => app.dialog = Some(Dialog::Cancel { candidate: None }),
        Action::Input(ch) => {
            if let Some(s) = input_of(app) {
                s.push(ch);
            }
        }
        Action::Backspace => {
            if let Some(s) = input_of(app) {
                s.pop();
            }
        }
        // Only the actions above are routed here.
        _ => {}
    }
}
