//! `rascal retry`: one candidate of a finished run back to its agent with
//! feedback, verified again and the run re-ranked.

use super::args::RetryArgs;
use super::exit::CliError;
use super::shared::current_exe;
use std::path::Path;

pub fn retry(dir: &Path, args: RetryArgs) -> Result<i32, CliError> {
    let RetryArgs {
        run,
        candidate,
        feedback,
        json,
        quiet,
    } = args;
    let project = rascal_engine::store::Project::open(dir)?;
    let who = project.author();
    let exe = current_exe()?;
    let prepared =
        rascal_engine::pipeline::prepare_retry(dir, &run, &candidate, &feedback, &who, exe)?;
    // The record before the retry: the closing lines describe every
    // candidate, not only the one that went again. Read without looking
    // for dead runs: the run is this process's now, and would read as
    // interrupted.
    let known = project
        .store()?
        .verified_timed(&run)
        .map(|(events, _)| events.into_iter().map(|(_, ev)| ev).collect())
        .unwrap_or_default();
    super::run::execute(prepared, json, !quiet, Vec::new(), known).map(|(code, _)| code)
}
