//! What the agreement matrix says about each candidate (execution
//! agreement, after CodeT's dual agreement, without its vote): candidates
//! that never disagree on a test (one passes it, the other fails it) form
//! a group; a candidate's score is the evidence its group passes, each
//! author's tests together weighing one whatever their number — writing
//! many tests buys nothing, and neither does being many: heads never
//! count. A candidate that fails a test another passes disagrees: a
//! finding (a warning — the tests are the candidates' own, not evidence
//! rascal trusts), and a pick that any passing candidate disagrees with is
//! contested. Pure.

use rascal_core::model::agreement::{Agreement, Cell, CrossTest};
use std::collections::BTreeMap;

/// One candidate's standing in the matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    /// The tests its group passes, author-weighted (never its size).
    pub score: f64,
    /// The candidates of its group (itself included), in matrix order.
    pub group: Vec<String>,
    /// Tests others wrote: how many it passes, fails, and how many apply.
    pub passes_others: usize,
    pub fails_others: usize,
    pub others: usize,
}

/// A candidate fails a test that fails at the base and that another
/// passing candidate passes.
#[derive(Debug, Clone, PartialEq)]
pub struct Disagreement {
    pub candidate: String,
    pub test: CrossTest,
    pub passed_by: Vec<String>,
}

/// Whether rows `a` and `b` never disagree: no test one passes and the
/// other fails.
fn compatible(m: &Agreement, a: usize, b: usize) -> bool {
    (0..m.tests.len()).all(|col| {
        let (x, y) = (cell(m, a, col), cell(m, b, col));
        !matches!(
            (x, y),
            (Cell::Passed, Cell::Failed) | (Cell::Failed, Cell::Passed)
        )
    })
}

/// Whether some test separates candidates `a` and `b`: one passes it, the
/// other fails it.
pub fn separated(m: &Agreement, a: &str, b: &str) -> bool {
    let row = |id: &str| m.candidates.iter().position(|c| c == id);
    match (row(a), row(b)) {
        (Some(x), Some(y)) => !compatible(m, x, y),
        _ => false,
    }
}

/// How many tests separate some two candidates (one passes it, another
/// fails it): a test every candidate passes (or fails) tells nobody apart
/// and is no evidence for a pick.
pub fn separating(m: &Agreement) -> usize {
    (0..m.tests.len())
        .filter(|&col| {
            let cells: Vec<Cell> = (0..m.candidates.len()).map(|r| cell(m, r, col)).collect();
            cells.contains(&Cell::Passed) && cells.contains(&Cell::Failed)
        })
        .count()
}

/// The cell of row `row` on test `col`; a matrix cut short (cross-testing
/// skipped) leaves it not applicable.
fn cell(m: &Agreement, row: usize, col: usize) -> Cell {
    m.cells
        .get(row)
        .and_then(|r| r.get(col))
        .copied()
        .unwrap_or(Cell::NotApplicable)
}

/// The groups of rows: each row joins the first group it agrees with in
/// full, else starts one (matrix order, so the result is stable).
fn groups(m: &Agreement) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for row in 0..m.candidates.len() {
        match out
            .iter_mut()
            .find(|g| g.iter().all(|&other| compatible(m, row, other)))
        {
            Some(g) => g.push(row),
            None => out.push(vec![row]),
        }
    }
    out
}

/// The tests `group` passes, author-weighted: a column counts when a
/// member passes it and none fails it, and it says something about a
/// candidate outside the group (a test that applies to nobody else — it
/// leans on what only the group added — outweighs no one); each author's
/// columns together weigh one.
fn weighted_passes(m: &Agreement, group: &[usize]) -> f64 {
    let mut per_author: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let outside: Vec<usize> = (0..m.candidates.len())
        .filter(|r| !group.contains(r))
        .collect();
    for (col, t) in m.tests.iter().enumerate() {
        let cells: Vec<Cell> = group.iter().map(|&r| cell(m, r, col)).collect();
        let speaks = outside.is_empty()
            || outside
                .iter()
                .any(|&r| cell(m, r, col) != Cell::NotApplicable);
        let passes = speaks && cells.contains(&Cell::Passed) && !cells.contains(&Cell::Failed);
        let e = per_author.entry(&t.author).or_default();
        e.1 += 1;
        if passes {
            e.0 += 1;
        }
    }
    per_author
        .values()
        .map(|(passed, all)| *passed as f64 / *all as f64)
        .sum()
}

