//! The agreement matrix of a run: each passing candidate's code against
//! the tests the other passing candidates wrote (those that fail at the
//! base and pass on their author's code), cell by cell — passed, failed,
//! or not applicable (the test does not build against that code, or had
//! no result). Computed by `pipeline::cross_test`, scored by
//! `layers::agreement`, stored on the run's ranking.

use serde::{Deserialize, Serialize};

/// One test of the matrix: who wrote it and its runner's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrossTest {
    pub author: String,
    pub name: String,
}

/// One cell: how a candidate's code fared on a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cell {
    Passed,
    Failed,
    /// The test cannot say anything about this code: it uses a name, a
    /// constant, a message or a file that only its author's change added
    /// (and the base never had), or it could not be laid there.
    NotApplicable,
}

impl Cell {
    /// `✓`, `✗` or `–`.
    pub fn mark(self) -> &'static str {
        match self {
            Cell::Passed => "✓",
            Cell::Failed => "✗",
            Cell::NotApplicable => "–",
        }
    }
}

/// The matrix: rows are candidates, columns tests grouped by author.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Agreement {
    pub candidates: Vec<String>,
    pub tests: Vec<CrossTest>,
    /// `cells[row][column]`.
    pub cells: Vec<Vec<Cell>>,
    /// How many test runs cross-testing took.
    #[serde(default)]
    pub runs: usize,
    /// Of those, how many were not run again: their cells were kept from
    /// a run with exactly the same code, tests and configuration.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reused: usize,
    /// Why cross-testing did not run, or stopped short (over
    /// `compare.cross_tests`, no test guardrail rascal reads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Why a cell is what it is, where the mark alone would mislead: a
    /// failure that is not an assertion (the test did not build, or the
    /// process died), or a test that does not apply.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<CellNote>,
    /// Each author's test files as they were laid on the others (path and
    /// text): what a human's answer to the run's question keeps as a test
    /// for later runs of the task (`pipeline::answers`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<TestSource>,
    /// Rows of candidates that failed the gate on something other than
    /// behaviour (their code passes the base's tests and their test run
    /// is clean; they touched a forbidden path, or a reviewer or a lint
    /// failed them): never picked, but what their code does is asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub witnesses: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One author's test files, as cross-testing laid them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestSource {
    pub author: String,
    /// Path and text of each file, whole (a Rust source with its test
    /// modules: its test modules are what is laid).
    pub files: Vec<(String, String)>,
    /// Per test: the words it uses that only its author's change had (not
    /// the base) — where a later change has none of them, the test says
    /// nothing about it.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub leans_on: std::collections::BTreeMap<String, Vec<String>>,
}

/// What one cell's mark does not say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellNote {
    pub candidate: String,
    /// Index into [`Agreement::tests`].
    pub test: usize,
    pub note: String,
}

impl Agreement {
    /// The cell of `candidate` on test `column`.
    pub fn cell(&self, candidate: &str, column: usize) -> Option<Cell> {
        let row = self.candidates.iter().position(|c| c == candidate)?;
        self.cells.get(row)?.get(column).copied()
    }

    /// The matrix as text: a header of test numbers grouped by author, a
    /// row of marks per candidate, then the numbered tests.
    pub fn render(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(why) = &self.skipped {
            out.push(format!("cross-testing: {why}"));
        }
        if self.tests.is_empty() {
            if self.skipped.is_none() {
                out.push("cross-testing: no candidate wrote a test that fails at the base".into());
            }
            return out;
        }
        let width = self.candidates.iter().map(|c| c.len()).max().unwrap_or(0);
        let mut header = format!("{:width$}  ", "");
        let mut last: Option<&str> = None;
        for (i, t) in self.tests.iter().enumerate() {
            if last.is_some() && last != Some(t.author.as_str()) {
                header.push_str("| ");
            }
            last = Some(&t.author);
            header.push_str(&format!("{:<3}", i + 1));
        }
        out.push(header.trim_end().to_string());
        for (row, c) in self.candidates.iter().enumerate() {
            let mut line = format!("{c:width$}  ");
            let mut last: Option<&str> = None;
            for (i, t) in self.tests.iter().enumerate() {
                if last.is_some() && last != Some(t.author.as_str()) {
                    line.push_str("| ");
                }
                last = Some(&t.author);
                let cell = self.cells[row]
                    .get(i)
                    .copied()
                    .unwrap_or(Cell::NotApplicable);
                line.push_str(&format!("{:<3}", cell.mark()));
            }
            out.push(line.trim_end().to_string());
        }
        for (i, t) in self.tests.iter().enumerate() {
            out.push(format!("{:>3}. {} (by {})", i + 1, t.name, t.author));
            for n in self.notes.iter().filter(|n| n.test == i) {
                out.push(format!("       {}: {}", n.candidate, n.note));
            }
        }
        out
    }
}

