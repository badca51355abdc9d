//! The verification layers. Evaluators over a ChangeSet are pure functions;
//! layers that run commands go through the command runner.

pub(crate) mod agreement;
pub(crate) mod compare;
pub(crate) mod coverage;
pub(crate) mod criteria;
pub(crate) mod criterion_proof;
pub(crate) mod diagnostics;
pub(crate) mod evidence;
pub(crate) mod guardrails;
pub(crate) mod permissions;
pub(crate) mod probes;
pub(crate) mod provenance;
pub(crate) mod review;
pub(crate) mod test_results;
pub(crate) mod vacuous;

// What callers outside the engine use (the CLI, the TUI, tests).
pub use compare::parse_pick;
pub use compare::Ranked;
pub use compare::Ranking;
pub use criteria::check_constraint;
pub use criteria::check_file_exists;
pub use criteria::check_grep;
pub use criteria::checklist_line;
pub use criteria::parse_judge;
pub use criteria::run_command_criterion;
pub use criteria::Files;
pub use guardrails::evaluate_pure;
pub use guardrails::run_command;
pub use permissions::Permissions;
pub use provenance::needs_reason;
pub use provenance::report as provenance_report;
pub use provenance::NewLine;
pub use provenance::Traced;
pub use review::chunk_diff;
pub use review::diff_block;
pub use review::issues_of;
pub use review::new_nonce;
pub use review::parse_review;
pub use review::review_prompt;
pub use review::Decision;
pub use review::ReviewSeverity;
pub use review::MAX_DIFF_BYTES;
