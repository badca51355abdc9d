//! Environment policy: which host variables a child process may see.

/// Host variables every agent gets so that ordinary programs work.
pub const BASE_ENV: &[&str] = &["PATH", "HOME", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER"];
