//! The user's answers to a dialog: typed text submitted, a choice made,
//! a finalize confirmed.

use super::*;

/// What the dialogs come back with: the override dialog's toggle, and
/// finalizing's preview, commit and pull request.
pub(super) fn dialog_answers(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    match action {
        Action::OpenPr => match &app.summary.finalized {
            Some(f) if !f.pr_command.is_empty() => {
                app.flash = Some("opening the pull request with gh…".into());
                fx.push(Effect::OpenPr(f.pr_command.clone()));
            }
            _ => app.flash = Some("nothing finalized yet: F finalizes the selection".into()),
        },
        Action::Toggle => match &mut app.dialog {
            Some(Dialog::Override {
                left, with_skipped, ..
            }) if !left.skipped.is_empty() => *with_skipped = !*with_skipped,
            Some(Dialog::Finalize(d)) if !d.busy => d.open_pr = !d.open_pr,
            _ => {}
        },
        Action::FinalizePreviewed(r) => {
            if let Some(Dialog::Finalize(d)) = &mut app.dialog {
                match r {
                    Ok(p) if p.candidate == d.candidate => d.preview = Some(p),
                    Ok(_) => {}
                    Err(e) => d.error = Some(e),
                }
            }
        }
        Action::FinalizeDone(r) => match r {
            Ok(msg) => {
                if matches!(app.dialog, Some(Dialog::Finalize(_))) {
                    app.dialog = None;
                }
                app.flash = Some(msg);
            }
            Err(e) => match &mut app.dialog {
                Some(Dialog::Finalize(d)) => {
                    d.busy = false;
                    d.error = Some(e);
                }
                _ => app.flash = Some(format!("not finalized: {e}")),
            },
        },
        Action::PrOpened(r) => {
            app.flash = Some(match r {
                Ok(out) => format!("pull request: {out}"),
                Err(e) => e,
            })
        }
        // Only the actions above are routed here.
        _ => {}
    }
}

pub(super) fn input_of(app: &mut App) -> Option<&mut String> {
    match &mut app.dialog {
        Some(Dialog::Override { input, .. })
        | Some(Dialog::Escalate { input, .. })
        | Some(Dialog::Retry { input, .. })
        | Some(Dialog::Select { input, .. }) => Some(input),
        Some(Dialog::Finalize(_)) => None,
        Some(_) => None,
        None if app.filter_editing => app.filter.as_mut(),
        None => match &mut app.search {
            Some(s) if s.editing => Some(&mut s.query),
            _ => None,
        },
    }
}

pub(super) fn decision(
    app: &App,
    candidate: Option<String>,
    kind: DecisionKind,
    reason: &str,
) -> Decision {
    Decision {
        candidate,
        kind,
        who: app.who.clone(),
        reason: reason.trim().to_string(),
        at_ms: app.now_ms,
    }
}

