//! The verification layers. Evaluators over a ChangeSet are pure functions;
//! layers that run commands go through the command runner.

pub(crate) mod agreement;
pub mod compare;
pub(crate) mod coverage;
pub mod criteria;
pub(crate) mod criterion_proof;
pub(crate) mod diagnostics;
pub(crate) mod evidence;
pub mod guardrails;
pub mod permissions;
pub(crate) mod probes;
pub mod provenance;
pub mod review;
pub(crate) mod test_results;
pub(crate) mod vacuous;
