//! The plan screen (plan, then execute): the planner's proposed acceptance
//! criteria with checkboxes, before any candidate starts; the open text
//! field and what was wrong with it; the constraints. Everything an agent
//! wrote is made inert before it is drawn.

use crate::app::App;
use crate::plan::PlanScreen;
use crate::Theme;
use rascal_core::text::{ellipsis, sanitize, wrap};
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
            // Cut with an ellipsis where the border is narrower; the bar
            // below says the keys whole.
            ellipsis(
                &format!(
                    " plan by {} · approve the acceptance criteria; the candidates start on Enter ",
                    sanitize(&p.agent)
                ),
                (area.width as usize).saturating_sub(2),
            ),
            t.title,
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let cols = inner.width as usize;
    let mut lines = status_lines(p, t, cols);
    let selected = list_lines(&mut lines, p, t, cols);
    let footer = footer_lines(p, t, cols);
    let footer_height = (footer.len() as u16).min(inner.height / 2);
    let list = Rect {
        height: inner.height - footer_height,
        ..inner
    };
    let below = Rect {
        y: inner.y + list.height,
        height: footer_height,
        ..inner
    };
    // The selected criterion stays in view; what is below it is reached
    // by moving down.
    let height = list.height as usize;
    let scroll = selected.end.saturating_sub(height).min(selected.start);
    frame.render_widget(Paragraph::new(lines).scroll((scroll as u16, 0)), list);
    frame.render_widget(Paragraph::new(footer), below);
}

/// Above the list: why the planner's proposal was unusable, and whether
/// the unchanged base already meets some criteria (or is still checked).
fn status_lines(p: &PlanScreen, t: &Theme, cols: usize) -> Vec<Line<'static>> {
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
    match &p.on_base {
        None => lines.push(Line::from(Span::styled(
            "checking each criterion on the unchanged base…",
            t.dim,
        ))),
        Some(v) if !v.is_empty() => lines.push(Line::from(Span::styled(
            ellipsis(
                &format!(
                    "{} vacuous: the unchanged base already meets {} — a change that does nothing passes; never evidence (Space drops it, c edits its check)",
                    v.len(),
                    if v.len() == 1 { "it" } else { "them" }
                ),
                cols,
            ),
            t.fail,
        ))),
        Some(_) => {}
    }
    lines
}

/// The criteria, then the constraints, appended to `lines`; returns the
/// rows the selected one took.
fn list_lines(
    lines: &mut Vec<Line<'static>>,
    p: &PlanScreen,
    t: &Theme,
    cols: usize,
) -> std::ops::Range<usize> {
    // Every criterion and constraint is drawn whole (wrapped, never cut
    // at the edge): the human approves what they read, and a check's tail
    // or a constraint's value is part of what they approve.
    let mut selected = 0..0;
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
        if let Some(why) = p.vacuous(c) {
            what.push_str(&format!(" · VACUOUS: {}", sanitize(why)));
        }
        let text = format!("{mark} {}. {}   ({what})", n + 1, sanitize(&c.description));
        row_lines(
            lines,
            &mut selected,
            (t, cols),
            &text,
            (n == p.sel, item.keep),
        );
    }
    for (n, c) in p.constraints.iter().enumerate() {
        let row = p.items.len() + n;
        let keep = p.constraint_keep.get(n).copied().unwrap_or(true);
        let text = format!(
            "{}{}",
            if keep { "[x]" } else { "[ ]" },
            rascal_engine::output::constraint_line(c)
                .trim_start()
                .trim_start_matches('-')
        );
        row_lines(lines, &mut selected, (t, cols), &text, (row == p.sel, keep));
    }
    selected
}

/// Below the list, always in view: the text field, what was wrong.
fn footer_lines(p: &PlanScreen, t: &Theme, cols: usize) -> Vec<Line<'static>> {
    let mut footer: Vec<Line> = vec![Line::from("")];
    if let Some(e) = &p.edit {
        footer.push(Line::from(vec![
            Span::styled(format!("{}: ", e.field.prompt()), t.title),
            Span::styled(format!("{}█", sanitize(&e.input)), t.text),
        ]));
    }
    if let Some(err) = &p.error {
        footer.push(Line::from(Span::styled(
            ellipsis(&sanitize(err), cols),
            t.fail,
        )));
    }
    if p.approved {
        footer.push(Line::from(Span::styled(
            "approved: starting the candidates…",
            t.pass,
        )));
    }
    footer
}

