//! `rascal gc`: clean up after finished runs and say what was freed, per
//! run and in total, and what was kept and why (`--json`: one document).

use super::exit::{CliError, FAIL, PASS};
use super::shared::{open_store, out};
use rascal_core::text::plural;
use rascal_engine::gc::human_bytes as human;
use rascal_engine::gc::{span, Item, Kind, Records, Target};
use rascal_engine::gc::{Compaction, GcError, Outcome, Request};
use std::path::Path;
use std::time::Duration;

/// Runs last active this long ago or more are collected by default.
pub const DEFAULT_AGE: Duration = Duration::from_secs(7 * 86_400);

#[derive(clap::Args)]
pub struct GcArgs {
    /// Collect runs last active (started, finished or decided on) at least
    /// this long ago: `7d` (the default), `12h`, `0s` (every finished run).
    #[arg(long, value_name = "AGE", value_parser = parse_age)]
    pub older_than: Option<Duration>,
    /// Keep the selected candidate's workspace, log and artifacts (not its
    /// build caches) of runs that have a selection but were not finalized,
    /// so they can still be.
    #[arg(long)]
    pub keep_selected: bool,
    /// Print what would be removed and freed; remove nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Only these runs (of any age, unless --older-than is given too).
    #[arg(long = "run", value_name = "ID", num_args = 1..)]
    pub runs: Vec<String>,
    /// Also delete the records of the runs collected — their journal,
    /// decisions, reports and candidates, from every table — so `list`,
    /// `show`, `report` and `verify` no longer know them. Without it the
    /// records are kept: they are the audit trail.
    #[arg(long)]
    pub forget: bool,
    /// Also remove rascal's files of repositories that no longer exist
    /// (a demo's removed sample repository, a deleted clone); listed first.
    /// Works outside a repository too (then it does only that).
    #[arg(long)]
    pub orphans: bool,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
}

fn parse_age(s: &str) -> Result<Duration, rascal_core::Error> {
    rascal_core::config::duration::parse_age(s)
}

pub fn gc(dir: &Path, args: GcArgs) -> Result<i32, CliError> {
    // Orphans first: they belong to no repository, so they are collected
    // (and listed) before this one's runs, and even outside a repository.
    let orphans = if args.orphans {
        let (lines, failed) = collect_orphans(args.dry_run, args.json);
        if !args.json {
            out(lines);
        }
        if rascal_exec::git::workspace::open(dir).is_err() {
            return Ok(if failed { FAIL } else { PASS });
        }
        failed
    } else {
        false
    };
    let mut store = open_store(dir)?;
    let req = Request {
        older_than: args.older_than.unwrap_or(if args.runs.is_empty() {
            DEFAULT_AGE
        } else {
            Duration::ZERO
        }),
        keep_selected: args.keep_selected,
        forget: args.forget,
        only: args.runs,
        dry_run: args.dry_run,
    };
    let outcome = rascal_engine::gc::collect(dir, &mut store, &req).map_err(|e| match e {
        GcError::Store(e) => CliError::from(e),
        GcError::Workspace(e) => CliError::from(e),
        e => CliError::Usage(e.to_string()),
    })?;
    if args.json {
        out(vec![
            serde_json::to_string_pretty(&document(&outcome)).unwrap_or_default()
        ]);
    } else {
        out(lines(&outcome));
        for f in &outcome.failures {
            super::shared::tell!("rascal: could not remove {}: {}", f.what, f.cause);
        }
    }
    Ok(if outcome.failures.is_empty() && !orphans {
        PASS
    } else {
        FAIL
    })
}

