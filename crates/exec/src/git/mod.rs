//! Git: the user's repository, candidate workspaces, the change as git sees
//! it, diff text, and the trust checks on a workspace.

pub mod author;
pub mod base;
pub mod beneath;
pub mod forget;
pub mod gitdir;
pub mod holdout;
pub(crate) mod ignore;
pub mod kept;
pub mod overlay;
pub(crate) mod repo;
pub mod safe_env;
pub mod tree;
pub(crate) mod windows;
pub mod workspace;
