//! The help overlay: every key, generated from the command table.

use super::centered;
use crate::tui::app::{App, Screen};
use crate::tui::commands::COMMANDS;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

/// `(screen, key, description)` for every command, grouped by screen.
pub fn entries() -> Vec<(&'static str, &'static str, &'static str)> {
    let mut out: Vec<(&str, &str, &str)> = Vec::new();
    for screen in [
        Screen::Dashboard,
        Screen::Detail,
        Screen::Diff,
        Screen::Compare,
    ] {
        for c in COMMANDS.iter().filter(|c| c.screens.contains(&screen)) {
            let all = c.screens.len() == 4;
            let s = if all { "everywhere" } else { screen.name() };
            if !out
                .iter()
                .any(|(s2, k, d)| *s2 == s && *k == c.label && *d == c.desc)
            {
                out.push((s, c.label, c.desc));
            }
        }
    }
    out.sort_by_key(|(s, _, _)| *s != "everywhere");
    out
}

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let mut lines = Vec::new();
    let mut last = "";
    for (s, k, d) in entries() {
        if s != last {
            lines.push(Line::from(Span::styled(s.to_string(), t.title)));
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
