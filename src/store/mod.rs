//! The run store: SQLite (WAL) at `.git/rascal/rascal.db`. Tables for runs,
//! candidates, reports and decisions are projections of an append-only
//! events journal, written before any event is shown, so killing rascal
//! loses nothing that had landed.

use crate::model::event::RunEvent;
use crate::model::summary::RunSummary;
use rusqlite::{params, Connection, OptionalExtension};
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
    pub base: String,
    pub instruction: String,
    pub candidates: u32,
    pub started_at: i64,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs(
  id TEXT PRIMARY KEY, repo TEXT NOT NULL, base TEXT NOT NULL, instruction TEXT NOT NULL,
  status TEXT NOT NULL, verdict TEXT, exit_code INTEGER, pid INTEGER,
  started_at INTEGER NOT NULL, finished_at INTEGER);
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
  at INTEGER NOT NULL, kind TEXT NOT NULL, json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_run ON events(run_id, seq);
";

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
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(err)?;
        conn.execute_batch(SCHEMA).map_err(err)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
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

    /// Append events of `run` to the journal and update the projections,
    /// in one transaction.
    pub fn append(&mut self, run: &str, events: &[RunEvent]) -> Result<()> {
        let path = self.path.clone();
        let err = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.conn.transaction().map_err(err)?;
        let at = now_ms();
        for ev in events {
            let json = serde_json::to_string(ev)?;
            tx.execute(
                "INSERT INTO events(run_id, candidate_id, at, kind, json) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![run, ev.candidate(), at, ev.kind(), json],
            )
            .map_err(err)?;
            project(&tx, run, at, ev).map_err(err)?;
        }
        tx.commit().map_err(err)
    }

    /// All events of a run, in order.
    pub fn events(&self, run: &str) -> Result<Vec<RunEvent>> {
        if !self.run_exists(run)? {
            return Err(StoreError::NoSuchRun(run.to_string()));
        }
        let mut stmt = self
            .conn
            .prepare("SELECT json FROM events WHERE run_id = ?1 ORDER BY seq")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([run], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let json = row.map_err(|e| self.err(e))?;
            out.push(serde_json::from_str(&json)?);
        }
        Ok(out)
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

    pub fn summary(&self, run: &str) -> Result<RunSummary> {
        Ok(RunSummary::from_events(&self.events(run)?))
    }

    /// Newest first.
    pub fn list(&self) -> Result<Vec<RunRow>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id, r.status, r.verdict, r.exit_code, r.base, r.instruction, r.started_at,
                        (SELECT COUNT(*) FROM candidates c WHERE c.run_id = r.id)
                 FROM runs r ORDER BY r.started_at DESC, r.id DESC",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(RunRow {
                    id: r.get(0)?,
                    status: r.get(1)?,
                    verdict: r.get(2)?,
                    exit_code: r.get(3)?,
                    base: r.get(4)?,
                    instruction: r.get(5)?,
                    started_at: r.get(6)?,
                    candidates: r.get(7)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))
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
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks for existence.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
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
        RunEvent::DecisionRecorded { decision } => insert_decision(
            tx,
            run,
            decision.candidate.as_deref(),
            (decision.kind.name(), &decision.who, &decision.reason),
            decision.at_ms,
            serde_json::to_string(decision).unwrap_or_default(),
        )?,
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
        )?,
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
        )?,
        RunEvent::Log { .. }
        | RunEvent::LayerStarted { .. }
        | RunEvent::TaskLoaded { .. }
        | RunEvent::Ranked { .. }
        | RunEvent::Usage { .. }
        | RunEvent::AgentSummary { .. } => {}
    }
    Ok(())
}
