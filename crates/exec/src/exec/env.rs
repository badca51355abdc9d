//! Environment policy: which host variables a child process may see.

/// Where toolchains live, when not in their default places: passed to
/// confined commands (they are locations, not credentials).
pub const TOOLCHAIN_ENV: &[&str] = &[
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "GOROOT",
    "GOPATH",
    "PYENV_ROOT",
    "NVM_DIR",
];

/// Host variables every agent gets so that ordinary programs work.
pub const BASE_ENV: &[&str] = &["PATH", "HOME", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER"];

/// The variable naming the directory an author agent leaves its artifacts
/// (`commit_message.txt`, `pr_body.md`, `impossible.md`) in: outside its
/// workspace.
pub(crate) const ARTIFACTS_ENV: &str = "RASCAL_ARTIFACTS_DIR";

/// The environment variable naming the file with a planned run's approved
/// acceptance criteria (JSON in the spec's schema: `acceptance_criteria`,
/// `constraints`), for an author.
pub(crate) const CRITERIA_ENV: &str = "RASCAL_CRITERIA_FILE";
/// The variable naming the directory of a combining agent's material (the
/// task, the candidates' diffs, their agreement and review findings):
/// `$RASCAL_ARTIFACTS_DIR/combine` (docs/configuration.md, "Combining
/// candidates").
pub(crate) const COMBINE_ENV: &str = "RASCAL_COMBINE_DIR";

/// The combining agent's material, in its artifacts directory.
pub const COMBINE_DIR: &str = "combine";
