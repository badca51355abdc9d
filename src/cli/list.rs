//! `rascal list`: the runs recorded in this repository, each verdict read
//! from the run's checked journal: a run whose record was changed after it
//! was written shows as TAMPERED.

use super::args::ListArgs;
use super::exit::{CliError, ESCALATED, PASS};
use super::shared::{open_store, say};
use crate::text::{ellipsis, sanitize};
use std::path::Path;

pub fn list(dir: &Path, args: ListArgs) -> Result<i32, CliError> {
    let store = open_store(dir)?;
    let runs = store.list()?;
    if args.json {
        say!(
            "{}",
            serde_json::to_string_pretty(&runs).unwrap_or_default()
        );
        return Ok(PASS);
    }
    if runs.is_empty() {
        say!("no runs yet — start one with: rascal run \"INSTRUCTION\" --agent NAME");
        return Ok(PASS);
    }
    say!(
        "{:<17} {:<11} {:<12} {:>4}  {:<8}  task",
        "RUN",
        "STATUS",
        "STATE",
        "CAND",
        "BASE"
    );
    let unchained = runs.iter().any(|r| r.chain == "unchained");
    for r in &runs {
        let mark = if r.chain == "unchained" { "*" } else { "" };
        // The state folded from the journal: a run still being driven is
        // RUNNING, never a verdict an earlier attempt had.
        let state = match (&r.broken_event, r.state) {
            (Some(_), _) => "TAMPERED".to_string(),
            (None, Some(s)) => format!("{s}{mark}"),
            (None, None) if r.exit_code == Some(ESCALATED) => format!("ESCALATED{mark}"),
            (None, None) => format!(
                "{}{mark}",
                r.verdict.as_deref().unwrap_or("-").to_uppercase()
            ),
        };
        let mut decided = match (&r.finalized, &r.selected) {
            (Some(b), _) => format!(" [finalized on {}]", sanitize(b)),
            (None, Some(c)) => format!(" [selected {}]", sanitize(c)),
            _ => String::new(),
        };
        if !r.over_budget.is_empty() {
            let ids: Vec<String> = r.over_budget.keys().map(|c| sanitize(c)).collect();
            decided.push_str(&format!(" [stopped by budget: {}]", ids.join(", ")));
        }
        say!(
            "{:<17} {:<11} {:<12} {:>4}  {:<8}  {}{decided}",
            r.id,
            r.status,
            state,
            r.candidates,
            &r.base[..r.base.len().min(8)],
            ellipsis(&sanitize(r.instruction.lines().next().unwrap_or("")), 60)
        );
    }
    for r in runs.iter().filter(|r| r.broken_event.is_some()) {
        say!(
            "{}: its record was changed after it was written (event {}); `rascal verify {}` says more",
            r.id,
            r.broken_event.unwrap_or(0),
            r.id
        );
    }
    if unchained {
        say!("* recorded by an older rascal, before the journal was chained: cannot be checked");
    }
    Ok(PASS)
}
