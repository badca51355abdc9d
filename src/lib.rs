//! rascal: hand one coding task to several AI agents at once and know which
//! result can be trusted. This crate is the library behind the `rascal`
//! binary.
//!
//! The workspace's crates, from the bottom up (docs/architecture.md;
//! checked by `tests/it/architecture.rs`): `rascal-core` (`digest`, `text`,
//! `config`, `model`), then `rascal-scan` (the pure scanners, seen here as
//! `layers::secrets`, `layers::imports`, …) and `rascal-exec` (`git`,
//! `egress`, `exec`, `agents`), then this crate, whose folders follow in
//! one direction: `layers` (the checks) → `store` (the journal) → `output`
//! (printer, reports) → `pipeline` (the one orchestrator) → `gc` (cleaning
//! up after runs) → `finalize`, `doctor`, `init` → `tui` → `cli`.

// The unit tests share the integration tests' TUI fixture, which names
// this crate `rascal`.
#[cfg(test)]
extern crate self as rascal;

// The lower crates' folders under their own names: `crate::model::…`
// reads the same in every crate of the workspace.
pub use rascal_core::with_style_names;
pub use rascal_core::{config, digest, model, text};
pub use rascal_exec::{agents, egress, exec, git};

pub mod layers;

pub mod store;

pub mod output;

pub mod pipeline;

pub mod gc;

pub mod finalize;

pub mod doctor;

pub mod init;

pub mod tui;

pub mod cli;
