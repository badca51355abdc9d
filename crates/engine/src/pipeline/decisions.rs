//! Decisions about a run that is no longer live, appended to its journal.

use crate::pipeline::request::PipelineError;
use rascal_core::model::decision::Decision;
use rascal_core::model::event::RunEvent;
use rascal_exec::git::workspace::{self};
use std::path::Path;

/// Record a decision about a run that is no longer live (or from another
/// process): appended to the run's journal in the store.
pub fn record_decision(
    repo: &Path,
    run: &str,
    decision: Decision,
) -> Result<RunEvent, PipelineError> {
    let repo = workspace::open(repo)?;
    let mut store = crate::store::project::store_at(&repo)?;
    let summary = store.summary(run)?;
    if let Some(c) = &decision.candidate {
        let cand = summary
            .candidate(c)
            .map_err(|e| PipelineError::Usage(e.to_string()))?;
        decision
            .validate(Some(&cand.reports))
            .map_err(|e| PipelineError::Usage(e.to_string()))?;
    } else {
        decision
            .validate(None)
            .map_err(|e| PipelineError::Usage(e.to_string()))?;
    }
    let ev = RunEvent::DecisionRecorded { decision };
    store.append(run, std::slice::from_ref(&ev))?;
    Ok(ev)
}

/// Record that run `run` was finalized: the commit is on its branch (and
/// the PR body written), so the run's record says so.
pub fn record_finalized(
    repo: &Path,
    run: &str,
    finalization: rascal_core::model::event::Finalization,
) -> Result<RunEvent, PipelineError> {
    let repo = workspace::open(repo)?;
    let mut store = crate::store::project::store_at(&repo)?;
    // Checks the run's chain first: nothing is added to a record that
    // was changed after it was written.
    let summary = store.summary(run)?;
    summary
        .candidate(&finalization.candidate)
        .map_err(|e| PipelineError::Usage(e.to_string()))?;
    let ev = RunEvent::Finalized(finalization);
    store.append(run, std::slice::from_ref(&ev))?;
    Ok(ev)
}
