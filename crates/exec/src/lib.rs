//! rascal-exec: where rascal touches the system. From the bottom up: `git`
//! (repositories, workspaces, diffs) → `egress` (the network allowlist and
//! its proxy) → `exec` (commands, sandboxes, limits, launchers) → `agents`
//! (runtimes, stream parsing, asking). Depends on rascal-core only. See
//! docs/architecture.md.

pub(crate) mod error;

pub use error::Error;

pub mod git;

pub mod egress;

pub mod exec;

pub mod agents;
