//! git2 access: open the repository, resolve the base commit, read files from
//! the base tree, create candidate workspaces, and turn a working tree into a
//! `ChangeSet` (tracked changes and untracked files alike).
//!
//! A candidate's workspace is a standalone repository holding only the base
//! snapshot (one commit, marked shallow: no other candidate's refs, no later
//! commit), outside the user's repository. git works inside it, in a
//! container too. rascal never trusts it: the change is always computed in
//! the user's repository (its objects and ignore rules) against the
//! workspace's files, so nothing an agent does to its own `.git` (index
//! flags, objects, config, hooks) changes what is checked.
//!
//! Each changed file is read once: the same bytes feed the checks that read
//! content, the digest and, for a candidate, the change tree
//! ([`candidate_change`]).

use git2::{Delta, DiffFindOptions, DiffOptions, Oid, Repository};
use rascal_core::model::changeset::{
    AddedLine, ChangeSet, ContentDigest, EntryKind, FileChange, Operation, Part,
};
use rascal_core::model::content::is_text;
use rascal_core::model::likeness::{self, Building, Likeness};
use std::path::{Path, PathBuf};

pub use crate::git::repo::{open, Result, WorkspaceError};

mod create;
mod diff_text;
mod reading;
mod state;

pub use create::create_workspace;
#[cfg(test)]
use diff_text::MAX_DIFF_FILE;
pub use diff_text::{diff_text, tree_diff_text, trees_diff_text};
use reading::{blob_text, Reading};
pub(crate) use state::size_at;
pub use state::{
    files_dir, mark_owner, read_at, resolve, state_dir, state_root, workdir, workspace_path,
    OWNER_FILE,
};

/// A changed file of a streamed change is diffed against its base blob by
/// git when both are at most this big; a larger one is read like a new file
/// (every line counted as added), so what git's diff holds stays small.
pub(crate) const DIFF_WHOLE: u64 = 256 * 1024;

/// How much of each file the ChangeSet holds. Text files are held whole
/// (every added line, never cut); a binary file is held up to
/// `max_binary_bytes`, and the secret scan names the rest as unscanned.
#[derive(Debug, Clone)]
pub struct ChangeSetLimits {
    pub max_binary_bytes: u64,
}

impl Default for ChangeSetLimits {
    fn default() -> Self {
        ChangeSetLimits {
            max_binary_bytes: 16 * 1024 * 1024,
        }
    }
}

/// The diff of `repo`'s working tree (tracked, staged and untracked files)
/// against commit `base`, renames found. One definition for the ChangeSet
/// and the diff text, so reviewers read exactly the change the layers judged.
fn working_diff(repo: &Repository, base: Oid, context_lines: u32) -> Result<git2::Diff<'_>> {
    let tree = repo.find_commit(base)?.tree()?;
    let mut opts = DiffOptions::new();
    // `.gitattributes` in the change could mark text as binary (`-diff`) to
    // hide its lines from every check: attributes are not honoured here;
    // binary is decided from the content itself.
    opts.force_text(true)
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .show_untracked_content(true)
        .include_typechange(true)
        .ignore_submodules(false)
        .context_lines(context_lines);
    // The tree against the files themselves: the index (and any flag an
    // agent set in it: assume-unchanged, skip-worktree) plays no part.
    let mut diff = repo.diff_tree_to_workdir(Some(&tree), Some(&mut opts))?;
    let mut find = DiffFindOptions::new();
    find.renames(true)
        .for_untracked(true)
        .renames_from_rewrites(true)
        .rename_threshold(50);
    diff.find_similar(Some(&mut find))?;
    Ok(diff)
}

/// The user's repository at `origin`, looking at the files in `dir` (a
/// candidate's workspace, or `origin` itself). Objects, configuration and
/// `info/exclude` are the user's; whatever `dir/.git` holds is never read.
fn viewing(origin: &Path, dir: &Path) -> Result<Repository> {
    let repo = open(origin)?;
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    if repo.workdir().map(canon) != Some(canon(dir)) {
        repo.set_workdir(dir, false)?;
    }
    Ok(repo)
}

/// The change of the files in `dir` against commit `base` of the repository
/// at `origin`: every file whose content differs from the base tree, and
/// new, non-ignored files. `dir` is a candidate's workspace, or `origin`'s
/// own working tree (`rascal check`). Every file's content is held.
pub fn changeset(origin: &Path, dir: &Path, base: Oid) -> Result<ChangeSet> {
    changeset_with(origin, dir, base, &ChangeSetLimits::default())
}

pub fn changeset_with(
    origin: &Path,
    dir: &Path,
    base: Oid,
    limits: &ChangeSetLimits,
) -> Result<ChangeSet> {
    compute(origin, dir, base, limits, Mode::Whole, Candidate::default())
}

