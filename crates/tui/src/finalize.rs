//! The TUI's finalize step on the shell side (I/O, run off the UI
//! thread): the engine's one finalize (`finalize::run`, as `rascal
//! finalize` calls it) turned into a line for the status bar and the
//! journalled event the screen folds in.

use crate::model::event::{Finalization, RunEvent};
use crate::model::preview::Preview;
use crate::store::Project;
use rascal_engine::finalize::{run, FinalizeOptions};
use std::path::Path;

/// The repository at `origin`.
fn project(origin: &Path) -> Result<Project, String> {
    Project::open(origin).map_err(|e| e.to_string())
}

/// What finalizing `candidate` would do.
pub fn preview(origin: &Path, run: &str, candidate: &str) -> Result<Preview, String> {
    run::preview_run(&project(origin)?, run, candidate).map_err(|e| e.to_string())
}

/// What a finalize did: the journalled event (None when it could not be
/// recorded) and one line for the status bar.
pub struct Done {
    pub event: Option<RunEvent>,
    pub message: String,
}

/// Finalize the run's selected candidate (refused, with finalize's own
/// message, when it does not pass or changed since it was verified); with
/// `open_pr`, open the pull request too — the same engine call as
/// `rascal finalize [--pr]`.
pub fn finalize(origin: &Path, run: &str, open_pr: bool) -> Result<Done, String> {
    let opts = FinalizeOptions {
        pr: open_pr,
        ..FinalizeOptions::default()
    };
    let out = run::finalize_run(&project(origin)?, run, &opts).map_err(|e| e.to_string())?;
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
            crate::text::plural(f.workspaces.removed.len() as u64, "other workspace"),
            crate::gc::disk::human(f.workspaces.freed())
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
    Ok(Done { event, message })
}

/// Open the finalized branch's pull request (`P`), and journal that it
/// was opened.
pub fn open_pr(
    origin: &Path,
    run: &str,
    f: &Finalization,
) -> Result<(String, Option<RunEvent>), String> {
    run::open_pr(&project(origin)?, run, f)
}
