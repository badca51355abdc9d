//! Budgets as accounting: what each candidate and the whole run have spent
//! (the tokens and dollars the agents reported), against the limits of
//! `.rascal/config.yaml`. It answers three questions — must this candidate
//! stop, may it start another attempt, can its budget be enforced at all —
//! and does nothing itself: the pipeline feeds it usage and acts on the
//! answers.

use crate::config::{Budget, RuntimeKind};
use crate::model::usage::Usage;
use std::collections::{BTreeMap, BTreeSet};

/// The tokens that count against a budget: input plus output. Cache reads
/// are not added (Claude reports them apart; Codex counts them in input).
pub fn tokens(u: &Usage) -> u64 {
    u.input_tokens.saturating_add(u.output_tokens)
}

/// Two usages added up (tokens summed; a cost when either has one).
pub fn sum(a: Usage, b: Usage) -> Usage {
    Usage {
        input_tokens: a.input_tokens.saturating_add(b.input_tokens),
        output_tokens: a.output_tokens.saturating_add(b.output_tokens),
        cached_tokens: a.cached_tokens.saturating_add(b.cached_tokens),
        cost_usd: match (a.cost_usd, b.cost_usd) {
            (None, None) => None,
            (x, y) => Some(x.unwrap_or(0.0) + y.unwrap_or(0.0)),
        },
    }
}

/// Whose budget it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// One candidate of this agent (`agents.NAME.budget`).
    Agent(String),
    /// The whole run (`budget:`).
    Run,
}

/// What ran out, with what was spent.
#[derive(Debug, Clone, PartialEq)]
pub enum Measure {
    Usd { spent: f64, limit: f64 },
    Tokens { spent: u64, limit: u64 },
}

/// A budget that was passed (or reached, for a new attempt).
#[derive(Debug, Clone, PartialEq)]
pub struct Overrun {
    pub scope: Scope,
    pub measure: Measure,
}

impl std::fmt::Display for Overrun {
    /// `budget: $0.52 spent of $0.50 (agent careful)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let amounts = match &self.measure {
            Measure::Usd { spent, limit } => {
                let (s, l) = dollars(*spent, *limit);
                format!("{s} spent of {l}")
            }
            Measure::Tokens { spent, limit } => {
                let s = if *spent == 1 { "" } else { "s" };
                format!(
                    "{} token{s} spent of {}",
                    thousands(*spent),
                    thousands(*limit)
                )
            }
        };
        let whose = match &self.scope {
            Scope::Agent(a) => format!("agent {a}"),
            Scope::Run => "the run".to_string(),
        };
        write!(f, "budget: {amounts} ({whose})")
    }
}

