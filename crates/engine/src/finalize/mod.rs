//! Finalize: commit the selected candidate's change (exactly that change, on
//! the base commit — or, when the base branch moved, rebased onto its new
//! tip) on branch `rascal/<task-slug>-<run-id>`, write the PR body, push to a
//! remote when asked, and open a PR through `gh` when it is installed (else
//! print the command to run). It never moves a branch holding commits it did
//! not make (see `branch`).

pub(crate) mod branch;
use rascal_core::model::choice;
pub(crate) mod rebase;

pub(crate) mod preview;
pub(crate) mod record;
pub(crate) mod run;
pub(crate) mod workspaces;

mod commit;
mod remote;
mod verified;

// What callers outside the engine use (the CLI, the TUI, tests).
pub use preview::Preview;
pub use run::finalize_run;
pub use run::Outcome;
pub use workspaces::keep_change;

use commit::NewCommit;
pub use commit::{commit_message, is_conventional};
use rebase::placement;
pub use rebase::rebase_note;
use remote::{push, remote_tip};
use verified::{verified_candidate, verified_tree};

use rascal_core::model::summary::RunSummary;
use rascal_exec::git::workspace;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum FinalizeError {
    /// No candidate was selected and the comparator's pick cannot be
    /// taken: the message says why and what to run (see `choice`).
    #[error("{0}")]
    NothingSelected(String),
    #[error("candidate `{0}` is not in the run")]
    NoCandidate(String),
    #[error("candidate `{candidate}` worktree {path} is gone\n  hint: the change can no longer be committed; re-run the task (finalize removes the workspaces of the candidates it did not commit, and `rascal gc` those of old runs; `keep_workspaces: true` in .rascal/config.yaml keeps the former)")]
    WorktreeGone { candidate: String, path: String },
    #[error("candidate `{0}` did not pass verification\n  hint: override its failed checks first (`rascal override … --with-skipped`), or select another candidate")]
    NotVerified(String),
    #[error("candidate `{candidate}` is IMPOSSIBLE: its agent declared the task impossible ({reason}); its change was never verified\n  hint: nothing was committed; give it another attempt with `rascal retry {run} {} --feedback \"…\"`, or select another candidate", rascal_core::text::inert::shell_word(candidate))]
    DeclaredImpossible {
        candidate: String,
        run: String,
        reason: String,
    },
    #[error("candidate `{candidate}`'s worktree changed after it was verified ({what})\n  hint: nothing was committed; verify it again with `rascal retry` or start a new run")]
    ChangedSinceVerified { candidate: String, what: String },
    #[error("branch {branch} has {} finalize did not make for run {run}:\n{}\n  hint: nothing was changed; keep that work and commit on a fresh branch with `rascal finalize {run} --new-branch`, or delete the branch (`git branch -D {}`) to let finalize write it", plural(commits.len(), "commit"), indented(commits), rascal_core::text::inert::shell_word(branch))]
    ForeignCommits {
        branch: String,
        run: String,
        /// Short id and title of each, newest first.
        commits: Vec<String>,
    },
    #[error("the base moved ({branch} has {} since the run's base {}) and the verified change conflicts with it in:\n{}\n  hint: nothing was committed; run the task again on the new base, or commit on the run's base with `rascal finalize {run} --no-rebase`", plural(*new_commits, "new commit"), short(base), indented(files))]
    Conflicts {
        run: String,
        branch: String,
        base: String,
        new_commits: usize,
        files: Vec<String>,
    },
    #[error("branch {branch} on `{remote}` is at {tip}, a commit finalize did not make for run {run}\n  hint: nothing was committed or pushed; fetch that branch and keep its work, then push to a fresh branch with `rascal finalize {run} --new-branch --push {}`", rascal_core::text::inert::shell_word(remote))]
    RemoteForeign {
        remote: String,
        branch: String,
        run: String,
        /// Its short id (and title, when the commit is known here).
        tip: String,
    },
    #[error("{0}")]
    Workspace(#[from] workspace::WorkspaceError),
    /// The run's record could not be read (or was changed after it was
    /// written).
    #[error("{0}")]
    Store(#[from] crate::store::StoreError),
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
    /// When `rascal/<slug>-<run>` exists, commit on the first free
    /// `…-2`, `…-3` instead.
    pub new_branch: bool,
    /// Commit on the run's base even when the base branch moved.
    pub no_rebase: bool,
}

/// The base branch had new commits since the run's base.
#[derive(Debug, Clone)]
pub struct BaseMoved {
    /// Its name (`main`).
    pub branch: String,
    pub new_commits: usize,
    /// Its tip, which the change was rebased onto (unless `--no-rebase`).
    pub tip: String,
    /// The tree committed: the verified change merged onto the tip. None
    /// with `--no-rebase` (the verified tree was committed on the base).
    pub merged_tree: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Finalized {
    /// The candidate committed.
    pub candidate: String,
    pub branch: String,
    pub commit: String,
    /// The branch already held exactly this commit: nothing was written.
    pub unchanged: bool,
    /// Finalize's own earlier commit for this run that the branch held
    /// before (a re-run after the base moved or the selection changed).
    pub replaced: Option<String>,
    /// The tree the checks ran on.
    pub verified_tree: String,
    /// The run's base commit.
    pub base: String,
    /// Set when the base branch moved since the run.
    pub moved: Option<BaseMoved>,
    pub message: String,
    pub pr_body: PathBuf,
    pub pushed_to: Option<String>,
    /// The `gh` command that was run, or that the user should run.
    pub pr_command: Vec<String>,
    /// Whether `gh` ran (and succeeded).
    pub pr_opened: bool,
    /// What `gh` said when asked to open the pull request: the PR's
    /// address, or why it did not open one (None when not asked).
    pub pr: Option<Result<String, String>>,
    /// The other candidates' workspaces, removed once the commit was made.
    pub workspaces: workspaces::Tidied,
}

pub use rascal_core::text::slug;

/// `n thing` or `n things`.
pub fn plural(n: usize, thing: &str) -> String {
    rascal_core::text::plural(n as u64, thing)
}

/// A commit or tree id as shown to a human.
pub fn short(id: &str) -> &str {
    &id[..id.len().min(12)]
}

fn indented(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
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
    let (selected, cand, wt) = verified_candidate(summary)?;
    let repo = workspace::open(repo_dir)?;
    let base = git2::Oid::from_str(&summary.base)?;
    let tree_id = verified_tree(cand, &selected)?;
    let tree_oid = git2::Oid::from_str(&tree_id)?;
    rascal_exec::git::tree::import_tree(&repo, &wt, tree_oid)?;

    let (parent, commit_tree, moved) = placement(&repo, summary, base, tree_oid, opts)?;
    let parent_commit = repo.find_commit(parent)?;
    let tree = repo.find_tree(commit_tree)?;

    // The agent's artifacts live outside its workspace (never in the tree).
    let artifacts =
        rascal_exec::agents::artifacts_dir(&workspace::files_dir(&repo), &summary.run, &selected);
    let agent_message = read_artifact(&artifacts.join("commit_message.txt"));
    let mut message = commit_message(summary, &selected, agent_message.as_deref());
    if commit_tree != tree_oid {
        message.push_str(&format!(
            "Rascal-Verified-Tree: {tree_id}\nRascal-Verified-Base: {}\n",
            summary.base
        ));
    }

    // Which branch, and whether finalize may write it.
    let run_dir = workspace::files_dir(&repo).join("runs").join(&summary.run);
    std::fs::create_dir_all(&run_dir).map_err(io(format!("creating {}", run_dir.display())))?;
    let mut own = branch::OwnCommits::read(&run_dir);
    let (branch, existing) = target_branch(&repo, summary, opts, &own, &[base, parent])?;
    let refname = format!("refs/heads/{branch}");
    let new = NewCommit {
        parent: &parent_commit,
        tree: &tree,
        message: &message,
        refname: &refname,
        log: format!("rascal: finalize {}", summary.run),
    };
    let (commit, unchanged, replaced) = new.write(&repo, existing)?;
    own.add(commit, &branch)
        .map_err(io(format!("recording the commit in {}", run_dir.display())))?;

    let note = moved
        .as_ref()
        .map(|m| rebase_note(m, &tree_id, &summary.base));
    let pr_body = write_pr_body(summary, &run_dir, &artifacts, note.as_deref())?;

    let pushed_to = match &opts.push {
        Some(remote) => {
            push(&repo, remote, &branch)?;
            Some(remote.clone())
        }
        None => None,
    };
    let pr_command = pr_command(&branch, &message, &pr_body);
    let pr = opts
        .pr
        .then(|| run::gh(&workspace::workdir(&repo), &pr_command).map_err(|e| e.to_string()));
    let pr_opened = matches!(pr, Some(Ok(_)));
    let workspaces = workspaces::remove_others(&repo, summary, &selected);
    Ok(Finalized {
        candidate: selected,
        branch,
        commit: commit.to_string(),
        unchanged,
        replaced,
        verified_tree: tree_id,
        base: summary.base.clone(),
        moved,
        message,
        pr_body,
        pushed_to,
        pr_command,
        pr_opened,
        pr,
        workspaces,
    })
}

/// The branch finalize commits on (`rascal/<slug>-<run>`, or the first
/// free `…-N` with `--new-branch`) and what it holds now. Refused when it
/// holds commits finalize did not make for this run, and so is the
/// remote's branch pushed to, before anything is written here.
fn target_branch(
    repo: &git2::Repository,
    summary: &RunSummary,
    opts: &FinalizeOptions,
    own: &branch::OwnCommits,
    known: &[git2::Oid],
) -> Result<(String, branch::Existing), FinalizeError> {
    let name = format!("rascal/{}-{}", slug(&summary.instruction), summary.run);
    let branch = if opts.new_branch {
        branch::fresh_name(repo, &name)
    } else {
        name
    };
    let existing = branch::existing(repo, &branch, own, known)?;
    refuse_foreign(repo, summary, &branch, &existing)?;
    if let Some(remote) = &opts.push {
        if let Some(tip) = remote_tip(repo, remote, &branch)?.filter(|t| !own.contains(*t)) {
            return Err(FinalizeError::RemoteForeign {
                remote: remote.clone(),
                branch,
                run: summary.run.clone(),
                tip: branch::describe(repo, tip),
            });
        }
    }
    Ok((branch, existing))
}

/// Write the PR body (the agent's `pr_body.md` under rascal's report, and
/// what a moved base did) into the run's files: its path.
fn write_pr_body(
    summary: &RunSummary,
    run_dir: &Path,
    artifacts: &Path,
    note: Option<&str>,
) -> Result<PathBuf, FinalizeError> {
    let pr_body = run_dir.join("pr_body.md");
    let agent_body = read_artifact(&artifacts.join("pr_body.md"));
    let body = crate::output::report::markdown::pr_body(summary, agent_body.as_deref(), note);
    std::fs::write(&pr_body, body).map_err(io(format!("writing {}", pr_body.display())))?;
    Ok(pr_body)
}

/// A branch with commits finalize did not make for this run is refused
/// (the first ten of them named).
fn refuse_foreign(
    repo: &git2::Repository,
    summary: &RunSummary,
    branch: &str,
    existing: &branch::Existing,
) -> Result<(), FinalizeError> {
    if let branch::Existing::Foreign(commits) = existing {
        return Err(FinalizeError::ForeignCommits {
            branch: branch.to_string(),
            run: summary.run.clone(),
            commits: commits
                .iter()
                .take(10)
                .map(|c| branch::describe(repo, *c))
                .chain((commits.len() > 10).then(|| format!("… and {} more", commits.len() - 10)))
                .collect(),
        });
    }
    Ok(())
}

/// The `gh pr create` command line for the branch: the commit's title,
/// the PR body file.
fn pr_command(branch: &str, message: &str, pr_body: &Path) -> Vec<String> {
    let title = message
        .lines()
        .next()
        .unwrap_or("rascal change")
        .to_string();
    vec![
        "gh".to_string(),
        "pr".into(),
        "create".into(),
        "--head".into(),
        branch.to_string(),
        "--title".into(),
        title,
        "--body-file".into(),
        pr_body.to_string_lossy().into_owned(),
    ]
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
