//! `rascal report`: a run's report as md (the PR body), json or sarif.

use super::args::ReportArgs;
use super::exit::{CliError, PASS};
use super::shared::{open_store, say};
use std::path::Path;

pub fn report(dir: &Path, args: ReportArgs) -> Result<i32, CliError> {
    let summary = open_store(dir)?.summary(&args.run)?;
    say!("{}", crate::output::report::render(&summary, args.format));
    Ok(PASS)
}