/// Two dollar amounts, with cents — or with enough decimals to tell them
/// apart (`$0.0052 spent of $0.0050`).
fn dollars(a: f64, b: f64) -> (String, String) {
    let cents = (format!("${a:.2}"), format!("${b:.2}"));
    let finer = (format!("${a:.4}"), format!("${b:.4}"));
    if cents.0 == cents.1 && finer.0 != finer.1 {
        finer
    } else {
        cents
    }
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The first limit of `budget` that `spent` passes (`reached`: or reaches).
fn passed(budget: &Budget, spent: &Usage, reached: bool) -> Option<Measure> {
    let over_f = |s: f64, l: f64| if reached { s >= l } else { s > l };
    let over_n = |s: u64, l: u64| if reached { s >= l } else { s > l };
    if let (Some(limit), Some(s)) = (budget.usd, spent.cost_usd) {
        if over_f(s, limit) {
            return Some(Measure::Usd { spent: s, limit });
        }
    }
    if let Some(limit) = budget.tokens {
        let s = tokens(spent);
        if over_n(s, limit) {
            return Some(Measure::Tokens { spent: s, limit });
        }
    }
    None
}

/// One candidate's account.
#[derive(Debug, Clone, Default, PartialEq)]
struct Account {
    agent: String,
    budget: Budget,
    /// Its finished attempts, added up.
    earlier: Usage,
    /// The running attempt's totals so far.
    current: Usage,
    /// The running attempt reported something.
    reported: bool,
}

impl Account {
    fn spent(&self) -> Usage {
        sum(self.earlier, self.current)
    }
}

/// The run's budget and every candidate's account.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spending {
    run: Budget,
    accounts: BTreeMap<String, Account>,
    /// Agents already warned about (`usage` / `cost`), to say it once.
    warned: BTreeSet<(String, &'static str)>,
}

impl Spending {
    /// A ledger for a run with the run-wide `budget:` (unset: no limit).
    pub fn new(run: Budget) -> Spending {
        Spending {
            run,
            ..Spending::default()
        }
    }

    /// Some budget applies to some candidate: anything to enforce.
    pub fn active(&self) -> bool {
        self.run.is_set() || self.accounts.values().any(|a| a.budget.is_set())
    }

    /// Open a candidate's account: its agent, the agent's budget, and what
    /// it spent in attempts made before (a retry after the run, a reattach).
    pub fn open(&mut self, candidate: &str, agent: &str, budget: Budget, earlier: Usage) {
        self.accounts.insert(
            candidate.to_string(),
            Account {
                agent: agent.to_string(),
                budget,
                earlier,
                ..Account::default()
            },
        );
    }

    /// What the candidate spent over all its attempts.
    pub fn spent(&self, candidate: &str) -> Usage {
        self.accounts
            .get(candidate)
            .map(Account::spent)
            .unwrap_or_default()
    }

    /// What the run spent: every candidate, every attempt.
    pub fn run_spent(&self) -> Usage {
        self.accounts
            .values()
            .fold(Usage::default(), |acc, a| sum(acc, a.spent()))
    }

    /// The running attempt of `candidate` has spent `attempt` so far (the
    /// session's running totals). Returns the budget it has now passed —
    /// its agent's first, then the run's — when it must stop.
    pub fn report(&mut self, candidate: &str, attempt: Usage) -> Option<Overrun> {
        let account = self.accounts.get_mut(candidate)?;
        account.current = attempt;
        account.reported = true;
        self.over(candidate, false)
    }

    /// The running attempt ended: its spending joins the earlier ones.
    pub fn end_attempt(&mut self, candidate: &str) {
        if let Some(a) = self.accounts.get_mut(candidate) {
            a.earlier = a.spent();
            a.current = Usage::default();
            a.reported = false;
        }
    }

    /// Why a new attempt of `candidate` may not start: its agent's budget
    /// or the run's is already spent (reached counts, not only passed).
    pub fn refusal(&self, candidate: &str) -> Option<Overrun> {
        self.over(candidate, true)
    }

    fn over(&self, candidate: &str, reached: bool) -> Option<Overrun> {
        let account = self.accounts.get(candidate)?;
        if let Some(m) = passed(&account.budget, &account.spent(), reached) {
            return Some(Overrun {
                scope: Scope::Agent(account.agent.clone()),
                measure: m,
            });
        }
        passed(&self.run, &self.run_spent(), reached).map(|m| Overrun {
            scope: Scope::Run,
            measure: m,
        })
    }

    /// Before `candidate`'s agent starts: a warning (once per agent) when a
    /// budget applies to it that its runtime can never report against — a
    /// `command` agent reports no usage; codex and goose report no cost.
    pub fn blind_before(&mut self, candidate: &str, runtime: RuntimeKind) -> Option<String> {
        let usd = self.usd_limited(candidate)?;
        match runtime {
            RuntimeKind::Command => self.warn(candidate, "usage"),
            RuntimeKind::Codex | RuntimeKind::Goose if usd => self.warn(candidate, "cost"),
            _ => None,
        }
    }

    /// After an attempt's agent ended: a warning (once per agent) when a
    /// budget applies but the attempt reported no usage, or no cost against
    /// a dollar limit. Call before `end_attempt`.
    pub fn blind_after(&mut self, candidate: &str) -> Option<String> {
        let usd = self.usd_limited(candidate)?;
        let account = self.accounts.get(candidate)?;
        if !account.reported || account.current.is_empty() {
            self.warn(candidate, "usage")
        } else if usd && account.current.cost_usd.is_none() {
            self.warn(candidate, "cost")
        } else {
            None
        }
    }

    /// Some budget applies to the candidate: Some(whether a dollar limit
    /// does).
    fn usd_limited(&self, candidate: &str) -> Option<bool> {
        let a = self.accounts.get(candidate)?;
        (a.budget.is_set() || self.run.is_set())
            .then_some(a.budget.usd.is_some() || self.run.usd.is_some())
    }

    fn warn(&mut self, candidate: &str, what: &'static str) -> Option<String> {
        let a = self.accounts.get(candidate)?;
        if self.warned.contains(&(a.agent.clone(), "usage"))
            || !self.warned.insert((a.agent.clone(), what))
        {
            return None;
        }
        let whose = match (a.budget.is_set(), self.run.is_set()) {
            (true, true) => "its budget and the run's",
            (true, false) => "its budget",
            _ => "the run's budget",
        };
        Some(match what {
            "usage" => format!(
                "budget: agent {} reports no usage (tokens or cost), so {whose} cannot be enforced for it",
                a.agent
            ),
            _ => format!(
                "budget: agent {} reports tokens but no cost, so the dollar limit of {whose} cannot be enforced for it (a `tokens:` limit can)",
                a.agent
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usd(x: f64) -> Usage {
        Usage {
            cost_usd: Some(x),
            ..Usage::default()
        }
    }

    fn toks(input: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cached_tokens: 99_999,
            cost_usd: None,
        }
    }

    fn limit(usd: Option<f64>, tokens: Option<u64>) -> Budget {
        Budget { usd, tokens }
    }

    #[test]
    fn a_candidate_over_its_agents_dollars_must_stop_with_the_reason() {
        let mut l = Spending::new(Budget::default());
        l.open(
            "careful",
            "careful",
            limit(Some(0.50), None),
            Usage::default(),
        );
        assert_eq!(l.report("careful", usd(0.30)), None);
        // Running totals replace, they do not add.
        assert_eq!(
            l.report("careful", usd(0.50)),
            None,
            "reaching is not passing"
        );
        let o = l.report("careful", usd(0.52)).unwrap();
        assert_eq!(
            o.to_string(),
            "budget: $0.52 spent of $0.50 (agent careful)"
        );
    }

    #[test]
    fn tokens_are_input_plus_output_and_cached_do_not_count() {
        let mut l = Spending::new(Budget::default());
        l.open("a-1", "a", limit(None, Some(10_000)), Usage::default());
        assert_eq!(l.report("a-1", toks(6_000, 4_000)), None);
        let o = l.report("a-1", toks(6_000, 4_500)).unwrap();
        assert_eq!(
            o.to_string(),
            "budget: 10,500 tokens spent of 10,000 (agent a)"
        );
    }

    #[test]
    fn attempts_add_up_and_a_new_attempt_is_refused_once_the_budget_is_spent() {
        let mut l = Spending::new(Budget::default());
        l.open("c", "c", limit(Some(1.0), None), usd(0.25));
        assert_eq!(l.report("c", usd(0.50)), None);
        l.end_attempt("c");
        assert_eq!(l.spent("c").cost_usd, Some(0.75));
        assert_eq!(l.refusal("c"), None, "$0.25 left");
        assert_eq!(l.report("c", usd(0.25)), None, "exactly at the limit");
        l.end_attempt("c");
        let r = l.refusal("c").unwrap();
        assert_eq!(r.to_string(), "budget: $1.00 spent of $1.00 (agent c)");
    }

    #[test]
    fn the_run_budget_stops_the_candidate_whose_spending_passes_it() {
        let mut l = Spending::new(limit(Some(1.0), None));
        l.open("a", "a", Budget::default(), Usage::default());
        l.open("b", "b", Budget::default(), Usage::default());
        assert_eq!(l.report("a", usd(0.60)), None);
        let o = l.report("b", usd(0.45)).unwrap();
        assert_eq!(o.scope, Scope::Run);
        assert_eq!(o.to_string(), "budget: $1.05 spent of $1.00 (the run)");
        // Its agent's own budget is named first when both are passed.
        let mut l = Spending::new(limit(Some(1.0), None));
        l.open("a", "a", limit(Some(0.5), None), Usage::default());
        assert_eq!(
            l.report("a", usd(2.0)).unwrap().scope,
            Scope::Agent("a".into())
        );
        // A candidate that has not started cannot start over the run's.
        let mut l = Spending::new(limit(None, Some(100)));
        l.open("a", "a", Budget::default(), Usage::default());
        l.open("b", "b", Budget::default(), Usage::default());
        l.report("a", toks(60, 40));
        assert!(l.refusal("b").is_some());
    }

    #[test]
    fn without_any_budget_nothing_is_enforced_or_warned() {
        let mut l = Spending::new(Budget::default());
        l.open("a", "a", Budget::default(), Usage::default());
        assert!(!l.active());
        assert_eq!(l.report("a", usd(1e9)), None);
        assert_eq!(l.blind_before("a", RuntimeKind::Command), None);
        assert_eq!(l.blind_after("a"), None);
    }

    #[test]
    fn a_budget_that_cannot_be_enforced_is_said_once_per_agent() {
        let mut l = Spending::new(Budget::default());
        l.open("local-1", "local", limit(Some(0.5), None), Usage::default());
        l.open("local-2", "local", limit(Some(0.5), None), Usage::default());
        let w = l.blind_before("local-1", RuntimeKind::Command).unwrap();
        assert!(w.contains("agent local reports no usage"), "{w}");
        assert!(w.contains("its budget cannot be enforced"), "{w}");
        assert_eq!(l.blind_before("local-2", RuntimeKind::Command), None);
        assert_eq!(l.blind_after("local-1"), None, "said once");

        // Codex: tokens but never a cost, against a dollar limit.
        let mut l = Spending::new(limit(Some(2.0), None));
        l.open("x", "codex", Budget::default(), Usage::default());
        let w = l.blind_before("x", RuntimeKind::Codex).unwrap();
        assert!(
            w.contains("no cost") && w.contains("the run's budget"),
            "{w}"
        );
        // A tokens limit alone is fine for codex.
        let mut l = Spending::new(limit(None, Some(5)));
        l.open("x", "codex", Budget::default(), Usage::default());
        assert_eq!(l.blind_before("x", RuntimeKind::Codex), None);

        // An agent that could report but did not: said after its attempt.
        let mut l = Spending::new(Budget::default());
        l.open("s", "scripted", limit(None, Some(5)), Usage::default());
        assert_eq!(l.blind_before("s", RuntimeKind::Scripted), None);
        assert!(l.blind_after("s").unwrap().contains("reports no usage"));
        // One that did report is not warned about.
        let mut l = Spending::new(Budget::default());
        l.open("s", "claude", limit(Some(1.0), None), Usage::default());
        l.report("s", usd(0.1));
        assert_eq!(l.blind_after("s"), None);
    }

    #[test]
    fn amounts_read_well() {
        let one = Overrun {
            scope: Scope::Run,
            measure: Measure::Tokens { spent: 1, limit: 1 },
        };
        assert_eq!(one.to_string(), "budget: 1 token spent of 1 (the run)");
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        let o = Overrun {
            scope: Scope::Agent("a".into()),
            measure: Measure::Usd {
                spent: 0.0052,
                limit: 0.005,
            },
        };
        assert_eq!(o.to_string(), "budget: $0.0052 spent of $0.0050 (agent a)");
    }
}
