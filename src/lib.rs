//! rascal: hand one coding task to several AI agents at once and know which
//! result can be trusted. This crate is the library behind the `rascal`
//! binary: the command line (`cli`), on top of the engine and the TUI.
//!
//! The workspace's crates, from the bottom up (docs/architecture.md;
//! checked by `tests/it/architecture.rs`): `rascal-core` (`digest`, `text`,
//! `config`, `model`), then `rascal-scan` (the pure scanners, seen as
//! `layers::secrets`, `layers::imports`, …) and `rascal-exec` (`git`,
//! `egress`, `exec`, `agents`), then `rascal-engine` (`layers`, `store`,
//! `output`, `pipeline`, `gc`, `finalize`, `doctor`, `init`), then
//! `rascal-tui`, then this crate.

// The lower crates' folders under their own names: `rascal::model::…`,
// `rascal::pipeline::…` read the same from the binary and the tests.
pub use rascal_core::with_style_names;
pub use rascal_core::{config, digest, model, text};
pub use rascal_engine::{
    changes, doctor, error, finalize, gc, init, layers, output, pipeline, store,
};
pub use rascal_exec::{agents, egress, exec, git};
pub use rascal_tui as tui;

pub mod cli;
