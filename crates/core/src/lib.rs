//! rascal-core: the bottom of rascal, with no I/O runtime (no tokio, git2,
//! bollard or kube). From the bottom up: `digest`, `text` (sanitising
//! untrusted text) → `config` (bytes in, types out) → `model` (verdicts,
//! changes, decisions, events and the one fold). See docs/architecture.md.

pub mod digest;

pub mod error;
pub use error::Error;

pub mod text;

pub mod config;

pub mod model;
