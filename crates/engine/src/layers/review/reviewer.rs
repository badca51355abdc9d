//! One reviewer over every chunk of the diff: each call with a fresh nonce
//! and one structural retry, within the review's deadline.

use super::*;
use crate::Error;

pub(super) enum One {
    /// The reviewer's decision over the whole (reviewed) change, and its
    /// issues as report issues.
    Verdict(Decision, Vec<Issue>),
    Structural(String),
    /// Part of the change was not reviewed within the budget.
    Incomplete(String),
    /// The candidate was cancelled before this reviewer answered.
    Cancelled,
}

/// What became of one chunk for one reviewer.
enum ChunkResult {
    Reviewed(ReviewVerdict),
    Structural(String),
    /// The review's time ran out before this chunk was reviewed.
    Unreviewed,
    Cancelled,
}

/// One reviewer's call on chunk `k` of `n`, if the review's time allows.
async fn review_chunk(
    run: &ReviewRun<'_>,
    name: &str,
    chunk: &Chunk,
    (k, n): (usize, usize),
    deadline: tokio::time::Instant,
) -> (Vec<Report>, ChunkResult) {
    let part = (n > 1).then_some((k, n));
    let now = tokio::time::Instant::now();
    if now >= deadline {
        return (Vec::new(), ChunkResult::Unreviewed);
    }
    let timeout = run.review.timeout.get().min(deadline - now);
    let (rs, one) = one_call(run, name, chunk, part, deadline, timeout).await;
    let result = match one {
        _ if run.cancel.is_cancelled() => ChunkResult::Cancelled,
        Ok(v) => ChunkResult::Reviewed(v),
        // A call the budget cut short was not reviewed; it is not the
        // reviewer's structural failure.
        Err(_) if tokio::time::Instant::now() >= deadline => ChunkResult::Unreviewed,
        Err(why) => ChunkResult::Structural(match part {
            Some((k, n)) => format!("chunk {k}/{n}: {why}"),
            None => why.to_string(),
        }),
    };
    (rs, result)
}

/// One reviewer over every chunk, `parallel` at a time, before
/// `deadline`: all must be reviewed and approved.
pub(super) async fn one_reviewer(
    run: &ReviewRun<'_>,
    name: &str,
    chunks: &[Chunk],
    deadline: tokio::time::Instant,
) -> (Vec<Report>, One) {
    use futures::StreamExt;
    let total = chunks.len();
    let calls: Vec<_> = chunks
        .iter()
        .enumerate()
        .map(|(k, chunk)| review_chunk(run, name, chunk, (k + 1, total), deadline))
        .collect();
    let results: Vec<(Vec<Report>, ChunkResult)> = futures::stream::iter(calls)
        .buffered(run.review.parallel.max(1))
        .collect()
        .await;
    let mut reports = Vec::new();
    let mut issues = Vec::new();
    let mut decision = Decision::Approve;
    let mut structural = None;
    let mut reviewed = 0;
    let mut cancelled = false;
    for (rs, result) in results {
        reports.extend(rs);
        match result {
            ChunkResult::Reviewed(v) => {
                reviewed += 1;
                if v.decision == Decision::RequestChanges {
                    decision = Decision::RequestChanges;
                }
                issues.extend(issues_of(name, &v));
            }
            ChunkResult::Structural(why) => {
                structural.get_or_insert(why);
            }
            ChunkResult::Unreviewed => {}
            ChunkResult::Cancelled => cancelled = true,
        }
    }
    let incomplete = (reviewed < total && structural.is_none())
        .then(|| coverage::ran_out(reviewed, total, run.review.budget.time.get()));
    if total > 1 || incomplete.is_some() {
        let mut r = Report::new(Layer::Review, name)
            .input("base", &run.changes.base)
            .input("diff", run.changes.fingerprint())
            .input("diff_text", run.diff)
            .input("task", &run.task.instruction);
        r.output = format!(
            "{}: {reviewed} of {total} chunk{} reviewed, the diff ({} KiB) being over the {} KiB one call is shown",
            match (decision, &incomplete) {
                (Decision::RequestChanges, _) => "changes requested".to_string(),
                (Decision::Approve, Some(_)) => "not approved".to_string(),
                (Decision::Approve, None) => format!("all {total} chunks approved"),
            },
            if total == 1 { "" } else { "s" },
            run.diff.len() / 1024,
            MAX_DIFF_BYTES / 1024
        );
        if decision == Decision::RequestChanges {
            r = r.errored(format!("`{name}` requested changes on at least one chunk"));
        } else if let Some(why) = &incomplete {
            r = r.errored(why.clone());
        }
        reports.push(r.finish());
    }
    let one = if cancelled {
        One::Cancelled
    } else if decision == Decision::RequestChanges {
        One::Verdict(decision, issues)
    } else if let Some(why) = structural {
        One::Structural(why)
    } else if let Some(why) = incomplete {
        One::Incomplete(why)
    } else {
        One::Verdict(decision, issues)
    };
    (reports, one)
}

