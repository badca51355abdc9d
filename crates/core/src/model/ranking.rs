//! The comparator's output (Layer 1): candidates in order with the reasons,
//! the similarity matrix and the pick. Computed by `layers::compare`.

use crate::model::usage::Usage;
use crate::model::verdict::Verdict;
use serde::{Deserialize, Serialize};

/// One position in the ranking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranked {
    pub position: usize,
    pub candidate: String,
    pub verdict: Verdict,
    pub layers_passed: usize,
    pub criteria_met: usize,
    /// Mean similarity to the other candidates that passed the gate, 0..1
    /// (1.0 when alone; 0 for a candidate that did not pass: it neither
    /// votes nor gets a score).
    pub consensus: f64,
    pub lines: u64,
    pub files: usize,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Its agreement score from cross-testing (group size × the tests the
    /// group passes, each author weighing one), when cross-testing ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<f64>,
}

impl Ranked {
    /// The consensus as shown: `—` for a candidate that failed (it has no
    /// score).
    pub fn consensus_text(&self) -> String {
        if self.verdict == Verdict::Fail {
            "—".into()
        } else {
            format!("{:.2}", self.consensus)
        }
    }
}

/// The comparator's output, stored on the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranking {
    pub positions: Vec<Ranked>,
    /// Candidate ids, the order of the matrix rows and columns.
    pub ids: Vec<String>,
    /// `matrix[i][j]`: similarity of candidates i and j's changes, 0..1.
    pub matrix: Vec<Vec<f64>>,
    /// The top candidate when it did not fail; None when none passed.
    pub pick: Option<String>,
    /// What the judge agent said, when one broke a tie.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeNote>,
    /// The candidates' tests run on each other's code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<crate::model::agreement::Agreement>,
    /// Why there is no pick although candidates passed: their agreement
    /// is contested (no majority, no held-out test to break the tie).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contested: Option<String>,
    /// With a pick: the other passing candidates whose code differs from
    /// the pick's and that no test separates from it — the pick is not
    /// shown better than them, only not worse.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unseparated: Vec<String>,
}

/// The comparator judge's contribution (advisory).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeNote {
    pub agent: String,
    /// The candidates that were tied at the top and shown to the judge.
    pub tied: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Why the judge's answer was not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}
