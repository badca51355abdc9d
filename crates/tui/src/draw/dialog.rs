//! Dialogs: override (reason required; says what else must be accepted
//! and offers the skipped checks in the same step), escalate (note
//! required), retry with feedback, select (a reason when the candidate
//! did not pass), finalize (branch, commit, PR body), cancel, and quit
//! while candidates run.

use super::centered;
use crate::app::{blockers_text, strip_name, App, Dialog, FinalizeDialog};
use crate::jump::Jump;
use crate::theme::Theme;
use rascal_core::model::decision::Blockers;
use rascal_core::text::{ellipsis, sanitize};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

/// The open dialog, centred over `area` (the finalize dialog has its own
/// layout).
pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let Some(d) = &app.dialog else { return };
    let mut lines: Vec<Line> = Vec::new();
    let title = match d {
        Dialog::Finalize(f) => return finalize(frame, app, f, area),
        Dialog::TestSource {
            index,
            found,
            scroll,
        } => return test_source(frame, app, area, *index, found.as_ref(), *scroll),
        Dialog::Override {
            candidate,
            layer,
            check,
            rule,
            input,
            error,
            left,
            with_skipped,
        } => {
            lines.extend(override_lines(
                app,
                candidate,
                (layer, check.as_str(), rule.as_deref()),
                left,
                *with_skipped,
                input,
            ));
            lines.extend(err(t, error));
            " override "
        }
        Dialog::Escalate {
            candidate,
            input,
            error,
        } => {
            lines.extend(escalate_lines(t, candidate, input));
            lines.extend(err(t, error));
            " escalate "
        }
        Dialog::Retry {
            candidate,
            input,
            error,
        } => {
            lines.extend(retry_lines(t, candidate, input));
            lines.extend(err(t, error));
            " retry "
        }
        Dialog::Select {
            candidate,
            input,
            refusal,
            new_code,
            error,
        } => {
            lines.extend(select_lines(
                t,
                candidate,
                input,
                refusal.as_deref(),
                new_code.as_deref(),
            ));
            lines.extend(err(t, error));
            " select winner "
        }
        Dialog::Cancel { candidate } => {
            lines.extend(cancel_lines(t, candidate.as_deref()));
            " cancel "
        }
        Dialog::Copy { candidate } => {
            lines.extend(copy_lines(t, candidate));
            " copy "
        }
        Dialog::Question {
            candidates,
            lead,
            lines: q,
        } => {
            lines.extend(question_lines(t, candidates, lead, q));
            " question "
        }
        Dialog::Hazards { jump, hazards } => {
            lines.extend(hazard_lines(t, jump, hazards));
            " files that run code "
        }
        Dialog::Quit => {
            lines.extend(quit_lines(app));
            " quit "
        }
    };
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(keys_of(d), t.dim)));
    // As tall as its lines once wrapped: the last ones are never cut off.
    let inner = area.width.min(80).saturating_sub(2) as usize;
    let h = (wrapped_rows(&lines, inner) as u16 + 2).min(area.height);
    let rect = centered(area, 80, h);
    super::boxed(frame, t, rect, title, lines);
}

/// A text field: its label, then its rows (`^J` separates them) with the
/// cursor after the last.
fn field(t: &Theme, label: &str, input: &str) -> Vec<Line<'static>> {
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
}

/// The dialog's error, when its input was refused.
fn err(t: &Theme, e: &Option<String>) -> Option<Line<'static>> {
    e.as_ref()
        .map(|e| Line::from(Span::styled(e.clone(), t.error)))
}

/// Override: what else must be accepted for the candidate to pass.
fn still_to_accept(
    t: &Theme,
    candidate: &str,
    left: &Blockers,
    with_skipped: bool,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let skipped_left = if with_skipped {
        Vec::new()
    } else {
        left.skipped.clone()
    };
    if left.failing.is_empty() && skipped_left.is_empty() {
        lines.push(Line::from(Span::styled(
            format!("With this, {} passes.", sanitize(candidate)),
            t.pass,
        )));
    } else {
        let rest = Blockers {
            failing: left.failing.clone(),
            skipped: skipped_left,
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{} still FAILs: ", sanitize(candidate)), t.warn),
            Span::styled(sanitize(&blockers_text(&rest)), t.text),
        ]));
        if !left.failing.is_empty() {
            lines.push(Line::from(Span::styled(
                "  failing checks need their own override (o on each)",
                t.dim,
            )));
        }
    }
    lines
}

