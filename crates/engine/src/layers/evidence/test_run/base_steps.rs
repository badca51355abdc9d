//! The steps after a test guardrail's own run that ask the base: the
//! base's own tests on the change (with their canaries), the shipped
//! (release) profile, and the new tests at the base. When the own run has
//! already failed a required guardrail, none of them runs: nothing they
//! find can turn that FAIL into a pass, and they are most of what a
//! candidate's evidence costs (docs/configuration.md, "Stopped early").
//! `RASCAL_FULL_REPORT=1` runs them anyway, for the whole picture.
//!
//! What the base alone decides (its listing, its own run, its release
//! run: each kept per base tree) is made beside the change's own run, on
//! the base's build cache, so the two builds run side by side rather than
//! one after the other.

use super::{base_listing, base_run, new_tests_at_base, AtBase};
use crate::layers::evidence::shipped::{self, Base};
use crate::layers::evidence::test_evidence::{self, TestRuns};
use crate::layers::evidence::test_report::{merge_base_tests, merge_shipped, with_evidence};
use crate::layers::test_results::Whole;
use crate::Error;
use rascal_core::model::ledger::Ledger;
use rascal_core::model::verdict::{Issue, Report, Severity};
use rascal_exec::exec::place::Place;
use rascal_scan::ledger;
use std::sync::atomic::{AtomicBool, Ordering};

/// Rule: the base's steps did not run (a note, not a finding).
pub const RULE_STOPPED_EARLY: &str = "test-run/stopped-early";

/// What the report says instead of the steps it did not run.
pub(crate) const NOT_RUN: &str = "not run: the base's own tests, the release profile and the new tests at the base — the change's own test run already failed this required check, which nothing they find can change (RASCAL_FULL_REPORT=1 runs them)";

