//! Tests of the run store: concurrent opens, the journal's hash chain,
//! and upgrading an older rascal's database.

use super::*;
use rascal_core::model::event::CandidateInfo;
use rascal_core::model::verdict::Verdict;

/// A first run creating the store while `rascal list` and `show` poll
/// it (CI saw "database is locked" from the run): every one of many
/// processes' opens of a new store at once succeeds.
#[test]
fn many_opens_of_a_new_store_at_once_all_succeed() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rascal.db");
        let start = std::sync::Arc::new(std::sync::Barrier::new(8));
        let opens: Vec<_> = (0..8)
            .map(|_| {
                let (path, start) = (path.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    Store::open(&path).map(|_| ())
                })
            })
            .collect();
        for o in opens {
            let r = o.join().unwrap();
            assert!(r.is_ok(), "round {round}: {r:?}");
        }
    }
}

fn started(run: &str) -> RunEvent {
    RunEvent::RunStarted {
        run: run.into(),
        repo: "/repo".into(),
        base: "0123456789abcdef".into(),
        instruction: "do it".into(),
        launcher: "process".into(),
        candidates: vec![CandidateInfo {
            id: "c1".into(),
            agent: "a".into(),
            runtime: "scripted".into(),
            worktree: "/wt".into(),
            unsandboxed: false,
        }],
    }
}

fn log(i: usize) -> RunEvent {
    RunEvent::Log {
        candidate: "c1".into(),
        stream: rascal_core::model::log::Stream::Stdout,
        text: format!("line {i}"),
        display: None,
    }
}

fn finished(verdict: Verdict) -> [RunEvent; 2] {
    [
        RunEvent::CandidateFinished {
            candidate: "c1".into(),
            verdict,
            reason: None,
            files: 1,
            lines: 2,
            tree: None,
            cancelled: false,
        },
        RunEvent::RunFinished {
            verdict,
            exit_code: if verdict == Verdict::Fail { 1 } else { 0 },
        },
    ]
}

/// A store with run `r` of 8 events: started, 5 log lines (appended
/// in two batches), the candidate's and the run's end (FAIL).
fn store_with_run() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("rascal.db")).unwrap();
    store.append("r", &[started("r"), log(1), log(2)]).unwrap();
    store.append("r", &[log(3)]).unwrap();
    store.append("r", &[log(4), log(5)]).unwrap();
    store.append("r", &finished(Verdict::Fail)).unwrap();
    (dir, store)
}

fn sql(store: &Store, q: &str) {
    store.conn.execute_batch(q).unwrap();
}

#[test]
fn a_run_still_running_lists_as_running_with_journal_clocks() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("rascal.db")).unwrap();
    store.append("r", &[started("r"), log(1)]).unwrap();
    let row = &store.list().unwrap()[0];
    assert_eq!(row.state, Some(rascal_core::model::state::State::Running));
    assert_eq!(row.verdict, None, "no verdict yet, never FAIL");
    let s = store.summary("r").unwrap();
    assert!(s.wall.started_ms.is_some(), "clocks from journal times");
    store.append("r", &finished(Verdict::Fail)).unwrap();
    let row = &store.list().unwrap()[0];
    assert_eq!(row.state, Some(rascal_core::model::state::State::Fail));
    let s = store.summary("r").unwrap();
    assert!(s.wall.ended_ms.is_some());
}

fn broken_at(store: &Store) -> u64 {
    match store.verify_chain("r") {
        Err(StoreError::Tampered(b)) => {
            assert_eq!(
                b.to_string(),
                format!(
                    "the record of run r was changed after it was written (event {})",
                    b.event
                )
            );
            b.event
        }
        other => panic!("not broken: {other:?}"),
    }
}

