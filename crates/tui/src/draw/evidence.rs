//! The compare view's evidence pane (`e`): the comparator's whole ranking
//! with every reason, the pick, the agreement matrix with its numbered
//! tests and the similarity matrix, at the width of the screen and
//! scrolled with j/k — what the short ranking pane above cannot hold at
//! 80×24. `Enter` opens the matrix's tests' source.

use crate::app::App;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

/// The pane's lines at the screen's width (less its borders).
fn lines(app: &App) -> Vec<Line<'static>> {
    let w = app.width.saturating_sub(2) as usize;
    let mut out = super::ranking::ranking_lines(app, w);
    if !crate::commands::matrix_tests(app).is_empty() {
        out.insert(
            0,
            Line::from(Span::styled(
                "Enter: the tests' source (n/p: next/previous test)",
                app.theme.dim,
            )),
        );
    }
    out
}

/// The furthest the pane scrolls: its last line at the bottom.
pub fn max_scroll(app: &App) -> usize {
    lines(app)
        .len()
        .saturating_sub(super::ranking::bottom_rows(app.height))
}

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let all = lines(app);
    let scroll = app.evidence.map(|e| e.scroll).unwrap_or(0);
    let inner_h = area.height.saturating_sub(2) as usize;
    let more = all.len().saturating_sub(scroll + inner_h);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focus)
        .title(Span::styled(
            " evidence · ranking, agreement, similarity · e: the diff ",
            t.title,
        ))
        .title_bottom(Span::styled(
            if more > 0 {
                format!(" {more} more below · j/k scroll ")
            } else {
                String::new()
            },
            t.dim,
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let shown: Vec<Line> = all.into_iter().skip(scroll).take(inner_h).collect();
    frame.render_widget(Paragraph::new(shown), inner);
}
