//! Whether a `test` criterion met by the candidate's own tests proves
//! anything: a test the change wrote passes whatever the code does if it
//! asserts nothing (an empty test named after the criterion), so such a
//! test counts only when it fails on the base's code — or, when it does
//! not build there, fails on the change's code with the change's new
//! functions stubbed out (`let _ = triple;` names a function without
//! checking it). A criterion whose
//! filter selects a test the base already has is met by that test.
//!
//! The base's side (a copy of the base commit, and the change's tests laid
//! over the base's code) comes from the pipeline through [`BaseSide`].

use crate::layers::test_results::{self, run_whole};
use crate::Error;
use rascal_core::text::first_of;
use rascal_exec::exec::place::Place;
use rascal_scan::ledger::{self, Listing, Recognised};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Rule: a `test` criterion met only by tests the change wrote, none of
/// which fails on the base's code.
pub const RULE_UNPROVEN: &str = "criteria/test-unproven";

/// Rule: a `new_test` criterion (a planned one: the plan asks for a new
/// test) whose filter selects only tests the base already has.
pub const RULE_NOT_NEW: &str = "criteria/test-not-new";

/// The base's side of a candidate's checks (None in place, where there is
/// no copy of the base to run in).
pub trait BaseSide: Send + Sync {
    /// A copy of the base commit: its code and its tests.
    fn base(&self) -> Option<Place>;
    /// The change's tests on the base's code: its test files, the files
    /// `listed_in` (where its tests are), and its Rust test modules.
    fn tests_on_base(&self, listed_in: &[String]) -> Result<Place, Error>;
    /// The change's code with its new functions stubbed out, its tests
    /// its own: where a test that does not build on the base's code must
    /// fail to count.
    fn without_new_code(&self) -> Result<Place, Error>;
}

/// What the base says of a passing `test` criterion's selected tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proof {
    /// The filter selects tests the base has: they meet it.
    BaseTests(Vec<String>),
    /// Every selected test is the change's; these fail on the base's code
    /// (or do not build there and fail with the change's new functions
    /// stubbed out) and pass here.
    FailAtBase { own: usize, failing: Vec<String> },
    /// Every selected test is the change's, and all pass on the base's
    /// code: they show nothing about the change.
    Unproven(Vec<String>),
    /// Every selected test is the change's; none fails on the base's code
    /// and these do not build there, but pass with the change's new
    /// functions stubbed out: they do not check what the new code does.
    Unchecked(Vec<String>),
    /// A `new_test` criterion's filter selects only the base's own tests:
    /// the test it asks for was not written.
    NotNew(Vec<String>),
}

impl Proof {
    /// The evidence line of the criterion.
    pub fn evidence(&self) -> String {
        match self {
            Proof::BaseTests(t) => format!(
                "met by the base's own {}: {}",
                if t.len() == 1 { "test" } else { "tests" },
                first_of(t, 4)
            ),
            Proof::FailAtBase { own, failing } => format!(
                "selected tests this change wrote: {} of {own} fail on the base's code and pass here ({})",
                failing.len(),
                first_of(failing, 4)
            ),
            Proof::Unproven(t) => format!(
                "the filter selects only tests this change wrote ({}), and {} on the base's code too: {} nothing about the change",
                first_of(t, 4),
                if t.len() == 1 { "it passes" } else { "they pass" },
                if t.len() == 1 { "it shows" } else { "they show" },
            ),
            Proof::Unchecked(t) => format!(
                "the filter selects only tests this change wrote ({}); {} not build on the base's code, and {} with the change's new functions stubbed out: {} not check what the new code does",
                first_of(t, 4),
                if t.len() == 1 { "it does" } else { "they do" },
                if t.len() == 1 { "it passes" } else { "they pass" },
                if t.len() == 1 { "it does" } else { "they do" },
            ),
            Proof::NotNew(t) => format!(
                "the criterion asks for a new test, but the filter selects only the base's own {} ({}): a test this change writes must fail on the base's code and pass here",
                if t.len() == 1 { "test" } else { "tests" },
                first_of(t, 4)
            ),
        }
    }
}

/// How one criterion's runner runs, for the base's side.
pub struct Selected<'a> {
    pub rec: &'a Recognised,
    /// The criterion's command (its listing is derived from it).
    pub command: &'a str,
    /// What the filter selects on the change.
    pub listing: &'a Listing,
    pub timeout: Duration,
    pub cancel: &'a CancellationToken,
    /// The criterion asks for a new test (`new_test: true`, every planned
    /// `test` criterion): the base's own tests never meet it.
    pub new_test: bool,
}

