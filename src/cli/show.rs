//! `rascal show`: a recorded run as it printed live (or its JSON summary);
//! exits with the run's code.

use super::args::ShowArgs;
use super::exit::{CliError, FAIL};
use super::shared::{open_store, out, say};
use crate::model::summary::RunSummary;
use crate::output::printer::Printer;
use std::path::Path;

pub fn show(dir: &Path, args: ShowArgs) -> Result<i32, CliError> {
    let ShowArgs { run, json, quiet } = args;
    let store = open_store(dir)?;
    let events = store.events(&run)?;
    let summary = RunSummary::from_events(&events);
    if json {
        say!(
            "{}",
            serde_json::to_string_pretty(&summary).unwrap_or_default()
        );
    } else {
        let mut printer = Printer::new(!quiet);
        for ev in &events {
            out(printer.render(ev));
        }
        if summary.status == "running" {
            say!("(run still in progress)");
        }
    }
    // A run without an end (still running, or cut short) is not a PASS.
    Ok(summary.exit_code.unwrap_or(FAIL))
}
