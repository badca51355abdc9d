//! `rascal show`: a recorded run as it printed live (or its JSON summary);
//! exits with the run's code.

use super::args::ShowArgs;
use super::exit::{CliError, FAIL};
use super::shared::{note_unchained, open_store_read, out, say};
use rascal_core::model::summary::RunSummary;
use rascal_engine::output::Printer;
use std::path::Path;

pub fn show(dir: &Path, args: ShowArgs) -> Result<i32, CliError> {
    let ShowArgs {
        run,
        json,
        quiet,
        timings,
    } = args;
    let store = open_store_read(dir)?;
    if timings {
        let (events, head) = store.verified_timed(&run)?;
        note_unchained(&run, Some(&head));
        let summary = RunSummary::from_timed(&events);
        let t = rascal_engine::output::timings(&summary);
        if json {
            say!(
                "{}",
                rascal_core::text::inert::json(
                    &serde_json::to_string_pretty(&t).unwrap_or_default()
                )
            );
        } else {
            out(rascal_engine::output::timings_lines(&t));
        }
        return Ok(summary.exit_code.unwrap_or(FAIL));
    }
    // Refused when the run's record was changed after it was written.
    let (events, head) = store.verified_events(&run)?;
    note_unchained(&run, Some(&head));
    let mut summary = RunSummary::from_events(&events);
    summary.journal = Some(head);
    if json {
        say!(
            "{}",
            rascal_core::text::inert::json(
                &serde_json::to_string_pretty(&summary).unwrap_or_default()
            )
        );
    } else {
        let mut printer = Printer::new(!quiet);
        let mut view = rascal_engine::store::LogView::new(&rascal_exec::git::workspace::files_dir(
            &rascal_exec::git::workspace::open(dir)?,
        ));
        for ev in &events {
            super::run::print_event(&mut printer, &mut view, ev);
        }
        out(rascal_engine::output::state_lines(&summary));
        if summary.status == "running" {
            say!("(run still in progress)");
        }
    }
    // A run without an end (still running, or cut short) is not a PASS.
    Ok(summary.exit_code.unwrap_or(FAIL))
}
