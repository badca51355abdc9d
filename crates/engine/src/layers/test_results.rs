//! A test runner's listing and results as a check copy gives them: the
//! command run to the end with its whole output kept (and its results file
//! read back), and test names without the copy's directory — jest and
//! vitest print absolute paths, and every command runs in a copy of its
//! own. Shared by the test guardrail and the `test` and `holdout` criteria.

use crate::Error;
use rascal_exec::exec::place::Place;
use rascal_exec::exec::runner::{CommandSpec, Outcome};
use rascal_scan::ledger::{self, Listing, Results, Runner};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How much of a command's whole output (stdout and stderr in order) is
/// kept.
const MAX_OUTPUT_BYTES: usize = 32 << 20;

/// A command run to the end: how it ended, its whole output (bounded), and
/// the files read back from its copy afterwards.
pub struct Whole {
    pub outcome: Outcome,
    pub text: String,
    pub files: Vec<Option<Vec<u8>>>,
}

/// Run `command` where `place` says, to the end, keeping its whole output
/// and reading back `files` (paths from where it starts).
pub async fn run_whole(
    place: &Place,
    command: &str,
    timeout: Duration,
    (env, network): (&[String], bool),
    files: &[String],
    cancel: &CancellationToken,
) -> Result<Whole, Error> {
    let spec = CommandSpec::shell(command, place.files().to_path_buf(), timeout);
    let (tx, mut rx) = rascal_exec::exec::runner::log_channel();
    let gather = tokio::spawn(async move {
        let mut all = String::new();
        while let Some(batch) = rx.recv().await {
            for l in batch {
                if all.len() + l.text.len() < MAX_OUTPUT_BYTES {
                    all.push_str(&l.text);
                    all.push('\n');
                }
            }
        }
        all
    });
    let result = place
        .run_reading(spec, env, network, Some(tx), cancel, files)
        .await;
    let text = gather.await.unwrap_or_default();
    let (outcome, files) = result?;
    if let Some(f) = outcome.rewritten.first() {
        return Err(Error::Verification(format!(
            "results forged: the results file `{f}` was written again after the runner wrote it — code in the test process rewrote the verdict, so this run's results are void"
        )));
    }
    Ok(Whole {
        outcome,
        text,
        files,
    })
}

/// `names` without the directory of the copy they were run in: a name in
/// a check's copy keeps only what follows it (and the runner's `cd`
/// directory `dir`).
pub fn strip_copies(names: &[String], dir: Option<&str>) -> Vec<String> {
    names
        .iter()
        .map(|n| match (crate::layers::diagnostics::in_copy(n), dir) {
            (Some(r), Some(d)) => r
                .strip_prefix(&format!("{}/", d.trim_end_matches('/')))
                .map(str::to_string)
                .unwrap_or(r),
            (Some(r), None) => r,
            (None, _) => n.clone(),
        })
        .collect()
}

/// The listing a listing command printed, its names as every copy shares
/// them. A listing that exited 0 with no test and no error is a complete
/// listing of nothing (`cargo test -q` prints no line at all then).
pub fn listing(runner: Runner, run: &Whole, dir: Option<&str>) -> Listing {
    let l = ledger::parse_listing(runner, &run.text);
    let empty = run.outcome.exit.success()
        && l.tests.is_empty()
        && !run
            .text
            .lines()
            .any(|x| x.trim_start().starts_with("error"));
    Listing {
        tests: strip_copies(&l.tests, dir),
        complete: l.complete || empty,
        ..l
    }
}

/// The results a run reported (its output, or the results file read back
/// first in `run.files`), cross-checked against `against`, their names as
/// every copy shares them.
pub fn results(runner: Runner, run: &Whole, against: &Listing, dir: Option<&str>) -> Results {
    let file = run
        .files
        .first()
        .and_then(|f| f.as_ref())
        .map(|b| String::from_utf8_lossy(b).into_owned());
    let r = ledger::parse_results(runner, &run.text, file.as_deref(), Some(against));
    Results {
        passed: strip_copies(&r.passed, dir),
        failed: strip_copies(&r.failed, dir),
        ignored: strip_copies(&r.ignored, dir),
        ..r
    }
}

#[cfg(test)]
pub(crate) mod tests;
