//! `.rascal/verification.yaml` — how Layer 3 runs criteria (test command
//! template, judge) and how Layer 5 reviews (reviewers, consensus, what a
//! request for changes does, retry bound). Also: which provider an agent
//! belongs to, for the "review by another provider" rule. `combine:` names
//! the agent `rascal combine` hands the best candidates to.

use super::{AgentConfig, Dur, RuntimeKind};
use serde::{Deserialize, Serialize};

pub const VERIFICATION_FILE: &str = ".rascal/verification.yaml";

/// The hard cap on `max_retries`, whatever the config says.
pub const MAX_RETRIES_CAP: u32 = 5;
pub const DEFAULT_MAX_RETRIES: u32 = 2;

/// What a reviewer's `request_changes` does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnRequestChanges {
    /// Feed the issues back to the author and verify again (bounded).
    #[default]
    Retry,
    /// Fail the candidate with the issues attached.
    Fail,
}

/// `review:` — Layer 5.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawReview")]
pub struct ReviewConfig {
    /// Agent names from `.rascal/config.yaml`.
    pub reviewers: Vec<String>,
    pub on_request_changes: OnRequestChanges,
    pub max_retries: u32,
    /// How many reviewers must approve.
    pub consensus: usize,
    pub allow_same_provider: bool,
    /// Per reviewer call (one chunk).
    pub timeout: Dur,
    /// What the whole review of one attempt may spend: every chunk of
    /// every reviewer is reviewed within it, or the review FAILs.
    pub budget: ReviewBudget,
    /// How many chunks one reviewer reviews at once.
    pub parallel: usize,
}

/// `review.budget:` — the limit of Layer 5 is time and tokens, never a
/// chunk count: a change is reviewed whole within it, or the layer FAILs
/// saying how much was reviewed and what to raise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewBudget {
    /// Wall time for every chunk of every reviewer (default 30m).
    #[serde(default = "default_review_time")]
    pub time: Dur,
    /// Most tokens of diff one reviewer may be shown over all its chunks
    /// (estimated as bytes / 4; default 4,000,000).
    #[serde(default = "default_review_tokens")]
    pub tokens: u64,
}

impl Default for ReviewBudget {
    fn default() -> Self {
        ReviewBudget {
            time: default_review_time(),
            tokens: default_review_tokens(),
        }
    }
}

fn default_review_time() -> Dur {
    Dur::from_secs(30 * 60)
}

fn default_review_tokens() -> u64 {
    4_000_000
}

/// `criteria.budget:` / `judge_budget:` — the most a judge (of an
/// `llm-judge` criterion, or the comparator's) may be shown in its one
/// call. A diff over it is never cut to fit: the judgement FAILs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeBudget {
    /// Most tokens of diff (estimated as bytes / 4; default 65,536).
    #[serde(default = "default_judge_tokens")]
    pub tokens: u64,
}

impl Default for JudgeBudget {
    fn default() -> Self {
        JudgeBudget {
            tokens: default_judge_tokens(),
        }
    }
}

impl JudgeBudget {
    fn is_default(&self) -> bool {
        *self == JudgeBudget::default()
    }
}

fn default_judge_tokens() -> u64 {
    65_536
}

