//! The tested code is the shipped code. Tests build in a test profile;
//! users run the release build. Code that behaves one way under test and
//! another where it ships (`cfg(debug_assertions)`, overflow checks, a
//! build script that reads the profile) passes every test and is wrong
//! for the user. So for a direct `cargo test`, the base's own tests —
//! laid over the change as for the base-tests run — run once more in the
//! release profile (`cargo test --release`, reusing nothing but the
//! candidate's build cache). A base test that passed on the change in the
//! base-tests run but fails here is `test-integrity/test-only-behaviour`,
//! an error — unless it does the same at the base (passes in the test
//! profile, fails in release: a test of debug-only checks, the project's
//! own business). The base's release run is made once per base tree; when
//! it does not finish within the guardrail's timeout, profiles are not
//! compared (a warning says so), and when it does and the change's does
//! not, the change fails.

use crate::layers::evidence::base_cache::at_base_once;
use crate::layers::evidence::test_evidence::{files_of, TestRuns};
use crate::Error;
use rascal_core::model::changeset::ChangeSet;
use rascal_core::model::verdict::{Issue, Severity};
use rascal_core::text::{first_of, plural};
use rascal_exec::exec::place::Place;
use rascal_scan::ledger::{self, Listing};
use rascal_scan::test_integrity::RULE_TEST_ONLY;

/// Where the base's own runs are made and kept: its tree, and the cache
/// directory of the base's runs.
pub struct Base<'a> {
    pub tree: &'a str,
    pub cache_dir: &'a std::path::Path,
}

/// What the release-profile run says: how many of the base's tests passed
/// there of how many were judged (None when the run was not made), and
/// its issues.
pub type Shipped = (Option<(usize, usize)>, Vec<Issue>);

/// The base's tests (listed at the base as `at_base`) on the change in
/// the release profile, made when every one passed in the base-tests run:
/// each must pass here too, unless at the base it also passes
/// in the test profile and fails in release (`base_failing`: the base's
/// own run's failures, awaited only when needed). The base's release run
/// comes first (once per base tree): when even the base's does not finish
/// within the guardrail's timeout, profiles are not compared and a
/// warning says so; when the base's finishes and the change's does not,
/// the change fails.
pub async fn release_profile(
    runs: &TestRuns<'_>,
    (place, changes, allow): (&Place, &ChangeSet, &[String]),
    at_base: &Listing,
    base: &Base<'_>,
    base_failing: impl std::future::Future<Output = Result<Vec<String>, Error>>,
    updated: &[String],
) -> Result<Shipped, Error> {
    let Some(shipped) = runs.shipped() else {
        return Ok((None, Vec::new()));
    };
    // As the user would type it (not with rascal's results flags).
    let command = &ledger::shipped_profile(runs.rec, &runs.run_command()).unwrap_or_default();
    let Some(release_at_base) = base_release_passing(&shipped, place, at_base, base).await? else {
        let why = format!(
            "release profile: not compared — the base's own tests do not finish in `{command}` within the guardrail's timeout (raise `timeout`, or set `release_profile: false` on the guardrail)"
        );
        return Ok((
            None,
            vec![Issue::new(RULE_TEST_ONLY, Severity::Warning, why)],
        ));
    };
    let copy = crate::layers::evidence::base_defined::BaseTestsCopy::new(
        place,
        changes,
        allow,
        &files_of(runs, at_base),
        &[],
    )?;
    let laid = copy.place(place, changes)?;
    let run = shipped.run(&laid).await?;
    if let Some(p) = run.outcome.exit.problem(runs.timeout) {
        return Err(Error::Verification(format!(
            "the release-profile run: `{command}` {p}, where the base's own tests finish (raise the guardrail's `timeout`, or set `release_profile: false` on it to not compare profiles)"
        )));
    }
    let results = shipped.results(&run, at_base);
    let judged = ledger::judge(runs.rec.runner, at_base, &results);
    let line = (judged.passed, judged.listed - judged.ignored.len());
    // Tests updated with an API the change altered do not build as the
    // base wrote them in either profile: not compared here.
    let differ: Vec<String> = judged
        .failed
        .iter()
        .chain(&judged.not_run)
        .filter(|t| !judged.ignored.contains(t) && !updated.contains(t))
        .cloned()
        .collect();
    let line = (
        line.0,
        line.1
            - judged
                .not_run
                .iter()
                .filter(|t| updated.contains(t))
                .count(),
    );
    if differ.is_empty() {
        return Ok((Some(line), Vec::new()));
    }
    // A test of debug-only checks differs at the base too: not judged.
    let failing_at_base = base_failing.await?;
    let differ: Vec<String> = differ
        .into_iter()
        .filter(|t| failing_at_base.contains(t) || release_at_base.contains(t))
        .collect();
    if differ.is_empty() {
        return Ok((Some(line), Vec::new()));
    }
    let issue = Issue::new(
        RULE_TEST_ONLY,
        Severity::Error,
        format!(
            "{} of the base's pass on this change in the test profile but not in the release profile it ships (`{command}`): {} — the change's code behaves differently where it ships than where it is tested",
            plural(differ.len() as u64, "test"),
            first_of(&differ, 5)
        ),
    );
    Ok((Some(line), vec![issue]))
}

/// Make the base's release run (kept per base tree), when the guardrail
/// compares profiles.
pub(crate) async fn base_release(
    runs: &TestRuns<'_>,
    place: &Place,
    at_base: &Listing,
    base: &Base<'_>,
) {
    if let Some(shipped) = runs.shipped() {
        let _ = base_release_passing(&shipped, place, at_base, base).await;
    }
}

/// The base's tests that pass in the release profile at the base, or
/// None when that run does not finish (both cached per base tree and
/// command).
async fn base_release_passing(
    shipped: &TestRuns<'_>,
    place: &Place,
    at_base: &Listing,
    base: &Base<'_>,
) -> Result<Option<Vec<String>>, Error> {
    let key = format!("release-run\n{}\n{}", base.tree, shipped.run.0);
    at_base_once(base.cache_dir, key, |_: &Option<Vec<String>>| true, async {
        let there = place
            .at_base(base.tree, base.cache_dir.join("build-cache"))
            .ok_or_else(|| crate::layers::evidence::base_cache::no_base_copy("run its tests in"))?;
        let run = shipped.run(&there).await?;
        if run.outcome.exit.problem(shipped.timeout).is_some() {
            return Ok(None);
        }
        let results = shipped.results(&run, at_base);
        let judged = ledger::judge(shipped.rec.runner, at_base, &results);
        Ok(Some(
            at_base
                .tests
                .iter()
                .filter(|t| {
                    !judged.failed.contains(t)
                        && !judged.not_run.contains(t)
                        && !judged.ignored.contains(t)
                })
                .cloned()
                .collect(),
        ))
    })
    .await
}
