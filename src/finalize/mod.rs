//! Finalize: commit the selected candidate's change (exactly that change, on
//! the base commit) on branch `rascal/<task-slug>-<run-id>`, write the PR
//! body, push to a remote when asked, and open a PR through `gh` when it is
//! installed (else print the command to run).

pub mod preview;
pub mod record;

use crate::git::workspace;
use crate::model::summary::RunSummary;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum FinalizeError {
    #[error("run {0} has no selected candidate\n  hint: select one first: `rascal select {0} CANDIDATE` (or run with --auto)")]
    NothingSelected(String),
    #[error("candidate `{0}` is not in the run")]
    NoCandidate(String),
    #[error("candidate `{candidate}` worktree {path} is gone\n  hint: the change can no longer be committed; re-run the task")]
    WorktreeGone { candidate: String, path: String },
    #[error("candidate `{0}` did not pass verification\n  hint: override its failed checks first (`rascal override … --with-skipped`), or select another candidate")]
    NotVerified(String),
    #[error("candidate `{candidate}`'s worktree changed after it was verified ({what})\n  hint: nothing was committed; verify it again with `rascal retry` or start a new run")]
    ChangedSinceVerified { candidate: String, what: String },
    #[error("{0}")]
    Workspace(#[from] workspace::WorkspaceError),
    #[error("git: {0}")]
    Git(#[from] git2::Error),
    #[error("push to `{remote}` failed: {message}\n  hint: check the remote's URL and that you may push to it")]
    Push { remote: String, message: String },
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

#[derive(Debug, Clone, Default)]
pub struct FinalizeOptions {
    /// Push the branch to this remote (a remote name or a URL/path).
    pub push: Option<String>,
    /// Open a pull request with `gh` when it is installed.
    pub pr: bool,
}

#[derive(Debug, Clone)]
pub struct Finalized {
    pub branch: String,
    pub commit: String,
    pub message: String,
    pub pr_body: PathBuf,
    pub pushed_to: Option<String>,
    /// The `gh` command that was run, or that the user should run.
    pub pr_command: Vec<String>,
    /// Whether `gh` ran (and succeeded).
    pub pr_opened: bool,
}

/// A branch-safe slug of the task's first line.
pub fn slug(instruction: &str) -> String {
    let mut out = String::new();
    for c in instruction.lines().next().unwrap_or("").chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
        if out.len() >= 40 {
            break;
        }
    }
    let s = out.trim_matches('-').to_string();
    if s.is_empty() {
        "task".into()
    } else {
        s
    }
}

/// Is `line` a conventional-commit title (`feat: …`, `fix(scope)!: …`)?
pub fn is_conventional(line: &str) -> bool {
    let re = regex::Regex::new(
        r"^(feat|fix|docs|style|refactor|perf|test|build|ci|chore|revert)(\([^)]+\))?!?: \S",
    )
    .expect("valid regex");
    re.is_match(line)
}

/// The commit message: the agent's `commit_message.txt` when its title is
/// conventional, else one generated from the task and the checks.
pub fn commit_message(
    summary: &RunSummary,
    candidate: &str,
    agent_message: Option<&str>,
) -> String {
    if let Some(m) = agent_message {
        let m = m.trim();
        if m.lines().next().map(is_conventional).unwrap_or(false) {
            return format!(
                "{m}\n\nRascal-Run: {}\nRascal-Candidate: {candidate}\n",
                summary.run
            );
        }
    }
    let title = crate::text::ellipsis(summary.instruction.lines().next().unwrap_or("change"), 64);
    format!(
        "rascal: {title}\n\n{}\n\nRascal-Run: {}\nRascal-Candidate: {candidate}\n",
        summary.instruction.trim(),
        summary.run
    )
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> FinalizeError {
    move |source| FinalizeError::Io { what, source }
}

/// Finalize the selected candidate of `summary`. `repo_dir` is any
/// directory in the target repository.
pub fn finalize(
    repo_dir: &Path,
    summary: &RunSummary,
    opts: &FinalizeOptions,
) -> Result<Finalized, FinalizeError> {
    let selected = summary
        .selected
        .clone()
        .ok_or_else(|| FinalizeError::NothingSelected(summary.run.clone()))?;
    let cand = summary
        .candidates
        .iter()
        .find(|c| c.id == selected)
        .ok_or_else(|| FinalizeError::NoCandidate(selected.clone()))?;
    let wt = PathBuf::from(&cand.worktree);
    if !wt.exists() {
        return Err(FinalizeError::WorktreeGone {
            candidate: selected,
            path: cand.worktree.clone(),
        });
    }
    if cand.effective_verdict.or(cand.verdict) != Some(crate::model::verdict::Verdict::Pass)
        && cand.effective_verdict.or(cand.verdict) != Some(crate::model::verdict::Verdict::Warn)
    {
        return Err(FinalizeError::NotVerified(selected));
    }
    let repo = workspace::open(repo_dir)?;
    let base = git2::Oid::from_str(&summary.base)?;
    // Commit exactly the tree that was verified: the receipts of the
    // candidate's required reports must name it, and it is taken from the
    // workspace's object store (every object hash-checked), never re-read
    // from the workspace's files.
    let Some(tree_id) = cand.tree.clone() else {
        return Err(FinalizeError::ChangedSinceVerified {
            candidate: selected,
            what: "no verified change tree is recorded for it".into(),
        });
    };
    let want = crate::model::verdict::digest(&tree_id);
    let stale: Vec<String> = cand
        .reports
        .iter()
        .filter(|r| r.required && r.status != crate::model::verdict::Status::Skipped)
        .filter_map(|r| {
            let named = r.receipt.inputs.get("diff")?;
            (named != &want).then(|| format!("{} {}", r.layer, r.check))
        })
        .collect();
    if !stale.is_empty() {
        return Err(FinalizeError::ChangedSinceVerified {
            candidate: selected,
            what: format!("{} checked another tree", stale.join(", ")),
        });
    }
    let tree_oid = git2::Oid::from_str(&tree_id)?;
    crate::git::tree::import_tree(&repo, &wt, tree_oid)?;
    let base_commit = repo.find_commit(base)?;
    let tree = repo.find_tree(tree_oid)?;

    // The agent's artifacts live outside its workspace (never in the tree).
    let artifacts =
        crate::agents::artifacts_dir(&workspace::files_dir(&repo), &summary.run, &selected);
    let agent_message = read_artifact(&artifacts.join("commit_message.txt"));
    let message = commit_message(summary, &selected, agent_message.as_deref());
    let sig = repo
        .signature()
        .or_else(|_| git2::Signature::now("rascal", "rascal@localhost"))?;
    let branch = format!("rascal/{}-{}", slug(&summary.instruction), summary.run);
    let commit = repo.commit(None, &sig, &sig, &message, &tree, &[&base_commit])?;
    repo.reference(
        &format!("refs/heads/{branch}"),
        commit,
        true,
        &format!("rascal: finalize {}", summary.run),
    )?;

    let run_dir = workspace::files_dir(&repo).join("runs").join(&summary.run);
    std::fs::create_dir_all(&run_dir).map_err(io(format!("creating {}", run_dir.display())))?;
    let pr_body = run_dir.join("pr_body.md");
    let agent_body = read_artifact(&artifacts.join("pr_body.md"));
    let body = crate::output::report::markdown::pr_body(summary, agent_body.as_deref());
    std::fs::write(&pr_body, body).map_err(io(format!("writing {}", pr_body.display())))?;

    let pushed_to = match &opts.push {
        Some(remote) => {
            push(&repo, remote, &branch)?;
            Some(remote.clone())
        }
        None => None,
    };
    let title = message
        .lines()
        .next()
        .unwrap_or("rascal change")
        .to_string();
    let pr_command = vec![
        "gh".to_string(),
        "pr".into(),
        "create".into(),
        "--head".into(),
        branch.clone(),
        "--title".into(),
        title,
        "--body-file".into(),
        pr_body.to_string_lossy().into_owned(),
    ];
    let mut pr_opened = false;
    if opts.pr && which("gh").is_some() {
        let status = std::process::Command::new("gh")
            .args(&pr_command[1..])
            .current_dir(workspace::workdir(&repo))
            .status()
            .map_err(io("running gh".into()))?;
        pr_opened = status.success();
    }
    Ok(Finalized {
        branch,
        commit: commit.to_string(),
        message,
        pr_body,
        pushed_to,
        pr_command,
        pr_opened,
    })
}

/// An agent artifact, only when it is a regular file (never through a
/// symlink, which could point at any file of the host) of at most 64 KiB.
fn read_artifact(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() || meta.len() > 64 * 1024 {
        return None;
    }
    let parent = std::fs::symlink_metadata(path.parent()?).ok()?;
    if !parent.file_type().is_dir() {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

fn push(repo: &git2::Repository, remote: &str, branch: &str) -> Result<(), FinalizeError> {
    let mut r = match repo.find_remote(remote) {
        Ok(r) => r,
        Err(_) => repo.remote_anonymous(remote)?,
    };
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

/// Find a program on PATH.
pub fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_branch_safe() {
        assert_eq!(slug("Add a /health endpoint!"), "add-a-health-endpoint");
        assert_eq!(slug("   "), "task");
        assert_eq!(slug("ünïcode only"), "n-code-only");
    }

    #[test]
    fn conventional_titles_are_recognised() {
        assert!(is_conventional("feat: add shout()"));
        assert!(is_conventional("fix(api)!: stop crashing"));
        assert!(!is_conventional("Added stuff"));
        assert!(!is_conventional("feat:nospace"));
    }
}
