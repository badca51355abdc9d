//! Tests of gc's plan: what goes, what is kept and why.

use super::*;

const DAY: i64 = 86_400_000;
const NOW: i64 = 100 * DAY;

fn item(kind: Kind, candidate: Option<&str>, bytes: u64) -> Item {
    let target = match kind {
        Kind::Container => Target::Container {
            id: format!("id-{}", candidate.unwrap_or("")),
            name: "rascal-x".into(),
        },
        Kind::LegacyBranch => Target::Branch(format!("rascal/wt/r/{}", candidate.unwrap_or(""))),
        _ => Target::Path(PathBuf::from(format!(
            "/files/{kind:?}/{}",
            candidate.unwrap_or("-")
        ))),
    };
    Item {
        kind,
        candidate: candidate.map(String::from),
        target,
        bytes,
    }
}

/// A finished, recorded run last active `days` ago with two
/// candidates' workspaces and run files.
fn run(id: &str, days: i64) -> RunFacts {
    RunFacts {
        id: id.into(),
        recorded: true,
        last_active_ms: Some(NOW - days * DAY),
        alive: None,
        selected: None,
        finalized: false,
        intact: true,
        items: vec![
            item(Kind::Workspace, Some("careful"), 1000),
            item(Kind::Workspace, Some("hasty"), 2000),
            item(Kind::RunFiles, Some("careful"), 300),
            item(Kind::RunFiles, Some("hasty"), 400),
            item(Kind::RunFiles, None, 5),
        ],
    }
}

fn policy(days: u64) -> Policy {
    Policy {
        now_ms: NOW,
        older_than: Duration::from_secs(days * 86_400),
        keep_selected: false,
        forget: false,
        only: None,
    }
}

fn kept_why(p: &RunPlan) -> Vec<(Option<&str>, &Why)> {
    p.kept
        .iter()
        .map(|k| (k.candidate.as_deref(), &k.why))
        .collect()
}

#[test]
fn old_finished_runs_are_collected_and_recent_ones_kept_with_their_age() {
    let plan = plan(&[run("old", 8), run("new", 2)], &[], &policy(7));
    assert_eq!(plan.runs.len(), 2);
    let old = &plan.runs[0];
    assert_eq!((old.remove.len(), old.freed()), (5, 3705));
    assert!(old.kept.is_empty());
    assert_eq!(old.records, Records::Kept, "records are kept by default");
    let new = &plan.runs[1];
    assert!(new.remove.is_empty());
    assert_eq!(new.kept[0].bytes, 3705);
    assert_eq!(
        new.kept[0].why.to_string(),
        "last active 2d ago; younger than 7d"
    );
    assert_eq!(plan.freed(), 3705);
}

#[test]
fn a_running_run_is_never_touched_whatever_its_age() {
    let mut r = run("live", 30);
    r.alive = Some("its rascal (pid 42) is alive".into());
    let mut p = policy(0);
    p.forget = true;
    let plan = plan(&[r], &[], &p);
    let live = &plan.runs[0];
    assert!(live.remove.is_empty());
    assert_eq!(live.records, Records::Kept);
    assert_eq!(
        live.kept[0].why.to_string(),
        "running: its rascal (pid 42) is alive"
    );
}

#[test]
fn zero_cutoff_takes_every_finished_run() {
    let plan = plan(&[run("just-now", 0)], &[], &policy(0));
    assert_eq!(plan.runs[0].remove.len(), 5);
}

#[test]
fn keep_selected_keeps_the_selected_candidates_files_unless_finalized() {
    let mut selected = run("sel", 9);
    selected.selected = Some("careful".into());
    let mut finalized = selected.clone();
    finalized.id = "fin".into();
    finalized.finalized = true;
    let mut p = policy(7);
    p.keep_selected = true;
    p.forget = true;
    let plan = plan(&[selected.clone(), finalized], &[], &p);
    let sel = &plan.runs[0];
    assert_eq!(kept_why(sel), [(Some("careful"), &Why::Selected)]);
    assert_eq!(sel.kept[0].bytes, 1300, "workspace and run files");
    let removed: Vec<_> = sel
        .remove
        .iter()
        .map(|i| (i.kind, i.candidate.as_deref()))
        .collect();
    assert_eq!(
        removed,
        [
            (Kind::Workspace, Some("hasty")),
            (Kind::RunFiles, Some("hasty")),
            (Kind::RunFiles, None)
        ]
    );
    assert!(
        matches!(sel.records, Records::Refused(_)),
        "finalize needs it"
    );
    let fin = &plan.runs[1];
    assert!(fin.kept.is_empty(), "a finalized run keeps nothing");
    assert_eq!(fin.records, Records::Forget);
    // Without the flag, the selection does not matter.
    let plan = super::plan(&[selected], &[], &policy(7));
    assert!(plan.runs[0].kept.is_empty());
}

