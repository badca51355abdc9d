//! The log view: reading, searching and finding in a candidate's output.

use super::*;

/// The log view: the top of the log (or of the filter), pages read from
/// the log file, searches of it, and following it again.
pub(super) fn logs(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
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

/// Move the diff screen to a match of the search (Enter: the first at or
/// below the top row; `n`/`N`: the next / previous), wrapping around.
pub(super) fn find(app: &mut App, toward: Toward) {
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
        None => Some(format!(
            "no match for `{}`",
            rascal_core::text::sanitize(&query)
        )),
        Some(true) => Some("search wrapped around".into()),
        Some(false) => None,
    };
}

/// The widest line of what the diff screen shows, in columns: how far
/// `→` can scroll.
pub(super) fn widest_line(app: &App) -> usize {
    let widest = |d: &Diff| {
        d.files
            .iter()
            .flat_map(|f| &f.lines)
            .map(|l| rascal_core::text::width(&l.text))
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
fn entries(lines: Vec<crate::action::LogLineRead>, color: bool) -> Vec<crate::logbuf::LogEntry> {
    lines
        .into_iter()
        .map(|(stream, text, display)| match display {
            Some(d) => crate::logbuf::LogBuf::entry(stream, &d, Some(&text), color),
            None => crate::logbuf::LogBuf::entry(stream, &text, None, color),
        })
        .collect()
}

/// Search candidate `i`'s whole log file for the applied filter, unless
/// that search is made or under way. The lines not in the file yet are the
/// ring's.
pub(super) fn search_log(app: &mut App, i: usize) -> Option<Effect> {
    let q = app.filter.clone().filter(|q| !q.is_empty())?;
    if app.filter_editing || app.found_shown(i) {
        return None;
    }
    let c = app.candidates.get_mut(i)?;
    let (upto, ring_from) = (c.logs.file_lines, c.logs.ring_from());
    c.found = Some(crate::found::Found::started(&q, upto, ring_from));
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
pub(super) fn search_more(app: &mut App, candidate: &str) -> Option<Effect> {
    let c = app.candidates.iter_mut().find(|c| c.info.id == candidate)?;
    let f = c.found.as_ref()?;
    let behind = c.logs.ring_from().saturating_sub(f.ring_from);
    if f.searching || behind < crate::logbuf::CAPACITY as u64 / 2 {
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
    lines: Vec<crate::action::LogLineRead>,
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
        let room = crate::found::HIT_CAP.saturating_sub(base);
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
    let m = crate::search::Matcher::new(filter.as_deref().unwrap_or(""));
    let live = c.logs.live(ring_from, &m).len();
    load_found(c, log_rows(rows), live)
}

/// About the rows a log pane has in a terminal `height` high (its column's
/// frame and header lines, the title and status bars off).
pub(super) fn log_rows(height: usize) -> usize {
    height.saturating_sub(10).max(1)
}

/// Ask for the filter's matches the view shows and has not loaded.
pub(super) fn load_found(
    c: &mut crate::app::Candidate,
    rows: usize,
    live: usize,
) -> Option<Effect> {
    let f = c.found.as_mut()?;
    let (first, count) = f.to_load(rows, live)?;
    Some(Effect::LoadFound {
        candidate: c.info.id.clone(),
        query: f.query.clone(),
        first,
        lines: f.hits[first..first + count].to_vec(),
    })
}
