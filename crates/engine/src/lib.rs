//! rascal's engine: everything a run does, whoever drives it — the
//! verification layers, the journal (store), reports, the one pipeline
//! that runs a task, cleaning up after runs, finalize, doctor and init.
//! The TUI (`rascal-tui`) and the CLI (the `rascal` crate) are both thin
//! on top of it: a headless run and a TUI run make the same calls.
//!
//! Folders follow one direction: `layers` (the checks) → `store` (the
//! journal) → `output` (printer, reports) → `changes` (a candidate's
//! change as the views read it) → `pipeline` (the one
//! orchestrator) → `gc` → `finalize`, `doctor`, `init`
//! (docs/architecture.md; checked by `tests/it/architecture.rs`).

pub mod layers;

pub mod store;

pub mod output;

pub mod changes;

pub mod pipeline;

pub mod gc;

pub mod finalize;

pub mod doctor;

pub mod init;

pub mod run_handle;
pub use run_handle::RunHandle;

pub mod error;
pub use error::Error;

// What a front end needs from below the engine, chosen here so the TUI
// depends on the engine and the core only (docs/architecture.md).
/// The prefix of the egress proxy's lines in a candidate's log.
pub use rascal_exec::egress::proxy::LOG_PREFIX as EGRESS_LOG_PREFIX;
/// Run the person's notifier command (config `notify:`).
pub use rascal_exec::exec::notify::run as run_notifier;
/// Signals: a front end stops cleanly on SIGTERM/SIGINT and a hung-up
/// terminal.
pub use rascal_exec::exec::os::{terminal_hung_up, told_to_stop, watch_signals};
/// A duration as people read it: `850ms`, `4.2s`, `3m05s`.
pub use rascal_exec::exec::runner::human as human_duration;
/// The runtime every run, notifier and finalize of a front end runs on
/// (one that cannot be started is a usage error: nothing ran).
pub fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    rascal_exec::exec::runtime().map_err(|e| Error::Usage(e.to_string()))
}
/// The environment for a person's jump into a workspace: git there runs
/// nothing the workspace configured.
pub use rascal_exec::git::safe_env::{for_workspace as safe_git_for_workspace, SafeGit};
