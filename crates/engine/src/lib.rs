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

// The lower crates' folders under their own names: `crate::model::…`
// reads the same in every crate of the workspace.
pub use rascal_core::with_style_names;
pub use rascal_core::{config, digest, model, text};
pub use rascal_exec::{agents, egress, exec, git};

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