/// The same ChangeSet, read as a stream: each file's content is read once,
/// handed to `read` (the checks that read content), then let go — only its
/// digest stays ([`FileChange::release_content`]). At most one file's
/// content is held at a time; files come in path order, as in the
/// ChangeSet. With no `read` (no check reads content), lines are counted
/// and digested as they are read, never held.
pub fn changeset_streamed(
    origin: &Path,
    dir: &Path,
    base: Oid,
    limits: &ChangeSetLimits,
    read: Option<&mut dyn FnMut(&FileChange)>,
) -> Result<ChangeSet> {
    let mode = match read {
        Some(read) => Mode::Stream(read),
        None => Mode::Count,
    };
    compute(origin, dir, base, limits, mode, Candidate::default())
}

/// A candidate's change, streamed ([`changeset_streamed`]) and written as
/// it is read: each file of the workspace `dir` is read once, and the same
/// bytes go to `read` (the checks that read content), into the content
/// digest, and into the change tree (written into the workspace's store:
/// [`crate::git::tree::ChangeTree`]) — what the checks saw is exactly what
/// every receipt names and finalize commits, whatever happens to the file
/// after. Held-out paths are left out before anything reads them. Each
/// file keeps its bounded [`rascal_core::model::likeness::Likeness`] for the
/// comparator.
pub fn candidate_change(
    origin: &Path,
    dir: &Path,
    base: Oid,
    limits: &ChangeSetLimits,
    holdout: &crate::git::holdout::Holdout,
    read: Option<&mut dyn FnMut(&FileChange)>,
) -> Result<ChangeSet> {
    let mode = match read {
        Some(read) => Mode::Stream(read),
        None => Mode::Count,
    };
    let extras = Candidate {
        holdout: Some(holdout),
        tree: true,
        likeness: true,
    };
    compute(origin, dir, base, limits, mode, extras)
}

/// A candidate's change as the comparator needs it (the other candidates'
/// at a retry): streamed, each file's likeness kept, no tree written.
pub fn comparable_change(
    origin: &Path,
    dir: &Path,
    base: Oid,
    holdout: &crate::git::holdout::Holdout,
) -> Result<ChangeSet> {
    let extras = Candidate {
        holdout: Some(holdout),
        tree: false,
        likeness: true,
    };
    compute(origin, dir, base, &Default::default(), Mode::Count, extras)
}

/// What becomes of each file's content.
enum Mode<'r> {
    /// Held in the ChangeSet.
    Whole,
    /// Handed to a reader, then let go.
    Stream(&'r mut dyn FnMut(&FileChange)),
    /// Counted and digested, never held.
    Count,
}

/// What reading a candidate's change also does.
#[derive(Default)]
struct Candidate<'h> {
    /// Paths left out of the change (held-out tests).
    holdout: Option<&'h crate::git::holdout::Holdout>,
    /// Write each file's blob from the bytes read, then the change tree.
    tree: bool,
    /// Keep each file's likeness for the comparator.
    likeness: bool,
}

/// Where a changed file's content comes from.
#[derive(Clone, Copy)]
enum Source {
    /// A delta of the working diff, with its base blob (None for a new
    /// file): all that reading the content needs of the diff, which is let
    /// go before the content is read.
    Delta(Option<Oid>),
    /// A file the working tree's own ignore rules hid from git: read
    /// straight from the working tree.
    Hidden,
}

/// What changed against `base` (paths, operations, kinds), no content
/// yet: the working diff's deltas and the files the working tree's own
/// ignore rules hid, less what the base ignores and the held-out paths,
/// sorted by path.
fn changed_files(
    repo: &Repository,
    workdir: &Path,
    base: Oid,
    holdout: Option<&crate::git::holdout::Holdout>,
) -> Result<Vec<(FileChange, Source)>> {
    // Before the working diff, not beside it: finding them is a second
    // diff of the whole working tree, let go once they are listed.
    let hidden = ignored_files(repo, base)?;
    let diff = working_diff(repo, base, 0)?;

    let mut files: Vec<(FileChange, Source)> = Vec::with_capacity(diff.deltas().len());
    for delta in diff.deltas() {
        let old = Some(delta.old_file().id()).filter(|id| !id.is_zero());
        files.push((describe(repo, workdir, &delta), Source::Delta(old)));
    }
    // The deltas (a hundred bytes a file, and their paths) are not needed
    // any more: let them go before the content is read.
    drop(diff);
    // Only the base commit's ignore rules decide what is left out: a new
    // path the base ignores (`target/`) is not part of the change, even when
    // the candidate deleted the `.gitignore` that said so; a file hidden
    // only by a `.gitignore` (or exclude) the candidate wrote is.
    let ignores = crate::git::ignore::BaseIgnores::of(repo, base)?;
    files.retain(|(f, _)| {
        !(f.op == Operation::Create
            && ignores.ignored(&f.path, f.new_kind == Some(EntryKind::Submodule)))
    });
    for path in hidden {
        if !ignores.ignored(&path, false) {
            files.push((hidden_file(workdir, &path), Source::Hidden));
        }
    }
    if let Some(h) = holdout.filter(|h| !h.is_empty()) {
        files.retain(|(f, _)| !f.paths().any(|p| h.holds(p)));
    }
    files.sort_by(|a, b| a.0.path.cmp(&b.0.path));
    Ok(files)
}

