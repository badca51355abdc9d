//! What a test run's results prove, beyond its exit code:
//! - results, not exit codes: a run that exited 0 but whose results show
//!   failures, listed tests with no result, results for tests the runner
//!   never listed (lines the code under test printed), or results not read
//!   in full, fails;
//! - the base's own tests judge the change: the base commit's tests, laid
//!   over a copy of the change (`base_defined::BaseTestsCopy`), must all
//!   pass there;
//! - the change's new tests, run on the base's code
//!   (`base_defined::tests_on_base`): a new test that fails there and passes
//!   on the change is evidence the change does what it tests. One that
//!   does not build there must also fail on the change's code with its new
//!   functions stubbed out (`base_defined::without_new_code`): naming a new
//!   function is not checking it.

use crate::layers::evidence::{canary, mutants};
use crate::layers::test_results::{self, Whole};
use crate::Error;
use rascal_core::config::Guardrail;
use rascal_core::model::changeset::ChangeSet;
use rascal_core::model::ledger::{BaseTests, NewTests, StepTime};
use rascal_core::model::verdict::{Issue, Severity};
use rascal_core::text::{first_of, plural};
use rascal_exec::exec::place::Place;
use rascal_scan::ledger::{self, Judged, Listing, Recognised, Results};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

mod base_tests;
mod new_tests;

pub use base_tests::{base_tests, base_tests_judged};
pub use new_tests::{new_tests, weakened_issue};

/// Rule: a test run exited 0 but its results say tests failed.
pub const RULE_FAILED: &str = "test-run/failed";
/// Rule: tests the runner listed have no result.
pub const RULE_NOT_RUN: &str = "test-run/not-run";
/// Rule: results for tests the runner does not list.
pub const RULE_UNLISTED: &str = "test-run/unlisted";
/// Rule: the listing or the results could not be read in full.
pub const RULE_INCOMPLETE: &str = "test-run/incomplete";
/// Rule: a base test does not pass on the change (or could not be judged).
pub const RULE_BASE_TESTS: &str = "base-tests/failed";

/// Rule (information): base tests that no longer build as the base wrote
/// them, updated by the change for an API it altered; settled against the
/// other candidates (`pipeline::api_change`).
pub const RULE_API_CHANGED: &str = "base-tests/api-changed";

/// Rule: a test that fails on the base's code at the base passes there in
/// the change's version.
pub const RULE_WEAKENED: &str = "test-integrity/weakened";

/// How one test guardrail runs its runner: the guardrail's run (with its
/// results readable) and its listing, wherever a place says.
pub struct TestRuns<'a> {
    pub g: &'a Guardrail,
    pub rec: &'a Recognised,
    /// The run whose results rascal reads, and its results file.
    pub run: (String, Option<String>),
    pub listing: String,
    pub timeout: Duration,
    pub env: (&'a [String], bool),
    pub cancel: &'a CancellationToken,
    /// Where these runs' time goes, shared by the runs made from them.
    pub clock: std::sync::Arc<Clock>,
}

/// The time each step of a test guardrail's evidence takes: every runner
/// invocation is counted under the step named last ([`Clock::step`]).
#[derive(Debug, Default)]
pub struct Clock {
    now: std::sync::Mutex<(&'static str, Vec<StepTime>)>,
}

impl Clock {
    /// The runs from here on are step `name`'s.
    pub fn step(&self, name: &'static str) {
        if let Ok(mut g) = self.now.lock() {
            g.0 = name;
        }
    }

    fn count(&self, took: Duration) {
        let Ok(mut g) = self.now.lock() else {
            return;
        };
        let name = if g.0.is_empty() { "runs" } else { g.0 };
        let ms = took.as_millis() as u64;
        match g.1.iter_mut().find(|s| s.step == name) {
            Some(s) => {
                s.ms += ms;
                s.runs += 1;
            }
            None => g.1.push(StepTime {
                step: name.to_string(),
                ms,
                runs: 1,
            }),
        }
    }

    /// The steps so far, in the order they began.
    pub fn steps(&self) -> Vec<StepTime> {
        self.now.lock().map(|g| g.1.clone()).unwrap_or_default()
    }
}

impl<'a> TestRuns<'a> {
    /// How the command guardrail `g`, whose runner is `rec`, runs with its
    /// results readable (None for a guardrail that is not a command).
    pub fn new(
        g: &'a Guardrail,
        rec: &'a Recognised,
        cancel: &'a CancellationToken,
    ) -> Option<TestRuns<'a>> {
        let rascal_core::config::GuardrailKind::Command {
            command,
            timeout,
            env,
            network,
            ..
        } = &g.kind
        else {
            return None;
        };
        Some(TestRuns {
            g,
            rec,
            run: ledger::results_run(rec, command, ".rascal-results/results"),
            listing: ledger::listing_command(rec, command),
            timeout: timeout.get(),
            env: (env, *network),
            cancel,
            clock: Default::default(),
        })
    }

