//! `rascal combine RUN`: the combining agent writes a candidate from the
//! run's best passing candidates; it is verified like any other and the
//! run re-ranked (see `pipeline::combine`).

use super::args::CombineArgs;
use super::exit::CliError;
use super::shared::{current_exe, open_store};
use std::path::Path;

pub fn combine(dir: &Path, args: CombineArgs) -> Result<i32, CliError> {
    let CombineArgs { run, json, quiet } = args;
    let who = rascal_engine::store::Project::open(dir)?.author();
    let exe = current_exe()?;
    // The record before the combine (read before the run is marked running
    // again by this process): the closing lines describe every candidate,
    // not only the combined one.
    let known = open_store(dir)?
        .verified_timed(&run)
        .map(|(events, _)| events.into_iter().map(|(_, ev)| ev).collect())
        .unwrap_or_default();
    let prepared = rascal_engine::pipeline::prepare_combine(dir, &run, &who, exe)?;
    super::run::execute(prepared, json, !quiet, Vec::new(), known).map(|(code, _)| code)
}
