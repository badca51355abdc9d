//! What finalizing would do, before it does it: the branch, the commit
//! message and the PR body for one candidate, read the way `finalize`
//! reads them (the TUI's confirmation dialog shows this).

use super::{commit_message, read_artifact, slug, FinalizeError};
use rascal_core::model::summary::RunSummary;
use rascal_exec::git::workspace;
use std::path::Path;

pub use rascal_core::model::preview::Preview;

/// The preview of finalizing `candidate` of `summary` (as if it were the
/// selected one). `repo_dir` is any directory in the target repository.
pub fn preview(
    repo_dir: &Path,
    summary: &RunSummary,
    candidate: &str,
) -> Result<Preview, FinalizeError> {
    summary
        .candidate(candidate)
        .map_err(|_| FinalizeError::NoCandidate(candidate.to_string()))?;
    let repo = workspace::open(repo_dir)?;
    let artifacts =
        rascal_exec::agents::artifacts_dir(&workspace::files_dir(&repo), &summary.run, candidate);
    let agent_message = read_artifact(&artifacts.join("commit_message.txt"));
    let message = commit_message(summary, candidate, agent_message.as_deref());
    let mut selected = summary.clone();
    selected.selected = Some(candidate.to_string());
    let agent_body = read_artifact(&artifacts.join("pr_body.md"));
    let pr_body = crate::output::report::markdown::pr_body(&selected, agent_body.as_deref(), None);
    Ok(Preview {
        candidate: candidate.to_string(),
        branch: format!("rascal/{}-{}", slug(&summary.instruction), summary.run),
        message,
        pr_body,
    })
}
