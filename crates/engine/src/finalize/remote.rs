//! The remote finalize pushes to: where its branch is there, and the
//! forced push of finalize's own commit.

use super::FinalizeError;

/// A remote by name, else by URL or path.
fn find_remote<'r>(
    repo: &'r git2::Repository,
    remote: &str,
) -> Result<git2::Remote<'r>, git2::Error> {
    match repo.find_remote(remote) {
        Ok(r) => Ok(r),
        Err(_) => repo.remote_anonymous(remote),
    }
}

/// Where `branch` is on `remote` (None: it has no such branch).
pub(super) fn remote_tip(
    repo: &git2::Repository,
    remote: &str,
    branch: &str,
) -> Result<Option<git2::Oid>, FinalizeError> {
    let failed = |e: git2::Error| FinalizeError::Push {
        remote: remote.to_string(),
        message: e.message().to_string(),
    };
    let mut r = find_remote(repo, remote).map_err(failed)?;
    let conn = r
        .connect_auth(git2::Direction::Push, None, None)
        .map_err(failed)?;
    let want = format!("refs/heads/{branch}");
    let tip = conn
        .list()
        .map_err(failed)?
        .iter()
        .find(|h| h.name() == want)
        .map(|h| h.oid());
    Ok(tip)
}

/// Push `branch`; forced, since finalize may have replaced its own earlier
/// commit (the remote's branch was checked to hold nothing else first).
pub(super) fn push(
    repo: &git2::Repository,
    remote: &str,
    branch: &str,
) -> Result<(), FinalizeError> {
    let mut r = find_remote(repo, remote)?;
    let spec = format!("+refs/heads/{branch}:refs/heads/{branch}");
    let mut failure: Option<String> = None;
    {
        let mut cbs = git2::RemoteCallbacks::new();
        cbs.push_update_reference(|refname, status| {
            if let Some(msg) = status {
                failure = Some(format!("{refname}: {msg}"));
            }
            Ok(())
        });
        let mut opts = git2::PushOptions::new();
        opts.remote_callbacks(cbs);
        r.push(&[spec.as_str()], Some(&mut opts))
            .map_err(|e| FinalizeError::Push {
                remote: remote.to_string(),
                message: e.message().to_string(),
            })?;
    }
    match failure {
        Some(message) => Err(FinalizeError::Push {
            remote: remote.to_string(),
            message,
        }),
        None => Ok(()),
    }
}