/// Whether the person asked for every step, failed or not (a judgement
/// kept for reuse is kept apart for each answer).
pub(crate) fn full_report() -> bool {
    std::env::var_os("RASCAL_FULL_REPORT").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Whether the rest cannot change `r`'s verdict: the guardrail is
/// required and its own run exited non-zero (a failed run is a FAIL
/// whatever the base says).
pub(super) fn settled(r: &Report, own_passed: bool, full: bool) -> bool {
    settles(r.required, own_passed, full)
}

fn settles(required: bool, own_passed: bool, full: bool) -> bool {
    required && !own_passed && !full
}

/// Start what the base alone decides, beside the change's own run and the
/// steps after it, for the steps that ask for it later (each waits for
/// what it needs: `at_base_once`). Set the returned flag once the own run
/// has settled the report: nothing more of the base's is started then.
pub(super) fn start_base_side(
    runs: &TestRuns<'_>,
    place: &Place,
    (tree, cache_dir): (&str, &std::path::Path),
) -> std::sync::Arc<AtomicBool> {
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let (g, rec, cancel) = (runs.g.clone(), runs.rec.clone(), runs.cancel.clone());
    let (place, tree, cache_dir) = (place.clone(), tree.to_string(), cache_dir.to_path_buf());
    let stopped = stop.clone();
    tokio::spawn(async move {
        let Some(runs) = TestRuns::new(&g, &rec, &cancel) else {
            return;
        };
        let base = Base {
            tree: &tree,
            cache_dir: &cache_dir,
        };
        base_side(&runs, &place, &base, &stopped).await;
    });
    stop
}

/// Stop the base's side (`stop`) when the own run `ran` of a guardrail
/// (`required` or not) settles the report.
pub(super) fn stop_if_settled(stop: &AtomicBool, required: bool, ran: &Result<Whole, Error>) {
    if own_settles(required, ran) {
        stop.store(true, Ordering::SeqCst);
    }
}

/// Whether the own run `ran` of a guardrail (`required` or not) settles
/// the report, so the base's side need not go on.
fn own_settles(required: bool, ran: &Result<Whole, Error>) -> bool {
    let passed = ran.as_ref().is_ok_and(|w| w.outcome.exit.success());
    settles(required, passed, full_report())
}

/// The base's listing, own run and release run, each kept per base tree
/// (errors are left for the step that asks to report).
async fn base_side(runs: &TestRuns<'_>, place: &Place, base: &Base<'_>, stop: &AtomicBool) {
    let Ok(listing) = base_listing(runs, place, base.tree, base.cache_dir).await else {
        return;
    };
    if stop.load(Ordering::SeqCst) {
        return;
    }
    let _ = base_run(runs, place, base.tree, base.cache_dir, &listing).await;
    if stop.load(Ordering::SeqCst) {
        return;
    }
    shipped::base_release(runs, place, &listing, base).await;
}

/// The base's steps on the change, or the line that says why they did not
/// run.
pub(super) async fn base_steps(
    at: &AtBase<'_>,
    mut r: Report,
    s: &mut Ledger,
    own_passed: bool,
    (now, results, added): (&ledger::Listing, &ledger::Results, &[String]),
) -> Report {
    if settled(&r, own_passed, full_report()) {
        r.output = with_evidence(&r.output, NOT_RUN);
        r.issues
            .push(Issue::new(RULE_STOPPED_EARLY, Severity::Info, NOT_RUN));
        return r;
    }
    at.runs.clock.step("base tests");
    let base =
        test_evidence::base_tests(at.runs, at.place, at.changes, at.allow, at.listing, results)
            .await;
    r = merge_base_tests(r, s, base);
    r = in_release_profile(at, r, s).await;
    new_tests_at_base(at, r, s, (now, results, added)).await
}

/// The same tests where the project ships: cargo's release profile
/// (when they all passed here: else the change fails already).
async fn in_release_profile(
    at: &AtBase<'_>,
    r: Report,
    s: &mut rascal_core::model::ledger::Ledger,
) -> Report {
    if !s
        .base_tests
        .as_ref()
        .is_some_and(|b| b.not_passing.is_empty())
    {
        return r;
    }
    let base = shipped::Base {
        tree: at.tree,
        cache_dir: at.cache_dir,
    };
    let failing = async { at.run().await.map(|b| b.failed) };
    let updated = s
        .base_tests
        .as_ref()
        .map(|b| b.updated.clone())
        .unwrap_or_default();
    at.runs.clock.step("release profile");
    let release = shipped::release_profile(
        at.runs,
        (at.place, at.changes, at.allow),
        at.listing,
        &base,
        failing,
        &updated,
    );
    merge_shipped(r, s, Box::pin(release).await)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rascal_core::model::verdict::Layer;

    fn report(required: bool) -> Report {
        let mut r = Report::new(Layer::Guardrails, "tests");
        r.required = required;
        r
    }

    #[test]
    fn only_a_failed_own_run_of_a_required_check_settles_it() {
        assert!(settled(&report(true), false, false));
        // A passing run: the base's evidence can still fail it.
        assert!(!settled(&report(true), true, false));
        // An optional check only warns: the base's evidence is its report.
        assert!(!settled(&report(false), false, false));
        // Asked for everything.
        assert!(!settled(&report(true), false, true));
    }

    #[test]
    fn the_base_side_stops_once_a_required_own_run_failed() {
        let ran = |code: i32| -> Result<Whole, Error> {
            let exit = rascal_exec::exec::runner::Exit {
                code: Some(code),
                ..Default::default()
            };
            Ok(Whole {
                outcome: rascal_exec::exec::runner::Outcome {
                    exit,
                    tail: String::new(),
                    rewritten: Vec::new(),
                },
                text: String::new(),
                files: Vec::new(),
            })
        };
        assert!(own_settles(true, &ran(101)));
        assert!(own_settles(true, &Err(Error::Verification("no".into()))));
        assert!(!own_settles(true, &ran(0)));
        assert!(!own_settles(false, &ran(101)));
    }
}