/// Tokens a text costs a verifier, estimated as one per four bytes
/// (rounded up): the unit of `budget.tokens`.
pub fn tokens_of(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReview {
    reviewers: Vec<String>,
    #[serde(default)]
    on_request_changes: OnRequestChanges,
    #[serde(default)]
    max_retries: Option<u32>,
    #[serde(default)]
    consensus: Option<usize>,
    #[serde(default)]
    allow_same_provider: bool,
    #[serde(default)]
    timeout: Option<Dur>,
    #[serde(default)]
    budget: ReviewBudget,
    #[serde(default)]
    parallel: Option<usize>,
}

impl TryFrom<RawReview> for ReviewConfig {
    type Error = crate::Error;
    fn try_from(r: RawReview) -> Result<Self, crate::Error> {
        if r.reviewers.is_empty() {
            return Err(crate::Error::Invalid("`reviewers` is empty: name at least one agent from .rascal/config.yaml (or remove `review:` to turn Layer 5 off)".into()));
        }
        let max_retries = r.max_retries.unwrap_or(DEFAULT_MAX_RETRIES);
        if max_retries > MAX_RETRIES_CAP {
            return Err(crate::Error::Invalid(format!(
                "`max_retries: {max_retries}` is above the hard cap of {MAX_RETRIES_CAP}"
            )));
        }
        let consensus = r.consensus.unwrap_or(1);
        if consensus == 0 || consensus > r.reviewers.len() {
            return Err(crate::Error::Invalid(format!(
                "`consensus: {consensus}` must be between 1 and the number of reviewers ({})",
                r.reviewers.len()
            )));
        }
        let parallel = r.parallel.unwrap_or(4);
        if parallel == 0 {
            return Err(crate::Error::Invalid("`parallel: 0` reviews nothing: set at least 1 (chunks one reviewer reviews at once)".into()));
        }
        if r.budget.tokens == 0 || r.budget.time.get().is_zero() {
            return Err(crate::Error::Invalid("`budget` of 0 reviews nothing: give `time` and `tokens` above 0, or remove `review:` to turn Layer 5 off".into()));
        }
        Ok(ReviewConfig {
            reviewers: r.reviewers,
            on_request_changes: r.on_request_changes,
            max_retries,
            consensus,
            allow_same_provider: r.allow_same_provider,
            timeout: r.timeout.unwrap_or(Dur::from_secs(10 * 60)),
            budget: r.budget,
            parallel,
        })
    }
}

/// `plan:` — the planning agent of "plan, then execute": before any
/// candidate writes code it reads the base (read-only) and the
/// instruction and proposes acceptance criteria (docs/configuration.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanConfig {
    /// An agent name from `.rascal/config.yaml`.
    pub agent: String,
    /// Per planner run (default 5m).
    #[serde(default = "default_plan_timeout")]
    pub timeout: Dur,
}

/// `discriminator:` — the agent that, where candidates' code differs but
/// no test separates them, writes a probe calling the changed functions
/// on inputs of its choosing; rascal runs it on each candidate and turns
/// differing outputs into the contested run's question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiscriminatorConfig {
    /// An agent name from `.rascal/config.yaml`.
    pub agent: String,
    /// For writing the probe (default 5m).
    #[serde(default = "default_plan_timeout")]
    pub timeout: Dur,
    /// For running the probe on one candidate (default 2m).
    #[serde(default = "default_probe_timeout")]
    pub probe_timeout: Dur,
}

fn default_probe_timeout() -> Dur {
    Dur::from_secs(2 * 60)
}

fn default_plan_timeout() -> Dur {
    Dur::from_secs(5 * 60)
}

/// `criteria:` — Layer 3 settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CriteriaConfig {
    /// Shell command template for `type: test`; `{check}` is replaced by the
    /// (shell-quoted) test name. Default: detected from the repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_command: Option<String>,
    /// Per criterion command (default 10m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Dur>,
    /// Agent that judges `type: llm-judge` criteria (advisory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
    /// The most one judgement may be shown.
    #[serde(default, skip_serializing_if = "JudgeBudget::is_default")]
    pub budget: JudgeBudget,
}

/// `.rascal/verification.yaml`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerificationConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criteria: Option<CriteriaConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewConfig>,
    /// Agent that breaks ties between equally verified candidates in the
    /// comparator (Layer 1). Advisory: it never promotes a FAIL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
    /// The most the comparator's judge may be shown (every tied diff).
    #[serde(default, skip_serializing_if = "JudgeBudget::is_default")]
    pub judge_budget: JudgeBudget,
    /// The planning agent (`rascal run --plan`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanConfig>,
    /// The combining agent of `rascal combine` (off when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub combine: Option<CombineConfig>,
    /// The discriminator: writes probes where no test separates the pick
    /// from a candidate whose code differs (off when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discriminator: Option<DiscriminatorConfig>,
}

/// How many candidates `rascal combine` hands over when `top:` is not said.
pub const DEFAULT_COMBINE_TOP: usize = 3;
/// The most candidates one combining agent is given.
pub const MAX_COMBINE_TOP: usize = 8;

/// `combine:` — the agent that writes a `combined` candidate from the top
/// passing candidates of a finished run (docs/configuration.md, "Combining
/// candidates").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawCombine")]
pub struct CombineConfig {
    /// An agent name from `.rascal/config.yaml`.
    pub agent: String,
    /// At most this many passing candidates, best first (2..=8).
    pub top: usize,
    /// Which lines of the combined change that are in no candidate (new
    /// code) still let it be the automatic pick: none (the default), or
    /// glue (imports, module lines, joining punctuation).
    #[serde(default)]
    pub allow_new: AllowNew,
}

