//! Where a run stands, as the last lines of `rascal show` say it: each
//! candidate's state, the selection, the finalize or what finalize would
//! do next, and the decisions taken on the way.

use rascal_core::model::state::State;
use rascal_core::text::{cut, ellipsis, sanitize};

/// Where the run and each candidate stand (folded from the journal), the
/// selection and the finalize: the last lines of `rascal show`.
pub fn state_lines(s: &rascal_core::model::summary::RunSummary) -> Vec<String> {
    let cands: Vec<String> = s
        .candidates
        .iter()
        .map(|c| {
            let note = match (&c.escalated, c.state, &c.over_budget) {
                (Some(e), State::Escalated, _) => format!(" ({})", cut(&sanitize(&e.reason), 80)),
                (_, State::Cancelled, Some(why)) => format!(" — {}", cut(&sanitize(why), 80)),
                _ if c.state == State::Impossible => format!(
                    " — declared impossible: {}",
                    ellipsis(
                        &sanitize(rascal_core::model::impossible::first_line(
                            c.impossible.as_deref().unwrap_or("")
                        )),
                        80
                    )
                ),
                _ => String::new(),
            };
            // A run that ended before a candidate started (a plan that
            // waits for a human's approval): never QUEUED, it will not run.
            if c.state == State::Queued && s.status == "finished" {
                let why = match &s.plan {
                    Some(_)
                        if !s.decisions.iter().any(|d| {
                            matches!(
                                d.kind,
                                rascal_core::model::decision::DecisionKind::ApprovePlan { .. }
                            )
                        }) =>
                    {
                        " (the plan was not approved)"
                    }
                    _ => "",
                };
                return format!("{} NOT STARTED{why}", sanitize(&c.id));
            }
            format!("{} {}{note}", sanitize(&c.id), c.state)
        })
        .collect();
    let mut out = vec![format!("state: run {} · {}", s.state, cands.join(" · "))];
    match (&s.selected, &s.finalized) {
        (_, Some(f)) => out.push(format!(
            "selected: {} · finalized on {} ({})",
            sanitize(&f.candidate),
            sanitize(&f.branch),
            &f.commit[..f.commit.len().min(12)]
        )),
        (Some(c), None) => out.push(format!("selected: {}", sanitize(c))),
        (None, None) => {}
    }
    if s.finalized.is_none() && s.status != "running" {
        out.extend(next_lines(s));
    }
    out
}

/// What `rascal finalize` would do with the run as it stands now (after
/// every decision): commit a candidate, or refuse and say what to run —
/// the same words finalize says, so `show` never ends on a hint that
/// finalize then refuses.
fn next_lines(s: &rascal_core::model::summary::RunSummary) -> Vec<String> {
    use rascal_core::model::choice::{choose, Choice};
    let run = sanitize(&s.run);
    match choose(s) {
        Ok(Choice::Selected(c)) => vec![format!(
            "next: `rascal finalize {run}` commits the selected {}",
            sanitize(&c)
        )],
        Ok(Choice::Pick(p)) => vec![format!(
            "next: `rascal finalize {run}` commits the pick, {}",
            sanitize(&p)
        )],
        Err(_) if s.state == State::Cancelled => vec![
            "next: nothing to finalize — the run was cancelled before a candidate passed; run the task again".into(),
        ],
        Err(why) => {
            let why = why.to_string();
            let mut lines = why.lines();
            let first = lines.next().unwrap_or_default();
            let mut out = vec![format!(
                "next: finalize needs a human's choice — {}",
                sanitize(first)
            )];
            out.extend(lines.map(|l| sanitize(l).to_string()));
            out
        }
    }
}

/// One decision, as the journal shows it.
pub fn decision_line(d: &rascal_core::model::decision::Decision) -> String {
    use rascal_core::model::decision::DecisionKind;
    let who = sanitize(&d.who);
    let target = d
        .candidate
        .as_deref()
        .map(|c| format!("[{}] ", sanitize(c)))
        .unwrap_or_default();
    let reason = if d.reason.is_empty() {
        String::new()
    } else {
        format!(": {}", sanitize(&d.reason))
    };
    match &d.kind {
        DecisionKind::Select => format!("{target}selected by {who}{reason}"),
        DecisionKind::Override { layer, check, rule } => format!(
            "{target}{layer}/{}{} FAIL → overridden by {who}{reason}",
            sanitize(check),
            rule.as_deref()
                .map(|r| format!(" ({})", sanitize(r)))
                .unwrap_or_default()
        ),
        DecisionKind::Escalate => format!("{target}escalated by {who}{reason}"),
        DecisionKind::Retry { feedback } => {
            // One line: the feedback's lines joined, never a `^J`.
            let lines: Vec<&str> = feedback
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            format!(
                "{target}retry requested by {who}: {}",
                cut(&sanitize(&lines.join(" / ")), 200)
            )
        }
        DecisionKind::Cancel => format!("{target}cancelled by {who}{reason}"),
        DecisionKind::ApprovePlan {
            criteria,
            constraints,
            changes,
        } => format!(
            "plan approved by {who}{reason} — {}, {}{}",
            rascal_core::text::plural(criteria.len() as u64, "acceptance criterion"),
            rascal_core::text::plural(constraints.len() as u64, "constraint"),
            if changes.is_empty() {
                String::new()
            } else {
                format!("; changed: {}", cut(&sanitize(&changes.join("; ")), 400))
            }
        ),
        DecisionKind::Combine { from } => format!(
            "{target}combine of {} requested by {who}{reason}",
            sanitize(&from.join(", "))
        ),
    }
}
