//! The help overlay: every key, generated from the command table, one
//! entry per key and screen group, in an aligned key column, then the
//! legend of the layer strip's marks and the candidates' states. It
//! scrolls when it does not fit, and uses two columns only when the
//! terminal is wide enough for both.

use super::centered;
use crate::app::{App, Mark};
use crate::commands::COMMANDS;
use rascal_core::model::state::State;
use rascal_core::text::{pad, width};
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

/// The mouse is not in the command table (it has no key).
pub const MOUSE: (&str, &str) = ("mouse", "click a column to focus it, wheel scrolls");
/// Columns between the two halves of a two-column overlay.
const GAP: usize = 3;

/// `(where, key, description)` for every command, grouped by the screens
/// it works on, everywhere first. A command whose key is already part of
/// an earlier entry's label in its group (`p` after `n/p`) is left out,
/// so each key is listed once per group.
pub fn entries() -> Vec<(String, &'static str, &'static str)> {
    let mut out: Vec<(String, &str, &str)> = Vec::new();
    for c in COMMANDS {
        let s = if c.screens.len() >= 4 {
            "everywhere".to_string()
        } else {
            c.screens
                .iter()
                .map(|s| s.name())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let covered = out
            .iter()
            .any(|(s2, k, _)| *s2 == s && (*k == c.label || k.split('/').any(|p| p == c.label)));
        if !covered {
            out.push((s, c.label, c.desc));
        }
    }
    let mut order: Vec<String> = vec!["everywhere".into()];
    for (s, _, _) in &out {
        if !order.contains(s) {
            order.push(s.clone());
        }
    }
    out.sort_by_key(|(s, _, _)| order.iter().position(|o| o == s));
    out
}

/// The overlay's rows: group titles, aligned entries, the legend. The
/// second value is where each group starts (a good place to split columns).
fn rows(app: &App) -> (Vec<Line<'static>>, Vec<usize>) {
    let t = &app.theme;
    let list = entries();
    let keyw = list
        .iter()
        .map(|(_, k, _)| width(k))
        .chain([width(MOUSE.0), width("states")])
        .max()
        .unwrap_or(0);
    let entry = |k: &str, d: &str| {
        Line::from(vec![
            Span::styled(
                format!("  {}  ", pad(k, keyw)),
                t.text.add_modifier(Modifier::BOLD),
            ),
            Span::styled(d.to_string(), t.text),
        ])
    };
    let mut lines = Vec::new();
    let mut starts = Vec::new();
    let mut last = String::new();
    for (s, k, d) in list {
        if s != last {
            starts.push(lines.len());
            lines.push(Line::from(Span::styled(s.clone(), t.title)));
            last = s;
        }
        lines.push(entry(k, d));
    }
    lines.push(entry(MOUSE.0, MOUSE.1));
    starts.push(lines.len());
    lines.push(Line::from(Span::styled("legend", t.title)));
    lines.extend(legend(app, keyw));
    (lines, starts)
}

/// The layer strip's marks and the candidates' states, four per row,
/// under the key column's width.
fn legend(app: &App, keyw: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let head = |s: &str| Span::styled(format!("  {}  ", pad(s, keyw)), t.title);
    let mut out = Vec::new();
    for (i, chunk) in Mark::ALL.chunks(4).enumerate() {
        let mut row = vec![head(if i == 0 { "marks" } else { "" })];
        for (j, m) in chunk.iter().enumerate() {
            if j > 0 {
                row.push(Span::styled("  ", t.text));
            }
            row.push(Span::styled(m.glyph(0), super::mark_style(app, *m)));
            row.push(Span::styled(format!(" {}", m.meaning()), t.text));
        }
        out.push(Line::from(row));
    }
    for (i, chunk) in State::ALL.chunks(4).enumerate() {
        let mut row = vec![head(if i == 0 { "states" } else { "" })];
        for (j, s) in chunk.iter().enumerate() {
            if j > 0 {
                row.push(Span::styled("  ", t.text));
            }
            row.push(Span::styled(s.label(), super::state_style(app, *s)));
        }
        out.push(Line::from(row));
    }
    out
}

/// Where the overlay goes in `area` and how its rows are laid out.
struct Layout {
    rect: Rect,
    /// The rows of each column (one or two).
    columns: Vec<Vec<Line<'static>>>,
    /// Rows that fit in a column.
    visible: usize,
}

impl Layout {
    fn longest(&self) -> usize {
        self.columns.iter().map(Vec::len).max().unwrap_or(0)
    }

    fn max_scroll(&self) -> usize {
        self.longest().saturating_sub(self.visible)
    }
}

fn layout(app: &App, area: Rect) -> Layout {
    let (lines, starts) = rows(app);
    let colw = lines.iter().map(Line::width).max().unwrap_or(0);
    let fits = lines.len() + 2 <= area.height as usize;
    let two_wide = 2 * colw + GAP + 2 <= area.width as usize;
    let columns = if !fits && two_wide {
        // Split at the group start nearest the middle.
        let half = lines.len().div_ceil(2);
        let at = starts
            .iter()
            .copied()
            .filter(|&s| s > 0)
            .min_by_key(|&s| s.abs_diff(half))
            .unwrap_or(half);
        let mut left = lines;
        let right = left.split_off(at);
        vec![left, right]
    } else {
        vec![lines]
    };
    let n = columns.len();
    let tall = columns.iter().map(Vec::len).max().unwrap_or(0);
    let w = (n * colw + (n - 1) * GAP + 2) as u16;
    let rect = centered(area, w, tall as u16 + 2);
    let visible = rect.height.saturating_sub(2) as usize;
    Layout {
        rect,
        columns,
        visible,
    }
}

/// The screen area the overlay is drawn in, from the terminal size.
fn body(app: &App) -> Rect {
    Rect::new(0, 2, app.width, app.height.saturating_sub(3))
}

/// How far the overlay scrolls at the current terminal size.
pub fn max_scroll(app: &App) -> usize {
    layout(app, body(app)).max_scroll()
}

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let lay = layout(app, area);
    let scroll = app.help_scroll.min(lay.max_scroll());
    let total = lay.longest();
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focus)
        .title(Span::styled(" keys · Esc, ? or q closes ", t.title));
    if lay.max_scroll() > 0 {
        let last = (scroll + lay.visible).min(total);
        let more = if scroll < lay.max_scroll() {
            "↓ more (j, PgDn)"
        } else {
            "↑ back up (k, g)"
        };
        block = block.title_bottom(Span::styled(
            format!(" {more} · rows {}–{last} of {total} ", scroll + 1),
            t.title,
        ));
    }
    frame.render_widget(Clear, lay.rect);
    let inner = block.inner(lay.rect);
    frame.render_widget(block, lay.rect);
    let n = lay.columns.len() as u16;
    let colw = if n > 1 {
        (inner.width - GAP as u16) / 2
    } else {
        inner.width
    };
    for (i, col) in lay.columns.into_iter().enumerate() {
        let x = inner.x + i as u16 * (colw + GAP as u16);
        let rows: Vec<Line> = col.into_iter().skip(scroll).take(lay.visible).collect();
        frame.render_widget(
            Paragraph::new(rows),
            Rect::new(x, inner.y, colw.min(inner.right() - x), inner.height),
        );
    }
}
