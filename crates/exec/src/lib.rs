//! rascal-exec: where rascal touches the system. From the bottom up: `git`
//! (repositories, workspaces, diffs) → `egress` (the network allowlist and
//! its proxy) → `exec` (commands, sandboxes, limits, launchers) → `agents`
//! (runtimes, stream parsing, asking). Depends on rascal-core only. See
//! docs/architecture.md.

// The core's modules under their own names, so paths read `crate::model::…`
// here as in every crate of the workspace.
use rascal_core::{config, digest, model, text};

pub mod error;

pub use error::Error;

pub mod git;

pub mod egress;

pub mod exec;

pub mod agents;
