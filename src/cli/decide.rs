//! The human's decisions on a finished run: `rascal select`, `override`
//! and `escalate`, each recorded in the run's journal.

use super::args::{EscalateArgs, OverrideArgs, SelectArgs};
use super::exit::{CliError, ESCALATED, PASS};
use super::shared::{open_store, say};
use rascal_core::model::decision::{accept_skipped, not_run, Decision, DecisionKind};
use rascal_core::model::event::RunEvent;
use rascal_core::model::verdict::Layer;
use rascal_engine::output::decision_line;
use std::path::Path;

/// `rascal select RUN CANDIDATE`: the candidate to finalize. One that did
/// not pass is refused unless `--force` comes with a `--reason`.
pub fn select(dir: &Path, args: SelectArgs) -> Result<i32, CliError> {
    let SelectArgs {
        run,
        candidate,
        reason,
        force,
    } = args;
    let summary = open_store(dir)?.summary(&run)?;
    let cand = summary
        .candidate(&candidate)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    if let Some(why) = cand.select_refusal() {
        // No verified change to select, whatever `--force` says.
        if cand.impossible.is_some() {
            return Err(CliError::Usage(format!(
                "{why}\n  `rascal finalize` never commits a candidate that declared the task impossible\n  \
                 hint: read its reason with `rascal show {run}`; give it another attempt with `rascal retry {run} {} --feedback \"…\"`, or select another candidate",
                rascal_core::text::inert::shell_word(&candidate)
            )));
        }
        if !force || reason.trim().is_empty() {
            return Err(CliError::Usage(format!(
                "{why}\n  `rascal finalize` refuses a candidate that did not pass\n  \
                 hint: override its failed checks first (`rascal override {run} {} --layer L --check C --reason R --with-skipped`), \
                 or select it anyway with `--force --reason \"why\"`",
                rascal_core::text::inert::shell_word(&candidate)
            )));
        }
    }
    if let Some(why) = rascal_engine::layers::needs_reason(&candidate, &cand.reports) {
        if reason.trim().is_empty() {
            return Err(CliError::Usage(format!(
                "{why} (listed in `rascal show {run}`): choosing it is a human's decision\n  \
                 hint: read the new lines, then `rascal select {run} {} --reason \"why\"`",
                rascal_core::text::inert::shell_word(&candidate)
            )));
        }
    }
    decide(dir, &run, Some(&candidate), DecisionKind::Select, &reason)
}

/// `rascal escalate RUN [CANDIDATE] --note N`: hand it to a human (exit 3).
pub fn escalate(dir: &Path, args: EscalateArgs) -> Result<i32, CliError> {
    let EscalateArgs {
        run,
        candidate,
        note,
    } = args;
    if note.trim().is_empty() {
        return Err(CliError::Usage(
            "an escalation needs a note: say what the human should look at\n  \
             hint: rascal escalate RUN [CANDIDATE] --note \"what to look at\""
                .into(),
        ));
    }
    decide(
        dir,
        &run,
        candidate.as_deref(),
        DecisionKind::Escalate,
        &note,
    )
}

/// `rascal override RUN CANDIDATE --layer L --check C --reason R`: accept a
/// failed check; with `--with-skipped`, also every check it kept from
/// running.
pub fn override_check(dir: &Path, args: OverrideArgs) -> Result<i32, CliError> {
    let OverrideArgs {
        run,
        candidate,
        layer,
        check,
        rule,
        reason,
        with_skipped,
    } = args;
    let layer: Layer = serde_json::from_value(serde_json::Value::String(layer.clone()))
        .map_err(|_| {
            CliError::Usage(format!(
                "unknown layer `{layer}`\n  hint: one of agent, guardrails, permissions, criteria, review"
            ))
        })?;
    let code = decide(
        dir,
        &run,
        Some(&candidate),
        DecisionKind::Override { layer, check, rule },
        &reason,
    )?;
    if code != PASS || !with_skipped {
        return Ok(code);
    }
    let summary = open_store(dir)?.summary(&run)?;
    let cand = summary
        .candidate(&candidate)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    for kind in accept_skipped(&cand.reports, cand.current_decisions()) {
        let code = decide(dir, &run, Some(&candidate), kind, &not_run(&reason))?;
        if code != PASS {
            return Ok(code);
        }
    }
    Ok(PASS)
}

/// Record one decision by the repository's git author and print it.
fn decide(
    dir: &Path,
    run: &str,
    candidate: Option<&str>,
    kind: DecisionKind,
    reason: &str,
) -> Result<i32, CliError> {
    let who = rascal_engine::store::Project::open(dir)?.author();
    let escalate = kind == DecisionKind::Escalate;
    let d = Decision::new(candidate, kind, &who, reason);
    match rascal_engine::pipeline::record_decision(dir, run, d)? {
        RunEvent::DecisionRecorded { decision } => {
            say!("{}", decision_line(&decision));
            Ok(if escalate { ESCALATED } else { PASS })
        }
        _ => Ok(PASS),
    }
}