    /// The guardrail's run at `place`, its results file read back.
    pub async fn run(&self, place: &Place) -> Result<Whole, Error> {
        let files: Vec<String> = self.run.1.iter().cloned().collect();
        let started = std::time::Instant::now();
        let w = test_results::run_whole(
            place,
            &self.run.0,
            self.timeout,
            self.env,
            &files,
            self.cancel,
        )
        .await;
        self.clock.count(started.elapsed());
        w
    }

    /// These runs with every test target run even when one fails (cargo's
    /// `--no-fail-fast`): for the base-tests run, where the canary's target
    /// always fails.
    pub fn every_target(&self) -> TestRuns<'a> {
        let rascal_core::config::GuardrailKind::Command { command, .. } = &self.g.kind else {
            unreachable!("TestRuns are made for command guardrails")
        };
        let all = ledger::no_fail_fast(self.rec, command);
        TestRuns {
            g: self.g,
            rec: self.rec,
            run: ledger::results_run(self.rec, &all, ".rascal-results/results"),
            listing: self.listing.clone(),
            timeout: self.timeout,
            env: self.env,
            cancel: self.cancel,
            clock: self.clock.clone(),
        }
    }

    /// These runs (every target run) in the profile the project ships:
    /// cargo's `--release`. None when the command names a profile already,
    /// is not a direct `cargo test`, or the guardrail says
    /// `release_profile: false`.
    pub fn shipped(&self) -> Option<TestRuns<'a>> {
        let rascal_core::config::GuardrailKind::Command {
            release_profile: true,
            ..
        } = &self.g.kind
        else {
            return None;
        };
        let all = self.every_target();
        let shipped = ledger::shipped_profile(self.rec, &all.run_command())?;
        Some(TestRuns {
            run: ledger::results_run(self.rec, &shipped, ".rascal-results/results"),
            ..all
        })
    }

    /// The command these runs were made from (before its results flags),
    /// as a user would type it.
    pub fn run_command(&self) -> String {
        let rascal_core::config::GuardrailKind::Command { command, .. } = &self.g.kind else {
            unreachable!("TestRuns are made for command guardrails")
        };
        ledger::no_fail_fast(self.rec, command)
    }

    /// What the runner lists at `place`.
    pub async fn list(&self, place: &Place) -> Result<Listing, Error> {
        let started = std::time::Instant::now();
        let w = test_results::run_whole(
            place,
            &self.listing,
            self.timeout,
            self.env,
            &[],
            self.cancel,
        )
        .await;
        self.clock.count(started.elapsed());
        let w = w?;
        Ok(test_results::listing(
            self.rec.runner,
            &w,
            self.rec.dir.as_deref(),
        ))
    }

    /// The results of `run`, checked against `against`.
    pub fn results(&self, run: &Whole, against: &Listing) -> Results {
        test_results::results(self.rec.runner, run, against, self.rec.dir.as_deref())
    }
}

/// What the results of a run that exited 0 deny: failures, listed tests
/// with no result, results for tests nobody listed (printed by the code
/// under test, not the runner), results or a listing not read in full.
pub fn results_issues(
    command: &str,
    listing: &Listing,
    results: &Results,
    judged: &Judged,
) -> Vec<Issue> {
    let count = |n: usize| plural(n as u64, "test");
    let mut out = Vec::new();
    if !judged.failed.is_empty() {
        out.push(Issue::new(
            RULE_FAILED,
            Severity::Error,
            format!(
                "`{command}` exited 0, but {} failed: {} — an exit code is not a result",
                count(judged.failed.len()),
                first_of(&judged.failed, 8)
            ),
        ));
    }
    if !judged.not_run.is_empty() && listing.complete && !listing.files_only {
        out.push(Issue::new(
            RULE_NOT_RUN,
            Severity::Error,
            format!(
                "{} the runner lists had no result: {} — the run ended before them or did not run them",
                count(judged.not_run.len()),
                first_of(&judged.not_run, 8)
            ),
        ));
    }
    if !results.unlisted.is_empty() {
        out.push(Issue::new(
            RULE_UNLISTED,
            Severity::Error,
            format!(
                "results for {} the runner does not list: {} — lines the code under test printed are not results",
                count(results.unlisted.len()),
                first_of(&results.unlisted, 8)
            ),
        ));
    }
    if !listing.complete || !results.complete {
        let what = if listing.complete {
            "the results"
        } else {
            "the runner's listing"
        };
        let notes = if results.notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", results.notes.join("; "))
        };
        out.push(Issue::new(
            RULE_INCOMPLETE,
            Severity::Error,
            format!(
                "{what} could not be read in full{notes}: the run cannot be judged by its results"
            ),
        ));
    }
    out
}

/// The files `listing` names its tests in, from the repository's root.
pub(crate) fn files_of(runs: &TestRuns<'_>, listing: &Listing) -> Vec<String> {
    ledger::test_files(runs.rec.runner, listing)
        .into_iter()
        .map(|f| match &runs.rec.dir {
            Some(d) => format!("{}/{f}", d.trim_end_matches('/')),
            None => f,
        })
        .collect()
}

#[cfg(test)]
mod tests;
