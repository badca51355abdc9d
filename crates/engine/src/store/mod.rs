//! The run store: SQLite (WAL) at `.git/rascal/rascal.db`. Tables for runs,
//! candidates, reports and decisions are projections of an append-only
//! events journal, written before any event is shown, so killing rascal
//! loses nothing that had landed. The journal of each run is a hash chain
//! (`chain.rs`): everything that reads a run's events checks it first.

pub(crate) mod chain;
mod list;
pub(crate) mod logfile;
pub(crate) mod logview;
pub(crate) mod project;
mod projection;
mod schema;
pub(crate) mod upkeep;

pub use chain::{ChainBroken, ChainHead};
pub use list::RunRow;
pub use project::{Project, ProjectError};

use chain::{RecordedHead, StoredEvent};
use projection::project;
use rascal_core::model::event::RunEvent;
use rascal_core::model::summary::RunSummary;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use schema::{migrate, unchained_runs, write_ahead_log, UNCHAINED_RUNS};
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

pub use rascal_core::model::clock::now_ms;
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
    rascal_exec::exec::os::process_alive(pid)
}

#[cfg(test)]
mod tests;

// What callers outside the engine use (the CLI, the TUI, tests).
pub use chain::event_hash;
pub use chain::genesis;
pub use logfile::lines as log_lines;
pub use logfile::read_bytes;
pub use logfile::LogWriter;
pub use logfile::DEFAULT_MAX_LOG_BYTES;
pub use logview::LogView;
pub use project::author_in;
