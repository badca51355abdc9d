//! The unified diff text of a change, for reviewers, receipts and the
//! diff view, bounded in size.

use super::*;

/// The unified diff text of the files in `dir` against `base` of the
/// repository at `origin` (for reviewers, receipts and the diff view): the
/// same change `changeset` reads.
pub fn diff_text(origin: &Path, dir: &Path, base: Oid) -> Result<String> {
    let repo = viewing(origin, dir)?;
    let diff = working_diff(&repo, base, 3)?;
    bounded_patch(&repo, &diff)
}

/// The most bytes of diff text rascal builds (for reviewers, receipts and
/// the diff view); past it, each further file is named with its counts.
pub(crate) const MAX_DIFF_TEXT: usize = 8 * 1024 * 1024;

/// A file whose old or new side is bigger than this is not shown line by
/// line in the diff text: it is named, with its size (the checks read it
/// all).
pub(crate) const MAX_DIFF_FILE: u64 = 2 * 1024 * 1024;

/// The unified diff text of `diff`, one file at a time, bounded: a file
/// with a side over [`MAX_DIFF_FILE`] bytes is named, not shown, and once
/// the text reaches [`MAX_DIFF_TEXT`] bytes the remaining files are only
/// named — never a silent cut: each says what is left out.
pub(super) fn bounded_patch(repo: &Repository, diff: &git2::Diff<'_>) -> Result<String> {
    let mut out: Vec<u8> = Vec::new();
    let mut left_out = 0usize;
    let odb = repo.odb()?;
    let size = |f: git2::DiffFile<'_>, workdir: Option<&Path>| -> u64 {
        if f.id().is_zero() {
            return f.size();
        }
        match odb.read_header(f.id()) {
            Ok((n, _)) => n as u64,
            Err(_) => match (workdir, f.path()) {
                (Some(w), Some(p)) => std::fs::symlink_metadata(w.join(p))
                    .map(|m| m.len())
                    .unwrap_or(f.size()),
                _ => f.size(),
            },
        }
    };
    for (idx, delta) in diff.deltas().enumerate() {
        let path = delta
            .new_file()
            .path()
            .or(delta.old_file().path())
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let big = size(delta.old_file(), None).max(size(delta.new_file(), repo.workdir()))
            > MAX_DIFF_FILE;
        if big || out.len() >= MAX_DIFF_TEXT {
            if big {
                out.extend_from_slice(
                    format!(
                        "diff --git a/{path} b/{path}\n# rascal: {path} is over {MAX_DIFF_FILE} bytes: not shown here (the checks read all of it)\n"
                    )
                    .as_bytes(),
                );
            } else {
                left_out += 1;
            }
            continue;
        }
        let Some(mut patch) = git2::Patch::from_diff(diff, idx)? else {
            continue;
        };
        patch.print(&mut |_, _, line| {
            if matches!(line.origin(), '+' | '-' | ' ') {
                out.push(line.origin() as u8);
            }
            out.extend_from_slice(line.content());
            true
        })?;
    }
    if left_out > 0 {
        out.extend_from_slice(
            format!(
                "# rascal: the diff text stops at {MAX_DIFF_TEXT} bytes: {left_out} more changed files are not shown here (the checks read all of them)\n"
            )
            .as_bytes(),
        );
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The unified diff text of a candidate's change tree `tree` (written into
/// the workspace `ws`'s store as the change was read) against `base` of the
/// repository at `origin`: the bytes the checks read and finalize commits,
/// never the live workspace read again. Objects come from the workspace's
/// store (every hash checked) or the user's repository.
pub fn tree_diff_text(origin: &Path, ws: &Path, base: Oid, tree: Oid) -> Result<String> {
    let user = open(origin)?;
    let store = crate::git::tree::workspace_store(ws)?;
    store
        .odb()?
        .add_disk_alternate(&user.commondir().join("objects").to_string_lossy())?;
    let old = user.find_commit(base)?.tree_id();
    trees_diff_text(&store, old, tree)
}

/// The unified diff text from tree `old` to tree `new`, both read from
/// `repo` (renames found, bounded like every diff text rascal shows).
pub fn trees_diff_text(repo: &Repository, old: Oid, new: Oid) -> Result<String> {
    let old = repo.find_tree(old)?;
    let new = repo.find_tree(new)?;
    let mut opts = DiffOptions::new();
    opts.force_text(true)
        .include_typechange(true)
        .ignore_submodules(false)
        .context_lines(3);
    let mut diff = repo.diff_tree_to_tree(Some(&old), Some(&new), Some(&mut opts))?;
    let mut find = DiffFindOptions::new();
    find.renames(true)
        .renames_from_rewrites(true)
        .rename_threshold(50);
    diff.find_similar(Some(&mut find))?;
    bounded_patch(repo, &diff)
}
