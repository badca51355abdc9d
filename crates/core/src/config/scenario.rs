//! Scripted agents' scenarios as configuration: the steps a scripted agent
//! plays (`steps:` in config.yaml) and the names of the built-in scenarios.
//! Playing them is `agents::scripted`.

use serde::{Deserialize, Serialize};

/// One step of a scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "do", rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// Print a line on stdout. In a reviewer, `{nonce}` is replaced by the
    /// review's nonce (`$RASCAL_REVIEW_NONCE`).
    Say {
        text: String,
    },
    /// Print a line on stderr.
    Warn {
        text: String,
    },
    Write {
        path: String,
        content: String,
    },
    Append {
        path: String,
        content: String,
    },
    Delete {
        path: String,
    },
    Rename {
        from: String,
        to: String,
    },
    Chmod {
        path: String,
        executable: bool,
    },
    Symlink {
        path: String,
        target: String,
    },
    Sleep {
        ms: u64,
    },
    /// Print `bytes` bytes of binary garbage (incl. escape sequences and NULs).
    Garbage {
        bytes: usize,
    },
    /// Print one line `bytes` long.
    LongLine {
        bytes: usize,
    },
    Exit {
        code: i32,
    },
    /// Declare the task impossible: write `reason` to
    /// `$RASCAL_ARTIFACTS_DIR/impossible.md`, the honest way out every
    /// author is offered.
    Impossible {
        reason: String,
    },
    /// Report spending as Claude Code does when its session ends: one
    /// stream-json `result` line with `usage` and `total_cost_usd`. Scripted
    /// agents' output is read with the claude parser, so budgets see it
    /// through the same path as a real agent's.
    Usage {
        #[serde(default)]
        input_tokens: u64,
        #[serde(default)]
        output_tokens: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usd: Option<f64>,
    },
    /// Play `then` on attempt `attempt` ($RASCAL_ATTEMPT, 1 = first try),
    /// `otherwise` on any other attempt: lets a scripted author fix its
    /// change when given feedback, and a scripted reviewer change its mind.
    When {
        attempt: u32,
        #[serde(default)]
        then: Vec<Step>,
        #[serde(default)]
        otherwise: Vec<Step>,
    },
}

/// How fast a built-in scenario plays. `Fast` everywhere (`rascal run`,
/// the tests, `rascal demo --fast`); `Watchable` only in `rascal demo`,
/// where the demo's authors and reviewer pause between their steps, each at
/// its own pace, so a person can see every layer land and the candidates
/// finish one after the other.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Tempo {
    #[default]
    Fast,
    Watchable,
}

/// The built-in scenarios (`scenario: NAME`).
pub const BUILTIN_NAMES: &[&str] = &[
    "demo-good",
    "demo-broken",
    "demo-denied",
    "demo-lazy",
    "demo-fix-on-feedback",
    "demo-ascii",
    "first-run",
    "hang",
    "noisy",
    "nothing",
    "review-approve",
    "review-request-once",
    "review-reject",
    "review-garbled",
    "review-hang",
    "judge-pass",
    "judge-fail",
    "probe-shout",
];
