//! `update(state, action) → effects`: the only place the TUI's state
//! changes. Effects are what the shell must do (load a diff, send a
//! decision, stop agents, quit); `update` itself does no I/O.

use super::action::Action;
use super::app::{blockers_text, App, Dialog, FinalizeDialog, Screen, STRIP};
use super::decision::{Decision, DecisionKind};
use super::diff::Diff;
use super::search::{flat_hits, hits, step, Toward};
use crate::model::decision::{accept_skipped, blockers, not_run};
use crate::model::verdict::Status;

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
        Action::Run(ev, at) => {
            app.apply(&ev, at);
            if let crate::model::event::RunEvent::LogSegment(seg) = ev.as_ref() {
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
        Action::FocusNext | Action::FocusPrev | Action::FocusCandidate(_) => {
            focus(app, action, &mut fx)
        }
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
                    crate::config::spec::SPECS_DIR,
                    crate::text::slug(&instruction)
                ),
                text,
            }),
            Err(e) => p.error = Some(e),
        },
        Action::PlanApprove | Action::Submit if !p.approved => match p.decision(&who) {
            Ok(d) => {
                p.approved = true;
                p.error = None;
                fx.push(Effect::Decide(d));
            }
            Err(e) => p.error = Some(e),
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

/// The log view: the top of the log (or of the filter), pages read from
/// the log file, searches of it, and following it again.
fn logs(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    match action {
        Action::Top => {
            let rows = app.height as u64;
            let on_log = app.screen == Screen::Dashboard && !app.help && app.dialog.is_none();
            let filtered = on_log && app.found_shown(app.focus);
            match app.focused_mut() {
                // The filter's first match.
                Some(_) if filtered => fx.extend(scroll(app, -(i64::MAX / 4))),
                // The whole log, from its file's first line.
                Some(c) if on_log && c.logs.file_lines > c.logs.len() as u64 => {
                    let id = c.info.id.clone();
                    if let Some((from, count)) = c.logs.view_file(Some(0), rows) {
                        fx.push(Effect::LoadLog {
                            candidate: id,
                            from,
                            count,
                        });
                    }
                }
                _ => fx.extend(scroll(app, -(i64::MAX / 4))),
            }
        }
        Action::Bottom => fx.extend(scroll(app, i64::MAX / 4)),
        Action::LogLoaded {
            candidate,
            first,
            lines,
        } => {
            let color = app.color;
            if let Some(c) = app.candidates.iter_mut().find(|c| c.info.id == candidate) {
                c.logs.loaded(first, entries(lines, color));
            }
        }
        Action::LogSearched {
            candidate,
            query,
            from,
            upto,
            ring_from,
            hits,
            more,
            first,
            lines,
        } => fx.extend(searched(
            app,
            &candidate,
            &query,
            (from, upto, ring_from),
            (hits, more),
            first,
            lines,
        )),
        Action::FoundLoaded {
            candidate,
            query,
            first,
            lines,
        } => {
            let color = app.color;
            if let Some(c) = app.candidates.iter_mut().find(|c| c.info.id == candidate) {
                if let Some(f) = c.found.as_mut().filter(|f| f.query == query) {
                    f.loaded(first, entries(lines, color));
                }
            }
        }
        Action::Follow => {
            if let Some(c) = app.focused_mut() {
                c.logs.resume();
                if let Some(f) = c.found.as_mut() {
                    f.top = None;
                }
            }
        }
        // Only the actions above are routed here.
        _ => {}
    }
}

/// What the dialogs come back with: the override dialog's toggle, and
/// finalizing's preview, commit and pull request.
fn dialog_answers(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    match action {
        Action::OpenPr => match &app.summary.finalized {
            Some(f) if !f.pr_command.is_empty() => {
                app.flash = Some("opening the pull request with gh…".into());
                fx.push(Effect::OpenPr(f.pr_command.clone()));
            }
            _ => app.flash = Some("nothing finalized yet: F finalizes the selection".into()),
        },
        Action::Toggle => match &mut app.dialog {
            Some(Dialog::Override {
                left, with_skipped, ..
            }) if !left.skipped.is_empty() => *with_skipped = !*with_skipped,
            Some(Dialog::Finalize(d)) if !d.busy => d.open_pr = !d.open_pr,
            _ => {}
        },
        Action::FinalizePreviewed(r) => {
            if let Some(Dialog::Finalize(d)) = &mut app.dialog {
                match r {
                    Ok(p) if p.candidate == d.candidate => d.preview = Some(p),
                    Ok(_) => {}
                    Err(e) => d.error = Some(e),
                }
            }
        }
        Action::FinalizeDone(r) => match r {
            Ok(msg) => {
                if matches!(app.dialog, Some(Dialog::Finalize(_))) {
                    app.dialog = None;
                }
                app.flash = Some(msg);
            }
            Err(e) => match &mut app.dialog {
                Some(Dialog::Finalize(d)) => {
                    d.busy = false;
                    d.error = Some(e);
                }
                _ => app.flash = Some(format!("not finalized: {e}")),
            },
        },
        Action::PrOpened(r) => {
            app.flash = Some(match r {
                Ok(out) => format!("pull request: {out}"),
                Err(e) => e,
            })
        }
        // Only the actions above are routed here.
        _ => {}
    }
}

/// A click, and the diffs loaded for the diff and compare screens.
fn loaded(app: &mut App, action: Action) {
    match action {
        Action::Click(x, y) if app.screen == Screen::Dashboard && app.dialog.is_none() => {
            let area = ratatui::layout::Rect::new(0, 0, app.width, app.height);
            let layout = super::draw::dashboard::layout_of(app, area);
            if let Some((i, _)) = layout
                .cells
                .iter()
                .find(|(_, r)| x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height)
            {
                app.focus = *i;
            } else if let Some((i, _)) = layout
                .tabs
                .iter()
                .find(|(_, r)| x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height)
            {
                app.focus = *i;
            }
        }
        Action::DiffLoaded { candidate, text } => {
            let diff = Diff::parse(&text);
            if candidate == app.diff_view.candidate {
                if let Some((path, line)) = app.pending_jump.take() {
                    if let Some((f, l)) = diff.locate(&path, line) {
                        app.diff_view.jump(f, l);
                    }
                }
                let nfiles = diff.files.len();
                app.diff_view.file = app.diff_view.file.min(nfiles.saturating_sub(1));
            }
            app.diffs.insert(candidate, diff);
        }
        Action::CompareLoaded { a, b, text } => {
            app.compare_diff = Some(((a, b), Diff::parse(&text)));
        }
        Action::DiffUnreadable { candidate, why } => {
            app.diffs.insert(candidate, Diff::unreadable(why));
        }
        Action::CompareUnreadable { a, b, why } => {
            app.compare_diff = Some(((a, b), Diff::unreadable(why)));
        }
        Action::TestSourceLoaded { index, found: read } => {
            if let Some(Dialog::TestSource {
                index: shown,
                found,
                ..
            }) = &mut app.dialog
            {
                if *shown == index {
                    *found = Some(read);
                }
            }
        }
        // Only the actions above are routed here.
        _ => {}
    }
}

fn focus(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    let n = app.candidates.len();
    if n == 0 {
        return;
    }
    if app.screen == Screen::Compare {
        // In compare, digits pick the other side; Tab moves the focused side.
        match action {
            Action::FocusCandidate(i) if i < n => {
                if i == app.focus {
                    app.focus = app.compare_b;
                }
                app.compare_b = i;
            }
            Action::FocusNext => app.focus = (app.focus + 1) % n,
            Action::FocusPrev => app.focus = (app.focus + n - 1) % n,
            _ => return,
        }
        if app.compare_b == app.focus {
            app.compare_b = (app.focus + 1) % n;
        }
        app.compare_scroll = 0;
        load_compare(app, fx);
        return;
    }
    app.focus = match action {
        Action::FocusNext => (app.focus + 1) % n,
        Action::FocusPrev => (app.focus + n - 1) % n,
        Action::FocusCandidate(i) if i < n => i,
        _ => app.focus,
    };
    app.detail_sel = 0;
    fx.extend(search_log(app, app.focus));
    if app.screen == Screen::Diff {
        let id = app.candidates[app.focus].info.id.clone();
        app.diff_view.candidate = id.clone();
        app.diff_view.file = 0;
        app.diff_view.scroll = 0;
        app.diff_view.mark = None;
        fx.push(Effect::LoadDiff(id));
    }
}

fn load_compare(app: &mut App, fx: &mut Vec<Effect>) {
    let a = app.candidates[app.focus].info.id.clone();
    let b = app.candidates[app.compare_b].info.id.clone();
    fx.push(Effect::LoadCompare(a, b));
}

fn scroll(app: &mut App, delta: i64) -> Option<Effect> {
    let by = |cur: usize| -> usize {
        if delta < 0 {
            cur.saturating_sub(delta.unsigned_abs() as usize)
        } else {
            cur.saturating_add(delta as usize)
        }
    };
    if app.help {
        let max = super::draw::help::max_scroll(app);
        app.help_scroll = by(app.help_scroll).min(max);
        return None;
    }
    if let Some(Dialog::TestSource { found, scroll, .. }) = &mut app.dialog {
        let rows = match found {
            Some(Ok(s)) => s.lines.len(),
            _ => 0,
        };
        *scroll = by(*scroll).min(rows.saturating_sub(1));
        return None;
    }
    if let Some(Dialog::Finalize(d)) = &mut app.dialog {
        let rows = d
            .preview
            .as_ref()
            .map(|p| p.pr_body.lines().count())
            .unwrap_or(0);
        d.scroll = by(d.scroll).min(rows.saturating_sub(1));
        return None;
    }
    match app.screen {
        Screen::Dashboard => {
            let rows = app.height as u64;
            if app.found_shown(app.focus) {
                let filter = app.filter.clone().unwrap_or_default();
                let c = app.focused_mut()?;
                let m = super::search::Matcher::new(&filter);
                let f = c.found.as_ref()?;
                let live = c.logs.live(f.ring_from, &m).len();
                let f = c.found.as_mut()?;
                f.scroll(delta, live, log_rows(rows as usize));
                return load_found(c, log_rows(rows as usize), live);
            }
            if let Some(c) = app.focused_mut() {
                return scroll_log(c, delta, rows);
            }
        }
        Screen::Detail => {
            let rows = app.detail_rows().len();
            app.detail_sel = by(app.detail_sel).min(rows.saturating_sub(1));
        }
        Screen::Diff => {
            let max = app
                .diffs
                .get(&app.diff_view.candidate)
                .and_then(|d| d.files.get(app.diff_view.file))
                .map(|f| f.lines.len())
                .unwrap_or(0);
            app.diff_view.scroll = by(app.diff_view.scroll).min(max.saturating_sub(1));
        }
        Screen::Compare if app.evidence.is_some() => {
            let max = super::draw::evidence::max_scroll(app);
            if let Some(e) = &mut app.evidence {
                e.scroll = by(e.scroll).min(max);
            }
        }
        Screen::Compare => {
            let max = app
                .compare_diff
                .as_ref()
                .map(|(_, d)| d.files.iter().map(|f| f.lines.len() + 1).sum::<usize>())
                .unwrap_or(0);
            app.compare_scroll = by(app.compare_scroll).min(max.saturating_sub(1));
        }
        Screen::Plan => {}
    }
    None
}

/// Scroll a candidate's log: within the ring, then above it through the
/// log file (loading a window around the view), and back.
fn scroll_log(c: &mut super::app::Candidate, delta: i64, rows: u64) -> Option<Effect> {
    let id = c.info.id.clone();
    let load = |range: Option<(u64, u64)>| {
        range.map(|(from, count)| Effect::LoadLog {
            candidate: id.clone(),
            from,
            count,
        })
    };
    let logs = &mut c.logs;
    if let Some(o) = &logs.older {
        let top = o.top as i64 + delta;
        if delta > 0 && top.max(0) as u64 + rows >= logs.file_lines {
            // The end of the file is the live tail.
            logs.resume();
            return None;
        }
        return load(logs.view_file(Some(top.max(0) as u64), rows));
    }
    let above = logs.file_lines > logs.len() as u64;
    if delta < 0 && above && logs.offset + 1 >= logs.len() {
        // Past the ring's top: its first line is about the file's
        // `file_lines - len`th.
        let top = (logs.file_lines - logs.len() as u64) as i64 + delta;
        return load(logs.view_file(Some(top.max(0) as u64), rows));
    }
    if delta < 0 {
        logs.scroll_up(delta.unsigned_abs() as usize);
    } else {
        logs.scroll_down(delta as usize);
    }
    None
}

fn open(app: &mut App, fx: &mut Vec<Effect>) {
    match app.screen {
        Screen::Dashboard => {
            // Open on the first failed check (its layer, its row), not on
            // a passing one, unless the chosen layer has a failure itself.
            if let Some(c) = app.focused() {
                let fails = |l: crate::model::verdict::Layer| {
                    c.reports
                        .iter()
                        .any(|r| r.layer == l && r.status == Status::Fail)
                };
                if !fails(app.selected_layer()) {
                    if let Some(i) = STRIP.iter().position(|l| fails(*l)) {
                        app.layer_sel = i;
                    }
                }
            }
            app.screen = Screen::Detail;
            app.detail_sel = app
                .focused()
                .and_then(|c| {
                    app.detail_rows()
                        .iter()
                        .position(|&(ri, _)| c.reports[ri].status == Status::Fail)
                })
                .unwrap_or(0);
        }
        Screen::Detail => {
            // Jump from an issue to its line in the diff.
            let rows = app.detail_rows();
            let Some(&(ri, ii)) = rows.get(app.detail_sel) else {
                return;
            };
            let Some(c) = app.focused() else { return };
            let r = &c.reports[ri];
            let issue = ii.and_then(|i| r.issues.get(i)).or(r.issues.first());
            let id = c.info.id.clone();
            let target = issue.and_then(|i| i.path.clone().map(|p| (p, i.line)));
            app.diff_view.candidate = id.clone();
            app.diff_view.file = 0;
            app.diff_view.scroll = 0;
            app.diff_view.mark = None;
            if let Some((path, line)) = &target {
                if let Some((f, l)) = app.diffs.get(&id).and_then(|d| d.locate(path, *line)) {
                    app.diff_view.jump(f, l);
                }
                app.pending_jump = Some((path.clone(), *line));
            }
            app.diff_from_detail = true;
            app.screen = Screen::Diff;
            fx.push(Effect::LoadDiff(id));
        }
        Screen::Compare if app.evidence.is_some() => {
            if !super::commands::matrix_tests(app).is_empty() {
                show_test(app, 0, fx);
            }
        }
        Screen::Compare => {
            if let Some(c) = app.focused() {
                let id = c.info.id.clone();
                open_select(app, id);
            }
        }
        Screen::Diff | Screen::Plan => {}
    }
}

/// Show test `index` of the agreement matrix: its dialog, waiting for the
/// shell to read its source from its author's change.
fn show_test(app: &mut App, index: usize, fx: &mut Vec<Effect>) {
    let Some(t) = super::commands::matrix_tests(app).get(index).cloned() else {
        return;
    };
    app.dialog = Some(Dialog::TestSource {
        index,
        found: None,
        scroll: 0,
    });
    fx.push(Effect::LoadTestSource {
        index,
        author: t.author,
        name: t.name,
    });
}

fn back(app: &mut App) {
    if app.dialog.take().is_some() {
        return;
    }
    if app.filter_editing {
        app.filter_editing = false;
        app.filter = None;
        for c in &mut app.candidates {
            c.found = None;
        }
        return;
    }
    if app.help {
        app.help = false;
        return;
    }
    if app.search.take().is_some() {
        return;
    }
    app.screen = match app.screen {
        Screen::Diff if app.pending_from_detail() => Screen::Detail,
        _ => Screen::Dashboard,
    };
}

fn navigate(app: &mut App, action: Action) {
    if app.screen == Screen::Compare {
        return navigate_compare(app, action);
    }
    let Some(diff) = app.diffs.get(&app.diff_view.candidate) else {
        return;
    };
    let nfiles = diff.files.len();
    if nfiles == 0 {
        return;
    }
    let v = &mut app.diff_view;
    match action {
        Action::NextFile => {
            v.file = (v.file + 1).min(nfiles - 1);
            v.scroll = 0;
        }
        Action::PrevFile => {
            v.file = v.file.saturating_sub(1);
            v.scroll = 0;
        }
        Action::NextHunk => {
            let f = &diff.files[v.file.min(nfiles - 1)];
            match f.hunks.iter().find(|&&h| h > v.scroll) {
                Some(&h) => v.scroll = h,
                None if v.file + 1 < nfiles => {
                    v.file += 1;
                    v.scroll = diff.files[v.file].hunks.first().copied().unwrap_or(0);
                }
                None => {}
            }
        }
        Action::PrevHunk => {
            let f = &diff.files[v.file.min(nfiles - 1)];
            match f.hunks.iter().rev().find(|&&h| h < v.scroll) {
                Some(&h) => v.scroll = h,
                None if v.file > 0 => {
                    v.file -= 1;
                    v.scroll = diff.files[v.file].hunks.last().copied().unwrap_or(0);
                }
                None => v.scroll = 0,
            }
        }
        _ => {}
    }
}

fn navigate_compare(app: &mut App, action: Action) {
    let Some((_, d)) = &app.compare_diff else {
        return;
    };
    // Flat row offsets: each file is a title row plus its lines.
    let mut starts = Vec::new();
    let mut hunks = Vec::new();
    let mut at = 0;
    for f in &d.files {
        starts.push(at);
        hunks.extend(f.hunks.iter().map(|h| at + 1 + h));
        at += 1 + f.lines.len();
    }
    let cur = app.compare_scroll;
    let list = match action {
        Action::NextFile | Action::PrevFile => &starts,
        _ => &hunks,
    };
    let next = match action {
        Action::NextFile | Action::NextHunk => list.iter().find(|&&s| s > cur).copied(),
        _ => list.iter().rev().find(|&&s| s < cur).copied(),
    };
    if let Some(n) = next {
        app.compare_scroll = n;
    }
}

fn start_override(app: &mut App) {
    let Some(layer) = app.override_layer() else {
        if let Some(c) = app.focused() {
            app.flash = Some(format!(
                "nothing to override: {} has no failing, warning or skipped check there",
                c.info.id
            ));
        }
        return;
    };
    // The strip shows which layer the dialog is about.
    if let Some(i) = STRIP.iter().position(|&l| l == layer) {
        app.layer_sel = i;
    }
    let Some(c) = app.focused() else { return };
    // The check: the selected one in the detail, else the layer's first
    // failing check not yet overridden, then a warning, then a skipped one.
    let first = |list: &[(crate::model::verdict::Layer, String)]| {
        list.iter()
            .find(|(l, _)| *l == layer)
            .map(|(_, check)| (check.clone(), None))
    };
    let warning = c
        .reports
        .iter()
        .find(|r| r.layer == layer && r.status == Status::Warn)
        .map(|r| (r.check.clone(), None));
    let mut target = first(&c.blockers.failing)
        .or(warning)
        .or_else(|| first(&c.blockers.skipped));
    if app.screen == Screen::Detail {
        if let Some(&(ri, ii)) = app.detail_rows().get(app.detail_sel) {
            let r = &c.reports[ri];
            if matches!(r.status, Status::Fail | Status::Warn | Status::Skipped) {
                let rule = ii.and_then(|i| r.issues.get(i)).map(|i| i.rule.clone());
                target = Some((r.check.clone(), rule));
            }
        }
    }
    let Some((check, rule)) = target else {
        app.flash = Some(format!("nothing to override: {layer} did not fail"));
        return;
    };
    let candidate = c.info.id.clone();
    let kind = DecisionKind::Override {
        layer,
        check: check.clone(),
        rule: rule.clone(),
    };
    // What would be left once this override is recorded: the dialog says
    // so, and offers to accept the skipped checks in the same step.
    let left = match app.summary.candidates.iter().find(|s| s.id == candidate) {
        Some(s) => {
            let mut ds = s.current_decisions().to_vec();
            ds.push(decision(app, Some(candidate.clone()), kind, "?"));
            blockers(&s.reports, &ds)
        }
        None => Default::default(),
    };
    app.dialog = Some(Dialog::Override {
        candidate,
        layer,
        check,
        rule,
        input: String::new(),
        error: None,
        left,
        with_skipped: false,
    });
}

/// `a` on a contested run: its question, the tests that separate the
/// candidates as examples, answered with one digit.
fn open_question(app: &mut App) {
    let Some(r) = app.ranking.as_ref() else {
        return;
    };
    let lines = r.question(8);
    if lines.is_empty() {
        return;
    }
    app.dialog = Some(Dialog::Question {
        candidates: r.question_candidates().into_iter().take(9).collect(),
        lead: r.question_lead(),
        lines,
    });
}

/// The select dialog for `candidate`; one that did not pass needs a reason.
fn open_select(app: &mut App, candidate: String) {
    let cand = app.candidates.iter().find(|c| c.info.id == candidate);
    // It declared the task impossible: there is no verified change to
    // select, whatever a reason says.
    if let Some(why) = cand
        .filter(|c| c.impossible.is_some())
        .and_then(|c| c.select_refusal.clone())
    {
        app.flash = Some(format!("{why} — retry it (r) or choose another"));
        return;
    }
    let refusal = cand.and_then(|c| c.select_refusal.clone());
    // A combined candidate with new code is a human's choice: with a
    // reason, like one that did not pass.
    let new_code =
        cand.and_then(|c| crate::layers::provenance::needs_reason(&c.info.id, &c.reports));
    app.dialog = Some(Dialog::Select {
        candidate,
        input: String::new(),
        refusal,
        new_code,
        error: None,
    });
}

/// `F`: confirm finalizing the selected candidate (or the focused one,
/// selected on confirmation, when nothing is).
fn start_finalize(app: &mut App, fx: &mut Vec<Effect>) {
    if app.live() {
        app.flash = Some("finalize once the run is over".into());
        return;
    }
    let (candidate, select_first) = match &app.summary.selected {
        Some(s) => (s.clone(), false),
        None => match app.focused() {
            Some(c) => (c.info.id.clone(), true),
            None => return,
        },
    };
    // A contested run has no pick for a reason: finalizing the focused one
    // would settle the disagreement without saying so.
    if let Some(why) = app
        .ranking
        .as_ref()
        .and_then(|r| r.contested.clone())
        .filter(|_| select_first)
    {
        app.flash = Some(format!(
            "no pick — answer the question (a) or select one with a reason (Space), then F: {why}"
        ));
        return;
    }
    let cand = app.candidates.iter().find(|c| c.info.id == candidate);
    if let Some(why) = cand
        .filter(|_| select_first)
        .and_then(|c| crate::layers::provenance::needs_reason(&c.info.id, &c.reports))
    {
        app.flash = Some(format!("{why} — select it with a reason first (Space)"));
        return;
    }
    let refusal = cand.and_then(|c| c.select_refusal.clone());
    app.dialog = Some(Dialog::Finalize(FinalizeDialog {
        candidate: candidate.clone(),
        select_first,
        refusal,
        ..Default::default()
    }));
    fx.push(Effect::PreviewFinalize(candidate));
}

fn input_of(app: &mut App) -> Option<&mut String> {
    match &mut app.dialog {
        Some(Dialog::Override { input, .. })
        | Some(Dialog::Escalate { input, .. })
        | Some(Dialog::Retry { input, .. })
        | Some(Dialog::Select { input, .. }) => Some(input),
        Some(Dialog::Finalize(_)) => None,
        Some(_) => None,
        None if app.filter_editing => app.filter.as_mut(),
        None => match &mut app.search {
            Some(s) if s.editing => Some(&mut s.query),
            _ => None,
        },
    }
}

/// `C` in compare: the finished run's best passing candidates go to the
/// combining agent (its candidate joins the run and streams here); when
/// combining is off or the run still goes, a line saying why.
fn combine(app: &mut App, fx: &mut Vec<Effect>) {
    if !app.meta.combine {
        app.flash = Some(
            "combining is off: add `combine: { agent: NAME, top: 3 }` to .rascal/verification.yaml and commit it".into(),
        );
        return;
    }
    if app.live() {
        app.flash =
            Some("the run is still going: combine once every candidate has finished".into());
        return;
    }
    app.flash = Some("combining: the combining agent writes a new candidate…".into());
    app.screen = Screen::Dashboard;
    fx.push(Effect::Decide(decision(
        app,
        None,
        DecisionKind::Combine { from: Vec::new() },
        "",
    )));
}

fn decision(app: &App, candidate: Option<String>, kind: DecisionKind, reason: &str) -> Decision {
    Decision {
        candidate,
        kind,
        who: app.who.clone(),
        reason: reason.trim().to_string(),
        at_ms: app.now_ms,
    }
}

/// Enter: ends editing the filter or the search, or confirms the open
/// dialog (its decision recorded and sent to the run).
fn submit(app: &mut App, fx: &mut Vec<Effect>) {
    if submit_search(app, fx) {
        return;
    }
    let Some(d) = app.dialog.clone() else { return };
    let made = match d {
        Dialog::Override {
            candidate,
            layer,
            check,
            rule,
            input,
            with_skipped,
            ..
        } => {
            if input.trim().is_empty() {
                if let Some(Dialog::Override { error, .. }) = &mut app.dialog {
                    *error = Some("a reason is required".into());
                }
                return;
            }
            let kind = DecisionKind::Override { layer, check, rule };
            return submit_override(app, fx, candidate, kind, &input, with_skipped);
        }
        Dialog::Escalate {
            candidate, input, ..
        } => {
            if input.trim().is_empty() {
                if let Some(Dialog::Escalate { error, .. }) = &mut app.dialog {
                    *error = Some("a note is required: say what the human should look at".into());
                }
                return;
            }
            decision(app, Some(candidate), DecisionKind::Escalate, &input)
        }
        Dialog::Retry {
            candidate, input, ..
        } => {
            if input.trim().is_empty() {
                if let Some(Dialog::Retry { error, .. }) = &mut app.dialog {
                    *error = Some("feedback is required".into());
                }
                return;
            }
            decision(
                app,
                Some(candidate),
                DecisionKind::Retry {
                    feedback: input.trim().to_string(),
                },
                "retry with feedback",
            )
        }
        Dialog::Select {
            candidate,
            input,
            refusal,
            new_code,
            ..
        } => {
            if (refusal.is_some() || new_code.is_some()) && input.trim().is_empty() {
                if let Some(Dialog::Select { error, .. }) = &mut app.dialog {
                    *error = Some(
                        if refusal.is_some() {
                            "a reason is required to select a candidate that did not pass"
                        } else {
                            "a reason is required to choose code no candidate wrote"
                        }
                        .into(),
                    );
                }
                return;
            }
            decision(app, Some(candidate), DecisionKind::Select, &input)
        }
        Dialog::Finalize(f) => return confirm_finalize(app, f, fx),
        Dialog::Cancel { .. } => return choose(app, 'y', fx),
        Dialog::Quit => return choose(app, 's', fx),
        Dialog::Copy { .. } => return choose(app, 'p', fx),
        Dialog::TestSource { .. } => {
            app.dialog = None;
            return;
        }
        Dialog::Hazards { .. } => {
            // Enter does not open a workspace that may run code: `y` does.
            return;
        }
        // A digit answers: Enter alone says nothing.
        Dialog::Question { .. } => return,
    };
    app.dialog = None;
    app.flash = Some(format!(
        "recorded: {} {}",
        made.kind.name(),
        made.candidate.clone().unwrap_or_else(|| "run".into())
    ));
    app.apply_decision(&made);
    fx.push(Effect::Decide(made));
}

/// Enter while editing the log filter (the whole log is searched) or the
/// search (the first match is found). False when neither was edited.
fn submit_search(app: &mut App, fx: &mut Vec<Effect>) -> bool {
    if app.filter_editing {
        app.filter_editing = false;
        if app.filter.as_deref() == Some("") {
            app.filter = None;
        }
        for c in &mut app.candidates {
            c.found = None;
        }
        fx.extend(search_log(app, app.focus));
        return true;
    }
    if let Some(s) = &mut app.search {
        if s.editing {
            s.editing = false;
            if s.query.is_empty() {
                app.search = None;
            } else {
                find(app, Toward::Here);
            }
            return true;
        }
    }
    false
}

/// Confirm an override (`kind`) with its reason: with `with_skipped`,
/// every skipped check is accepted in the same step; the flash says where
/// that leaves the candidate.
fn submit_override(
    app: &mut App,
    fx: &mut Vec<Effect>,
    candidate: String,
    kind: DecisionKind,
    input: &str,
    with_skipped: bool,
) {
    let first = decision(app, Some(candidate.clone()), kind, input);
    let mut made = vec![first];
    if with_skipped {
        if let Some(s) = app.summary.candidates.iter().find(|s| s.id == candidate) {
            let mut ds = s.current_decisions().to_vec();
            ds.extend(made.iter().cloned());
            for kind in accept_skipped(&s.reports, &ds) {
                made.push(decision(
                    app,
                    Some(candidate.clone()),
                    kind,
                    &not_run(input),
                ));
            }
        }
    }
    app.dialog = None;
    let accepted = made.len() - 1;
    for d in made {
        app.apply_decision(&d);
        fx.push(Effect::Decide(d));
    }
    // Say where that leaves the candidate.
    let after = app
        .candidates
        .iter()
        .find(|c| c.info.id == candidate)
        .map(|c| match (c.effective, c.blockers.is_empty()) {
            (Some(v), true) => format!(" · now {v}"),
            (_, _) => format!(" · still {}: {}", c.state, blockers_text(&c.blockers)),
        })
        .unwrap_or_default();
    let more = if accepted > 0 {
        format!(" (+{accepted} skipped accepted)")
    } else {
        String::new()
    };
    app.flash = Some(format!("recorded: override {candidate}{more}{after}"));
}

/// Enter in the finalize dialog: refused with a message when the
/// candidate did not pass; else select it first (when nothing was) and
/// ask the shell to finalize. The dialog stays until the result is in.
fn confirm_finalize(app: &mut App, f: FinalizeDialog, fx: &mut Vec<Effect>) {
    if f.busy {
        return;
    }
    if f.refusal.is_some() {
        // The dialog already says why; this says what to do.
        let msg = "finalize refuses a candidate that did not pass — override its failures first (o), or choose another".to_string();
        if let Some(Dialog::Finalize(d)) = &mut app.dialog {
            d.error = Some(msg);
        }
        return;
    }
    if f.select_first {
        let d = decision(
            app,
            Some(f.candidate.clone()),
            DecisionKind::Select,
            "selected to finalize",
        );
        app.apply_decision(&d);
        fx.push(Effect::Decide(d));
    }
    if let Some(Dialog::Finalize(d)) = &mut app.dialog {
        d.busy = true;
        d.select_first = false;
        d.error = None;
    }
    fx.push(Effect::Finalize {
        candidate: f.candidate,
        open_pr: f.open_pr,
    });
}

fn choose(app: &mut App, ch: char, fx: &mut Vec<Effect>) {
    match app.dialog.clone() {
        Some(Dialog::Quit) => match ch {
            's' | 'y' | 'q' => {
                app.quit = true;
                app.dialog = None;
                fx.push(Effect::Quit { stop: true });
            }
            'l' if app.meta.detachable => {
                app.quit = true;
                app.dialog = None;
                fx.push(Effect::Quit { stop: false });
            }
            'l' => {
                app.flash = Some(
                    "process agents stop with rascal; only docker agents can be left running"
                        .into(),
                )
            }
            'n' => app.dialog = None,
            _ => {}
        },
        Some(Dialog::Cancel { candidate }) => match ch {
            'y' => {
                app.dialog = None;
                let d = decision(
                    app,
                    candidate.clone(),
                    DecisionKind::Cancel,
                    "cancelled from the TUI",
                );
                app.apply_decision(&d);
                fx.push(Effect::Decide(d));
                fx.push(match candidate {
                    Some(id) => Effect::CancelCandidate(id),
                    None => Effect::CancelRun,
                });
            }
            'n' => app.dialog = None,
            _ => {}
        },
        Some(Dialog::Question {
            candidates, lines, ..
        }) if ch == '0' => {
            // Neither is right: send one back with the example as its
            // feedback (the focused one when it was asked about).
            let focused = app.focused().map(|c| c.info.id.clone());
            let Some(c) = focused
                .filter(|f| candidates.contains(f))
                .or_else(|| candidates.first().cloned())
            else {
                return;
            };
            let mut input = String::from("Neither candidate is right here:\n");
            for l in &lines {
                input.push_str(&format!("  {}\n", l.split(" (by ").next().unwrap_or(l)));
            }
            input.push_str("What is right: ");
            app.dialog = Some(Dialog::Retry {
                candidate: c,
                input,
                error: None,
            });
        }
        Some(Dialog::Question {
            candidates, lines, ..
        }) => {
            let Some(c) = ch
                .to_digit(10)
                .and_then(|d| candidates.get((d as usize).checked_sub(1)?))
            else {
                return;
            };
            app.dialog = None;
            let first = lines
                .first()
                .map(|l| l.split(" (by ").next().unwrap_or(l))
                .unwrap_or("");
            let d = decision(
                app,
                Some(c.clone()),
                DecisionKind::Select,
                &format!("answered the question: {c} is right here ({first})"),
            );
            app.flash = Some(format!("recorded: {c} is right here — selected"));
            app.apply_decision(&d);
            fx.push(Effect::Decide(d));
        }
        Some(Dialog::Copy { candidate }) => {
            if let Some(what) = crate::jump::CopyWhat::from_key(ch) {
                app.dialog = None;
                fx.push(Effect::Copy { candidate, what });
            }
        }
        Some(Dialog::Hazards { mut jump, .. }) => match ch {
            'y' => {
                app.dialog = None;
                jump.confirmed = true;
                fx.push(Effect::Jump(jump));
            }
            'n' => app.dialog = None,
            _ => {}
        },
        _ => {}
    }
}

/// Move the diff screen to a match of the search (Enter: the first at or
/// below the top row; `n`/`N`: the next / previous), wrapping around.
fn find(app: &mut App, toward: Toward) {
    let Some(query) = app.search.as_ref().map(|s| s.query.clone()) else {
        return;
    };
    let found = match app.screen {
        Screen::Diff => {
            let Some(d) = app.diffs.get(&app.diff_view.candidate) else {
                return;
            };
            let at = (app.diff_view.file, app.diff_view.scroll);
            step(&hits(d, &query), at, toward).map(|((f, l), wrapped)| {
                app.diff_view.file = f;
                app.diff_view.scroll = l;
                wrapped
            })
        }
        Screen::Compare => {
            let Some((_, d)) = &app.compare_diff else {
                return;
            };
            step(&flat_hits(d, &query), app.compare_scroll, toward).map(|(row, wrapped)| {
                app.compare_scroll = row;
                wrapped
            })
        }
        _ => return,
    };
    app.flash = match found {
        None => Some(format!("no match for `{}`", crate::text::sanitize(&query))),
        Some(true) => Some("search wrapped around".into()),
        Some(false) => None,
    };
}

/// The widest line of what the diff screen shows, in columns: how far
/// `→` can scroll.
fn widest_line(app: &App) -> usize {
    let widest = |d: &Diff| {
        d.files
            .iter()
            .flat_map(|f| &f.lines)
            .map(|l| crate::text::width(&l.text))
            .max()
            .unwrap_or(0)
    };
    match app.screen {
        Screen::Diff => app.diffs.get(&app.diff_view.candidate).map(widest),
        Screen::Compare => app.compare_diff.as_ref().map(|(_, d)| widest(d)),
        _ => None,
    }
    .unwrap_or(0)
}

/// Log lines read from a file, as the ring's entries.
fn entries(lines: Vec<super::action::LogLineRead>, color: bool) -> Vec<super::logbuf::LogEntry> {
    lines
        .into_iter()
        .map(|(stream, text, display)| match display {
            Some(d) => super::logbuf::LogBuf::entry(stream, &d, Some(&text), color),
            None => super::logbuf::LogBuf::entry(stream, &text, None, color),
        })
        .collect()
}

/// Search candidate `i`'s whole log file for the applied filter, unless
/// that search is made or under way. The lines not in the file yet are the
/// ring's.
fn search_log(app: &mut App, i: usize) -> Option<Effect> {
    let q = app.filter.clone().filter(|q| !q.is_empty())?;
    if app.filter_editing || app.found_shown(i) {
        return None;
    }
    let c = app.candidates.get_mut(i)?;
    let (upto, ring_from) = (c.logs.file_lines, c.logs.ring_from());
    c.found = Some(super::found::Found::started(&q, upto, ring_from));
    Some(Effect::SearchLog {
        candidate: c.info.id.clone(),
        query: q,
        from: 0,
        upto,
        ring_from,
    })
}

/// A segment of `candidate`'s log landed: when its filter's live lines
/// are about to leave the ring, search the file past what was searched.
fn search_more(app: &mut App, candidate: &str) -> Option<Effect> {
    let c = app.candidates.iter_mut().find(|c| c.info.id == candidate)?;
    let f = c.found.as_ref()?;
    let behind = c.logs.ring_from().saturating_sub(f.ring_from);
    if f.searching || behind < super::logbuf::CAPACITY as u64 / 2 {
        return None;
    }
    let (from, query) = (f.upto, f.query.clone());
    let (upto, ring_from) = (c.logs.file_lines, c.logs.ring_from());
    c.found.as_mut()?.searching = true;
    Some(Effect::SearchLog {
        candidate: c.info.id.clone(),
        query,
        from,
        upto,
        ring_from,
    })
}

/// A search's result landed: its matches become (or extend) the filter's.
fn searched(
    app: &mut App,
    candidate: &str,
    query: &str,
    (from, upto, ring_from): (u64, u64, u64),
    (hits, more): (Vec<u64>, u64),
    first: usize,
    lines: Vec<super::action::LogLineRead>,
) -> Option<Effect> {
    let (color, rows) = (app.color, app.height as usize);
    let filter = app.filter.clone();
    let c = app.candidates.iter_mut().find(|c| c.info.id == candidate)?;
    let f = c.found.as_mut().filter(|f| f.query == query)?;
    if from == 0 {
        f.finished(hits, more, first, entries(lines, color));
    } else {
        // More of the file: the matches after the ones listed.
        let base = f.hits.len();
        let room = super::found::HIT_CAP.saturating_sub(base);
        let extra = hits.len().saturating_sub(room) as u64;
        f.hits.extend(hits.into_iter().take(room));
        f.more += more + extra;
        f.searching = false;
        if f.top.is_none() && base + first < f.hits.len() {
            f.loaded(base + first, entries(lines, color));
        }
    }
    f.upto = upto;
    f.ring_from = ring_from;
    let m = super::search::Matcher::new(filter.as_deref().unwrap_or(""));
    let live = c.logs.live(ring_from, &m).len();
    load_found(c, log_rows(rows), live)
}

/// About the rows a log pane has in a terminal `height` high (its column's
/// frame and header lines, the title and status bars off).
fn log_rows(height: usize) -> usize {
    height.saturating_sub(10).max(1)
}

/// Ask for the filter's matches the view shows and has not loaded.
fn load_found(c: &mut super::app::Candidate, rows: usize, live: usize) -> Option<Effect> {
    let f = c.found.as_mut()?;
    let (first, count) = f.to_load(rows, live)?;
    Some(Effect::LoadFound {
        candidate: c.info.id.clone(),
        query: f.query.clone(),
        first,
        lines: f.hits[first..first + count].to_vec(),
    })
}
