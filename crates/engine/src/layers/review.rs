//! Layer 5, adversarial review: an independent agent (by default of another
//! provider than the author) gets ONLY the task and the diff — never the
//! author's own account — and must answer with one JSON verdict that echoes
//! the review's nonce (a random token per reviewer call, so a verdict copied
//! from the diff never counts). Output without such a verdict is a
//! structural failure: one retry with a fresh reviewer, then escalation. A
//! mute or garbled reviewer is never an approval. A diff over what
//! one call is shown is reviewed in chunks, in parallel, that must all be
//! reviewed and approved within the review's budget of time and tokens;
//! a chunk left unreviewed FAILs the layer (docs/configuration.md). A
//! candidate cancelled while a reviewer runs ends its review there: the
//! user's decision, neither retried nor escalated.
//! `parse_review` is a pure function over the bytes.

use crate::layers::coverage;
use crate::Error;
use rascal_core::config::spec::Task;
use rascal_core::config::verification::{provider, ReviewConfig};
use rascal_core::config::{AgentConfig, Config, VERIFICATION_FILE};
use rascal_core::model::changeset::ChangeSet;
use rascal_core::model::verdict::{Issue, Layer, Report, Severity};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

mod answer;
mod prompt;
mod reviewer;

pub use answer::{issues_of, parse_review};
pub use prompt::{
    chunk_diff, criterion_bullet, diff_block, fence_for, review_prompt, task_text, Chunk,
};
use reviewer::{one_reviewer, One};

/// Reviewer output above this size is refused (a verdict is small).
pub use rascal_exec::agents::ask::MAX_ANSWER_BYTES as MAX_REVIEW_BYTES;
/// The most diff one reviewer call is shown (a larger diff is chunked).
pub const MAX_DIFF_BYTES: usize = 256 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Approve,
    RequestChanges,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ReviewSeverity {
    Minor,
    Major,
    Critical,
}

