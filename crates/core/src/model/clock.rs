//! Wall-clock time as journalled (milliseconds since the Unix epoch), and
//! the clocks folded from it: a candidate's time in its current attempt,
//! its agent's time per attempt and in all, and the run's wall clock. Every
//! instant comes from the journal, so a reattach shows the same clocks as
//! the live screen did, never restarted.

use serde::{Deserialize, Serialize};

/// Now, in milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A span of time that may still be open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub started_ms: Option<i64>,
    pub ended_ms: Option<i64>,
}

impl Span {
    /// Its length at `now` (an open span runs to `now`); None before it started.
    pub fn length_ms(&self, now: i64) -> Option<i64> {
        let s = self.started_ms?;
        Some(self.ended_ms.unwrap_or(now).saturating_sub(s).max(0))
    }

    pub fn open(&self) -> bool {
        self.started_ms.is_some() && self.ended_ms.is_none()
    }
}

/// One candidate's clocks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CandidateClock {
    /// The current attempt: from its agent's start to its verdict.
    pub attempt: Span,
    /// The current attempt's agent: from its start to its report.
    pub agent: Span,
    /// The agent's time in each earlier attempt (from its report).
    pub earlier_agent_ms: Vec<u64>,
}

impl CandidateClock {
    /// The agent's time in the current attempt at `now`; the report's own
    /// duration once it landed (`reported`), else the open span.
    pub fn agent_ms(&self, now: i64, reported: Option<u64>) -> Option<i64> {
        match reported {
            Some(ms) => Some(ms as i64),
            None => self.agent.length_ms(now),
        }
    }

    /// The agent's time over every attempt.
    pub fn agent_total_ms(&self, now: i64, reported: Option<u64>) -> i64 {
        self.earlier_agent_ms.iter().map(|m| *m as i64).sum::<i64>()
            + self.agent_ms(now, reported).unwrap_or(0)
    }
}
