//! Keeping the store small: what `rascal gc` reads about every run (its
//! status, the pid that drives it and when it was last active), forgetting
//! a run's records, and compacting the database file.

use super::{Result, Store};
use rascal_core::model::event::RunEvent;
use rusqlite::{params, TransactionBehavior};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The tables that hold rows of a run, each keyed by its `run_id` column
/// (`runs` by `id`). `--forget` deletes from every one of them.
const RUN_TABLES: [&str; 4] = ["events", "decisions", "reports", "candidates"];

/// What the store says about one run, for deciding whether it may be
/// cleaned up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunActivity {
    pub id: String,
    /// `running`, `finished` or `interrupted`.
    pub status: String,
    /// The process that drives (or drove) the run.
    pub pid: Option<i64>,
    /// When it was last active (ms): the latest of its start, its end and
    /// its last decision.
    pub last_active_ms: i64,
}

impl Store {
    /// Every run's status, driver and last activity, newest first.
    pub fn activity(&self) -> Result<Vec<RunActivity>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id, r.status, r.pid,
                        MAX(r.started_at, COALESCE(r.finished_at, 0),
                            COALESCE((SELECT MAX(d.at) FROM decisions d WHERE d.run_id = r.id), 0))
                 FROM runs r ORDER BY r.started_at DESC, r.id DESC",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(RunActivity {
                    id: r.get(0)?,
                    status: r.get(1)?,
                    pid: r.get(2)?,
                    last_active_ms: r.get(3)?,
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }

    /// The launcher each run was started with (`process`, `docker`), from
    /// its first event. Not checked against the chain: it only decides
    /// whether to ask the Docker engine about the run's containers.
    pub fn launchers(&self) -> Result<BTreeMap<String, String>> {
        let rows =
            self.string_pairs("SELECT run_id, json FROM events WHERE kind = 'run_started'")?;
        Ok(rows
            .into_iter()
            .filter_map(|(run, json)| match serde_json::from_str(&json) {
                Ok(RunEvent::RunStarted { launcher, .. }) => Some((run, launcher)),
                _ => None,
            })
            .collect())
    }

    /// The ids of run `run`'s candidates, as recorded.
    pub fn candidate_ids(&self, run: &str) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT id FROM candidates WHERE run_id = ?1 ORDER BY id")
            .map_err(|e| self.err(e))?;
        let ids = stmt
            .query_map([run], |r| r.get(0))
            .map_err(|e| self.err(e))?
            .collect::<std::result::Result<Vec<String>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(ids)
    }

    /// Delete every record of `run` (its journal, decisions, reports,
    /// candidates and its row), in one transaction. Returns how many rows
    /// went.
    pub fn forget(&mut self, run: &str) -> Result<usize> {
        let path = self.path.clone();
        let err = |source| super::StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let mut rows = 0;
        for table in RUN_TABLES {
            rows += tx
                .execute(
                    &format!("DELETE FROM {table} WHERE run_id = ?1"),
                    params![run],
                )
                .map_err(err)?;
        }
        rows += tx
            .execute("DELETE FROM runs WHERE id = ?1", params![run])
            .map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(rows)
    }

    /// The database's files on disk: the database, its write-ahead log and
    /// its shared-memory index.
    pub fn files(&self) -> Vec<PathBuf> {
        let name = self.path.to_string_lossy().into_owned();
        vec![
            self.path.clone(),
            PathBuf::from(format!("{name}-wal")),
            PathBuf::from(format!("{name}-shm")),
        ]
    }

    /// Fold the write-ahead log into the database and truncate it, then
    /// rebuild the database without its free pages (`VACUUM`).
    pub fn compact(&self) -> Result<()> {
        self.conn
            .execute_batch(
                "PRAGMA wal_checkpoint(TRUNCATE); VACUUM; PRAGMA wal_checkpoint(TRUNCATE);",
            )
            .map_err(|e| self.err(e))
    }
}

/// Whether process `pid` exists (signal 0; a process of another user
/// counts).
pub fn process_alive(pid: i64) -> bool {
    super::process_alive(pid as i32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rascal_core::model::event::CandidateInfo;
    use rascal_core::model::verdict::Verdict;

    fn run(store: &mut Store, id: &str) {
        store
            .append(
                id,
                &[
                    RunEvent::RunStarted {
                        run: id.into(),
                        repo: "/repo".into(),
                        base: "0123".into(),
                        instruction: "do it".into(),
                        launcher: "process".into(),
                        candidates: vec![CandidateInfo {
                            id: "c1".into(),
                            agent: "a".into(),
                            runtime: "scripted".into(),
                            worktree: "/wt".into(),
                            unsandboxed: false,
                        }],
                    },
                    RunEvent::CandidateFinished {
                        candidate: "c1".into(),
                        verdict: Verdict::Pass,
                        reason: None,
                        files: 1,
                        lines: 1,
                        tree: None,
                        cancelled: false,
                    },
                    RunEvent::RunFinished {
                        verdict: Verdict::Pass,
                        exit_code: 0,
                    },
                ],
            )
            .unwrap();
    }

    fn count(store: &Store, table: &str, run: &str) -> i64 {
        let col = if table == "runs" { "id" } else { "run_id" };
        store
            .conn
            .query_row(
                &format!("SELECT COUNT(*) FROM {table} WHERE {col} = ?1"),
                [run],
                |r| r.get(0),
            )
            .unwrap()
    }

    #[test]
    fn forgetting_a_run_leaves_no_row_of_it_and_others_intact() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("rascal.db")).unwrap();
        run(&mut store, "old");
        run(&mut store, "new");
        let rows = store.forget("old").unwrap();
        assert!(rows >= 5, "{rows}");
        for table in RUN_TABLES.iter().chain(&["runs"]) {
            assert_eq!(count(&store, table, "old"), 0, "{table}");
        }
        assert_eq!(count(&store, "events", "new"), 3);
        assert!(store.verify_chain("new").is_ok());
        let ids: Vec<String> = store
            .activity()
            .unwrap()
            .into_iter()
            .map(|a| a.id)
            .collect();
        assert_eq!(ids, ["new"]);
        assert_eq!(store.candidate_ids("new").unwrap(), ["c1"]);
        assert!(store.candidate_ids("old").unwrap().is_empty());
        let launchers = store.launchers().unwrap();
        assert_eq!(launchers.get("new").map(String::as_str), Some("process"));
        assert!(!launchers.contains_key("old"));
        store.compact().unwrap();
        assert_eq!(
            std::fs::metadata(&store.files()[1])
                .map(|m| m.len())
                .unwrap_or(0),
            0
        );
    }

    #[test]
    fn last_activity_is_the_latest_of_start_end_and_decisions() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("rascal.db")).unwrap();
        run(&mut store, "r");
        store
            .conn
            .execute_batch(
                "UPDATE runs SET started_at = 1000, finished_at = 2000;
                 INSERT INTO decisions(run_id, kind, who, at, json) VALUES ('r', 'select', 'me', 5000, '{}');",
            )
            .unwrap();
        let a = &store.activity().unwrap()[0];
        assert_eq!((a.status.as_str(), a.last_active_ms), ("finished", 5000));
    }
}
