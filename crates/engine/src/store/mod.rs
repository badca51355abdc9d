//! The run store: SQLite (WAL) at `.git/rascal/rascal.db`. Tables for runs,
//! candidates, reports and decisions are projections of an append-only
//! events journal, written before any event is shown, so killing rascal
//! loses nothing that had landed. The journal of each run is a hash chain
//! (`chain.rs`): everything that reads a run's events checks it first.

pub mod chain;
pub mod logfile;
pub mod logview;
pub mod project;
pub(crate) mod upkeep;

pub use chain::{ChainBroken, ChainHead};
pub use project::{Project, ProjectError};

use crate::model::event::RunEvent;
use crate::model::summary::RunSummary;
use chain::{RecordedHead, StoredEvent};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("run store {path}: {source}\n  hint: check that the directory is writable; delete the file to start over (run history is lost)")]
    Sqlite {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("no run `{0}` in this repository\n  hint: `rascal list` shows the runs")]
    NoSuchRun(String),
    #[error("run store: {0}")]
    Json(#[from] serde_json::Error),
    /// The run's journal does not check out against its hash chain.
    #[error("{0}")]
    Tampered(#[from] ChainBroken),
    /// A candidate's log file could not be written (or read back).
    #[error("{0}")]
    Log(#[from] logfile::LogFileError),
}

pub type Result<T> = std::result::Result<T, StoreError>;

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// One row of `rascal list`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunRow {
    pub id: String,
    pub status: String,
    pub verdict: Option<String>,
    pub exit_code: Option<i32>,
    /// Where the run stands, folded from its journal: running, its
    /// verdict, cancelled, escalated or interrupted (None when its record
    /// does not check out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<crate::model::state::State>,
    /// The candidate selected for finalizing, and the branch it was
    /// finalized on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selected: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finalized: Option<String>,
    /// The comparator's pick, or `contested: a | b` (the candidates that
    /// passed) when they disagree and nothing settles it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pick: Option<String>,
    /// Candidates a budget stopped → why
    /// (`budget: $0.52 spent of $0.50 (agent careful)`).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub over_budget: std::collections::BTreeMap<String, String>,
    pub base: String,
    pub instruction: String,
    pub candidates: u32,
    pub started_at: i64,
    /// `intact`, `unchained` (recorded by an older rascal) or `broken`
    /// (then `verdict` is `tampered`).
    pub chain: &'static str,
    /// The first event that does not check out, when `chain` is `broken`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub broken_event: Option<u64>,
}

/// The run's pick as `list` shows it: the comparator's, or `contested:`
/// and the candidates that passed.
fn pick_of(s: &RunSummary) -> Option<String> {
    use crate::model::state::State;
    let ranking = s.ranking.as_ref()?;
    if let Some(pick) = &ranking.pick {
        return Some(pick.clone());
    }
    ranking.contested.as_ref()?;
    let passed: Vec<&str> = s
        .candidates
        .iter()
        .filter(|c| matches!(c.state, State::Pass | State::Warn))
        .map(|c| c.id.as_str())
        .collect();
    Some(format!("contested: {}", passed.join(" | ")))
}

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
const UNCHAINED_RUNS: &str = "unchained_runs";

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
    crate::digest::digest(buf)
}