/// Override: the "with skipped" option (Tab), when checks were skipped.
fn skipped_toggle(t: &Theme, left: &Blockers, with_skipped: bool) -> Vec<Line<'static>> {
    if left.skipped.is_empty() {
        return Vec::new();
    }
    let names: Vec<String> = left
        .skipped
        .iter()
        .map(|(l, c)| format!("{} {}", strip_name(*l), c))
        .collect();
    vec![
        Line::from(vec![
            Span::styled(if with_skipped { "[x]" } else { "[ ]" }, t.selected),
            Span::styled(
                format!(
                    " with skipped: also accept the {} that never ran",
                    rascal_core::text::plural(left.skipped.len() as u64, "check")
                ),
                t.text,
            ),
            Span::styled("  (Tab)", t.dim),
        ]),
        Line::from(Span::styled(
            format!("    {}", ellipsis(&sanitize(&names.join(", ")), 64)),
            t.dim,
        )),
    ]
}

/// Retry: the feedback to send, editable, with the cursor at its end.
fn retry_lines(t: &Theme, candidate: &str, input: &str) -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::from(format!(
            "Retry {} with this feedback (edit it):",
            sanitize(candidate)
        )),
        Line::from(""),
    ];
    for l in input.lines() {
        lines.push(Line::from(Span::styled(sanitize(l), t.text)));
    }
    if let Some(last) = lines.last_mut() {
        last.spans.push(Span::styled("▏", t.selected));
    }
    lines
}

/// Cancel one candidate (Some) or the whole run (None): yes or no.
fn cancel_lines(t: &Theme, candidate: Option<&str>) -> Vec<Line<'static>> {
    vec![
        Line::from(match candidate {
            Some(c) => format!(
                "Cancel candidate {}? Its agent and checks stop.",
                sanitize(c)
            ),
            None => "Cancel the whole run? Every agent and check stops.".into(),
        }),
        Line::from(""),
        Line::from(vec![
            Span::styled(" y ", t.key),
            Span::styled(" yes   ", t.text),
            Span::styled(" n ", t.key),
            Span::styled(" no", t.text),
        ]),
    ]
}

/// Select: the candidate, why it did not pass (then a reason is
/// required) and the reason field.
fn select_lines(
    t: &Theme,
    candidate: &str,
    input: &str,
    refusal: Option<&str>,
    new_code: Option<&str>,
) -> Vec<Line<'static>> {
    let style = match (refusal, new_code) {
        (Some(_), _) => t.fail,
        (None, Some(_)) => t.warn,
        (None, None) => t.pass,
    };
    let mut lines = vec![
        Line::from(vec![
            Span::styled("Select ", t.text),
            Span::styled(sanitize(candidate), style),
            Span::styled(" as the winner", t.text),
        ]),
        Line::from(""),
    ];
    match refusal {
        Some(why) => {
            lines.push(Line::from(Span::styled(
                format!("{} — it did not pass.", sanitize(why)),
                t.fail,
            )));
            lines.push(Line::from(Span::styled(
                "Finalize refuses it until its failures are overridden. Select it anyway?",
                t.warn,
            )));
            lines.push(Line::from(""));
            lines.extend(field(t, "Reason (required to select it anyway):", input));
        }
        None => match new_code {
            Some(what) => {
                lines.push(Line::from(Span::styled(
                    format!("{} — the combining agent wrote it.", sanitize(what)),
                    t.warn,
                )));
                lines.push(Line::from(Span::styled(
                    "It is never picked automatically: read the new lines (Enter on it, the provenance report), then say why.",
                    t.warn,
                )));
                lines.push(Line::from(""));
                lines.extend(field(t, "Reason (required):", input));
            }
            None => lines.extend(field(t, "Reason (optional):", input)),
        },
    }
    lines
}

/// Copy: what of the candidate can go to the clipboard, by key.
fn copy_lines(t: &Theme, candidate: &str) -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::from(format!(
            "Copy to the clipboard, of {}:",
            sanitize(candidate)
        )),
        Line::from(""),
    ];
    for (k, what) in [
        ("p", "the workspace path"),
        ("t", "the tree id (the change that was verified)"),
        ("d", "the diff against the base"),
    ] {
        lines.push(Line::from(vec![
            Span::styled(format!(" {k} "), t.key),
            Span::styled(format!(" {what}"), t.text),
        ]));
    }
    lines.push(Line::from(Span::styled(
        "through the terminal (OSC 52); some terminals ask first or need it enabled",
        t.dim,
    )));
    lines
}

