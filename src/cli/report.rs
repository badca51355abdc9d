//! `rascal report`: a run's report as md (the PR body), json or sarif.

use super::args::ReportArgs;
use super::exit::{CliError, PASS};
use super::shared::{note_unchained, open_store_read, say};
use std::path::Path;

pub fn report(dir: &Path, args: ReportArgs) -> Result<i32, CliError> {
    // Refused when the run's record was changed after it was written.
    let summary = open_store_read(dir)?.summary(&args.run)?;
    note_unchained(&args.run, summary.journal.as_ref());
    say!(
        "{}",
        rascal_engine::output::render_report(&summary, args.format)
    );
    Ok(PASS)
}
