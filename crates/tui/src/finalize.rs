//! What the TUI says of a finalize: the engine's one finalize
//! (`RunHandle::finalize`, the call `rascal finalize` makes too) turned
//! into a line for the status bar and the journalled event the screen
//! folds in.

use rascal_core::model::event::RunEvent;
use rascal_engine::finalize::Outcome;

/// What a finalize did, for the status bar: one line, and the journalled
/// event the screen folds in (None when the record could not say so).
pub fn said(out: Outcome) -> (String, Option<RunEvent>) {
    let f = &out.finalized;
    let mut message = format!(
        "finalized: committed {} on {} · PR body {}",
        &f.commit[..f.commit.len().min(12)],
        f.branch,
        f.pr_body.display()
    );
    if !f.workspaces.removed.is_empty() {
        message.push_str(&format!(
            " · removed {} ({})",
            rascal_core::text::plural(f.workspaces.removed.len() as u64, "other workspace"),
            rascal_engine::gc::human_bytes(f.workspaces.freed())
        ));
    }
    if let Some((path, cause)) = f.workspaces.failed.first() {
        message.push_str(&format!(
            " · warning: could not remove {}: {cause}",
            path.display()
        ));
    }
    match &f.pr {
        Some(Ok(address)) => message.push_str(&format!(" · PR {address}")),
        Some(Err(why)) => message.push_str(&format!(" · {why}")),
        None => {}
    }
    let event = match out.recorded {
        Ok(ev) => Some(ev),
        Err(e) => {
            message.push_str(&format!(" (the run's record could not say so: {e})"));
            None
        }
    };
    (message, event)
}
