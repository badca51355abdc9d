//! The dashboard: one column per candidate side by side; a grid when the
//! terminal is too narrow, then tabs. Only the visible log rows are built.

use super::{clock, mark_style, state_style};
use crate::app::{strip_name, App, Candidate, STRIP};
use crate::found::Row;
use crate::logbuf::LogEntry;
use rascal_core::model::log::Stream;
use rascal_core::model::state::State;
use rascal_core::text::{ellipsis, sanitize, width};
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

/// Narrowest useful column.
pub const MIN_COL: u16 = 34;
/// Lowest useful grid cell.
pub const MIN_ROW: u16 = 9;

/// Where each candidate goes: cells (candidate index, rect) and, in tab
/// mode, the tab titles' rects and — when not every title fits — how many
/// candidates have no title shown, with where that count goes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DashLayout {
    pub cells: Vec<(usize, Rect)>,
    pub tabs: Vec<(usize, Rect)>,
    pub more: Option<(usize, Rect)>,
}

/// What the tab line says for the candidates whose titles do not fit.
pub fn more_label(hidden: usize) -> String {
    format!(" +{hidden} more · Tab ")
}

/// Which titles the tab line shows: the run `[start, stop)` that holds
/// `focus`, as many from the left as fit in `width` (leaving room for the
/// count of the rest when some are left out).
fn tab_window(widths: &[u16], width: u16, focus: usize) -> (usize, usize) {
    let n = widths.len();
    let total: u32 = widths.iter().map(|w| *w as u32).sum();
    if total <= width as u32 {
        return (0, n);
    }
    let room = width.saturating_sub(width_of_more(n)) as u32;
    let fits = |start: usize| {
        let mut used = 0u32;
        let mut stop = start;
        while stop < n && used + widths[stop] as u32 <= room {
            used += widths[stop] as u32;
            stop += 1;
        }
        stop.max(start + 1).min(n)
    };
    let focus = focus.min(n - 1);
    let mut start = 0;
    while fits(start) <= focus {
        start += 1;
    }
    (start, fits(start))
}

fn width_of_more(n: usize) -> u16 {
    width(&more_label(n)) as u16
}

/// A candidate's tab title (tab mode).
pub fn tab_label(app: &App, i: usize) -> String {
    let c = &app.candidates[i];
    let v = match c.state {
        State::Running => "…",
        State::Queued => "○",
        s => s.label(),
    };
    format!(" {} {} {v} ", i + 1, sanitize(&c.info.id))
}

/// The dashboard layout of `app` for a full-screen `area`, shared by
/// drawing and mouse hit-testing.
pub fn layout_of(app: &App, area: Rect) -> DashLayout {
    let widths: Vec<u16> = (0..app.candidates.len())
        .map(|i| width(&tab_label(app, i)) as u16)
        .collect();
    layout(area, &widths, app.focus)
}

