//! Layer detail: each check of the selected layer with status, duration,
//! issues (severity, rule, location, message) and the selected check's
//! output tail. `Enter` on an issue jumps to its line in the diff.

use crate::app::{App, Candidate, Mark};
use rascal_core::model::verdict::{Layer, Report, Severity, Status};
use rascal_core::text::{ellipsis, pad, sanitize, width};
use rascal_engine::human_duration as human;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;
use std::time::Duration;

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let Some(c) = app.focused() else { return };
    let layer = app.selected_layer();
    let mark = c.mark(layer, &app.meta);
    let [top, bottom] =
        Layout::vertical([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(area);
    let title = format!(
        " {} · {} {} ",
        sanitize(&c.info.id),
        mark.glyph(app.spinner),
        layer.name()
    );
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focus)
        .title(Span::styled(title, super::mark_style(app, mark)));
    let inner = block.inner(top);
    frame.render_widget(block, top);
    let rows = app.detail_rows();
    let w = inner.width as usize;
    let mut lines = Vec::new();
    if rows.is_empty() {
        let why = match mark {
            Mark::Off => "this layer is off for this run (not configured, or skipped)",
            Mark::Running => "running…",
            _ => "no report yet",
        };
        lines.push(Line::from(Span::styled(format!(" {why}"), t.dim)));
    }
    let h = inner.height as usize;
    // The selected issue's message (or why the selected check could not
    // run) is read whole: wrapped under its row, which stays in view with
    // every one of its lines.
    let selected = rows.get(app.detail_sel).map(|&(ri, ii)| match ii {
        Some(ii) => issue_lines(app, &c.reports[ri], ii, w, usize::MAX),
        None => check_lines(app, c, layer, &c.reports[ri], w),
    });
    let extra = selected.as_ref().map_or(0, |l| l.len().saturating_sub(1));
    let first = app
        .detail_sel
        .saturating_sub(h.saturating_sub(1 + extra.min(h.saturating_sub(1))));
    for (n, &(ri, ii)) in rows.iter().enumerate().skip(first) {
        if lines.len() >= h {
            break;
        }
        let r = &c.reports[ri];
        if n == app.detail_sel {
            let sel = match &selected {
                Some(l) => l.clone(),
                None => vec![check_line(app, c, layer, r, w, true)],
            };
            lines.extend(sel.into_iter().map(|l| l.patch_style(t.selected)));
            continue;
        }
        lines.push(match ii {
            None => check_line(app, c, layer, r, w, true),
            Some(ii) => issue_lines(app, r, ii, w, 1).remove(0),
        });
    }
    frame.render_widget(Paragraph::new(lines), inner);

    // Output tail of the selected check; for a declaration of
    // impossibility, the agent's reason in full.
    let output = rows
        .get(app.detail_sel)
        .map(|&(ri, _)| match (&c.reports[ri], &c.impossible) {
            (r, Some(why))
                if r.layer == Layer::Agent && r.check == rascal_core::model::impossible::CHECK =>
            {
                why.as_str()
            }
            (r, _) => r.output.as_str(),
        })
        .unwrap_or("");
    output_tail(frame, app, bottom, output);
}

/// A selected check's rows: its row, then why it could not run, whole,
/// wrapped under it.
fn check_lines(app: &App, c: &Candidate, layer: Layer, r: &Report, w: usize) -> Vec<Line<'static>> {
    let mut out = vec![check_line(app, c, layer, r, w, false)];
    const INDENT: usize = 6;
    // A test run's evidence, step by step: where its time went.
    if let Some(l) = r.ledger.as_ref().filter(|l| !l.steps.is_empty()) {
        let steps = format!("time: {}", rascal_core::model::ledger::steps_line(&l.steps));
        for mut line in super::wrapped(&steps, w.saturating_sub(INDENT), 3, app.theme.dim) {
            line.spans.insert(0, Span::raw(" ".repeat(INDENT)));
            out.push(line);
        }
    }
    if let Some(e) = &r.errored {
        for mut l in super::wrapped(
            &sanitize(e),
            w.saturating_sub(INDENT),
            usize::MAX,
            app.theme.fail,
        ) {
            l.spans.insert(0, Span::raw(" ".repeat(INDENT)));
            out.push(l);
        }
    }
    out
}

