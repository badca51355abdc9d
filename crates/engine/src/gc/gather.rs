//! What `rascal gc` finds before it plans: each run's folders, an older
//! rascal's branches and worktrees, its containers, whether it still
//! runs, and the shared caches.

use super::containers::{containers, Container, Engine};
use super::plan::{CacheFacts, Item, Kind, RunFacts, Target};
use super::{disk, GcError, LEGACY_BRANCHES};
use crate::pipeline::run_id::is_run_id;
use crate::store::upkeep::{process_alive, RunActivity};
use crate::store::Store;
use rascal_exec::git::workspace;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

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
    rascal_exec::exec::cache::BUILD,
    rascal_exec::exec::cache::HOLDOUT,
    "checks",
];

/// Whether the entry `name` is one of `CANDIDATE_CACHES` or beside one
/// (a build cache's steady copy, its record and lock: `exec::steady`).
fn rebuilt(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name);
    CANDIDATE_CACHES.contains(&stem)
}

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
                (!rebuilt(n)).then(|| c.clone())
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
pub(super) type Gathered = (Vec<RunFacts>, Vec<CacheFacts>, Vec<String>);

/// Everything known about the runs and the shared caches.
pub(super) fn gather(
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
                rascal_core::text::cut(id, 80)
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