/// `--orphans`: each repository's files directory whose repository is
/// gone, removed (or, with `dry_run`, listed); the lines to print and
/// whether a removal failed (said on stderr).
fn collect_orphans(dry_run: bool, quiet: bool) -> (Vec<String>, bool) {
    use rascal_engine::gc::{scan, Owner};
    let verb = if dry_run { "would free" } else { "freed" };
    let mut lines = Vec::new();
    let mut failed = false;
    let mut unknown = 0;
    for f in scan() {
        match &f.owner {
            Owner::Gone(repo) => {
                if !dry_run {
                    if let Err(e) = rascal_engine::gc::remove_beneath(&f.dir) {
                        if !quiet {
                            super::shared::tell!(
                                "rascal: could not remove {}: {e}",
                                f.dir.display()
                            );
                        }
                        failed = true;
                        continue;
                    }
                }
                lines.push(format!(
                    "orphan {}  {verb} {:>10}  (its repository {} is gone)",
                    f.dir.display(),
                    human(f.bytes),
                    repo.display()
                ));
            }
            Owner::Unknown => unknown += 1,
            Owner::Present => {}
        }
    }
    if lines.is_empty() {
        lines.push("orphans: none (every repository with rascal files still exists)".into());
    }
    if unknown > 0 {
        lines.push(format!(
            "orphans: {unknown} files {} name no repository (made by an older rascal) and {} left alone",
            if unknown == 1 { "directory" } else { "directories" },
            if unknown == 1 { "was" } else { "were" }
        ));
    }
    (lines, failed)
}

