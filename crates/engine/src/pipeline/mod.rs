//! The orchestrator: one run of a task on N candidates. Each candidate gets a
//! worktree at the base commit, its agent runs through a launcher, then the
//! layers judge its ChangeSet. Every step is a `RunEvent`, journalled to the
//! store before it reaches the subscriber (TUI or headless printer).

pub mod agent;
pub mod agree;
pub mod answers;
pub mod api_change;
pub mod attach;
pub mod base_cache;
pub mod base_defined;
pub mod base_text;
pub mod budget;
pub mod canary;
pub mod candidate;
pub mod combine;
pub mod combine_brief;
pub mod content;
pub mod cross_cell;
pub mod cross_test;
pub mod decisions;
pub mod discriminate;
pub mod execute;
pub mod impossible;
pub mod journal;
pub mod judge;
pub mod junit_run;
pub mod mutants;
pub mod plan;
pub mod plan_answer;
pub mod policy;
pub mod preflight;
pub mod prepare;
pub mod provenance;
pub mod request;
pub mod resume;
pub mod retry;
pub mod run_id;
pub mod sequence;
pub mod session;
pub mod shipped;
pub mod spec_file;
pub mod test_evidence;
pub mod test_report;
pub mod test_run;
pub mod vacuity;

pub use decisions::{record_decision, record_finalized};
pub use execute::{execute, execute_with};
pub use prepare::{prepare, PreparedRun};
pub use request::{PipelineError, PlanGate, RunOutcome, RunRequest};
pub use run_id::new_run_id;
pub use session::{Decided, Session};

use crate::model::verdict::{Report, Status};

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
    Some(format!("{name}: {}", crate::text::cut(&what, 200)))
}
