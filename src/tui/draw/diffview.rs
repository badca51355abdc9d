//! The diff view: file list with per-file +/−, then the current file
//! unified or side by side, syntax-highlighted (visible lines only, cached),
//! with intraline changes emphasised.

use crate::text::{ellipsis, fit, sanitize, width};
use crate::tui::app::App;
use crate::tui::diff::{Diff, DiffFile, DiffLine, LineKind};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let v = &app.diff_view;
    let Some(diff) = app.diffs.get(&v.candidate) else {
        frame.render_widget(
            Paragraph::new(Span::styled(" loading the diff…", t.dim)),
            area,
        );
        return;
    };
    if diff.files.is_empty() {
        frame.render_widget(
            Paragraph::new(Span::styled(
                format!(" {} changed nothing (yet)", sanitize(&v.candidate)),
                t.dim,
            )),
            area,
        );
        return;
    }
    let list_w = (area.width / 4).clamp(16, 40);
    let [left, right] =
        Layout::horizontal([Constraint::Length(list_w), Constraint::Min(10)]).areas(area);
    file_list(frame, app, diff, v.file, left);
    let f = &diff.files[v.file.min(diff.files.len() - 1)];
    let mode = if v.side_by_side {
        "side by side"
    } else {
        "unified"
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focus)
        .title(Span::styled(
            format!(
                " {} · {} · +{} −{} · {mode} ",
                sanitize(&v.candidate),
                f.path,
                f.added,
                f.removed
            ),
            t.title,
        ));
    let inner = block.inner(right);
    frame.render_widget(block, right);
    let lines = if v.side_by_side {
        side_by_side(app, f, v.scroll, inner)
    } else {
        unified(app, f, v.scroll, inner.height as usize)
    };
    frame.render_widget(Paragraph::new(lines), inner);
}

fn file_list(frame: &mut Frame, app: &App, diff: &Diff, cur: usize, area: Rect) {
    let t = &app.theme;
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border)
        .title(Span::styled(
            format!(
                " {} files +{} −{} ",
                diff.files.len(),
                diff.added(),
                diff.removed()
            ),
            t.title,
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let w = inner.width as usize;
    let h = inner.height as usize;
    let first = cur.saturating_sub(h.saturating_sub(1));
    let lines: Vec<Line> = diff
        .files
        .iter()
        .enumerate()
        .skip(first)
        .take(h)
        .map(|(i, f)| {
            let counts = format!("+{} −{} ", f.added, f.removed);
            let name = ellipsis(&f.path, w.saturating_sub(width(&counts)));
            let l = Line::from(vec![
                Span::styled(format!("+{}", f.added), t.diff_add),
                Span::styled(format!(" −{} ", f.removed), t.diff_del),
                Span::styled(name, t.text),
            ]);
            if i == cur {
                l.patch_style(t.selected)
            } else {
                l
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

fn num(n: Option<u32>) -> String {
    n.map(|n| format!("{n:>4}"))
        .unwrap_or_else(|| "    ".into())
}

/// One file's lines in unified form, from `scroll`, `rows` of them.
pub fn unified(app: &App, f: &DiffFile, scroll: usize, rows: usize) -> Vec<Line<'static>> {
    f.lines
        .iter()
        .skip(scroll)
        .take(rows)
        .map(|l| {
            let mut spans = vec![
                Span::styled(num(l.old), app.theme.line_no),
                Span::styled(num(l.new), app.theme.line_no),
                Span::raw(" "),
            ];
            spans.extend(line_spans(app, &f.path, l, true));
            Line::from(spans)
        })
        .collect()
}

fn side_by_side(app: &App, f: &DiffFile, scroll: usize, area: Rect) -> Vec<Line<'static>> {
    // Rows start where the unified line `scroll` is.
    let start = f
        .rows
        .iter()
        .position(|r| r.left.max(r.right).is_some_and(|i| i >= scroll))
        .unwrap_or(0);
    let half = (area.width as usize).saturating_sub(1) / 2;
    f.rows
        .iter()
        .skip(start)
        .take(area.height as usize)
        .map(|r| {
            let left = r.left.map(|i| &f.lines[i]);
            if let (Some(l), None) = (left, r.right) {
                if matches!(l.kind, LineKind::Hunk | LineKind::Meta) {
                    return Line::from(line_spans(app, &f.path, l, false));
                }
            }
            let mut spans = cell(app, &f.path, left, half, true);
            spans.push(Span::styled("│", app.theme.border));
            spans.extend(cell(
                app,
                &f.path,
                r.right.map(|i| &f.lines[i]),
                half,
                false,
            ));
            Line::from(spans)
        })
        .collect()
}

/// One side of a side-by-side row, padded or cut to `width` so both
/// columns keep the same width.
fn cell(
    app: &App,
    path: &str,
    l: Option<&DiffLine>,
    width: usize,
    left: bool,
) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    let mut used = 0;
    if let Some(l) = l {
        let n = if left { l.old } else { l.new };
        spans.push(Span::styled(num(n), app.theme.line_no));
        spans.push(Span::raw(" "));
        used += 5;
        for s in line_spans(app, path, l, true) {
            let room = width.saturating_sub(used);
            if room == 0 {
                break;
            }
            let (head, w) = fit(&s.content, room);
            used += w;
            if head.len() == s.content.len() {
                spans.push(s);
            } else {
                spans.push(Span::styled(head.to_string(), s.style));
                break;
            }
        }
    }
    if used < width {
        spans.push(Span::raw(" ".repeat(width - used)));
    }
    spans
}

/// A diff line's text: marker, syntax colours when available, diff colours
/// otherwise, and the intraline range emphasised.
pub fn line_spans(app: &App, path: &str, l: &DiffLine, marker: bool) -> Vec<Span<'static>> {
    let t = &app.theme;
    let (mark, base, emph) = match l.kind {
        LineKind::Add => ("+", t.diff_add, t.diff_add_emph),
        LineKind::Del => ("-", t.diff_del, t.diff_del_emph),
        LineKind::Context => (" ", t.text, t.text),
        LineKind::Hunk => return vec![Span::styled(l.text.clone(), t.diff_hunk)],
        LineKind::Meta => return vec![Span::styled(l.text.clone(), t.dim)],
    };
    let mut spans = Vec::new();
    if marker {
        spans.push(Span::styled(mark, base));
    }
    let code: Vec<Span<'static>> = app
        .theme
        .syntax
        .as_deref()
        .and_then(|th| app.highlighter.borrow_mut().line(th, path, &l.text))
        .unwrap_or_else(|| vec![Span::styled(l.text.clone(), base)]);
    match l.emph {
        Some(range) => spans.extend(overlay(code, range, emph)),
        None => spans.extend(code),
    }
    spans
}

/// Restyle the chars in `range` (char indices across all spans) with `style`.
fn overlay(spans: Vec<Span<'static>>, range: (usize, usize), style: Style) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut pos = 0;
    for s in spans {
        let chars: Vec<char> = s.content.chars().collect();
        let (start, end) = (pos, pos + chars.len());
        pos = end;
        let a = range.0.clamp(start, end) - start;
        let b = range.1.clamp(start, end) - start;
        if a == b {
            out.push(s);
            continue;
        }
        let part = |x: usize, y: usize| chars[x..y].iter().collect::<String>();
        if a > 0 {
            out.push(Span::styled(part(0, a), s.style));
        }
        out.push(Span::styled(part(a, b), s.style.patch(style)));
        if b < chars.len() {
            out.push(Span::styled(part(b, chars.len()), s.style));
        }
    }
    out
}