impl ReviewSeverity {
    pub fn severity(self) -> Severity {
        match self {
            ReviewSeverity::Critical => Severity::Critical,
            ReviewSeverity::Major => Severity::Error,
            ReviewSeverity::Minor => Severity::Warning,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewIssue {
    pub severity: ReviewSeverity,
    pub location: String,
    pub description: String,
}

/// A reviewer's parsed answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewVerdict {
    pub decision: Decision,
    pub issues: Vec<ReviewIssue>,
}

use rascal_exec::agents::ask::json_objects;

/// A fresh nonce for one reviewer call: 128 bits from the kernel's CSPRNG,
/// as 32 hex digits.
pub fn new_nonce() -> std::io::Result<String> {
    use std::io::Read;
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

pub use rascal_exec::agents::ask::{ask, Answer, Site};

/// What Layer 5 concluded for one attempt.
#[derive(Debug, Clone, PartialEq)]
pub enum ReviewOutcome {
    /// Enough reviewers approved.
    Approved,
    /// Not enough approvals and at least one reviewer asked for changes:
    /// these issues go back to the author (or fail the candidate).
    ChangesRequested(Vec<Issue>),
    /// A reviewer failed structurally twice and consensus was not reached:
    /// a human must look.
    Escalate(String),
    /// The review could not be set up (no eligible reviewer).
    CouldNotRun(String),
    /// Part of the change was never reviewed within the review's budget
    /// (of time or tokens): a FAIL, never an approval, saying how much was
    /// reviewed and what to raise.
    Incomplete(String),
    /// The candidate was cancelled (by its user, or a budget) while a
    /// reviewer ran: a decision, not a reviewer's failure — no fresh
    /// reviewer, no escalation.
    Cancelled,
}

/// Everything one review of one attempt needs.
pub struct ReviewRun<'a> {
    pub config: &'a Config,
    pub review: &'a ReviewConfig,
    /// The author agent's name and config (for provider diversity).
    pub author: (&'a str, &'a AgentConfig),
    pub task: &'a Task,
    pub diff: &'a str,
    pub changes: &'a ChangeSet,
    pub site: Site,
    pub cancel: CancellationToken,
}

/// The reviewers allowed to review `author`: all of them when
/// `allow_same_provider`, else those of another provider. Err when fewer
/// than `consensus` remain, saying why and what to do.
pub fn eligible_reviewers(
    config: &Config,
    review: &ReviewConfig,
    author: (&str, &AgentConfig),
) -> Result<Vec<String>, Error> {
    let author_provider = provider(author.0, author.1);
    let mut ok = Vec::new();
    let mut same = Vec::new();
    for r in &review.reviewers {
        let Some(cfg) = config.main.agents.get(r) else {
            continue;
        };
        if review.allow_same_provider || provider(r, cfg) != author_provider {
            ok.push(r.clone());
        } else {
            same.push(r.clone());
        }
    }
    if ok.len() < review.consensus {
        return Err(Error::Usage(format!(
            "author `{}` (provider {author_provider}) has {} eligible reviewer(s) but consensus needs {}; same provider: {}\n  hint: add a reviewer of another provider to `review.reviewers` in {VERIFICATION_FILE}, or set `allow_same_provider: true`",
            author.0,
            ok.len(),
            review.consensus,
            if same.is_empty() { "none".into() } else { same.join(", ") }
        )));
    }
    Ok(ok)
}

/// Run Layer 5 for one attempt: each eligible reviewer (in parallel) on
/// every chunk of the diff (up to `parallel` chunks at once), each call
/// allowed one structural retry, all within the review's budget of time
/// and tokens. A chunk no reviewer saw leaves the review incomplete: a
/// FAIL, never an approval. Reports go to `sink` as they land.
pub async fn review(
    run: &ReviewRun<'_>,
    sink: &(dyn Fn(Report) + Send + Sync),
) -> (Vec<Report>, ReviewOutcome) {
    let reviewers = match eligible_reviewers(run.config, run.review, run.author) {
        Ok(r) => r,
        Err(why) => {
            let r = Report::new(Layer::Review, "review")
                .errored(format!("no review: {why}"))
                .finish();
            sink(r.clone());
            return (vec![r], ReviewOutcome::CouldNotRun(why.to_string()));
        }
    };
    let chunks = chunk_diff(run.diff, MAX_DIFF_BYTES);
    // A change over the token budget is never reviewed in part: the
    // review fails before it spends anything.
    if let Some(why) = coverage::over_tokens(
        chunks.iter().map(|c| c.text.as_str()),
        run.review.budget.tokens,
    ) {
        let r = coverage_report(run, why.clone());
        sink(r.clone());
        return (vec![r], ReviewOutcome::Incomplete(why));
    }
    let deadline = tokio::time::Instant::now() + run.review.budget.time.get();
    let futures = reviewers
        .iter()
        .map(|name| one_reviewer(run, name, &chunks, deadline));
    let results = futures::future::join_all(futures).await;
    let approvals = results
        .iter()
        .filter(|(_, one)| matches!(one, One::Verdict(Decision::Approve, _)))
        .count();
    let consensus_met = approvals >= run.review.consensus;
    let mut reports = Vec::new();
    let mut requested = Vec::new();
    let mut structural = Vec::new();
    let mut incomplete = Vec::new();
    let mut cancelled = false;
    for (name, (rs, one)) in reviewers.iter().zip(results) {
        for mut r in rs {
            // Once consensus is reached, a dissenting or unusable reviewer
            // shows as a warning, not as a second verdict.
            if consensus_met && r.status == rascal_core::model::verdict::Status::Fail {
                r.required = false;
                r = r.finish();
            }
            sink(r.clone());
            reports.push(r);
        }
        match one {
            One::Verdict(Decision::Approve, _) => {}
            One::Verdict(_, issues) => requested.extend(
                issues
                    .into_iter()
                    .filter(|i| i.severity >= Severity::Warning),
            ),
            One::Structural(why) => structural.push(format!("{name}: {why}")),
            One::Incomplete(why) => incomplete.push(why),
            One::Cancelled => cancelled = true,
        }
    }
    let outcome = if cancelled {
        ReviewOutcome::Cancelled
    } else if consensus_met {
        ReviewOutcome::Approved
    } else if !requested.is_empty() {
        ReviewOutcome::ChangesRequested(requested)
    } else if let Some(why) = incomplete.into_iter().next() {
        let r = coverage_report(run, why.clone());
        sink(r.clone());
        reports.push(r);
        ReviewOutcome::Incomplete(why)
    } else {
        ReviewOutcome::Escalate(format!(
            "{approvals} of {} required approvals; reviewer output unusable twice ({})",
            run.review.consensus,
            structural.join("; ")
        ))
    };
    (reports, outcome)
}

/// The review's own FAIL when part of the change went unreviewed.
fn coverage_report(run: &ReviewRun<'_>, why: String) -> Report {
    Report::new(Layer::Review, "review coverage")
        .input("diff", run.changes.fingerprint())
        .input("diff_text", run.diff)
        .input(
            "budget",
            format!(
                "{} {}",
                run.review.budget.time.get().as_secs(),
                run.review.budget.tokens
            ),
        )
        .errored(why)
        .finish()
}

#[cfg(test)]
mod tests;