/// A check's row: status, name, duration, required or optional, and
/// whether it was overridden or could not be verified (`errored`: why,
/// cut to the row; the selected row says it whole under it instead).
fn check_line(
    app: &App,
    c: &Candidate,
    layer: Layer,
    r: &Report,
    w: usize,
    errored: bool,
) -> Line<'static> {
    let t = &app.theme;
    let (g, st) = match r.status {
        Status::Pass => ("✓", t.pass),
        Status::Warn => ("!", t.warn),
        Status::Fail => ("✗", t.fail),
        Status::Skipped => ("–", t.off),
    };
    let overridden = c.decisions.iter().any(|d| {
        matches!(&d.kind, crate::DecisionKind::Override { layer: l, check, .. }
            if *l == layer && *check == r.check)
    });
    let mut spans = vec![
        Span::styled(format!(" {g} "), st),
        Span::styled(pad(&ellipsis(&sanitize(&r.check), 28), 28), t.text),
        Span::styled(format!(" {:<7}", r.status.label()), st),
        Span::styled(
            format!(" {:>7}", human(Duration::from_millis(r.duration_ms))),
            t.dim,
        ),
        Span::styled(
            if r.required {
                "  required"
            } else {
                "  optional"
            },
            t.dim,
        ),
    ];
    if overridden {
        spans.push(Span::styled("  ⊘ overridden", t.overridden));
    }
    match &r.errored {
        Some(e) if errored => spans.push(Span::styled(
            format!("  {}", ellipsis(&sanitize(e), w.saturating_sub(50))),
            t.fail,
        )),
        Some(_) => spans.push(Span::styled("  could not run:", t.fail)),
        None => {}
    }
    Line::from(spans)
}

/// An issue's row under its check: severity, rule, location and the
/// message's first line, in at most `max` lines (wrapped under the head;
/// the last ends in `…` when it is cut).
fn issue_lines(app: &App, r: &Report, ii: usize, w: usize, max: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let i = &r.issues[ii];
    let st = match i.effective_severity(r.advisory) {
        Severity::Info => t.dim,
        Severity::Warning => t.warn,
        _ => t.fail,
    };
    let loc = i.location().unwrap_or_else(|| "-".into());
    let head = format!(
        "     {:<8} {} {} ",
        i.severity.label(),
        sanitize(&i.rule),
        sanitize(&loc)
    );
    let indent = width(&head);
    let message = sanitize(i.message.lines().next().unwrap_or(""));
    // However long the head, the message keeps a few words a line.
    let room = w.saturating_sub(indent).max(16);
    let mut out = super::wrapped(&message, room, max, t.text);
    for (n, l) in out.iter_mut().enumerate() {
        let lead = if n == 0 {
            Span::styled(head.clone(), st)
        } else {
            Span::raw(" ".repeat(indent))
        };
        l.spans.insert(0, lead);
    }
    out
}

/// The output box: the tail of the selected check's output.
fn output_tail(frame: &mut Frame, app: &App, area: Rect, output: &str) {
    let t = &app.theme;
    let out_block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border)
        .title(Span::styled(" output ", t.title));
    let out_inner = out_block.inner(area);
    frame.render_widget(out_block, area);
    let all: Vec<&str> = output.lines().collect();
    let n = out_inner.height as usize;
    let tail = &all[all.len().saturating_sub(n)..];
    let lines: Vec<Line> = tail
        .iter()
        .map(|l| Line::from(Span::styled(sanitize(l), t.text)))
        .collect();
    if lines.is_empty() {
        frame.render_widget(
            Paragraph::new(Span::styled(" (no output)", t.dim)),
            out_inner,
        );
    } else {
        frame.render_widget(Paragraph::new(lines), out_inner);
    }
}
