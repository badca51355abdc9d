//! Moving about the screens: loading what a screen shows, focus, scrolling,
//! opening and going back.

use super::*;

/// A click, and the diffs loaded for the diff and compare screens.
pub(super) fn loaded(app: &mut App, action: Action) {
    match action {
        Action::Click(x, y) if app.screen == Screen::Dashboard && app.dialog.is_none() => {
            let area = ratatui::layout::Rect::new(0, 0, app.width, app.height);
            let layout = crate::draw::dashboard::layout_of(app, area);
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

pub(super) fn focus(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
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

pub(super) fn load_compare(app: &mut App, fx: &mut Vec<Effect>) {
    let a = app.candidates[app.focus].info.id.clone();
    let b = app.candidates[app.compare_b].info.id.clone();
    fx.push(Effect::LoadCompare(a, b));
}

pub(super) fn scroll(app: &mut App, delta: i64) -> Option<Effect> {
    let by = |cur: usize| -> usize {
        if delta < 0 {
            cur.saturating_sub(delta.unsigned_abs() as usize)
        } else {
            cur.saturating_add(delta as usize)
        }
    };
    if app.help {
        let max = crate::draw::help::max_scroll(app);
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
                let m = crate::search::Matcher::new(&filter);
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
            let max = crate::draw::evidence::max_scroll(app);
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
fn scroll_log(c: &mut crate::app::Candidate, delta: i64, rows: u64) -> Option<Effect> {
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

pub(super) fn open(app: &mut App, fx: &mut Vec<Effect>) {
    match app.screen {
        Screen::Dashboard => {
            // Open on the first failed check (its layer, its row), not on
            // a passing one, unless the chosen layer has a failure itself.
            if let Some(c) = app.focused() {
                let fails = |l: rascal_core::model::verdict::Layer| {
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
            if !crate::commands::matrix_tests(app).is_empty() {
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
pub(super) fn show_test(app: &mut App, index: usize, fx: &mut Vec<Effect>) {
    let Some(t) = crate::commands::matrix_tests(app).get(index).cloned() else {
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

pub(super) fn back(app: &mut App) {
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

pub(super) fn navigate(app: &mut App, action: Action) {
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
