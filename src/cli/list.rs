//! `rascal list`: the runs recorded in this repository, each verdict read
//! from the run's checked journal: a run whose record was changed after it
//! was written shows as TAMPERED. The DISK column (`disk_bytes`) is what
//! the run's workspaces and run files take (`–` once `rascal gc` removed
//! them). PICK is the comparator's pick, or `contested: a | b` when the
//! candidates that passed disagree and nothing settles it.

use super::args::ListArgs;
use super::exit::{CliError, ESCALATED, PASS};
use super::shared::{open_store_read, say};
use rascal_core::text::{ellipsis, sanitize};
use std::path::Path;

/// A run as `--json` lists it: its row and its disk use.
#[derive(serde::Serialize)]
struct Listed<'a> {
    #[serde(flatten)]
    row: &'a rascal_engine::store::RunRow,
    disk_bytes: u64,
}

pub fn list(dir: &Path, args: ListArgs) -> Result<i32, CliError> {
    let store = open_store_read(dir)?;
    let runs = store.list()?;
    let repo = rascal_exec::git::workspace::open(dir)?;
    let disk: Vec<u64> = runs
        .iter()
        .map(|r| rascal_engine::gc::run_disk(&repo, &r.id))
        .collect();
    if args.json {
        let listed: Vec<Listed> = runs
            .iter()
            .zip(&disk)
            .map(|(row, &disk_bytes)| Listed { row, disk_bytes })
            .collect();
        say!(
            "{}",
            rascal_core::text::inert::json(
                &serde_json::to_string_pretty(&listed).unwrap_or_default()
            )
        );
        return Ok(PASS);
    }
    if runs.is_empty() {
        say!("no runs yet — start one with: rascal run \"INSTRUCTION\" --agent NAME");
        return Ok(PASS);
    }
    say!(
        "{:<17} {:<11} {:<12} {:>4} {:>10}  {:<8}  {:<24}  task",
        "RUN",
        "STATUS",
        "STATE",
        "CAND",
        "DISK",
        "BASE",
        "PICK"
    );
    let unchained = runs.iter().any(|r| r.chain == "unchained");
    for (r, &bytes) in runs.iter().zip(&disk) {
        let disk = if bytes == 0 {
            "–".to_string()
        } else {
            rascal_engine::gc::human_bytes(bytes)
        };
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
        let pick = r
            .pick
            .as_deref()
            .map_or("–".to_string(), |p| ellipsis(&sanitize(p), 24));
        say!(
            "{:<17} {:<11} {:<12} {:>4} {:>10}  {:<8}  {:<24}  {}{decided}",
            r.id,
            r.status,
            state,
            r.candidates,
            disk,
            &r.base[..r.base.len().min(8)],
            pick,
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
