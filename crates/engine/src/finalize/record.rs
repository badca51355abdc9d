//! A finalize leaves a trace: once the commit is on its branch, the run's
//! journal gets a `Finalized` event (candidate, branch, commit, PR body),
//! so `show`, `list`, `--json` and the TUI's header say the run was
//! finalized, and where.

use super::Finalized;
use rascal_core::model::event::{Finalization, RunEvent};
use rascal_core::model::summary::RunSummary;
use std::path::Path;

/// What `f` did (to the candidate it committed), as journalled.
pub fn finalization(f: &Finalized) -> Finalization {
    Finalization {
        candidate: f.candidate.clone(),
        branch: f.branch.clone(),
        commit: f.commit.clone(),
        title: f.message.lines().next().unwrap_or("").to_string(),
        pr_body: f.pr_body.to_string_lossy().into_owned(),
        pushed_to: f.pushed_to.clone(),
        pr_command: f.pr_command.clone(),
        pr_opened: f.pr_opened,
    }
}

/// Journal `f` in `summary`'s run; the event, or why it could not be
/// recorded (the commit stands either way).
pub fn record(
    repo_dir: &Path,
    summary: &RunSummary,
    f: &Finalized,
) -> Result<RunEvent, crate::Error> {
    Ok(crate::pipeline::record_finalized(
        repo_dir,
        &summary.run,
        finalization(f),
    )?)
}
