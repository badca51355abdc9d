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

use crate::model::changeset::{
    AddedLine, ChangeSet, ContentDigest, EntryKind, FileChange, Operation, Part,
};
use crate::model::content::is_text;
use git2::{Delta, DiffFindOptions, DiffOptions, Oid, Repository};
use std::path::{Path, PathBuf};

pub use crate::git::repo::{open, Result, WorkspaceError};

/// The top of the working tree of `repo`.
pub fn workdir(repo: &Repository) -> PathBuf {
    repo.workdir()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| repo.path().to_path_buf())
}

/// The directory rascal keeps its state in: `<git common dir>/rascal`.
pub fn state_dir(repo: &Repository) -> PathBuf {
    repo.commondir().join("rascal")
}

/// Resolve `reference` (branch, tag, sha, HEAD~1…) to a commit id.
pub fn resolve(repo: &Repository, reference: &str) -> Result<Oid> {
    if reference == "HEAD" && repo.head().is_err() {
        return Err(WorkspaceError::NoCommits {
            repo: workdir(repo),
        });
    }
    repo.revparse_single(reference)
        .and_then(|o| o.peel_to_commit())
        .map(|c| c.id())
        .map_err(|_| WorkspaceError::BadRef {
            reference: reference.to_string(),
            repo: workdir(repo),
        })
}

/// Read a file from the base commit's tree; `None` when it is absent there.
pub fn read_at(repo: &Repository, base: Oid, path: &str) -> Result<Option<Vec<u8>>> {
    let tree = repo.find_commit(base)?.tree()?;
    let entry = match tree.get_path(Path::new(path)) {
        Ok(e) => e,
        Err(_) => return Ok(None),
    };
    let object = entry.to_object(repo)?;
    Ok(object.as_blob().map(|b| b.content().to_vec()))
}

/// The size in bytes of `path`'s blob at commit `base` (None when absent),
/// from the object's header: a huge blob is never loaded to learn it.
pub fn size_at(repo: &Repository, base: Oid, path: &str) -> Result<Option<usize>> {
    let tree = repo.find_commit(base)?.tree()?;
    let Ok(entry) = tree.get_path(Path::new(path)) else {
        return Ok(None);
    };
    let (size, _) = repo.odb()?.read_header(entry.id())?;
    Ok(Some(size))
}

/// Where rascal keeps a repository's workspaces and run files, outside the
/// repository: `$XDG_STATE_HOME/rascal/<repo-id>` (default
/// `~/.local/state/rascal/<repo-id>`). The store stays in `state_dir`.
pub fn files_dir(repo: &Repository) -> PathBuf {
    state_root().join(repo_id(repo))
}

/// The name of the file in a repository's files directory that says which
/// repository it belongs to (`rascal gc --orphans` reads it).
pub const OWNER_FILE: &str = "repository";

/// Write `OWNER_FILE` in `repo`'s files directory (creating it): the
/// repository's git directory, so a later `gc --orphans` can tell the
/// repository is gone. Best effort: a failure only makes the directory one
/// `--orphans` cannot judge.
pub fn mark_owner(repo: &Repository) {
    let dir = files_dir(repo);
    let common =
        std::fs::canonicalize(repo.commondir()).unwrap_or_else(|_| repo.commondir().to_path_buf());
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(dir.join(OWNER_FILE), common.to_string_lossy().as_bytes());
    }
}

/// Where every repository's files directory is: `$XDG_STATE_HOME/rascal`
/// (default `~/.local/state/rascal`).
pub fn state_root() -> PathBuf {
    let root = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".local").join("state"))
        })
        .unwrap_or_else(std::env::temp_dir);
    root.join("rascal")
}

/// A stable, readable id of a repository: its directory name and a digest
/// of where it lives.
pub fn repo_id(repo: &Repository) -> String {
    let common =
        std::fs::canonicalize(repo.commondir()).unwrap_or_else(|_| repo.commondir().to_path_buf());
    let top = workdir(repo);
    let name: String = top
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repo".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let digest = crate::digest::digest(common.to_string_lossy().as_bytes());
    format!("{name}-{}", &digest[..12])
}

/// The workspace directory of one candidate.
pub fn workspace_path(files: &Path, run: &str, candidate: &str) -> PathBuf {
    files.join("workspaces").join(run).join(candidate)
}

