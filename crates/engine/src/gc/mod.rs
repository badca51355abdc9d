//! `rascal gc`: remove what finished runs left behind — their workspaces,
//! run files (logs, artifacts, check copies, build caches), stopped
//! containers, an older rascal's `rascal/wt/*` branches and worktrees, and
//! stale shared caches — then compact the store. The shell around
//! [`plan`]: gather what is known (store, disk, engine, git), plan, carry
//! the plan out. Run records stay unless `--forget` is asked; finalized
//! branches (`rascal/<slug>-<run>`) are never touched.

pub mod disk;
pub mod orphans;
pub mod plan;

use crate::exec::launch::docker::{self, LABEL_CANDIDATE, LABEL_REPO, LABEL_RUN};
use crate::git::workspace;
use crate::pipeline::run_id::is_run_id;
use crate::store::upkeep::{process_alive, RunActivity};
use crate::store::{Store, StoreError};
use plan::{CacheFacts, Item, Kind, Plan, Policy, Records, RunFacts, Target};
use std::collections::{BTreeMap, BTreeSet};
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
            what: format!("the run record `{}`", crate::text::cut(id, 80)),
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

/// The Docker engine, when some run of this repository used it.
struct Engine {
    rt: tokio::runtime::Runtime,
    docker: bollard::Docker,
}

impl Engine {
    /// Connect when a recorded run used the docker launcher; without an
    /// engine, say so in `notes` (those runs' containers are not looked at).
    fn connect_if_needed(
        store: &Store,
        notes: &mut Vec<String>,
    ) -> Result<Option<Engine>, GcError> {
        let launchers = store.launchers()?;
        if !launchers.values().any(|l| l == "docker") {
            return Ok(None);
        }
        let rt = match crate::exec::runtime() {
            Ok(rt) => rt,
            Err(e) => {
                notes.push(format!("containers were not looked at: {e}"));
                return Ok(None);
            }
        };
        match rt.block_on(docker::connect()) {
            Ok(docker) => Ok(Some(Engine { rt, docker })),
            Err(e) => {
                notes.push(format!(
                    "containers were not looked at: {}",
                    e.lines().next().unwrap_or("")
                ));
                Ok(None)
            }
        }
    }
}

/// A container of this repository on the engine.
struct Container {
    id: String,
    name: String,
    run: String,
    candidate: Option<String>,
    state: String,
}

impl Container {
    /// Whether it runs (or is about to): then its run counts as running.
    fn live(&self) -> bool {
        !matches!(self.state.as_str(), "exited" | "dead" | "removing")
    }
}

fn containers(engine: &Engine, repo_dir: &Path, notes: &mut Vec<String>) -> Vec<Container> {
    let here = repo_dir.to_string_lossy().trim_end_matches('/').to_string();
    let list = match engine
        .rt
        .block_on(docker::list_rascal_containers(&engine.docker, None))
    {
        Ok(l) => l,
        Err(e) => {
            notes.push(format!("containers were not looked at: {e}"));
            return Vec::new();
        }
    };
    list.into_iter()
        .filter_map(|c| {
            let labels = c.labels.unwrap_or_default();
            if labels.get(LABEL_REPO).map(|r| r.trim_end_matches('/')) != Some(here.as_str()) {
                return None;
            }
            let id = c.id?;
            Some(Container {
                name: c
                    .names
                    .and_then(|n| n.into_iter().next())
                    .map(|n| n.trim_start_matches('/').to_string())
                    .unwrap_or_else(|| id[..id.len().min(12)].to_string()),
                id,
                run: labels.get(LABEL_RUN).cloned().unwrap_or_default(),
                candidate: labels.get(LABEL_CANDIDATE).cloned(),
                state: c.state.map(|s| s.to_string()).unwrap_or_default(),
            })
        })
        .collect()
}

/// The names of the entries of `dir` (none when it does not exist, or is
/// a symlink or a file: a run folder replaced by a link is one item, the
/// link, never what it points at).
fn entries(dir: &Path) -> Vec<String> {
    if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        return Vec::new();
    }
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Entries of a candidate's run files that are rebuilt when needed (the
/// check copies and build caches): never kept for a selection.
const CANDIDATE_CACHES: [&str; 3] = [
    crate::exec::cache::BUILD,
    crate::exec::cache::HOLDOUT,
    "checks",
];

type Found = (Item, Option<i64>);

