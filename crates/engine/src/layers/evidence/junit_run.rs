//! A test guardrail whose runner rascal does not know, made readable by
//! `results: PATH` (a JUnit XML file the command writes): the file is
//! removed before each run, read back after it, and judged like a known
//! runner's results — a run that exits 0 with failures, with no results
//! file, or with no test in it fails. The base commit's own tests judge
//! the change here too: the base's run (once per base tree, in a copy of
//! the base) names the tests, and the same command over a copy of the
//! change with the base's test files laid in must pass every one of them.
//!
//! The change's new tests run on the base's code as for a known runner
//! (`test_evidence::new_tests`): new names in the results that fail there
//! and pass here are evidence, one that does not run there must fail with
//! the change's new functions stubbed out, and a test that fails on the
//! base's code but whose changed version passes there is weakened.
//!
//! The results file is written inside the copy, where the code under test
//! could write too; what makes it evidence is the base-tests run, whose
//! tests are the base's and whose names must all come back passing.

use crate::layers::evidence::base_cache::{at_base_once, base_tree_of, no_base_copy};
use crate::layers::evidence::mutants;
use crate::layers::evidence::test_evidence::{weakened_issue, RULE_FAILED};
use crate::layers::evidence::test_report::{merge_base_tests, merge_new_tests, own_run_of};
use crate::layers::test_results::{run_whole, Whole};
use crate::Error;
use rascal_core::config::{Guardrail, GuardrailKind};
use rascal_core::model::changeset::ChangeSet;
use rascal_core::model::ledger::{BaseTests, Ledger, NewTests};
use rascal_core::model::verdict::{Issue, Layer, Report, Severity};
use rascal_core::text::{first_of, plural};
use rascal_exec::exec::place::Place;
use rascal_scan::ledger::{junit, Results};
use rascal_scan::test_integrity::{self, Input};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How the guardrail runs: its command behind a removal of the results
/// file, where it runs, and the file read back.
struct JunitRun<'a> {
    run: String,
    results: String,
    timeout: Duration,
    env: (&'a [String], bool),
    cancel: &'a CancellationToken,
}

impl JunitRun<'_> {
    async fn at(&self, place: &Place) -> Result<Whole, Error> {
        run_whole(
            place,
            &self.run,
            self.timeout,
            self.env,
            std::slice::from_ref(&self.results),
            self.cancel,
        )
        .await
    }

    /// Its run did not end cleanly (`problem`: timed out, killed, …): the
    /// check could not be carried out.
    fn unclean(&self, problem: impl std::fmt::Display) -> Error {
        Error::Verification(format!("`{}` {problem}", self.run))
    }

    /// The results of `run`, or why there are none.
    fn read(&self, run: &Whole) -> Result<Results, Error> {
        let bytes = run.files.first().and_then(|f| f.as_ref()).ok_or_else(|| {
            Error::Verification(format!(
                "wrote no results file at `{}` (the JUnit XML file `results:` names)",
                self.results
            ))
        })?;
        junit::parse(&String::from_utf8_lossy(bytes)).map_err(|e| {
            Error::Verification(format!(
                "results file `{}` is not JUnit XML: {e}",
                self.results
            ))
        })
    }
}

