//! The orchestrator: one run of a task on N candidates. Each candidate gets a
//! worktree at the base commit, its agent runs through a launcher, then the
//! layers judge its ChangeSet. Every step is a `RunEvent`, journalled to the
//! store before it reaches the subscriber (TUI or headless printer).

pub(crate) mod agent;
pub(crate) mod answers;
pub(crate) mod attach;
pub(crate) mod budget;
pub(crate) mod candidate;
pub(crate) mod combine;
pub(crate) mod combine_brief;
pub(crate) mod compare;
pub(crate) mod content;
pub(crate) mod decisions;
pub(crate) mod execute;
pub(crate) mod impossible;
pub(crate) mod journal;
pub(crate) mod judge;
pub(crate) mod plan;
pub(crate) mod plan_answer;
pub(crate) mod policy;
pub(crate) mod preflight;
pub(crate) mod prepare;
pub(crate) mod provenance;
pub(crate) mod request;
pub(crate) mod resume;
pub(crate) mod retry;
pub(crate) mod run_id;
pub(crate) mod sequence;
pub(crate) mod session;
pub(crate) mod spec_file;
pub(crate) mod vacuity;

// What callers outside the engine use (the CLI, the TUI, tests).
pub use attach::prepare_attach;
pub use combine::prepare_combine;
pub use content::read_change;
pub use content::ContentRead;
pub use journal::view_channel;
pub use policy::retry_feedback_lines;
pub use retry::prepare_retry;
pub use sequence::permissions_in_force;
pub use sequence::verify;
pub use sequence::verify_read;
pub use sequence::Origin;
pub use sequence::Progress;
pub use sequence::Verification;
pub(crate) use spec_file::save as save_spec;

pub use decisions::{record_decision, record_finalized};
pub use execute::{execute, execute_with};
pub use prepare::{prepare, PreparedRun};
pub use request::{PipelineError, PlanGate, RunOutcome, RunRequest};
pub use run_id::new_run_id;
pub use session::{Decided, Session};

use rascal_core::model::verdict::{Report, Status};

/// One line saying why a candidate did not pass.
pub fn first_failure(reports: &[Report]) -> Option<String> {
    let r = reports
        .iter()
        .find(|r| r.status == Status::Fail)
        .or_else(|| reports.iter().find(|r| r.status == Status::Warn))?;
    let what = r
        .errored
        .clone()
        .or_else(|| r.issues.first().map(|i| i.message.clone()))
        .unwrap_or_default();
    // `permissions: …`, not `permissions permissions: …`.
    let name = if r.check == r.layer.to_string() {
        r.layer.to_string()
    } else {
        format!("{} {}", r.layer, r.check)
    };
    Some(format!("{name}: {}", rascal_core::text::cut(&what, 200)))
}
