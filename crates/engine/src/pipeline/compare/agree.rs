//! Layer 1's execution agreement, between the gate and the ranking: the
//! candidates that passed the gate test each other (`cross_test`), each
//! gets a `compare` report saying how it fared on the tests the others
//! wrote, a candidate that fails a test another passes gets a
//! `compare/disagrees` warning (never a FAIL: the tests are the
//! candidates' own, and heads never count), and the comparator ranks on
//! the standings. A pick that another passing candidate disagrees with is
//! no pick unless held-out tests break the tie: the run is CONTESTED.

use crate::layers::agreement::{self, Disagreement};
use crate::layers::compare::{Contender, RULE_DISAGREES, TEST_INTEGRITY};
use crate::pipeline::candidate::CandidateOutcome;
use crate::pipeline::compare::cross_test::{cross_test, Crossing, DEFAULT_BOUND};
use crate::pipeline::journal::Journal;
use rascal_core::config::Config;
use rascal_core::model::agreement::Agreement;
use rascal_core::model::event::RunEvent;
use rascal_core::model::ranking::Ranking;
use rascal_core::model::verdict::{
    candidate_verdict, Issue, Layer, Report, Severity, Status, Verdict,
};
use tokio_util::sync::CancellationToken;

/// The name of the compare layer's report on a candidate.
pub const AGREEMENT: &str = "agreement";

/// Passed the gate as the comparator counts it.
fn passed_gate(o: &CandidateOutcome) -> bool {
    o.finished_cleanly
        && matches!(o.verdict, Verdict::Pass | Verdict::Warn)
        && !o
            .reports
            .iter()
            .any(|r| r.check == TEST_INTEGRITY && r.status == Status::Fail)
}

/// Failed the gate, but not on behaviour: it finished cleanly, its test
/// runs passed (the base's own tests pass on its code, read from the
/// runner's results), and no criterion or test-integrity check failed —
/// it touched a forbidden path (a permission or a constraint), or a
/// reviewer, a lint or a size limit failed it. Its code is a witness of
/// what the task's behaviour is: the passing candidates' tests run on it,
/// and its tests on them. A witness is never picked; its disagreeing with
/// the pick makes a question.
fn witness(o: &CandidateOutcome) -> bool {
    let test_runs: Vec<&Report> = o.reports.iter().filter(|r| r.ledger.is_some()).collect();
    let base_tests_pass = test_runs.iter().any(|r| {
        r.ledger
            .as_ref()
            .and_then(|l| l.base_tests.as_ref())
            .is_some_and(|b| b.listed > 0 && b.passed == b.listed && b.not_passing.is_empty())
    });
    o.finished_cleanly
        && !o.escalated
        && !passed_gate(o)
        && o.place.is_some()
        && o.changes.is_some()
        && base_tests_pass
        && test_runs.iter().all(|r| r.status != Status::Fail)
        && !o
            .reports
            .iter()
            .any(|r| r.status == Status::Fail && on_behaviour(r))
}

/// A failed check that judged behaviour: a criterion (a constraint — a
/// path not to touch, a size, a dependency — judges scope, not behaviour),
/// test integrity, or the comparator's (a human's kept answer).
fn on_behaviour(r: &Report) -> bool {
    let constraint =
        !r.issues.is_empty() && r.issues.iter().all(|i| i.rule.starts_with("constraints/"));
    r.check == TEST_INTEGRITY
        || r.layer == Layer::Compare
        || (r.layer == Layer::Criteria && !constraint)
}

