//! Cross-testing: after the gate, each passing candidate's new tests that
//! fail at the base (its test guardrail's evidence) run against every
//! other passing candidate's code, in a fresh sandboxed copy of that
//! candidate's checks with the tests laid in (`base_defined::tests_on_other`:
//! test files whole, Rust test modules into the same source file). A test
//! that does not build against the other code, or has no result, is not
//! applicable there, never a failure. Authors whose tests touch different
//! files share one run per candidate; bounded by `compare.cross_tests`
//! runs per run.

use crate::config::{Config, Guardrail, GuardrailKind};
use crate::exec::place::Place;
use crate::layers::ledger::{self, Listing, Recognised};
use crate::model::agreement::{Agreement, Cell, CrossTest};
use crate::model::changeset::ChangeSet;
use crate::model::verdict::Report;
use crate::pipeline::test_evidence::TestRuns;
use tokio_util::sync::CancellationToken;

/// Default bound on cross-test runs per run (`compare.cross_tests`).
pub const DEFAULT_BOUND: usize = 200;

/// A candidate that passed the gate, as cross-testing needs it.
pub struct Crossing<'a> {
    pub id: &'a str,
    pub place: &'a Place,
    pub changes: &'a ChangeSet,
    pub reports: &'a [Report],
}

/// The test guardrail cross-testing runs, and its runner.
fn test_guardrail(
    config: &Config,
    origin: &std::path::Path,
    base: &str,
) -> Option<(Guardrail, Recognised)> {
    let package_json = crate::pipeline::sequence::base_package_json(origin, base);
    config
        .guardrails
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .filter(|g| crate::pipeline::test_run::is_test_guardrail(g, package_json.as_deref()))
        .find_map(|g| match &g.kind {
            GuardrailKind::Command { command, .. } => {
                ledger::recognise(command, package_json.as_deref()).map(|r| (g.clone(), r))
            }
            _ => None,
        })
}

/// The tests `c` wrote that fail at the base and pass on its code, from
/// its report of guardrail `g`.
fn proving(c: &Crossing<'_>, g: &Guardrail) -> Vec<String> {
    c.reports
        .iter()
        .filter(|r| r.check == g.name)
        .filter_map(|r| r.ledger.as_ref()?.new_tests.as_ref())
        .flat_map(|n| n.proving_names.clone())
        .collect()
}

/// One test's cell in a batch: its author (an index into the candidates),
/// its name, and how it fared.
type Outcome = (usize, String, Cell);

/// One run of cross-testing: on `target`'s code, the tests of `authors`
/// (indices into the candidates), whose paths do not overlap.
struct Batch {
    target: usize,
    authors: Vec<usize>,
}

/// Group the authors (other than `target`) whose tests touch disjoint
/// paths, so each group is one run.
fn batches(target: usize, authors: &[(usize, Vec<String>)]) -> Vec<Batch> {
    let mut out: Vec<(Batch, Vec<String>)> = Vec::new();
    for (a, paths) in authors.iter().filter(|(a, _)| *a != target) {
        match out
            .iter_mut()
            .find(|(_, taken)| !paths.iter().any(|p| taken.contains(p)))
        {
            Some((b, taken)) => {
                b.authors.push(*a);
                taken.extend(paths.iter().cloned());
            }
            None => out.push((
                Batch {
                    target,
                    authors: vec![*a],
                },
                paths.clone(),
            )),
        }
    }
    out.into_iter().map(|(b, _)| b).collect()
}

