//! The commit finalize writes: its message (the agent's when conventional,
//! else rascal's, with rascal's trailers), and writing it on the branch
//! by compare-and-swap, or keeping the one already there.

use super::{branch, FinalizeError};
use rascal_core::model::summary::RunSummary;

/// Is `line` a conventional-commit title (`feat: …`, `fix(scope)!: …`)?
pub fn is_conventional(line: &str) -> bool {
    let re = regex::Regex::new(
        r"^(feat|fix|docs|style|refactor|perf|test|build|ci|chore|revert)(\([^)]+\))?!?: \S",
    )
    .expect("valid regex");
    re.is_match(line)
}

/// The commit message: the agent's `commit_message.txt` when its title is
/// conventional, else one generated from the task and the checks. Either
/// way through the output policy (`text::inert`): one title line of at most
/// 100 columns, no control character as itself anywhere, and the
/// `Rascal-*` trailers written by rascal only.
pub fn commit_message(
    summary: &RunSummary,
    candidate: &str,
    agent_message: Option<&str>,
) -> String {
    use rascal_core::text::inert::{commit_body, commit_title, commit_trailer};
    let trailers = format!(
        "Rascal-Run: {}\nRascal-Candidate: {}\n",
        commit_trailer(&summary.run),
        commit_trailer(candidate)
    );
    let message = |title: &str, body: &str| {
        let body = commit_body(body);
        if body.is_empty() {
            format!("{title}\n\n{trailers}")
        } else {
            format!("{title}\n\n{body}\n\n{trailers}")
        }
    };
    if let Some(m) = agent_message {
        let m = m.trim();
        let (first, rest) = m.split_once('\n').unwrap_or((m, ""));
        let title = commit_title(first);
        if is_conventional(&title) {
            return message(&title, rest);
        }
    }
    let title = commit_title(&format!(
        "rascal: {}",
        rascal_core::text::ellipsis(summary.instruction.lines().next().unwrap_or("change"), 64)
    ));
    message(&title, summary.instruction.trim())
}

/// The commit finalize writes on its branch.
pub(super) struct NewCommit<'a> {
    pub(super) parent: &'a git2::Commit<'a>,
    pub(super) tree: &'a git2::Tree<'a>,
    pub(super) message: &'a str,
    pub(super) refname: &'a str,
    /// The reflog message.
    pub(super) log: String,
}

impl NewCommit<'_> {
    /// Commit and move the branch (compare-and-swap: only from what was
    /// judged); re-running finalize keeps the same commit when nothing
    /// changed. The commit, whether it was kept, and the commit replaced.
    pub(super) fn write(
        &self,
        repo: &git2::Repository,
        existing: branch::Existing,
    ) -> Result<(git2::Oid, bool, Option<String>), FinalizeError> {
        if let branch::Existing::Own(id) = existing {
            if same_commit(
                &repo.find_commit(id)?,
                self.parent.id(),
                self.tree.id(),
                self.message,
            ) {
                return Ok((id, true, None));
            }
        }
        let sig = repo
            .signature()
            .or_else(|_| git2::Signature::now("rascal", "rascal@localhost"))?;
        let commit = repo.commit(None, &sig, &sig, self.message, self.tree, &[self.parent])?;
        // Compare-and-swap: the branch moves only from what was judged.
        let replaced = match existing {
            branch::Existing::Own(old) => {
                repo.reference_matching(self.refname, commit, true, old, &self.log)?;
                Some(old.to_string())
            }
            _ => {
                repo.reference(self.refname, commit, false, &self.log)?;
                None
            }
        };
        Ok((commit, false, replaced))
    }
}

/// Whether `commit` is what finalize would write now: same parent, tree
/// and message.
fn same_commit(commit: &git2::Commit, parent: git2::Oid, tree: git2::Oid, message: &str) -> bool {
    commit.parent_ids().collect::<Vec<_>>() == [parent]
        && commit.tree_id() == tree
        && commit.message_raw_bytes() == message.as_bytes()
}