/// Cross-test the candidates that passed the gate (with the witnesses —
/// candidates that failed it on something other than behaviour — when
/// only one passed), land each passing one's `agreement` report, and
/// re-finish those a disagreement fails. None when nothing can be agreed
/// on (no candidate passed, or one alone and no witness).
pub(crate) async fn agree(
    config: &Config,
    journal: &Journal,
    results: &mut [CandidateOutcome],
    cancel: &CancellationToken,
) -> Option<Agreement> {
    let passing: Vec<usize> = (0..results.len())
        .filter(|&i| passed_gate(&results[i]) && results[i].place.is_some())
        .filter(|&i| results[i].changes.is_some())
        .collect();
    // Witnesses are asked where the pick would otherwise stand alone (one
    // candidate passed): with two or more, another passing candidate's
    // code already challenges it, and a witness's cross-test runs (builds,
    // for a compiled project) would add cost for little.
    let crossing: Vec<usize> = (0..results.len())
        .filter(|i| passing.contains(i) || (passing.len() == 1 && witness(&results[*i])))
        .collect();
    if passing.is_empty() || crossing.len() < 2 || cancel.is_cancelled() {
        return None;
    }
    let bound = config.main.compare.cross_tests.unwrap_or(DEFAULT_BOUND);
    let started = std::time::Instant::now();
    let mut m = {
        let crossings: Vec<Crossing<'_>> = crossing
            .iter()
            .map(|&i| {
                let o = &results[i];
                Crossing {
                    id: &o.id,
                    place: o.place.as_ref().expect("filtered"),
                    changes: o.changes.as_ref().expect("filtered"),
                    reports: &o.reports,
                }
            })
            .collect();
        cross_test(config, &crossings, bound, cancel).await
    };
    // One cross-testing judges every candidate: each report carries its time.
    let took_ms = started.elapsed().as_millis() as u64;
    m.witnesses = crossing
        .iter()
        .filter(|i| !passing.contains(i))
        .map(|&i| results[i].id.clone())
        .collect();
    if m.tests.is_empty() {
        // Nothing to cross-test: the matrix (and why) is on the ranking,
        // and no candidate gets a report that says nothing.
        return Some(m);
    }
    let standings = agreement::standings(&m);
    let found = agreement::disagreements(&m);
    let severity = Severity::Warning;
    for &i in &passing {
        let o = &mut results[i];
        let Some(s) = standings.get(&o.id) else {
            continue;
        };
        let mine: Vec<&Disagreement> = found.iter().filter(|d| d.candidate == o.id).collect();
        let mut r = report(&o.id, &m, s, &mine, severity);
        r.duration_ms = took_ms;
        land(journal, o, r);
    }
    Some(m)
}

/// Land a report that comes after the candidate's own checks (the
/// comparator's), and finish the candidate again when it changes its
/// verdict.
pub(crate) fn land(journal: &Journal, o: &mut CandidateOutcome, r: Report) {
    journal.emit(RunEvent::ReportLanded {
        candidate: o.id.clone(),
        report: Box::new(r.clone()),
    });
    o.reports.push(r);
    let verdict = candidate_verdict(&o.reports);
    if verdict == o.verdict {
        return;
    }
    o.verdict = verdict;
    let (files, lines, tree) = o.changes.as_ref().map_or((0, 0, None), |c| {
        (
            c.files.len(),
            c.lines_changed(),
            Some(c.tree.clone()).filter(|t| !t.is_empty()),
        )
    });
    journal.emit(RunEvent::CandidateFinished {
        candidate: o.id.clone(),
        verdict,
        reason: crate::pipeline::first_failure(&o.reports),
        files,
        lines,
        tree,
        cancelled: false,
    });
}