/// The entries of directory `dir` as items of `kind`, each belonging to
/// the candidate `owner` names (or the directory itself, when it is
/// empty), with the blocks of `dir` itself (0 when it is its own item).
fn dir_items(dir: &Path, kind: Kind, owner: &dyn Fn(&str) -> Option<String>) -> (Vec<Found>, u64) {
    let names = entries(dir);
    if names.is_empty() {
        let u = disk::usage(dir);
        if !u.exists() {
            return (Vec::new(), 0);
        }
        let item = Item {
            kind,
            candidate: None,
            target: Target::Path(dir.to_path_buf()),
            bytes: u.bytes,
        };
        return (vec![(item, u.newest_ms)], 0);
    }
    let own = std::fs::symlink_metadata(dir)
        .map(|m| std::os::unix::fs::MetadataExt::blocks(&m) * 512)
        .unwrap_or(0);
    let items = names
        .into_iter()
        .map(|name| {
            let path = dir.join(&name);
            let u = disk::usage(&path);
            let item = Item {
                kind,
                candidate: owner(&name),
                target: Target::Path(path),
                bytes: u.bytes,
            };
            (item, u.newest_ms)
        })
        .collect();
    (items, own)
}

/// A directory's own blocks count with its first item, so the items add
/// up to what the directory takes (it goes once they have).
fn with_own((mut items, own): (Vec<Found>, u64)) -> Vec<Found> {
    if let Some((first, _)) = items.first_mut() {
        first.bytes += own;
    }
    items
}

/// The items of run `run`'s files in `runs/<run>`: per candidate, each
/// entry of its directory (its log, artifacts, attempts: the candidate's;
/// its check copies and build caches: no one's), and the run's own files.
fn run_file_items(runs: &Path, run: &str, candidates: &BTreeSet<String>) -> Vec<Found> {
    let (top, own) = dir_items(&runs.join(run), Kind::RunFiles, &|n| {
        candidates.contains(n).then(|| n.to_string())
    });
    let mut out = Vec::new();
    for (item, newest) in top {
        let candidate_dir = match (&item.candidate, &item.target) {
            (Some(c), Target::Path(p)) if p.is_dir() && !p.is_symlink() => {
                Some((c.clone(), p.clone()))
            }
            _ => None,
        };
        match candidate_dir {
            Some((c, dir)) => out.extend(with_own(dir_items(&dir, Kind::RunFiles, &|n| {
                (!CANDIDATE_CACHES.contains(&n)).then(|| c.clone())
            }))),
            None => out.push((item, newest)),
        }
    }
    with_own((out, own))
}

/// Whether `pid` is a rascal process other than this one, still alive (a
/// run's TUI left open after it finished). Read from `/proc`: where that
/// cannot be read, only runs still marked running count.
fn rascal_open(pid: i64) -> bool {
    if pid <= 0 || pid == std::process::id() as i64 || !process_alive(pid) {
        return false;
    }
    let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) else {
        return false;
    };
    let mine = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "rascal".into());
    let theirs = exe
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A rebuilt binary shows as `rascal (deleted)`.
    theirs == mine || theirs.starts_with(&format!("{mine} "))
}

/// Why a recorded run counts as running, if it does.
fn alive(a: &RunActivity, docker_run: bool, engine: bool) -> Option<String> {
    let pid = a.pid.unwrap_or(0);
    if a.status == "running" {
        return Some(format!("its rascal (pid {pid}) is running it"));
    }
    if rascal_open(pid) {
        return Some(format!("its rascal (pid {pid}) is still open"));
    }
    if docker_run && a.status == "interrupted" && !engine {
        return Some(
            "the Docker engine did not answer, so whether its containers still run is unknown"
                .into(),
        );
    }
    None
}

/// The runs, the shared caches, and the recorded run ids refused (not of
/// rascal's own scheme).
type Gathered = (Vec<RunFacts>, Vec<CacheFacts>, Vec<String>);