#[test]
fn a_changed_record_is_never_forgotten_and_its_selection_is_not_guessed() {
    let mut r = run("tampered", 9);
    r.intact = false;
    let mut p = policy(7);
    p.forget = true;
    let plan = plan(&[r.clone()], &[], &p);
    assert_eq!(plan.runs[0].remove.len(), 5);
    assert!(matches!(&plan.runs[0].records, Records::Refused(why) if why.contains("evidence")));
    p.keep_selected = true;
    let plan = super::plan(&[r], &[], &p);
    assert!(plan.runs[0]
        .kept
        .iter()
        .all(|k| k.why == Why::SelectionUnknown));
    assert_eq!(plan.runs[0].remove.len(), 1, "only the run-level file");
}

#[test]
fn files_no_record_names_are_spared_while_a_run_may_be_starting() {
    let mut starting = run("starting", 0);
    starting.recorded = false;
    starting.last_active_ms = Some(NOW - 60_000);
    let mut left = starting.clone();
    left.id = "left".into();
    left.last_active_ms = Some(NOW - DAY);
    let mut branch_only = RunFacts {
        id: "ancient".into(),
        recorded: false,
        last_active_ms: None,
        items: vec![item(Kind::LegacyBranch, Some("c"), 0)],
        ..starting.clone()
    };
    branch_only.alive = None;
    let mut p = policy(0);
    p.forget = true;
    let plan = plan(&[starting, left, branch_only], &[], &p);
    assert_eq!(
        plan.runs[0].kept[0].why.to_string(),
        "not recorded yet, modified 60s ago: a run may be starting"
    );
    assert_eq!(plan.runs[1].remove.len(), 5);
    assert_eq!(plan.runs[1].records, Records::Kept, "nothing to forget");
    assert_eq!(plan.runs[2].remove.len(), 1);
}

#[test]
fn only_the_named_runs_and_then_no_shared_cache() {
    let cache = CacheFacts {
        item: item(Kind::Cache, None, 50),
        newest_ms: NOW - 30 * DAY,
    };
    let mut p = policy(0);
    p.only = Some(vec!["b".into()]);
    let plan = plan(
        &[run("a", 9), run("b", 9)],
        std::slice::from_ref(&cache),
        &p,
    );
    assert_eq!(plan.runs.len(), 1);
    assert_eq!(plan.runs[0].run, "b");
    assert!(plan.caches.is_empty() && plan.caches_kept.is_none());
    let plan = super::plan(&[run("a", 9)], &[cache], &policy(7));
    assert_eq!(plan.caches.len(), 1);
    assert_eq!(plan.freed(), 3705 + 50);
}

#[test]
fn shared_caches_stay_while_a_run_runs_or_while_recent() {
    let old = CacheFacts {
        item: item(Kind::Cache, None, 50),
        newest_ms: NOW - 30 * DAY,
    };
    let fresh = CacheFacts {
        item: item(Kind::Cache, Some("x"), 70),
        newest_ms: NOW - DAY,
    };
    let mut live = run("live", 0);
    live.alive = Some("x".into());
    let plan1 = plan(&[live], &[old.clone(), fresh.clone()], &policy(0));
    assert!(plan1.caches.is_empty());
    assert_eq!(plan1.caches_kept, Some((Why::InUse, 120)));
    let plan2 = plan(&[], &[old, fresh], &policy(7));
    assert_eq!(plan2.caches.len(), 1);
    assert_eq!(plan2.caches_kept.as_ref().map(|k| k.1), Some(70));
}

#[test]
fn a_run_with_nothing_left_is_not_mentioned_unless_forgotten() {
    let mut empty = run("empty", 9);
    empty.items.clear();
    let plan1 = plan(&[empty.clone()], &[], &policy(7));
    assert!(plan1.runs.is_empty());
    let mut p = policy(7);
    p.forget = true;
    let plan2 = plan(&[empty], &[], &p);
    assert_eq!(plan2.runs[0].records, Records::Forget);
}

#[test]
fn kinds_and_ages_read_as_words() {
    assert_eq!(Kind::Workspace.describe(1), "1 workspace");
    assert_eq!(Kind::Workspace.describe(3), "3 workspaces");
    assert_eq!(Kind::LegacyBranch.describe(2), "2 rascal/wt branches");
    assert_eq!(Kind::Cache.describe(2), "2 caches");
    assert_eq!(ago(Duration::from_secs(7 * 86_400)), "7d");
    assert_eq!(ago(Duration::from_secs(3 * 3_600 + 5)), "3h");
    assert_eq!(ago(Duration::from_secs(0)), "0s");
    assert_eq!(ago(Duration::from_secs(90_000)), "25h");
    assert_eq!(ago(Duration::from_secs(61)), "61s");
    assert_eq!(span(Duration::from_secs(7 * 86_400)), "7d");
    assert_eq!(span(Duration::from_secs(36 * 3_600 + 90)), "1d12h1m30s");
    assert_eq!(span(Duration::ZERO), "0s");
}