/// Create (or recreate) the workspace of one candidate: a standalone
/// repository at `path` whose only commit is `base` (copied object by object
/// from `repo`, marked shallow), checked out on branch `rascal`. A leftover
/// directory (from a killed run) is removed first. With held-out tests, the
/// only commit is the base's tree without them (their objects are never
/// copied, so not even git can show them to the agent).
pub fn create_workspace(
    repo: &Repository,
    base: Oid,
    path: &Path,
    holdout: &crate::git::holdout::Holdout,
) -> Result<PathBuf> {
    let io = |what: String| move |source| WorkspaceError::Io { what, source };
    if std::fs::symlink_metadata(path).is_ok() {
        crate::git::beneath::remove_path(path).map_err(io(format!(
            "removing leftover workspace {}",
            path.display()
        )))?;
    }
    std::fs::create_dir_all(path).map_err(io(format!("creating {}", path.display())))?;
    let ws = Repository::init(path)?;
    {
        let from = repo.odb()?;
        let to = ws.odb()?;
        let commit = repo.find_commit(base)?;
        let copy = |oid: Oid| -> Result<()> {
            if to.exists(oid) {
                return Ok(());
            }
            let obj = from.read(oid)?;
            to.write(obj.kind(), obj.data())?;
            Ok(())
        };
        let tree = commit.tree()?;
        // With held-out tests, no object that names them (the base commit,
        // its trees) is copied: only the blobs the agent may see.
        let whole = holdout.is_empty();
        if whole {
            copy(base)?;
            copy(tree.id())?;
        }
        let mut failed = None;
        let mut kept = Vec::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            let path = format!("{dir}{}", entry.name().unwrap_or(""));
            // Gitlinks (submodules) point into other repositories.
            if entry.kind() == Some(git2::ObjectType::Commit) {
                kept.push((path, entry.id(), entry.filemode()));
                return git2::TreeWalkResult::Skip;
            }
            if entry.kind() == Some(git2::ObjectType::Blob) {
                if holdout.holds(&path) {
                    return git2::TreeWalkResult::Ok;
                }
                kept.push((path, entry.id(), entry.filemode()));
            } else if !whole {
                return git2::TreeWalkResult::Ok;
            }
            if let Err(e) = copy(entry.id()) {
                failed = Some(e);
                return git2::TreeWalkResult::Abort;
            }
            git2::TreeWalkResult::Ok
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        if !whole {
            return held_out_workspace(&ws, path, kept);
        }
    }
    // Only the base snapshot: its parents are not here, and git knows it.
    std::fs::write(ws.path().join("shallow"), format!("{base}\n")).map_err(io(format!(
        "writing {}",
        ws.path().join("shallow").display()
    )))?;
    let commit = ws.find_commit(base)?;
    ws.branch("rascal", &commit, true)?;
    ws.set_head("refs/heads/rascal")?;
    let mut checkout = git2::build::CheckoutBuilder::new();
    checkout.force();
    ws.checkout_head(Some(&mut checkout))?;
    Ok(path.to_path_buf())
}

/// Finish a workspace whose base lacks the held-out tests: a parentless
/// commit of the `kept` entries (the copied objects), checked out.
fn held_out_workspace(
    ws: &Repository,
    path: &Path,
    kept: Vec<(String, Oid, i32)>,
) -> Result<PathBuf> {
    let mut index = git2::Index::new()?;
    for (p, id, mode) in kept {
        index.add(&git2::IndexEntry {
            ctime: git2::IndexTime::new(0, 0),
            mtime: git2::IndexTime::new(0, 0),
            dev: 0,
            ino: 0,
            mode: mode as u32,
            uid: 0,
            gid: 0,
            file_size: 0,
            id,
            flags: (p.len().min(0xfff)) as u16,
            flags_extended: 0,
            path: p.into_bytes(),
        })?;
    }
    let tree = ws.find_tree(index.write_tree_to(ws)?)?;
    let sig = git2::Signature::new("rascal", "rascal@localhost", &git2::Time::new(0, 0))?;
    let commit = ws.commit(
        None,
        &sig,
        &sig,
        "rascal: the base commit, without held-out tests",
        &tree,
        &[],
    )?;
    let commit = ws.find_commit(commit)?;
    ws.branch("rascal", &commit, true)?;
    ws.set_head("refs/heads/rascal")?;
    let mut checkout = git2::build::CheckoutBuilder::new();
    checkout.force();
    ws.checkout_head(Some(&mut checkout))?;
    Ok(path.to_path_buf())
}

