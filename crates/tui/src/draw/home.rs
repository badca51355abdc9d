//! Drawing the home screen: a header, the table of runs, a dialog or the
//! help when open, and the status bar (which always keeps `? help`).

use super::centered;
use crate::home::{age, keys, Home, HomeDialog, HELP};
use crate::theme::Theme;
use rascal_core::model::state::State;
use rascal_core::text::{ellipsis, pad, pad_left, sanitize, width};
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

fn state_style(t: &Theme, s: Option<State>) -> Style {
    match s {
        Some(State::Queued) => t.pending,
        Some(State::Running) => t.running,
        Some(State::Pass) => t.pass,
        Some(State::Warn) => t.warn,
        Some(State::Fail | State::Interrupted) | None => t.fail,
        Some(State::Cancelled) => t.off.add_modifier(Modifier::BOLD),
        Some(State::Escalated) => t.warn.add_modifier(Modifier::BOLD),
        Some(State::Impossible) => t.warn.add_modifier(Modifier::ITALIC),
        Some(State::Contested) => t.warn.add_modifier(Modifier::BOLD | Modifier::REVERSED),
    }
}

pub fn draw(frame: &mut Frame, home: &Home) {
    let t = &home.theme;
    let area = frame.area();
    if area.height < 3 {
        return;
    }
    let n = home.rows.len();
    let running = home
        .rows
        .iter()
        .filter(|r| r.state == Some(State::Running))
        .count();
    let mut head = vec![
        Span::styled(" rascal ", t.title.add_modifier(Modifier::BOLD)),
        Span::styled(format!("· {} · ", sanitize(&home.repo)), t.text),
        Span::styled(rascal_core::text::plural(n as u64, "run"), t.text),
    ];
    if running > 0 {
        head.push(Span::styled(format!(" · {running} running"), t.running));
    }
    frame.render_widget(
        Paragraph::new(Line::from(head)),
        Rect::new(area.x, area.y, area.width, 1),
    );
    let table = Rect::new(area.x, area.y + 1, area.width, area.height - 2);
    draw_table(frame, home, table);
    status_bar(
        frame,
        t,
        home.flash.as_deref(),
        &keys(home),
        Rect::new(area.x, area.y + area.height - 1, area.width, 1),
    );
    if home.help {
        help(frame, home, area);
    } else if home.dialog.is_some() {
        dialog(frame, home, area);
    }
}

