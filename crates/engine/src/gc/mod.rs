//! `rascal gc`: remove what finished runs left behind — their workspaces,
//! run files (logs, artifacts, check copies, build caches), stopped
//! containers, an older rascal's `rascal/wt/*` branches and worktrees, and
//! stale shared caches — then compact the store. The shell around
//! [`plan`]: gather what is known (store, disk, engine, git), plan, carry
//! the plan out. Run records stay unless `--forget` is asked; finalized
//! branches (`rascal/<slug>-<run>`) are never touched.

pub(crate) mod disk;
pub(crate) mod orphans;
pub(crate) mod plan;

mod containers;
mod gather;
mod remove;

// What callers outside the engine use (the CLI, the TUI, tests).
pub use disk::human as human_bytes;
pub use disk::remove as remove_beneath;
pub use disk::usage;
pub use disk::usage_of;
pub use orphans::scan;
pub use orphans::Owner;
pub use plan::span;
pub use plan::Item;
pub use plan::Kept;
pub use plan::Kind;
pub use plan::Plan;
pub use plan::Records;
pub use plan::RunPlan;
pub use plan::Target;
pub use plan::Why;

pub use remove::describe;

use containers::Engine;
use gather::gather;
use remove::carry_out;

use rascal_exec::git::workspace;

use crate::store::{Store, StoreError};
use plan::Policy;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The prefix of the branches an older rascal made for its candidates.
pub const LEGACY_BRANCHES: &str = "rascal/wt/";

#[derive(Debug, thiserror::Error)]
pub enum GcError {
    #[error("no run `{0}` in this repository (neither recorded nor on disk)\n  hint: `rascal list` shows the runs")]
    NoSuchRun(String),
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("{0}")]
    Workspace(#[from] workspace::WorkspaceError),
}

/// What the user asked `rascal gc` for.
#[derive(Debug, Clone)]
pub struct Request {
    /// Collect runs last active at least this long ago.
    pub older_than: Duration,
    pub keep_selected: bool,
    pub forget: bool,
    /// Only these runs (`--run`).
    pub only: Vec<String>,
    /// Say what would go; remove nothing.
    pub dry_run: bool,
}

/// Something that could not be removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The run it belongs to (None: a shared cache, or the store).
    pub run: Option<String>,
    /// What it was: a path, `container NAME` or `branch NAME`.
    pub what: String,
    pub cause: String,
    /// The bytes it holds (not freed).
    pub bytes: u64,
}

/// What became of the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compaction {
    /// Compacted: its files' size before and after.
    Done { before: u64, after: u64 },
    /// Not compacted, and why (a dry run, a run is running).
    Skipped(String),
}

/// What `rascal gc` did (or, in a dry run, would do).
#[derive(Debug, Clone)]
pub struct Outcome {
    pub plan: Plan,
    pub dry_run: bool,
    pub older_than: Duration,
    pub failures: Vec<Failure>,
    /// Runs whose records were deleted (`--forget`).
    pub forgotten: Vec<String>,
    pub store: Compaction,
    /// Things worth knowing that are not a failure (the engine did not
    /// answer, so containers were not looked at).
    pub notes: Vec<String>,
}

impl Outcome {
    /// Bytes freed for run `run` (None: the shared caches).
    pub fn freed(&self, run: Option<&str>) -> u64 {
        let planned: u64 = match run {
            Some(r) => self
                .plan
                .runs
                .iter()
                .filter(|p| p.run == r)
                .map(|p| p.freed())
                .sum(),
            None => self.plan.caches.iter().map(|i| i.bytes).sum(),
        };
        let failed: u64 = self
            .failures
            .iter()
            .filter(|f| f.run.as_deref() == run)
            .map(|f| f.bytes)
            .sum();
        planned.saturating_sub(failed)
    }

    /// Bytes freed in all.
    pub fn total_freed(&self) -> u64 {
        self.plan
            .freed()
            .saturating_sub(self.failures.iter().map(|f| f.bytes).sum())
    }
}

/// The disk run `run` takes: its workspaces and run files (and an older
/// rascal's worktrees of it), in one walk; 0 when nothing is left.
pub fn run_disk(repo: &git2::Repository, run: &str) -> u64 {
    let files = workspace::files_dir(repo);
    let paths = [
        files.join("workspaces").join(run),
        files.join("runs").join(run),
        workspace::state_dir(repo).join("worktrees").join(run),
    ];
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    disk::usage_of(&refs).bytes
}

/// Plan and (unless a dry run) carry out `req` in the repository at
/// `repo_dir`, whose store is `store` (runs whose rascal died already
/// marked interrupted).
pub fn collect(repo_dir: &Path, store: &mut Store, req: &Request) -> Result<Outcome, GcError> {
    let repo = workspace::open(repo_dir)?;
    let mut notes = Vec::new();
    let engine = Engine::connect_if_needed(store, &mut notes)?;
    let (runs, caches, refused) = gather(&repo, store, engine.as_ref(), &mut notes)?;
    for id in &req.only {
        if !runs.iter().any(|r| &r.id == id) {
            return Err(GcError::NoSuchRun(id.clone()));
        }
    }
    let policy = Policy {
        now_ms: crate::store::now_ms(),
        older_than: req.older_than,
        keep_selected: req.keep_selected,
        forget: req.forget,
        only: (!req.only.is_empty()).then(|| req.only.clone()),
    };
    let plan = plan::plan(&runs, &caches, &policy);
    let mut out = Outcome {
        plan,
        dry_run: req.dry_run,
        older_than: req.older_than,
        failures: Vec::new(),
        forgotten: Vec::new(),
        store: Compaction::Skipped("dry run".into()),
        notes,
    };
    let refusals: Vec<Failure> = refused
        .iter()
        .map(|id| Failure {
            run: None,
            what: format!("the run record `{}`", rascal_core::text::cut(id, 80)),
            cause: "its id is not one rascal makes (r-YYYYMMDD-xxxx): the store was changed outside rascal; nothing of it was removed".into(),
            bytes: 0,
        })
        .collect();
    if req.dry_run {
        out.failures = refusals;
        return Ok(out);
    }
    carry_out(&repo, store, engine.as_ref(), &mut out);
    out.failures.extend(refusals);
    out.store = if runs.iter().any(|r| r.alive.is_some()) {
        Compaction::Skipped("a run is running; compacted next time".into())
    } else {
        compact(store, &mut out.failures)
    };
    Ok(out)
}

/// The store's files' size.
fn store_bytes(store: &Store) -> u64 {
    let paths: Vec<PathBuf> = store.files();
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    disk::usage_of(&refs).bytes
}

fn compact(store: &Store, failures: &mut Vec<Failure>) -> Compaction {
    let before = store_bytes(store);
    match store.compact() {
        Ok(()) => Compaction::Done {
            before,
            after: store_bytes(store),
        },
        Err(e) => {
            failures.push(Failure {
                run: None,
                what: "compacting the store".into(),
                cause: e.to_string(),
                bytes: 0,
            });
            Compaction::Skipped("it could not be compacted".into())
        }
    }
}
