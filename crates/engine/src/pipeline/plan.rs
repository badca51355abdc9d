//! Plan, then execute: before any candidate writes code, the planning
//! agent (`plan:` in `.rascal/verification.yaml`) reads a read-only copy
//! of the base and the instruction and proposes acceptance criteria; a
//! human approves them (the TUI's plan screen, or `--approve`), and the
//! candidates start with the approved task. The planner runs as a
//! reviewer does (`agents::ask`: sandboxed, its answer nonce-bound); an
//! answer that does not parse is retried once, then a human decides. See
//! docs/guide.md, "Plan, then execute".

use crate::pipeline::journal::Journal;
use crate::pipeline::plan_answer::{parse_plan, plan_prompt, Proposal};
use crate::pipeline::request::{PlanGate, RunRequest};
use crate::Error;
use rascal_core::config::spec::Task;
use rascal_core::config::Config;
use rascal_core::model::decision::{Decision, DecisionKind};
use rascal_core::model::event::RunEvent;
use rascal_exec::agents::ask::{ask, Answer, Site, REVIEW_NONCE_ENV};
use std::path::{Path, PathBuf};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Everything planning one run needs.
pub(crate) struct Planning<'a> {
    pub(crate) run: &'a str,
    pub(crate) config: &'a Config,
    pub(crate) request: &'a RunRequest,
    pub(crate) repo_dir: &'a Path,
    pub(crate) state: &'a Path,
    pub(crate) base: git2::Oid,
    pub(crate) task: &'a Task,
    pub(crate) journal: &'a Journal,
    pub(crate) cancel: &'a CancellationToken,
}

/// How the plan ended.
pub(crate) enum Planned {
    /// The task the candidates start with.
    Approved(Box<Task>),
    /// Nobody approved it here: a human must (exit 3), for this reason.
    NeedsHuman(String),
    /// The run was cancelled while it was planned.
    Cancelled,
}

/// The run's files of its plan: `runs/<run>/plan`.
pub fn plan_dir(state: &Path, run: &str) -> PathBuf {
    state.join("runs").join(run).join("plan")
}

/// Where the approved criteria are written as a spec, in the run's files
/// (never in the user's repository): `runs/<run>/.rascal/specs/<slug>.yaml`.
pub fn spec_file(state: &Path, run: &str, instruction: &str) -> PathBuf {
    state
        .join("runs")
        .join(run)
        .join(rascal_core::config::spec::SPECS_DIR)
        .join(format!("{}.yaml", rascal_core::text::slug(instruction)))
}

/// Plan the run: propose, journal the proposal, and have it approved as
/// `request.plan` says. `decisions` carries the TUI's approval.
pub(crate) async fn plan(
    p: &Planning<'_>,
    decisions: &mut mpsc::UnboundedReceiver<Decision>,
) -> Planned {
    let Some(cfg) = p.config.verification.as_ref().and_then(|v| v.plan.clone()) else {
        return Planned::NeedsHuman(
            "the run asks for a plan but .rascal/verification.yaml names no planner".into(),
        );
    };
    let proposed = propose(p, &cfg.agent, cfg.timeout.get()).await;
    if p.cancel.is_cancelled() {
        return Planned::Cancelled;
    }
    let (proposal, problem) = match proposed {
        Ok(pr) => (pr, None),
        Err(why) => (Proposal::default(), Some(why.to_string())),
    };
    p.journal.emit(RunEvent::PlanProposed {
        agent: cfg.agent.clone(),
        criteria: proposal.criteria.clone(),
        constraints: proposal.constraints.clone(),
        problem: problem.clone(),
    });
    let vacuous = vacuous_on_base(p, &proposal.criteria).await;
    if p.cancel.is_cancelled() {
        return Planned::Cancelled;
    }
    if p.request.plan == PlanGate::Approve
        && problem.is_none()
        && !vacuous.is_empty()
        && !p.request.allow_vacuous
    {
        return Planned::NeedsHuman(vacuous_refusal(&vacuous));
    }
    let approval = match (p.request.plan, &problem) {
        (PlanGate::Approve, None) => Decision::new(
            None,
            DecisionKind::ApprovePlan {
                criteria: proposal.criteria.clone(),
                constraints: proposal.constraints.clone(),
                changes: Vec::new(),
            },
            &crate::store::project::author_in(p.repo_dir),
            "accepted as proposed (--approve)",
        ),
        (PlanGate::Ask, _) => match wait_for_approval(decisions, p.cancel).await {
            Some(d) => d,
            None => return Planned::Cancelled,
        },
        (_, Some(why)) => {
            return Planned::NeedsHuman(format!(
                "the planner gave no usable plan ({why}); a human must write the criteria"
            ))
        }
        _ => {
            return Planned::NeedsHuman(
                "the plan needs a human's approval: plan in the TUI to approve or edit this proposal; `--plan --approve` asks the planner again and accepts its new proposal as it comes, unseen".into(),
            )
        }
    };
    let DecisionKind::ApprovePlan {
        criteria,
        constraints,
        ..
    } = &approval.kind
    else {
        unreachable!("wait_for_approval returns approvals only")
    };
    let mut task = p.task.clone();
    task.acceptance_criteria.extend(criteria.iter().cloned());
    task.constraints.extend(constraints.iter().cloned());
    task.plan = true;
    let who = approval.who.clone();
    p.journal
        .emit(RunEvent::DecisionRecorded { decision: approval });
    p.journal.emit(RunEvent::TaskLoaded {
        source: format!("plan approved by {who}"),
        task: Box::new(task.clone()),
        worktree: Default::default(),
    });
    write_spec(p, &task);
    Planned::Approved(Box::new(task))
}

