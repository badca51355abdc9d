//! The comparator's judge: an agent asked to break a tie at the top of
//! the ranking. Advisory: any problem is recorded and the ranking stands.

use crate::layers::compare::{self};
use rascal_core::config::Config;
use rascal_exec::agents::ask::Site;
use rascal_exec::git::workspace::{self};
use std::path::PathBuf;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What the judge is shown and where it runs.
pub(crate) struct Tie<'a> {
    pub(crate) config: &'a Config,
    /// The judge agent's name in config.yaml.
    pub(crate) judge: &'a str,
    /// The task's `holdout:`: held-out tests (and the specs naming them)
    /// are cut from the diffs the judge reads.
    pub(crate) holdout: &'a [String],
    pub(crate) instruction: &'a str,
    /// The candidates tied at the top.
    pub(crate) tied: &'a [String],
    /// The user's repository (the change is read through it).
    pub(crate) origin: &'a std::path::Path,
    /// Every candidate's workspace, by id.
    pub(crate) worktrees: &'a std::collections::BTreeMap<String, PathBuf>,
    pub(crate) base: git2::Oid,
    pub(crate) site: &'a Site,
    pub(crate) cancel: &'a CancellationToken,
}

/// Each of `ids`' change as a diff against the base, held-out tests
/// stripped: what a judge or the discriminator is shown.
pub(crate) fn diffs_of(
    ids: &[String],
    origin: &std::path::Path,
    worktrees: &std::collections::BTreeMap<String, PathBuf>,
    base: git2::Oid,
    holdout: &[String],
) -> Vec<(String, String)> {
    let holdout = workspace::open(origin)
        .ok()
        .and_then(|r| rascal_exec::git::holdout::Holdout::resolve(&r, base, holdout).ok())
        .unwrap_or_default();
    ids.iter()
        .map(|id| {
            let diff = worktrees
                .get(id)
                .and_then(|w| workspace::diff_text(origin, w, base).ok())
                .map(|d| holdout.strip_from_diff(&d))
                .unwrap_or_default();
            (id.clone(), diff)
        })
        .collect()
}

/// Ask the comparator's judge to break a tie. Its answer is advisory: any
/// problem is recorded and the ranking stands.
pub(crate) async fn ask_judge(tie: &Tie<'_>) -> compare::JudgeNote {
    let Tie {
        config,
        judge,
        holdout,
        instruction,
        tied,
        origin,
        worktrees,
        base,
        site,
        cancel,
    } = *tie;
    let mut note = compare::JudgeNote {
        agent: judge.to_string(),
        tied: tied.to_vec(),
        pick: None,
        reason: String::new(),
        problem: None,
    };
    let Some(agent) = config.main.agents.get(judge) else {
        note.problem = Some(format!(
            "the judge `{judge}` is not an agent in .rascal/config.yaml"
        ));
        return note;
    };
    let diffs = diffs_of(tied, origin, worktrees, base, holdout);
    // Every tied diff whole, or no judgement: a judge that saw part of a
    // change does not break a tie.
    let shown: String = diffs.iter().map(|(_, d)| d.as_str()).collect();
    let budget = config
        .verification
        .as_ref()
        .map(|v| v.judge_budget)
        .unwrap_or_default()
        .tokens;
    if let Some(why) = crate::layers::coverage::judge_over(&shown, budget, "judge_budget.tokens") {
        note.problem = Some(why);
        return note;
    }
    let nonce = match crate::layers::review::new_nonce() {
        Ok(n) => n,
        Err(e) => {
            note.problem = Some(format!("could not get a nonce from /dev/urandom: {e}"));
            return note;
        }
    };
    let prompt = compare::judge_prompt(instruction, &diffs, &nonce);
    let env = [(
        rascal_exec::agents::ask::REVIEW_NONCE_ENV.to_string(),
        nonce.clone(),
    )];
    let timeout = agent
        .timeout
        .map(|d| d.get())
        .unwrap_or(Duration::from_secs(600));
    let answer = rascal_exec::agents::ask::ask(
        judge, agent, &prompt, &env, &site.dir, site, timeout, cancel,
    )
    .await;
    if let Some(p) = answer.problem {
        note.problem = Some(format!("the judge {p}"));
        return note;
    }
    match compare::parse_pick(&answer.text, tied, &nonce) {
        Ok((pick, reason)) => {
            note.pick = Some(pick);
            note.reason = reason;
        }
        Err(e) => note.problem = Some(e.to_string()),
    }
    note
}