/// The proof of a passing `test` criterion (see the module doc). `Err`:
/// the base's side could not be run, which the criterion reports as an
/// error — a check that could not run is not a pass.
pub async fn prove(s: &Selected<'_>, side: &dyn BaseSide) -> Result<Proof, Error> {
    let Some(base) = side.base() else {
        return Err(Error::Verification(
            "no copy of the base commit to compare the selected tests with".into(),
        ));
    };
    let listing = ledger::listing_command(s.rec, s.command);
    let w = run_whole(&base, &listing, s.timeout, (&[], false), &[], s.cancel).await?;
    if let Some(p) = w.outcome.exit.problem(s.timeout) {
        return Err(Error::Verification(format!(
            "listing the tests at the base (`{listing}`) {p}"
        )));
    }
    let at_base = test_results::listing(s.rec.runner, &w, s.rec.dir.as_deref());
    if !at_base.complete {
        return Err(Error::Verification(format!(
            "the listing at the base (`{listing}`) could not be read in full"
        )));
    }
    let (theirs, own): (Vec<String>, Vec<String>) = s
        .listing
        .tests
        .iter()
        .cloned()
        .partition(|t| at_base.tests.contains(t));
    if s.new_test && own.is_empty() {
        return Ok(Proof::NotNew(theirs));
    }
    if !theirs.is_empty() && !s.new_test {
        return Ok(Proof::BaseTests(theirs));
    }
    let on_base = side.tests_on_base(&listed_in(s))?;
    let (run, read) = ledger::results_run(s.rec, s.command, ".rascal-results/criterion");
    let read: Vec<String> = read.into_iter().collect();
    let w = run_whole(&on_base, &run, s.timeout, (&[], false), &read, s.cancel).await?;
    if let Some(p) = w.outcome.exit.problem(s.timeout) {
        return Err(Error::Verification(format!(
            "running the change's tests on the base's code: `{run}` {p}"
        )));
    }
    let judged = judge_run(s, &w);
    // Those that do not build on the base's code (or, in Python, fail
    // there) count when they fail with the change's new functions stubbed
    // out: naming a function is not checking it.
    let by_name = s.rec.runner.missing_names_fail_when_run();
    let (unbuilt, mut failing): (Vec<String>, Vec<String>) = own
        .iter()
        .filter(|t| judged.failed.contains(t) || judged.not_run.contains(t))
        .cloned()
        .partition(|t| judged.not_run.contains(t) || by_name);
    if failing.is_empty() && !unbuilt.is_empty() {
        let stubbed = side.without_new_code()?;
        let w = run_whole(&stubbed, &run, s.timeout, (&[], false), &read, s.cancel).await?;
        if let Some(p) = w.outcome.exit.problem(s.timeout) {
            return Err(Error::Verification(format!(
                "running the change's tests with its new functions stubbed out: `{run}` {p}"
            )));
        }
        let without = judge_run(s, &w);
        failing.extend(
            unbuilt
                .iter()
                .filter(|t| without.failed.contains(t))
                .cloned(),
        );
        if failing.is_empty() {
            return Ok(Proof::Unchecked(unbuilt));
        }
    }
    Ok(if failing.is_empty() {
        Proof::Unproven(own)
    } else {
        Proof::FailAtBase {
            own: own.len(),
            failing,
        }
    })
}

/// How the selected tests fared in the run `w`.
fn judge_run(s: &Selected<'_>, w: &test_results::Whole) -> ledger::Judged {
    let results = test_results::results(s.rec.runner, w, s.listing, s.rec.dir.as_deref());
    ledger::judge(s.rec.runner, s.listing, &results)
}

/// The files the selected tests are in, from the repository's root.
fn listed_in(s: &Selected<'_>) -> Vec<String> {
    ledger::test_files(s.rec.runner, s.listing)
        .into_iter()
        .map(|f| match &s.rec.dir {
            Some(d) => format!("{}/{f}", d.trim_end_matches('/')),
            None => f,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_evidence_names_the_tests_and_what_they_show() {
        let t = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            Proof::Unproven(t(&["tests::health_ok"])).evidence(),
            "the filter selects only tests this change wrote (tests::health_ok), and it passes on the base's code too: it shows nothing about the change"
        );
        let e = Proof::FailAtBase {
            own: 2,
            failing: t(&["a"]),
        }
        .evidence();
        assert_eq!(
            e,
            "selected tests this change wrote: 1 of 2 fail on the base's code and pass here (a)"
        );
        assert!(Proof::BaseTests(t(&["x", "y"]))
            .evidence()
            .contains("base's own tests: x, y"));
    }
}
