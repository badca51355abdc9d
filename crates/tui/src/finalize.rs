//! The TUI's finalize step on the shell side (I/O, run off the UI
//! thread): read what finalizing would do, finalize through
//! `rascal_engine::finalize` exactly as `rascal finalize` does and journal it, and
//! open the pull request with `gh` — its output captured, never painted
//! over the screen — or say the command to run.

use crate::model::event::{Finalization, RunEvent};
use crate::model::preview::Preview;
use crate::model::summary::RunSummary;
use rascal_engine::finalize::FinalizeOptions;
use std::path::Path;

/// The run's summary as the store has it (its chain checked), as
/// `rascal finalize` reads it.
fn summary(origin: &Path, run: &str) -> Result<RunSummary, String> {
    let repo = crate::git::workspace::open(origin).map_err(|e| e.to_string())?;
    let store = crate::store::Store::open(&crate::store::Store::path_in(
        &crate::git::workspace::state_dir(&repo),
    ))
    .map_err(|e| e.to_string())?;
    store.summary(run).map_err(|e| e.to_string())
}

/// What finalizing `candidate` would do.
pub fn preview(origin: &Path, run: &str, candidate: &str) -> Result<Preview, String> {
    let s = summary(origin, run)?;
    rascal_engine::finalize::preview::preview(origin, &s, candidate).map_err(|e| e.to_string())
}

/// What a finalize did: the journalled event (None when it could not be
/// recorded) and one line for the status bar.
pub struct Done {
    pub event: Option<RunEvent>,
    pub message: String,
}

/// Finalize the run's selected candidate (refused, with finalize's own
/// message, when it does not pass or changed since it was verified); with
/// `open_pr`, open the pull request too.
pub fn finalize(origin: &Path, run: &str, open_pr: bool) -> Result<Done, String> {
    let s = summary(origin, run)?;
    let f = rascal_engine::finalize::finalize(origin, &s, &FinalizeOptions::default())
        .map_err(|e| e.to_string())?;
    let mut fin = rascal_engine::finalize::record::finalization(&f);
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
    if open_pr {
        match gh(origin, &f.pr_command) {
            Ok(out) => {
                fin.pr_opened = true;
                message.push_str(&format!(" · PR {out}"));
            }
            Err(e) => message.push_str(&format!(" · {e}")),
        }
    }
    let event = match crate::pipeline::record_finalized(origin, run, fin) {
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
    let out = gh(origin, &f.pr_command)?;
    let opened = Finalization {
        pr_opened: true,
        ..f.clone()
    };
    let ev = crate::pipeline::record_finalized(origin, run, opened).ok();
    Ok((out, ev))
}

/// Run `gh` with `command` (its first word is `gh`), no terminal input;
/// its last line of output (the PR's address), or why it did not run.
fn gh(origin: &Path, command: &[String]) -> Result<String, String> {
    let line = crate::text::inert::shell_line(command);
    if rascal_engine::finalize::which("gh").is_none() {
        return Err(format!(
            "gh is not installed; open the pull request with: {line}"
        ));
    }
    let out = std::process::Command::new("gh")
        .args(command.iter().skip(1))
        .current_dir(origin)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("could not run gh ({e}); open the pull request with: {line}"))?;
    let text = |b: &[u8]| {
        crate::text::sanitize(
            String::from_utf8_lossy(b)
                .lines()
                .rfind(|l| !l.trim().is_empty())
                .unwrap_or(""),
        )
    };
    if out.status.success() {
        Ok(text(&out.stdout))
    } else {
        Err(format!("gh failed: {} — run: {line}", text(&out.stderr)))
    }
}