/// Each candidate's standing.
pub fn standings(m: &Agreement) -> BTreeMap<String, Standing> {
    let mut out = BTreeMap::new();
    for g in groups(m) {
        let score = weighted_passes(m, &g);
        for &row in &g {
            let id = &m.candidates[row];
            let theirs: Vec<Cell> = m
                .tests
                .iter()
                .enumerate()
                .filter(|(_, t)| &t.author != id)
                .map(|(col, _)| cell(m, row, col))
                .collect();
            out.insert(
                id.clone(),
                Standing {
                    score: (score * 100.0).round() / 100.0,
                    group: g.iter().map(|&r| m.candidates[r].clone()).collect(),
                    passes_others: theirs.iter().filter(|c| **c == Cell::Passed).count(),
                    fails_others: theirs.iter().filter(|c| **c == Cell::Failed).count(),
                    others: theirs.iter().filter(|c| **c != Cell::NotApplicable).count(),
                },
            );
        }
    }
    out
}

/// Every disagreement in the matrix.
pub fn disagreements(m: &Agreement) -> Vec<Disagreement> {
    let mut out = Vec::new();
    for (col, t) in m.tests.iter().enumerate() {
        let with = |wanted: Cell| -> Vec<usize> {
            (0..m.candidates.len())
                .filter(|&r| cell(m, r, col) == wanted)
                .collect()
        };
        let (passed, failed) = (with(Cell::Passed), with(Cell::Failed));
        if passed.is_empty() {
            continue;
        }
        for &r in &failed {
            out.push(Disagreement {
                candidate: m.candidates[r].clone(),
                test: t.clone(),
                passed_by: passed.iter().map(|&p| m.candidates[p].clone()).collect(),
            });
        }
    }
    out
}