fn draw_table(frame: &mut Frame, home: &Home, area: Rect) {
    let t = &home.theme;
    let w = area.width as usize;
    let mut lines = vec![Line::from(Span::styled(
        format!(
            " {} {} {} {} {}  task",
            pad("RUN", 17),
            pad("STATE", 11),
            pad_left("CAND", 4),
            pad_left("AGE", 4),
            pad_left("DISK", 9)
        ),
        t.dim.add_modifier(Modifier::BOLD),
    ))];
    if home.rows.is_empty() {
        lines.push(Line::from(""));
        lines.push(Line::from(Span::styled(
            " no runs yet — press n to start one (or: rascal run \"INSTRUCTION\")",
            t.text,
        )));
        if let Err(e) = &home.agents {
            lines.push(Line::from(Span::styled(
                format!(" {}", ellipsis(&sanitize(e), w.saturating_sub(2))),
                t.warn,
            )));
        }
    }
    let shown = home.visible_rows();
    for (i, r) in home.rows.iter().enumerate().skip(home.top).take(shown) {
        let sel = i == home.sel;
        let disk = match (r.disk, r.workspaces) {
            (Some(b), _) if b > 0 => rascal_engine::gc::human_bytes(b),
            _ => "–".into(),
        };
        let id = format!(" {} ", pad(&ellipsis(&r.id, 17), 17));
        let state = format!("{} ", pad(&r.state_text(), 11));
        let nums = format!(
            "{} {} {}  ",
            pad_left(&r.candidates.to_string(), 4),
            pad_left(&age(home.now_ms, r.started_at), 4),
            pad_left(&disk, 9)
        );
        let rest = w.saturating_sub(width(&id) + width(&state) + width(&nums));
        let decided = r.decided(rest < 100);
        let task_w = if decided.is_empty() {
            rest
        } else {
            rest.saturating_sub(width(&decided) + 3).max(rest.min(20))
        };
        let task = ellipsis(
            &sanitize(r.instruction.lines().next().unwrap_or("")),
            task_w,
        );
        let room = rest.saturating_sub(width(&task) + 3);
        let state_style = if r.tampered {
            t.fail.add_modifier(Modifier::BOLD)
        } else {
            state_style(t, r.state)
        };
        let mut spans = vec![
            Span::styled(id, t.text),
            Span::styled(state, state_style),
            Span::styled(nums, t.dim),
            Span::styled(task, t.text),
        ];
        if !decided.is_empty() && room > 4 {
            spans.push(Span::styled(
                format!(" · {}", ellipsis(&sanitize(&decided), room)),
                if r.finalized.is_some() {
                    t.pass
                } else {
                    t.warn
                },
            ));
        }
        let mut line = Line::from(spans);
        if sel {
            line = line.patch_style(t.selected);
            let used = line.width();
            if used < w {
                line.spans
                    .push(Span::styled(" ".repeat(w - used), t.selected));
            }
        }
        lines.push(line);
    }
    if home.rows.len() > home.top + shown {
        lines.push(Line::from(Span::styled(
            format!(" ↓ {} more", home.rows.len() - home.top - shown),
            t.dim,
        )));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// Hints that fit `area`; the last two (quit, help) always stay, the
/// others are dropped from the end of the list first.
pub fn status_bar(
    frame: &mut Frame,
    t: &Theme,
    flash: Option<&str>,
    hints: &[(&str, &str)],
    area: Rect,
) {
    let w = area.width as usize;
    let mut spans = Vec::new();
    let cost = |k: &str, d: &str| width(k) + width(d) + 4;
    let split = hints.len().saturating_sub(2);
    let (rest, kept) = hints.split_at(split);
    let mut used: usize = kept.iter().map(|(k, d)| cost(k, d)).sum();
    if let Some(msg) = flash {
        let room = w.saturating_sub(used + 3).max(10);
        let msg = ellipsis(&sanitize(msg), room);
        used += width(&msg) + 3;
        spans.push(Span::styled(format!(" {msg} "), t.warn));
        spans.push(Span::raw(" "));
    }
    let mut shown = Vec::new();
    for (k, d) in rest {
        let c = cost(k, d);
        if used + c > w {
            break;
        }
        used += c;
        shown.push((k, d));
    }
    for (k, d) in shown.into_iter().chain(kept.iter().map(|(k, d)| (k, d))) {
        spans.push(Span::styled(format!(" {k} "), t.key));
        spans.push(Span::styled(format!(" {d} "), t.status_bar));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn dialog(frame: &mut Frame, home: &Home, area: Rect) {
    let t = &home.theme;
    let Some(d) = &home.dialog else { return };
    let mut lines: Vec<Line> = Vec::new();
    let title = match d {
        HomeDialog::New { input, error } => {
            let agents = match &home.agents {
                Ok(a) => a.join(", "),
                Err(e) => e.clone(),
            };
            lines.push(Line::from(vec![
                Span::styled("Agents: ", t.dim),
                Span::styled(sanitize(&agents), t.text),
                Span::styled("  (from .rascal/config.yaml at HEAD)", t.dim),
            ]));
            lines.push(Line::from(Span::styled("What should they do?", t.dim)));
            lines.push(Line::from(vec![
                Span::styled(format!("> {}", sanitize(input)), t.text),
                Span::styled("▏", t.selected),
            ]));
            if let Some(e) = error {
                lines.push(Line::from(Span::styled(sanitize(e), t.error)));
            }
            lines.push(Line::from(""));
            lines.push(Line::from(Span::styled("Enter start · Esc cancel", t.dim)));
            " new run "
        }
        HomeDialog::Delete { run } => {
            let r = home.rows.iter().find(|r| &r.id == run);
            let size = r
                .and_then(|r| r.disk)
                .map(|b| format!(" ({})", rascal_engine::gc::human_bytes(b)))
                .unwrap_or_default();
            let cands = r
                .map(|r| rascal_core::text::plural(r.candidates, "candidate"))
                .unwrap_or_default();
            lines.push(Line::from(format!(
                "Remove the workspaces of {run}{size}, {cands}?"
            )));
            lines.push(Line::from(Span::styled(
                "Its record stays: show, report and verify keep working; the diffs cannot be opened again.",
                t.dim,
            )));
            lines.push(Line::from(""));
            lines.push(Line::from(vec![
                Span::styled(" y ", t.key),
                Span::styled(" remove   ", t.text),
                Span::styled(" n ", t.key),
                Span::styled(" keep", t.text),
            ]));
            " delete workspaces "
        }
    };
    let h = (lines.len() as u16 + 2).min(area.height);
    let rect = centered(area, 76, h + 1);
    super::boxed(frame, t, rect, title, lines);
}

fn help(frame: &mut Frame, home: &Home, area: Rect) {
    let t = &home.theme;
    let kw = HELP.iter().map(|(k, _)| width(k)).max().unwrap_or(4) + 2;
    let mut lines: Vec<Line> = HELP
        .iter()
        .map(|(k, d)| {
            Line::from(vec![
                Span::styled(
                    format!(" {}", pad(k, kw)),
                    t.text.add_modifier(Modifier::BOLD),
                ),
                Span::styled(*d, t.text),
            ])
        })
        .collect();
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        " states: RUNNING · PASS · WARN · FAIL · CANCELLED · ESCALATED · INTERRUPTED · TAMPERED",
        t.dim,
    )));
    let rect = centered(area, 78, lines.len() as u16 + 2);
    super::boxed(frame, t, rect, " home · any key closes ", lines);
}
