//! The dialogs with a layout of their own, each scrolled with j/k: the
//! finalize dialog (branch, commit, the PR body) and a test of the
//! agreement matrix (its source).

use super::*;

/// Test `index` of the agreement matrix: its name, author, where it is
/// written and its source (scrolled), or why it could not be read.
pub(super) fn test_source(
    frame: &mut Frame,
    app: &App,
    area: Rect,
    index: usize,
    found: Option<&Result<crate::test_source::TestSource, String>>,
    scroll: usize,
) {
    let t = &app.theme;
    let tests = crate::commands::matrix_tests(app);
    let Some(test) = tests.get(index) else { return };
    // As tall as the source needs (head, source, foot), within the screen.
    let source_rows = match found {
        Some(Ok(src)) => src.lines.len() + 1,
        _ => 3,
    };
    let tall = (source_rows + 6).min(u16::MAX as usize) as u16;
    let rect = centered(area, 100, tall.min(area.height.saturating_sub(2)).max(8));
    let inner_w = rect.width.saturating_sub(2) as usize;
    let mut lines = crate::draw::wrapped(
        &format!(
            "test {} of {}: {} · written by {}",
            index + 1,
            tests.len(),
            sanitize(&test.name),
            sanitize(&test.author)
        ),
        inner_w,
        usize::MAX,
        t.title,
    );
    match found {
        None => lines.push(Line::from(Span::styled("reading…", t.dim))),
        Some(Err(why)) => lines.extend(crate::draw::wrapped(
            &format!("its source could not be shown: {}", sanitize(why)),
            inner_w,
            usize::MAX,
            t.warn,
        )),
        Some(Ok(src)) => {
            lines.push(Line::from(Span::styled(
                format!(
                    "{}:{} · {} (j/k scroll)",
                    sanitize(&src.path),
                    src.line,
                    rascal_core::text::plural(src.lines.len() as u64, "line")
                ),
                t.dim,
            )));
            let body = rect.height.saturating_sub(2 + lines.len() as u16 + 2) as usize;
            for (i, l) in src.lines.iter().enumerate().skip(scroll).take(body) {
                lines.push(Line::from(vec![
                    Span::styled(format!("{:>5} ", src.line + i), t.dim),
                    Span::styled(ellipsis(&sanitize(l), inner_w.saturating_sub(6)), t.text),
                ]));
            }
        }
    }
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        "n/p next/previous test · Esc close",
        t.dim,
    )));
    crate::draw::boxed(frame, t, rect, " a test of the agreement matrix ", lines);
}

/// The finalize dialog: branch, commit title, the PR body (scrollable),
/// the open-PR option, and any refusal.
pub(super) fn finalize(frame: &mut Frame, app: &App, f: &FinalizeDialog, area: Rect) {
    let t = &app.theme;
    let rect = centered(area, 100, area.height.saturating_sub(2).max(12));
    let inner_w = rect.width.saturating_sub(2) as usize;
    let head = finalize_head(app, f, inner_w);
    let foot = finalize_foot(t, f, inner_w);
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focus)
        .title(Span::styled(" finalize ", t.title));
    let inner = block.inner(rect);
    frame.render_widget(block.style(t.dialog), rect);
    let (hn, fnn) = (head.len() as u16, foot.len() as u16);
    if inner.height < hn + fnn + 1 {
        let mut all = head;
        all.extend(foot);
        frame.render_widget(
            Paragraph::new(all)
                .style(t.dialog)
                .wrap(Wrap { trim: false }),
            inner,
        );
        return;
    }
    frame.render_widget(
        Paragraph::new(head).style(t.dialog),
        Rect::new(inner.x, inner.y, inner.width, hn),
    );
    let body_area = Rect::new(inner.x, inner.y + hn, inner.width, inner.height - hn - fnn);
    if let Some(p) = &f.preview {
        let rows: Vec<Line> = p
            .pr_body
            .lines()
            .skip(f.scroll)
            .take(body_area.height as usize)
            .map(|l| {
                Line::from(Span::styled(
                    format!("│ {}", ellipsis(&sanitize(l), inner_w.saturating_sub(2))),
                    t.text,
                ))
            })
            .collect();
        frame.render_widget(Paragraph::new(rows).style(t.dialog), body_area);
    }
    frame.render_widget(
        Paragraph::new(foot).style(t.dialog),
        Rect::new(inner.x, inner.y + inner.height - fnn, inner.width, fnn),
    );
}

/// The finalize dialog's head: what is finalized, the selection it makes
/// first, the branch, the commit title and where the PR body is scrolled.
fn finalize_head(app: &App, f: &FinalizeDialog, inner_w: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut head: Vec<Line<'static>> = vec![Line::from(vec![
        Span::styled("Finalize ", t.text),
        Span::styled(sanitize(&f.candidate), t.pass),
        Span::styled(
            ": commit its verified change on a branch and write the PR body",
            t.text,
        ),
    ])];
    if f.select_first {
        head.extend(crate::draw::wrapped(
            &format!(
                "Nothing is selected: Enter selects {} first (recorded as {}).",
                sanitize(&f.candidate),
                sanitize(&app.who)
            ),
            inner_w,
            usize::MAX,
            t.warn,
        ));
    }
    let kv = |k: &str, v: String, style| {
        Line::from(vec![
            Span::styled(format!("{k:<8} "), t.dim),
            Span::styled(ellipsis(&sanitize(&v), inner_w.saturating_sub(9)), style),
        ])
    };
    match &f.preview {
        Some(p) => {
            head.push(kv("branch", p.branch.clone(), t.title));
            head.push(kv("commit", p.title().to_string(), t.text));
            let n = p.pr_body.lines().count();
            head.push(kv(
                "PR body",
                format!(
                    "{} (j/k scroll) · from line {}",
                    rascal_core::text::plural(n as u64, "line"),
                    (f.scroll + 1).min(n.max(1))
                ),
                t.dim,
            ));
        }
        None if f.error.is_none() => head.push(Line::from(Span::styled("reading…", t.dim))),
        None => {}
    }
    head
}

/// The finalize dialog's foot: the open-PR option, why the candidate did
/// not pass, the error, and the keys.
fn finalize_foot(t: &Theme, f: &FinalizeDialog, inner_w: usize) -> Vec<Line<'static>> {
    let mut foot: Vec<Line<'static>> = Vec::new();
    foot.push(Line::from(vec![
        Span::styled(if f.open_pr { "[x]" } else { "[ ]" }, t.selected),
        Span::styled(
            " p: also open the pull request with gh (or show the command)",
            t.text,
        ),
    ]));
    // Said once, whole: wrapped to the dialog's width.
    if let Some(why) = &f.refusal {
        foot.extend(crate::draw::wrapped(
            &format!("{}: it did not pass", sanitize(why)),
            inner_w,
            usize::MAX,
            t.fail,
        ));
    }
    if let Some(e) = &f.error {
        for l in e.lines().take(4) {
            foot.extend(crate::draw::wrapped(
                &sanitize(l),
                inner_w,
                usize::MAX,
                t.error,
            ));
        }
    }
    foot.push(Line::from(Span::styled(
        if f.busy {
            "finalizing…"
        } else {
            "Enter finalize · p open PR too · j/k scroll · Esc cancel"
        },
        t.dim,
    )));
    foot
}
