//! The base's own tests on the change: laid over a copy of it and judged
//! against the base's listing, then run again with canaries planted and
//! their checks mutated, so results the runner did not write are caught.

use super::*;
use crate::Error;

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
pub(super) fn filters_subtests(command: &str) -> bool {
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
) -> Result<(Option<BaseTests>, Vec<Issue>), Error> {
    if !at_base.complete {
        let why = "base tests: not judged — the runner's listing at the base could not be read in full (does the base build?)";
        return Ok((
            None,
            vec![Issue::new(RULE_BASE_TESTS, Severity::Warning, why)],
        ));
    }
    // The guardrail's own run, of the change's own tests.
    let own_run = results;
    let runner = runs.rec.runner;
    let canaries = planted_canaries(runs, place, changes, at_base);
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
            return Err(Error::Verification(format!("`{}` {p}", all.run.0)));
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
    let (mut b, judged_issues) =
        judged_with_the_api(runs, &judged, &not_passing, own_run, at_base, files_laid);
    issues.extend(judged_issues);
    // The canary runs: the same tests, those that passed split in two
    // rounds, each round's mutated so that they must fail.
    runs.clock.step("canaries");
    let passed = passed_tests(runner, at_base, &results, &not_passing, &judged.ignored);
    let checked = Checked {
        at_base,
        passed: &passed,
        not_passing: &not_passing,
        ignored: &judged.ignored,
    };
    let planted = Planted {
        canaries: &canaries,
        listed: listed.as_ref(),
    };
    let (rounds, forged) =
        mutant_rounds(runs, place, changes, copy, &checked, &planted, &mut issues).await?;
    if let Some(b) = b.as_mut() {
        b.mutated = mutants::failed_as_they_must(&rounds, &forged);
        b.unchecked = rounds.is_empty() && canaries.is_empty() && !passed.is_empty();
    }
    issues.extend(forged);
    Ok((b, issues))
}

/// The canaries to plant in the base's tests for this runner, in files
/// that may hold one.
fn planted_canaries(
    runs: &TestRuns<'_>,
    place: &Place,
    changes: &ChangeSet,
    at_base: &Listing,
) -> Vec<canary::Canary> {
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
    canary::plan(
        runner,
        at_base,
        runs.rec.dir.as_deref(),
        &canary::nonce(),
        &|p| reader.read(p).is_some(),
        &base_files,
        &runs.rec.args,
    )
}

/// The base-tests record and its issues from the judged run: the tests
/// updated with an API the change altered are set apart (an information
/// issue names them), the rest that did not pass fail it.
fn judged_with_the_api(
    runs: &TestRuns<'_>,
    judged: &Judged,
    not_passing: &[String],
    own_run: &Results,
    at_base: &Listing,
    files_laid: usize,
) -> (Option<BaseTests>, Vec<Issue>) {
    let mut issues = Vec::new();
    let updated = updated_with_the_api(runs, judged, own_run, at_base, files_laid);
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
                rascal_core::text::plural(updated.len() as u64, "base test"),
                if updated.len() == 1 { "it does" } else { "they do" },
                if updated.len() == 1 { "it" } else { "them" },
                if updated.len() == 1 { "version passes" } else { "versions pass" },
                rascal_core::text::first_of(&updated, 4),
            ),
        ));
    }
    (b, issues)
}

/// How the base's tests fared in the base-tests run: its listing, those
/// that passed, those that did not, and those the runner ignored.
struct Checked<'a> {
    at_base: &'a Listing,
    passed: &'a [String],
    not_passing: &'a [String],
    ignored: &'a [String],
}

/// The canaries planted for the base-tests run, and what the runner
/// listed there (None when there are none).
struct Planted<'a> {
    canaries: &'a [canary::Canary],
    listed: Option<&'a Listing>,
}

/// The canary rounds: the base's passing tests, mutated round by round in
/// `copy` so that they must fail, each round run; the rounds planned and
/// the `test-run/forged` issues of tests that passed anyway. A canary's
/// verdict on each run joins `issues`.
async fn mutant_rounds(
    runs: &TestRuns<'_>,
    place: &Place,
    changes: &ChangeSet,
    mut copy: crate::layers::evidence::base_defined::BaseTestsCopy,
    checked: &Checked<'_>,
    planted: &Planted<'_>,
    issues: &mut Vec<Issue>,
) -> Result<(Vec<Vec<mutants::Planned>>, Vec<Issue>), Error> {
    let runner = runs.rec.runner;
    let all = runs.every_target();
    let files: Vec<(String, String)> = mutable_files(runs, place, changes, checked.at_base)
        .into_iter()
        .filter_map(|p| copy.text(&p).map(|t| (p, t)))
        .collect();
    let nonce = canary::nonce();
    let rounds = planned_rounds(runs, &copy, checked, &files, &nonce);
    let mut forged = Vec::new();
    for planned in &rounds {
        for (path, text) in mutants::round(planned, &files, &nonce) {
            copy.put(path, text);
        }
        let mutant_place = copy.place(place, changes)?;
        let run = all.run(&mutant_place).await?;
        if let Some(p) = run.outcome.exit.problem(runs.timeout) {
            return Err(Error::Verification(format!(
                "the canary run: `{}` {p}",
                all.run.0
            )));
        }
        if let Some(listed) = planted.listed {
            issues.extend(canary::verdict(planted.canaries, runner, listed, &run));
        }
        let there = runs.results(&run, checked.at_base);
        // Mutants are named test by test, even where the listing names
        // only files (jest).
        let outcome = |n: &str| known_outcome(runner, &there, n, false);
        forged.extend(mutants::verdict(
            planned,
            checked.passed,
            &outcome,
            run.outcome.exit.success(),
        ));
    }
    Ok((rounds, forged))
}

/// The rounds of mutants to run, named as this runner names its tests.
fn planned_rounds(
    runs: &TestRuns<'_>,
    copy: &crate::layers::evidence::base_defined::BaseTestsCopy,
    checked: &Checked<'_>,
    files: &[(String, String)],
    nonce: &str,
) -> Vec<Vec<mutants::Planned>> {
    let runner = runs.rec.runner;
    let at_base = checked.at_base;
    let go = match runner {
        ledger::Runner::Go => go_module_of(copy, runs.rec.dir.as_deref()),
        _ => None,
    };
    let naming = match &go {
        Some((module, root)) => mutants::Naming::Go { module, root },
        None => mutants::Naming::Known(runner),
    };
    // A `go test -run 'TestX/sub'` may run none of a test's subtests,
    // where a mutated check may be: no mutants then (the planted canary
    // still runs).
    if go.is_some() && filters_subtests(&runs.run_command()) {
        return Vec::new();
    }
    let passed_files: Vec<String> = at_base
        .tests
        .iter()
        .filter(|t| !checked.not_passing.contains(t) && !checked.ignored.contains(t))
        .cloned()
        .collect();
    // Only jest names a test from its file and literal titles alone
    // (pytest adds parameters, which a files-only listing hides).
    // A name filter (`-t`) may run none of a file's tests: then only
    // the results say which ran.
    let js = matches!(runner, ledger::Runner::Jest | ledger::Runner::Vitest);
    let named = !filters_by_name(&runs.rec.args);
    let files_only = (at_base.files_only && js && named).then_some(passed_files.as_slice());
    mutants::plan(naming, files, checked.passed, files_only, nonce)
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
                    rascal_scan::test_integrity::JS_EXTENSIONS
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
