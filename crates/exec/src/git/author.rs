//! Who is deciding, in git's words: the repository's `user.name <user.email>`,
//! and the signature of the commits rascal makes on the user's behalf.

/// A non-empty variable of the environment.
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Who is deciding: as git names a commit's author, `GIT_AUTHOR_NAME`
/// and `GIT_AUTHOR_EMAIL` when set, else `git config user.name
/// <user.email>` of the repository, else $USER.
pub fn author(repo: Option<&git2::Repository>) -> String {
    match (env("GIT_AUTHOR_NAME"), env("GIT_AUTHOR_EMAIL")) {
        (Some(n), Some(e)) => return format!("{n} <{e}>"),
        (Some(n), None) => return n,
        _ => {}
    }
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

/// The identity a commit rascal makes for the user is signed with:
/// `GIT_AUTHOR_NAME` and `GIT_AUTHOR_EMAIL` when both are set, else the
/// repository's `user.name` and `user.email`; without them, the name falls
/// back as [`author`] does ($USER) and the email to `rascal@localhost`.
pub fn signature(repo: &git2::Repository) -> Result<git2::Signature<'static>, git2::Error> {
    if let (Some(n), Some(e)) = (env("GIT_AUTHOR_NAME"), env("GIT_AUTHOR_EMAIL")) {
        return git2::Signature::now(&n, &e);
    }
    if let Ok(sig) = repo.signature() {
        return Ok(sig.to_owned());
    }
    let cfg = repo.config().ok();
    let get = |key: &str| cfg.as_ref().and_then(|c| c.get_string(key).ok());
    let name = get("user.name")
        .or_else(|| std::env::var("USER").ok())
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| "unknown".into());
    let email = get("user.email").unwrap_or_else(|| "rascal@localhost".into());
    git2::Signature::now(&name, &email)
}
