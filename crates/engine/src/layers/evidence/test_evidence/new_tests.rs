//! The change's new tests run on the base's code: one that fails there and
//! passes on the change is evidence; a base test the change weakened is not.

use super::*;
use crate::Error;

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
) -> Result<(Option<NewTests>, Vec<Issue>), Error> {
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
        return Err(Error::Verification(format!("`{}` {p}", runs.run.0)));
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
            return Err(Error::Verification(format!("`{}` {p}", runs.run.0)));
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