/// The runs the [`UNCHAINED_RUNS`] marker names, when its digest checks
/// out; an empty list when it is missing, unreadable or altered (every run
/// must then be chained).
fn unchained_runs(value: Option<&str>) -> Vec<String> {
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

/// Create the tables, or bring a database of an older rascal up to date:
/// the chain columns are added (its runs stay unchained) and the time from
/// which every run must be chained is recorded.
/// Put the database in WAL mode, once. The mode is kept in the file, so an
/// open of a store already in it changes nothing. Switching needs the
/// file to itself and SQLite answers "database is locked" at once, without
/// its busy wait, when another process has it open (a `rascal list` while
/// a first run creates the store): asked again for up to 10 s.
fn write_ahead_log(conn: &Connection) -> rusqlite::Result<()> {
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

fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
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

pub use crate::model::clock::now_ms;
impl Store {
    /// The store of the repository whose state dir is `state`.
    pub fn path_in(state: &Path) -> PathBuf {
        state.join("rascal.db")
    }

    pub fn open(path: &Path) -> Result<Store> {
        let err = |source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let conn = Connection::open(path).map_err(err)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(err)?;
        write_ahead_log(&conn).map_err(err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(err)?;
        let mut conn = conn;
        migrate(&mut conn).map_err(err)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Open for reading only, for `list`, `show`, `report` and `verify`
    /// on a store that cannot be written (a read-only directory, a full
    /// disk): a normal open first, then SQLite's read-only mode, then its
    /// immutable mode (a read-only directory cannot hold the WAL's shared
    /// memory file). Returns the error of the normal open when neither
    /// reads.
    pub fn open_read(path: &Path) -> Result<Store> {
        let first = match Store::open(path) {
            Ok(s) => return Ok(s),
            Err(e) => e,
        };
        if !path.is_file() {
            return Err(first);
        }
        let escaped: String = path
            .to_string_lossy()
            .chars()
            .map(|c| match c {
                '%' => "%25".to_string(),
                '?' => "%3f".to_string(),
                '#' => "%23".to_string(),
                c => c.to_string(),
            })
            .collect();
        for mode in ["mode=ro", "immutable=1"] {
            let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
                | rusqlite::OpenFlags::SQLITE_OPEN_URI
                | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
            let Ok(conn) = Connection::open_with_flags(format!("file:{escaped}?{mode}"), flags)
            else {
                continue;
            };
            if conn
                .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get::<_, i64>(0))
                .is_ok()
            {
                return Ok(Store {
                    conn,
                    path: path.to_path_buf(),
                });
            }
        }
        Err(first)
    }

    fn err(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    pub fn run_exists(&self, id: &str) -> Result<bool> {
        self.conn
            .query_row("SELECT 1 FROM runs WHERE id = ?1", [id], |_| Ok(()))
            .optional()
            .map(|o| o.is_some())
            .map_err(|e| self.err(e))
    }

    /// Append events of `run` to the journal, each chained to the one
    /// before it (see `chain.rs`), and update the projections and the
    /// run's chain head, in one transaction. A run recorded by an older
    /// rascal (its last event has no hash) stays unchained.
    pub fn append(&mut self, run: &str, events: &[RunEvent]) -> Result<()> {
        let path = self.path.clone();
        let err = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        // Immediate: the last hash read here is still the last one when
        // this transaction writes.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let at = now_ms();
        let last: Option<(Option<i64>, Option<String>)> = tx
            .query_row(
                "SELECT n, hash FROM events WHERE run_id = ?1 ORDER BY seq DESC LIMIT 1",
                [run],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(err)?;
        let mut link: Option<(u64, String)> = match last {
            None => Some((0, chain::genesis(run))),
            Some((Some(n), Some(hash))) => Some((n.max(0) as u64, hash)),
            Some(_) => None,
        };
        for ev in events {
            let json = serde_json::to_string(ev)?;
            let kind = ev.kind();
            let (n, hash) = match &link {
                Some((n, prev)) => {
                    let n = n + 1;
                    (
                        Some(n),
                        Some(chain::event_hash(run, n, at, kind, &json, prev)),
                    )
                }
                None => (None, None),
            };
            tx.execute(
                "INSERT INTO events(run_id, candidate_id, at, kind, json, n, hash)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    run,
                    ev.candidate(),
                    at,
                    kind,
                    json,
                    n.map(|n| n as i64),
                    hash
                ],
            )
            .map_err(err)?;
            if let (Some(n), Some(hash)) = (n, hash) {
                link = Some((n, hash));
            }
            project(&tx, run, at, ev).map_err(err)?;
        }
        if let Some((n, head)) = link.filter(|(n, _)| *n > 0) {
            tx.execute(
                "UPDATE runs SET head = ?2, event_count = ?3 WHERE id = ?1",
                params![run, head, n as i64],
            )
            .map_err(err)?;
        }
        tx.commit().map_err(err)
    }

    /// A run's journal rows and what its `runs` row says about them, read
    /// in one snapshot (a live run may be appending meanwhile).
    fn stored(&self, run: &str) -> Result<(RecordedHead, Vec<StoredEvent>)> {
        let tx = self.conn.unchecked_transaction().map_err(|e| self.err(e))?;
        let row: Option<(Option<String>, Option<i64>, i64)> = tx
            .query_row(
                "SELECT head, event_count, started_at FROM runs WHERE id = ?1",
                [run],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let Some((head, events, _started_at)) = row else {
            return Err(StoreError::NoSuchRun(run.to_string()));
        };
        // Whether the run may be unchained is the chained marker's word,
        // never the run's own (unhashed) columns.
        let marker: Option<String> = tx
            .query_row(
                "SELECT value FROM meta WHERE key = ?1",
                [UNCHAINED_RUNS],
                |r| r.get::<_, String>(0),
            )
            .ok();
        let may_be_unchained = unchained_runs(marker.as_deref()).iter().any(|r| r == run);
        let mut stmt = tx
            .prepare("SELECT n, at, kind, json, hash FROM events WHERE run_id = ?1 ORDER BY seq")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([run], |r| {
                Ok(StoredEvent {
                    n: r.get(0)?,
                    at: r.get(1)?,
                    kind: r.get(2)?,
                    json: r.get(3)?,
                    hash: r.get(4)?,
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        let recorded = RecordedHead {
            head,
            events,
            must_chain: !may_be_unchained,
        };
        Ok((recorded, rows))
    }

    /// Check run `run`'s journal against its hash chain: its head, or
    /// [`StoreError::Tampered`] naming the first event that does not check
    /// out. The chain catches any edit, removal, reordering or cut of
    /// events by a writer that does not also recompute every later hash
    /// and the run's recorded head; against such a writer, compare with a
    /// head published elsewhere (the PR body).
    pub fn verify_chain(&self, run: &str) -> Result<ChainHead> {
        let (recorded, rows) = self.stored(run)?;
        Ok(chain::check(run, &recorded, &rows)?)
    }

    /// The 1-based position of the event whose chain hash is `hash` in
    /// run `run`'s (checked) journal, if any: whether a head published
    /// earlier is still part of the record.
    pub fn chain_position(&self, run: &str, hash: &str) -> Result<Option<u64>> {
        let (recorded, rows) = self.stored(run)?;
        chain::check(run, &recorded, &rows)?;
        let hash = hash.to_ascii_lowercase();
        Ok(rows
            .iter()
            .position(|r| r.hash.as_deref() == Some(hash.as_str()))
            .map(|i| i as u64 + 1))
    }

    /// All events of a run, in order, once its chain checks out, with the
    /// chain's head. `logs: false` leaves out the agents' log lines.
    fn checked_events(&self, run: &str, logs: bool) -> Result<(Vec<RunEvent>, ChainHead)> {
        let (events, head) = self.checked_timed(run, logs)?;
        Ok((events.into_iter().map(|(_, ev)| ev).collect(), head))
    }

    /// `checked_events` with the time (ms) each event was journalled.
    fn checked_timed(&self, run: &str, logs: bool) -> Result<(Vec<(i64, RunEvent)>, ChainHead)> {
        let (recorded, rows) = self.stored(run)?;
        let head = chain::check(run, &recorded, &rows)?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            if logs || row.kind != "log" {
                out.push((row.at, serde_json::from_str(&row.json)?));
            }
        }
        Ok((out, head))
    }

    /// All events of a run with the time each was journalled (ms), once
    /// its chain checks out: what a reattach replays, clocks included.
    pub fn verified_timed(&self, run: &str) -> Result<(Vec<(i64, RunEvent)>, ChainHead)> {
        self.checked_timed(run, true)
    }

    /// All events of a run, in order, with the chain's head; an error when
    /// the chain does not check out.
    pub fn verified_events(&self, run: &str) -> Result<(Vec<RunEvent>, ChainHead)> {
        self.checked_events(run, true)
    }

    /// All events of a run, in order (its chain checked first).
    pub fn events(&self, run: &str) -> Result<Vec<RunEvent>> {
        Ok(self.verified_events(run)?.0)
    }

    /// Events after journal position `after` with their position and
    /// time (ms), for following a run another process is writing.
    pub fn events_since(&self, run: &str, after: i64) -> Result<Vec<(i64, i64, RunEvent)>> {
        let mut stmt = self
            .conn
            .prepare("SELECT seq, at, json FROM events WHERE run_id = ?1 AND seq > ?2 ORDER BY seq")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![run, after], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, at, json) = row.map_err(|e| self.err(e))?;
            out.push((seq, at, serde_json::from_str(&json)?));
        }
        Ok(out)
    }

    /// The run's summary, folded from its checked journal, with the
    /// chain's head.
    pub fn summary(&self, run: &str) -> Result<RunSummary> {
        let (events, head) = self.checked_timed(run, true)?;
        let mut summary = RunSummary::from_timed(&events);
        summary.journal = Some(head);
        Ok(summary)
    }

    /// Newest first. The verdict of each run is folded from its checked
    /// journal (the `runs` table is only a projection); a run whose chain
    /// breaks has the verdict `tampered`.
    pub fn list(&self) -> Result<Vec<RunRow>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id, r.status, r.base, r.instruction, r.started_at,
                        (SELECT COUNT(*) FROM candidates c WHERE c.run_id = r.id)
                 FROM runs r ORDER BY r.started_at DESC, r.id DESC",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(RunRow {
                    id: r.get(0)?,
                    status: r.get(1)?,
                    verdict: None,
                    exit_code: None,
                    state: None,
                    selected: None,
                    finalized: None,
                    pick: None,
                    over_budget: Default::default(),
                    base: r.get(2)?,
                    instruction: r.get(3)?,
                    started_at: r.get(4)?,
                    candidates: r.get(5)?,
                    chain: "broken",
                    broken_event: None,
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        drop(stmt);
        let mut out = Vec::with_capacity(rows.len());
        for mut row in rows {
            match self.checked_events(&row.id, false) {
                Ok((events, head)) => {
                    let s = RunSummary::from_events(&events);
                    row.pick = pick_of(&s);
                    row.chain = if head.head.is_some() {
                        "intact"
                    } else {
                        "unchained"
                    };
                    row.base = s.base;
                    row.instruction = s.instruction;
                    row.candidates = s.candidates.len() as u32;
                    row.state = Some(s.state);
                    row.selected = s.selected.clone();
                    row.finalized = s.finalized.as_ref().map(|f| f.branch.clone());
                    row.over_budget = s
                        .candidates
                        .iter()
                        .filter_map(|c| Some((c.id.clone(), c.over_budget.clone()?)))
                        .collect();
                    // A run being driven (a retry, an attach) has no
                    // verdict yet, whatever an earlier attempt said.
                    if row.status != "running" {
                        row.verdict = s.verdict.map(|v| verdict_str(v).to_string());
                        row.exit_code = s.exit_code.or(s.verdict.map(|v| match v {
                            crate::model::verdict::Verdict::Fail => 1,
                            _ => 0,
                        }));
                    }
                }
                Err(StoreError::Tampered(b)) => {
                    row.verdict = Some("tampered".into());
                    row.exit_code = Some(1);
                    row.broken_event = Some(b.event);
                }
                Err(e) => return Err(e),
            }
            out.push(row);
        }
        Ok(out)
    }

    /// The runs whose instruction is `instruction` (after trimming), newest
    /// first: where a human's earlier answers to the same task are.
    pub fn runs_of_task(&self, instruction: &str) -> Result<Vec<String>> {
        let rows = self
            .string_pairs("SELECT id, instruction FROM runs ORDER BY started_at DESC, id DESC")?;
        Ok(rows
            .into_iter()
            .filter(|(_, i)| i.trim() == instruction.trim())
            .map(|(id, _)| id)
            .collect())
    }

    /// The rows of `sql`, a query of two text columns.
    pub(super) fn string_pairs(&self, sql: &str) -> Result<Vec<(String, String)>> {
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| self.err(e))?
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }

    /// Record the pid running `run`, so a later rascal can tell it died.
    pub fn set_pid(&self, run: &str, pid: u32) -> Result<()> {
        self.conn
            .execute("UPDATE runs SET pid = ?2 WHERE id = ?1", params![run, pid])
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// A run's status (`running`, `finished`, `interrupted`), if it exists.
    pub fn run_status(&self, run: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT status FROM runs WHERE id = ?1", [run], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))
    }

    /// `rascal attach`: this process now runs the interrupted `run`.
    pub fn resume_run(&self, run: &str) -> Result<()> {
        self.conn
            .execute(
                "UPDATE runs SET status = 'running', pid = ?2, verdict = NULL, exit_code = NULL,
                 finished_at = NULL WHERE id = ?1",
                params![run, std::process::id()],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Runs still marked running whose process is gone: journal an
    /// interruption so they read as what they are. Returns their ids.
    pub fn mark_interrupted(&mut self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, pid FROM runs WHERE status = 'running'")
            .map_err(|e| self.err(e))?;
        let rows: Vec<(String, Option<i64>)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.err(e))?
            .filter_map(|r| r.ok())
            .collect();
        drop(stmt);
        let mut dead = Vec::new();
        for (id, pid) in rows {
            let alive = pid
                .map(|p| p as i32 != std::process::id() as i32 && process_alive(p as i32))
                .unwrap_or(false);
            if !alive {
                self.append(
                    &id,
                    &[RunEvent::RunInterrupted {
                        reason: format!(
                            "the rascal process running it (pid {}) is gone; results that had landed are kept",
                            pid.map(|p| p.to_string()).unwrap_or("?".into())
                        ),
                    }],
                )?;
                dead.push(id);
            }
        }
        Ok(dead)
    }
}

fn process_alive(pid: i32) -> bool {
    crate::exec::os::process_alive(pid)
}

fn verdict_str(v: crate::model::verdict::Verdict) -> &'static str {
    match v {
        crate::model::verdict::Verdict::Pass => "pass",
        crate::model::verdict::Verdict::Warn => "warn",
        crate::model::verdict::Verdict::Fail => "fail",
    }
}

/// One row of the decisions table: (kind, who, reason).
fn insert_decision(
    tx: &rusqlite::Transaction,
    run: &str,
    candidate: Option<&str>,
    (kind, who, reason): (&str, &str, &str),
    at: i64,
    json: String,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO decisions(run_id, candidate_id, kind, who, reason, at, json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![run, candidate, kind, who, reason, at, json],
    )
    .map(|_| ())
}

/// Keep the tables in step with the journal.
fn project(tx: &rusqlite::Transaction, run: &str, at: i64, ev: &RunEvent) -> rusqlite::Result<()> {
    match ev {
        RunEvent::RunStarted {
            repo,
            base,
            instruction,
            candidates,
            ..
        } => {
            tx.execute(
                "INSERT INTO runs(id, repo, base, instruction, status, pid, started_at)
                 VALUES (?1, ?2, ?3, ?4, 'running', ?5, ?6)",
                params![run, repo, base, instruction, std::process::id(), at],
            )?;
            for c in candidates {
                tx.execute(
                    "INSERT INTO candidates(run_id, id, agent, runtime, worktree, status)
                     VALUES (?1, ?2, ?3, ?4, ?5, 'pending')",
                    params![run, c.id, c.agent, c.runtime, c.worktree],
                )?;
            }
        }
        RunEvent::CandidateAdded { candidate: c, .. } => {
            tx.execute(
                "INSERT OR IGNORE INTO candidates(run_id, id, agent, runtime, worktree, status)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'pending')",
                params![run, c.id, c.agent, c.runtime, c.worktree],
            )?;
        }
        RunEvent::CandidateStarted { candidate, .. } => {
            tx.execute(
                "UPDATE candidates SET status = 'running' WHERE run_id = ?1 AND id = ?2",
                params![run, candidate],
            )?;
        }
        RunEvent::ReportLanded { candidate, report } => {
            tx.execute(
                "INSERT INTO reports(run_id, candidate_id, layer, check_name, status, errored, json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    run,
                    candidate,
                    report.layer.name(),
                    report.check,
                    report.status.label(),
                    report.errored,
                    serde_json::to_string(report).unwrap_or_default()
                ],
            )?;
        }
        RunEvent::CandidateFinished {
            candidate,
            verdict,
            reason,
            ..
        } => {
            tx.execute(
                "UPDATE candidates SET status = 'finished', verdict = ?3, reason = ?4
                 WHERE run_id = ?1 AND id = ?2",
                params![run, candidate, verdict_str(*verdict), reason],
            )?;
        }
        RunEvent::RunFinished { verdict, exit_code } => {
            tx.execute(
                "UPDATE runs SET status = 'finished', verdict = ?2, exit_code = ?3, finished_at = ?4 WHERE id = ?1",
                params![run, verdict_str(*verdict), exit_code, at],
            )?;
        }
        RunEvent::RunInterrupted { .. } => {
            tx.execute(
                "UPDATE runs SET status = 'interrupted', verdict = COALESCE(verdict, 'fail'),
                 exit_code = COALESCE(exit_code, 1), finished_at = ?2 WHERE id = ?1",
                params![run, at],
            )?;
            tx.execute(
                "UPDATE candidates SET status = 'interrupted' WHERE run_id = ?1 AND status != 'finished'",
                params![run],
            )?;
        }
        RunEvent::DecisionRecorded { .. }
        | RunEvent::AttemptStarted { .. }
        | RunEvent::CandidateEscalated { .. }
        | RunEvent::OverBudget { .. } => project_decision(tx, run, at, ev)?,
        RunEvent::Log { .. }
        | RunEvent::LogSegment(_)
        | RunEvent::BudgetUnenforced { .. }
        | RunEvent::LayerStarted { .. }
        | RunEvent::TaskLoaded { .. }
        | RunEvent::Ranked { .. }
        | RunEvent::Usage { .. }
        | RunEvent::AgentSummary { .. }
        | RunEvent::DeclaredImpossible { .. }
        | RunEvent::PlanProposed { .. }
        | RunEvent::CriteriaOnBase { .. }
        | RunEvent::Finalized(_) => {}
    }
    Ok(())
}

/// The decisions table's rows: a human's (or the auto policy's) decision,
/// and rascal's own — a retry, an escalation, a budget's stop.
fn project_decision(
    tx: &rusqlite::Transaction,
    run: &str,
    at: i64,
    ev: &RunEvent,
) -> rusqlite::Result<()> {
    match ev {
        RunEvent::DecisionRecorded { decision } => insert_decision(
            tx,
            run,
            decision.candidate.as_deref(),
            (decision.kind.name(), &decision.who, &decision.reason),
            decision.at_ms,
            serde_json::to_string(decision).unwrap_or_default(),
        ),
        RunEvent::AttemptStarted {
            candidate,
            attempt,
            feedback,
        } => insert_decision(
            tx,
            run,
            Some(candidate),
            (
                "retry",
                "rascal",
                &format!("attempt {attempt} with feedback"),
            ),
            at,
            serde_json::json!({"attempt": attempt, "feedback": feedback}).to_string(),
        ),
        RunEvent::CandidateEscalated {
            candidate,
            reason,
            table,
        } => insert_decision(
            tx,
            run,
            Some(candidate),
            ("escalate", "rascal", reason),
            at,
            serde_json::json!({"reason": reason, "table": table}).to_string(),
        ),
        // A budget's stop is rascal's cancel of the candidate.
        RunEvent::OverBudget { candidate, reason } => insert_decision(
            tx,
            run,
            Some(candidate),
            ("cancel", "rascal", reason),
            at,
            serde_json::json!({"reason": reason, "budget": true}).to_string(),
        ),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::event::CandidateInfo;
    use crate::model::verdict::Verdict;

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
            stream: crate::model::log::Stream::Stdout,
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
        assert_eq!(row.state, Some(crate::model::state::State::Running));
        assert_eq!(row.verdict, None, "no verdict yet, never FAIL");
        let s = store.summary("r").unwrap();
        assert!(s.wall.started_ms.is_some(), "clocks from journal times");
        store.append("r", &finished(Verdict::Fail)).unwrap();
        let row = &store.list().unwrap()[0];
        assert_eq!(row.state, Some(crate::model::state::State::Fail));
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
}
