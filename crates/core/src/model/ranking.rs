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
    /// What the discriminator's probe found where no test separated the
    /// pick from a candidate whose code differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probes: Option<Probes>,
}

/// The discriminator's probe, run on each candidate no test separated
/// (`pipeline::discriminate`). Evidence only through a human's answer:
/// a difference makes the run contested, never fails anyone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Probes {
    /// The discriminator agent.
    pub agent: String,
    /// The candidates probed: the pick first.
    pub candidates: Vec<String>,
    /// How many calls the probe printed (on any candidate).
    pub calls: usize,
    /// The calls whose output differs between candidates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<ProbeDifference>,
    /// Why there is no finding (the agent failed, the probe did not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The probe itself (its source with `{nonce}` unreplaced): a human's
    /// answer keeps it as a test for later runs of the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ProbeSource>,
}

/// A probe's file, source (with `{nonce}` where the nonce goes) and argv.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeSource {
    pub file: String,
    pub content: String,
    pub command: Vec<String>,
}

/// One call whose output differs: each candidate's output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeDifference {
    pub call: String,
    pub outputs: Vec<(String, String)>,
}

impl Ranking {
    /// Whether there is a question for a human: a test one candidate
    /// passes and another fails, or a probed call whose output differs.
    pub fn has_question(&self) -> bool {
        self.agreement.as_ref().is_some_and(|m| m.has_question())
            || self
                .probes
                .as_ref()
                .is_some_and(|p| !p.differences.is_empty())
    }

    /// The question, as examples: the tests that separate the candidates
    /// (`Agreement::question`), then the probed calls whose outputs
    /// differ (`Probes::question`), at most `limit` of each.
    pub fn question(&self, limit: usize) -> Vec<String> {
        let mut out = self
            .agreement
            .as_ref()
            .map(|m| m.question(limit))
            .unwrap_or_default();
        if let Some(p) = &self.probes {
            out.extend(p.question(limit));
        }
        out
    }

    /// What the question rests on, for its first line: the candidates'
    /// own tests, the discriminator's probe, or both.
    pub fn question_lead(&self) -> &'static str {
        let by_tests = self.agreement.as_ref().is_some_and(|m| m.has_question());
        let by_probe = self
            .probes
            .as_ref()
            .is_some_and(|p| !p.differences.is_empty());
        match (by_tests, by_probe) {
            (true, true) => "The candidates' own tests disagree, and the discriminator's probe gives them different outputs",
            (false, true) => "The discriminator's probe gives them different outputs",
            _ => "The candidates' own tests disagree",
        }
    }

    /// The candidates a question can be answered with (the matrix's, or
    /// the probed ones).
    pub fn question_candidates(&self) -> Vec<String> {
        match (&self.agreement, &self.probes) {
            (Some(m), _) if m.has_question() => m.candidates.clone(),
            (_, Some(p)) => p.candidates.clone(),
            (Some(m), None) => m.candidates.clone(),
            (None, None) => Vec::new(),
        }
    }
}

impl Probes {
    /// The question the differences put to a human, one line per call:
    /// `half(3): alder → 1 · birch → 1.5`. At most `limit` lines.
    pub fn question(&self, limit: usize) -> Vec<String> {
        let mut out: Vec<String> = self
            .differences
            .iter()
            .take(limit)
            .map(|d| {
                let each: Vec<String> = d
                    .outputs
                    .iter()
                    .map(|(c, o)| format!("{c} → {o}"))
                    .collect();
                format!("{}: {}", d.call, each.join(" · "))
            })
            .collect();
        if self.differences.len() > limit {
            out.push("…".into());
        }
        out
    }
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
