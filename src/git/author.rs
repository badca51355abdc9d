//! Who is deciding, in git's words: the repository's `user.name <user.email>`.

/// Who is deciding: `git config user.name <user.email>` of the repository,
/// else $USER.
pub fn author(repo: Option<&git2::Repository>) -> String {
    let cfg = repo
        .and_then(|r| r.config().ok())
        .or_else(|| git2::Config::open_default().ok());
    if let Some(cfg) = cfg {
        let name = cfg.get_string("user.name").ok();
        let email = cfg.get_string("user.email").ok();
        match (name, email) {
            (Some(n), Some(e)) => return format!("{n} <{e}>"),
            (Some(n), None) => return n,
            _ => {}
        }
    }
    std::env::var("USER").unwrap_or_else(|_| "unknown".into())
}
