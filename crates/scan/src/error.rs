//! The scanners' one error, with the variants a caller acts on: the
//! secret rules do not compile, a manifest cannot be read the way its tool
//! reads it, a results file is not what its runner writes. Every message
//! is whole (it names the rule, the line, the file's fault), so a caller
//! shows it as is or wraps it in its own sentence.

/// Why a scanner could not do its work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A secret rule (its regex, its path, its keywords, their number) or
    /// a secrets option (an `allow_paths` glob) does not compile: the
    /// secret scan cannot start.
    #[error("{0}")]
    Rules(String),
    /// A manifest or settings file (Cargo.toml, package.json, go.mod, a
    /// lockfile, …) is not valid UTF-8, TOML, JSON or the tool's own
    /// grammar: what it declares cannot be checked.
    #[error("{0}")]
    Manifest(String),
    /// A runner's results file (JUnit XML) does not parse or holds no
    /// results.
    #[error("{0}")]
    Results(String),
}