/// Remove the workspaces of run `run` (all of its candidates).
pub fn remove_workspaces(files: &Path, run: &str) -> Result<()> {
    let dir = files.join("workspaces").join(run);
    if std::fs::symlink_metadata(&dir).is_ok() {
        crate::git::beneath::remove_path(&dir).map_err(|source| WorkspaceError::Io {
            what: format!("removing {}", dir.display()),
            source,
        })?;
    }
    Ok(())
}

/// A changed file of a streamed change is diffed against its base blob by
/// git when both are at most this big; a larger one is read like a new file
/// (every line counted as added), so what git's diff holds stays small.
pub const DIFF_WHOLE: u64 = 256 * 1024;

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
/// file keeps its bounded [`crate::model::likeness::Likeness`] for the
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
    let mut budget = crate::model::likeness::TEXT_BUDGET;
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
            let mut building = extras
                .likeness
                .then(|| crate::model::likeness::Building::new(change, budget));
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
            change.likeness = Some(crate::model::likeness::Likeness::of(change, &mut budget));
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

/// What reading one file's content gave.
#[derive(Default)]
struct Taken {
    /// The content's digest, when taken as the file was read.
    digest: Option<String>,
    /// Its entry in the change tree (blob or gitlink id, file mode), when
    /// one is being written.
    entry: Option<(Oid, u32)>,
}

/// How the files of one change are read.
struct Reading<'a> {
    repo: &'a Repository,
    workdir: &'a Path,
    limits: &'a ChangeSetLimits,
    /// Build the added lines (else only count them, for a new file).
    lines: bool,
    /// The workspace's store, when the change tree is being written.
    store: Option<&'a Repository>,
}

