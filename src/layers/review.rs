//! Layer 5, adversarial review: an independent agent (by default of another
//! provider than the author) gets ONLY the task and the diff — never the
//! author's own account — and must answer with one JSON verdict. Output
//! that does not parse into that verdict is a structural failure: one retry
//! with a fresh reviewer, then escalation. A mute or garbled reviewer is
//! never an approval. `parse_review` is a pure function over the bytes.

use crate::config::spec::Task;
use crate::config::verification::{provider, ReviewConfig};
use crate::config::{AgentConfig, Config, VERIFICATION_FILE};
use crate::model::changeset::ChangeSet;
use crate::model::verdict::{Issue, Layer, Report, Severity};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

/// Reviewer output above this size is refused (a verdict is small).
pub use crate::agents::ask::MAX_ANSWER_BYTES as MAX_REVIEW_BYTES;
/// The diff shown to a reviewer is cut here.
const MAX_DIFF_BYTES: usize = 256 * 1024;

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

use crate::agents::ask::json_objects;

/// Parse a reviewer's output. `Err` is a structural failure, with why.
pub fn parse_review(bytes: &[u8]) -> Result<ReviewVerdict, String> {
    if bytes.len() > MAX_REVIEW_BYTES {
        return Err(format!(
            "the output is {} bytes, over the {} KiB limit for a review",
            bytes.len(),
            MAX_REVIEW_BYTES / 1024
        ));
    }
    let text = String::from_utf8_lossy(bytes);
    if text.trim().is_empty() {
        return Err("the reviewer printed nothing".into());
    }
    let objects = json_objects(&text);
    let nested = objects.iter().any(|o| {
        !o.contains_key("verdict") && Value::Object(o.clone()).to_string().contains("\"verdict\"")
    });
    let verdicts: Vec<&Map<String, Value>> = objects
        .iter()
        .filter(|o| o.contains_key("verdict"))
        .collect();
    match verdicts.len() {
        0 if nested => Err(
            "the `verdict` key is nested inside another object; it must be in a top-level JSON object".into(),
        ),
        0 if text.contains("\"verdict\"") => {
            Err("a verdict object starts but is not valid JSON (truncated or malformed)".into())
        }
        0 => Err(format!(
            "no JSON verdict in the output (it begins: {:?})",
            crate::text::ellipsis(text.trim(), 60)
        )),
        1 => verdict_of(verdicts[0]),
        n => Err(format!("{n} verdict objects; exactly one is allowed")),
    }
}

fn verdict_of(o: &Map<String, Value>) -> Result<ReviewVerdict, String> {
    let decision = match o.get("verdict") {
        Some(Value::String(s)) if s == "approve" => Decision::Approve,
        Some(Value::String(s)) if s == "request_changes" => Decision::RequestChanges,
        Some(Value::String(s)) => {
            return Err(format!(
                "unknown verdict `{}`; expected `approve` or `request_changes`",
                crate::text::ellipsis(s, 40)
            ))
        }
        Some(other) => return Err(format!("`verdict` must be a string, got {}", kind(other))),
        None => unreachable!("filtered on the key"),
    };
    let list = match o.get("issues") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(other) => return Err(format!("`issues` must be a list, got {}", kind(other))),
    };
    let mut issues = Vec::new();
    for (n, item) in list.iter().enumerate() {
        let n = n + 1;
        let Value::Object(i) = item else {
            return Err(format!("issue {n} must be an object, got {}", kind(item)));
        };
        let severity = match i.get("severity") {
            Some(Value::String(s)) => match s.as_str() {
                "critical" => ReviewSeverity::Critical,
                "major" => ReviewSeverity::Major,
                "minor" => ReviewSeverity::Minor,
                other => {
                    return Err(format!(
                        "issue {n}: unknown severity `{}`; expected critical, major or minor",
                        crate::text::ellipsis(other, 40)
                    ))
                }
            },
            Some(v) => {
                return Err(format!(
                    "issue {n}: `severity` must be a string, got {}",
                    kind(v)
                ))
            }
            None => return Err(format!("issue {n}: `severity` is missing")),
        };
        let location = match i.get("location") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(v) => {
                return Err(format!(
                    "issue {n}: `location` must be a string, got {}",
                    kind(v)
                ))
            }
        };
        let description = match i.get("description") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(Value::String(_)) | None => {
                return Err(format!("issue {n}: `description` is missing or empty"))
            }
            Some(v) => {
                return Err(format!(
                    "issue {n}: `description` must be a string, got {}",
                    kind(v)
                ))
            }
        };
        issues.push(ReviewIssue {
            severity,
            location,
            description,
        });
    }
    if decision == Decision::Approve
        && issues
            .iter()
            .any(|i| i.severity == ReviewSeverity::Critical)
    {
        return Err("`approve` with a critical issue contradicts itself".into());
    }
    if decision == Decision::RequestChanges && issues.is_empty() {
        return Err("`request_changes` without any issue gives the author nothing to fix".into());
    }
    Ok(ReviewVerdict { decision, issues })
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// `path:line` → (path, line); anything else is a path (or nothing).
fn split_location(loc: &str) -> (Option<String>, Option<u32>) {
    let loc = loc.trim();
    if loc.is_empty() {
        return (None, None);
    }
    if let Some((p, l)) = loc.rsplit_once(':') {
        let l = l.split('-').next().unwrap_or(l);
        if let Ok(n) = l.trim().parse::<u32>() {
            return (Some(p.to_string()), Some(n));
        }
    }
    (Some(loc.to_string()), None)
}

