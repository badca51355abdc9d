//! Compare: two candidates' changes against each other, the scoreboard
//! (verdict per layer, size, criteria, review issues, tokens), the
//! comparator's ranking with reasons and the similarity matrix.

use super::diffview::{bottom_line, line_row, window};
use super::{mark_style, verdict_style};
use crate::app::{strip_name, App, Candidate, STRIP};
use rascal_core::model::state::State;
use rascal_core::model::verdict::{Layer, Status};
use rascal_core::text::{ellipsis, pad, sanitize, width};
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
    let [top, bottom] = Layout::vertical([
        Constraint::Length(super::ranking::top_height(area.height)),
        Constraint::Min(3),
    ])
    .areas(area);
    let [score, rank] =
        Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(top);
    scoreboard(frame, app, score);
    ranking(frame, app, rank);
    if app.evidence.is_some() {
        super::evidence::draw(frame, app, bottom);
    } else {
        pair_diff(frame, app, bottom);
    }
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
    let (a, b) = sides(app);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border)
        .title(Span::styled(
            format!(" scoreboard · A = {a} · B = {b} "),
            t.title,
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    // Columns as wide as the longest header needs, when there is room.
    let n = app.candidates.len();
    let want = (0..n)
        .map(|i| width(&sanitize(&app.candidates[i].info.id)) + 5)
        .max()
        .unwrap_or(0)
        .max(18);
    let colw = ((inner.width as usize).saturating_sub(14) / n).clamp(6, want);
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
            .map(|c| match (c.verdict, c.state) {
                // Where it stands now: escalated, or its verdict after the
                // overrides (`PASS ⊘ (was FAIL)`), never the raw one alone.
                (Some(_), s @ (State::Escalated | State::Cancelled | State::Impossible)) => {
                    Span::styled(col(s.label().into()), super::state_style(app, s))
                }
                (Some(v), _) => Span::styled(
                    col(c.status_text()),
                    verdict_style(app, c.effective.unwrap_or(v)),
                ),
                (None, _) => Span::styled(col(c.status_text()), t.running),
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

/// The two sides being compared: A the focused candidate (`Tab` moves
/// it), B the other one (`1`…`9` picks it).
fn sides(app: &App) -> (String, String) {
    let a = &app.candidates[app.focus].info.id;
    let b = &app.candidates[app.compare_b.min(app.candidates.len() - 1)]
        .info
        .id;
    (sanitize(a), sanitize(b))
}

fn ranking(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let title = if app.evidence.is_some() {
        " ranking · similarity "
    } else {
        " ranking · similarity · e: all of it "
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border)
        // Narrower than its title, the pane ends it with `…` (the key is
        // in the bar below and in the last line when lines are left out).
        .title(Span::styled(
            ellipsis(title, (area.width as usize).saturating_sub(2)),
            t.title,
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let mut lines = super::ranking::ranking_lines(app, inner.width as usize);
    // What does not fit is said, never cut silently.
    let room = inner.height as usize;
    if room > 0 && lines.len() > room {
        let more = lines.len() - (room - 1);
        lines.truncate(room - 1);
        lines.push(Line::from(Span::styled(
            format!(
                "… {more} more line{} · e: all of it",
                if more == 1 { "" } else { "s" }
            ),
            t.dim,
        )));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

fn pair_diff(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let a = &app.candidates[app.focus].info.id;
    let b = &app.candidates[app.compare_b.min(app.candidates.len() - 1)]
        .info
        .id;
    let (an, bn) = sides(app);
    let at = match (&app.search, &app.compare_diff) {
        (Some(s), Some((_, d))) => {
            crate::search::position(&crate::search::flat_hits(d, &s.query), app.compare_scroll)
        }
        _ => String::new(),
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focus)
        .title(Span::styled(
            format!(" − only in B = {bn} · + only in A = {an} · Tab: next A · 1-9: pick B "),
            t.title,
        ))
        .title_bottom(bottom_line(app, &at));
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
        let (said, style) = match &diff.unreadable {
            Some(why) => (sanitize(why), t.warn),
            None => ("the two changes are identical".to_string(), t.dim),
        };
        let w = inner.width.saturating_sub(1) as usize;
        frame.render_widget(
            Paragraph::new(super::wrapped(&said, w, usize::MAX, style))
                .block(Block::default().padding(ratatui::widgets::Padding::left(1))),
            inner,
        );
        return;
    }
    let rows = inner.height as usize;
    let cols = inner.width as usize;
    let mut lines = Vec::new();
    let mut skip = app.compare_scroll;
    'files: for f in &diff.files {
        let title = std::iter::once(Line::from(window(
            vec![Span::styled(
                format!("── {} +{} −{}", f.path, f.added, f.removed),
                t.title,
            )],
            0,
            cols,
            t.dim,
        )));
        let body = f
            .lines
            .iter()
            .map(|l| Line::from(line_row(app, &f.path, l, cols)));
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