/// Hazards: the files in the workspace that may run code when opened.
fn hazard_lines(t: &Theme, jump: &Jump, hazards: &[String]) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(vec![Span::styled(
        format!(
            "Opening a {} in {}'s workspace may run code the agent left:",
            jump.kind.name(),
            sanitize(&jump.candidate)
        ),
        t.warn,
    )])];
    for h in hazards.iter().take(8) {
        lines.push(Line::from(Span::styled(
            format!("  {}", ellipsis(&sanitize(h), 74)),
            t.text,
        )));
    }
    if hazards.len() > 8 {
        lines.push(Line::from(Span::styled(
            format!("  … and {} more", hazards.len() - 8),
            t.dim,
        )));
    }
    lines.push(Line::from(Span::styled(
        "git's fsmonitor and hooks are switched off for it; other tools may still run these.",
        t.dim,
    )));
    lines.push(Line::from(""));
    lines.push(Line::from(vec![
        Span::styled(" y ", t.key),
        Span::styled(" open anyway   ", t.text),
        Span::styled(" n ", t.key),
        Span::styled(" no", t.text),
    ]));
    lines
}

/// Quit while candidates run: stop them, or (docker agents only) leave
/// them running.
fn quit_lines(app: &App) -> Vec<Line<'static>> {
    let t = &app.theme;
    let running = app
        .candidates
        .iter()
        .filter(|c| !c.finished() && !c.cancelled)
        .count();
    let mut lines = vec![
        Line::from(format!(
            "{running} candidate{} still running.",
            if running == 1 { " is" } else { "s are" }
        )),
        Line::from(""),
        Line::from(vec![
            Span::styled(" s ", t.key),
            Span::styled(" stop them and quit (the run record is kept)", t.text),
        ]),
    ];
    // Only a run with docker agents has any to leave running.
    if app.meta.detachable {
        lines.push(Line::from(vec![
            Span::styled(" l ", t.key),
            Span::styled(
                format!(
                    " leave docker agents running (rascal attach {} later)",
                    sanitize(&app.run)
                ),
                t.text,
            ),
        ]));
    }
    lines.push(Line::from(vec![
        Span::styled(" Esc ", t.key),
        Span::styled(" back", t.text),
    ]));
    lines
}

/// Override: what is overridden (layer, check and rule) for whom, who
/// records it, what else must be accepted, and the reason field.
fn override_lines(
    app: &App,
    candidate: &str,
    (layer, check, rule): (&rascal_core::model::verdict::Layer, &str, Option<&str>),
    left: &Blockers,
    with_skipped: bool,
    input: &str,
) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut lines = Vec::new();
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
    lines.extend(still_to_accept(t, candidate, left, with_skipped));
    lines.extend(skipped_toggle(t, left, with_skipped));
    lines.push(Line::from(""));
    lines.extend(field(t, "Reason (required):", input));
    lines
}

/// The question: what it rests on, the example, and the keys that
/// answer it.
fn question_lines(
    t: &Theme,
    candidates: &[String],
    lead: &str,
    q: &[String],
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    lines.push(Line::from(Span::styled(
        format!("{lead}, and nothing rascal trusts settles it:"),
        t.text,
    )));
    lines.push(Line::from(""));
    for l in q {
        lines.push(Line::from(Span::styled(
            format!("  {}", sanitize(l)),
            t.text,
        )));
    }
    lines.push(Line::from(""));
    let keys: Vec<String> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{} {}", i + 1, sanitize(c)))
        .collect();
    lines.push(Line::from(Span::styled(
        format!("who is right here? {} — recorded as your choice, with this example as its reason · 0 neither: retry one with this example as feedback · Esc: not now", keys.join(" · ")),
        t.title,
    )));
    lines
}

/// Escalate: to whom, and the note field.
fn escalate_lines(t: &Theme, candidate: &str, input: &str) -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::from(format!(
            "Escalate {} to a human reviewer",
            sanitize(candidate)
        )),
        Line::from(""),
    ];
    lines.extend(field(
        t,
        "Note (required): what should they look at?",
        input,
    ));
    lines
}

/// The keys said under dialog `d` (its own lines say the others').
fn keys_of(d: &Dialog) -> &'static str {
    match d {
        Dialog::Quit | Dialog::Cancel { .. } | Dialog::Hazards { .. } => "",
        Dialog::Copy { .. } => "Esc cancel",
        Dialog::Question { .. } => "",
        _ => "Enter confirm · Esc cancel",
    }
}

/// The rows `lines` take once wrapped to `inner` columns.
fn wrapped_rows(lines: &[Line], inner: usize) -> usize {
    lines
        .iter()
        .map(|l| {
            let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
            rascal_core::text::wrap(&text, inner).len()
        })
        .sum()
}

mod scrolled;

use scrolled::{finalize, test_source};