/// The issues of a verdict as report issues. An approving reviewer's issues
/// are at most warnings: they inform, they do not block.
pub fn issues_of(reviewer: &str, v: &ReviewVerdict) -> Vec<Issue> {
    let rule = format!("review/{reviewer}");
    let mut out: Vec<Issue> = v
        .issues
        .iter()
        .map(|i| {
            let mut sev = i.severity.severity();
            if v.decision == Decision::Approve {
                sev = sev.min(Severity::Warning);
            }
            let mut issue = Issue::new(&rule, sev, i.description.clone());
            let (path, line) = split_location(&i.location);
            issue.path = path;
            issue.line = line;
            issue
        })
        .collect();
    if v.decision == Decision::RequestChanges && !out.iter().any(|i| i.severity >= Severity::Error)
    {
        out.push(Issue::new(
            &rule,
            Severity::Error,
            format!("`{reviewer}` requested changes (its issues are all minor)"),
        ));
    }
    out
}

/// The task as a reviewer or judge sees it: instruction, criteria, constraints.
pub fn task_text(task: &Task) -> String {
    let mut s = format!("## Task\n\n{}\n", task.instruction.trim());
    if !task.acceptance_criteria.is_empty() {
        s.push_str("\n## Acceptance criteria\n\n");
        for c in &task.acceptance_criteria {
            s.push_str(&format!(
                "- {} ({}: `{}`)\n",
                c.description,
                c.kind.name(),
                c.check
            ));
        }
    }
    if !task.constraints.is_empty() {
        s.push_str("\n## Constraints\n\n");
        for c in &task.constraints {
            let v = match &c.kind {
                crate::config::spec::ConstraintKind::NoTouchFiles(g) => {
                    format!(": `{}`", g.as_str())
                }
                crate::config::spec::ConstraintKind::MaxLines(n) => format!(": {n}"),
                crate::config::spec::ConstraintKind::NoNewDeps => String::new(),
            };
            s.push_str(&format!("- {} ({}{v})\n", c.description, c.kind.name()));
        }
    }
    s
}

/// The diff for a prompt, cut to a bounded size.
pub fn diff_block(diff: &str) -> String {
    let cut = if diff.len() > MAX_DIFF_BYTES {
        crate::text::cut(diff, MAX_DIFF_BYTES)
    } else {
        diff.to_string()
    };
    format!("## Diff\n\n```diff\n{}\n```\n", cut.trim_end())
}

/// The reviewer's prompt: adversarial, task + diff only.
pub fn review_prompt(task: &Task, diff: &str) -> String {
    format!(
        "You are an adversarial code reviewer. Another agent wrote the change below for the task below. \
You are rewarded for every real problem you find: correctness bugs, unmet requirements, security holes, \
performance problems, compatibility breaks. You are not rewarded for approving. Do not trust the change; \
check it against the task. The author's own account of the change is deliberately withheld: judge the diff.\n\n\
{}\n{}\n## Your answer\n\n\
Give your reasoning if you like, then exactly ONE JSON object (a ```json fence is fine):\n\
{{\"verdict\": \"approve\" or \"request_changes\", \"issues\": [{{\"severity\": \"critical\" or \"major\" or \"minor\", \"location\": \"path:line\", \"description\": \"what is wrong and why\"}}]}}\n\
Use request_changes when any issue is critical or major; an approve with a critical issue is invalid. \
Print only one verdict object.\n",
        task_text(task),
        diff_block(diff)
    )
}

pub use crate::agents::ask::{ask, Answer, Site};

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
) -> Result<Vec<String>, String> {
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
        return Err(format!(
            "author `{}` (provider {author_provider}) has {} eligible reviewer(s) but consensus needs {}; same provider: {}\n  hint: add a reviewer of another provider to `review.reviewers` in {VERIFICATION_FILE}, or set `allow_same_provider: true`",
            author.0,
            ok.len(),
            review.consensus,
            if same.is_empty() { "none".into() } else { same.join(", ") }
        ));
    }
    Ok(ok)
}

enum One {
    Verdict(ReviewVerdict),
    Structural(String),
}

