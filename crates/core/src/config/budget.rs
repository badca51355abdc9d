//! `budget:` in `.rascal/config.yaml`: how much a whole run (top level) or
//! each candidate of an agent (`agents.NAME.budget`) may spend, in US
//! dollars and in tokens, as the agents themselves report it. Parsed and
//! checked here; the accounting is `model::budget`.

use super::yaml::{self, Seg};
use super::{ConfigError, MainConfig, CONFIG_FILE};
use serde::{Deserialize, Serialize};

/// A spending limit. Either or both may be set; a candidate (or the run)
/// that spends more than either is stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// US dollars, from the cost the agent reports (Claude Code reports
    /// it; Codex and Goose report tokens only, so a `usd:` limit cannot be
    /// enforced for them and the run says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usd: Option<f64>,
    /// Input plus output tokens, as the agent reports them. Cached tokens
    /// do not count on top: Claude's cache reads (`cache_read_input_tokens`)
    /// are left out, and Codex's `cached_input_tokens` are already part of
    /// its input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
}

impl Budget {
    /// A limit is set (`usd:`, `tokens:` or both).
    pub fn is_set(&self) -> bool {
        self.usd.is_some() || self.tokens.is_some()
    }
}

/// Every budget in `config.yaml` (`text`) must set a positive, finite limit:
/// zero, negative, `.nan` and `.inf` are errors at their line.
pub(crate) fn check(text: &str, main: &MainConfig) -> Result<(), ConfigError> {
    let mut budgets: Vec<(Vec<Seg>, String, &Budget)> = Vec::new();
    if let Some(b) = &main.budget {
        budgets.push((vec![Seg::key("budget")], "budget".into(), b));
    }
    for (name, agent) in &main.agents {
        if let Some(b) = &agent.budget {
            budgets.push((
                vec![Seg::key("agents"), Seg::key(name), Seg::key("budget")],
                format!("agents.{name}.budget"),
                b,
            ));
        }
    }
    for (path, label, b) in budgets {
        let err = |key: Option<&str>, message: String, hint: &str| {
            let mut at = path.clone();
            if let Some(k) = key {
                at.push(Seg::key(k));
            }
            let loc = yaml::locate(text, &at).or_else(|| yaml::locate(text, &path));
            ConfigError {
                file: CONFIG_FILE.into(),
                line: loc.map(|l| l.0),
                column: loc.map(|l| l.1),
                message,
                hint: hint.into(),
            }
        };
        if !b.is_set() {
            return Err(err(
                None,
                format!("`{label}` sets no limit"),
                "give `usd:` (dollars), `tokens:` (input + output tokens) or both, e.g. `budget: { usd: 0.50 }`; or remove it",
            ));
        }
        if let Some(usd) = b.usd.filter(|u| !u.is_finite() || *u <= 0.0) {
            return Err(err(
                Some("usd"),
                format!("`{label}.usd` is {usd}: a budget must be more than $0"),
                "write the dollars a candidate may spend, e.g. `usd: 0.50`; remove `usd:` for no dollar limit",
            ));
        }
        if b.tokens == Some(0) {
            return Err(err(
                Some("tokens"),
                format!("`{label}.tokens` is 0: a budget must be more than 0 tokens"),
                "write the input + output tokens a candidate may use, e.g. `tokens: 200000`; remove `tokens:` for no token limit",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    fn load(text: &str) -> Result<Config, crate::config::ConfigError> {
        Config::from_texts(Some(text), None, None)
    }

    #[test]
    fn budgets_parse_at_the_top_and_per_agent() {
        let c = load(
            "budget: { usd: 2.5, tokens: 1000000 }\nagents:\n  a:\n    runtime: command\n    command: [x]\n    budget: { usd: 0.5 }\n",
        )
        .unwrap();
        let run = c.main.budget.unwrap();
        assert_eq!((run.usd, run.tokens), (Some(2.5), Some(1_000_000)));
        assert_eq!(c.main.agents["a"].budget.unwrap().usd, Some(0.5));
        assert_eq!(c.main.agents["a"].budget.unwrap().tokens, None);
    }

    #[test]
    fn a_zero_or_negative_budget_is_an_error_at_its_line() {
        let e = load("timeout: 5m\nbudget:\n  usd: -1\n").unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.message.contains("`budget.usd` is -1"), "{e}");
        assert!(e.hint.contains("usd: 0.50"), "{e}");

        let e = load(
            "agents:\n  a:\n    runtime: command\n    command: [x]\n    budget:\n      tokens: 0\n",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(6), "{e}");
        assert!(e.message.contains("`agents.a.budget.tokens` is 0"), "{e}");

        let e = load("budget: { usd: 0 }\n").unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
        let e = load("budget: { usd: .nan }\n").unwrap_err();
        assert!(e.message.contains("more than $0"), "{e}");
    }

    #[test]
    fn a_budget_without_a_limit_or_with_a_wrong_key_is_an_error() {
        let e = load("budget: {}\n").unwrap_err();
        assert!(e.message.contains("sets no limit"), "{e}");
        assert_eq!(e.line, Some(1));
        let e = load("budget:\n  dollars: 3\n").unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        assert!(e.message.contains("unknown field `dollars`"), "{e}");
        // Negative tokens are not a count.
        let e = load("budget:\n  tokens: -5\n").unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
    }
}
