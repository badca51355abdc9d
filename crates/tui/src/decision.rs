//! Decisions made in the TUI are the pipeline's `Decision`s, made by the
//! person at the keyboard (from git config, like the CLI's).

pub use crate::model::decision::{Decision, DecisionKind};

/// Who is deciding: git `user.name <user.email>` of `repo` (or the global
/// config), else `$USER`.
pub fn author_in(repo: &std::path::Path) -> String {
    crate::store::project::author_in(repo)
}