/// `combine.allow_new:` — new code the combined candidate may carry and
/// still be picked without a human.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AllowNew {
    /// Any line in no candidate needs a human's choice.
    #[default]
    None,
    /// Imports, module declarations and punctuation alone are allowed.
    Glue,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCombine {
    agent: String,
    #[serde(default)]
    top: Option<usize>,
    #[serde(default)]
    allow_new: AllowNew,
}

impl TryFrom<RawCombine> for CombineConfig {
    type Error = crate::Error;
    fn try_from(r: RawCombine) -> Result<Self, crate::Error> {
        if r.agent.trim().is_empty() {
            return Err(crate::Error::Invalid(
                "`agent` is empty: name the combining agent, one of .rascal/config.yaml's agents"
                    .into(),
            ));
        }
        let top = r.top.unwrap_or(DEFAULT_COMBINE_TOP);
        if !(2..=MAX_COMBINE_TOP).contains(&top) {
            return Err(crate::Error::Invalid(format!(
                "`top: {top}` must be between 2 and {MAX_COMBINE_TOP}: combining fewer than two candidates is pointless"
            )));
        }
        Ok(CombineConfig {
            agent: r.agent,
            top,
            allow_new: r.allow_new,
        })
    }
}

impl VerificationConfig {
    /// Agents this file names (reviewers and judge), for checking they exist.
    pub fn agents_named(&self) -> Vec<(&'static str, &str)> {
        let mut out = Vec::new();
        if let Some(r) = &self.review {
            out.extend(r.reviewers.iter().map(|n| ("review.reviewers", n.as_str())));
        }
        if let Some(j) = self.criteria.as_ref().and_then(|c| c.judge.as_deref()) {
            out.push(("criteria.judge", j));
        }
        if let Some(j) = self.judge.as_deref() {
            out.push(("judge", j));
        }
        if let Some(p) = &self.plan {
            out.push(("plan.agent", p.agent.as_str()));
        }
        if let Some(c) = &self.combine {
            out.push(("combine.agent", c.agent.as_str()));
        }
        if let Some(d) = &self.discriminator {
            out.push(("discriminator.agent", d.agent.as_str()));
        }
        out
    }
}

/// The provider an agent's model comes from: claude → anthropic, codex →
/// openai, anything else → its `provider:` field, else its own name.
pub fn provider(name: &str, agent: &AgentConfig) -> String {
    match agent.runtime {
        RuntimeKind::Claude => "anthropic".into(),
        RuntimeKind::Codex => "openai".into(),
        RuntimeKind::Goose | RuntimeKind::Command | RuntimeKind::Scripted => {
            agent.provider.clone().unwrap_or_else(|| name.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_review_budget_is_time_and_tokens_with_defaults_and_no_zero() {
        let r: ReviewConfig = serde_yaml::from_str("reviewers: [a]").unwrap();
        assert_eq!(r.budget, ReviewBudget::default());
        assert_eq!(r.budget.time, Dur::from_secs(1800));
        assert_eq!(r.parallel, 4);
        let r: ReviewConfig =
            serde_yaml::from_str("{reviewers: [a], budget: {time: 5m, tokens: 1000}, parallel: 2}")
                .unwrap();
        assert_eq!(
            (r.budget.time, r.budget.tokens, r.parallel),
            (Dur::from_secs(300), 1000, 2)
        );
        for bad in [
            "{reviewers: [a], parallel: 0}",
            "{reviewers: [a], budget: {tokens: 0}}",
            "{reviewers: [a], budget: {time: 0s}}",
            "{reviewers: [a], budget: {chunks: 8}}",
        ] {
            assert!(serde_yaml::from_str::<ReviewConfig>(bad).is_err(), "{bad}");
        }
        let v: VerificationConfig = serde_yaml::from_str(
            "{judge: j, judge_budget: {tokens: 9}, criteria: {budget: {tokens: 7}}}",
        )
        .unwrap();
        assert_eq!(v.judge_budget.tokens, 9);
        assert_eq!(v.criteria.unwrap().budget.tokens, 7);
        assert_eq!(tokens_of("abcde"), 2);
    }
}