/// Enter: ends editing the filter or the search, or confirms the open
/// dialog (its decision recorded and sent to the run).
pub(super) fn submit(app: &mut App, fx: &mut Vec<Effect>) {
    if submit_search(app, fx) {
        return;
    }
    let Some(d) = app.dialog.clone() else { return };
    let made = match d {
        Dialog::Override {
            candidate,
            layer,
            check,
            rule,
            input,
            with_skipped,
            ..
        } => {
            if input.trim().is_empty() {
                if let Some(Dialog::Override { error, .. }) = &mut app.dialog {
                    *error = Some("a reason is required".into());
                }
                return;
            }
            let kind = DecisionKind::Override { layer, check, rule };
            return submit_override(app, fx, candidate, kind, &input, with_skipped);
        }
        Dialog::Escalate {
            candidate, input, ..
        } => {
            if input.trim().is_empty() {
                if let Some(Dialog::Escalate { error, .. }) = &mut app.dialog {
                    *error = Some("a note is required: say what the human should look at".into());
                }
                return;
            }
            decision(app, Some(candidate), DecisionKind::Escalate, &input)
        }
        Dialog::Retry {
            candidate, input, ..
        } => {
            if input.trim().is_empty() {
                if let Some(Dialog::Retry { error, .. }) = &mut app.dialog {
                    *error = Some("feedback is required".into());
                }
                return;
            }
            decision(
                app,
                Some(candidate),
                DecisionKind::Retry {
                    feedback: input.trim().to_string(),
                },
                "retry with feedback",
            )
        }
        Dialog::Select {
            candidate,
            input,
            refusal,
            new_code,
            ..
        } => {
            if (refusal.is_some() || new_code.is_some()) && input.trim().is_empty() {
                if let Some(Dialog::Select { error, .. }) = &mut app.dialog {
                    *error = Some(
                        if refusal.is_some() {
                            "a reason is required to select a candidate that did not pass"
                        } else {
                            "a reason is required to choose code no candidate wrote"
                        }
                        .into(),
                    );
                }
                return;
            }
            decision(app, Some(candidate), DecisionKind::Select, &input)
        }
        Dialog::Finalize(f) => return confirm_finalize(app, f, fx),
        Dialog::Cancel { .. } => return choose(app, 'y', fx),
        Dialog::Quit => return choose(app, 's', fx),
        Dialog::Copy { .. } => return choose(app, 'p', fx),
        Dialog::TestSource { .. } => {
            app.dialog = None;
            return;
        }
        Dialog::Hazards { .. } => {
            // Enter does not open a workspace that may run code: `y` does.
            return;
        }
        // A digit answers: Enter alone says nothing.
        Dialog::Question { .. } => return,
    };
    app.dialog = None;
    app.flash = Some(format!(
        "recorded: {} {}",
        made.kind.name(),
        made.candidate.clone().unwrap_or_else(|| "run".into())
    ));
    app.apply_decision(&made);
    fx.push(Effect::Decide(made));
}

/// Enter while editing the log filter (the whole log is searched) or the
/// search (the first match is found). False when neither was edited.
fn submit_search(app: &mut App, fx: &mut Vec<Effect>) -> bool {
    if app.filter_editing {
        app.filter_editing = false;
        if app.filter.as_deref() == Some("") {
            app.filter = None;
        }
        for c in &mut app.candidates {
            c.found = None;
        }
        fx.extend(search_log(app, app.focus));
        return true;
    }
    if let Some(s) = &mut app.search {
        if s.editing {
            s.editing = false;
            if s.query.is_empty() {
                app.search = None;
            } else {
                find(app, Toward::Here);
            }
            return true;
        }
    }
    false
}

/// Confirm an override (`kind`) with its reason: with `with_skipped`,
/// every skipped check is accepted in the same step; the flash says where
/// that leaves the candidate.
fn submit_override(
    app: &mut App,
    fx: &mut Vec<Effect>,
    candidate: String,
    kind: DecisionKind,
    input: &str,
    with_skipped: bool,
) {
    let first = decision(app, Some(candidate.clone()), kind, input);
    let mut made = vec![first];
    if with_skipped {
        if let Some(s) = app.summary.candidates.iter().find(|s| s.id == candidate) {
            let mut ds = s.current_decisions().to_vec();
            ds.extend(made.iter().cloned());
            for kind in accept_skipped(&s.reports, &ds) {
                made.push(decision(
                    app,
                    Some(candidate.clone()),
                    kind,
                    &not_run(input),
                ));
            }
        }
    }
    app.dialog = None;
    let accepted = made.len() - 1;
    for d in made {
        app.apply_decision(&d);
        fx.push(Effect::Decide(d));
    }
    // Say where that leaves the candidate.
    let after = app
        .candidates
        .iter()
        .find(|c| c.info.id == candidate)
        .map(|c| match (c.effective, c.blockers.is_empty()) {
            (Some(v), true) => format!(" · now {v}"),
            (_, _) => format!(" · still {}: {}", c.state, blockers_text(&c.blockers)),
        })
        .unwrap_or_default();
    let more = if accepted > 0 {
        format!(" (+{accepted} skipped accepted)")
    } else {
        String::new()
    };
    app.flash = Some(format!("recorded: override {candidate}{more}{after}"));
}

