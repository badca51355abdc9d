//! rascal: hand one coding task to several AI agents at once and know which
//! result can be trusted. This crate is the library behind the `rascal`
//! binary: the command line (`cli`), on top of the engine and the TUI.
//!
//! The workspace's crates, from the bottom up (docs/architecture.md;
//! checked by `tests/it/architecture.rs`): `rascal-core` (`digest`, `text`,
//! `config`, `model`), then `rascal-scan` (the pure scanners: `secrets`,
//! `imports`, `deps`, …) and `rascal-exec` (`git`,
//! `egress`, `exec`, `agents`), then `rascal-engine` (`layers`, `store`,
//! `output`, `pipeline`, `gc`, `finalize`, `doctor`, `init`), then
//! `rascal-tui`, then this crate.

pub mod cli;