/// Everything known about the runs and the shared caches.
fn gather(
    repo: &git2::Repository,
    store: &Store,
    engine: Option<&Engine>,
    notes: &mut Vec<String>,
) -> Result<Gathered, GcError> {
    let files = workspace::files_dir(repo);
    let legacy = workspace::state_dir(repo).join("worktrees");
    let activity = store.activity()?;
    let rows: BTreeMap<String, crate::store::RunRow> = store
        .list()?
        .into_iter()
        .map(|r| (r.id.clone(), r))
        .collect();
    let launchers = store.launchers()?;
    let containers = engine
        .map(|e| containers(e, &workspace::workdir(repo), notes))
        .unwrap_or_default();

    let branches = legacy_branches(repo);
    let named = Named {
        dirs: [files.join("workspaces"), files.join("runs"), legacy.clone()],
        branches: &branches,
        containers: &containers,
    };
    let (ids, refused) = run_ids(&activity, named, notes);

    let mut runs = Vec::new();
    for (id, is_recorded) in ids {
        let candidates: BTreeSet<String> = entries(&files.join("workspaces").join(&id))
            .into_iter()
            .chain(store.candidate_ids(&id)?)
            .collect();
        let by_name = |n: &str| Some(n.to_string());
        let mut items = Vec::new();
        items.extend(with_own(dir_items(
            &files.join("workspaces").join(&id),
            Kind::Workspace,
            &by_name,
        )));
        items.extend(run_file_items(&files.join("runs"), &id, &candidates));
        items.extend(with_own(dir_items(
            &legacy.join(&id),
            Kind::LegacyWorktree,
            &by_name,
        )));
        let newest = items.iter().filter_map(|(_, n)| *n).max();
        let mut items: Vec<Item> = items.into_iter().map(|(i, _)| i).collect();
        items.extend(branches.iter().filter(|(run, _, _)| run == &id).map(
            |(_, candidate, name)| Item {
                kind: Kind::LegacyBranch,
                candidate: Some(candidate.clone()),
                target: Target::Branch(name.clone()),
                bytes: 0,
            },
        ));
        let mut running_container = None;
        for c in containers.iter().filter(|c| c.run == id) {
            if c.live() {
                running_container = Some(format!("container {} is {}", c.name, c.state));
            } else {
                items.push(Item {
                    kind: Kind::Container,
                    candidate: c.candidate.clone(),
                    target: Target::Container {
                        id: c.id.clone(),
                        name: c.name.clone(),
                    },
                    bytes: 0,
                });
            }
        }
        let a = activity.iter().find(|a| a.id == id);
        let row = rows.get(&id);
        let docker_run = launchers.get(&id).is_some_and(|l| l == "docker");
        runs.push(RunFacts {
            recorded: is_recorded,
            last_active_ms: a.map(|a| a.last_active_ms).or(newest),
            alive: running_container
                .or_else(|| a.and_then(|a| alive(a, docker_run, engine.is_some()))),
            selected: row.and_then(|r| r.selected.clone()),
            finalized: row.is_some_and(|r| r.finalized.is_some()),
            intact: row.is_none_or(|r| r.broken_event.is_none()),
            items,
            id,
        });
    }

    let caches = shared_caches(&files);
    Ok((runs, caches, refused))
}

/// What names runs besides the store: run folders, an older rascal's
/// branches, containers.
struct Named<'a> {
    /// Folders whose entries are named after runs.
    dirs: [PathBuf; 3],
    branches: &'a [(String, String, String)],
    containers: &'a [Container],
}

/// Every run id: recorded (newest first), then the ones only files,
/// branches or containers name; the recorded ids not of rascal's own
/// scheme are returned apart (the others only noted).
fn run_ids(
    activity: &[RunActivity],
    named: Named<'_>,
    notes: &mut Vec<String>,
) -> (Vec<(String, bool)>, Vec<String>) {
    let mut ids: Vec<(String, bool)> = activity.iter().map(|a| (a.id.clone(), true)).collect();
    let recorded: BTreeSet<String> = activity.iter().map(|a| a.id.clone()).collect();
    let mut unrecorded = BTreeSet::new();
    for dir in &named.dirs {
        unrecorded.extend(entries(dir));
    }
    unrecorded.extend(named.branches.iter().map(|(run, _, _)| run.clone()));
    unrecorded.extend(named.containers.iter().map(|c| c.run.clone()));
    ids.extend(
        unrecorded
            .into_iter()
            .filter(|id| !id.is_empty() && !recorded.contains(id))
            .map(|id| (id, false)),
    );
    // Only names of rascal's own scheme are joined to a folder: a record
    // (or a folder, branch or container label) with any other name is
    // reported and left alone.
    let mut refused = Vec::new();
    ids.retain(|(id, is_recorded)| {
        let ok = is_run_id(id);
        if !ok && *is_recorded {
            refused.push(id.clone());
        } else if !ok {
            notes.push(format!(
                "left alone `{}`: not a run id rascal makes (r-YYYYMMDD-xxxx)",
                crate::text::cut(id, 80)
            ));
        }
        ok
    });

    (ids, refused)
}

