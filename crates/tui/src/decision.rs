//! Decisions made in the TUI are the pipeline's `Decision`s, made by the
//! person at the keyboard (from git config, like the CLI's).

pub use rascal_core::model::decision::{Decision, DecisionKind};

/// Who is deciding: git `user.name <user.email>` of `repo` (or the global
/// config), else `$USER`.
pub fn author_in(repo: &std::path::Path) -> String {
    rascal_engine::store::author_in(repo)
}
