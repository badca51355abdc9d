//! The domain model: verdicts and reports, the change a candidate made,
//! the human's decisions, the run's events and the one fold of events into
//! a run summary. Plain values; no I/O.

pub mod agreement;
pub mod budget;
pub mod changeset;
pub mod checklist;
pub mod choice;
pub mod clock;
pub mod content;
pub mod decision;
pub mod event;
pub mod impossible;
pub mod ledger;
pub mod likeness;
pub mod log;
pub mod network;
pub mod plan;
pub mod preview;
pub mod ranking;
pub mod state;
pub mod summary;
pub mod usage;
pub mod verdict;
