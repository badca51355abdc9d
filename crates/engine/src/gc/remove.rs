//! Carrying out a plan: removing containers, files, an older rascal's
//! worktrees and branches, emptied run folders, records and shared
//! caches, beneath rascal's state folders only.

use super::containers::Engine;
use super::plan::{Item, Kind, Records, RunPlan, Target};
use super::{Failure, Outcome};
use crate::store::Store;
use rascal_exec::exec::launch::docker;
use rascal_exec::git::workspace;
use std::path::{Path, PathBuf};

/// Carry out `out.plan`: containers first (they mount workspaces), then
/// files, an older rascal's worktree registrations and branches, emptied
/// run directories, records (`--forget`), shared caches. A removal that
/// fails is recorded and the rest goes on.
pub(super) fn carry_out(
    repo: &git2::Repository,
    store: &mut Store,
    engine: Option<&Engine>,
    out: &mut Outcome,
) {
    let files = workspace::files_dir(repo);
    let legacy = workspace::state_dir(repo).join("worktrees");
    let mut removal = Removal {
        repo,
        engine,
        legacy: &legacy,
        legacy_touched: false,
        failures: Vec::new(),
    };
    let mut forgotten = Vec::new();
    for run in &out.plan.runs {
        let before = removal.failures.len();
        removal.run_items(run);
        // The run's egress network and its host firewall, once its
        // containers are gone.
        if let Some(e) = engine {
            removal.network(e, &run.run);
        }
        let roots = [files.join("workspaces"), files.join("runs"), legacy.clone()];
        for item in &run.remove {
            if let Target::Path(p) = &item.target {
                remove_emptied(repo, p, &roots);
            }
        }
        if run.records == Records::Forget {
            let complete = removal.failures.len() == before;
            if let Some(id) = removal.forget(store, &run.run, complete) {
                forgotten.push(id);
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
        removal.stale_firewalls(e, &mut out.notes);
    }
    for item in &out.plan.caches {
        removal.item(None, item);
    }
    out.failures = removal.failures;
    out.forgotten = forgotten;
}

/// One carrying out of a plan: where it removes, and what could not be
/// removed so far.
struct Removal<'a> {
    repo: &'a git2::Repository,
    engine: Option<&'a Engine>,
    /// An older rascal's worktrees folder.
    legacy: &'a Path,
    /// Its worktree registrations were pruned (before a first branch).
    legacy_touched: bool,
    failures: Vec<Failure>,
}

impl Removal<'_> {
    /// Remove `item`; a failure is recorded against `run`.
    fn item(&mut self, run: Option<&str>, item: &Item) {
        if let Err(cause) = remove(self.repo, self.engine, &item.target) {
            self.failures.push(Failure {
                run: run.map(str::to_string),
                what: describe(&item.target),
                cause,
                bytes: item.bytes,
            });
        }
    }

    /// A run's items: containers first, branches last (after the
    /// worktrees that held them are pruned).
    fn run_items(&mut self, run: &RunPlan) {
        let mut items: Vec<&Item> = run.remove.iter().collect();
        items.sort_by_key(|i| match i.kind {
            Kind::Container => 0,
            Kind::LegacyBranch => 2,
            _ => 1,
        });
        for item in items {
            if item.kind == Kind::LegacyBranch && !self.legacy_touched {
                prune_legacy_worktrees(self.repo, self.legacy);
                self.legacy_touched = true;
            }
            self.item(Some(&run.run), item);
        }
    }

    /// The run's egress network and its host firewall.
    fn network(&mut self, e: &Engine, run: &str) {
        let net = rascal_exec::egress::network::network_name(run);
        if let Err(cause) = e.rt.block_on(rascal_exec::egress::network::remove_run(
            &e.docker,
            &rascal_exec::egress::firewall::Firewall::default(),
            run,
        )) {
            self.failures.push(Failure {
                run: Some(run.to_string()),
                what: format!("network {net}"),
                cause: cause.to_string(),
                bytes: 0,
            });
        }
    }

    /// `--forget`: the run's records, when everything else of it went
    /// (`complete`). The run's id when they were forgotten.
    fn forget(&mut self, store: &mut Store, run: &str, complete: bool) -> Option<String> {
        let failure = |cause: String| Failure {
            run: Some(run.to_string()),
            what: format!("the records of run {run}"),
            cause,
            bytes: 0,
        };
        if !complete {
            self.failures.push(failure(
                "kept, since not everything of the run could be removed; run `rascal gc --forget` again".into(),
            ));
            return None;
        }
        match store.forget(run) {
            Ok(_) => Some(run.to_string()),
            Err(e) => {
                self.failures.push(failure(e.to_string()));
                None
            }
        }
    }

    /// The host firewall chains of networks that are gone.
    fn stale_firewalls(&mut self, e: &Engine, notes: &mut Vec<String>) {
        let fw = rascal_exec::egress::firewall::Firewall::default();
        match e.rt.block_on(rascal_exec::egress::network::sweep_firewalls(
            &e.docker, &fw,
        )) {
            Ok(_) => {}
            Err(cause) if rascal_exec::egress::firewall::unavailable(&cause) => {
                notes.push(format!("host firewall chains were not looked at: {cause}"))
            }
            Err(cause) => self.failures.push(Failure {
                run: None,
                what: "host firewall chains of removed networks".into(),
                cause: cause.to_string(),
                bytes: 0,
            }),
        }
    }
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
) -> Result<(rascal_exec::git::beneath::Beneath, PathBuf), String> {
    for root in [workspace::files_dir(repo), workspace::state_dir(repo)] {
        if let Ok(rel) = path.strip_prefix(&root) {
            if rel.as_os_str().is_empty() {
                break;
            }
            let b = rascal_exec::git::beneath::Beneath::open(&root)
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
        if rascal_exec::git::beneath::is_link_on_way(&e) {
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
            Some(e) => {
                e.rt.block_on(docker::remove(&e.docker, id))
                    .map_err(|e| e.to_string())
            }
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
