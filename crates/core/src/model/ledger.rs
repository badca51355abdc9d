//! The test ledger a test guardrail's report carries: the tests the
//! runner listed at the base and now, and which of them ran, passed,
//! failed or were ignored — read from the runner's own listing and
//! machine-readable results, not from prose.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    /// The runner (`cargo`, `go`, `pytest`, `jest`, `vitest`).
    pub runner: String,
    /// How many tests the runner listed at the base commit.
    pub at_base: usize,
    /// How many it lists now.
    pub now: usize,
    /// How many ran (passed + failed).
    pub ran: usize,
    pub passed: usize,
    pub failed: usize,
    pub ignored: usize,
    /// Tests listed at the base and not now (by name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// Tests that ran and failed (by name, at most a few dozen).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_names: Vec<String>,
    /// The base commit's own tests, run byte for byte against this change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_tests: Option<BaseTests>,
    /// The tests the change adds, run against the base's code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_tests: Option<NewTests>,
    /// Where the guardrail's time went: each step of its evidence (its own
    /// run, the listings, the base's tests on the change, the canaries,
    /// the release profile, the new tests at the base), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepTime>,
}

/// One step of a test guardrail's evidence and the time its runner
/// invocations took.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepTime {
    /// What the step is, in the user's words (`base tests`, `canaries`).
    pub step: String,
    pub ms: u64,
    /// How many runner invocations (runs and listings) it made.
    pub runs: u32,
}

/// The steps as one line: `own run 1.2s · listing 0.4s (2) · …`.
pub fn steps_line(steps: &[StepTime]) -> String {
    steps
        .iter()
        .map(|s| {
            let n = if s.runs > 1 {
                format!(" ({} runs)", s.runs)
            } else {
                String::new()
            };
            format!("{} {:.1}s{n}", s.step, s.ms as f64 / 1000.0)
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The tests a change adds, run against the base commit's code (the
/// change's tests laid over a copy of the base): a new test that fails
/// there and passes on the change is evidence the change does what it
/// tests; one that passes on the base code too shows nothing about it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewTests {
    /// How many tests the runner lists now and not at the base.
    pub added: usize,
    /// How many of them fail on the base's code and pass on the change (a
    /// test that does not build on the base's code counts when it fails on
    /// the change's code with the change's new functions stubbed out).
    pub proving: usize,
    /// Those that pass on the base's code too (by name, at most a few dozen).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_at_base: Vec<String>,
    /// Those that do not build on the base's code and do not fail with the
    /// change's new functions stubbed out either (by name, at most a few
    /// dozen): they do not check what the new code does.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_without_new_code: Vec<String>,
    /// The proving ones by name (at most a few hundred): the tests
    /// cross-testing runs on the other candidates' code.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub proving_names: Vec<String>,
    /// The proving ones that did not build (or had no result) on the
    /// base's code: they use an API the base never had. Cross-testing
    /// tells by it a candidate that never defined that API ("–") from one
    /// that broke what the base had (a failure).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unbuilt_at_base: Vec<String>,
}

impl NewTests {
    /// The new tests' evidence from their names: the proving ones, those
    /// passing on the base's code too, and those not failing with the
    /// change's new functions stubbed out (each list cut to what a report
    /// keeps).
    pub fn of(
        added: usize,
        mut proving_names: Vec<String>,
        mut pass_at_base: Vec<String>,
        mut pass_without_new_code: Vec<String>,
    ) -> NewTests {
        let proving = proving_names.len();
        proving_names.truncate(300);
        pass_at_base.truncate(50);
        pass_without_new_code.truncate(50);
        NewTests {
            added,
            proving,
            pass_at_base,
            pass_without_new_code,
            proving_names,
            unbuilt_at_base: Vec::new(),
        }
    }

    /// With the proving tests that did not build on the base's code.
    pub fn with_unbuilt(mut self, unbuilt: Vec<String>) -> NewTests {
        self.unbuilt_at_base = unbuilt
            .into_iter()
            .filter(|t| self.proving_names.contains(t))
            .collect();
        self
    }

    /// `new tests: 2 of 2 fail at the base and pass here`, naming the
    /// first few that pass on the base's code too.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "new tests: {} of {} fail at the base and pass here",
            self.proving, self.added
        );
        if !self.pass_at_base.is_empty() {
            s.push_str(&format!(
                " — passing on the base's code too: {}",
                crate::text::first_of(&self.pass_at_base, 5)
            ));
        }
        if !self.pass_without_new_code.is_empty() {
            s.push_str(&format!(
                " — not failing with the change's new functions stubbed out: {}",
                crate::text::first_of(&self.pass_without_new_code, 5)
            ));
        }
        s
    }
}

