//! What the agreement matrix says about each candidate (execution
//! agreement, after CodeT's dual agreement): candidates that never
//! disagree on a test (one passes it, the other fails it) form a group;
//! a candidate's score is its group's size times the tests the group
//! passes, each author's tests together weighing one whatever their
//! number — writing many tests buys nothing, and a wrong candidate's own
//! tests of its wrong behaviour weigh no more than one right candidate's.
//! A candidate that fails a test most others pass disagrees: a finding.
//! Pure.

use crate::model::agreement::{Agreement, Cell, CrossTest};
use std::collections::BTreeMap;

/// One candidate's standing in the matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    /// Group size × the tests its group passes (author-weighted).
    pub score: f64,
    /// The candidates of its group (itself included), in matrix order.
    pub group: Vec<String>,
    /// Tests others wrote: how many it passes, fails, and how many apply.
    pub passes_others: usize,
    pub fails_others: usize,
    pub others: usize,
}

/// A candidate fails a test that fails at the base and that more passing
/// candidates (at least two others) pass than fail.
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
/// member passes it and none fails it; each author's columns together
/// weigh one.
fn weighted_passes(m: &Agreement, group: &[usize]) -> f64 {
    let mut per_author: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (col, t) in m.tests.iter().enumerate() {
        let cells: Vec<Cell> = group.iter().map(|&r| cell(m, r, col)).collect();
        let passes = cells.contains(&Cell::Passed) && !cells.contains(&Cell::Failed);
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
        let score = g.len() as f64 * weighted_passes(m, &g);
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
        if passed.len() < 2 || passed.len() <= failed.len() {
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

/// Whether the top candidate's agreement is contested: a group that
/// disagrees with it is at least as large as its own. Why, when it is.
pub fn contested(m: &Agreement, top: &str) -> Option<String> {
    let gs = groups(m);
    let row = m.candidates.iter().position(|c| c == top)?;
    let mine = gs.iter().find(|g| g.contains(&row))?;
    let rival = gs
        .iter()
        .filter(|g| !g.contains(&row))
        .filter(|g| g.iter().any(|&r| !compatible(m, r, row)))
        .max_by_key(|g| g.len())?;
    (rival.len() >= mine.len()).then(|| {
        let names = |g: &Vec<usize>| {
            g.iter()
                .map(|&r| m.candidates[r].as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!(
            "the candidates disagree on the tests they wrote, and no majority settles it: {} against {}",
            names(mine),
            names(rival)
        )
    })
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
            skipped: None,
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
        assert_eq!(s["many"].score, 4.0, "2 candidates × (1 + 1 author)");
        assert_eq!(s["many"].score, s["few"].score);
        assert_eq!(s["few"].passes_others, 5);
    }

    #[test]
    fn a_wrong_candidate_with_its_own_tests_loses_to_two_agreeing_right_ones() {
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
        assert_eq!(s["right1"].score, 2.0);
        assert_eq!(s["wrong"].score, 1.0);
        assert!(s["right2"].score > s["wrong"].score);
        let d = disagreements(&m);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].candidate, "wrong");
        assert_eq!(d[0].test.name, "r1");
        assert_eq!(d[0].passed_by, vec!["right1", "right2"]);
        assert_eq!(contested(&m, "right1"), None);
        assert!(contested(&m, "wrong").is_some());
    }

    #[test]
    fn two_candidates_that_disagree_tie_and_are_contested() {
        let m = matrix(
            &[("a", "ta"), ("b", "tb")],
            &[("a", vec![P, F]), ("b", vec![F, P])],
        );
        let s = standings(&m);
        assert_eq!(s["a"].score, s["b"].score);
        assert!(disagreements(&m).is_empty(), "one passer is not a majority");
        let why = contested(&m, "a").unwrap();
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
        assert_eq!(contested(&m, "a"), None);
    }
}
