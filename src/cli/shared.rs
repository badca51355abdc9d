//! What the subcommands share: printing to a stdout that may be closed, the
//! run store, the path of this executable.

use super::exit::CliError;
use rascal_engine::store::{ChainHead, Store};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `println!` that never panics: a closed stdout (`rascal show … | head`)
/// must not kill a run or print a backtrace. What it prints passes the
/// output policy (`text::inert::terminal`): an agent's text quoted in it
/// shows its escape sequences, never plays them.
macro_rules! say {
    ($($arg:tt)*) => {{
        let line = ::rascal_core::text::inert::terminal(&::std::format!($($arg)*));
        let _ = ::std::io::Write::write_fmt(
            &mut ::std::io::stdout(),
            ::std::format_args!("{line}\n"),
        );
    }};
}
pub(crate) use say;

/// `eprintln!` through the same output policy as [`say`].
macro_rules! tell {
    ($($arg:tt)*) => {{
        ::std::eprintln!("{}", ::rascal_core::text::inert::terminal(&::std::format!($($arg)*)));
    }};
}
pub(crate) use tell;

/// Print lines to stdout (ignoring a closed stdout) and flush, each through
/// the output policy (`text::inert::terminal`).
pub fn out(lines: Vec<String>) {
    let stdout = std::io::stdout();
    let mut o = stdout.lock();
    for l in lines {
        let _ = writeln!(o, "{}", rascal_core::text::inert::terminal(&l));
    }
    let _ = o.flush();
}

/// The repository's run store, with runs whose rascal died marked
/// interrupted. Reading a run's events from it checks the run's hash
/// chain first.
pub fn open_store(dir: &Path) -> Result<Store, CliError> {
    let mut store = rascal_engine::store::Project::open(dir)?.store()?;
    store.mark_interrupted()?;
    Ok(store)
}

/// The run store for reading (`list`, `show`, `report`, `verify`): as
/// `open_store`, or — when the store cannot be written (read-only, disk
/// full) — opened read-only, with a note on stderr that runs whose rascal
/// died are not marked as such.
pub fn open_store_read(dir: &Path) -> Result<Store, CliError> {
    match open_store(dir) {
        Ok(s) => Ok(s),
        Err(CliError::Store(e)) => match rascal_engine::store::Project::open(dir)?.store_read() {
            Ok(store) => {
                tell!(
                    "rascal: the run store cannot be written ({}); reading it as it is",
                    e.to_string().lines().next().unwrap_or("")
                );
                Ok(store)
            }
            Err(_) => Err(CliError::Store(e)),
        },
        Err(e) => Err(e),
    }
}

/// Say on stderr that `run`'s journal predates the chain, so its record
/// could not be checked (a run of an older rascal).
pub fn note_unchained(run: &str, head: Option<&ChainHead>) {
    if let Some(ChainHead { head: None, .. }) = head {
        eprintln!(
            "rascal: note: run {run} was recorded by an older rascal, before the journal was chained; its record cannot be checked"
        );
    }
}

/// This executable (agents of the scripted kind run it again).
pub fn current_exe() -> Result<PathBuf, CliError> {
    std::env::current_exe().map_err(|e| CliError::Usage(e.to_string()))
}