/// `2 workspaces, run files, 1 container`: what `items` are, by kind.
fn what(items: &[Item]) -> String {
    let mut kinds: Vec<Kind> = items.iter().map(|i| i.kind).collect();
    kinds.sort();
    kinds.dedup();
    kinds
        .into_iter()
        .map(|k| k.describe(items.iter().filter(|i| i.kind == k).count()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The report as lines: one per run cleaned, one per thing kept, the
/// shared caches, the store, then the total.
pub fn lines(o: &Outcome) -> Vec<String> {
    let verb = if o.dry_run { "would free" } else { "freed" };
    let width = o
        .plan
        .runs
        .iter()
        .map(|r| r.run.len())
        .max()
        .unwrap_or(0)
        .max(13);
    let mut lines = Vec::new();
    let mut kept_lines = Vec::new();
    let (mut cleaned, mut partly, mut kept) = (0, 0, 0);
    for r in &o.plan.runs {
        match (r.remove.is_empty(), r.kept.is_empty()) {
            (false, true) => cleaned += 1,
            (false, false) => partly += 1,
            (true, false) => kept += 1,
            (true, true) => {}
        }
        let records = match &r.records {
            Records::Forget if o.forgotten.contains(&r.run) => " · records forgotten",
            Records::Forget if o.dry_run => " · would forget its records",
            Records::Refused(why) => {
                kept_lines.push(format!("kept the records of {} ({why})", r.run));
                ""
            }
            _ => "",
        };
        if !r.remove.is_empty() {
            lines.push(format!(
                "{:<width$}  {verb} {:>10}  {}{}{records}",
                r.run,
                human(o.freed(Some(&r.run))),
                what(&r.remove),
                if r.recorded {
                    ""
                } else {
                    " (no record names this run)"
                },
            ));
        } else if !records.is_empty() {
            lines.push(format!("{:<width$}  nothing on disk{records}", r.run));
        }
        for k in &r.kept {
            let who = k
                .candidate
                .as_ref()
                .map(|c| format!(" {c}"))
                .unwrap_or_default();
            kept_lines.push(format!(
                "kept {}{who} ({}) · {}",
                r.run,
                k.why,
                human(k.bytes)
            ));
        }
    }
    if !o.plan.caches.is_empty() {
        lines.push(format!(
            "{:<width$}  {verb} {:>10}  {}",
            "shared caches",
            human(o.freed(None)),
            what(&o.plan.caches)
        ));
    }
    if let Some((why, bytes)) = &o.plan.caches_kept {
        kept_lines.push(format!("kept shared caches ({why}) · {}", human(*bytes)));
    }
    lines.extend(kept_lines);
    if let Compaction::Done { before, after } = &o.store {
        lines.push(format!(
            "{:<width$}  {} → {} (compacted)",
            "store",
            human(*before),
            human(*after)
        ));
    }
    for n in &o.notes {
        lines.push(format!("note: {n}"));
    }
    let total = total_line(o, (cleaned, partly, kept));
    lines.push(total);
    if o.dry_run {
        lines.push("dry run: nothing was removed".into());
    }
    lines
}

/// The last line: what was (or would be) freed in total, of how many
/// runs `(cleaned, partly, kept)`, and the records forgotten.
fn total_line(o: &Outcome, (cleaned, partly, kept): (usize, usize, usize)) -> String {
    let verb = if o.dry_run { "would free" } else { "freed" };
    let forgot = match o.forgotten.len() {
        0 if o.dry_run => {
            let n = o
                .plan
                .runs
                .iter()
                .filter(|r| r.records == Records::Forget)
                .count();
            match n {
                0 => String::new(),
                n => format!("; would forget the records of {}", plural(n as u64, "run")),
            }
        }
        0 => String::new(),
        n => format!("; forgot the records of {}", plural(n as u64, "run")),
    };
    if o.plan.runs.iter().all(|r| r.remove.is_empty()) && o.plan.caches.is_empty() {
        let scope = match o.older_than.is_zero() {
            true => String::new(),
            false => format!(" last active {} ago or more", span(o.older_than)),
        };
        format!("nothing to remove: no finished run{scope} has files left{forgot}")
    } else {
        let in_part = if partly > 0 {
            format!(", {partly} in part")
        } else {
            String::new()
        };
        format!(
            "{verb} {} in total ({} cleaned{in_part}, {kept} kept){forgot}",
            human(o.total_freed()),
            plural(cleaned as u64, "run"),
        )
    }
}

fn item_json(i: &Item) -> serde_json::Value {
    let mut v = serde_json::json!({
        "kind": i.kind.name(),
        "candidate": i.candidate,
        "bytes": i.bytes,
    });
    let (key, value) = match &i.target {
        Target::Path(p) => ("path", p.display().to_string()),
        Target::Container { name, .. } => ("container", name.clone()),
        Target::Branch(b) => ("branch", b.clone()),
    };
    v[key] = value.into();
    v
}

/// The `--json` document.
pub fn document(o: &Outcome) -> serde_json::Value {
    let runs: Vec<serde_json::Value> = o
        .plan
        .runs
        .iter()
        .map(|r| {
            let (records, note) = match &r.records {
                Records::Kept => ("kept", None),
                Records::Forget if o.forgotten.contains(&r.run) => ("forgotten", None),
                Records::Forget if o.dry_run => ("would_forget", None),
                Records::Forget => ("kept", Some("not everything of the run could be removed")),
                Records::Refused(why) => ("kept", Some(why.as_str())),
            };
            serde_json::json!({
                "run": r.run,
                "recorded": r.recorded,
                "freed_bytes": o.freed(Some(&r.run)),
                "removed": r.remove.iter().map(item_json).collect::<Vec<_>>(),
                "kept": r.kept.iter().map(|k| serde_json::json!({
                    "candidate": k.candidate,
                    "reason": k.why.to_string(),
                    "bytes": k.bytes,
                })).collect::<Vec<_>>(),
                "records": records,
                "records_note": note,
            })
        })
        .collect();
    let store = match &o.store {
        Compaction::Done { before, after } => {
            serde_json::json!({"before_bytes": before, "after_bytes": after})
        }
        Compaction::Skipped(why) => serde_json::json!({ "skipped": why }),
    };
    serde_json::json!({
        "dry_run": o.dry_run,
        "older_than": span(o.older_than),
        "runs": runs,
        "caches": {
            "freed_bytes": o.freed(None),
            "removed": o.plan.caches.iter().map(item_json).collect::<Vec<_>>(),
            "kept": o.plan.caches_kept.as_ref().map(|(why, bytes)| serde_json::json!({
                "reason": why.to_string(), "bytes": bytes,
            })),
        },
        "store": store,
        "failures": o.failures.iter().map(|f| serde_json::json!({
            "run": f.run, "what": f.what, "cause": f.cause,
        })).collect::<Vec<_>>(),
        "notes": o.notes,
        "freed_bytes": o.total_freed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rascal_engine::gc::{Kept, Plan, RunPlan, Why};
    use std::path::PathBuf;

    fn ws(c: &str, bytes: u64) -> Item {
        Item {
            kind: Kind::Workspace,
            candidate: Some(c.into()),
            target: Target::Path(PathBuf::from(format!("/f/workspaces/r-1/{c}"))),
            bytes,
        }
    }

    fn outcome() -> Outcome {
        Outcome {
            plan: Plan {
                runs: vec![
                    RunPlan {
                        run: "r-20261130-1a2b".into(),
                        recorded: true,
                        remove: vec![
                            ws("hasty", 2 * 1024 * 1024),
                            ws("lazy", 1024 * 1024),
                            Item {
                                kind: Kind::RunFiles,
                                candidate: None,
                                target: Target::Path("/f/runs/r-1/tui.log".into()),
                                bytes: 4096,
                            },
                        ],
                        kept: vec![Kept {
                            candidate: Some("careful".into()),
                            why: Why::Selected,
                            bytes: 1024 * 1024,
                        }],
                        records: Records::Kept,
                    },
                    RunPlan {
                        run: "r-20261130-5e6f".into(),
                        recorded: true,
                        remove: vec![],
                        kept: vec![Kept {
                            candidate: None,
                            why: Why::Running("its rascal (pid 42) is running it".into()),
                            bytes: 512,
                        }],
                        records: Records::Kept,
                    },
                ],
                caches: vec![],
                caches_kept: None,
            },
            dry_run: false,
            older_than: DEFAULT_AGE,
            failures: vec![rascal_engine::gc::Failure {
                run: Some("r-20261130-1a2b".into()),
                what: "/f/workspaces/r-1/lazy".into(),
                cause: "Permission denied (os error 13)".into(),
                bytes: 1024 * 1024,
            }],
            forgotten: vec![],
            store: Compaction::Done {
                before: 3 * 1024 * 1024,
                after: 1024 * 1024,
            },
            notes: vec![],
        }
    }

    #[test]
    fn says_what_was_freed_per_run_what_was_kept_and_why_and_the_total() {
        let lines = lines(&outcome());
        assert_eq!(
            lines,
            [
                "r-20261130-1a2b  freed    2.0 MiB  2 workspaces, run files",
                "kept r-20261130-1a2b careful (selected; --keep-selected) · 1.0 MiB",
                "kept r-20261130-5e6f (running: its rascal (pid 42) is running it) · 512 B",
                "store            3.0 MiB → 1.0 MiB (compacted)",
                "freed 2.0 MiB in total (0 runs cleaned, 1 in part, 1 kept)",
            ]
        );
    }

    #[test]
    fn a_dry_run_says_would_and_the_json_counts_bytes() {
        let mut o = outcome();
        o.dry_run = true;
        o.failures.clear();
        o.store = Compaction::Skipped("dry run".into());
        let lines = lines(&o);
        assert!(lines[0].contains("would free    3.0 MiB"), "{lines:?}");
        assert_eq!(lines.last().unwrap(), "dry run: nothing was removed");
        let doc = document(&o);
        assert_eq!(doc["freed_bytes"], 3 * 1024 * 1024 + 4096);
        assert_eq!(doc["runs"][0]["removed"][0]["kind"], "workspace");
        assert_eq!(
            doc["runs"][0]["kept"][0]["reason"],
            "selected; --keep-selected"
        );
        assert_eq!(doc["store"]["skipped"], "dry run");
        assert_eq!(doc["older_than"], "7d");
    }
}
