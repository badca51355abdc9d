//! The help overlay: every key, generated from the command table.

use super::centered;
use crate::model::state::State;
use crate::tui::app::{App, Mark};
use crate::tui::commands::COMMANDS;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

/// `(where, key, description)` for every command, grouped by the screens
/// it works on (a command of several screens is listed once).
pub fn entries() -> Vec<(String, &'static str, &'static str)> {
    let mut out: Vec<(String, &str, &str)> = Vec::new();
    for c in COMMANDS {
        let s = if c.screens.len() == 4 {
            "everywhere".to_string()
        } else {
            c.screens
                .iter()
                .map(|s| s.name())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !out
            .iter()
            .any(|(s2, k, d)| *s2 == s && *k == c.label && *d == c.desc)
        {
            out.push((s, c.label, c.desc));
        }
    }
    // Grouped, in the order each group first appears; everywhere first.
    let mut order: Vec<String> = vec!["everywhere".into()];
    for (s, _, _) in &out {
        if !order.contains(s) {
            order.push(s.clone());
        }
    }
    out.sort_by_key(|(s, _, _)| order.iter().position(|o| o == s));
    out
}

/// The layer strip's marks and the candidates' states, in four lines.
fn legend(app: &App) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut marks: Vec<Vec<Span>> = vec![Vec::new(), Vec::new()];
    for (i, m) in Mark::ALL.into_iter().enumerate() {
        let row = &mut marks[usize::from(i >= 4)];
        row.push(Span::styled(
            format!(" {}", m.glyph(0)),
            super::mark_style(app, m),
        ));
        row.push(Span::styled(format!(" {} ", m.meaning()), t.text));
    }
    let mut states: Vec<Vec<Span>> = vec![Vec::new(), Vec::new()];
    for (i, s) in State::ALL.into_iter().enumerate() {
        states[usize::from(i >= 5)].push(Span::styled(
            format!(" {}", s.label()),
            super::state_style(app, s),
        ));
    }
    let mut out = Vec::new();
    for (title, rows) in [("marks", marks), ("states", states)] {
        for (i, mut row) in rows.into_iter().enumerate() {
            let head = if i == 0 { title } else { "" };
            row.insert(0, Span::styled(format!("{head:<7}"), t.title));
            out.push(Line::from(row));
        }
    }
    out
}

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let mut lines = Vec::new();
    let mut last = String::new();
    for (s, k, d) in entries() {
        if s != last {
            lines.push(Line::from(Span::styled(s.clone(), t.title)));
            last = s;
        }
        lines.push(Line::from(vec![
            Span::styled(
                format!("  {k:<8}"),
                t.text.add_modifier(ratatui::style::Modifier::BOLD),
            ),
            Span::styled(d, t.text),
        ]));
    }
    lines.push(Line::from(vec![Span::styled(
        "  mouse   click a column to focus it, wheel scrolls",
        t.dim,
    )]));
    lines.extend(legend(app));
    let two = lines.len() + 2 > area.height as usize;
    let rect = centered(area, if two { 110 } else { 60 }, lines.len() as u16 + 2);
    frame.render_widget(Clear, rect);
    // Two columns when the list is taller than the screen.
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focus)
        .title(Span::styled(" keys · any key closes ", t.title));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    if two && inner.width >= 56 {
        let half = lines.len().div_ceil(2);
        let right = lines.split_off(half);
        let w = inner.width / 2;
        frame.render_widget(
            Paragraph::new(lines),
            Rect::new(inner.x, inner.y, w, inner.height),
        );
        frame.render_widget(
            Paragraph::new(right),
            Rect::new(inner.x + w, inner.y, inner.width - w, inner.height),
        );
    } else {
        frame.render_widget(Paragraph::new(lines), inner);
    }
}
