//! The one finalize of a run, as `rascal finalize`, `run --auto` and the
//! TUI take it: the run's record read (its chain checked), the selected
//! candidate committed on its branch, and the commit journalled; what it
//! would do, before it does it; and the pull request opened afterwards
//! with `gh`, its output captured (never painted over a screen).

use super::{FinalizeError, FinalizeOptions, Finalized};
use crate::store::Project;
use rascal_core::model::event::{Finalization, RunEvent};
use rascal_core::model::preview::Preview;
use rascal_core::model::summary::RunSummary;
use std::path::Path;

/// What a finalize did.
pub struct Outcome {
    /// The run's record as it was read (its chain checked).
    pub summary: RunSummary,
    pub finalized: Finalized,
    /// The journalled `Finalized` event, or why the record could not say
    /// so (the commit stands either way).
    pub recorded: Result<RunEvent, crate::Error>,
}

/// Finalize run `run` of `project`: commit its selected candidate (or the
/// pick) as `opts` say and journal it.
pub fn finalize_run(
    project: &Project,
    run: &str,
    opts: &FinalizeOptions,
) -> Result<Outcome, FinalizeError> {
    let summary = project.summary(run)?;
    let finalized = super::finalize(&project.dir(), &summary, opts)?;
    let recorded = super::record::record(&project.dir(), &summary, &finalized);
    Ok(Outcome {
        summary,
        finalized,
        recorded,
    })
}

/// What finalizing `candidate` of run `run` would do.
pub fn preview_run(
    project: &Project,
    run: &str,
    candidate: &str,
) -> Result<Preview, FinalizeError> {
    let summary = project.summary(run)?;
    super::preview::preview(&project.dir(), &summary, candidate)
}

/// Open the pull request of finalized run `run` (`f`, as journalled) with
/// `gh`, and journal that it was opened: its address, and the event (None
/// when the record could not say so).
pub fn open_pr(
    project: &Project,
    run: &str,
    f: &Finalization,
) -> Result<(String, Option<RunEvent>), crate::Error> {
    let address = gh(&project.dir(), &f.pr_command)?;
    let opened = Finalization {
        pr_opened: true,
        ..f.clone()
    };
    let ev = crate::pipeline::record_finalized(&project.dir(), run, opened).ok();
    Ok((address, ev))
}

/// Run `gh` with `command` (its first word is `gh`) in `dir`, no
/// terminal input; its last line of output (the PR's address), or why it
/// did not run.
pub fn gh(dir: &Path, command: &[String]) -> Result<String, crate::Error> {
    let line = rascal_core::text::inert::shell_line(command);
    if super::which("gh").is_none() {
        return Err(crate::Error::ToolMissing(format!(
            "gh is not installed; open the pull request with: {line}"
        )));
    }
    let out = std::process::Command::new("gh")
        .args(command.iter().skip(1))
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| {
            crate::Error::PullRequest(format!(
                "could not run gh ({e}); open the pull request with: {line}"
            ))
        })?;
    let text = |b: &[u8]| {
        rascal_core::text::sanitize(
            String::from_utf8_lossy(b)
                .lines()
                .rfind(|l| !l.trim().is_empty())
                .unwrap_or(""),
        )
    };
    if out.status.success() {
        Ok(text(&out.stdout))
    } else {
        Err(crate::Error::PullRequest(format!(
            "gh failed: {} — run: {line}",
            text(&out.stderr)
        )))
    }
}