/// Every criterion, the spec's and the planner's (`proposed`), on the
/// unchanged base: those it already meets.
async fn vacuous_on_base(
    p: &Planning<'_>,
    proposed: &[rascal_core::config::spec::Criterion],
) -> Vec<rascal_core::model::event::VacuousCriterion> {
    // Every criterion, the spec's and the planner's, on the unchanged base.
    let all: Vec<rascal_core::config::spec::Criterion> = p
        .task
        .acceptance_criteria
        .iter()
        .chain(proposed)
        .cloned()
        .collect();
    let on_base = crate::pipeline::vacuity::OnBaseRun {
        run: p.run,
        config: p.config,
        repo_dir: p.repo_dir,
        state: p.state,
        base: p.base,
        holdout: &p.task.holdout,
        journal: p.journal,
        cancel: p.cancel,
    };
    crate::pipeline::vacuity::check(&on_base, &all).await
}

/// Why `--approve` refuses a plan whose `vacuous` criteria the unchanged
/// base already meets.
fn vacuous_refusal(vacuous: &[rascal_core::model::event::VacuousCriterion]) -> String {
    let named: Vec<String> = vacuous
        .iter()
        .map(|v| format!("`{}` ({})", v.criterion, v.why))
        .collect();
    format!(
        "--approve refused: {} vacuous — the unchanged base already meets {}, so a change that does nothing would pass: {}. Edit the plan in the TUI (`rascal run --plan` without --approve), or accept {} anyway with `--approve --allow-vacuous` (never counted as evidence)",
        if vacuous.len() == 1 {
            "1 criterion is".to_string()
        } else {
            format!("{} criteria are", vacuous.len())
        },
        if vacuous.len() == 1 { "it" } else { "them" },
        named.join("; "),
        if vacuous.len() == 1 { "it" } else { "them" },
    )
}

/// Wait for the human's approval (a run-level cancel, or the view gone,
/// ends the run). Any other decision is not for this moment.
async fn wait_for_approval(
    decisions: &mut mpsc::UnboundedReceiver<Decision>,
    cancel: &CancellationToken,
) -> Option<Decision> {
    loop {
        let d = tokio::select! {
            _ = cancel.cancelled() => return None,
            d = decisions.recv() => d?,
        };
        match &d.kind {
            DecisionKind::ApprovePlan { criteria, .. } if valid(criteria) => return Some(d),
            DecisionKind::Cancel if d.candidate.is_none() => {
                cancel.cancel();
                return None;
            }
            _ => {}
        }
    }
}