/// The dashboard layout for a full-screen `area` (header and status bar
/// excluded here) given each candidate's tab title width.
pub fn layout(area: Rect, tab_widths: &[u16], focus: usize) -> DashLayout {
    let n = tab_widths.len();
    let mut out = DashLayout::default();
    if n == 0 || area.height < 4 {
        return out;
    }
    let body = Rect::new(
        area.x,
        area.y + 2,
        area.width,
        area.height.saturating_sub(3),
    );
    let n16 = n as u16;
    let split = |r: Rect, k: u16, i: u16| -> Rect {
        let w = r.width / k;
        let x = r.x + i * w;
        let w = if i == k - 1 { r.width - i * w } else { w };
        Rect::new(x, r.y, w, r.height)
    };
    if body.width / n16 >= MIN_COL {
        for i in 0..n {
            out.cells.push((i, split(body, n16, i as u16)));
        }
        return out;
    }
    let most = (body.width / MIN_COL).max(1);
    let rows = n16.div_ceil(most);
    // As few columns as that many rows need, so the rows are even: four
    // candidates where three fit across are 2 + 2, not 3 + 1.
    let cols = n16.div_ceil(rows);
    if cols > 1 && body.height / rows >= MIN_ROW {
        let h = body.height / rows;
        for i in 0..n {
            let (r, c) = (i as u16 / cols, i as u16 % cols);
            let in_row = if r == rows - 1 { n16 - r * cols } else { cols };
            let row = Rect::new(
                body.x,
                body.y + r * h,
                body.width,
                if r == rows - 1 {
                    body.height - r * h
                } else {
                    h
                },
            );
            out.cells.push((i, split(row, in_row, c)));
        }
        return out;
    }
    // Tabs: one line of titles, the focused candidate below; when not all
    // fit, the ones around the focus and a count of the rest.
    let (start, stop) = tab_window(tab_widths, body.width, focus);
    let mut x = body.x;
    let end = body.x + body.width;
    for (i, w) in tab_widths.iter().enumerate().take(stop).skip(start) {
        let w = (*w).min(end.saturating_sub(x));
        if w == 0 {
            break;
        }
        out.tabs.push((i, Rect::new(x, body.y, w, 1)));
        x += w;
    }
    let hidden = n - out.tabs.len();
    if hidden > 0 {
        let w = width_of_more(hidden).min(end.saturating_sub(x));
        out.more = Some((hidden, Rect::new(x, body.y, w, 1)));
    }
    out.cells.push((
        focus.min(n - 1),
        Rect::new(
            body.x,
            body.y + 1,
            body.width,
            body.height.saturating_sub(1),
        ),
    ));
    out
}

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let lay = layout_of(app, area);
    if app.candidates.is_empty() {
        let body = Rect::new(
            area.x,
            area.y + 2,
            area.width,
            area.height.saturating_sub(3),
        );
        frame.render_widget(
            Paragraph::new(Span::styled(
                " waiting for the run to start…",
                app.theme.dim,
            )),
            body,
        );
        return;
    }
    if !lay.tabs.is_empty() {
        let t = &app.theme;
        for (i, r) in &lay.tabs {
            let style = if *i == app.focus { t.selected } else { t.dim };
            frame.render_widget(Paragraph::new(Span::styled(tab_label(app, *i), style)), *r);
        }
        if let Some((hidden, r)) = lay.more {
            frame.render_widget(Paragraph::new(Span::styled(more_label(hidden), t.warn)), r);
        }
    }
    for (i, rect) in &lay.cells {
        column(frame, app, *i, &app.candidates[*i], *rect);
    }
}

/// One candidate's column: its frame (title, follow state, filter), its
/// header, layer strip and standing, then as much of its log as fits.
fn column(frame: &mut Frame, app: &App, idx: usize, c: &Candidate, area: Rect) {
    let t = &app.theme;
    let focused = idx == app.focus;
    let block = column_block(app, idx, c);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let w = inner.width as usize;
    let mut lines: Vec<Line> = header_lines(app, c, w);
    lines.push(layer_strip(app, c, focused));
    // Why it stands where it stands, whole: wrapped, before the log (at
    // worst only the rule stays below it).
    let (why, style) = standing(app, c);
    let room = (inner.height as usize).saturating_sub(lines.len() + 1);
    lines.extend(super::wrapped(&why, w, room, style));
    if let Some(net) = network_line(app, c, w) {
        lines.push(net);
    }
    lines.push(Line::from(Span::styled("─".repeat(w), t.border)));
    let rows = (inner.height as usize).saturating_sub(lines.len());
    lines.extend(log_lines(app, idx, c, rows));
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The column's frame: its number and id on top; below, whether its log
/// follows, and the focused column's filter.
fn column_block(app: &App, idx: usize, c: &Candidate) -> Block<'static> {
    let t = &app.theme;
    let focused = idx == app.focus;
    let found = c.found.as_ref().filter(|_| focused && app.found_shown(idx));
    let follow = if let Some(f) = found {
        match f.top {
            None => Span::styled(" following ", t.dim),
            Some(_) => Span::styled(" paused · End resumes ", t.warn),
        }
    } else if c.logs.follow {
        Span::styled(" following ", t.dim)
    } else {
        Span::styled(format!(" paused ↑{} · End resumes ", c.logs.offset), t.warn)
    };
    let mut bottom = vec![follow];
    if let (true, Some(f)) = (focused, &app.filter) {
        bottom.push(Span::styled(format!(" /{} ", sanitize(f)), t.title));
        if let Some(note) = found_note(app, idx, c) {
            bottom.push(Span::styled(note, t.dim));
        }
    }
    let title_style = if focused {
        t.title.add_modifier(Modifier::REVERSED)
    } else {
        t.title
    };
    Block::default()
        .borders(Borders::ALL)
        .border_style(if focused { t.border_focus } else { t.border })
        .title(Span::styled(
            format!(" {} {} ", idx + 1, sanitize(&c.info.id)),
            title_style,
        ))
        .title_bottom(Line::from(bottom))
}

