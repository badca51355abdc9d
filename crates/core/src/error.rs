//! rascal-core's one error type: what can go wrong in configuration and in
//! the model, by the kind a caller acts on. Each variant's message is the
//! one the user reads (with its hint where there is one).

use crate::config::spec::SPECS_DIR;
use crate::config::ConfigError;
use crate::model::verdict::Layer;

/// An error of rascal-core.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A `.rascal/` file (or an issue body, a spec) that is not valid:
    /// file, line, column, what is wrong and what to do.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A decision refused: an override without a reason.
    #[error("an override needs a reason: say why the failed check can be accepted")]
    NoReason,
    /// A decision refused: an escalation without a note.
    #[error("an escalation needs a note: say what the human should look at")]
    NoNote,
    /// A decision refused: it names a candidate the run does not have.
    #[error("no candidate `{0}` in this run")]
    NoCandidate(String),
    /// A decision refused: an override of a check that did not fail, warn
    /// or skip.
    #[error(
        "candidate `{candidate}` has no {layer} check `{check}` that failed, warned or was skipped"
    )]
    NothingToOverride {
        candidate: String,
        layer: Layer,
        check: String,
    },
    /// A run has no candidate `id` (its candidates listed in the hint).
    #[error("no candidate `{id}` in run {run}\n  hint: candidates: {}", .candidates.join(", "))]
    UnknownCandidate {
        run: String,
        id: String,
        candidates: Vec<String>,
    },
    /// Finalize cannot choose a candidate by itself: why, and the commands
    /// that let a human choose.
    #[error("{0}")]
    CannotChoose(String),
    /// A spec name that is not a plain file name under `.rascal/specs/`.
    #[error("spec name `{name}` is not a plain file name\n  hint: pass the stem of a file in {}/ (letters, digits, `-`, `_`, `.`), e.g. `--spec health`", SPECS_DIR)]
    SpecName { name: String },
    /// A value that is not what its setting allows (a duration, a size, a
    /// glob, a regex, an allowlist or egress entry, a guardrail's or a
    /// criterion's fields): what is wrong and what is allowed. Read from a
    /// file, the parser adds the file, line and column ([`Error::Config`]).
    #[error("{0}")]
    Invalid(String),
    /// A value that could not be written as YAML (serde_yaml's message).
    #[error("{0}")]
    Yaml(String),
}
