//! Compare: two candidates' changes against each other, the scoreboard
//! (verdict per layer, size, criteria, review issues, tokens), the
//! comparator's ranking with reasons and the similarity matrix.

use super::diffview::{bottom_line, line_row, window};
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
    let [top, bottom] = Layout::vertical([
        Constraint::Length(top_height(area.height)),
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

/// The scoreboard's and ranking's height in a compare view `body` rows
/// tall; the diff (or evidence) pane below takes the rest.
fn top_height(body: u16) -> u16 {
    (STRIP.len() as u16 + 9).min(body / 2)
}

/// The rows inside the bottom pane's borders on a screen `height` rows
/// tall (the header's 2 and the status bar's 1 left out).
pub fn bottom_rows(height: u16) -> usize {
    let body = height.saturating_sub(3);
    body.saturating_sub(top_height(body))
        .max(3)
        .saturating_sub(2) as usize
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

/// The two sides being compared: A the focused candidate (`Tab` moves
/// it), B the other one (`1`…`9` picks it).
fn sides(app: &App) -> (String, String) {
    let a = &app.candidates[app.focus].info.id;
    let b = &app.candidates[app.compare_b.min(app.candidates.len() - 1)]
        .info
        .id;
    (sanitize(a), sanitize(b))
}

/// One place of the ranking: `1. careful all layers pass, …`, the reason
/// (which names the candidate first: not said twice) wrapped under the
/// name, never cut.
fn position_lines(
    p: &crate::model::ranking::Ranked,
    w: usize,
    name: ratatui::style::Style,
    style: ratatui::style::Style,
) -> Vec<Line<'static>> {
    let head = format!("{}. {} ", p.position, sanitize(&p.candidate));
    let reason = p
        .reason
        .strip_prefix(&format!("{}: ", p.candidate))
        .unwrap_or(&p.reason);
    let indent = width(&head);
    let mut out = super::wrapped(
        &sanitize(reason),
        w.saturating_sub(indent),
        usize::MAX,
        style,
    );
    for (i, l) in out.iter_mut().enumerate() {
        let lead = if i == 0 {
            Span::styled(head.clone(), name)
        } else {
            Span::raw(" ".repeat(indent))
        };
        l.spans.insert(0, lead);
    }
    out
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
        .title(Span::styled(title, t.title));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let lines = ranking_lines(app, inner.width as usize);
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The comparator's ranking as lines `w` wide: each position with its
/// whole reason, the pick (or why none), the judge, the agreement matrix
/// and the similarity matrix — or, with the comparator off, the order
/// by verdict and size.
pub fn ranking_lines(app: &App, w: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
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
                lines.extend(position_lines(p, w, st, t.dim));
            }
            let pick = match (&r.pick, &r.contested) {
                (Some(p), _) => format!("comparator's pick: {}", sanitize(p)),
                (None, Some(why)) => format!("comparator's pick: none ({})", sanitize(why)),
                (None, None) => "comparator's pick: none (no candidate passed)".into(),
            };
            let style = if r.pick.is_some() { t.pass } else { t.warn };
            lines.extend(super::wrapped(&pick, w, usize::MAX, style));
            if let Some(j) = &r.judge {
                let said = match (&j.pick, &j.problem) {
                    (Some(p), _) => format!("judge {}: {} — {}", j.agent, p, j.reason),
                    (None, Some(why)) => format!("judge {}: not used ({why})", j.agent),
                    _ => format!("judge {}: no pick", j.agent),
                };
                lines.extend(super::wrapped(&sanitize(&said), w, usize::MAX, t.dim));
            }
            // The agreement matrix is the evidence, the similarity a
            // tie-breaker: the pane is short, so the evidence comes first.
            if let Some(a) = &r.agreement {
                lines.push(Line::from(""));
                lines.extend(agreement(app, a, w));
            }
            lines.push(Line::from(""));
            lines.extend(matrix(app, r, w));
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
                            "{}. {} {v} · {}",
                            i + 1,
                            sanitize(&c.info.id),
                            crate::text::plural(c.lines, "line")
                        ),
                        w,
                    ),
                    t.text,
                )));
            }
        }
    }
    lines
}