impl Reading<'_> {
    /// The content of one changed file. A regular file is read once, from
    /// the working tree: those bytes are classified (text or binary), give
    /// the added lines (all of a new file's; a changed file's through git's
    /// diff of the base blob against them) and the digest, and become the
    /// file's blob. A symlink's target (read once, when the change was
    /// described) is its content; a deleted file's lines come from the base.
    fn content(&self, source: Source, change: &mut FileChange) -> Result<Taken> {
        let old = self.old_blob(source);
        match change.new_kind {
            None => {
                // Deleted: its removed lines, from the base blob.
                let counted = matches!(
                    change.old_kind,
                    Some(EntryKind::File | EntryKind::Executable | EntryKind::Symlink)
                );
                if let (Some(old), true) = (old, counted) {
                    self.count(Some(old), &[], change)?;
                }
                Ok(Taken::default())
            }
            Some(EntryKind::Submodule) => {
                let entry = match self.store {
                    Some(_) => {
                        let full = crate::git::tree::inside(self.workdir, &change.path)?;
                        Some((crate::git::tree::submodule_head(&full)?, 0o160000))
                    }
                    None => None,
                };
                Ok(Taken {
                    digest: None,
                    entry,
                })
            }
            Some(EntryKind::Symlink) => {
                let entry = match (self.store, &change.symlink_target) {
                    (Some(_), None) => {
                        return Err(unreadable(
                            &self.workdir.join(&change.path),
                            std::io::Error::other("its target could not be read"),
                        ))
                    }
                    (Some(store), Some(t)) => Some((store.blob(t.as_bytes())?, 0o120000)),
                    (None, _) => None,
                };
                if matches!(source, Source::Delta(_)) {
                    let old = old.filter(|_| change.old_kind != Some(EntryKind::Submodule));
                    let target = change.symlink_target.clone().unwrap_or_default();
                    self.count(old, target.as_bytes(), change)?;
                }
                Ok(Taken {
                    digest: None,
                    entry,
                })
            }
            Some(kind) => {
                let file = self.read(change)?;
                let entry = file.blob.map(|b| (b, file_mode(Some(kind))));
                if file.binary {
                    change.binary = true;
                    change.content = Some(file.bytes.into());
                    return Ok(Taken {
                        digest: None,
                        entry,
                    });
                }
                let new_file = change.op == Operation::Create && change.old_kind.is_none();
                if new_file || matches!(source, Source::Hidden) {
                    let (added, digest) =
                        text_lines(&file.bytes, self.lines.then_some(&mut change.added_lines));
                    change.added = added;
                    return Ok(Taken {
                        digest: Some(digest),
                        entry,
                    });
                }
                // A file where a submodule was: every line is new (a
                // gitlink has no lines to diff against).
                let old = old.filter(|_| change.old_kind != Some(EntryKind::Submodule));
                self.count(old, &file.bytes, change)?;
                Ok(Taken {
                    digest: None,
                    entry,
                })
            }
        }
    }

    /// A regular file of a streamed change, read once in bounded windows
    /// ([`crate::git::windows`]): its bytes go into its blob (when one is
    /// written), into the content digest, and — as added lines, or a binary
    /// file's bytes — window by window to `sink`; none of it is held once
    /// read. A new file's lines are all added; a changed file small enough
    /// on both sides ([`DIFF_WHOLE`]) is diffed against its base blob by
    /// git; a larger changed file is read like a new one — every line
    /// counted as added, so the checks read more, never less — and its
    /// removed lines are those of the base blob.
    fn stream(
        &self,
        source: Source,
        change: &mut FileChange,
        sink: crate::git::windows::Sink<'_>,
    ) -> Result<Taken> {
        use crate::git::windows::{self, LineWindows, NewLines};
        use std::io::{Read, Write};
        let old = self.old_blob(source);
        let (full, mut file) = self.open_changed(change)?;
        let io = |e| unreadable(&full, e);
        let first = Part::WINDOW_BYTES as u64;
        let mut head = Vec::with_capacity(change.size.min(first) as usize + 1);
        (&mut file).take(first).read_to_end(&mut head).map_err(io)?;
        let mut blob = self.store.map(|s| s.blob_writer(None)).transpose()?;
        let mode = file_mode(change.new_kind);
        if !is_text(&change.path, &head) {
            change.binary = true;
            let w = blob.as_mut().map(|w| w as &mut dyn Write);
            let digest = windows::binary(head, &mut file, w, change, sink).map_err(io)?;
            let entry = blob.map(|w| w.commit()).transpose()?.map(|b| (b, mode));
            return Ok(Taken {
                digest: Some(digest),
                entry,
            });
        }
        if let Some(w) = blob.as_mut() {
            w.write_all(&head).map_err(io)?;
        }
        let new_file = (change.op == Operation::Create && change.old_kind.is_none())
            || matches!(source, Source::Hidden);
        // A file where a submodule was: every line is new.
        let old = old
            .filter(|_| !new_file)
            .filter(|_| change.old_kind != Some(EntryKind::Submodule));
        let mut w = LineWindows::new(sink);
        if let Some(old) = old {
            let small = head.len() as u64 <= DIFF_WHOLE
                && self.repo.odb()?.read_header(old)?.0 as u64 <= DIFF_WHOLE;
            // Read one byte past the head: is that the whole file?
            let mut more = Vec::new();
            if small {
                (&mut file).take(1).read_to_end(&mut more).map_err(io)?;
            }
            if small && more.is_empty() {
                let mut digest = ContentDigest::default();
                let (added, removed) =
                    self.diff_lines(Some(old), &head, change, &mut |change, line| {
                        digest.line(line.line, line.text.as_bytes());
                        w.push(change, line);
                    })?;
                change.added = added;
                change.removed = removed;
                settle_op(change);
                w.finish(change);
                let entry = blob.map(|w| w.commit()).transpose()?.map(|b| (b, mode));
                return Ok(Taken {
                    digest: Some(digest.finish(None)),
                    entry,
                });
            }
            head.extend_from_slice(&more);
            change.removed = self.line_count(old)?;
        }
        let mut lines = NewLines::default();
        lines.feed(&head, change, &mut w);
        drop(head);
        let mut buf = vec![0u8; 256 * 1024];
        loop {
            let n = match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io(e)),
            };
            if let Some(b) = blob.as_mut() {
                b.write_all(&buf[..n]).map_err(io)?;
            }
            lines.feed(&buf[..n], change, &mut w);
        }
        let (added, digest) = lines.finish(change, &mut w);
        change.added = u32::try_from(added).unwrap_or(u32::MAX);
        settle_op(change);
        w.finish(change);
        let entry = blob.map(|w| w.commit()).transpose()?.map(|b| (b, mode));
        Ok(Taken {
            digest: Some(digest),
            entry,
        })
    }

    /// The lines of the base blob `old` (what a larger changed file's
    /// removed lines are counted as).
    fn line_count(&self, old: Oid) -> Result<u32> {
        let blob = self.repo.find_blob(old)?;
        let bytes = blob.content();
        let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let n = match bytes.is_empty() {
            true => 0,
            false => body.iter().filter(|&&b| b == b'\n').count() + 1,
        };
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// git's diff of the base blob `old` (none: empty) against `new`: each
    /// added line to `each`; the counts of added and removed lines.
    fn diff_lines(
        &self,
        old: Option<Oid>,
        new: &[u8],
        change: &mut FileChange,
        each: &mut dyn FnMut(&mut FileChange, AddedLine),
    ) -> Result<(u32, u32)> {
        let mut opts = DiffOptions::new();
        opts.force_text(true).context_lines(0);
        let blob = old.map(|id| self.repo.find_blob(id)).transpose()?;
        let patch = match &blob {
            Some(b) => git2::Patch::from_blob_and_buffer(b, None, new, None, Some(&mut opts))?,
            None => git2::Patch::from_buffers(&[], None, new, None, Some(&mut opts))?,
        };
        let (mut added, mut removed) = (0u32, 0u32);
        for h in 0..patch.num_hunks() {
            for l in 0..patch.num_lines_in_hunk(h)? {
                let line = patch.line_in_hunk(h, l)?;
                match line.origin() {
                    '+' => {
                        added += 1;
                        let line = AddedLine {
                            line: line.new_lineno().unwrap_or(0),
                            text: line_text(line.content()),
                        };
                        each(change, line);
                    }
                    '-' => removed += 1,
                    _ => {}
                }
            }
        }
        Ok((added, removed))
    }

    /// Count the lines git's diff of the base blob `old` (none: empty)
    /// against `new` adds and removes; a text file's added lines are kept
    /// with their numbers.
    fn count(&self, old: Option<Oid>, new: &[u8], change: &mut FileChange) -> Result<()> {
        let mut opts = DiffOptions::new();
        opts.force_text(true).context_lines(0);
        let blob = old.map(|id| self.repo.find_blob(id)).transpose()?;
        let patch = match &blob {
            Some(b) => git2::Patch::from_blob_and_buffer(b, None, new, None, Some(&mut opts))?,
            None => git2::Patch::from_buffers(&[], None, new, None, Some(&mut opts))?,
        };
        let keep = is_regular(change.new_kind);
        for h in 0..patch.num_hunks() {
            for l in 0..patch.num_lines_in_hunk(h)? {
                let line = patch.line_in_hunk(h, l)?;
                match line.origin() {
                    '+' => {
                        change.added += 1;
                        if keep {
                            change.added_lines.push(AddedLine {
                                line: line.new_lineno().unwrap_or(0),
                                text: line_text(line.content()),
                            });
                        }
                    }
                    '-' => change.removed += 1,
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// A changed file of the workspace, opened beneath it: no link on the
    /// way is followed, and only a regular file is opened (never a FIFO or
    /// device). Its full path is for messages.
    fn open_changed(&self, change: &FileChange) -> Result<(PathBuf, std::fs::File)> {
        let full = crate::git::tree::inside(self.workdir, &change.path)?;
        let file = crate::git::beneath::Beneath::open(self.workdir)
            .and_then(|b| b.open_file(Path::new(&change.path)))
            .map_err(|e| unreadable(&full, e))?;
        Ok((full, file))
    }

    /// The base blob of a changed file (None for a new one).
    fn old_blob(&self, source: Source) -> Option<git2::Oid> {
        match source {
            Source::Delta(old) => old,
            Source::Hidden => None,
        }
    }

    /// Read the regular file of `change`, once: its first
    /// `max_binary_bytes` decide text or binary; a text file is read whole,
    /// a binary one is held up to the limit and the rest streamed into its
    /// blob (when one is being written), never held. A file that cannot be
    /// read is an error: the checks would not see it.
    fn read(&self, change: &FileChange) -> Result<FileRead> {
        use std::io::Read;
        let (full, mut file) = self.open_changed(change)?;
        let max = self.limits.max_binary_bytes;
        let mut bytes = Vec::with_capacity(change.size.min(max) as usize + 1);
        (&mut file)
            .take(max)
            .read_to_end(&mut bytes)
            .map_err(|e| unreadable(&full, e))?;
        if is_text(&change.path, &bytes) {
            file.read_to_end(&mut bytes)
                .map_err(|e| unreadable(&full, e))?;
            let blob = self.store.map(|s| s.blob(&bytes)).transpose()?;
            return Ok(FileRead {
                bytes,
                binary: false,
                blob,
            });
        }
        let blob = match self.store {
            Some(store) => {
                use std::io::Write;
                let mut w = store.blob_writer(None)?;
                let io = |e| unreadable(&full, e);
                w.write_all(&bytes).map_err(io)?;
                std::io::copy(&mut file, &mut w).map_err(io)?;
                Some(w.commit()?)
            }
            None => None,
        };
        Ok(FileRead {
            bytes,
            binary: true,
            blob,
        })
    }
}

/// One regular file as read: its bytes (a binary file's up to the limit),
/// and its blob when written.
struct FileRead {
    bytes: Vec<u8>,
    binary: bool,
    blob: Option<Oid>,
}

fn unreadable(full: &Path, source: std::io::Error) -> WorkspaceError {
    WorkspaceError::Io {
        what: format!(
            "reading {} (a file of the change) to check it",
            full.display()
        ),
        source,
    }
}

/// A tree entry's file mode for an entry kind.
fn file_mode(kind: Option<EntryKind>) -> u32 {
    match kind {
        Some(EntryKind::Executable) => 0o100755,
        Some(EntryKind::Symlink) => 0o120000,
        Some(EntryKind::Submodule) => 0o160000,
        _ => 0o100644,
    }
}

/// One line as the layers read it: lossy UTF-8, without its line break
/// (and any carriage returns before it).
fn line_text(bytes: &[u8]) -> String {
    let mut end = bytes.len();
    while end > 0 && matches!(bytes[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    String::from_utf8_lossy(&bytes[..end]).into_owned()
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

/// The lines of a new text file, numbered from 1, as the layers read them
/// ([`line_text`]): counted, digested, and pushed to `out` when given.
/// Valid UTF-8 without carriage returns (most source) is digested in one
/// pass over its bytes and its lines are sliced, not decoded one by one.
fn text_lines(bytes: &[u8], mut out: Option<&mut Vec<AddedLine>>) -> (u32, String) {
    let mut digest = ContentDigest::default();
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let count = if bytes.is_empty() {
        0
    } else {
        body.iter().filter(|&&b| b == b'\n').count() + 1
    };
    let clean = match std::str::from_utf8(bytes) {
        Ok(text) if !bytes.contains(&b'\r') => Some(text),
        _ => None,
    };
    if let Some(text) = clean {
        // Without a final line break, the digest's form has one.
        let end: &[u8] = if body.len() == bytes.len() {
            b"\n"
        } else {
            b""
        };
        digest.text(&[bytes, end], count as u64);
        if let Some(out) = out.as_deref_mut() {
            out.reserve_exact(count);
            let body = text.strip_suffix('\n').unwrap_or(text);
            if !bytes.is_empty() {
                for (i, line) in body.split('\n').enumerate() {
                    out.push(AddedLine {
                        line: i as u32 + 1,
                        text: line.to_string(),
                    });
                }
            }
        }
    } else if !bytes.is_empty() {
        for (i, raw) in body.split(|&b| b == b'\n').enumerate() {
            let text = line_text(raw);
            digest.line(i as u32 + 1, text.as_bytes());
            if let Some(out) = out.as_deref_mut() {
                out.push(AddedLine {
                    line: i as u32 + 1,
                    text,
                });
            }
        }
    }
    (count as u32, digest.finish(None))
}

fn blob_text(repo: &Repository, id: Oid) -> Option<String> {
    if id.is_zero() {
        return None;
    }
    repo.find_blob(id)
        .ok()
        .map(|b| String::from_utf8_lossy(b.content()).into_owned())
}

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
pub const MAX_DIFF_TEXT: usize = 8 * 1024 * 1024;

/// A file whose old or new side is bigger than this is not shown line by
/// line in the diff text: it is named, with its size (the checks read it
/// all).
pub const MAX_DIFF_FILE: u64 = 2 * 1024 * 1024;

/// The unified diff text of `diff`, one file at a time, bounded: a file
/// with a side over [`MAX_DIFF_FILE`] bytes is named, not shown, and once
/// the text reaches [`MAX_DIFF_TEXT`] bytes the remaining files are only
/// named — never a silent cut: each says what is left out.
fn bounded_patch(repo: &Repository, diff: &git2::Diff<'_>) -> Result<String> {
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

#[cfg(test)]
mod bounded_tests {
    use super::*;

    /// A repository with one commit, and `files` written after it.
    fn repo(files: &[(&str, &[u8])]) -> (tempfile::TempDir, Oid) {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        std::fs::write(dir.path().join("README.md"), "# base\n").unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("README.md")).unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
        let base = repo
            .commit(Some("HEAD"), &sig, &sig, "base", &tree, &[])
            .unwrap();
        for (path, bytes) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        }
        (dir, base)
    }

    #[test]
    fn a_huge_line_count_reaches_the_checks_in_bounded_windows_and_is_not_kept() {
        let lines = 3 * Part::WINDOW_LINES + 17;
        let text = "a\n".repeat(lines);
        let (dir, base) = repo(&[("many.txt", text.as_bytes())]);
        let (mut windows, mut biggest, mut total, mut last_seen) = (0, 0, 0, false);
        let mut read = |f: &FileChange| {
            windows += 1;
            biggest = biggest.max(f.added_lines.len());
            total += f.added_lines.len();
            last_seen = f.part.is_some_and(|p| p.last);
        };
        let cs = changeset_streamed(
            dir.path(),
            dir.path(),
            base,
            &Default::default(),
            Some(&mut read),
        )
        .unwrap();
        assert_eq!(windows, 4);
        assert!(biggest <= Part::WINDOW_LINES, "{biggest}");
        assert_eq!(total, lines);
        assert!(last_seen);
        let f = &cs.files[0];
        assert_eq!(f.added as usize, lines);
        assert!(f.added_lines.is_empty() && f.content.is_none() && f.part.is_none());
        // The same digest as the file held whole.
        let whole = changeset(dir.path(), dir.path(), base).unwrap();
        assert_eq!(whole.files[0].content_digest(), f.content_digest());
    }

    /// `git mv a z`, then a new `a`: the rename's old path is a new file
    /// of its own, and the change tree holds both (the rename's removal of
    /// `a` must not take out the new `a`, whichever comes first).
    #[test]
    fn a_renamed_files_old_path_written_anew_stays_in_the_change_tree() {
        let old = "one line of the file\n".repeat(40);
        let (dir, base) = repo(&[]);
        let repo_ = Repository::open(dir.path()).unwrap();
        // The base gets `a.txt` too.
        std::fs::write(dir.path().join("a.txt"), &old).unwrap();
        let mut index = repo_.index().unwrap();
        index.add_path(Path::new("a.txt")).unwrap();
        let tree = repo_.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
        let parent = repo_.find_commit(base).unwrap();
        let base = repo_
            .commit(Some("HEAD"), &sig, &sig, "a", &tree, &[&parent])
            .unwrap();
        // The agent: a.txt moved to z.txt (staged, as `git mv` does), and a
        // different a.txt written.
        std::fs::rename(dir.path().join("a.txt"), dir.path().join("z.txt")).unwrap();
        let mut index = repo_.index().unwrap();
        index.remove_path(Path::new("a.txt")).unwrap();
        index.add_path(Path::new("z.txt")).unwrap();
        index.write().unwrap();
        std::fs::write(dir.path().join("a.txt"), "something else\n").unwrap();
        let cs = candidate_change(
            dir.path(),
            dir.path(),
            base,
            &Default::default(),
            &Default::default(),
            None,
        )
        .unwrap();
        let tree = repo_.find_tree(Oid::from_str(&cs.tree).unwrap()).unwrap();
        let blob = |path: &str| {
            let id = tree.get_path(Path::new(path)).unwrap().id();
            String::from_utf8(repo_.find_blob(id).unwrap().content().to_vec()).unwrap()
        };
        assert_eq!(blob("z.txt"), old);
        assert_eq!(blob("a.txt"), "something else\n", "{:?}", cs.files);
        assert_eq!(blob("README.md"), "# base\n");
    }

    /// A change to a file beside a held-out test (`tests/other.rs` next
    /// to `tests/holdout_x.rs`): its subtree is rewritten with the
    /// held-out entry kept as the base had it, and the held-out blob never
    /// enters the workspace's store. (Before, git refused the tree: the
    /// blob is not in the store — and a good candidate could not be
    /// judged.)
    #[test]
    fn a_change_beside_a_held_out_test_keeps_it_and_copies_none_of_it() {
        let (dir, first) = repo(&[
            ("tests/holdout_x.rs", b"secret cases"),
            ("tests/other.rs", b"old"),
        ]);
        let r = Repository::open(dir.path()).unwrap();
        let mut index = r.index().unwrap();
        for p in ["tests/holdout_x.rs", "tests/other.rs"] {
            index.add_path(Path::new(p)).unwrap();
        }
        let tree = r.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
        let parent = r.find_commit(first).unwrap();
        let base = r
            .commit(Some("HEAD"), &sig, &sig, "tests", &tree, &[&parent])
            .unwrap();
        let h = crate::git::holdout::Holdout::resolve(&r, base, &["tests/holdout_x.rs".into()])
            .unwrap();
        let root = tempfile::tempdir().unwrap();
        let ws = create_workspace(&r, base, &root.path().join("c"), &h).unwrap();
        assert!(!ws.join("tests/holdout_x.rs").exists());
        std::fs::write(ws.join("tests/other.rs"), "new").unwrap();
        let cs = candidate_change(dir.path(), &ws, base, &Default::default(), &h, None).unwrap();
        let paths: Vec<&str> = cs.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["tests/other.rs"]);
        let held = r
            .find_commit(base)
            .unwrap()
            .tree()
            .unwrap()
            .get_path(Path::new("tests/holdout_x.rs"))
            .unwrap()
            .id();
        let store = crate::git::tree::workspace_store(&ws).unwrap();
        let tree = store.find_tree(Oid::from_str(&cs.tree).unwrap()).unwrap();
        assert_eq!(
            tree.get_path(Path::new("tests/holdout_x.rs")).unwrap().id(),
            held
        );
        assert!(!store.odb().unwrap().exists(held));
        let other = tree.get_path(Path::new("tests/other.rs")).unwrap().id();
        assert_eq!(store.find_blob(other).unwrap().content(), b"new");
    }

    #[test]
    fn a_candidates_huge_file_keeps_a_bounded_likeness_and_its_whole_blob() {
        let text = "a\n".repeat(2 * Part::WINDOW_LINES);
        let mut long = vec![b'y'; Part::LINE_PIECE * 2 + 5];
        long.push(b'\n');
        let (dir, base) = repo(&[("many.txt", text.as_bytes()), ("long.txt", &long)]);
        let mut pieces = 0;
        let mut read = |f: &FileChange| {
            if f.path == "long.txt" {
                pieces += f.added_lines.len();
                assert!(f
                    .added_lines
                    .iter()
                    .all(|l| l.text.len() <= Part::LINE_PIECE));
            }
        };
        let cs = candidate_change(
            dir.path(),
            dir.path(),
            base,
            &Default::default(),
            &Default::default(),
            Some(&mut read),
        )
        .unwrap();
        assert_eq!(pieces, 3);
        for f in &cs.files {
            assert!(f.added_lines.is_empty());
            match f.likeness.as_ref().unwrap() {
                crate::model::likeness::Likeness::Sketch { mins, .. } => {
                    assert!(mins.len() <= crate::model::likeness::SKETCH_SIZE)
                }
                crate::model::likeness::Likeness::Text(t) => {
                    assert!(t.len() <= crate::model::likeness::TEXT_BUDGET)
                }
            }
        }
        // The change tree holds the files' bytes whole.
        let store = crate::git::tree::workspace_store(dir.path()).unwrap();
        let tree = store.find_tree(Oid::from_str(&cs.tree).unwrap()).unwrap();
        let id = tree.get_path(Path::new("long.txt")).unwrap().id();
        assert_eq!(store.find_blob(id).unwrap().content(), &long[..]);
    }

    #[test]
    fn the_diff_text_names_a_file_too_big_to_show() {
        let big = "b\n".repeat(MAX_DIFF_FILE as usize);
        let (dir, base) = repo(&[("big.txt", big.as_bytes()), ("small.txt", b"s\n")]);
        let text = diff_text(dir.path(), dir.path(), base).unwrap();
        assert!(text.len() < 10_000, "{}", text.len());
        assert!(text.contains("big.txt is over"), "{text}");
        assert!(text.contains("+s"), "{text}");
    }
}
