//! The projections of the journal: the `runs`, `candidates`, `reports`
//! and `decisions` rows each event updates, in the transaction that
//! appends it.

use rascal_core::model::event::RunEvent;
use rusqlite::params;

pub(super) fn verdict_str(v: rascal_core::model::verdict::Verdict) -> &'static str {
    match v {
        rascal_core::model::verdict::Verdict::Pass => "pass",
        rascal_core::model::verdict::Verdict::Warn => "warn",
        rascal_core::model::verdict::Verdict::Fail => "fail",
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
pub(super) fn project(
    tx: &rusqlite::Transaction,
    run: &str,
    at: i64,
    ev: &RunEvent,
) -> rusqlite::Result<()> {
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
        RunEvent::CandidateAdded { .. }
        | RunEvent::CandidateStarted { .. }
        | RunEvent::ReportLanded { .. }
        | RunEvent::CandidateFinished { .. } => project_candidate(tx, run, ev)?,
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

/// The `candidates` and `reports` rows: a candidate added, started,
/// reported on or finished.
fn project_candidate(tx: &rusqlite::Transaction, run: &str, ev: &RunEvent) -> rusqlite::Result<()> {
    match ev {
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
        _ => {}
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