/// Write the change tree: every changed path taken out first, then the
/// new entries put in. Its id.
fn write_tree(
    mut t: crate::git::tree::ChangeTree,
    files: &[FileChange],
    entries: Vec<Option<(Oid, u32)>>,
) -> Result<String> {
    // Every path taken out first, then the new entries put in: a
    // rename's old path may be a new file of its own (`git mv a z`,
    // then a new `a`), which a later removal must not take out.
    for change in files {
        t.remove(change)?;
    }
    for (change, entry) in files.iter().zip(entries) {
        if let Some((oid, file_mode)) = entry {
            t.add(&change.path, oid, file_mode)?;
        }
    }
    Ok(t.finish()?.to_string())
}

/// A candidate's change against `base`: what changed, then each file's
/// content read once (kept, streamed or counted as `mode` says), with the
/// change tree and likeness when `extras` asks.
fn compute(
    origin: &Path,
    dir: &Path,
    base: Oid,
    limits: &ChangeSetLimits,
    mut mode: Mode<'_>,
    extras: Candidate<'_>,
) -> Result<ChangeSet> {
    let repo = viewing(origin, dir)?;
    let workdir = workdir(&repo);
    let files = changed_files(&repo, &workdir, base, extras.holdout)?;

    // Then the content, one file at a time, each read once.
    let tree = match extras.tree && !files.is_empty() {
        true => Some(crate::git::tree::ChangeTree::open(origin, dir, base)?),
        false => None,
    };
    let mut budget = likeness::TEXT_BUDGET;
    let lines = !matches!(mode, Mode::Count) || extras.likeness;
    let streamed = !matches!(mode, Mode::Whole);
    // The list of what changed becomes the ChangeSet's own list in place
    // (same allocation, no second list of 100,000 entries), each entry
    // filled with its content in turn.
    let mut sources = Vec::with_capacity(files.len());
    let mut files: Vec<FileChange> = files
        .into_iter()
        .map(|(f, s)| {
            sources.push(s);
            f
        })
        .collect();
    files.shrink_to_fit();
    // Each file's entry in the change tree, added once the diff is gone.
    // (Only when a tree is written: the comparator's reading has none.)
    let mut entries: Vec<Option<(Oid, u32)>> = Vec::new();
    if tree.is_some() {
        entries.reserve_exact(files.len());
    }
    for (change, source) in files.iter_mut().zip(sources) {
        let at = Reading {
            repo: &repo,
            workdir: &workdir,
            limits,
            lines,
            store: tree.as_ref().map(|t| t.store()),
        };
        // A regular file of a streamed change is handed to the checks (and
        // the likeness) in bounded windows as it is read; everything else
        // (small by nature: a link, a gitlink, a deletion) at once, below.
        let windowed = streamed && is_regular(change.new_kind);
        let taken = if windowed {
            let mut building = extras.likeness.then(|| Building::new(change, budget));
            let reads = building.is_some() || matches!(mode, Mode::Stream(_));
            let mut feed = |c: &FileChange| {
                if let Some(b) = building.as_mut() {
                    b.lines(c);
                }
                if let Mode::Stream(read) = &mut mode {
                    read(c);
                }
            };
            let sink: crate::git::windows::Sink = if reads { Some(&mut feed) } else { None };
            let taken = at.stream(source, change, sink)?;
            if let Some(b) = building {
                change.likeness = Some(b.finish(change, &mut budget));
            }
            taken
        } else {
            at.content(source, change)?
        };
        settle_op(change);
        if tree.is_some() {
            entries.push(taken.entry);
        }
        if extras.likeness && !windowed {
            change.likeness = Some(Likeness::of(change, &mut budget));
        }
        match &mut mode {
            Mode::Whole => {}
            Mode::Stream(read) => {
                if !windowed {
                    read(change);
                }
                change.release_content(taken.digest);
            }
            Mode::Count => change.release_content(taken.digest),
        }
    }
    let tree = match tree {
        Some(t) => write_tree(t, &files, entries)?,
        None => String::new(),
    };
    Ok(ChangeSet {
        base: base.to_string(),
        files,
        tree,
    })
}

