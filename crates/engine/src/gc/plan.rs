//! What `rascal gc` removes and what it keeps, and why: a pure function
//! from what is known about each run (whether it is running, when it was
//! last active, its selection, what it has on disk and on the engine) to a
//! plan. Nothing here touches the disk, the store or the engine.

use std::path::PathBuf;
use std::time::Duration;

/// Files of a run that no record names (workspaces are created before a
/// run's record is written) younger than this are never removed: a run may
/// be starting.
pub const SETTING_UP: Duration = Duration::from_secs(10 * 60);

/// What a removal acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A file or directory, with everything below it.
    Path(PathBuf),
    /// A stopped rascal container on the engine.
    Container { id: String, name: String },
    /// A branch an older rascal made for a candidate
    /// (`rascal/wt/<run>/<candidate>`).
    Branch(String),
}

/// What kind of thing an item is, in the words the report uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A candidate's workspace.
    Workspace,
    /// The run's files: logs, artifacts, check copies, build caches, the
    /// PR body.
    RunFiles,
    /// A stopped container of the run.
    Container,
    /// A worktree an older rascal made under `.git/rascal/worktrees/`.
    LegacyWorktree,
    /// A `rascal/wt/*` branch an older rascal made.
    LegacyBranch,
    /// A cache shared by runs (the base commit's test listings and their
    /// build cache).
    Cache,
}

impl Kind {
    /// `2 workspaces`, `run files`, `1 container`.
    pub fn describe(self, n: usize) -> String {
        use rascal_core::text::plural;
        match self {
            Kind::Workspace => plural(n as u64, "workspace"),
            Kind::RunFiles => "run files".into(),
            Kind::Container => plural(n as u64, "container"),
            Kind::LegacyWorktree => plural(n as u64, "old worktree"),
            Kind::LegacyBranch if n == 1 => "1 rascal/wt branch".into(),
            Kind::LegacyBranch => format!("{n} rascal/wt branches"),
            Kind::Cache => plural(n as u64, "cache"),
        }
    }

    /// The name in `--json`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Workspace => "workspace",
            Kind::RunFiles => "run_files",
            Kind::Container => "container",
            Kind::LegacyWorktree => "legacy_worktree",
            Kind::LegacyBranch => "legacy_branch",
            Kind::Cache => "cache",
        }
    }
}

/// One thing a run has on disk or on the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub kind: Kind,
    /// The candidate it belongs to, when it belongs to one.
    pub candidate: Option<String>,
    pub target: Target,
    /// Bytes it takes on disk (0 for branches and containers).
    pub bytes: u64,
}

/// What is known about one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFacts {
    pub id: String,
    /// Whether the store has its records (false: files no record names).
    pub recorded: bool,
    /// When it was last active (ms): its recorded start, end or last
    /// decision; for files no record names, their newest modification
    /// (None: unknown, e.g. only a branch is left).
    pub last_active_ms: Option<i64>,
    /// Why it counts as running, when it does (its rascal is alive, a
    /// container of it runs, or that cannot be known).
    pub alive: Option<String>,
    /// The candidate selected for finalizing.
    pub selected: Option<String>,
    pub finalized: bool,
    /// False when its journal does not check out against its hash chain.
    pub intact: bool,
    pub items: Vec<Item>,
}

/// One shared cache entry, with the newest modification in it (ms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheFacts {
    pub item: Item,
    pub newest_ms: i64,
}

/// What the user asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub now_ms: i64,
    /// Runs last active at least this long ago are collected.
    pub older_than: Duration,
    /// Keep the selected candidate's workspace (and run files) of runs
    /// that were not finalized.
    pub keep_selected: bool,
    /// Also delete the records of the runs collected.
    pub forget: bool,
    /// Only these runs (`--run`); shared caches are then left alone.
    pub only: Option<Vec<String>>,
}

/// Why something is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// The run is running (the reason says how that is known).
    Running(String),
    /// Last active more recently than the cutoff.
    Recent { age: Duration, cutoff: Duration },
    /// Files no record names, modified moments ago: a run may be starting.
    SettingUp { age: Duration },
    /// The selected candidate of a run not finalized, with
    /// `--keep-selected`.
    Selected,
    /// `--keep-selected`, but the run's record does not check out, so its
    /// selection cannot be read.
    SelectionUnknown,
    /// A shared cache while a run is running (it may be using it).
    InUse,
}

impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Why::Running(how) => write!(f, "running: {how}"),
            Why::Recent { age, cutoff } => write!(
                f,
                "last active {} ago; younger than {}",
                ago(*age),
                span(*cutoff)
            ),
            Why::SettingUp { age } => write!(
                f,
                "not recorded yet, modified {} ago: a run may be starting",
                ago(*age)
            ),
            Why::Selected => write!(f, "selected; --keep-selected"),
            Why::SelectionUnknown => write!(
                f,
                "--keep-selected, but its record was changed after it was written, so its selection cannot be read"
            ),
            Why::InUse => write!(f, "a run is running and may be using it"),
        }
    }
}

/// What happens to a run's records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Records {
    /// Kept: the journal is the audit trail (no `--forget`, or the run
    /// is kept).
    Kept,
    /// Deleted from every table (`--forget`).
    Forget,
    /// `--forget` was asked, but the records stay, and why.
    Refused(String),
}

/// Something kept, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The candidate whose files are kept; None: the whole run.
    pub candidate: Option<String>,
    pub why: Why,
    pub bytes: u64,
}

/// What gc does to one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunPlan {
    pub run: String,
    pub recorded: bool,
    pub remove: Vec<Item>,
    pub kept: Vec<Kept>,
    pub records: Records,
}

