//! What finalize may commit: the selected candidate, when it passed, its
//! workspace is still the one rascal made, and every required report ran
//! on the tree recorded for it.

use super::{choice, FinalizeError};
use rascal_core::model::summary::RunSummary;
use std::path::PathBuf;

/// The selected candidate, its workspace, and that it passed (or passed
/// with warnings) and its `.git` is still the folder rascal made.
pub(super) fn verified_candidate(
    summary: &RunSummary,
) -> Result<
    (
        String,
        &rascal_core::model::summary::CandidateSummary,
        PathBuf,
    ),
    FinalizeError,
> {
    let selected =
        match choice::choose(summary).map_err(|e| FinalizeError::NothingSelected(e.to_string()))? {
            choice::Choice::Selected(c) | choice::Choice::Pick(c) => c,
        };
    let cand = summary
        .candidates
        .iter()
        .find(|c| c.id == selected)
        .ok_or_else(|| FinalizeError::NoCandidate(selected.clone()))?;
    let wt = PathBuf::from(&cand.worktree);
    if !wt.exists() {
        return Err(FinalizeError::WorktreeGone {
            candidate: selected,
            path: cand.worktree.clone(),
        });
    }
    // The workspace's `.git` must be the folder rascal made (and rewrote
    // after every attempt): a file or a link points git elsewhere.
    if let Err(why) = rascal_exec::git::gitdir::check(&wt) {
        return Err(FinalizeError::ChangedSinceVerified {
            candidate: selected,
            what: why.to_string(),
        });
    }
    if let Some(why) = &cand.impossible {
        return Err(FinalizeError::DeclaredImpossible {
            candidate: selected,
            run: summary.run.clone(),
            reason: rascal_core::text::sanitize(rascal_core::model::impossible::first_line(why)),
        });
    }
    if cand.effective_verdict.or(cand.verdict) != Some(rascal_core::model::verdict::Verdict::Pass)
        && cand.effective_verdict.or(cand.verdict)
            != Some(rascal_core::model::verdict::Verdict::Warn)
    {
        return Err(FinalizeError::NotVerified(selected));
    }
    Ok((selected, cand, wt))
}

/// The tree `cand` was verified on: recorded, and named by the receipt of
/// every required report that ran.
pub(super) fn verified_tree(
    cand: &rascal_core::model::summary::CandidateSummary,
    selected: &str,
) -> Result<String, FinalizeError> {
    // Commit exactly the tree that was verified: the receipts of the
    // candidate's required reports must name it, and it is taken from the
    // workspace's object store (every object hash-checked), never re-read
    // from the workspace's files.
    let Some(tree_id) = cand.tree.clone() else {
        return Err(FinalizeError::ChangedSinceVerified {
            candidate: selected.to_string(),
            what: "no verified change tree is recorded for it".into(),
        });
    };
    let want = rascal_core::model::verdict::digest(&tree_id);
    let stale: Vec<String> = cand
        .reports
        .iter()
        .filter(|r| r.required && r.status != rascal_core::model::verdict::Status::Skipped)
        .filter_map(|r| {
            let named = r.receipt.inputs.get("diff")?;
            (named != &want).then(|| format!("{} {}", r.layer, r.check))
        })
        .collect();
    if !stale.is_empty() {
        return Err(FinalizeError::ChangedSinceVerified {
            candidate: selected.to_string(),
            what: format!("{} checked another tree", stale.join(", ")),
        });
    }
    Ok(tree_id)
}
