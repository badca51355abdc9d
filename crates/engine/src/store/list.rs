//! `rascal list`: one row per run, its verdict folded from its checked
//! journal.

use super::projection::verdict_str;
use super::{Result, Store, StoreError};
use rascal_core::model::summary::RunSummary;

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
    pub state: Option<rascal_core::model::state::State>,
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
    use rascal_core::model::state::State;
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

impl Store {
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
                            rascal_core::model::verdict::Verdict::Fail => 1,
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
}