/// The shared caches (the ledger's entries), with their size and age.
fn shared_caches(files: &Path) -> Vec<CacheFacts> {
    let ledger = files.join("ledger");
    entries(&ledger)
        .into_iter()
        .map(|name| {
            let path = ledger.join(name);
            let u = disk::usage(&path);
            CacheFacts {
                item: Item {
                    kind: Kind::Cache,
                    candidate: None,
                    target: Target::Path(path),
                    bytes: u.bytes,
                },
                newest_ms: u.newest_ms.unwrap_or(0),
            }
        })
        .collect()
}

/// The `rascal/wt/<run>/<candidate>` branches an older rascal left:
/// (run, candidate, branch name).
fn legacy_branches(repo: &git2::Repository) -> Vec<(String, String, String)> {
    let Ok(branches) = repo.branches(Some(git2::BranchType::Local)) else {
        return Vec::new();
    };
    branches
        .flatten()
        .filter_map(|(b, _)| b.name().ok().flatten().map(String::from))
        .filter_map(|name| {
            let rest = name.strip_prefix(LEGACY_BRANCHES)?;
            let (run, candidate) = rest.split_once('/').unwrap_or((rest, ""));
            Some((run.to_string(), candidate.to_string(), name.clone()))
        })
        .collect()
}

/// Carry out `out.plan`: containers first (they mount workspaces), then
/// files, an older rascal's worktree registrations and branches, emptied
/// run directories, records (`--forget`), shared caches. A removal that
/// fails is recorded and the rest goes on.
fn carry_out(
    repo: &git2::Repository,
    store: &mut Store,
    engine: Option<&Engine>,
    out: &mut Outcome,
) {
    let files = workspace::files_dir(repo);
    let legacy = workspace::state_dir(repo).join("worktrees");
    let mut failures = Vec::new();
    let mut legacy_touched = false;
    let mut forgotten = Vec::new();
    for run in &out.plan.runs {
        let mut items: Vec<&Item> = run.remove.iter().collect();
        items.sort_by_key(|i| match i.kind {
            Kind::Container => 0,
            Kind::LegacyBranch => 2,
            _ => 1,
        });
        let before = failures.len();
        for item in items {
            if item.kind == Kind::LegacyBranch && !legacy_touched {
                prune_legacy_worktrees(repo, &legacy);
                legacy_touched = true;
            }
            if let Err(cause) = remove(repo, engine, &item.target) {
                failures.push(Failure {
                    run: Some(run.run.clone()),
                    what: describe(&item.target),
                    cause,
                    bytes: item.bytes,
                });
            }
        }
        // The run's egress network and its host firewall, once its
        // containers are gone.
        if let Some(e) = engine {
            let net = crate::egress::network::network_name(&run.run);
            if let Err(cause) = e.rt.block_on(crate::egress::network::remove_run(
                &e.docker,
                &crate::egress::firewall::Firewall::default(),
                &run.run,
            )) {
                failures.push(Failure {
                    run: Some(run.run.clone()),
                    what: format!("network {net}"),
                    cause,
                    bytes: 0,
                });
            }
        }
        let roots = [files.join("workspaces"), files.join("runs"), legacy.clone()];
        for item in &run.remove {
            if let Target::Path(p) = &item.target {
                remove_emptied(repo, p, &roots);
            }
        }
        if run.records == Records::Forget {
            if failures.len() > before {
                failures.push(Failure {
                    run: Some(run.run.clone()),
                    what: format!("the records of run {}", run.run),
                    cause: "kept, since not everything of the run could be removed; run `rascal gc --forget` again".into(),
                    bytes: 0,
                });
            } else {
                match store.forget(&run.run) {
                    Ok(_) => forgotten.push(run.run.clone()),
                    Err(e) => failures.push(Failure {
                        run: Some(run.run.clone()),
                        what: format!("the records of run {}", run.run),
                        cause: e.to_string(),
                        bytes: 0,
                    }),
                }
            }
        }
    }
    if out
        .plan
        .runs
        .iter()
        .flat_map(|r| &r.remove)
        .any(|i| i.kind == Kind::LegacyWorktree)
    {
        prune_legacy_worktrees(repo, &legacy);
    }
    // Host firewall chains of networks that are gone (a rascal killed
    // mid-run, whose run is not collected yet or was forgotten).
    if let Some(e) = engine {
        let fw = crate::egress::firewall::Firewall::default();
        match e
            .rt
            .block_on(crate::egress::network::sweep_firewalls(&e.docker, &fw))
        {
            Ok(_) => {}
            Err(cause) if crate::egress::firewall::unavailable(&cause) => out
                .notes
                .push(format!("host firewall chains were not looked at: {cause}")),
            Err(cause) => failures.push(Failure {
                run: None,
                what: "host firewall chains of removed networks".into(),
                cause,
                bytes: 0,
            }),
        }
    }
    for item in &out.plan.caches {
        if let Err(cause) = remove(repo, engine, &item.target) {
            failures.push(Failure {
                run: None,
                what: describe(&item.target),
                cause,
                bytes: item.bytes,
            });
        }
    }
    out.failures = failures;
    out.forgotten = forgotten;
}

