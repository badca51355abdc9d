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

use crate::config::Guardrail;
use crate::exec::place::Place;
use crate::layers::evidence::{canary, mutants};
use crate::layers::ledger::{self, Judged, Listing, Recognised, Results};
use crate::layers::test_results::{self, Whole};
use crate::model::changeset::ChangeSet;
use crate::model::ledger::{BaseTests, NewTests, StepTime};
use crate::model::verdict::{Issue, Severity};
use crate::text::{first_of, plural};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

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
        let crate::config::GuardrailKind::Command {
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
    pub async fn run(&self, place: &Place) -> Result<Whole, String> {
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
        let crate::config::GuardrailKind::Command { command, .. } = &self.g.kind else {
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
        let crate::config::GuardrailKind::Command {
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
        let crate::config::GuardrailKind::Command { command, .. } = &self.g.kind else {
            unreachable!("TestRuns are made for command guardrails")
        };
        ledger::no_fail_fast(self.rec, command)
    }

    /// What the runner lists at `place`.
    pub async fn list(&self, place: &Place) -> Result<Listing, String> {
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

/// Rule: a test that fails on the base's code at the base passes there in
/// the change's version.
pub const RULE_WEAKENED: &str = "test-integrity/weakened";

/// The change's tests run on the base's code. New tests (`added`: listed
/// now, not at the base): which fail there and pass here (`results`, the
/// guardrail's own run). Tests the base has that fail on its code
/// (`base_failing`): a change's version that passes there no longer finds
/// the bug — `test-integrity/weakened`. Nothing runs when there is neither.
pub async fn new_tests(
    runs: &TestRuns<'_>,
    place: &Place,
    changes: &ChangeSet,
    (now, results, added, base_failing): (&Listing, &Results, &[String], &[String]),
) -> Result<(Option<NewTests>, Vec<Issue>), String> {
    let kept: Vec<String> = base_failing
        .iter()
        .filter(|t| now.tests.contains(t))
        .cloned()
        .collect();
    if added.is_empty() && kept.is_empty() {
        return Ok((None, Vec::new()));
    }
    let on_base =
        crate::layers::evidence::base_defined::tests_on_base(place, changes, &files_of(runs, now))?;
    let run = runs.run(&on_base).await?;
    if let Some(p) = run.outcome.exit.problem(runs.timeout) {
        return Err(format!("`{}` {p}", runs.run.0));
    }
    let at_base = runs.results(&run, now);
    let weakened = passing(runs, &at_base, &kept, now.files_only);
    let issues: Vec<Issue> = weakened.iter().map(|t| weakened_issue(t)).collect();
    if added.is_empty() {
        return Ok((None, issues));
    }
    let there = judged(runs, &at_base, added, now.files_only);
    let here = passing(runs, results, added, now.files_only);
    // Those that do not build (or run) on the base's code — in Python,
    // that fail there, as a missing name fails a test when it runs — fail
    // there whatever they assert, so they must fail without the new code.
    let by_name = runs.rec.runner.missing_names_fail_when_run();
    let unbuilt: Vec<String> = here
        .iter()
        .filter(|t| there.not_run.contains(t) || (by_name && there.failed.contains(t)))
        .cloned()
        .collect();
    let pass_without_new_code: Vec<String> = if unbuilt.is_empty() {
        Vec::new()
    } else {
        runs.clock.step("new code stubbed");
        let stubbed = crate::layers::evidence::base_defined::without_new_code(place, changes)?;
        let run = runs.run(&stubbed).await?;
        if let Some(p) = run.outcome.exit.problem(runs.timeout) {
            return Err(format!("`{}` {p}", runs.run.0));
        }
        let without = judged(runs, &runs.results(&run, now), &unbuilt, now.files_only);
        unbuilt
            .into_iter()
            .filter(|t| !without.failed.contains(t))
            .collect()
    };
    let proving_names: Vec<String> = here
        .into_iter()
        .filter(|t| there.failed.contains(t) || there.not_run.contains(t))
        .filter(|t| !pass_without_new_code.contains(t))
        .collect();
    let pass_at_base = passing(runs, &at_base, added, now.files_only);
    Ok((
        Some(
            NewTests::of(
                added.len(),
                proving_names,
                pass_at_base,
                pass_without_new_code,
            )
            .with_unbuilt(there.not_run.clone()),
        ),
        issues,
    ))
}

/// Whether a jest or vitest command selects tests by name (`-t`,
/// `--testNamePattern`).
fn filters_by_name(args: &[String]) -> bool {
    args.iter().any(|a| {
        a == "-t"
            || (a.starts_with("-t") && !a.starts_with("--"))
            || a.starts_with("--testNamePattern")
            || a.starts_with("--test-name-pattern")
    })
}

/// Whether a `go test` command selects subtests (`-run 'TestX/one'`).
fn filters_subtests(command: &str) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    words.iter().enumerate().any(|(i, w)| {
        if !w.starts_with('-') {
            return false;
        }
        let w = w.trim_start_matches('-');
        match w.strip_prefix("run") {
            Some(rest) if rest.starts_with('=') => rest.contains('/'),
            Some("") => words.get(i + 1).is_some_and(|v| v.contains('/')),
            _ => false,
        }
    })
}

/// The `test-integrity/weakened` error for test `t`.
pub fn weakened_issue(t: &str) -> Issue {
    Issue::new(
        RULE_WEAKENED,
        Severity::Error,
        format!("test `{t}` fails on the base's code, but the change's version of it passes there: it no longer finds the bug (passes on the unchanged code)"),
    )
}

/// How `names` fared in `results`.
fn judged(runs: &TestRuns<'_>, results: &Results, names: &[String], files_only: bool) -> Judged {
    let these = Listing {
        tests: names.to_vec(),
        complete: true,
        files_only,
    };
    ledger::judge(runs.rec.runner, &these, results)
}

/// Which of `names` passed in `results`.
fn passing(
    runs: &TestRuns<'_>,
    results: &Results,
    names: &[String],
    files_only: bool,
) -> Vec<String> {
    let j = judged(runs, results, names, files_only);
    names
        .iter()
        .filter(|t| !j.failed.contains(t) && !j.not_run.contains(t) && !j.ignored.contains(t))
        .cloned()
        .collect()
}

/// The base's own tests on the change, judged against the base's listing
/// `at_base`: laid over a copy of the change and run there, or — when the
/// change touches no test — the guardrail's own `results`. A base listing
/// not read in full is not judged: a warning says so.
pub async fn base_tests(
    runs: &TestRuns<'_>,
    place: &Place,
    changes: &ChangeSet,
    allow: &[String],
    at_base: &Listing,
    results: &Results,
) -> Result<(Option<BaseTests>, Vec<Issue>), String> {
    if !at_base.complete {
        let why = "base tests: not judged — the runner's listing at the base could not be read in full (does the base build?)";
        return Ok((
            None,
            vec![Issue::new(RULE_BASE_TESTS, Severity::Warning, why)],
        ));
    }
    // The guardrail's own run, of the change's own tests.
    let own_run = results;
    let reader = place.files_reader();
    let runner = runs.rec.runner;
    let base_files = match runner {
        ledger::Runner::Cargo | ledger::Runner::Go => {
            crate::layers::evidence::base_defined::base_files_where(
                place,
                changes,
                &|p| canary::may_hold(runner, p),
                // A Go canary needs `testing` imported by that name.
                (runner == ledger::Runner::Go).then_some(&canary::go_file_fits),
            )
        }
        _ => Vec::new(),
    };
    let canaries = canary::plan(
        runner,
        at_base,
        runs.rec.dir.as_deref(),
        &canary::nonce(),
        &|p| reader.read(p).is_some(),
        &base_files,
        &runs.rec.args,
    );
    let copy = crate::layers::evidence::base_defined::BaseTestsCopy::new(
        place,
        changes,
        allow,
        &files_of(runs, at_base),
        &canaries,
    )?;
    let files_laid = copy.laid;
    let laid = copy.place(place, changes)?;
    let mut issues = Vec::new();
    let all = runs.every_target();
    // The canaries are judged against what the runner lists there.
    let listed = match canaries.is_empty() {
        false => Some(runs.list(&laid).await?),
        true => None,
    };
    let results = if files_laid == 0 && canaries.is_empty() && !mutable(runner) {
        results.clone()
    } else {
        let run = all.run(&laid).await?;
        if let Some(p) = run.outcome.exit.problem(runs.timeout) {
            return Err(format!("`{}` {p}", all.run.0));
        }
        if let Some(listed) = &listed {
            issues.extend(canary::verdict(&canaries, runner, listed, &run));
        }
        runs.results(&run, at_base)
    };
    let judged = ledger::judge(runs.rec.runner, at_base, &results);
    let not_passing: Vec<String> = judged
        .failed
        .iter()
        .chain(&judged.not_run)
        .cloned()
        .collect();
    let updated = updated_with_the_api(runs, &judged, own_run, at_base, files_laid);
    let failing: Vec<String> = not_passing
        .iter()
        .filter(|t| !updated.contains(t))
        .cloned()
        .collect();
    let (mut b, issue) = base_tests_judged(
        judged.listed - judged.ignored.len(),
        judged.passed,
        &failing,
        files_laid,
    );
    issues.extend(issue);
    if let Some(b) = b.as_mut() {
        b.updated = updated.iter().take(50).cloned().collect();
    }
    if !updated.is_empty() {
        issues.push(Issue::new(
            RULE_API_CHANGED,
            Severity::Info,
            format!(
                "{} updated with the API: {} not build on this change as the base wrote {}, and this change's own {} ({}); the other candidates settle whether the task asked for it",
                crate::text::plural(updated.len() as u64, "base test"),
                if updated.len() == 1 { "it does" } else { "they do" },
                if updated.len() == 1 { "it" } else { "them" },
                if updated.len() == 1 { "version passes" } else { "versions pass" },
                crate::text::first_of(&updated, 4),
            ),
        ));
    }
    // The canary runs: the same tests, those that passed split in two
    // rounds, each round's mutated so that they must fail.
    runs.clock.step("canaries");
    let passed = passed_tests(runner, at_base, &results, &not_passing, &judged.ignored);
    let mut copy = copy;
    let files: Vec<(String, String)> = mutable_files(runs, place, changes, at_base)
        .into_iter()
        .filter_map(|p| copy.text(&p).map(|t| (p, t)))
        .collect();
    let nonce = canary::nonce();
    let go = match runner {
        ledger::Runner::Go => go_module_of(&copy, runs.rec.dir.as_deref()),
        _ => None,
    };
    let naming = match &go {
        Some((module, root)) => mutants::Naming::Go { module, root },
        None => mutants::Naming::Known(runner),
    };
    // A `go test -run 'TestX/sub'` may run none of a test's subtests,
    // where a mutated check may be: no mutants then (the planted canary
    // still runs).
    let rounds = if go.is_some() && filters_subtests(&runs.run_command()) {
        Vec::new()
    } else {
        let passed_files: Vec<String> = at_base
            .tests
            .iter()
            .filter(|t| !not_passing.contains(t) && !judged.ignored.contains(t))
            .cloned()
            .collect();
        // Only jest names a test from its file and literal titles alone
        // (pytest adds parameters, which a files-only listing hides).
        // A name filter (`-t`) may run none of a file's tests: then only
        // the results say which ran.
        let js = matches!(runner, ledger::Runner::Jest | ledger::Runner::Vitest);
        let named = !filters_by_name(&runs.rec.args);
        let files_only = (at_base.files_only && js && named).then_some(passed_files.as_slice());
        mutants::plan(naming, &files, &passed, files_only, &nonce)
    };
    let mut forged = Vec::new();
    for planned in &rounds {
        for (path, text) in mutants::round(planned, &files, &nonce) {
            copy.put(path, text);
        }
        let mutant_place = copy.place(place, changes)?;
        let run = all.run(&mutant_place).await?;
        if let Some(p) = run.outcome.exit.problem(runs.timeout) {
            return Err(format!("the canary run: `{}` {p}", all.run.0));
        }
        if let Some(listed) = &listed {
            issues.extend(canary::verdict(&canaries, runner, listed, &run));
        }
        let there = runs.results(&run, at_base);
        // Mutants are named test by test, even where the listing names
        // only files (jest).
        let outcome = |n: &str| known_outcome(runner, &there, n, false);
        forged.extend(mutants::verdict(
            planned,
            &passed,
            &outcome,
            run.outcome.exit.success(),
        ));
    }
    if let Some(b) = b.as_mut() {
        b.mutated = mutants::failed_as_they_must(&rounds, &forged);
        b.unchecked = rounds.is_empty() && canaries.is_empty() && !passed.is_empty();
    }
    issues.extend(forged);
    Ok((b, issues))
}

/// The base's tests that had no result as the base wrote them (they did
/// not build: a changed signature) while the change rewrote test files
/// (`files_laid`), and that pass in the guardrail's own run of the
/// change's versions (`results`): updated with an API the change altered.
/// Only for runners where a test that does not build has no result (cargo,
/// go): in Python a changed signature fails like any assertion.
fn updated_with_the_api(
    runs: &TestRuns<'_>,
    judged: &ledger::Judged,
    results: &Results,
    at_base: &Listing,
    files_laid: usize,
) -> Vec<String> {
    let runner = runs.rec.runner;
    if files_laid == 0 || !matches!(runner, ledger::Runner::Cargo | ledger::Runner::Go) {
        return Vec::new();
    }
    judged
        .not_run
        .iter()
        .filter(|t| {
            known_outcome(runner, results, t, at_base.files_only) == mutants::Outcome::Passed
        })
        .cloned()
        .collect()
}

/// Whether rascal mutates the base's tests for `runner` (every runner it
/// reads: Rust, Python, Go and JavaScript).
fn mutable(runner: ledger::Runner) -> bool {
    matches!(
        runner,
        ledger::Runner::Cargo
            | ledger::Runner::Pytest
            | ledger::Runner::Unittest
            | ledger::Runner::Go
            | ledger::Runner::Jest
            | ledger::Runner::Vitest
    )
}

/// The tests of the base that passed in the base-tests run, each by the
/// name its runner gives one test: the listing's names, or — where the
/// listing names only files (jest's `--listTests`) — the names in that
/// run's `results` of the tests of files none of whose tests failed.
fn passed_tests(
    runner: ledger::Runner,
    at_base: &Listing,
    results: &Results,
    not_passing: &[String],
    ignored: &[String],
) -> Vec<String> {
    let counts = |t: &String| !not_passing.contains(t) && !ignored.contains(t);
    if !at_base.files_only {
        return at_base
            .tests
            .iter()
            .filter(|t| counts(t))
            .cloned()
            .collect();
    }
    results
        .passed
        .iter()
        .filter(|name| {
            let one = Listing {
                tests: vec![name.to_string()],
                complete: true,
                files_only: false,
            };
            ledger::test_files(runner, &one)
                .first()
                .is_some_and(|file| at_base.tests.contains(file) && counts(file))
        })
        .cloned()
        .collect()
}

/// The Go module `go test` runs in from the runner's directory `dir`: the
/// path its nearest `go.mod` declares, and that file's directory. Read at
/// the base: the names matched are the base's listing's, so nothing the
/// candidate writes in its `go.mod` decides which tests are mutated. None
/// when there is none.
fn go_module_of(
    copy: &crate::layers::evidence::base_defined::BaseTestsCopy,
    dir: Option<&str>,
) -> Option<(String, String)> {
    let mut d = dir.unwrap_or("").trim_matches('/').to_string();
    loop {
        let path = match d.as_str() {
            "" | "." => "go.mod".to_string(),
            d => format!("{d}/go.mod"),
        };
        if let Some(text) = copy.base_text(&path) {
            let root = if d == "." { String::new() } else { d };
            return mutants::go_module(&text).map(|m| (m.to_string(), root));
        }
        if d.is_empty() || d == "." {
            return None;
        }
        d = d
            .rsplit_once('/')
            .map(|(a, _)| a.to_string())
            .unwrap_or_default();
    }
}

/// The base's files that may hold tests to mutate for this run: Rust
/// sources, Python test files, Go `_test.go` files and JavaScript test
/// files under the runner's directory, outside vendored trees.
fn mutable_files(
    runs: &TestRuns<'_>,
    place: &Place,
    changes: &ChangeSet,
    at_base: &Listing,
) -> Vec<String> {
    let runner = runs.rec.runner;
    if !mutable(runner) {
        return Vec::new();
    }
    let dir = runs
        .rec
        .dir
        .as_deref()
        .map(|d| format!("{}/", d.trim_end_matches('/')));
    let mut out = files_of(runs, at_base);
    out.extend(crate::layers::evidence::base_defined::base_files_where(
        place,
        changes,
        &|p| {
            let name = p.rsplit('/').next().unwrap_or(p);
            let vendored = p.split('/').any(|d| d == "vendor" || d == "third_party");
            let kind = match runner {
                ledger::Runner::Cargo => name.ends_with(".rs"),
                ledger::Runner::Go => name.ends_with("_test.go"),
                ledger::Runner::Jest | ledger::Runner::Vitest => {
                    crate::layers::test_integrity::JS_EXTENSIONS
                        .iter()
                        .any(|e| name.ends_with(e))
                        && (name.contains(".test.")
                            || name.contains(".spec.")
                            || p.split('/').any(|d| d == "__tests__"))
                }
                _ => {
                    name.ends_with(".py")
                        && (name.starts_with("test") || name.ends_with("_test.py"))
                }
            };
            kind && !vendored && dir.as_deref().is_none_or(|d| p.starts_with(d))
        },
        Some(&|t: &str| t.contains("test")),
    ));
    out.sort();
    out.dedup();
    out
}

/// How test `name` came out in `results`.
fn known_outcome(
    runner: ledger::Runner,
    results: &Results,
    name: &str,
    files_only: bool,
) -> mutants::Outcome {
    let one = Listing {
        tests: vec![name.to_string()],
        complete: true,
        files_only,
    };
    let j = ledger::judge(runner, &one, results);
    if !j.failed.is_empty() {
        mutants::Outcome::Failed
    } else if j.passed == 1 {
        mutants::Outcome::Passed
    } else {
        mutants::Outcome::NoResult
    }
}

/// How the base's `listed` tests fared on the change (`passed`, and those
/// `not_passing`), with the `base-tests/failed` error when any did not
/// pass.
pub fn base_tests_judged(
    listed: usize,
    passed: usize,
    not_passing: &[String],
    files_laid: usize,
) -> (Option<BaseTests>, Option<Issue>) {
    let b = BaseTests {
        listed,
        passed,
        not_passing: not_passing.iter().take(50).cloned().collect(),
        files_laid,
        mutated: 0,
        unchecked: false,
        release: None,
        updated: Vec::new(),
    };
    let issue = (!not_passing.is_empty()).then(|| {
        Issue::new(
            RULE_BASE_TESTS,
            Severity::Error,
            format!(
                "{}: the base commit's own tests must pass on the change (`allow_test_changes` names tests or paths the task may change)",
                b.summary()
            ),
        )
    });
    (Some(b), issue)
}

#[cfg(test)]
mod tests {
    use super::filters_subtests;

    #[test]
    fn a_run_filter_with_a_slash_selects_subtests() {
        for (command, want) in [
            ("go test ./...", false),
            ("go test -run TestAdd ./...", false),
            ("go test -run 'TestAdd/one' ./...", true),
            ("go test -run=TestAdd/one ./...", true),
            ("go test --run TestAdd/ ./...", true),
            ("go test -count=1 run/x", false),
        ] {
            assert_eq!(filters_subtests(command), want, "{command}");
        }
    }
}
