//! Environment policy: which host variables a child process may see.

/// Host variables every agent gets so that ordinary programs work.
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

pub const BASE_ENV: &[&str] = &["PATH", "HOME", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER"];
