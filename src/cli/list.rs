//! `rascal list`: the runs recorded in this repository.

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
        "{:<17} {:<11} {:<9} {:>4}  {:<8}  task",
        "RUN",
        "STATUS",
        "VERDICT",
        "CAND",
        "BASE"
    );
    for r in runs {
        say!(
            "{:<17} {:<11} {:<9} {:>4}  {:<8}  {}",
            r.id,
            r.status,
            if r.exit_code == Some(ESCALATED) {
                "ESCALATED".to_string()
            } else {
                r.verdict.as_deref().unwrap_or("-").to_uppercase()
            },
            r.candidates,
            &r.base[..r.base.len().min(8)],
            ellipsis(&sanitize(r.instruction.lines().next().unwrap_or("")), 60)
        );
    }
    Ok(PASS)
}