/// The similarity matrix, its names as wide as `w` allows: the row
/// names' column takes what the value columns leave.
fn matrix(app: &App, r: &crate::tui::app::Ranking, w: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let names: Vec<String> = r.ids.iter().map(|id| sanitize(id)).collect();
    let longest = names.iter().map(|n| width(n)).max().unwrap_or(0);
    let k = names.len().max(1);
    // Value columns: a name when it fits, at least `0.00` and a space.
    let colw = (longest + 1).clamp(6, (w.saturating_sub(longest.min(12) + 1) / k).max(6));
    let namew = (longest + 1).min(w.saturating_sub(colw * k)).max(6);
    let mut head = vec![Span::styled(" ".repeat(namew), t.dim)];
    for n in &names {
        head.push(Span::styled(pad_left(&ellipsis(n, colw - 1), colw), t.dim));
    }
    let mut out = vec![Line::from(head)];
    for (i, n) in names.iter().enumerate() {
        let mut spans = vec![Span::styled(pad(&ellipsis(n, namew - 1), namew), t.dim)];
        for v in r.matrix.get(i).into_iter().flatten() {
            spans.push(Span::styled(format!("{v:>colw$.2}"), t.text));
        }
        out.push(Line::from(spans));
    }
    out
}

/// The agreement matrix: each passing candidate's code (rows) on the
/// tests the others wrote that fail at the base (numbered columns,
/// grouped by author), ✓ passed, ✗ failed, – not applicable; then the
/// numbered tests.
fn agreement(app: &App, a: &crate::model::agreement::Agreement, w: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut out = vec![Line::from(Span::styled(
        ellipsis("agreement · code × tests others wrote", w),
        t.dim,
    ))];
    for l in a.render() {
        let style = if l.contains('✗') {
            t.warn
        } else if l.contains('✓') {
            t.pass
        } else {
            t.dim
        };
        out.push(Line::from(Span::styled(ellipsis(&sanitize(&l), w), style)));
    }
    out
}

fn pair_diff(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let a = &app.candidates[app.focus].info.id;
    let b = &app.candidates[app.compare_b.min(app.candidates.len() - 1)]
        .info
        .id;
    let (an, bn) = sides(app);
    let at = match (&app.search, &app.compare_diff) {
        (Some(s), Some((_, d))) => crate::tui::search::position(
            &crate::tui::search::flat_hits(d, &s.query),
            app.compare_scroll,
        ),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ranking::Ranked;
    use crate::model::verdict::Verdict;

    fn text(lines: &[Line]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    /// Issue 31, item 6: `careful careful: all layers pass, consensu…` —
    /// the name said once, the reason wrapped whole under it.
    #[test]
    fn a_ranking_line_names_the_candidate_once_and_keeps_its_whole_reason() {
        let p = Ranked {
            position: 1,
            candidate: "careful".into(),
            verdict: Verdict::Pass,
            layers_passed: 5,
            criteria_met: 0,
            consensus: 0.87,
            lines: 10,
            files: 1,
            reason: "careful: all layers pass, passes 2/2 tests others wrote (agrees with hasty), consensus 0.87".into(),
            usage: None,
            agreement: None,
        };
        let style = ratatui::style::Style::default();
        let lines = text(&position_lines(&p, 40, style, style));
        assert!(
            lines[0].starts_with("1. careful all layers pass,"),
            "{lines:?}"
        );
        assert_eq!(lines.concat().matches("careful").count(), 1, "{lines:?}");
        assert!(lines.iter().all(|l| width(l) <= 40), "{lines:?}");
        assert!(
            lines.iter().skip(1).all(|l| l.starts_with("           ")),
            "{lines:?}"
        );
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(
            words(&lines.join(" ")),
            "1. careful all layers pass, passes 2/2 tests others wrote (agrees with hasty), consensus 0.87"
        );
        assert!(!lines.concat().contains('…'));
    }
}
