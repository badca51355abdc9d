//! The verification layers. Evaluators over a ChangeSet are pure functions;
//! layers that run commands go through the command runner.

// The pure scanners are the rascal-scan crate.
pub use rascal_scan::{deps, imports, ledger, secrets, test_integrity};

pub mod agreement;
pub mod compare;
pub mod coverage;
pub mod criteria;
pub mod criterion_proof;
pub mod diagnostics;
pub mod guardrails;
pub mod permissions;
pub mod probes;
pub mod provenance;
pub mod review;
pub mod test_results;
pub mod vacuous;
