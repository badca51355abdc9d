//! `rascal finalize` (and `run --auto`'s last step): commit the selected
//! candidate — or, when nobody selected one, the comparator's pick — on a
//! branch, write the PR body, optionally push and open the PR.

use super::args::FinalizeArgs;
use super::exit::{CliError, PASS};
use super::shared::{note_unchained, open_store, say, tell};
use rascal_core::model::choice::Choice;
use rascal_core::model::decision::{Decision, DecisionKind};
use rascal_core::text::sanitize;
use rascal_engine::finalize::{rebase_note, short, FinalizeOptions};
use std::path::Path;

pub fn finalize(dir: &Path, args: FinalizeArgs) -> Result<i32, CliError> {
    let FinalizeArgs {
        run,
        push,
        pr,
        new_branch,
        no_rebase,
        pick,
        reason,
    } = args;
    let opts = FinalizeOptions {
        push,
        pr,
        new_branch,
        no_rebase,
    };
    match (pick, reason) {
        (Some(pick), Some(reason)) => {
            if reason.trim().is_empty() {
                return Err(CliError::Usage(format!(
                    "`--pick {pick}` needs a reason: say why it is the right one
  hint: rascal finalize {run} --pick {pick} --reason \"why\""
                )));
            }
            super::decide::select(
                dir,
                super::args::SelectArgs {
                    run: run.clone(),
                    candidate: pick,
                    reason,
                    force: false,
                },
            )?;
        }
        _ => take_the_pick(dir, &run)?,
    }
    finalize_run(dir, &run, opts, false)
}

/// Nobody selected a candidate: the comparator's pick, when it passed and
/// nobody contested it, is selected (journalled as the user's decision, so
/// the record says who chose it) and said; otherwise why not, and what to
/// run.
fn take_the_pick(dir: &Path, run: &str) -> Result<(), CliError> {
    let summary = open_store(dir)?.summary(run)?;
    let pick = match rascal_core::model::choice::choose(&summary)
        .map_err(|e| rascal_engine::finalize::FinalizeError::NothingSelected(e.to_string()))?
    {
        Choice::Selected(_) => return Ok(()),
        Choice::Pick(p) => p,
    };
    let who = rascal_engine::store::Project::open(dir)?.author();
    let why = "the comparator's pick, taken by `rascal finalize`";
    let d = Decision::new(Some(&pick), DecisionKind::Select, &who, why);
    rascal_engine::pipeline::record_decision(dir, run, d)?;
    let reason = summary
        .ranking
        .as_ref()
        .and_then(|r| r.positions.iter().find(|p| p.candidate == pick))
        .map(|p| format!(" ({})", sanitize(&p.reason)))
        .unwrap_or_default();
    say!("finalizing {}, the pick{reason}", sanitize(&pick));
    Ok(())
}

/// Finalize `run`; `quiet` prints nothing on success (`run --auto --json`).
pub fn finalize_run(
    dir: &Path,
    run: &str,
    opts: FinalizeOptions,
    quiet: bool,
) -> Result<i32, CliError> {
    // Refused when the run's record was changed after it was written; the
    // PR body publishes the chain head it was read at.
    let project = rascal_engine::store::Project::open(dir)?;
    let out = rascal_engine::finalize::finalize_run(&project, run, &opts)?;
    note_unchained(run, out.summary.journal.as_ref());
    let f = out.finalized;
    if let Err(e) = out.recorded {
        tell!("rascal: warning: committed, but the run's record could not say so: {e}");
    }
    if !quiet {
        if f.unchanged {
            say!(
                "branch {} already holds this run's commit {}: nothing changed",
                f.branch,
                short(&f.commit)
            );
        } else {
            say!("committed {} on branch {}", short(&f.commit), f.branch);
        }
        say!("  {}", f.message.lines().next().unwrap_or(""));
        if let Some(m) = &f.moved {
            say!(
                "the base moved: {}",
                rebase_note(m, &f.verified_tree, &f.base)
            );
        }
        if let Some(old) = &f.replaced {
            say!(
                "  replaced finalize's own earlier commit {} for this run",
                short(old)
            );
        }
        say!("PR body: {}", f.pr_body.display());
        if let Some(r) = &f.pushed_to {
            say!("pushed {} to {r}", f.branch);
        }
        match &f.pr {
            Some(Ok(address)) => say!("opened a pull request with gh: {address}"),
            Some(Err(why)) => say!("{why}"),
            None => say!(
                "open the pull request with:\n  {}",
                rascal_core::text::inert::shell_line(&f.pr_command)
            ),
        }
    }
    // The other candidates' workspaces it removed; one it could not remove
    // is a warning (said even when quiet), never a failed finalize.
    for line in f.workspaces.lines() {
        match line.strip_prefix("warning: ") {
            Some(w) => tell!("rascal: warning: {w}"),
            None if !quiet => say!("{line}"),
            None => {}
        }
    }
    Ok(PASS)
}
