//! Where a run or a candidate stands, in the user's words: queued, running,
//! a verdict, or why there is none (cancelled, escalated, interrupted,
//! declared impossible).
//! Derived only from journalled events by the one fold, so the live TUI, a
//! reattach, `list`, `show` and `--json` all say the same.

use crate::model::verdict::Verdict;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Not started yet (waiting for a slot).
    #[default]
    Queued,
    /// The agent or its checks are running.
    Running,
    Pass,
    Warn,
    Fail,
    /// Stopped by a human (or by quitting) before every layer ran.
    Cancelled,
    /// Handed to a human: retries ran out, the review was unusable, or
    /// someone escalated it with a note.
    Escalated,
    /// The rascal process running it died; what had landed is kept.
    Interrupted,
    /// Its agent declared the task impossible or contradictory
    /// (`impossible.md`) instead of changing it: its change is not judged,
    /// it is never retried with feedback nor picked.
    Impossible,
    /// A run whose candidates passed but disagree, and nothing rascal
    /// trusts settles which is right: no pick, a human decides (exit 4).
    Contested,
}

impl State {
    /// Every state, in the order the TUI's help lists them.
    pub const ALL: [State; 10] = [
        State::Queued,
        State::Running,
        State::Pass,
        State::Warn,
        State::Fail,
        State::Cancelled,
        State::Escalated,
        State::Interrupted,
        State::Impossible,
        State::Contested,
    ];

    /// What the state means, in a few words.
    pub fn meaning(self) -> &'static str {
        match self {
            State::Queued => "waiting to start",
            State::Running => "its agent or checks are running",
            State::Pass => "every layer passed (or its failures were accepted)",
            State::Warn => "passed with warnings",
            State::Fail => "a check failed, or could not verify",
            State::Cancelled => "stopped before every layer ran",
            State::Escalated => "handed to a human (the note says why)",
            State::Interrupted => "the rascal running it died; attach resumes",
            State::Impossible => "its agent declared the task impossible (the reason says why)",
            State::Contested => "candidates passed but disagree, and nothing settles it: you pick",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            State::Queued => "QUEUED",
            State::Running => "RUNNING",
            State::Pass => "PASS",
            State::Warn => "WARN",
            State::Fail => "FAIL",
            State::Cancelled => "CANCELLED",
            State::Escalated => "ESCALATED",
            State::Interrupted => "INTERRUPTED",
            State::Impossible => "IMPOSSIBLE",
            State::Contested => "CONTESTED",
        }
    }

    pub fn of(v: Verdict) -> State {
        match v {
            Verdict::Pass => State::Pass,
            Verdict::Warn => State::Warn,
            Verdict::Fail => State::Fail,
        }
    }

    /// Still moving: nothing final to say yet.
    pub fn live(self) -> bool {
        matches!(self, State::Queued | State::Running)
    }

    /// Ended with PASS or WARN: something that can be finalized.
    pub fn passed(self) -> bool {
        matches!(self, State::Pass | State::Warn)
    }
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}
