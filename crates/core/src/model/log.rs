//! A line of an agent's or a command's output, and which stream it came on.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    Stdout,
    Stderr,
}

/// One line of a child's output (lossy UTF-8, newline stripped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    pub stream: Stream,
    pub text: String,
}

/// A run of one candidate's output lines on one stream, written to its log
/// file and journalled as one event (not a row per line): where the bytes
/// start, how many, how many lines, and their SHA-256, so a reader finds
/// them by offset and an edit to the file after it was recorded is named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    pub candidate: String,
    pub stream: Stream,
    /// The log file, relative to the repository's run files directory
    /// (`workspace::files_dir`).
    pub file: String,
    pub offset: u64,
    pub bytes: u64,
    pub lines: u64,
    pub sha256: String,
    /// Of `lines`, how many are rascal's own notes (`rascal: …`: the egress
    /// proxy's decisions, copy mode's sizes), not the agent's output: a
    /// reattach skips only the agent's lines it has already read.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub own: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