/// Approved criteria are checked as a spec's are: each valid, each with
/// its own description.
fn valid(criteria: &[rascal_core::config::spec::Criterion]) -> bool {
    let mut seen = std::collections::BTreeSet::new();
    criteria
        .iter()
        .all(|c| c.validate().is_ok() && seen.insert(c.description.as_str()))
}

/// The approved task as a spec, in the run's files.
fn write_spec(p: &Planning<'_>, task: &Task) {
    let file = spec_file(p.state, p.run, &task.instruction);
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(yaml) = task.to_yaml() {
        let _ = std::fs::write(&file, yaml);
    }
}

/// Ask the planner on a read-only copy of the base (held-out tests left
/// out): one try, and one more when its answer does not parse.
async fn propose(
    p: &Planning<'_>,
    agent: &str,
    timeout: std::time::Duration,
) -> Result<Proposal, Error> {
    let Some(agent_cfg) = p.config.main.agents.get(agent) else {
        return Err(Error::Usage(format!(
            "the planner `{agent}` is not an agent of .rascal/config.yaml"
        )));
    };
    let dir = plan_dir(p.state, p.run);
    let view = dir.join("base");
    let repo = rascal_exec::git::workspace::open(p.repo_dir)?;
    let holdout = rascal_exec::git::holdout::Holdout::resolve(&repo, p.base, &p.task.holdout)?;
    rascal_exec::git::workspace::create_workspace(&repo, p.base, &view, &holdout).map_err(|e| {
        Error::Sandbox(format!(
            "could not make the planner's copy of the base: {e}"
        ))
    })?;
    let existing: Vec<String> = p
        .task
        .acceptance_criteria
        .iter()
        .map(|c| c.description.clone())
        .collect();
    let mut why = String::new();
    for attempt in 1..=2u32 {
        let site = Site {
            run: p.run.to_string(),
            candidate: "plan".into(),
            dir: dir.clone(),
            rascal_exe: p.request.rascal_exe.clone(),
            attempt,
            hide: rascal_exec::exec::confine::private_paths(p.repo_dir, p.state)
                .into_iter()
                .chain(rascal_exec::git::holdout::outside_dirs(&p.task.holdout))
                .collect(),
            tempo: p.request.tempo,
            read_only: vec![view.clone()],
        };
        let (answer, nonce) = ask_once(p, agent, agent_cfg, &view, &site, attempt, timeout).await;
        if p.cancel.is_cancelled() {
            return Err(Error::Agent(
                "the run was cancelled while it was planned".into(),
            ));
        }
        let parsed = match &answer.problem {
            Some(problem) => Err(Error::Agent(format!("the planner {problem}"))),
            None => parse_plan(&answer.text, &nonce, &existing),
        };
        match parsed {
            Ok(proposal) => {
                let _ = rascal_exec::git::beneath::remove_path(&view);
                return Ok(proposal);
            }
            Err(e) => {
                why = if attempt == 1 {
                    e.to_string()
                } else {
                    format!("{why}; again on the retry: {e}")
                }
            }
        }
    }
    let _ = rascal_exec::git::beneath::remove_path(&view);
    Err(Error::Agent(why))
}

/// One planner call with a fresh nonce; its files under `plan/try-N`.
#[allow(clippy::too_many_arguments)]
async fn ask_once(
    p: &Planning<'_>,
    agent: &str,
    agent_cfg: &rascal_core::config::AgentConfig,
    view: &Path,
    site: &Site,
    attempt: u32,
    timeout: std::time::Duration,
) -> (Answer, String) {
    let nonce = match crate::layers::review::new_nonce() {
        Ok(n) => n,
        Err(e) => {
            return (
                Answer {
                    text: Vec::new(),
                    problem: Some(format!("could not get a nonce from /dev/urandom: {e}")),
                    exit_code: None,
                    duration_ms: 0,
                    command: String::new(),
                    tail: String::new(),
                },
                String::new(),
            )
        }
    };
    let prompt = plan_prompt(p.task, view, &nonce);
    let env = [(REVIEW_NONCE_ENV.to_string(), nonce.clone())];
    let dir = site.dir.join(format!("try-{attempt}"));
    let answer = ask(
        agent, agent_cfg, &prompt, &env, &dir, site, timeout, p.cancel,
    )
    .await;
    (answer, nonce)
}
