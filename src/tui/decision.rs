//! Decisions made in the TUI are the pipeline's `Decision`s; this adds who
//! is making them (from git config).

pub use crate::decision::{Decision, DecisionKind};

/// `Name <email>` from git config, or `$USER`, or "unknown".
pub fn author() -> String {
    if let Ok(cfg) = git2::Config::open_default() {
        let name = cfg.get_string("user.name").ok();
        let email = cfg.get_string("user.email").ok();
        match (name, email) {
            (Some(n), Some(e)) => return format!("{n} <{e}>"),
            (Some(n), None) => return n,
            (None, Some(e)) => return e,
            _ => {}
        }
    }
    std::env::var("USER").unwrap_or_else(|_| "unknown".into())
}