/// The `agreement` report of one candidate: how it fared on the tests the
/// others wrote, and its disagreements.
fn report(
    id: &str,
    m: &Agreement,
    s: &agreement::Standing,
    mine: &[&Disagreement],
    severity: Severity,
) -> Report {
    let mut r = Report::new(Layer::Compare, AGREEMENT)
        .input("matrix", serde_json::to_vec(m).unwrap_or_default());
    r.required = true;
    r.output = if let Some(why) = &m.skipped {
        format!("cross-testing: {why}")
    } else if s.others == 0 {
        "no test another candidate wrote applies to this change".into()
    } else {
        let others: Vec<&str> = s
            .group
            .iter()
            .filter(|g| g.as_str() != id)
            .map(String::as_str)
            .collect();
        let separating = agreement::separating(m);
        format!(
            "passes {}/{} tests others wrote (agreement score {:.2}; agrees with {}){}",
            s.passes_others,
            s.others,
            s.score,
            if others.is_empty() {
                "no other candidate".to_string()
            } else {
                others.join(", ")
            },
            if separating == 0 {
                " — no test separates any two candidates: this agreement shows nothing about which is right"
            } else {
                ""
            }
        )
    };
    if m.reused > 0 {
        r.output.push_str(&format!(
            "\n{} of {} cross-test runs reused: the same code, tests and configuration were cross-tested before (RASCAL_FRESH=1 runs them again)",
            m.reused, m.runs
        ));
    }
    for d in mine {
        r.issues.push(Issue::new(
            RULE_DISAGREES,
            severity,
            format!(
                "fails `{}` (written by {}), which fails at the base and passes on {}",
                d.test.name,
                d.test.author,
                d.passed_by.join(", ")
            ),
        ));
    }
    r.finish()
}

/// The contenders' standings in `m`.
pub(crate) fn with_standings(contenders: &mut [Contender], m: &Agreement) {
    let standings = agreement::standings(m);
    for c in contenders {
        c.agreement = standings.get(&c.id).cloned();
    }
}

/// The ranking with the matrix, and no pick when the pick's agreement is
/// contested (`compare.on_disagreement`) and no held-out test breaks the
/// tie. `sources`: each combined candidate's sources (`rascal combine`).
pub(crate) fn settle(
    ranking: &mut Ranking,
    m: Agreement,
    contenders: &[Contender],
    on_disagreement: rascal_core::config::compare::OnDisagreement,
    sources: &std::collections::BTreeMap<String, Vec<String>>,
) {
    use rascal_core::config::compare::OnDisagreement;
    let strict = on_disagreement == OnDisagreement::Contest;
    if let Some(pick) = ranking.pick.clone() {
        let holdout = |id: &str| {
            contenders
                .iter()
                .find(|c| c.id == id)
                .map_or(0, |c| c.holdout_passed)
        };
        // Held-out tests break the tie when the pick passes more of them
        // than every other candidate whose code is asked (passing ones and
        // witnesses); with no other, there is no tie to break.
        let others: Vec<&str> = ranking
            .positions
            .iter()
            .filter(|p| p.candidate != pick && p.verdict != Verdict::Fail)
            .map(|p| p.candidate.as_str())
            .chain(m.witnesses.iter().map(String::as_str))
            .collect();
        let broken_by_holdout =
            !others.is_empty() && others.iter().all(|o| holdout(o) < holdout(&pick));
        if let Some(why) = agreement::contested(
            &m,
            &pick,
            strict,
            sources.get(&pick).map_or(&[][..], Vec::as_slice),
        )
        .filter(|_| !broken_by_holdout)
        {
            ranking.pick = None;
            ranking.contested = Some(why);
        }
    }
    ranking.agreement = Some(m);
}