/// The agreement matrix of `candidates` (those that passed the gate).
pub async fn cross_test(
    config: &Config,
    candidates: &[Crossing<'_>],
    bound: usize,
    cancel: &CancellationToken,
) -> Agreement {
    let mut m = Agreement {
        candidates: candidates.iter().map(|c| c.id.to_string()).collect(),
        ..Agreement::default()
    };
    let Some(first) = candidates.first() else {
        return m;
    };
    let Some((g, rec)) = test_guardrail(config, first.place.origin(), &first.changes.base) else {
        m.skipped = Some("no test guardrail whose runner rascal reads".into());
        return m;
    };
    let names: Vec<Vec<String>> = candidates.iter().map(|c| proving(c, &g)).collect();
    for (c, ns) in candidates.iter().zip(&names) {
        m.tests.extend(ns.iter().map(|n| CrossTest {
            author: c.id.to_string(),
            name: n.clone(),
        }));
    }
    // The author's own tests pass on its code (that is what proving means).
    m.cells = candidates
        .iter()
        .map(|c| {
            m.tests
                .iter()
                .map(|t| {
                    if t.author == c.id {
                        Cell::Passed
                    } else {
                        Cell::NotApplicable
                    }
                })
                .collect()
        })
        .collect();
    if m.tests.is_empty() || candidates.len() < 2 {
        return m;
    }
    let files = |i: usize| -> Vec<String> {
        ledger::test_files(
            rec.runner,
            &Listing {
                tests: names[i].clone(),
                complete: true,
                files_only: false,
            },
        )
    };
    let authors: Vec<(usize, Vec<String>)> = (0..candidates.len())
        .filter(|&i| !names[i].is_empty())
        .map(|i| {
            let c = &candidates[i];
            (
                i,
                crate::pipeline::base_defined::test_paths(c.place, c.changes, &files(i)),
            )
        })
        .collect();
    let plan: Vec<Batch> = (0..candidates.len())
        .flat_map(|t| batches(t, &authors))
        .collect();
    if plan.len() > bound {
        m.skipped = Some(format!(
            "not run: {} test runs needed, over `compare.cross_tests: {bound}`",
            plan.len()
        ));
        return m;
    }
    let Some(runs) = TestRuns::new(&g, &rec, cancel) else {
        return m;
    };
    let listed: Vec<Vec<String>> = (0..candidates.len()).map(files).collect();
    // Targets in parallel; one target's batches one after the other, as
    // they share its build cache.
    let per_target = (0..candidates.len()).map(|t| {
        let mine: Vec<&Batch> = plan.iter().filter(|b| b.target == t).collect();
        let (names, listed, runs) = (&names, &listed, &runs);
        async move {
            let mut out = Vec::new();
            for b in mine {
                out.push((
                    b.target,
                    run_batch(b, candidates, names, listed, runs).await,
                ));
            }
            out
        }
    });
    let outcomes: Vec<(usize, Vec<Outcome>)> = futures::future::join_all(per_target)
        .await
        .into_iter()
        .flatten()
        .collect();
    m.runs = plan.len();
    for (target, cells) in outcomes {
        for (name_author, name, cell) in cells {
            if let Some(col) = m
                .tests
                .iter()
                .position(|t| t.author == candidates[name_author].id && t.name == name)
            {
                m.cells[target][col] = cell;
            }
        }
    }
    m
}

/// One batch's run: each author's test with its cell on the target's
/// code. A run that could not be made leaves its tests not applicable.
async fn run_batch(
    b: &Batch,
    candidates: &[Crossing<'_>],
    names: &[Vec<String>],
    listed: &[Vec<String>],
    runs: &TestRuns<'_>,
) -> Vec<Outcome> {
    let target = &candidates[b.target];
    let authors: Vec<(&Place, &ChangeSet, &[String])> = b
        .authors
        .iter()
        .map(|&a| {
            (
                candidates[a].place,
                candidates[a].changes,
                listed[a].as_slice(),
            )
        })
        .collect();
    let wanted: Vec<String> = b.authors.iter().flat_map(|&a| names[a].clone()).collect();
    let these = Listing {
        tests: wanted.clone(),
        complete: true,
        files_only: false,
    };
    let results = match crate::pipeline::base_defined::tests_on_other(
        &authors,
        (target.place, target.changes),
    ) {
        Ok(laid) => match runs.run(&laid).await {
            Ok(run) if run.outcome.exit.problem(runs.timeout).is_none() => {
                Some(runs.results(&run, &these))
            }
            _ => None,
        },
        Err(_) => None,
    };
    let judged = results
        .as_ref()
        .map(|r| ledger::judge(runs.rec.runner, &these, r));
    b.authors
        .iter()
        .flat_map(|&a| names[a].iter().map(move |n| (a, n.clone())))
        .map(|(a, n)| {
            let cell = match &judged {
                Some(j) if j.failed.contains(&n) => Cell::Failed,
                Some(j) if j.not_run.contains(&n) || j.ignored.contains(&n) => Cell::NotApplicable,
                Some(_) => Cell::Passed,
                None => Cell::NotApplicable,
            };
            (a, n, cell)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authors_whose_tests_touch_different_files_share_a_run() {
        let authors = vec![
            (0, vec!["src/lib.rs".to_string()]),
            (1, vec!["tests/a.rs".to_string()]),
            (2, vec!["src/lib.rs".to_string()]),
        ];
        let b = batches(3, &authors);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].authors, vec![0, 1]);
        assert_eq!(b[1].authors, vec![2]);
        // A candidate's own tests are never laid over its own code.
        let b = batches(0, &authors);
        assert_eq!(
            b.iter().map(|b| b.authors.clone()).collect::<Vec<_>>(),
            vec![vec![1, 2]]
        );
    }
}
