//! The verification layers. Evaluators over a ChangeSet are pure functions;
//! layers that run commands go through the command runner.

pub mod compare;
pub mod criteria;
pub mod deps;
pub mod diagnostics;
pub mod guardrails;
pub mod imports;
pub mod ledger;
pub mod permissions;
pub mod review;
pub mod secrets;
pub mod test_integrity;