/// Remove the directories above `path` that its removal left empty, up
/// to (not including) the root it is under. What was kept stays.
fn remove_emptied(repo: &git2::Repository, path: &Path, roots: &[PathBuf]) {
    let mut dir = path.parent();
    while let Some(d) = dir {
        if roots.iter().any(|r| r == d) || !roots.iter().any(|r| d.starts_with(r)) {
            return;
        }
        let Ok((b, rel)) = beneath_state(repo, d) else {
            return;
        };
        if b.remove_dir(&rel).is_err() {
            return;
        }
        dir = d.parent();
    }
}

/// The state folder `path` is beneath (rascal's files, or its folder in
/// `.git`) and the path relative to it: the only places gc removes from.
fn beneath_state(
    repo: &git2::Repository,
    path: &Path,
) -> Result<(crate::git::beneath::Beneath, PathBuf), String> {
    for root in [workspace::files_dir(repo), workspace::state_dir(repo)] {
        if let Ok(rel) = path.strip_prefix(&root) {
            if rel.as_os_str().is_empty() {
                break;
            }
            let b = crate::git::beneath::Beneath::open(&root)
                .map_err(|e| format!("opening {}: {e}", root.display()))?;
            return Ok((b, rel.to_path_buf()));
        }
    }
    Err(format!(
        "{} is not beneath rascal's state folders; left alone",
        path.display()
    ))
}

/// Remove `path` and everything below it, beneath its state folder and
/// without following any symlink (a link is removed, never its target).
fn remove_beneath(repo: &git2::Repository, path: &Path) -> Result<(), String> {
    let (b, rel) = beneath_state(repo, path)?;
    b.remove_all(&rel).map_err(|e| {
        if crate::git::beneath::is_link_on_way(&e) {
            format!("a symlink stands on the way to it ({e}); nothing was followed")
        } else {
            e.to_string()
        }
    })
}

/// How a target is named in messages.
pub fn describe(t: &Target) -> String {
    match t {
        Target::Path(p) => p.display().to_string(),
        Target::Container { name, .. } => format!("container {name}"),
        Target::Branch(b) => format!("branch {b}"),
    }
}

fn remove(repo: &git2::Repository, engine: Option<&Engine>, t: &Target) -> Result<(), String> {
    match t {
        Target::Path(p) => remove_beneath(repo, p),
        Target::Container { id, .. } => match engine {
            Some(e) => e.rt.block_on(docker::remove(&e.docker, id)),
            None => Err("no Docker engine".into()),
        },
        Target::Branch(name) => repo
            .find_branch(name, git2::BranchType::Local)
            .and_then(|mut b| b.delete())
            .map_err(|e| e.message().to_string()),
    }
}

/// Forget the worktrees an older rascal registered under
/// `.git/rascal/worktrees/` whose directories are gone (so their branches
/// can be deleted).
fn prune_legacy_worktrees(repo: &git2::Repository, legacy: &Path) {
    let Ok(names) = repo.worktrees() else {
        return;
    };
    for name in names.iter().flatten().flatten() {
        let Ok(wt) = repo.find_worktree(name) else {
            continue;
        };
        let ours = wt.path().starts_with(legacy)
            || std::fs::canonicalize(legacy).is_ok_and(|l| wt.path().starts_with(l));
        if ours && wt.validate().is_err() {
            let _ = wt.prune(None);
        }
    }
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
