//! rascal: hand one coding task to several AI agents at once and know which
//! result can be trusted. This crate is the library behind the `rascal`
//! binary.
//!
//! The folders are listed from the bottom up; a folder only uses the ones
//! above it in this list (checked by `tests/it/architecture.rs`):
//! `digest`, `text` (sanitising untrusted text) → `config` (bytes in, types out) →
//! `model` (verdicts, changes, decisions, events and the one fold) → `git`
//! (repositories, workspaces, diffs) → `egress` (the network allowlist and
//! its proxy) → `exec` (commands, launchers) →
//! `agents` (runtimes, stream parsing, asking) → `layers` (the checks) →
//! `store` (the journal) → `output` (printer, reports) → `pipeline` (the
//! one orchestrator) → `gc` (cleaning up after runs) → `finalize`,
//! `doctor`, `init` → `tui` → `cli`.

pub mod digest;

pub mod text;

pub mod config;

pub mod model;

pub mod git;

pub mod egress;

pub mod exec;

pub mod agents;

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
