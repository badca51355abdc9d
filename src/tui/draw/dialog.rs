//! Dialogs: override (reason required), escalate, retry with feedback,
//! select the winner, cancel, and quit while candidates run.

use super::centered;
use crate::text::sanitize;
use crate::tui::app::{App, Dialog};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let Some(d) = &app.dialog else { return };
    let mut lines: Vec<Line> = Vec::new();
    let field = |label: &str, input: &str| -> Vec<Line<'static>> {
        let mut v = vec![Line::from(Span::styled(label.to_string(), t.dim))];
        let text = sanitize(input);
        let mut rows: Vec<&str> = text.split("^J").collect();
        if rows.is_empty() {
            rows.push("");
        }
        let n = rows.len();
        for (i, r) in rows.into_iter().enumerate() {
            let mut s = vec![Span::styled(format!("> {r}"), t.text)];
            if i == n - 1 {
                s.push(Span::styled("▏", t.selected));
            }
            v.push(Line::from(s));
        }
        v
    };
    let err = |e: &Option<String>| -> Option<Line<'static>> {
        e.as_ref()
            .map(|e| Line::from(Span::styled(e.clone(), t.error)))
    };
    let title = match d {
        Dialog::Override {
            candidate,
            layer,
            check,
            rule,
            input,
            error,
        } => {
            let what = match rule {
                Some(r) => format!("{layer} {check}, rule {r}"),
                None => format!("{layer} {check}"),
            };
            lines.push(Line::from(vec![
                Span::styled("Override ", t.text),
                Span::styled(sanitize(&what), t.fail),
                Span::styled(format!(" for {}", sanitize(candidate)), t.text),
            ]));
            lines.push(Line::from(Span::styled(
                format!("recorded as {}", sanitize(&app.who)),
                t.dim,
            )));
            lines.push(Line::from(""));
            lines.extend(field("Reason (required):", input));
            lines.extend(err(error));
            " override "
        }
        Dialog::Escalate { candidate, input } => {
            lines.push(Line::from(format!(
                "Escalate {} to a human reviewer",
                sanitize(candidate)
            )));
            lines.push(Line::from(""));
            lines.extend(field("Note:", input));
            " escalate "
        }
        Dialog::Retry {
            candidate,
            input,
            error,
        } => {
            lines.push(Line::from(format!(
                "Retry {} with this feedback (edit it):",
                sanitize(candidate)
            )));
            lines.push(Line::from(""));
            for l in input.lines() {
                lines.push(Line::from(Span::styled(sanitize(l), t.text)));
            }
            if let Some(last) = lines.last_mut() {
                last.spans.push(Span::styled("▏", t.selected));
            }
            lines.extend(err(error));
            " retry "
        }
        Dialog::Select { candidate, input } => {
            lines.push(Line::from(vec![
                Span::styled("Select ", t.text),
                Span::styled(sanitize(candidate), t.pass),
                Span::styled(" as the winner", t.text),
            ]));
            lines.push(Line::from(""));
            lines.extend(field("Reason (optional):", input));
            " select winner "
        }
        Dialog::Cancel { candidate } => {
            lines.push(Line::from(match candidate {
                Some(c) => format!(
                    "Cancel candidate {}? Its agent and checks stop.",
                    sanitize(c)
                ),
                None => "Cancel the whole run? Every agent and check stops.".into(),
            }));
            lines.push(Line::from(""));
            lines.push(Line::from(vec![
                Span::styled(" y ", t.key),
                Span::styled(" yes   ", t.text),
                Span::styled(" n ", t.key),
                Span::styled(" no", t.text),
            ]));
            " cancel "
        }
        Dialog::Quit => {
            let running = app
                .candidates
                .iter()
                .filter(|c| !c.finished() && !c.cancelled)
                .count();
            lines.push(Line::from(format!(
                "{running} candidate{} still running.",
                if running == 1 { " is" } else { "s are" }
            )));
            lines.push(Line::from(""));
            lines.push(Line::from(vec![
                Span::styled(" s ", t.key),
                Span::styled(" stop them and quit (the run record is kept)", t.text),
            ]));
            let leave = if app.meta.detachable { t.text } else { t.off };
            lines.push(Line::from(vec![
                Span::styled(" l ", t.key),
                Span::styled(
                    " leave docker agents running (rascal attach RUN later)",
                    leave,
                ),
            ]));
            if !app.meta.detachable {
                lines.push(Line::from(Span::styled(
                    "     (no docker agents in this run)",
                    t.off,
                )));
            }
            lines.push(Line::from(vec![
                Span::styled(" Esc ", t.key),
                Span::styled(" back", t.text),
            ]));
            " quit "
        }
    };
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        match d {
            Dialog::Quit | Dialog::Cancel { .. } => "",
            _ => "Enter confirm · Esc cancel",
        },
        t.dim,
    )));
    let h = (lines.len() as u16 + 2).min(area.height);
    let rect = centered(area, 72, h);
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focus)
        .title(Span::styled(title, t.title));
    frame.render_widget(
        Paragraph::new(lines)
            .style(t.dialog)
            .block(block)
            .wrap(Wrap { trim: false }),
        rect,
    );
}