/// Ask the reviewer once, with a fresh nonce (its files under `dir`):
/// its answer and the nonce it must carry.
async fn ask_reviewer(
    run: &ReviewRun<'_>,
    name: &str,
    chunk: &Chunk,
    part: Option<(usize, usize)>,
    dir: &std::path::Path,
    timeout: std::time::Duration,
) -> (Answer, String) {
    match new_nonce() {
        Ok(nonce) => {
            let prompt = review_prompt(run.task, &chunk.text, &nonce, part);
            let env = [(
                rascal_exec::agents::ask::REVIEW_NONCE_ENV.to_string(),
                nonce.clone(),
            )];
            let answer = ask(
                name,
                &run.config.main.agents[name],
                &prompt,
                &env,
                dir,
                &run.site,
                timeout,
                &run.cancel,
            )
            .await;
            (answer, nonce)
        }
        Err(e) => {
            let mut a = Answer {
                text: Vec::new(),
                problem: None,
                exit_code: None,
                duration_ms: 0,
                command: String::new(),
                tail: String::new(),
            };
            a.problem = Some(format!("could not get a nonce from /dev/urandom: {e}"));
            (a, String::new())
        }
    }
}

/// The report's line for a reviewer's verdict: its decision, how many
/// issues, which chunk.
fn verdict_line(v: &ReviewVerdict, part: Option<(usize, usize)>) -> String {
    format!(
        "verdict: {} · {} issue{}{}",
        match v.decision {
            Decision::Approve => "approve",
            Decision::RequestChanges => "request_changes",
        },
        v.issues.len(),
        if v.issues.len() == 1 { "" } else { "s" },
        match part {
            Some((k, n)) => format!(" · chunk {k} of {n}"),
            None => String::new(),
        }
    )
}

/// A review call that stopped before it had an answer, and why.
fn stopped(why: &str) -> Result<ReviewVerdict, Error> {
    Err(Error::Agent(why.into()))
}

/// One reviewer call on one chunk, with its one structural retry (each try
/// with a fresh nonce).
async fn one_call(
    run: &ReviewRun<'_>,
    name: &str,
    chunk: &Chunk,
    part: Option<(usize, usize)>,
    deadline: tokio::time::Instant,
    first_timeout: std::time::Duration,
) -> (Vec<Report>, Result<ReviewVerdict, Error>) {
    let mut reports = Vec::new();
    for attempt_try in 1..=2u32 {
        let timeout = if attempt_try == 1 {
            first_timeout
        } else {
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return (reports, stopped("the review's time ran out"));
            }
            run.review.timeout.get().min(deadline - now)
        };
        let dir_name = match part {
            Some((k, _)) => format!("review-{name}-chunk{k}-{attempt_try}"),
            None => format!("review-{name}-{attempt_try}"),
        };
        let dir = run
            .site
            .dir
            .join(format!("attempt-{}", run.site.attempt))
            .join(dir_name);
        let check = {
            let base = match part {
                Some((k, n)) => format!("{name} [chunk {k}/{n}]"),
                None => name.to_string(),
            };
            if attempt_try == 1 {
                base
            } else {
                format!("{base} (fresh reviewer)")
            }
        };
        let (answer, nonce) = ask_reviewer(run, name, chunk, part, &dir, timeout).await;
        let mut r = Report::new(Layer::Review, check)
            .input("base", &run.changes.base)
            .input("diff", run.changes.fingerprint())
            .input("diff_text", run.diff)
            .input("chunk", &chunk.text)
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
        if run.cancel.is_cancelled() {
            // The user's cancel (or a budget) stopped it: nothing to
            // retry and nothing to escalate.
            reports.push(Report::skipped(
                Layer::Review,
                r.check.clone(),
                "not reviewed: the candidate was cancelled while its reviewer ran",
            ));
            return (reports, stopped("the candidate was cancelled"));
        }
        let parsed = match &answer.problem {
            Some(p) => Err(Error::Agent(format!("the reviewer {p}"))),
            None => parse_review(&answer.text, &nonce),
        };
        match parsed {
            Ok(v) => {
                r.issues = issues_of(name, &v);
                r.output = verdict_line(&v, part);
                reports.push(r.finish());
                return (reports, Ok(v));
            }
            Err(why) => {
                r.output = rascal_core::text::tail(&answer.tail, 2000);
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
                    return (reports, Err(why));
                }
            }
        }
    }
    unreachable!("the loop returns on the second try")
}
