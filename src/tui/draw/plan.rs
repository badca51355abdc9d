//! The plan screen (plan, then execute): the planner's proposed acceptance
//! criteria with checkboxes, before any candidate starts; the open text
//! field and what was wrong with it; the constraints. Everything an agent
//! wrote is made inert before it is drawn.

use crate::text::{ellipsis, sanitize};
use crate::tui::app::App;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let Some(p) = &app.plan else { return };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focus)
        .title(Span::styled(
            format!(
                " plan by {} · approve the acceptance criteria; the candidates start on Enter ",
                sanitize(&p.agent)
            ),
            t.title,
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let cols = inner.width as usize;
    let mut lines: Vec<Line> = Vec::new();
    if let Some(why) = &p.problem {
        lines.push(Line::from(Span::styled(
            ellipsis(&format!("no usable proposal: {}", sanitize(why)), cols),
            t.fail,
        )));
        lines.push(Line::from(Span::styled(
            "add criteria with `a`, or press Enter to start without any",
            t.dim,
        )));
    }
    for (n, item) in p.items.iter().enumerate() {
        let c = &item.criterion;
        let mark = if item.keep { "[x]" } else { "[ ]" };
        let mut what = format!("{}: {}", c.kind.name(), sanitize(&c.check));
        if c.new_test {
            what.push_str(" · a new test");
        }
        if !c.required {
            what.push_str(" · optional");
        }
        if item.origin.is_none() {
            what.push_str(" · added");
        }
        let text = format!(
            "{} {mark} {}. {}   ({what})",
            if n == p.sel { "▸" } else { " " },
            n + 1,
            sanitize(&c.description)
        );
        let style = if n == p.sel {
            t.selected
        } else if item.keep {
            t.text
        } else {
            t.dim
        };
        lines.push(Line::from(Span::styled(ellipsis(&text, cols), style)));
    }
    for c in &p.constraints {
        lines.push(Line::from(Span::styled(
            ellipsis(
                &format!(
                    "      constraint: {} ({})",
                    sanitize(&c.description),
                    c.kind.name()
                ),
                cols,
            ),
            t.dim,
        )));
    }
    lines.push(Line::from(""));
    if let Some(e) = &p.edit {
        lines.push(Line::from(vec![
            Span::styled(format!("{}: ", e.field.prompt()), t.title),
            Span::styled(format!("{}█", sanitize(&e.input)), t.text),
        ]));
    }
    if let Some(err) = &p.error {
        lines.push(Line::from(Span::styled(
            ellipsis(&sanitize(err), cols),
            t.fail,
        )));
    }
    if p.approved {
        lines.push(Line::from(Span::styled(
            "approved: starting the candidates…",
            t.pass,
        )));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