/// Enter in the finalize dialog: refused with a message when the
/// candidate did not pass; else select it first (when nothing was) and
/// ask the shell to finalize. The dialog stays until the result is in.
fn confirm_finalize(app: &mut App, f: FinalizeDialog, fx: &mut Vec<Effect>) {
    if f.busy {
        return;
    }
    if f.refusal.is_some() {
        // The dialog already says why; this says what to do.
        let msg = "finalize refuses a candidate that did not pass — override its failures first (o), or choose another".to_string();
        if let Some(Dialog::Finalize(d)) = &mut app.dialog {
            d.error = Some(msg);
        }
        return;
    }
    if f.select_first {
        let d = decision(
            app,
            Some(f.candidate.clone()),
            DecisionKind::Select,
            "selected to finalize",
        );
        app.apply_decision(&d);
        fx.push(Effect::Decide(d));
    }
    if let Some(Dialog::Finalize(d)) = &mut app.dialog {
        d.busy = true;
        d.select_first = false;
        d.error = None;
    }
    fx.push(Effect::Finalize {
        candidate: f.candidate,
        open_pr: f.open_pr,
    });
}

pub(super) fn choose(app: &mut App, ch: char, fx: &mut Vec<Effect>) {
    match app.dialog.clone() {
        Some(Dialog::Quit) => match ch {
            's' | 'y' | 'q' => {
                app.quit = true;
                app.dialog = None;
                fx.push(Effect::Quit { stop: true });
            }
            'l' if app.meta.detachable => {
                app.quit = true;
                app.dialog = None;
                fx.push(Effect::Quit { stop: false });
            }
            'l' => {
                app.flash = Some(
                    "process agents stop with rascal; only docker agents can be left running"
                        .into(),
                )
            }
            'n' => app.dialog = None,
            _ => {}
        },
        Some(Dialog::Cancel { candidate }) => match ch {
            'y' => {
                app.dialog = None;
                let d = decision(
                    app,
                    candidate.clone(),
                    DecisionKind::Cancel,
                    "cancelled from the TUI",
                );
                app.apply_decision(&d);
                fx.push(Effect::Decide(d));
                fx.push(match candidate {
                    Some(id) => Effect::CancelCandidate(id),
                    None => Effect::CancelRun,
                });
            }
            'n' => app.dialog = None,
            _ => {}
        },
        Some(Dialog::Question {
            candidates, lines, ..
        }) => answer_question(app, ch, &candidates, &lines, fx),
        Some(Dialog::Copy { candidate }) => {
            if let Some(what) = crate::jump::CopyWhat::from_key(ch) {
                app.dialog = None;
                fx.push(Effect::Copy { candidate, what });
            }
        }
        Some(Dialog::Hazards { mut jump, .. }) => match ch {
            'y' => {
                app.dialog = None;
                jump.confirmed = true;
                fx.push(Effect::Jump(jump));
            }
            'n' => app.dialog = None,
            _ => {}
        },
        _ => {}
    }
}

/// The question dialog: a digit names the candidate that is right here
/// (it is selected), `0` says neither is.
fn answer_question(
    app: &mut App,
    ch: char,
    candidates: &[String],
    lines: &[String],
    fx: &mut Vec<Effect>,
) {
    if ch == '0' {
        // Neither is right: send one back with the example as its
        // feedback (the focused one when it was asked about).
        let focused = app.focused().map(|c| c.info.id.clone());
        let Some(c) = focused
            .filter(|f| candidates.contains(f))
            .or_else(|| candidates.first().cloned())
        else {
            return;
        };
        let mut input = String::from("Neither candidate is right here:\n");
        for l in lines {
            input.push_str(&format!("  {}\n", l.split(" (by ").next().unwrap_or(l)));
        }
        input.push_str("What is right: ");
        app.dialog = Some(Dialog::Retry {
            candidate: c,
            input,
            error: None,
        });
        return;
    }
    let Some(c) = ch
        .to_digit(10)
        .and_then(|d| candidates.get((d as usize).checked_sub(1)?))
    else {
        return;
    };
    app.dialog = None;
    let first = lines
        .first()
        .map(|l| l.split(" (by ").next().unwrap_or(l))
        .unwrap_or("");
    let d = decision(
        app,
        Some(c.clone()),
        DecisionKind::Select,
        &format!("answered the question: {c} is right here ({first})"),
    );
    app.flash = Some(format!("recorded: {c} is right here — selected"));
    app.apply_decision(&d);
    fx.push(Effect::Decide(d));
}
