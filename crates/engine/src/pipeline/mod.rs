//! The orchestrator: one run of a task on N candidates. Each candidate gets a
//! worktree at the base commit, its agent runs through a launcher, then the
//! layers judge its ChangeSet. Every step is a `RunEvent`, journalled to the
//! store before it reaches the subscriber (TUI or headless printer).

pub(crate) mod agent;
pub(crate) mod answers;
pub mod attach;
pub(crate) mod budget;
pub(crate) mod candidate;
pub mod combine;
pub(crate) mod combine_brief;
pub(crate) mod compare;
pub mod content;
pub(crate) mod decisions;
pub(crate) mod execute;
pub(crate) mod impossible;
pub mod journal;
pub(crate) mod judge;
pub(crate) mod plan;
pub(crate) mod plan_answer;
pub mod policy;
pub(crate) mod preflight;
pub(crate) mod prepare;
pub(crate) mod provenance;
pub(crate) mod request;
pub(crate) mod resume;
pub mod retry;
pub(crate) mod run_id;
pub mod sequence;
pub(crate) mod session;
pub mod spec_file;
pub(crate) mod vacuity;

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
