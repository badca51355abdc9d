//! Compare: two candidates' changes against each other, the scoreboard
//! (verdict per layer, size, criteria, review issues, tokens), the
//! comparator's ranking with reasons and the similarity matrix.

use super::diffview::line_spans;
use super::{mark_style, verdict_style};
use crate::model::verdict::{Layer, Status};
use crate::text::{ellipsis, pad, pad_left, sanitize, width};
use crate::tui::app::{strip_name, App, Candidate, STRIP};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let n = app.candidates.len();
    if n < 2 {
        return;
    }
    let score_h = (STRIP.len() as u16 + 9).min(area.height / 2);
    let [top, bottom] =
        Layout::vertical([Constraint::Length(score_h), Constraint::Min(3)]).areas(area);
    let [score, rank] =
        Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(top);
    scoreboard(frame, app, score);
    ranking(frame, app, rank);
    pair_diff(frame, app, bottom);
}

fn criteria_met(c: &Candidate) -> String {
    let reps: Vec<_> = c.layer_reports(Layer::Criteria).collect();
    if reps.is_empty() {
        return "–".into();
    }
    let met = reps.iter().filter(|r| r.status == Status::Pass).count();
    format!("{met}/{}", reps.len())
}

fn review_issues(c: &Candidate) -> String {
    let reps: Vec<_> = c.layer_reports(Layer::Review).collect();
    if reps.is_empty() {
        return "–".into();
    }
    reps.iter()
        .map(|r| r.issues.len())
        .sum::<usize>()
        .to_string()
}

fn scoreboard(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border)
        .title(Span::styled(" scoreboard ", t.title));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let colw = ((inner.width as usize).saturating_sub(14) / app.candidates.len()).clamp(6, 18);
    // Each candidate's column: cut to leave a space, padded to the width.
    let col = |s: String| pad(&ellipsis(&s, colw - 1), colw);
    let mut head = vec![Span::styled(format!("{:<14}", ""), t.dim)];
    for (i, c) in app.candidates.iter().enumerate() {
        let tag = if i == app.focus {
            "A "
        } else if i == app.compare_b {
            "B "
        } else {
            ""
        };
        let st = if i == app.focus {
            t.title.add_modifier(Modifier::REVERSED)
        } else if i == app.compare_b {
            t.title.add_modifier(Modifier::UNDERLINED)
        } else {
            t.dim
        };
        head.push(Span::styled(
            col(format!("{tag}{} {}", i + 1, sanitize(&c.info.id))),
            st,
        ));
    }
    let mut lines = vec![Line::from(head)];
    let mut row = |label: &str, cells: Vec<Span<'static>>| {
        let mut spans = vec![Span::styled(format!("{label:<14}"), t.dim)];
        spans.extend(cells);
        lines.push(Line::from(spans));
    };
    row(
        "verdict",
        app.candidates
            .iter()
            .map(|c| match c.verdict {
                Some(v) => Span::styled(col(v.label().into()), verdict_style(app, v)),
                None => Span::styled(col(c.status_text()), t.running),
            })
            .collect(),
    );
    for layer in STRIP {
        row(
            strip_name(layer),
            app.candidates
                .iter()
                .map(|c| {
                    let m = c.mark(layer, &app.meta);
                    Span::styled(col(m.glyph(app.spinner).into()), mark_style(app, m))
                })
                .collect(),
        );
    }
    let text = |f: &dyn Fn(&Candidate) -> String| -> Vec<Span<'static>> {
        app.candidates
            .iter()
            .map(|c| Span::styled(col(f(c)), t.text))
            .collect()
    };
    row("files changed", text(&|c| c.files.to_string()));
    row("lines changed", text(&|c| c.lines.to_string()));
    row("criteria met", text(&criteria_met));
    row("review issues", text(&review_issues));
    row(
        "tokens / cost",
        text(&|c| match (c.tokens, c.cost_usd) {
            (Some(tk), Some(usd)) => format!("{tk} ${usd:.2}"),
            (Some(tk), None) => tk.to_string(),
            _ => "–".into(),
        }),
    );
    frame.render_widget(Paragraph::new(lines), inner);
}