/// Run Layer 5 for one attempt: each eligible reviewer (in parallel), each
/// allowed one structural retry. Reports go to `sink` as they land.
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
            return (vec![r], ReviewOutcome::CouldNotRun(why));
        }
    };
    let prompt = review_prompt(run.task, run.diff);
    let futures = reviewers
        .iter()
        .map(|name| one_reviewer(run, name, &prompt));
    let results = futures::future::join_all(futures).await;
    let approvals = results
        .iter()
        .filter(|(_, one)| matches!(one, One::Verdict(v) if v.decision == Decision::Approve))
        .count();
    let consensus_met = approvals >= run.review.consensus;
    let mut reports = Vec::new();
    let mut requested = Vec::new();
    let mut structural = Vec::new();
    for (name, (rs, one)) in reviewers.iter().zip(results) {
        for mut r in rs {
            // Once consensus is reached, a dissenting or unusable reviewer
            // shows as a warning, not as a second verdict.
            if consensus_met && r.status == crate::model::verdict::Status::Fail {
                r.required = false;
                r = r.finish();
            }
            sink(r.clone());
            reports.push(r);
        }
        match one {
            One::Verdict(v) if v.decision == Decision::Approve => {}
            One::Verdict(v) => requested.extend(
                issues_of(name, &v)
                    .into_iter()
                    .filter(|i| i.severity >= Severity::Warning),
            ),
            One::Structural(why) => structural.push(format!("{name}: {why}")),
        }
    }
    let outcome = if consensus_met {
        ReviewOutcome::Approved
    } else if !requested.is_empty() {
        ReviewOutcome::ChangesRequested(requested)
    } else {
        ReviewOutcome::Escalate(format!(
            "{approvals} of {} required approvals; reviewer output unusable twice ({})",
            run.review.consensus,
            structural.join("; ")
        ))
    };
    (reports, outcome)
}

async fn one_reviewer(run: &ReviewRun<'_>, name: &str, prompt: &str) -> (Vec<Report>, One) {
    let cfg = &run.config.main.agents[name];
    let mut reports = Vec::new();
    for attempt_try in 1..=2u32 {
        let dir = run
            .site
            .dir
            .join(format!("attempt-{}", run.site.attempt))
            .join(format!("review-{name}-{attempt_try}"));
        let answer = ask(
            name,
            cfg,
            prompt,
            &dir,
            &run.site,
            run.review.timeout.get(),
            &run.cancel,
        )
        .await;
        let check = if attempt_try == 1 {
            name.to_string()
        } else {
            format!("{name} (fresh reviewer)")
        };
        let mut r = Report::new(Layer::Review, check)
            .input("base", &run.changes.base)
            .input("diff", run.diff)
            .input("task", &run.task.instruction)
            .input("command", &answer.command)
            .input(
                "config",
                run.config
                    .digests
                    .get(VERIFICATION_FILE)
                    .cloned()
                    .unwrap_or_default(),
            );
        r.duration_ms = answer.duration_ms;
        r.exit_code = answer.exit_code;
        let parsed = match &answer.problem {
            Some(p) => Err(format!("the reviewer {p}")),
            None => parse_review(&answer.text),
        };
        match parsed {
            Ok(v) => {
                r.issues = issues_of(name, &v);
                r.output = format!(
                    "verdict: {} · {} issue{}",
                    match v.decision {
                        Decision::Approve => "approve",
                        Decision::RequestChanges => "request_changes",
                    },
                    v.issues.len(),
                    if v.issues.len() == 1 { "" } else { "s" }
                );
                reports.push(r.finish());
                return (reports, One::Verdict(v));
            }
            Err(why) => {
                r.output = crate::text::tail(&answer.tail, 2000);
                if attempt_try == 1 {
                    // Shown, kept, but not what decides: the fresh reviewer does.
                    r.required = false;
                    r = r.errored(format!(
                        "structural failure: {why}; retrying once with a fresh reviewer"
                    ));
                } else {
                    r = r.errored(format!(
                        "structural failure again: {why}; escalating to a human"
                    ));
                }
                reports.push(r.finish());
                if attempt_try == 2 {
                    return (reports, One::Structural(why));
                }
            }
        }
    }
    unreachable!("the loop returns on the second try")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_found_top_level_only() {
        let objs = json_objects("a {\"x\": {\"verdict\": 1}} b {\"y\": 2} {broken");
        assert_eq!(objs.len(), 2);
        assert!(objs[0].contains_key("x"));
    }

    #[test]
    fn locations_split() {
        assert_eq!(
            split_location("src/a.rs:12"),
            (Some("src/a.rs".into()), Some(12))
        );
        assert_eq!(
            split_location("src/a.rs:3-7"),
            (Some("src/a.rs".into()), Some(3))
        );
        assert_eq!(split_location("src/a.rs"), (Some("src/a.rs".into()), None));
        assert_eq!(split_location(" "), (None, None));
    }
}
