//! The store's tables and their upkeep: creating them, putting the
//! database in WAL mode, and bringing an older rascal's database up to
//! date (the journal's chain columns and the marker of its unchained
//! runs).

use super::chain;
use super::now_ms;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs(
  id TEXT PRIMARY KEY, repo TEXT NOT NULL, base TEXT NOT NULL, instruction TEXT NOT NULL,
  status TEXT NOT NULL, verdict TEXT, exit_code INTEGER, pid INTEGER,
  started_at INTEGER NOT NULL, finished_at INTEGER, head TEXT, event_count INTEGER);
CREATE TABLE IF NOT EXISTS candidates(
  run_id TEXT NOT NULL, id TEXT NOT NULL, agent TEXT NOT NULL, runtime TEXT NOT NULL,
  worktree TEXT NOT NULL, status TEXT NOT NULL, verdict TEXT, reason TEXT,
  PRIMARY KEY(run_id, id));
CREATE TABLE IF NOT EXISTS reports(
  id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, candidate_id TEXT NOT NULL,
  layer TEXT NOT NULL, check_name TEXT NOT NULL, status TEXT NOT NULL, errored TEXT, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS decisions(
  id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, candidate_id TEXT, kind TEXT NOT NULL,
  who TEXT NOT NULL, reason TEXT, at INTEGER NOT NULL, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events(
  seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, candidate_id TEXT,
  at INTEGER NOT NULL, kind TEXT NOT NULL, json TEXT NOT NULL, n INTEGER, hash TEXT);
CREATE INDEX IF NOT EXISTS events_run ON events(run_id, seq);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
";

/// `meta` key: runs started at or after this time (ms) must have a chained
/// journal (0 in a database created chained; the upgrade time in one
/// written by an older rascal).
const CHAINED_SINCE: &str = "chained_since";

/// `meta` key: the runs an older rascal recorded before this database
/// chained its journal — the only runs `verify` accepts without a chain —
/// with a digest over the list ([`unchained_marker`]). Written once, when
/// the chain columns are added; no unhashed column (a run's `started_at`)
/// decides whether a run must be chained (see `chain.rs`).
pub(super) const UNCHAINED_RUNS: &str = "unchained_runs";

/// The value of the [`UNCHAINED_RUNS`] marker for these run ids: the ids
/// (sorted) and a sha256 over them, so an id added to or removed from the
/// list without recomputing the digest is caught (and then no run is
/// accepted unchained).
fn unchained_marker(runs: &[String]) -> String {
    let mut runs = runs.to_vec();
    runs.sort();
    runs.dedup();
    serde_json::json!({ "runs": runs, "digest": unchained_digest(&runs) }).to_string()
}

fn unchained_digest(runs: &[String]) -> String {
    let mut buf = format!("{}\0unchained-runs\0", chain::SCHEME);
    for r in runs {
        buf.push_str(&format!("{}:{r}\n", r.len()));
    }
    rascal_core::digest::digest(buf)
}

/// The runs the [`UNCHAINED_RUNS`] marker names, when its digest checks
/// out; an empty list when it is missing, unreadable or altered (every run
/// must then be chained).
pub(super) fn unchained_runs(value: Option<&str>) -> Vec<String> {
    let Some(doc) = value.and_then(|v| serde_json::from_str::<serde_json::Value>(v).ok()) else {
        return Vec::new();
    };
    let runs: Vec<String> = doc["runs"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    match doc["digest"].as_str() {
        Some(d) if d == unchained_digest(&runs) => runs,
        _ => Vec::new(),
    }
}

fn has_column(conn: &Connection, table: &str, column: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT COUNT(*) FROM pragma_table_info(?1) WHERE name = ?2",
        params![table, column],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// Put the database in WAL mode, once. The mode is kept in the file, so an
/// open of a store already in it changes nothing. Switching needs the
/// file to itself and SQLite answers "database is locked" at once, without
/// its busy wait, when another process has it open (a `rascal list` while
/// a first run creates the store): asked again for up to 10 s.
pub(super) fn write_ahead_log(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let mode = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0))
            .and_then(|mode| {
                if mode.eq_ignore_ascii_case("wal") {
                    Ok(())
                } else {
                    conn.pragma_update(None, "journal_mode", "WAL")
                }
            });
        match mode {
            Err(rusqlite::Error::SqliteFailure(f, _))
                if matches!(
                    f.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// Create the tables, or bring a database of an older rascal up to date:
/// the chain columns are added (its runs stay unchained) and the time from
/// which every run must be chained is recorded.
pub(super) fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    let ready = has_column(conn, "events", "hash")?
        && has_column(conn, "runs", "head")?
        && has_column(conn, "meta", "key")?
        && conn
            .query_row("SELECT 1 FROM meta WHERE key = ?1", [CHAINED_SINCE], |_| {
                Ok(())
            })
            .optional()?
            .is_some()
        && conn
            .query_row(
                "SELECT 1 FROM meta WHERE key = ?1",
                [UNCHAINED_RUNS],
                |_| Ok(()),
            )
            .optional()?
            .is_some();
    if ready {
        return Ok(());
    }
    // One process migrates; the others wait, then find it done.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let existed = has_column(&tx, "events", "seq")?;
    tx.execute_batch(SCHEMA)?;
    let mut since = if existed { None } else { Some(0) };
    // The runs recorded before the journal was chained: only those of a
    // database that had no chain until now. A database that has the chain
    // but lost its marker accepts no run unchained.
    let mut unchained: Vec<String> = Vec::new();
    if existed && !has_column(&tx, "events", "hash")? {
        let mut stmt = tx.prepare("SELECT id FROM runs")?;
        unchained = stmt
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<_>>()?;
    }
    if !has_column(&tx, "events", "hash")? {
        tx.execute_batch(
            "ALTER TABLE events ADD COLUMN n INTEGER; ALTER TABLE events ADD COLUMN hash TEXT;",
        )?;
        since = Some(now_ms());
    }
    if !has_column(&tx, "runs", "head")? {
        tx.execute_batch(
            "ALTER TABLE runs ADD COLUMN head TEXT; ALTER TABLE runs ADD COLUMN event_count INTEGER;",
        )?;
    }
    // A database whose marker went missing is held to the strict rule.
    tx.execute(
        "INSERT OR IGNORE INTO meta(key, value) VALUES (?1, ?2)",
        params![CHAINED_SINCE, since.unwrap_or(0).to_string()],
    )?;
    tx.execute(
        "INSERT OR IGNORE INTO meta(key, value) VALUES (?1, ?2)",
        params![UNCHAINED_RUNS, unchained_marker(&unchained)],
    )?;
    tx.commit()
}