/// The base commit's own tests run against a change's code: its test files
/// (and Rust test modules) laid from the base in a copy of the change.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseTests {
    /// How many tests the runner lists at the base.
    pub listed: usize,
    /// How many of them passed on this change.
    pub passed: usize,
    /// Those that failed or did not run (by name, at most a few dozen).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_passing: Vec<String>,
    /// How many files were laid from the base (or rewritten with the
    /// base's test modules) for the run; 0 when the change touches no test
    /// and the guardrail's own run is the base-tests run.
    pub files_laid: usize,
    /// How many of the base's tests were run again mutated (an assertion
    /// changed so that they must fail) and failed as they must; 0 when no
    /// canary run was made or it contradicted this run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub mutated: usize,
    /// The base's tests passed here, but none of them has an assertion
    /// rascal can change and no planted canary ran: nothing checked that
    /// these results are the runner's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unchecked: bool,
    /// How many of them passed, of how many were judged, when run again
    /// in the profile the project ships (cargo's `--release`); None when
    /// that run was not made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<(usize, usize)>,
    /// Base tests that do not build on this change as the base wrote them
    /// but whose test files the change rewrote, and whose new versions
    /// pass: updated with an API the change altered (by name). Whether the
    /// task asked for that is settled against the other candidates: one
    /// that built them unchanged shows it did not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub updated: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl BaseTests {
    /// `base tests: 14/14 pass on this change`, naming the first few that
    /// do not.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "base tests: {}/{} pass on this change",
            self.passed, self.listed
        );
        if !self.not_passing.is_empty() {
            s.push_str(&format!(
                " — not passing: {}",
                crate::text::first_of(&self.not_passing, 5)
            ));
        }
        if !self.updated.is_empty() {
            s.push_str(&format!(
                " · {} updated with the API (they do not build as the base wrote them; the change's versions pass): {}",
                self.updated.len(),
                crate::text::first_of(&self.updated, 5)
            ));
        }
        if self.mutated > 0 {
            s.push_str(&format!(
                " · {} failed as they must",
                crate::text::plural(self.mutated as u64, "mutated test")
            ));
        }
        if self.unchecked {
            s.push_str(
                " · no canary: none of these tests has an assertion rascal can change, so nothing checked that their results are the runner's",
            );
        }
        s
    }

    /// The release-profile run's line, when it was made:
    /// `release profile: 12/12 base tests pass in `--release` too`.
    pub fn release_summary(&self) -> Option<String> {
        self.release.map(|(passed, judged)| {
            format!("release profile: {passed}/{judged} base tests pass in `--release` too")
        })
    }
}

impl Ledger {
    /// One line for a report: `12 tests at base · 12 now · 12 ran · 12 passed`.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} at base · {} now · {} ran · {} passed",
            crate::text::plural(self.at_base as u64, "test"),
            self.now,
            self.ran,
            self.passed
        );
        if self.failed > 0 {
            s.push_str(&format!(" · {} failed", self.failed));
        }
        if self.ignored > 0 {
            s.push_str(&format!(" · {} ignored", self.ignored));
        }
        if !self.missing.is_empty() {
            s.push_str(&format!(" · {} missing", self.missing.len()));
        }
        s
    }
}
