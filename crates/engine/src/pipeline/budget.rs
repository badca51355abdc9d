//! Budgets enforced while a run goes: one `Spending` for the run, shared by
//! every candidate's task. A candidate whose spending passes its agent's
//! or the run's budget is stopped through its own cancel token — the path
//! a human's cancel (`x`) and a timeout take, so its workspace and record
//! end the same way — after the reason is journalled. What to decide is
//! `model::budget`; this only keeps the one copy and acts.

use crate::pipeline::journal::Journal;
use rascal_core::config::{Config, RuntimeKind};
use rascal_core::model::budget::Spending;
use rascal_core::model::event::{CandidateInfo, RunEvent};
use rascal_core::model::summary::RunSummary;
use rascal_core::model::usage::Usage;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// The run's spending and why a budget stopped each candidate.
#[derive(Clone, Default)]
pub(crate) struct Budgets {
    spending: Arc<Mutex<Spending>>,
    stopped: Arc<Mutex<BTreeMap<String, String>>>,
}

impl Budgets {
    /// The accounts of a run: its candidates (`running`), and — for a
    /// retry or a reattach — every candidate the journal already has
    /// (`earlier`), with what their earlier attempts spent, so the run's
    /// budget counts them too.
    pub(crate) fn new(
        config: &Config,
        running: &[(CandidateInfo, rascal_core::config::AgentConfig)],
        earlier: Option<&RunSummary>,
    ) -> Budgets {
        let mut s = Spending::new(config.main.budget.unwrap_or_default());
        let budget_of = |agent: &str| {
            config
                .main
                .agents
                .get(agent)
                .and_then(|a| a.budget)
                .unwrap_or_default()
        };
        for c in earlier.map(|e| e.candidates.as_slice()).unwrap_or_default() {
            s.open(
                &c.id,
                &c.agent,
                budget_of(&c.agent),
                c.spent.unwrap_or_default(),
            );
        }
        for (info, agent) in running {
            if earlier.is_some_and(|e| e.candidates.iter().any(|c| c.id == info.id)) {
                continue;
            }
            s.open(
                &info.id,
                &info.agent,
                agent.budget.unwrap_or_default(),
                Usage::default(),
            );
        }
        Budgets {
            spending: Arc::new(Mutex::new(s)),
            stopped: Default::default(),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Spending) -> T) -> Option<T> {
        self.spending.lock().ok().map(|mut s| f(&mut s))
    }

    /// The running attempt of `candidate` has spent `usage` so far: stop it
    /// (once) when that passes a budget.
    pub(crate) fn report(
        &self,
        journal: &Journal,
        candidate: &str,
        usage: Usage,
        token: &CancellationToken,
    ) {
        let over = self.with(|s| s.report(candidate, usage)).flatten();
        if let Some(o) = over {
            self.stop(journal, candidate, o.to_string(), token);
        }
    }

    /// Stop `candidate` for `reason`: journalled, then its token cancelled.
    pub(crate) fn stop(
        &self,
        journal: &Journal,
        candidate: &str,
        reason: String,
        token: &CancellationToken,
    ) {
        let first = self
            .stopped
            .lock()
            .map(|mut m| match m.entry(candidate.into()) {
                std::collections::btree_map::Entry::Occupied(_) => false,
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(reason.clone());
                    true
                }
            })
            .unwrap_or(false);
        if first {
            journal.emit(RunEvent::OverBudget {
                candidate: candidate.into(),
                reason,
            });
        }
        token.cancel();
    }

    /// Why a budget stopped `candidate`, if one did.
    pub(crate) fn stopped(&self, candidate: &str) -> Option<String> {
        self.stopped.lock().ok()?.get(candidate).cloned()
    }

    /// Why attempt `attempt` of `candidate` may not start (its budget or
    /// the run's is spent).
    pub(crate) fn refusal(&self, candidate: &str, attempt: u32) -> Option<String> {
        self.with(|s| s.refusal(candidate))
            .flatten()
            .map(|o| format!("{o}; no budget left for attempt {attempt}"))
    }

    /// Before its agent starts: say (once per agent) when a budget applies
    /// that this runtime can never report against.
    pub(crate) fn before_agent(&self, journal: &Journal, candidate: &str, runtime: RuntimeKind) {
        if let Some(w) = self.with(|s| s.blind_before(candidate, runtime)).flatten() {
            journal.emit(RunEvent::BudgetUnenforced {
                candidate: candidate.into(),
                reason: w,
            });
        }
    }

    /// After its agent ended: say (once per agent) when a budget applied
    /// but nothing was reported against it; then close the attempt's
    /// account.
    pub(crate) fn after_agent(&self, journal: &Journal, candidate: &str) {
        let blind = self
            .with(|s| {
                let w = s.blind_after(candidate);
                s.end_attempt(candidate);
                w
            })
            .flatten();
        if let Some(w) = blind {
            journal.emit(RunEvent::BudgetUnenforced {
                candidate: candidate.into(),
                reason: w,
            });
        }
    }
}

/// Why `candidate` of a finished run may not be retried: its budget, or
/// the run's, is spent (for `rascal retry` and the TUI's `r`, before the
/// retry is recorded).
pub(crate) fn retry_refusal(
    config: &Config,
    summary: &RunSummary,
    candidate: &str,
) -> Option<String> {
    let c = summary.candidates.iter().find(|c| c.id == candidate)?;
    Budgets::new(config, &[], Some(summary)).refusal(candidate, c.attempt + 1)
}
