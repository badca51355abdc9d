//! `rascal init`: a commented `.rascal/` for the repository at hand. The
//! shell around [`detect`] (what the repository holds) and [`render`] (the
//! files' text): it lists the repository, finds the agent CLIs on PATH,
//! refuses to overwrite, writes the files and, when asked, commits exactly
//! them — never anything else the user has staged.

pub(crate) mod clis;
pub(crate) mod detect;
pub(crate) mod render;

// What callers outside the engine use (the CLI, the TUI, tests).
pub use clis::KNOWN as KNOWN_CLIS;
pub use detect::CI_DEFAULT;
pub use render::{reviewers, strategy_agents, FIRST_TASK, SCRIPTED_AGENT};

use clis::{Found, KNOWN};
use detect::Detected;
use rascal_exec::git::workspace::{self, WorkspaceError};
use std::path::{Path, PathBuf};

/// What `rascal init` would write, and what it found.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The top of the working tree.
    pub root: PathBuf,
    pub detected: Detected,
    /// The agent CLIs on PATH.
    pub found: Vec<Found>,
    /// `.rascal/…` path → text, in order.
    pub files: Vec<(&'static str, String)>,
    /// The files of `files` that exist already (in the working tree or
    /// in HEAD).
    pub existing: Vec<&'static str>,
    /// Manifests a project was found by that HEAD does not have: agents
    /// start from the commit, so they would not see them.
    pub uncommitted: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    #[error("{0} is a bare repository: rascal init writes .rascal/ into a working tree\n  hint: run it in a clone with a working tree")]
    Bare(PathBuf),
    #[error("{} already {}: {}\n  hint: pass --force to overwrite {} (`rascal init --dry-run` shows what it would write)", rascal_core::text::plural(.0.len() as u64, "file"), if .0.len() == 1 { "exists" } else { "exist" }, .0.join(", "), if .0.len() == 1 { "it" } else { "them" })]
    Exists(Vec<String>),
    #[error("the repository is in the middle of a {0}: --commit would mix .rascal/ into it\n  hint: finish or abort it first, or run rascal init without --commit")]
    Busy(String),
    #[error("git: {0}")]
    Git(#[from] git2::Error),
    #[error("writing {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// Files larger than this are not read for detection.
const MAX_READ: u64 = 1 << 20;

/// Look at the repository containing `dir` and the CLIs on `path_var`;
/// decide what to write. Nothing is written.
pub fn plan(dir: &Path, path_var: Option<&str>) -> Result<Plan, InitError> {
    let repo = workspace::open(dir)?;
    let root = repo
        .workdir()
        .map(|w| w.components().collect::<PathBuf>())
        .ok_or_else(|| InitError::Bare(repo.path().to_path_buf()))?;
    let paths = listing(&repo, &root)?;
    let read = |p: &str| {
        let full = root.join(p);
        let meta = std::fs::symlink_metadata(&full).ok()?;
        (meta.is_file() && meta.len() <= MAX_READ)
            .then(|| std::fs::read_to_string(&full).ok())
            .flatten()
    };
    let pytest = || pytest_here(path_var);
    let detected = detect::detect(&detect::Input {
        paths: &paths,
        read: &read,
        pytest: &pytest,
    });
    let found = find_clis(path_var);
    let files = render::files(&detected, &found);
    let head_tree = repo.head().ok().and_then(|h| h.peel_to_tree().ok());
    let in_head = |p: &str| {
        head_tree
            .as_ref()
            .is_some_and(|t| t.get_path(Path::new(p)).is_ok())
    };
    let existing = files
        .iter()
        .map(|(p, _)| *p)
        .filter(|p| root.join(p).symlink_metadata().is_ok() || in_head(p))
        .collect();
    let uncommitted = detected
        .projects
        .iter()
        .map(|p| p.manifest.clone())
        .filter(|m| root.join(m).exists() && !in_head(m))
        .collect();
    Ok(Plan {
        root,
        detected,
        found,
        files,
        existing,
        uncommitted,
    })
}

/// The repository's files as git sees them: tracked ones that are still
/// there, and untracked ones that are not ignored.
fn listing(repo: &git2::Repository, root: &Path) -> Result<Vec<String>, git2::Error> {
    let mut out = std::collections::BTreeSet::new();
    for e in repo.index()?.iter() {
        out.insert(String::from_utf8_lossy(&e.path).into_owned());
    }
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true);
    for s in repo.statuses(Some(&mut opts))?.iter() {
        if s.status().is_wt_new() {
            if let Ok(p) = s.path() {
                out.insert(p.to_string());
            }
        }
    }
    Ok(out
        .into_iter()
        .filter(|p| root.join(p).symlink_metadata().is_ok())
        .collect())
}

/// How pytest runs on this machine: the first of `python3 -m pytest` and
/// `python -m pytest` that works (run in an empty directory, never in the
/// repository), else `pytest` when it is on PATH, else `python3 -m pytest`
/// (the test run will say pytest is missing).
fn pytest_here(path_var: Option<&str>) -> String {
    let Ok(scratch) = tempfile::tempdir() else {
        return "python3 -m pytest".into();
    };
    for python in ["python3", "python"] {
        if rascal_exec::exec::confine::program_path(python, path_var).is_some()
            && succeeds(python, &["-m", "pytest", "--version"], scratch.path())
        {
            return format!("{python} -m pytest");
        }
    }
    if rascal_exec::exec::confine::program_path("pytest", path_var).is_some() {
        return "pytest".into();
    }
    "python3 -m pytest".into()
}

/// Whether `program args` exits 0 within 20 seconds, in `dir`, its output
/// discarded.
fn succeeds(program: &str, args: &[&str], dir: &Path) -> bool {
    use std::process::{Command, Stdio};
    let Ok(mut child) = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return false;
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// The known agent CLIs on `path_var`, with the login files of each that
/// exist in this home directory.
pub fn find_clis(path_var: Option<&str>) -> Vec<Found> {
    KNOWN
        .iter()
        .filter_map(|cli| {
            let path = rascal_exec::exec::confine::program_path(cli.program, path_var)?;
            let logins = cli
                .logins
                .iter()
                .filter(|l| rascal_exec::exec::confine::expand_home(l).exists())
                .map(|l| l.to_string())
                .collect();
            Some(Found {
                cli: *cli,
                path,
                logins,
            })
        })
        .collect()
}

/// Refuse to overwrite unless `force`.
pub fn check_overwrite(plan: &Plan, force: bool) -> Result<(), InitError> {
    if plan.existing.is_empty() || force {
        return Ok(());
    }
    Err(InitError::Exists(
        plan.existing.iter().map(|p| p.to_string()).collect(),
    ))
}

/// Write the plan's files into the working tree.
pub fn write(plan: &Plan) -> Result<(), InitError> {
    for (path, text) in &plan.files {
        let full = plan.root.join(path);
        let io = |source| InitError::Io {
            path: path.to_string(),
            source,
        };
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::write(&full, text).map_err(io)?;
    }
    Ok(())
}

/// The commit `--commit` made.
#[derive(Debug, Clone)]
pub struct Committed {
    pub id: git2::Oid,
    /// The branch HEAD is on (None when detached).
    pub branch: Option<String>,
    pub title: String,
}

/// Commit exactly `files` (already written to the working tree) on top of
/// HEAD: a tree made of HEAD's plus these files, so nothing else the user
/// has staged goes in; the index is updated for these paths only, so the
/// user's staged changes stay staged, unchanged.
pub fn commit(root: &Path, files: &[(&'static str, String)]) -> Result<Committed, InitError> {
    let repo = workspace::open(root)?;
    if repo.state() != git2::RepositoryState::Clean {
        return Err(InitError::Busy(
            format!("{:?}", repo.state())
                .to_lowercase()
                .replace("applymailbox", "git am")
                .replace("interactive", ""),
        ));
    }
    let head = match repo.head() {
        Ok(h) => Some(h.peel_to_commit()?),
        Err(e) if e.code() == git2::ErrorCode::UnbornBranch => None,
        Err(e) => return Err(e.into()),
    };
    let base_tree = match &head {
        Some(c) => c.tree()?,
        None => repo.find_tree(repo.treebuilder(None)?.write()?)?,
    };
    let mut update = git2::build::TreeUpdateBuilder::new();
    let mut index = repo.index()?;
    for (path, text) in files {
        let blob = repo.blob(text.as_bytes())?;
        update.upsert(*path, blob, git2::FileMode::Blob);
        index.add_path(Path::new(path))?;
        // The index entry must be exactly what is committed.
        let entry = index.get_path(Path::new(path), 0);
        if entry.map(|e| e.id) != Some(blob) {
            return Err(InitError::Git(git2::Error::from_str(&format!(
                "{path} changed while it was being committed"
            ))));
        }
    }
    let tree = repo.find_tree(update.create_updated(&repo, &base_tree)?)?;
    let sig = rascal_exec::git::author::signature(&repo)?;
    let title = COMMIT_TITLE.to_string();
    let names: Vec<&str> = files
        .iter()
        .map(|(p, _)| p.rsplit('/').next().unwrap_or(p))
        .collect();
    let message = format!(
        "{title}\n\nWritten by `rascal init`: {}.\nrascal reads .rascal/ from a run's base commit.\n",
        names.join(", ")
    );
    let parents: Vec<&git2::Commit> = head.iter().collect();
    let id = repo.commit(Some("HEAD"), &sig, &sig, &message, &tree, &parents)?;
    index.write()?;
    let branch = repo
        .head()
        .ok()
        .filter(|h| h.is_branch())
        .and_then(|h| h.shorthand().ok().map(str::to_string));
    Ok(Committed { id, branch, title })
}

pub const COMMIT_TITLE: &str = "chore: add rascal config (.rascal/)";
