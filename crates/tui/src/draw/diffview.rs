//! The diff view: file list with per-file +/−, then the current file
//! unified or side by side, syntax-highlighted (visible lines only, cached),
//! with intraline changes emphasised.

use crate::app::App;
use crate::diff::{Diff, DiffFile, DiffLine, LineKind};
use rascal_core::text::{ellipsis, plural, sanitize, width};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;
use unicode_segmentation::UnicodeSegmentation;

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
        let (said, style) = match &diff.unreadable {
            Some(why) => (
                format!("{}: {}", sanitize(&v.candidate), sanitize(why)),
                t.warn,
            ),
            None => (
                format!("{} changed nothing (yet)", sanitize(&v.candidate)),
                t.dim,
            ),
        };
        let w = area.width.saturating_sub(2) as usize;
        frame.render_widget(
            Paragraph::new(super::wrapped(&said, w, usize::MAX, style))
                .block(Block::default().padding(ratatui::widgets::Padding::left(1))),
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
    let at = crate::search::position(
        &app.search
            .as_ref()
            .map(|s| crate::search::hits(diff, &s.query))
            .unwrap_or_default(),
        (v.file, v.scroll),
    );
    let block = block.title_bottom(bottom_line(app, &at));
    let inner = block.inner(right);
    frame.render_widget(block, right);
    let lines = if v.side_by_side {
        side_by_side(app, f, v.scroll, inner)
    } else {
        let mark = v.mark.filter(|(mf, _)| *mf == v.file).map(|(_, l)| l);
        unified(
            app,
            f,
            v.scroll,
            (inner.height as usize, inner.width as usize),
            mark,
        )
    };
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The bottom border of a diff screen: the search prompt (as the log
/// filter shows it) or the search and which match the view is on (`at`,
/// like `2/5`), and how far the view is scrolled right.
pub fn bottom_line(app: &App, at: &str) -> Line<'static> {
    let t = &app.theme;
    let mut spans = Vec::new();
    match &app.search {
        Some(s) if s.editing => {
            spans.push(Span::styled(format!(" /{}▏", sanitize(&s.query)), t.title));
            spans.push(Span::styled(" Enter finds · Esc cancels ", t.dim));
        }
        Some(s) if s.active() => {
            spans.push(Span::styled(format!(" /{} ", sanitize(&s.query)), t.title));
            spans.push(Span::styled(
                format!(" match {at} · n/N · Esc clears "),
                t.dim,
            ));
        }
        _ => {}
    }
    if app.hscroll > 0 {
        spans.push(Span::styled(
            format!(
                " ← {} scrolled right ",
                plural(app.hscroll as u64, "column")
            ),
            t.dim,
        ));
    }
    Line::from(spans)
}

fn file_list(frame: &mut Frame, app: &App, diff: &Diff, cur: usize, area: Rect) {
    let t = &app.theme;
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border)
        .title(Span::styled(
            format!(
                " {} +{} −{} ",
                plural(diff.files.len() as u64, "file"),
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

/// Columns of the unified gutter: two line numbers and a space.
const GUTTER: usize = 9;

/// One file's lines in unified form, from `scroll`, `rows` of them, each
/// `cols` wide; line `mark` (an issue's, jumped to) marked `▶` in the
/// gutter.
pub fn unified(
    app: &App,
    f: &DiffFile,
    scroll: usize,
    (rows, cols): (usize, usize),
    mark: Option<usize>,
) -> Vec<Line<'static>> {
    f.lines
        .iter()
        .enumerate()
        .skip(scroll)
        .take(rows)
        .map(|(i, l)| {
            let (no, gap) = if mark == Some(i) {
                (app.theme.selected, Span::styled("▶", app.theme.selected))
            } else {
                (app.theme.line_no, Span::raw(" "))
            };
            let mut spans = vec![
                Span::styled(num(l.old), no),
                Span::styled(num(l.new), no),
                gap,
            ];
            spans.extend(line_row(app, &f.path, l, cols.saturating_sub(GUTTER)));
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
                    return Line::from(line_row(app, &f.path, l, area.width as usize));
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

/// One side of a side-by-side row, exactly `width` columns so both
/// columns keep the same width.
fn cell(
    app: &App,
    path: &str,
    l: Option<&DiffLine>,
    width: usize,
    left: bool,
) -> Vec<Span<'static>> {
    let Some(l) = l else {
        return vec![Span::raw(" ".repeat(width))];
    };
    let n = if left { l.old } else { l.new };
    let mut spans = vec![Span::styled(num(n), app.theme.line_no), Span::raw(" ")];
    spans.extend(line_row(app, path, l, width.saturating_sub(5)));
    spans
}

/// A diff line drawn exactly `cols` wide: its `+`/`-` marker, its text
/// (syntax colours, the changed part emphasised, search matches marked)
/// seen from the diff screens' horizontal scroll, `‹` where text is
/// hidden on the left and `›` where it goes on past the right edge, and
/// added/removed lines tinted to the end of the row.
pub fn line_row(app: &App, path: &str, l: &DiffLine, cols: usize) -> Vec<Span<'static>> {
    let t = &app.theme;
    let (mark, tint) = match l.kind {
        LineKind::Add => ("+", Some(t.diff_add_line)),
        LineKind::Del => ("-", Some(t.diff_del_line)),
        LineKind::Context => (" ", None),
        LineKind::Hunk | LineKind::Meta => ("", None),
    };
    let mut text = line_spans(app, path, l, false);
    if let Some(tint) = tint {
        // Under the emphasis and the matches, which keep their own colours.
        text = text.into_iter().map(|s| s.patch_style(tint)).collect();
        if let Some(range) = l.emph {
            let emph = if l.kind == LineKind::Add {
                t.diff_add_emph
            } else {
                t.diff_del_emph
            };
            text = overlay(text, range, emph);
        }
    }
    let query = app.search.as_ref().map(|s| s.query.as_str()).unwrap_or("");
    for range in crate::search::ranges(&l.text, query) {
        text = overlay(text, range, t.search_match);
    }
    let base = tint.unwrap_or_default();
    let mut out = Vec::new();
    if !mark.is_empty() && cols > 0 {
        let marker = match l.kind {
            LineKind::Add => t.diff_add,
            _ => t.diff_del,
        };
        out.push(Span::styled(mark, marker.patch(base)));
    }
    let room = cols.saturating_sub(width(mark));
    let edge = t.dim.patch(base);
    out.extend(window(text, app.hscroll, room, edge));
    let used: usize = out.iter().map(|s| width(&s.content)).sum();
    if used < cols {
        out.push(Span::styled(" ".repeat(cols - used), base));
    }
    out
}

/// `spans` seen through `cols` columns starting `skip` columns in: `‹` in
/// the first column when text is hidden to the left, `›` in the last when
/// text goes on past the right edge (both in `edge` style). Wide
/// characters cut by an edge become spaces, so columns stay aligned.
pub fn window(
    spans: Vec<Span<'static>>,
    skip: usize,
    cols: usize,
    edge: Style,
) -> Vec<Span<'static>> {
    if cols == 0 {
        return Vec::new();
    }
    let total: usize = spans.iter().map(|s| width(&s.content)).sum();
    let left = skip > 0 && total > 0;
    let mut room = cols - usize::from(left);
    let right = total > skip + room;
    if right {
        room = room.saturating_sub(1);
    }
    let mut out = Vec::new();
    if left {
        out.push(Span::styled("‹", edge));
    }
    let (mut col, mut used) = (0usize, 0usize);
    for s in spans {
        let mut kept = String::new();
        for g in s.content.graphemes(true) {
            let w = width(g);
            let (start, end) = (col, col + w);
            col = end;
            if end <= skip || used >= room {
                continue;
            }
            if start < skip {
                // A wide character cut by the left edge.
                let n = (end - skip).min(room - used);
                kept.push_str(&" ".repeat(n));
                used += n;
            } else if used + w > room {
                kept.push_str(&" ".repeat(room - used));
                used = room;
            } else {
                kept.push_str(g);
                used += w;
            }
        }
        if !kept.is_empty() {
            out.push(Span::styled(kept, s.style));
        }
    }
    if right {
        if used < room {
            out.push(Span::raw(" ".repeat(room - used)));
        }
        out.push(Span::styled("›", edge));
    }
    out
}

/// A diff line's text: marker, syntax colours when available, diff colours
/// otherwise (no emphasis, no tint: [`line_row`] adds those).
pub fn line_spans(app: &App, path: &str, l: &DiffLine, marker: bool) -> Vec<Span<'static>> {
    let t = &app.theme;
    let (mark, base) = match l.kind {
        LineKind::Add => ("+", t.diff_add),
        LineKind::Del => ("-", t.diff_del),
        LineKind::Context => (" ", t.text),
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
    spans.extend(code);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn text(spans: &[Span]) -> String {
        spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn window_marks_cut_lines_at_both_edges() {
        let e = Style::default();
        let s = || vec![Span::raw("abcdefghij")];
        assert_eq!(text(&window(s(), 0, 10, e)), "abcdefghij");
        assert_eq!(text(&window(s(), 0, 6, e)), "abcde›");
        // Text starts at the scroll column, after the `‹`.
        assert_eq!(text(&window(s(), 3, 6, e)), "‹defg›");
        assert_eq!(text(&window(s(), 5, 6, e)), "‹fghij");
        assert_eq!(text(&window(s(), 20, 6, e)), "‹");
        assert_eq!(text(&window(vec![Span::raw("")], 0, 6, e)), "");
    }

    #[test]
    fn window_keeps_columns_when_a_wide_character_is_cut() {
        let e = Style::default();
        let w = |skip, cols| {
            let out = window(vec![Span::raw("日本語テキスト")], skip, cols, e);
            (
                text(&out),
                out.iter().map(|s| width(&s.content)).sum::<usize>(),
            )
        };
        assert_eq!(w(0, 6), ("日本 ›".to_string(), 6));
        assert_eq!(w(1, 6), ("‹ 本 ›".to_string(), 6));
        assert_eq!(w(0, 20), ("日本語テキスト".to_string(), 14));
    }

    #[test]
    fn window_keeps_each_spans_style() {
        use ratatui::style::Color;
        let red = Style::default().fg(Color::Red);
        let out = window(
            vec![Span::raw("ab"), Span::styled("cdef", red)],
            2,
            4,
            Style::default(),
        );
        assert_eq!(text(&out), "‹cd›");
        assert_eq!(out[1].content, "cd");
        assert_eq!(out[1].style, red);
    }
}
