//! The test ledger a test guardrail's report carries: the tests the
//! runner listed at the base and now, and which of them ran, passed,
//! failed or were ignored — read from the runner's own listing and
//! machine-readable results, not from prose.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    /// The runner (`cargo`, `go`, `pytest`, `jest`, `vitest`).
    pub runner: String,
    /// How many tests the runner listed at the base commit.
    pub at_base: usize,
    /// How many it lists now.
    pub now: usize,
    /// How many ran (passed + failed).
    pub ran: usize,
    pub passed: usize,
    pub failed: usize,
    pub ignored: usize,
    /// Tests listed at the base and not now (by name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// Tests that ran and failed (by name, at most a few dozen).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_names: Vec<String>,
}

impl Ledger {
    /// One line for a report: `12 tests at base · 12 now · 12 ran · 12 passed`.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} at base · {} now · {} ran · {} passed",
            crate::text::plural(self.at_base as u64, "test"),
            self.now,
            self.ran,
            self.passed
        );
        if self.failed > 0 {
            s.push_str(&format!(" · {} failed", self.failed));
        }
        if self.ignored > 0 {
            s.push_str(&format!(" · {} ignored", self.ignored));
        }
        if !self.missing.is_empty() {
            s.push_str(&format!(" · {} missing", self.missing.len()));
        }
        s
    }
}