/// Every name a results file gives a verdict or a skip.
fn all_names(r: &Results) -> Vec<String> {
    let mut v: Vec<String> = r
        .passed
        .iter()
        .chain(&r.failed)
        .chain(&r.ignored)
        .cloned()
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Run the JUnit-reporting test guardrail `g` (whose `results` is
/// `results`) on a candidate: its own run judged by its results file, and
/// the base's own tests on the change.
pub async fn run_junit_guardrail(
    g: &Guardrail,
    changes: &ChangeSet,
    place: &Place,
    digest: &str,
    allow: &[String],
    cancel: &CancellationToken,
) -> Report {
    let GuardrailKind::Command {
        command,
        timeout,
        env,
        network,
        results: Some(results),
        ..
    } = &g.kind
    else {
        unreachable!("run_junit_guardrail is called for a guardrail with `results:`")
    };
    let mut r = Report::new(Layer::Guardrails, &g.name)
        .input("base", &changes.base)
        .input("diff", changes.fingerprint())
        .input("config", digest)
        .input("command", command)
        .input("results", results)
        .input("tests", "true");
    r.required = g.required;
    let quoted = match crate::layers::criteria::shell_quote(results) {
        Ok(q) => q,
        Err(e) => return r.errored(e.to_string()).finish(),
    };
    let runs = JunitRun {
        run: format!("rm -rf -- {quoted}\n{command}"),
        results: results.clone(),
        timeout: timeout.get(),
        env: (env, *network),
        cancel,
    };
    let own = match runs.at(place).await {
        Ok(w) => w,
        Err(e) => {
            return r
                .errored(format!("could not run `{command}`: {e}"))
                .finish()
        }
    };
    if let Some(problem) = own_run_of(&mut r, g, runs.timeout, place, &own) {
        return r.errored(format!("`{command}` {problem}")).finish();
    }
    let passed_exit = own.outcome.exit.success();
    let now = match runs.read(&own) {
        Ok(now) => now,
        // A failed run (a build error) already fails with its own issues.
        Err(_) if !passed_exit => return r.finish(),
        Err(e) => {
            return r
                .errored(format!(
                    "`{command}` exited 0 but {e} — an exit code is not a result"
                ))
                .finish()
        }
    };
    let mut s = ledger_of(&now);
    if passed_exit && !now.failed.is_empty() {
        r.issues.push(Issue::new(
            RULE_FAILED,
            Severity::Error,
            format!(
                "`{command}` exited 0, but its results say {} failed: {} — an exit code is not a result",
                plural(now.failed.len() as u64, "test"),
                first_of(&now.failed, 8)
            ),
        ));
    }
    // The base's own run: its tests by name, then the same tests on the change.
    if let Some((repo, tree)) = base_tree_of(place, changes) {
        let cache_dir = rascal_exec::git::workspace::files_dir(&repo).join("ledger");
        r = against_the_base(
            r,
            &mut s,
            &runs,
            (place, changes, allow),
            (&tree, &cache_dir),
            &now,
        )
        .await;
    }
    r.output = format!("{}\n{}", s.summary(), r.output);
    r.ledger = Some(Box::new(s));
    if passed_exit && r.ledger.as_ref().is_some_and(|l| l.ran == 0) {
        r = r.errored(format!(
            "`{command}` is the test run, but its results file `{results}` holds 0 tests that ran: a test run that runs no test proves nothing"
        ));
    }
    r.finish()
}

/// The ledger of a JUnit run from its results `now`.
fn ledger_of(now: &Results) -> Ledger {
    Ledger {
        runner: "junit".into(),
        now: all_names(now).len(),
        ran: now.passed.len() + now.failed.len(),
        passed: now.passed.len(),
        failed: now.failed.len(),
        ignored: now.ignored.len(),
        failed_names: now.failed.iter().take(50).cloned().collect(),
        ..Ledger::default()
    }
}

/// The base's own run (cached per base tree in `cache_dir`): its tests by
/// name, gone or ignored now, then the same tests on the change, and the
/// change's new tests on the base's code.
async fn against_the_base(
    mut r: Report,
    s: &mut Ledger,
    runs: &JunitRun<'_>,
    (place, changes, allow): (&Place, &ChangeSet, &[String]),
    (tree, cache_dir): (&str, &std::path::Path),
    now: &Results,
) -> Report {
    match base_results(runs, place, tree, cache_dir).await {
        Ok(at_base) => {
            let base_names = all_names(&at_base);
            s.at_base = base_names.len();
            let now_names = all_names(now);
            s.missing = base_names
                .iter()
                .filter(|n| !now_names.contains(n))
                .cloned()
                .collect();
            r.issues.extend(test_integrity::check(&Input {
                files: &[],
                test_commands: &[],
                allow,
                ledger: Some(test_integrity::LedgerView {
                    at_base: &base_names,
                    now: &now_names,
                    ignored_now: &now.ignored,
                    ignored_at_base: &at_base.ignored,
                }),
                crate_words: None,
            }));
            let base = base_tests(runs, place, changes, allow, &at_base, now).await;
            r = merge_base_tests(r, s, base);
            let new = new_tests(runs, place, changes, &at_base, now).await;
            r = merge_new_tests(r, s, new);
        }
        Err(e) => r = r.errored(format!("running the base's own tests at the base: {e}")),
    }
    r
}

/// The results of the base commit's own run at the base (cached per base
/// tree and command, in a directory only base code writes).
async fn base_results(
    runs: &JunitRun<'_>,
    place: &Place,
    tree: &str,
    cache_dir: &std::path::Path,
) -> Result<Results, Error> {
    let key = format!("junit\n{tree}\n{}", runs.run);
    at_base_once(cache_dir, key, |r: &Results| r.complete, async {
        let at_base = place
            .at_base(tree, cache_dir.join("build-cache"))
            .ok_or_else(|| no_base_copy("run its tests in"))?;
        let w = runs.at(&at_base).await?;
        if let Some(p) = w.outcome.exit.problem(runs.timeout) {
            return Err(runs.unclean(p));
        }
        let mut r = runs.read(&w)?;
        r.complete = true;
        Ok(r)
    })
    .await
}

/// The base's tests (every one its run gave a verdict) on the change: the
/// same command over a copy of the change with the base's test files laid
/// in — or, when the change touches no test, the guardrail's own results.
async fn base_tests(
    runs: &JunitRun<'_>,
    place: &Place,
    changes: &ChangeSet,
    allow: &[String],
    at_base: &Results,
    now: &Results,
) -> Result<(Option<BaseTests>, Vec<Issue>), Error> {
    let copy =
        crate::layers::evidence::base_defined::BaseTestsCopy::new(place, changes, allow, &[], &[])?;
    let files_laid = copy.laid;
    let results = if files_laid == 0 {
        now.clone()
    } else {
        let w = runs.at(&copy.place(place, changes)?).await?;
        if let Some(p) = w.outcome.exit.problem(runs.timeout) {
            return Err(runs.unclean(p));
        }
        runs.read(&w)?
    };
    let judged: Vec<&String> = at_base.passed.iter().chain(&at_base.failed).collect();
    let passes =
        |r: &Results, n: &str| r.passed.iter().any(|p| p == n) && !r.failed.iter().any(|f| f == n);
    let not_passing: Vec<String> = judged
        .iter()
        .filter(|n| !passes(&results, n))
        .map(|n| n.to_string())
        .collect();
    let passed: Vec<String> = judged
        .iter()
        .filter(|n| passes(&results, n))
        .map(|n| n.to_string())
        .collect();
    let (mut b, issue) = crate::layers::evidence::test_evidence::base_tests_judged(
        judged.len(),
        passed.len(),
        &not_passing,
        files_laid,
    );
    let mut issues: Vec<Issue> = issue.into_iter().collect();
    // The canary runs: the tests that passed, split in two rounds, each
    // round's mutated so that they must fail (Rust, Python and Java test
    // files).
    let mut copy = copy;
    let files: Vec<(String, String)> = crate::layers::evidence::base_defined::base_files_where(
        place,
        changes,
        &|p| {
            let name = p.rsplit('/').next().unwrap_or(p);
            let vendored = p.split('/').any(|d| d == "vendor" || d == "third_party");
            let java_test = name.ends_with(".java")
                && (p.contains("src/test/")
                    || ["Test.java", "Tests.java", "IT.java"]
                        .iter()
                        .any(|s| name.ends_with(s)));
            !vendored
                && (name.ends_with(".rs")
                    || java_test
                    || (name.ends_with(".py")
                        && (name.starts_with("test") || name.ends_with("_test.py"))))
        },
        Some(&|t: &str| t.contains("test") || t.contains("Test")),
    )
    .into_iter()
    .filter_map(|p| copy.text(&p).map(|t| (p, t)))
    .collect();
    let nonce = crate::layers::evidence::canary::nonce();
    let rounds = mutants::plan(mutants::Naming::Junit, &files, &passed, None, &nonce);
    let mut forged = Vec::new();
    for planned in &rounds {
        for (path, text) in mutants::round(planned, &files, &nonce) {
            copy.put(path, text);
        }
        let w = runs.at(&copy.place(place, changes)?).await?;
        if let Some(p) = w.outcome.exit.problem(runs.timeout) {
            let why = format!("the canary run: {}", runs.unclean(p));
            return Err(Error::Verification(why));
        }
        let there = runs.read(&w).unwrap_or_default();
        let outcome = |n: &str| {
            if there.failed.iter().any(|f| f == n) {
                mutants::Outcome::Failed
            } else if there.passed.iter().any(|p| p == n) {
                mutants::Outcome::Passed
            } else {
                mutants::Outcome::NoResult
            }
        };
        // The results file decides, not the exit code: many JUnit
        // runners exit 0 whatever their tests did.
        forged.extend(mutants::verdict(planned, &passed, &outcome, false));
    }
    if let Some(b) = b.as_mut() {
        b.mutated = mutants::failed_as_they_must(&rounds, &forged);
        b.unchecked = rounds.is_empty() && !passed.is_empty();
    }
    issues.extend(forged);
    Ok((b, issues))
}

/// The results of `runs` at `place`, or none when the run wrote no results
/// file (its tests did not build there); a run that did not end is an
/// error.
async fn results_there(runs: &JunitRun<'_>, place: &Place) -> Result<Results, Error> {
    let w = runs.at(place).await?;
    if let Some(p) = w.outcome.exit.problem(runs.timeout) {
        return Err(runs.unclean(p));
    }
    Ok(runs.read(&w).unwrap_or_default())
}

/// The change's tests on the base's code (see the module doc): nothing
/// runs when the change touches no test.
async fn new_tests(
    runs: &JunitRun<'_>,
    place: &Place,
    changes: &ChangeSet,
    at_base: &Results,
    now: &Results,
) -> Result<(Option<NewTests>, Vec<Issue>), Error> {
    if crate::layers::evidence::base_defined::test_paths(place, changes, &[]).is_empty() {
        return Ok((None, Vec::new()));
    }
    let base_names = all_names(at_base);
    let passed = |r: &Results, t: &String| r.passed.contains(t) && !r.failed.contains(t);
    let added: Vec<String> = all_names(now)
        .into_iter()
        .filter(|n| !base_names.contains(n))
        .collect();
    let kept: Vec<String> = at_base
        .failed
        .iter()
        .filter(|t| all_names(now).contains(t))
        .cloned()
        .collect();
    if added.is_empty() && kept.is_empty() {
        return Ok((None, Vec::new()));
    }
    let on_base = crate::layers::evidence::base_defined::tests_on_base(place, changes, &[])?;
    let there = results_there(runs, &on_base).await?;
    let issues: Vec<Issue> = kept
        .iter()
        .filter(|t| passed(&there, t))
        .map(|t| weakened_issue(t))
        .collect();
    if added.is_empty() {
        return Ok((None, issues));
    }
    let here: Vec<String> = added.iter().filter(|t| passed(now, t)).cloned().collect();
    let ran_there = |t: &String| there.passed.contains(t) || there.failed.contains(t);
    let unbuilt: Vec<String> = here.iter().filter(|t| !ran_there(t)).cloned().collect();
    let pass_without_new_code: Vec<String> = if unbuilt.is_empty() {
        Vec::new()
    } else {
        let stubbed = crate::layers::evidence::base_defined::without_new_code(place, changes)?;
        let without = results_there(runs, &stubbed).await?;
        unbuilt
            .iter()
            .filter(|t| !without.failed.contains(t))
            .cloned()
            .collect()
    };
    let proving_names: Vec<String> = here
        .iter()
        .filter(|t| there.failed.contains(t) || unbuilt.contains(t))
        .filter(|t| !pass_without_new_code.contains(t))
        .cloned()
        .collect();
    let pass_at_base: Vec<String> = added
        .iter()
        .filter(|t| passed(&there, t))
        .cloned()
        .collect();
    Ok((
        Some(
            NewTests::of(
                added.len(),
                proving_names,
                pass_at_base,
                pass_without_new_code,
            )
            .with_unbuilt(unbuilt),
        ),
        issues,
    ))
}