/// With a pick: the other passing candidates (and witnesses: candidates
/// that failed the gate on something other than behaviour) whose code
/// differs from the pick's and that no test separates from it (none fails
/// a test the other passes) — said in every view, so a coin flip never
/// reads as a finding, and probed by the discriminator where there is one.
pub(crate) fn unseparated(ranking: &mut Ranking, contenders: &[Contender]) {
    let Some(pick) = ranking.pick.clone() else {
        return;
    };
    let tree = |id: &str| {
        contenders
            .iter()
            .find(|c| c.id == id)
            .map(|c| c.changes.tree.clone())
    };
    let separated = |other: &str| {
        ranking
            .agreement
            .as_ref()
            .is_some_and(|m| agreement::separated(m, &pick, other))
    };
    let mine = tree(&pick);
    let witness = |id: &str| {
        ranking
            .agreement
            .as_ref()
            .is_some_and(|m| m.witnesses.iter().any(|w| w == id))
    };
    ranking.unseparated = ranking
        .positions
        .iter()
        .filter(|p| p.candidate != pick && (p.verdict != Verdict::Fail || witness(&p.candidate)))
        .filter(|p| tree(&p.candidate) != mine)
        .filter(|p| !separated(&p.candidate))
        .map(|p| p.candidate.clone())
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use rascal_core::model::ledger::{BaseTests, Ledger};
    use rascal_core::model::verdict::Issue;

    /// A finished candidate whose test guardrail ran the base's tests on
    /// its code (`base`: listed, passed) and ended `tests`, with `more`.
    fn outcome(base: (usize, usize), tests: Status, more: Vec<Report>) -> CandidateOutcome {
        let mut t = Report::new(Layer::Guardrails, "tests");
        t.ledger = Some(Box::new(Ledger {
            base_tests: Some(BaseTests {
                listed: base.0,
                passed: base.1,
                ..Default::default()
            }),
            ..Default::default()
        }));
        if tests == Status::Fail {
            t.issues.push(Issue::new(
                "test-run/forged",
                Severity::Error,
                "a mutated copy of a test passed",
            ));
        }
        let mut reports = vec![t.finish()];
        reports.extend(more);
        let verdict = candidate_verdict(&reports);
        CandidateOutcome {
            id: "c".into(),
            attempt: 1,
            verdict,
            escalated: false,
            finished_cleanly: true,
            reports,
            changes: Some(Default::default()),
            usage: None,
            place: Some(rascal_exec::exec::place::Place::InPlace {
                origin: "/tmp".into(),
            }),
        }
    }

    fn failed(layer: Layer, check: &str, rule: &str) -> Report {
        let mut r = Report::new(layer, check);
        r.issues.push(Issue::new(rule, Severity::Error, "x"));
        r.finish()
    }

    /// Who is a witness is read from rascal's own reports of the candidate:
    /// only a candidate whose code passes the base's tests in a clean run
    /// and that failed on scope (a permission, a constraint, a lint, a
    /// review) is asked. One whose results were forged, whose code fails
    /// a base test, a criterion or a human's kept answer, or that weakened
    /// tests, says nothing about behaviour.
    #[test]
    fn only_a_candidate_that_failed_on_scope_alone_is_a_witness() {
        let scope = || {
            failed(
                Layer::Criteria,
                "leave other.py alone",
                "constraints/no-touch-files",
            )
        };
        let cases: Vec<(&str, CandidateOutcome, bool)> = vec![
            (
                "a constraint",
                outcome((3, 3), Status::Pass, vec![scope()]),
                true,
            ),
            (
                "a permission",
                outcome(
                    (3, 3),
                    Status::Pass,
                    vec![failed(
                        Layer::Permissions,
                        "permissions",
                        "permissions/denied-path",
                    )],
                ),
                true,
            ),
            ("it passed", outcome((3, 3), Status::Pass, vec![]), false),
            (
                "forged results",
                outcome((3, 3), Status::Fail, vec![scope()]),
                false,
            ),
            (
                "a base test fails",
                outcome((3, 2), Status::Pass, vec![scope()]),
                false,
            ),
            (
                "no base test ran",
                outcome((0, 0), Status::Pass, vec![scope()]),
                false,
            ),
            (
                "a criterion",
                outcome(
                    (3, 3),
                    Status::Pass,
                    vec![failed(Layer::Criteria, "t", "criteria/test")],
                ),
                false,
            ),
            (
                "a kept answer",
                outcome(
                    (3, 3),
                    Status::Pass,
                    vec![failed(
                        Layer::Compare,
                        "answers",
                        "compare/answered-otherwise",
                    )],
                ),
                false,
            ),
            (
                "weakened tests",
                outcome(
                    (3, 3),
                    Status::Pass,
                    vec![
                        scope(),
                        failed(
                            Layer::Guardrails,
                            TEST_INTEGRITY,
                            "test-integrity/removed-test",
                        ),
                    ],
                ),
                false,
            ),
        ];
        for (what, o, want) in cases {
            assert_eq!(witness(&o), want, "{what}");
        }
    }
}