fn ranking(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border)
        .title(Span::styled(" ranking · similarity ", t.title));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let w = inner.width as usize;
    let mut lines = Vec::new();
    match &app.ranking {
        Some(r) => {
            for p in &r.positions {
                let id = &p.candidate;
                let st = if r.pick.as_deref() == Some(id.as_str()) {
                    t.pass
                } else {
                    t.text
                };
                let head = format!("{}. {} ", p.position, sanitize(id));
                let rest = w.saturating_sub(width(&head));
                lines.push(Line::from(vec![
                    Span::styled(head, st),
                    Span::styled(ellipsis(&sanitize(&p.reason), rest), t.dim),
                ]));
            }
            lines.push(Line::from(Span::styled(
                match &r.pick {
                    Some(p) => format!("comparator's pick: {}", sanitize(p)),
                    None => "comparator's pick: none (no candidate passed)".into(),
                },
                if r.pick.is_some() { t.pass } else { t.warn },
            )));
            if let Some(j) = &r.judge {
                let said = match (&j.pick, &j.problem) {
                    (Some(p), _) => format!("judge {}: {} — {}", j.agent, p, j.reason),
                    (None, Some(why)) => format!("judge {}: not used ({why})", j.agent),
                    _ => format!("judge {}: no pick", j.agent),
                };
                lines.push(Line::from(Span::styled(
                    ellipsis(&sanitize(&said), w),
                    t.dim,
                )));
            }
            lines.push(Line::from(""));
            let mut head = vec![Span::styled(format!("{:<9}", ""), t.dim)];
            for id in &r.ids {
                head.push(Span::styled(
                    pad_left(&ellipsis(&sanitize(id), 5), 6),
                    t.dim,
                ));
            }
            lines.push(Line::from(head));
            for (i, id) in r.ids.iter().enumerate() {
                let mut spans = vec![Span::styled(pad(&ellipsis(&sanitize(id), 8), 9), t.dim)];
                for v in r.matrix.get(i).into_iter().flatten() {
                    spans.push(Span::styled(format!("{:>6.2}", v), t.text));
                }
                lines.push(Line::from(spans));
            }
        }
        None => {
            lines.push(Line::from(Span::styled(
                "– comparator off (no ranking for this run)",
                t.off,
            )));
            lines.push(Line::from(Span::styled(
                "by verdict, then smallest change:",
                t.dim,
            )));
            let mut order: Vec<&Candidate> = app.candidates.iter().collect();
            order.sort_by_key(|c| {
                (
                    c.verdict.unwrap_or(crate::model::verdict::Verdict::Fail),
                    c.lines,
                )
            });
            for (i, c) in order.iter().enumerate() {
                let v = c.verdict.map(|v| v.label()).unwrap_or("…");
                lines.push(Line::from(Span::styled(
                    ellipsis(
                        &format!(
                            "{}. {} {v} · {} lines",
                            i + 1,
                            sanitize(&c.info.id),
                            c.lines
                        ),
                        w,
                    ),
                    t.text,
                )));
            }
        }
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

fn pair_diff(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let a = &app.candidates[app.focus].info.id;
    let b = &app.candidates[app.compare_b.min(app.candidates.len() - 1)]
        .info
        .id;
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focus)
        .title(Span::styled(
            format!(" {} (−) vs {} (+) ", sanitize(b), sanitize(a)),
            t.title,
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let diff = match &app.compare_diff {
        Some(((x, y), d)) if x == a && y == b => d,
        _ => {
            frame.render_widget(Paragraph::new(Span::styled(" loading…", t.dim)), inner);
            return;
        }
    };
    if diff.files.is_empty() {
        frame.render_widget(
            Paragraph::new(Span::styled(" the two changes are identical", t.dim)),
            inner,
        );
        return;
    }
    let rows = inner.height as usize;
    let mut lines = Vec::new();
    let mut skip = app.compare_scroll;
    'files: for f in &diff.files {
        let title = std::iter::once(Line::from(Span::styled(
            format!("── {} +{} −{}", f.path, f.added, f.removed),
            t.title,
        )));
        let body = f
            .lines
            .iter()
            .map(|l| Line::from(line_spans(app, &f.path, l, true)));
        for l in title.chain(body) {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            lines.push(l);
            if lines.len() == rows {
                break 'files;
            }
        }
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