/// The column's header: agent, runtime, state; clocks, attempt,
/// tokens/cost.
fn header_lines(app: &App, c: &Candidate, w: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let status_style = state_style(app, c.state);
    let elapsed = c
        .elapsed_ms(app.now_ms)
        .map(clock)
        .unwrap_or_else(|| "–".into());
    let (agent_now, agent_all) = c.agent_ms(app.now_ms);
    let agent = match agent_now {
        Some(ms) if c.attempt > 1 => Some(format!("agent {}, all {}", clock(ms), clock(agent_all))),
        Some(ms) => Some(format!("agent {}", clock(ms))),
        None => None,
    };
    let cost = match (c.tokens, c.cost_usd) {
        (Some(tk), Some(usd)) => format!("{tk} tok ${usd:.2}"),
        (Some(tk), None) => format!("{tk} tok"),
        _ => "tokens –".into(),
    };
    vec![Line::from(vec![
        Span::styled(sanitize(&c.info.agent), t.text.add_modifier(Modifier::BOLD)),
        Span::styled(format!(" ({}) ", sanitize(&c.info.runtime)), t.dim),
        Span::styled(c.status_text(), status_style),
        // It passed, but the run's passing candidates disagree: no pick.
        Span::styled(
            if app.summary.state == rascal_core::model::state::State::Contested
                && matches!(
                    c.state,
                    rascal_core::model::state::State::Pass | rascal_core::model::state::State::Warn
                )
            {
                " · CONTESTED"
            } else {
                ""
            },
            state_style(app, rascal_core::model::state::State::Contested),
        ),
        Span::styled(
            if c.info.unsandboxed {
                " UNSANDBOXED"
            } else {
                ""
            },
            t.fail.add_modifier(Modifier::BOLD),
        ),
    ])]
    .into_iter()
    // More rows when one cannot hold it: clocks and cost are read whole,
    // each part on one row.
    .chain(
        parts_in_rows(
            [
                Some(format!("attempt {}: {elapsed}", c.attempt)),
                agent,
                Some(cost),
            ]
            .into_iter()
            .flatten(),
            w,
        )
        .into_iter()
        .map(|row| Line::from(Span::styled(row, t.dim))),
    )
    .collect()
}

/// `parts` joined by ` · ` in rows of at most `w` columns, a part never
/// split between rows unless it alone is wider than a row.
fn parts_in_rows(parts: impl Iterator<Item = String>, w: usize) -> Vec<String> {
    let mut rows: Vec<String> = Vec::new();
    for p in parts {
        match rows.last_mut() {
            Some(row) if width(row) + 3 + width(&p) <= w => {
                row.push_str(" · ");
                row.push_str(&p);
            }
            _ if width(&p) > w => rows.extend(rascal_core::text::wrap(&p, w)),
            _ => rows.push(p),
        }
    }
    rows
}

/// The layer strip: each layer's mark, the selected one highlighted in
/// the focused column.
fn layer_strip(app: &App, c: &Candidate, focused: bool) -> Line<'static> {
    let t = &app.theme;
    let mut strip = Vec::new();
    for (li, layer) in STRIP.iter().enumerate() {
        if li > 0 {
            strip.push(Span::styled(" ", t.dim));
        }
        let m = c.mark(*layer, &app.meta);
        let mut st = mark_style(app, m);
        if focused && li == app.layer_sel {
            st = st.patch(t.selected);
        }
        strip.push(Span::styled(
            format!("{}{}", m.glyph(app.spinner), strip_name(*layer)),
            st,
        ));
    }
    Line::from(strip)
}

/// Why the candidate stands where it stands: declared impossible,
/// escalated, still failing after overrides, overridden, its failure, or
/// its size.
fn standing(app: &App, c: &Candidate) -> (String, ratatui::style::Style) {
    let t = &app.theme;
    match (&c.verdict, &c.reason) {
        _ if c.state == State::Impossible => (
            sanitize(&format!(
                "⚐ impossible: {}",
                rascal_core::model::impossible::first_line(c.impossible.as_deref().unwrap_or(""))
            )),
            super::state_style(app, State::Impossible),
        ),
        _ if c.state == State::Escalated => {
            let (note, by) = c.escalated.clone().unwrap_or_default();
            let by = by
                .map(|w| format!(" — {}", super::who_name(&w)))
                .unwrap_or_default();
            (
                sanitize(&format!("⚑ {note}{by}")),
                t.warn.add_modifier(Modifier::BOLD),
            )
        }
        (Some(_), _) if c.state == State::Fail && c.overrides > 0 && !c.blockers.is_empty() => (
            sanitize(&format!(
                "still FAIL: {}",
                crate::app::blockers_text(&c.blockers)
            )),
            t.warn,
        ),
        (Some(v), Some(r)) if c.effective != Some(*v) => {
            (sanitize(&format!("overridden: {r}")), t.overridden)
        }
        (Some(_), Some(r)) => (sanitize(r), t.fail),
        (Some(_), None) => (
            format!(
                "{} changed",
                rascal_core::text::change_size(c.files as u64, c.lines)
            ),
            t.dim,
        ),
        _ => (String::new(), t.dim),
    }
}