impl Agreement {
    /// Whether some test passes on one candidate and fails on another:
    /// there is a question to ask (cheap: no text is made).
    pub fn has_question(&self) -> bool {
        (0..self.tests.len()).any(|col| {
            let on = |c: Cell| self.cells.iter().any(|row| row.get(col) == Some(&c));
            on(Cell::Passed) && on(Cell::Failed)
        })
    }

    /// The question a contested run puts to a human: each test that one
    /// candidate passes and another fails, who wrote it, who is on which
    /// side, and what the failing side's run said — the disagreement as
    /// examples, not as a diff. At most `limit` tests.
    pub fn question(&self, limit: usize) -> Vec<String> {
        let mut out = Vec::new();
        for (col, t) in self.tests.iter().enumerate() {
            let on = |wanted: Cell| -> Vec<&str> {
                self.candidates
                    .iter()
                    .enumerate()
                    .filter(|(r, _)| {
                        self.cells.get(*r).and_then(|row| row.get(col)) == Some(&wanted)
                    })
                    .map(|(_, c)| c.as_str())
                    .collect()
            };
            let (passed, failed) = (on(Cell::Passed), on(Cell::Failed));
            if passed.is_empty() || failed.is_empty() {
                continue;
            }
            if out.len() == limit {
                out.push("…".to_string());
                break;
            }
            let said: Vec<String> = self
                .notes
                .iter()
                .filter(|n| n.test == col && failed.contains(&n.candidate.as_str()))
                .map(|n| format!("{}: {}", n.candidate, n.note))
                .collect();
            out.push(format!(
                "`{}` (by {}): ✓ {} · ✗ {}{}",
                t.name,
                t.author,
                passed.join(", "),
                failed.join(", "),
                if said.is_empty() {
                    String::new()
                } else {
                    format!(" — {}", said.join("; "))
                }
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matrix_renders_marks_grouped_by_author_and_names_each_test() {
        let a = Agreement {
            candidates: vec!["careful".into(), "hasty".into()],
            tests: vec![
                CrossTest {
                    author: "careful".into(),
                    name: "tests::a".into(),
                },
                CrossTest {
                    author: "careful".into(),
                    name: "tests::b".into(),
                },
                CrossTest {
                    author: "hasty".into(),
                    name: "tests::c".into(),
                },
            ],
            cells: vec![
                vec![Cell::Passed, Cell::Passed, Cell::Failed],
                vec![Cell::Failed, Cell::NotApplicable, Cell::Passed],
            ],
            runs: 2,
            reused: 0,
            skipped: None,
            notes: vec![CellNote {
                candidate: "hasty".into(),
                test: 1,
                note: "uses `MARK`, which only careful's change has".into(),
            }],
            sources: Vec::new(),
            witnesses: Vec::new(),
        };
        let lines = a.render();
        assert_eq!(lines[0], "         1  2  | 3");
        assert_eq!(lines[1], "careful  ✓  ✓  | ✗");
        assert_eq!(lines[2], "hasty    ✗  –  | ✓");
        assert_eq!(
            lines[5],
            "       hasty: uses `MARK`, which only careful's change has"
        );
        assert_eq!(lines[6], "  3. tests::c (by hasty)");
        assert_eq!(a.cell("hasty", 1), Some(Cell::NotApplicable));
        assert_eq!(a.cell("nobody", 0), None);
        let q = a.question(5);
        assert_eq!(q.len(), 2, "{q:?}");
        assert_eq!(q[0], "`tests::a` (by careful): ✓ careful · ✗ hasty");
        assert_eq!(q[1], "`tests::c` (by hasty): ✓ hasty · ✗ careful");
        assert_eq!(a.question(1), vec![q[0].clone(), "…".to_string()]);
        assert!(a.has_question());
    }

    #[test]
    fn only_a_test_passed_by_one_and_failed_by_another_is_a_question() {
        let m = |cells: Vec<Cell>| Agreement {
            candidates: vec!["a".into(), "b".into()],
            tests: vec![CrossTest {
                author: "a".into(),
                name: "t".into(),
            }],
            cells: cells.into_iter().map(|c| vec![c]).collect(),
            ..Agreement::default()
        };
        use Cell::{Failed as F, NotApplicable as N, Passed as P};
        assert!(m(vec![P, F]).has_question());
        assert!(!m(vec![P, P]).has_question(), "both pass: nothing to ask");
        assert!(!m(vec![P, N]).has_question(), "it says nothing about b");
        assert!(!m(vec![F, F]).has_question());
    }
}
