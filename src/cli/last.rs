//! `last` as a run's name: every command that takes a RUN also takes
//! `last`, the newest run recorded in this repository (as `rascal list`
//! shows it first), so a session reads `rascal show last`, `rascal retry
//! last hasty --feedback …` without copying an id.

use super::args::Command;
use super::exit::CliError;
use super::shared::open_store_read;
use std::path::Path;

/// The word that names the newest run.
pub const LAST: &str = "last";

/// The RUN argument of a command, if it has one.
fn run_of(command: &mut Command) -> Option<&mut String> {
    Some(match command {
        Command::Select(a) => &mut a.run,
        Command::Override(a) => &mut a.run,
        Command::Retry(a) => &mut a.run,
        Command::Combine(a) => &mut a.run,
        Command::Escalate(a) => &mut a.run,
        Command::Finalize(a) => &mut a.run,
        Command::Report(a) => &mut a.run,
        Command::Attach(a) => &mut a.run,
        Command::Show(a) => &mut a.run,
        Command::Verify(a) => &mut a.run,
        _ => return None,
    })
}

/// Replace a RUN of `last` with the newest run's id. A repository with no
/// run is a usage error that says how to start one.
pub fn resolve(dir: &Path, command: &mut Command) -> Result<(), CliError> {
    let Some(run) = run_of(command) else {
        return Ok(());
    };
    if run != LAST {
        return Ok(());
    }
    let newest = open_store_read(dir)?.list()?.into_iter().next();
    match newest {
        Some(row) => {
            *run = row.id;
            Ok(())
        }
        None => Err(CliError::Usage(
            "`last` names the newest run, and this repository has none yet: start one with `rascal run \"INSTRUCTION\"`".into(),
        )),
    }
}