/// Whether the top candidate's agreement is contested, and why. `strict`
/// (`compare.on_disagreement: contest`, the default): any candidate that
/// disagrees with it contests it, however many agree; otherwise only a
/// disagreeing group whose evidence weighs at least as much as its own.
/// `sources`: the candidates the top one was combined from (`rascal
/// combine`, which a human asked for); one of them whose every test the
/// top one passes does not contest it.
pub fn contested(m: &Agreement, top: &str, strict: bool, sources: &[String]) -> Option<String> {
    let gs = groups(m);
    let row = m.candidates.iter().position(|c| c == top)?;
    let mine = gs.iter().find(|g| g.contains(&row))?;
    let passes_all_of = |author: &str| {
        m.tests
            .iter()
            .enumerate()
            .filter(|(_, t)| t.author == author)
            .all(|(col, _)| cell(m, row, col) != Cell::Failed)
    };
    let against: Vec<usize> = (0..m.candidates.len())
        .filter(|&r| !compatible(m, r, row))
        .filter(|&r| {
            let id = &m.candidates[r];
            !(sources.contains(id) && passes_all_of(id))
        })
        .collect();
    let rival = gs
        .iter()
        .filter(|g| g.iter().any(|r| against.contains(r)))
        .max_by(|a, b| weighted_passes(m, a).total_cmp(&weighted_passes(m, b)))?;
    let settled = !strict && weighted_passes(m, rival) < weighted_passes(m, mine);
    if settled {
        return None;
    }
    let names = |g: &[usize]| {
        g.iter()
            .map(|&r| m.candidates[r].as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (col, t) = m.tests.iter().enumerate().find(|&(col, _)| {
        let (x, y) = (cell(m, row, col), cell(m, against[0], col));
        matches!(
            (x, y),
            (Cell::Passed, Cell::Failed) | (Cell::Failed, Cell::Passed)
        )
    })?;
    let on = |wanted: Cell| -> Vec<usize> {
        (0..m.candidates.len())
            .filter(|&r| cell(m, r, col) == wanted)
            .collect()
    };
    // A witness (it failed the gate on something other than behaviour) is
    // said to be one: its code is asked, it is never the pick.
    let witnessed = |g: &[usize]| {
        g.iter()
            .map(|&r| {
                let id = m.candidates[r].as_str();
                if m.witnesses.iter().any(|w| w == id) {
                    format!("{id} (failed the gate on other checks; its code is asked)")
                } else {
                    id.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    Some(format!(
        "the candidates disagree on the tests they wrote, and nothing rascal trusts settles it: {} against {} (`{}` by {} passes on {} and fails on {})",
        names(mine),
        witnessed(&against),
        t.name,
        t.author,
        names(&on(Cell::Passed)),
        names(&on(Cell::Failed)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Cell::{Failed as F, NotApplicable as N, Passed as P};

    /// A matrix of `rows` (candidate, cells) over `tests` (author, name).
    fn matrix(tests: &[(&str, &str)], rows: &[(&str, Vec<Cell>)]) -> Agreement {
        Agreement {
            candidates: rows.iter().map(|(c, _)| c.to_string()).collect(),
            tests: tests
                .iter()
                .map(|(a, n)| CrossTest {
                    author: a.to_string(),
                    name: n.to_string(),
                })
                .collect(),
            cells: rows.iter().map(|(_, c)| c.clone()).collect(),
            runs: 0,
            reused: 0,
            skipped: None,
            notes: Vec::new(),
            sources: Vec::new(),
            witnesses: Vec::new(),
        }
    }

    #[test]
    fn many_tests_by_one_author_weigh_as_one_author() {
        // `many` wrote five tests, `few` one; both right, they agree.
        let m = matrix(
            &[
                ("many", "a"),
                ("many", "b"),
                ("many", "c"),
                ("many", "d"),
                ("many", "e"),
                ("few", "f"),
            ],
            &[
                ("many", vec![P, P, P, P, P, P]),
                ("few", vec![P, P, P, P, P, P]),
            ],
        );
        let s = standings(&m);
        assert_eq!(s["many"].score, 2.0, "1 + 1 author, however many agree");
        assert_eq!(s["many"].score, s["few"].score);
        assert_eq!(s["few"].passes_others, 5);
    }

    #[test]
    fn two_agreeing_right_candidates_do_not_outvote_a_wrong_one_by_heads() {
        // right1 wrote r1, r2; wrong wrote w1, w2, w3 of its wrong
        // behaviour; right2 wrote nothing and cannot build r2 (a helper
        // only right1 has).
        let m = matrix(
            &[
                ("right1", "r1"),
                ("right1", "r2"),
                ("wrong", "w1"),
                ("wrong", "w2"),
                ("wrong", "w3"),
            ],
            &[
                ("right1", vec![P, P, F, F, F]),
                ("wrong", vec![F, F, P, P, P]),
                ("right2", vec![P, N, F, F, F]),
            ],
        );
        let s = standings(&m);
        assert_eq!(s["right1"].group, vec!["right1", "right2"]);
        assert_eq!(s["right1"].score, 1.0, "one author's tests");
        assert_eq!(
            s["wrong"].score, 1.0,
            "one author's tests: two heads weigh no more"
        );
        let d = disagreements(&m);
        assert_eq!(d.len(), 8, "{d:?}");
        let wrong: Vec<&str> = d
            .iter()
            .filter(|x| x.candidate == "wrong")
            .map(|x| x.test.name.as_str())
            .collect();
        assert_eq!(wrong, vec!["r1", "r2"]);
        assert_eq!(d[0].passed_by, vec!["right1", "right2"]);
        for strict in [true, false] {
            let why = contested(&m, "right1", strict, &[]).expect("contested");
            assert!(why.contains("right1, right2 against wrong"), "{why}");
            assert!(
                why.contains("`r1` by right1 passes on right1, right2 and fails on wrong"),
                "{why}"
            );
            assert!(contested(&m, "wrong", strict, &[]).is_some());
        }
    }

    #[test]
    fn a_disagreement_contests_the_pick_unless_leniency_lets_evidence_settle_it() {
        // wrong wrote no test; right's test fails on it.
        let m = matrix(
            &[("right", "r1")],
            &[("right", vec![P]), ("wrong", vec![F])],
        );
        assert!(
            contested(&m, "right", true, &[]).is_some(),
            "strict: any disagreement"
        );
        assert_eq!(
            contested(&m, "right", false, &[]),
            None,
            "no evidence against right"
        );
        assert!(contested(&m, "wrong", false, &[]).is_some());
        let d = disagreements(&m);
        assert_eq!(d.len(), 1);
        assert_eq!(
            (d[0].candidate.as_str(), d[0].passed_by.clone()),
            ("wrong", vec!["right".to_string()])
        );
    }

    #[test]
    fn tests_only_their_own_group_can_run_outweigh_no_one() {
        // Two colluders, each with a marker test the honest one cannot
        // run ("–"); the honest one's test fails on both of them.
        let m = matrix(
            &[("honest", "h"), ("c1", "m1"), ("c2", "m2")],
            &[
                ("honest", vec![P, N, N]),
                ("c1", vec![F, P, P]),
                ("c2", vec![F, P, P]),
            ],
        );
        let s = standings(&m);
        assert_eq!(s["c1"].group, vec!["c1", "c2"]);
        assert_eq!(s["c1"].score, 0.0, "their markers weigh nothing");
        assert_eq!(s["honest"].score, 1.0);
        assert_eq!(
            contested(&m, "honest", false, &[]),
            None,
            "evidence settles it when lenient"
        );
        assert!(
            contested(&m, "honest", true, &[]).is_some(),
            "never by itself when strict"
        );
        let d = disagreements(&m);
        assert!(d.iter().all(|x| x.candidate != "honest"), "{d:?}");
    }

    #[test]
    fn a_combined_candidate_passing_its_sources_tests_is_not_contested_by_them() {
        // adder and multiplier each fail the other's test; combined passes
        // both. Its sources do not contest it; an outsider still does.
        let m = matrix(
            &[("adder", "a"), ("multiplier", "m"), ("other", "o")],
            &[
                ("adder", vec![P, F, N]),
                ("multiplier", vec![F, P, N]),
                ("combined", vec![P, P, N]),
                ("other", vec![N, N, P]),
            ],
        );
        let sources = ["adder".to_string(), "multiplier".to_string()];
        assert_eq!(contested(&m, "combined", true, &sources), None);
        assert!(contested(&m, "combined", true, &[]).is_some());
        let mut m = m;
        m.cells[2][2] = F;
        m.cells[3] = vec![N, N, P];
        assert!(
            contested(&m, "combined", true, &sources).is_some(),
            "other's test fails on it"
        );
        // A source whose test it fails still contests it.
        m.cells[2] = vec![P, F, N];
        assert!(contested(&m, "combined", true, &["adder".into(), "multiplier".into()]).is_some());
    }

    #[test]
    fn two_candidates_that_disagree_tie_and_are_contested() {
        let m = matrix(
            &[("a", "ta"), ("b", "tb")],
            &[("a", vec![P, F]), ("b", vec![F, P])],
        );
        let s = standings(&m);
        assert_eq!(s["a"].score, s["b"].score);
        assert_eq!(disagreements(&m).len(), 2, "each fails the other's test");
        let why = contested(&m, "a", false, &[]).unwrap();
        assert!(why.contains("a against b"), "{why}");
    }

    #[test]
    fn a_matrix_cut_short_has_every_candidate_in_one_group() {
        let mut m = matrix(&[("a", "t")], &[("a", vec![P]), ("b", vec![F])]);
        m.cells.clear();
        m.skipped = Some("no test guardrail whose runner rascal reads".into());
        let s = standings(&m);
        assert_eq!(s["a"].group, vec!["a", "b"]);
        assert_eq!(s["a"].score, 0.0);
        assert!(disagreements(&m).is_empty());
    }

    #[test]
    fn a_test_that_applies_to_nobody_else_decides_nothing() {
        let m = matrix(&[("a", "t")], &[("a", vec![P]), ("b", vec![N])]);
        let s = standings(&m);
        assert_eq!(s["a"].group, vec!["a", "b"]);
        assert_eq!(s["b"].others, 0);
        assert!(disagreements(&m).is_empty());
        assert_eq!(contested(&m, "a", true, &[]), None);
    }

    #[test]
    fn only_a_test_one_passes_and_the_other_fails_separates_two_candidates() {
        let m = matrix(
            &[("a", "t1"), ("a", "t2")],
            &[("a", vec![P, P]), ("b", vec![F, N]), ("c", vec![P, N])],
        );
        assert!(separated(&m, "a", "b"));
        assert!(separated(&m, "b", "a"));
        assert!(!separated(&m, "a", "c"), "c never fails what a passes");
        assert!(!separated(&m, "a", "nobody"));
        assert_eq!(separating(&m), 1, "t1 separates; t2 tells nobody apart");
        let none = matrix(&[("a", "t")], &[("a", vec![P]), ("b", vec![P])]);
        assert_eq!(separating(&none), 0);
    }

    #[test]
    fn a_witness_against_the_pick_is_named_as_one() {
        let mut m = matrix(
            &[("right", "r1")],
            &[("right", vec![P]), ("wrong", vec![F])],
        );
        m.witnesses = vec!["wrong".into()];
        let why = contested(&m, "right", true, &[]).expect("contested");
        assert!(
            why.contains("against wrong (failed the gate on other checks; its code is asked)"),
            "{why}"
        );
        m.witnesses.clear();
        let why = contested(&m, "right", true, &[]).expect("contested");
        assert!(!why.contains("failed the gate"), "{why}");
    }
}