#[test]
fn appends_chain_across_batches_and_record_the_head() {
    let (_d, store) = store_with_run();
    let head = store.verify_chain("r").unwrap();
    assert_eq!(head.events, 8);
    let (recorded, count): (String, i64) = store
        .conn
        .query_row(
            "SELECT head, event_count FROM runs WHERE id = 'r'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((Some(recorded.clone()), count), (head.head.clone(), 8));
    // Recomputed from the stored rows, by the documented recipe.
    let mut prev = chain::genesis("r");
    let mut stmt = store
        .conn
        .prepare("SELECT n, at, kind, json, hash FROM events WHERE run_id = 'r' ORDER BY seq")
        .unwrap();
    let rows: Vec<(i64, i64, String, String, String)> = stmt
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    for (n, at, kind, json, hash) in rows {
        prev = chain::event_hash("r", n as u64, at, &kind, &json, &prev);
        assert_eq!(prev, hash);
    }
    assert_eq!(prev, recorded);
    let s = store.summary("r").unwrap();
    assert_eq!(s.verdict, Some(Verdict::Fail));
    assert_eq!(s.journal, Some(head.clone()));
    assert_eq!(
        store.chain_position("r", &recorded.to_uppercase()).unwrap(),
        Some(8)
    );
}

#[test]
fn an_edited_event_is_named_and_nothing_reads_the_run() {
    let (_d, store) = store_with_run();
    // The candidate's verdict (event 7) rewritten to PASS.
    sql(
        &store,
        "UPDATE events SET json = replace(json, '\"fail\"', '\"pass\"')
             WHERE run_id = 'r' AND kind = 'candidate_finished'",
    );
    assert_eq!(broken_at(&store), 7);
    assert!(matches!(store.events("r"), Err(StoreError::Tampered(_))));
    assert!(matches!(store.summary("r"), Err(StoreError::Tampered(_))));
    let row = &store.list().unwrap()[0];
    assert_eq!(row.verdict.as_deref(), Some("tampered"));
    assert_eq!((row.chain, row.broken_event), ("broken", Some(7)));
}

#[test]
fn a_deleted_middle_event_is_named() {
    let (_d, store) = store_with_run();
    sql(&store, "DELETE FROM events WHERE run_id = 'r' AND n = 4");
    assert_eq!(broken_at(&store), 4);
}

#[test]
fn a_deleted_last_event_is_named() {
    let (_d, store) = store_with_run();
    sql(&store, "DELETE FROM events WHERE run_id = 'r' AND n = 8");
    assert_eq!(broken_at(&store), 8);
}

#[test]
fn reordered_events_are_named() {
    let (_d, store) = store_with_run();
    let seq = |n: i64| -> i64 {
        store
            .conn
            .query_row(
                "SELECT seq FROM events WHERE run_id = 'r' AND n = ?1",
                [n],
                |r| r.get(0),
            )
            .unwrap()
    };
    let (a, b) = (seq(2), seq(3));
    sql(
        &store,
        &format!(
            "UPDATE events SET seq = -1 WHERE seq = {a};
                 UPDATE events SET seq = {a} WHERE seq = {b};
                 UPDATE events SET seq = {b} WHERE seq = -1;"
        ),
    );
    let order: Vec<i64> = store
        .conn
        .prepare("SELECT n FROM events WHERE run_id = 'r' ORDER BY seq")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(&order[..4], &[1, 3, 2, 4], "rows swapped");
    assert_eq!(broken_at(&store), 2);
}

#[test]
fn a_nulled_hash_is_named() {
    let (_d, store) = store_with_run();
    sql(
        &store,
        "UPDATE events SET hash = NULL WHERE run_id = 'r' AND n = 5",
    );
    assert_eq!(broken_at(&store), 5);
    // Every hash and the head stripped: not mistaken for an old run.
    sql(
        &store,
        "UPDATE events SET hash = NULL, n = NULL WHERE run_id = 'r';
             UPDATE runs SET head = NULL, event_count = NULL WHERE id = 'r';",
    );
    assert_eq!(broken_at(&store), 1);
    // Nor when the marker of when chaining began is dropped too.
    sql(&store, "DROP TABLE meta");
    let store = Store::open(&store.path).unwrap();
    assert_eq!(broken_at(&store), 1);
    // Nor when the run's start is set back before the chain began.
    sql(
        &store,
        "UPDATE runs SET started_at = -1 WHERE id = 'r';
             UPDATE meta SET value = '9999999999999' WHERE key = 'chained_since';",
    );
    assert_eq!(broken_at(&store), 1);
}

#[test]
fn a_rewrite_of_the_whole_tail_is_caught_only_against_a_published_head() {
    let (_d, store) = store_with_run();
    let published = store.verify_chain("r").unwrap().head.unwrap();
    // A writer that knows the recipe: drop the last event and record
    // the new head. The chain alone cannot tell...
    sql(
        &store,
        "DELETE FROM events WHERE run_id = 'r' AND n = 8;
             UPDATE runs SET event_count = 7,
               head = (SELECT hash FROM events WHERE run_id = 'r' AND n = 7) WHERE id = 'r';",
    );
    assert_eq!(store.verify_chain("r").unwrap().events, 7);
    // ...the head published before can.
    assert_eq!(store.chain_position("r", &published).unwrap(), None);
}

#[test]
fn appends_after_a_published_head_keep_it_in_the_chain() {
    let (_d, mut store) = store_with_run();
    let published = store.verify_chain("r").unwrap().head.unwrap();
    store.append("r", &[log(6)]).unwrap();
    assert_eq!(store.verify_chain("r").unwrap().events, 9);
    assert_eq!(store.chain_position("r", &published).unwrap(), Some(8));
}

/// The tables as an older rascal created them.
const OLD_SCHEMA: &str = "
CREATE TABLE runs(
  id TEXT PRIMARY KEY, repo TEXT NOT NULL, base TEXT NOT NULL, instruction TEXT NOT NULL,
  status TEXT NOT NULL, verdict TEXT, exit_code INTEGER, pid INTEGER,
  started_at INTEGER NOT NULL, finished_at INTEGER);
CREATE TABLE candidates(
  run_id TEXT NOT NULL, id TEXT NOT NULL, agent TEXT NOT NULL, runtime TEXT NOT NULL,
  worktree TEXT NOT NULL, status TEXT NOT NULL, verdict TEXT, reason TEXT,
  PRIMARY KEY(run_id, id));
CREATE TABLE reports(
  id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, candidate_id TEXT NOT NULL,
  layer TEXT NOT NULL, check_name TEXT NOT NULL, status TEXT NOT NULL, errored TEXT, json TEXT NOT NULL);
CREATE TABLE decisions(
  id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, candidate_id TEXT, kind TEXT NOT NULL,
  who TEXT NOT NULL, reason TEXT, at INTEGER NOT NULL, json TEXT NOT NULL);
CREATE TABLE events(
  seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, candidate_id TEXT,
  at INTEGER NOT NULL, kind TEXT NOT NULL, json TEXT NOT NULL);
CREATE INDEX events_run ON events(run_id, seq);
";

#[test]
fn runs_of_an_older_rascal_are_unchained_and_new_ones_chained() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rascal.db");
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(OLD_SCHEMA).unwrap();
        conn.execute(
            "INSERT INTO runs(id, repo, base, instruction, status, verdict, exit_code, started_at)
                 VALUES ('old', '/repo', 'abc', 'do it', 'finished', 'pass', 0, 1000)",
            [],
        )
        .unwrap();
        for ev in [started("old"), log(1)]
            .into_iter()
            .chain(finished(Verdict::Pass))
        {
            conn.execute(
                "INSERT INTO events(run_id, at, kind, json) VALUES ('old', 1000, ?1, ?2)",
                params![ev.kind(), serde_json::to_string(&ev).unwrap()],
            )
            .unwrap();
        }
    }
    let mut store = Store::open(&path).unwrap();
    let head = store.verify_chain("old").unwrap();
    assert_eq!((head.events, head.head), (4, None));
    assert_eq!(store.summary("old").unwrap().verdict, Some(Verdict::Pass));
    // A decision on the old run keeps it unchained.
    store.append("old", &[log(2)]).unwrap();
    assert_eq!(store.verify_chain("old").unwrap().head, None);
    // Opening again migrates nothing twice.
    drop(store);
    let mut store = Store::open(&path).unwrap();
    store.append("new", &[started("new"), log(1)]).unwrap();
    assert_eq!(store.verify_chain("new").unwrap().events, 2);
    let rows = store.list().unwrap();
    let chain = |id: &str| rows.iter().find(|r| r.id == id).unwrap().chain;
    assert_eq!((chain("old"), chain("new")), ("unchained", "intact"));
    // A run started after the upgrade with every hash stripped is not
    // taken for an old one.
    sql(
        &store,
        "UPDATE events SET hash = NULL, n = NULL WHERE run_id = 'new';
             UPDATE runs SET head = NULL, event_count = NULL WHERE id = 'new';",
    );
    assert!(matches!(
        store.verify_chain("new"),
        Err(StoreError::Tampered(ChainBroken { event: 1, .. }))
    ));
    // ...not even with its start set before the upgrade (no unhashed
    // column decides whether a run is chained).
    sql(&store, "UPDATE runs SET started_at = 1 WHERE id = 'new'");
    assert!(matches!(
        store.verify_chain("new"),
        Err(StoreError::Tampered(ChainBroken { event: 1, .. }))
    ));
    // Nor by adding it to the list of unchained runs without its
    // digest, and such an altered list accepts no run unchained.
    sql(
        &store,
        "UPDATE meta SET value = replace(value, '[\"old\"]', '[\"new\",\"old\"]')
             WHERE key = 'unchained_runs'",
    );
    let marker: String = store
        .conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'unchained_runs'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(marker.contains("\"new\""), "{marker}");
    assert!(store.verify_chain("new").is_err());
    assert!(store.verify_chain("old").is_err());
    // Nor by deleting the list: a database that has the chain and no
    // list accepts no run unchained.
    sql(&store, "DELETE FROM meta WHERE key = 'unchained_runs'");
    drop(store);
    let store = Store::open(&path).unwrap();
    assert!(store.verify_chain("new").is_err());
    assert!(store.verify_chain("old").is_err());
    // Old rows with a hashed row among them: never valid.
    sql(
        &store,
        "UPDATE events SET n = 2, hash = 'ab' WHERE run_id = 'old' AND kind = 'log'",
    );
    assert!(matches!(
        store.verify_chain("old"),
        Err(StoreError::Tampered(ChainBroken { event: 1, .. }))
    ));
}