impl RunPlan {
    pub fn freed(&self) -> u64 {
        self.remove.iter().map(|i| i.bytes).sum()
    }
}

/// Everything gc does.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    pub runs: Vec<RunPlan>,
    /// Shared caches removed.
    pub caches: Vec<Item>,
    /// Shared caches kept, and why (with their bytes).
    pub caches_kept: Option<(Why, u64)>,
}

impl Plan {
    /// Bytes the plan frees.
    pub fn freed(&self) -> u64 {
        self.runs.iter().map(RunPlan::freed).sum::<u64>()
            + self.caches.iter().map(|i| i.bytes).sum::<u64>()
    }
}

/// Decide what to remove. Runs are taken in the order given; a run with
/// nothing on disk and no records to forget is left out of the plan.
pub fn plan(runs: &[RunFacts], caches: &[CacheFacts], policy: &Policy) -> Plan {
    let mut out = Plan::default();
    for run in runs {
        if let Some(only) = &policy.only {
            if !only.contains(&run.id) {
                continue;
            }
        }
        let p = plan_run(run, policy);
        let nothing = p.remove.is_empty()
            && p.records == Records::Kept
            && p.kept.iter().all(|k| k.bytes == 0);
        if !nothing {
            out.runs.push(p);
        }
    }
    if policy.only.is_none() && !caches.is_empty() {
        let bytes = caches.iter().map(|c| c.item.bytes).sum();
        if runs.iter().any(|r| r.alive.is_some()) {
            out.caches_kept = Some((Why::InUse, bytes));
        } else {
            let cutoff_ms = policy.older_than.as_millis() as i64;
            let (old, young): (Vec<_>, Vec<_>) = caches
                .iter()
                .partition(|c| policy.now_ms - c.newest_ms >= cutoff_ms);
            out.caches = old.into_iter().map(|c| c.item.clone()).collect();
            if let Some(newest) = young.iter().map(|c| c.newest_ms).max() {
                out.caches_kept = Some((
                    Why::Recent {
                        age: age(policy.now_ms, newest),
                        cutoff: policy.older_than,
                    },
                    young.iter().map(|c| c.item.bytes).sum(),
                ));
            }
        }
    }
    out
}

fn age(now_ms: i64, then_ms: i64) -> Duration {
    Duration::from_millis(now_ms.saturating_sub(then_ms).max(0) as u64)
}

fn plan_run(run: &RunFacts, policy: &Policy) -> RunPlan {
    let total: u64 = run.items.iter().map(|i| i.bytes).sum();
    let whole = |why: Why| RunPlan {
        run: run.id.clone(),
        recorded: run.recorded,
        remove: Vec::new(),
        kept: vec![Kept {
            candidate: None,
            why,
            bytes: total,
        }],
        records: Records::Kept,
    };
    if let Some(how) = &run.alive {
        return whole(Why::Running(how.clone()));
    }
    if let Some(last) = run.last_active_ms {
        let age = age(policy.now_ms, last);
        if !run.recorded && age < SETTING_UP {
            return whole(Why::SettingUp { age });
        }
        if age < policy.older_than {
            return whole(Why::Recent {
                age,
                cutoff: policy.older_than,
            });
        }
    }
    let mut remove = Vec::new();
    let mut kept: Vec<Kept> = Vec::new();
    for item in &run.items {
        let candidate_files = matches!(
            item.kind,
            Kind::Workspace | Kind::RunFiles | Kind::LegacyWorktree
        ) && item.candidate.is_some();
        let keep = match () {
            _ if !policy.keep_selected || run.finalized || !candidate_files => None,
            _ if !run.intact => Some(Why::SelectionUnknown),
            _ if item.candidate.is_some() && item.candidate == run.selected => Some(Why::Selected),
            _ => None,
        };
        match keep {
            Some(why) => match kept
                .iter_mut()
                .find(|k| k.candidate == item.candidate && k.why == why)
            {
                Some(k) => k.bytes += item.bytes,
                None => kept.push(Kept {
                    candidate: item.candidate.clone(),
                    why,
                    bytes: item.bytes,
                }),
            },
            None => remove.push(item.clone()),
        }
    }
    let records = match () {
        _ if !policy.forget || !run.recorded => Records::Kept,
        _ if !run.intact => Records::Refused(
            "its record was changed after it was written; it is kept as evidence (`rascal verify` says more)".into(),
        ),
        _ if !kept.is_empty() => Records::Refused(
            "its selected candidate is kept (--keep-selected), and finalizing it needs the record".into(),
        ),
        _ => Records::Forget,
    };
    RunPlan {
        run: run.id.clone(),
        recorded: run.recorded,
        remove,
        kept,
        records,
    }
}

/// `3d`, `5h`, `12m`, `40s`: how long ago, roughly, in the largest unit
/// that is at least 2 (`36h`, not `1d`).
pub fn ago(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        _ if s >= 2 * 86_400 => format!("{}d", s / 86_400),
        _ if s >= 2 * 3_600 => format!("{}h", s / 3_600),
        _ if s >= 2 * 60 => format!("{}m", s / 60),
        _ => format!("{s}s"),
    }
}

/// A duration exactly, as `--older-than` takes it: `7d`, `1d12h`, `0s`.
pub fn span(d: Duration) -> String {
    let s = d.as_secs();
    let parts: String = [
        (s / 86_400, "d"),
        (s / 3_600 % 24, "h"),
        (s / 60 % 60, "m"),
        (s % 60, "s"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, u)| format!("{n}{u}"))
    .collect();
    if parts.is_empty() {
        "0s".into()
    } else {
        parts
    }
}

#[cfg(test)]
mod tests;
