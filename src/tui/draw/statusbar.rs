//! The status bar: the keys valid right now (from the command table), or a
//! message.

use crate::tui::app::App;
use crate::tui::commands::status_hints;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let mut spans = Vec::new();
    if let Some(msg) = &app.flash {
        spans.push(Span::styled(format!(" {msg} "), t.warn));
        spans.push(Span::raw(" "));
    }
    for (k, d) in status_hints(app) {
        spans.push(Span::styled(format!(" {k} "), t.key));
        spans.push(Span::styled(format!(" {d} "), t.status_bar));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