/// The log rows that fit: the whole-log filter's matches when shown, else
/// the visible (filtered) lines; stderr tinted.
fn log_lines<'a>(app: &App, idx: usize, c: &'a Candidate, rows: usize) -> Vec<Line<'a>> {
    let t = &app.theme;
    let focused = idx == app.focus;
    let filter = if focused { app.filter.as_deref() } else { None };
    let shown = if focused && app.found_shown(idx) {
        found_rows(c, filter.unwrap_or(""), rows)
    } else {
        c.logs.visible(rows, filter).into_iter().map(Some).collect()
    };
    let mut lines = Vec::new();
    for e in shown {
        let Some(e) = e else {
            lines.push(Line::from(Span::styled("…", t.dim)));
            continue;
        };
        let mut l = match (&e.raw, app.raw_logs) {
            (Some(raw), true) => raw.clone(),
            _ => e.line.clone(),
        };
        if e.stream == Stream::Stderr && l.spans.iter().all(|s| s.style == Default::default()) {
            l = l.patch_style(t.stderr);
        }
        lines.push(l);
    }
    lines
}

/// The rows of the whole-log filter: its matches in the file (None where
/// a match's line is still loading), then the live lines that match.
fn found_rows<'a>(c: &'a Candidate, query: &str, rows: usize) -> Vec<Option<&'a LogEntry>> {
    let Some(f) = &c.found else {
        return Vec::new();
    };
    let m = crate::search::Matcher::new(query);
    let live = c.logs.live(f.ring_from, &m);
    f.rows(rows, live.len())
        .into_iter()
        .map(|r| match r {
            Row::Hit(i) => f.entry(i),
            Row::Live(i) => live.get(i).copied(),
        })
        .collect()
}

/// `searching the whole log…` or `12 matches in 1,000,000 lines`.
fn found_note(app: &App, idx: usize, c: &Candidate) -> Option<String> {
    if !app.found_shown(idx) {
        return None;
    }
    let f = c.found.as_ref()?;
    if f.searching && f.hits.is_empty() {
        return Some(format!(
            " searching {} lines… ",
            rascal_core::model::budget::thousands(c.logs.file_lines)
        ));
    }
    let m = crate::search::Matcher::new(&f.query);
    let total = f.total(c.logs.live(f.ring_from, &m).len());
    let more = if f.more > 0 {
        format!(
            ", first {} listed",
            rascal_core::model::budget::thousands(f.hits.len() as u64)
        )
    } else {
        String::new()
    };
    Some(format!(
        " {} in {} lines{more} ",
        match total {
            1 => "1 match".to_string(),
            n => format!("{} matches", rascal_core::model::budget::thousands(n)),
        },
        rascal_core::model::budget::thousands(c.logs.file_lines.max(c.logs.len() as u64))
    ))
}

/// `net allowlist: api.anthropic.com +1 · 4 allowed · 2 refused`, from the
/// agent's report, or the proxy's decisions seen in the log while it runs
/// (`net so far: …`). None for a candidate with no egress proxy.
fn network_line(app: &App, c: &Candidate, w: usize) -> Option<Line<'static>> {
    let t = &app.theme;
    let (head, allowed, refused) = match c.network() {
        Some(n) if n.mode == "allowlist" => {
            let hosts = match n.allow.as_slice() {
                [] => String::new(),
                [one] => format!(": {one}"),
                [one, rest @ ..] => format!(": {one} +{}", rest.len()),
            };
            let open = if n.host_open.is_some() {
                " · HOST OPEN"
            } else {
                ""
            };
            (format!("net allowlist{hosts}{open}"), n.allowed, n.refused)
        }
        Some(n) => {
            return Some(Line::from(Span::styled(
                ellipsis(&format!("net {}", sanitize(&n.mode)), w),
                t.dim,
            )))
        }
        None if c.net_seen != (0, 0) => ("net so far".to_string(), c.net_seen.0, c.net_seen.1),
        None => return None,
    };
    let mut spans = vec![Span::styled(
        ellipsis(&sanitize(&format!("{head} · {allowed} allowed")), w),
        t.dim,
    )];
    let used = width(&spans[0].content);
    if used + 3 < w {
        let style = if refused > 0 { t.warn } else { t.dim };
        spans.push(Span::styled(
            ellipsis(&format!(" · {refused} refused"), w - used),
            style,
        ));
    }
    Some(Line::from(spans))
}

#[cfg(test)]
mod tests;
