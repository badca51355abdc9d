//! The comparator's ranking as text lines, for the compare view's short
//! ranking pane and its evidence pane (`e`): each position with its whole
//! reason, the pick, the judge, the agreement matrix and the similarity
//! matrix; and how tall the compare view's parts are.

use crate::app::{App, Candidate, STRIP};
use rascal_core::text::{ellipsis, pad, pad_left, sanitize, width};
use ratatui::text::{Line, Span};

/// The scoreboard's and ranking's height in a compare view `body` rows
/// tall; the diff (or evidence) pane below takes the rest.
pub fn top_height(body: u16) -> u16 {
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

/// One place of the ranking: `1. careful all layers pass, …`, the reason
/// (which names the candidate first: not said twice) wrapped under the
/// name, never cut.
fn position_lines(
    p: &rascal_core::model::ranking::Ranked,
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

/// The comparator's ranking as lines `w` wide: each position with its
/// whole reason, the pick (or why none), the judge, the agreement matrix
/// and the similarity matrix — or, with the comparator off, the order
/// by verdict and size.
pub fn ranking_lines(app: &App, w: usize) -> Vec<Line<'static>> {
    match &app.ranking {
        Some(r) => ranked_lines(app, r, w),
        None => unranked_lines(app, w),
    }
}

/// The comparator's ranking: the positions, the pick, the judge, the
/// agreement matrix and the similarity matrix.
fn ranked_lines(app: &App, r: &crate::app::Ranking, w: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut lines = Vec::new();
    for p in &r.positions {
        let id = &p.candidate;
        let st = if r.pick.as_deref() == Some(id.as_str()) {
            t.pass
        } else {
            t.text
        };
        lines.extend(position_lines(p, w, st, t.dim));
        // The ranking was made before the human acted: say what
        // they did since, beside the reason that no longer holds.
        if let Some(since) = app
            .index_of(id)
            .and_then(|i| since_ranked(&app.candidates[i]))
        {
            lines.extend(super::wrapped(
                &format!("   {since}"),
                w,
                usize::MAX,
                t.overridden,
            ));
        }
    }
    let (pick, style) = pick_line(app, r);
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
    lines
}

/// The comparator's pick (or why none, or why it is not taken) and its
/// style: a warning unless the pick stands.
fn pick_line(app: &App, r: &crate::app::Ranking) -> (String, ratatui::style::Style) {
    let t = &app.theme;
    let blocked = r
        .pick
        .as_deref()
        .filter(|_| app.summary.selected.is_none())
        .and_then(|p| rascal_core::model::choice::contested(&app.summary, p));
    let pick = match (&r.pick, &r.contested) {
        (Some(p), _) if blocked.is_some() => format!(
            "comparator's pick: {} — not taken: {}; select a candidate (Space) before F",
            sanitize(p),
            sanitize(blocked.as_deref().unwrap_or_default())
        ),
        (Some(p), _) if !r.unseparated.is_empty() => format!(
            "comparator's pick: {} — no test separates it from {}",
            sanitize(p),
            sanitize(&r.unseparated.join(", "))
        ),
        (Some(p), _) => format!("comparator's pick: {}", sanitize(p)),
        (None, Some(why)) => format!("comparator's pick: none ({})", sanitize(why)),
        (None, None)
            if !app.candidates.is_empty()
                && app
                    .candidates
                    .iter()
                    .all(|c| c.state == rascal_core::model::state::State::Cancelled) =>
        {
            "comparator's pick: none (cancelled: no candidate finished)".into()
        }
        (None, None) => "comparator's pick: none (no candidate passed)".into(),
    };
    let style = if r.pick.is_some() && r.unseparated.is_empty() && blocked.is_none() {
        t.pass
    } else {
        t.warn
    };
    (pick, style)
}

/// With the comparator off: the candidates by verdict, then smallest
/// change.
fn unranked_lines(app: &App, w: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut lines = vec![
        Line::from(Span::styled(
            "– comparator off (no ranking for this run)",
            t.off,
        )),
        Line::from(Span::styled("by verdict, then smallest change:", t.dim)),
    ];
    let mut order: Vec<&Candidate> = app.candidates.iter().collect();
    order.sort_by_key(|c| {
        (
            c.verdict
                .unwrap_or(rascal_core::model::verdict::Verdict::Fail),
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
                    rascal_core::text::plural(c.lines, "line")
                ),
                w,
            ),
            t.text,
        )));
    }
    lines
}