/// `s` in lines of at most `cols` columns, every line after the first
/// indented by `indent` spaces.
fn wrap_indented(s: &str, cols: usize, indent: usize) -> Vec<String> {
    let indent = indent.min(cols / 2);
    let mut out = Vec::new();
    let first = wrap(s, cols);
    let Some((head, rest)) = first.split_first() else {
        return out;
    };
    out.push(head.clone());
    let rest = rest.join(" ");
    if !rest.is_empty() {
        out.extend(
            wrap(&rest, cols - indent)
                .into_iter()
                .map(|l| format!("{}{l}", " ".repeat(indent))),
        );
    }
    out
}

/// One row of the list (a criterion or a constraint), wrapped whole in
/// `cols` columns behind its two-column lead (`▸ ` when selected, blanks
/// otherwise, so every row's checkbox is in the same column): selected,
/// kept or dropped by its style; the rows it took are `selected` when it
/// is the selected one.
fn row_lines(
    lines: &mut Vec<Line<'static>>,
    selected: &mut std::ops::Range<usize>,
    (t, cols): (&crate::Theme, usize),
    text: &str,
    (is_selected, keep): (bool, bool),
) {
    let style = if is_selected {
        t.selected
    } else if keep {
        t.text
    } else {
        t.dim
    };
    let from = lines.len();
    let lead = if is_selected { "▸ " } else { "  " };
    lines.extend(
        wrap_indented(text, cols.saturating_sub(2).max(1), 5)
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                let lead = if i == 0 { lead } else { "  " };
                Line::from(Span::styled(format!("{lead}{l}"), style))
            }),
    );
    if is_selected {
        *selected = from..lines.len();
    }
}

#[cfg(test)]
mod tests {
    use crate::app::Screen;
    use crate::plan::PlanScreen;
    use rascal_core::config::spec::{Constraint, ConstraintKind, Criterion, CriterionKind};

    fn drawn(p: PlanScreen, w: u16, h: u16) -> String {
        let mut app = crate::fixture::app(2, false, false);
        app.plan = Some(p);
        app.screen = Screen::Plan;
        crate::fixture::drawn(&app, w, h)
    }

    fn crit(n: usize, check: &str) -> Criterion {
        Criterion {
            description: format!("criterion {n}"),
            kind: CriterionKind::Command,
            check: check.into(),
            required: true,
            new_test: false,
        }
    }

    /// A planner cannot hide what is approved past the edge: a command's
    /// tail, a constraint's value, the last rows of a long plan.
    #[test]
    fn the_human_sees_every_check_whole_and_every_constraint_value() {
        let long = format!("cargo test {}|| echo TAIL-IS-SHOWN", "--quiet ".repeat(15));
        let mut criteria = vec![crit(1, &long)];
        criteria.extend((2..=20).map(|n| crit(n, "true")));
        let constraints = [Constraint {
            description: "keep the lockfile".into(),
            kind: ConstraintKind::NoTouchFiles("**".to_string().try_into().unwrap()),
        }];
        let p = PlanScreen::new("planner", &criteria, &constraints, None);
        let s = drawn(p.clone(), 80, 24);
        assert!(s.contains("TAIL-IS-SHOWN"), "{s}");
        // Moving down to the constraint shows it with its glob (and the
        // last criterion above it).
        let mut p = p;
        for _ in 0..30 {
            p.down();
        }
        let s = drawn(p, 80, 24);
        assert!(s.contains("20. criterion 20"), "{s}");
        assert!(
            s.contains("[x] constraint keep the lockfile (no-touch-files: `**`)"),
            "{s}"
        );
    }

    /// Issue 53: the focused row's `▸` used to push its checkbox two
    /// columns right of every other row's (a row's leading blank was lost
    /// in the wrapping).
    #[test]
    fn every_rows_checkbox_is_in_the_same_column() {
        let criteria: Vec<Criterion> = (1..=3).map(|n| crit(n, "true")).collect();
        let constraints = [Constraint {
            description: "keep the lockfile".into(),
            kind: ConstraintKind::NoTouchFiles("Cargo.lock".to_string().try_into().unwrap()),
        }];
        let mut p = PlanScreen::new("planner", &criteria, &constraints, None);
        p.down();
        let s = drawn(p, 100, 20);
        let columns: Vec<usize> = s
            .lines()
            .filter_map(|l| l.find("[x]").map(|at| l[..at].chars().count()))
            .collect();
        assert_eq!(columns.len(), 4, "three criteria and a constraint:\n{s}");
        assert!(columns.windows(2).all(|w| w[0] == w[1]), "{columns:?}\n{s}");
        assert!(
            s.lines().any(|l| l.contains("▸ [x] 2. criterion 2")),
            "the focused row is marked:\n{s}"
        );
    }
}