/// What one delta of the working diff changed: paths, operation, kinds,
/// size, a symlink's target — not the content.
fn describe(repo: &Repository, workdir: &Path, delta: &git2::DiffDelta<'_>) -> FileChange {
    let new = delta.new_file();
    let old = delta.old_file();
    let path = new
        .path()
        .or(old.path())
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let old_kind = EntryKind::from_mode(u32::from(old.mode()));
    let mut new_kind = EntryKind::from_mode(u32::from(new.mode()));
    // git does not descend into an untracked nested repository: it shows
    // as one `dir/` entry. That is a submodule in all but name.
    let path = if path.ends_with('/') && delta.status() == Delta::Untracked {
        new_kind = Some(EntryKind::Submodule);
        path.trim_end_matches('/').to_string()
    } else {
        path
    };
    let (op, old_path, old_kind, new_kind) = match delta.status() {
        Delta::Added | Delta::Untracked => (Operation::Create, None, None, new_kind),
        Delta::Deleted => (Operation::Delete, None, old_kind, None),
        Delta::Renamed | Delta::Copied => (
            Operation::Rename,
            old.path().map(|p| p.to_string_lossy().into_owned()),
            old_kind,
            new_kind,
        ),
        // A pure mode change is told apart once lines are counted.
        _ => (Operation::Modify, None, old_kind, new_kind),
    };
    // New to the base (the index, which an agent controls, plays no
    // part: a renamed file is a rename whether or not it was staged).
    let untracked = delta.status() == Delta::Untracked;
    let symlink_target = if new_kind == Some(EntryKind::Symlink) {
        std::fs::read_link(workdir.join(&path))
            .ok()
            .map(|t| t.to_string_lossy().into_owned())
            .or_else(|| blob_text(repo, new.id()))
    } else {
        None
    };
    let size = if new_kind.is_some() {
        std::fs::symlink_metadata(workdir.join(&path))
            .map(|m| m.len())
            .unwrap_or(new.size())
    } else {
        0
    };
    let mut change = FileChange::new(path, op);
    change.old_path = old_path;
    change.old_kind = old_kind;
    change.new_kind = new_kind;
    change.symlink_target = symlink_target;
    change.untracked = untracked;
    change.size = size;
    change
}

/// A change that only made a file executable (or not) is a mode change,
/// once its lines are counted.
fn settle_op(change: &mut FileChange) {
    if change.op == Operation::Modify
        && change.added == 0
        && change.removed == 0
        && change.mode_changed()
    {
        change.op = Operation::Mode;
    }
}

fn is_regular(kind: Option<EntryKind>) -> bool {
    matches!(kind, Some(EntryKind::File | EntryKind::Executable))
}

/// Files in the working tree that its own ignore rules leave out, and
/// that the base does not have. Listed against no tree at all: nothing is
/// compared, so no file is read (the working diff already found what
/// changed among the base's files).
fn ignored_files(repo: &Repository, base: Oid) -> Result<Vec<String>> {
    let tree = repo.find_commit(base)?.tree()?;
    let mut opts = DiffOptions::new();
    // Into new directories too: a new directory's own `.gitignore` must
    // not hide the files beside it.
    opts.include_ignored(true)
        .recurse_ignored_dirs(true)
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .ignore_submodules(true);
    let diff = repo.diff_tree_to_workdir(None, Some(&mut opts))?;
    Ok(diff
        .deltas()
        .filter(|d| d.status() == Delta::Ignored)
        .filter_map(|d| {
            d.new_file()
                .path()
                .map(|p| p.to_string_lossy().into_owned())
        })
        .filter(|p| !p.ends_with('/'))
        .filter(|p| tree.get_path(Path::new(p)).is_err())
        .collect())
}

/// A new file that its own ignore rules hid from git, as found in the
/// working tree (its content is read later, with the others).
fn hidden_file(workdir: &Path, path: &str) -> FileChange {
    let full = workdir.join(path);
    let meta = std::fs::symlink_metadata(&full).ok();
    let mut change = FileChange::new(path, Operation::Create);
    change.untracked = true;
    change.size = meta.as_ref().map(|m| m.len()).unwrap_or(0);
    let kind = match &meta {
        Some(m) if m.file_type().is_symlink() => EntryKind::Symlink,
        Some(m) => {
            use std::os::unix::fs::PermissionsExt;
            if m.permissions().mode() & 0o111 != 0 {
                EntryKind::Executable
            } else {
                EntryKind::File
            }
        }
        None => EntryKind::File,
    };
    change.new_kind = Some(kind);
    if kind == EntryKind::Symlink {
        change.symlink_target = std::fs::read_link(&full)
            .ok()
            .map(|t| t.to_string_lossy().into_owned());
        change.added = 1;
    }
    change
}

#[cfg(test)]
mod bounded_tests;