/// What a human did to `c` after the ranking was made: escalated it, or
/// overrode what failed (its verdict now). None: nothing.
fn since_ranked(c: &Candidate) -> Option<String> {
    use rascal_core::model::state::State;
    if c.state == State::Escalated {
        let (why, who) = c.escalated.clone().unwrap_or_default();
        let who = who
            .map(|w| format!(" by {}", super::who_name(&w)))
            .unwrap_or_default();
        return Some(sanitize(&format!(
            "⚑ escalated to a human since{who}: {why}"
        )));
    }
    match (c.verdict, c.effective) {
        (Some(raw), Some(now)) if raw != now => Some(format!(
            "now {now} ⊘ (was {raw}): a human overrode what failed"
        )),
        _ => None,
    }
}

/// The similarity matrix, its names as wide as `w` allows: the row
/// names' column takes what the value columns leave.
fn matrix(app: &App, r: &crate::app::Ranking, w: usize) -> Vec<Line<'static>> {
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
fn agreement(
    app: &App,
    a: &rascal_core::model::agreement::Agreement,
    w: usize,
) -> Vec<Line<'static>> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use rascal_core::model::ranking::Ranked;
    use rascal_core::model::verdict::Verdict;

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
            reason: "careful: all layers pass, passes 2/2 tests others wrote (agrees with hasty), similarity to the others 0.87".into(),
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
            "1. careful all layers pass, passes 2/2 tests others wrote (agrees with hasty), similarity to the others 0.87"
        );
        assert!(!lines.concat().contains('…'));
    }

    /// The compare view drawn `w`×`h`, as text.
    fn compare_screen(app: &mut App, w: u16, h: u16) -> String {
        app.screen = crate::app::Screen::Compare;
        crate::fixture::drawn(app, w, h)
    }

    fn decide(
        app: &mut App,
        who: &str,
        kind: rascal_core::model::decision::DecisionKind,
        why: &str,
    ) {
        let d = rascal_core::model::decision::Decision::new(
            Some(who),
            kind,
            "Tess Ter <tess@example.invalid>",
            why,
        );
        app.apply_decision(&d);
    }

    /// Issue 53: after the pick was escalated, compare still said
    /// "comparator's pick: careful" as if F would take it.
    #[test]
    fn an_escalated_pick_is_said_not_taken_and_the_escalation_is_shown() {
        use rascal_core::model::decision::DecisionKind;
        let mut app = crate::fixture::app(3, true, false);
        let before = text(&ranking_lines(&app, 120)).join("\n");
        assert!(before.contains("comparator's pick: careful"), "{before}");
        assert!(!before.contains("not taken"), "{before}");
        decide(
            &mut app,
            "careful",
            DecisionKind::Escalate,
            "unsure the API may change",
        );
        let after = text(&ranking_lines(&app, 120)).join("\n");
        assert!(
            after.contains("comparator's pick: careful — not taken: it was escalated to a human (unsure the API may change)"),
            "{after}"
        );
        assert!(
            after.contains("⚑ escalated to a human since by Tess Ter: unsure the API may change"),
            "{after}"
        );
        let screen = compare_screen(&mut app, 140, 40);
        assert!(screen.contains("ESCALATED"), "{screen}");
    }

    /// Issue 53: after an override lifted a FAIL, the compare scoreboard
    /// and the ranking still said FAIL while the dashboard said PASS.
    #[test]
    fn an_override_shows_in_the_scoreboard_and_the_ranking() {
        use rascal_core::model::decision::DecisionKind;
        use rascal_core::model::verdict::Layer;
        let mut app = crate::fixture::app(3, true, false);
        let screen = compare_screen(&mut app, 140, 40);
        assert!(!screen.contains("(was FAIL)"), "{screen}");
        for check in ["build", "banned-patterns", "tests"] {
            let kind = DecisionKind::Override {
                layer: Layer::Guardrails,
                check: check.into(),
                rule: None,
            };
            decide(&mut app, "hasty", kind, "flaky CI");
        }
        let hasty = &app.candidates[app.index_of("hasty").unwrap()];
        assert_eq!(hasty.effective, Some(Verdict::Pass), "{:?}", hasty.blockers);
        let screen = compare_screen(&mut app, 140, 40);
        assert!(screen.contains("PASS ⊘ (was FAIL)"), "{screen}");
        let lines = text(&ranking_lines(&app, 120)).join("\n");
        assert!(
            lines.contains("now PASS ⊘ (was FAIL): a human overrode what failed"),
            "{lines}"
        );
    }
}
