//! `rascal combine RUN` (and `C` in the TUI's compare view): the combining
//! agent of `.rascal/verification.yaml`'s `combine:` gets the task and the
//! run's best passing candidates (the comparator's order, at most `top`),
//! and writes a new candidate, `combined`, in a fresh workspace at the
//! base. The run goes on in the same journal — the candidate joins it
//! (`candidate_added`), the decision is recorded with who and when (both
//! journalled as the pipeline starts, so every client sees them), and
//! the combined candidate goes through the one candidate pipeline: every
//! layer, then cross-testing with the run's other passing candidates and a
//! new ranking in which it competes like any other. The run's budgets
//! apply. Off unless configured; refused when fewer than two candidates
//! passed.

use crate::layers::compare::TEST_INTEGRITY;
use crate::pipeline::candidate::{check_place, Brief, CandidateOutcome};
use crate::pipeline::combine_brief::{self, Input, Material};
use crate::pipeline::prepare::{CombineStart, Setup};
use crate::pipeline::{PipelineError, PreparedRun, RunRequest};
use rascal_core::config::spec::Task;
use rascal_core::config::{Config, LauncherKind};
use rascal_core::model::decision::{Decision, DecisionKind};
use rascal_core::model::event::{candidate_verdict, CandidateInfo, RunEvent};
use rascal_core::model::state::State;
use rascal_core::model::summary::{CandidateSummary, RunSummary};
use rascal_core::model::verdict::{Layer, Severity, Status, Verdict};
use rascal_exec::exec::place::{Place, Sandboxed};
use rascal_exec::git::holdout::Holdout;
use rascal_exec::git::workspace;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The combined candidate's name (`combined-2`, … when a run is combined
/// again).
pub const COMBINED: &str = "combined";

/// After cross-testing again: the other candidates whose verdict is now
/// not what the journal has, and which cross-testing did not re-finish
/// itself (it re-finishes those it changed from their gate verdict), are
/// re-finished with it.
pub(crate) fn settle(
    recorded: &BTreeMap<String, Verdict>,
    gate: &BTreeMap<String, Verdict>,
    results: &[CandidateOutcome],
    journal: &crate::pipeline::journal::Journal,
) {
    for o in results {
        let (Some(was), Some(g)) = (recorded.get(&o.id), gate.get(&o.id)) else {
            continue;
        };
        if o.verdict == *g && o.verdict != *was {
            let changes = o.changes.as_ref();
            journal.emit(RunEvent::CandidateFinished {
                candidate: o.id.clone(),
                verdict: o.verdict,
                reason: crate::pipeline::first_failure(&o.reports),
                files: changes.map_or(0, |c| c.files.len()),
                lines: changes.map_or(0, |c| c.lines_changed()),
                tree: changes.map(|c| c.tree.clone()).filter(|t| !t.is_empty()),
                cancelled: false,
            });
        }
    }
}

/// The refusal when `combine:` is not configured.
pub fn not_configured() -> String {
    "combining is off: .rascal/verification.yaml has no `combine:`\n  hint: add `combine: { agent: NAME, top: 3 }` to .rascal/verification.yaml (NAME: an agent of .rascal/config.yaml), commit it, then combine again".into()
}

/// A candidate that can be handed to the combining agent: it passed (after
/// overrides), its change was verified (a tree), and nothing says it must
/// not be the pick (impossible, escalated, cancelled, test integrity
/// failed).
fn combinable(c: &CandidateSummary) -> bool {
    matches!(
        c.effective_verdict.or(c.verdict),
        Some(Verdict::Pass | Verdict::Warn)
    ) && matches!(c.state, State::Pass | State::Warn)
        && c.tree.is_some()
        && c.impossible.is_none()
        && !c
            .reports
            .iter()
            .any(|r| r.check == TEST_INTEGRITY && r.status == Status::Fail)
}

/// The candidates to combine: the passing ones in the comparator's order
/// (any the ranking does not list after), at most `top`.
pub fn chosen(summary: &RunSummary, top: usize) -> Vec<&CandidateSummary> {
    let ranked: Vec<&str> = summary
        .ranking
        .iter()
        .flat_map(|r| r.positions.iter().map(|p| p.candidate.as_str()))
        .collect();
    let mut out: Vec<&CandidateSummary> = ranked
        .iter()
        .filter_map(|id| summary.candidates.iter().find(|c| c.id == *id))
        .chain(
            summary
                .candidates
                .iter()
                .filter(|c| !ranked.contains(&c.id.as_str())),
        )
        .filter(|c| combinable(c))
        .collect();
    out.truncate(top);
    out
}

/// The refusal when fewer than two candidates can be combined.
pub fn too_few(run: &str, passing: &[&CandidateSummary]) -> Option<String> {
    if passing.len() >= 2 {
        return None;
    }
    let which = match passing.first() {
        Some(c) => format!("only `{}` passed", c.id),
        None => "no candidate passed".into(),
    };
    Some(format!(
        "combine refused: in run {run} {which}; combining needs at least two passing candidates (combining one candidate is pointless)\n  hint: {}",
        match passing.first() {
            Some(c) => format!("select it (`rascal select {run} {}`), or retry the others with feedback (`rascal retry`)", rascal_core::text::inert::shell_word(&c.id)),
            None => "retry a candidate with feedback (`rascal retry`), or start a new run".into(),
        }
    ))
}

/// The name the combined candidate gets in `summary`'s run.
fn combined_name(summary: &RunSummary) -> String {
    (1..)
        .map(|n| {
            if n == 1 {
                COMBINED.to_string()
            } else {
                format!("{COMBINED}-{n}")
            }
        })
        .find(|id| summary.candidates.iter().all(|c| &c.id != id))
        .expect("an unused name")
}

/// A candidate's findings for the combining agent: its reviewers' issues,
/// and what its other checks warned about.
fn findings(c: &CandidateSummary) -> Vec<String> {
    c.reports
        .iter()
        .filter(|r| r.layer == Layer::Review || r.status == Status::Warn)
        .flat_map(|r| {
            r.issues.iter().map(move |i| {
                let at = match (&i.path, i.line) {
                    (Some(p), Some(l)) => format!(" {p}:{l}"),
                    (Some(p), None) => format!(" {p}"),
                    _ => String::new(),
                };
                let sev = match i.severity {
                    Severity::Critical => "critical",
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                    Severity::Info => "info",
                };
                format!(
                    "[{sev}] {} {}{at}: {}",
                    r.layer,
                    r.check,
                    rascal_core::text::cut(&i.message.replace('\n', " "), 500)
                )
            })
        })
        .collect()
}

/// Record the combine decision and prepare the combined candidate.
pub fn prepare_combine(
    repo_dir: &Path,
    run: &str,
    who: &str,
    rascal_exe: PathBuf,
) -> Result<PreparedRun, PipelineError> {
    let repo = workspace::open(repo_dir)?;
    let mut store = crate::store::project::store_at(&repo)?;
    let state = workspace::files_dir(&repo);
    store.mark_interrupted()?;
    let events = store.events(run)?;
    let summary = RunSummary::from_events(&events);
    if summary.status == "running" {
        return Err(PipelineError::Usage(format!(
            "run {run} is still running\n  hint: wait for it to finish, then combine"
        )));
    }
    let base =
        git2::Oid::from_str(&summary.base).map_err(|e| PipelineError::Usage(e.to_string()))?;
    let mut config = crate::pipeline::prepare::config_as_recorded(&repo, base, &events)?;
    let combine = config
        .verification
        .as_ref()
        .and_then(|v| v.combine.clone())
        .ok_or_else(|| PipelineError::Usage(not_configured()))?;
    let passing = chosen(&summary, combine.top);
    if let Some(why) = too_few(run, &passing) {
        return Err(PipelineError::Usage(why));
    }
    let agent = combining_agent(&config, &combine)?;
    let task = task_of(&events, &summary);
    crate::pipeline::prepare::narrow_permissions(&mut config, &task);
    let unsandboxed = may_combine(&config, &combine.agent, &agent, (&repo, base), &state)?;
    let info = combined_candidate(
        &config,
        &summary,
        &combine,
        &agent,
        (&state, run, unsandboxed),
    )?;
    let id = info.id.clone();
    let holdout = Arc::new(Holdout::resolve(&repo, base, &task.holdout).unwrap_or_default());
    let workdir = workspace::workdir(&repo);
    let inputs = inputs_of(&passing, &workdir, base, &holdout);
    let provenance = sources_of(&inputs, &info, &holdout, &combine);
    let material = Material {
        task: &task,
        inputs: &inputs,
        agreement: summary.ranking.as_ref().and_then(|r| r.agreement.as_ref()),
    };
    let dir = rascal_exec::agents::artifacts_dir(&state, run, &id)
        .join(rascal_exec::exec::env::COMBINE_DIR);
    let others = Others {
        config: &config,
        run,
        state: &state,
        repo: &workdir,
        base,
        task: &task,
        holdout: &holdout,
    };
    let outcomes = others.outcomes(&summary, None);
    // Everything that can refuse has: now the workspace, the material and
    // the record.
    workspace::create_workspace(&repo, base, Path::new(&info.worktree), &holdout)?;
    let brief = Arc::new(written_brief(dir, &material)?);
    store.resume_run(run)?;
    let start = CombineStart {
        announce: announced(&info, &inputs, who, &combine.agent),
        candidate: id,
        brief,
        recorded: summary
            .candidates
            .iter()
            .filter_map(|c| Some((c.id.clone(), c.verdict?)))
            .collect(),
        others: outcomes,
        worktrees: summary
            .candidates
            .iter()
            .map(|c| (c.id.clone(), PathBuf::from(&c.worktree)))
            .collect(),
        provenance,
    };
    let request = RunRequest::new(workdir.clone(), &task.instruction, vec![], rascal_exe);
    Ok(PreparedRun::combined(
        Setup {
            run: run.to_string(),
            config,
            base,
            repo_dir: workdir,
            state,
            candidates: vec![(info, agent)],
            task,
            request,
            store,
        },
        start,
    ))
}

/// The combined candidate: its name, agent and workspace. Refused when
/// the run's budgets, or its agent's, are spent.
fn combined_candidate(
    config: &Config,
    summary: &RunSummary,
    combine: &rascal_core::config::verification::CombineConfig,
    agent: &rascal_core::config::AgentConfig,
    (state, run, unsandboxed): (&Path, &str, bool),
) -> Result<CandidateInfo, PipelineError> {
    let id = combined_name(summary);
    let info = CandidateInfo {
        id: id.clone(),
        agent: combine.agent.clone(),
        runtime: format!("{:?}", agent.runtime).to_lowercase(),
        worktree: workspace::workspace_path(state, run, &id)
            .to_string_lossy()
            .into_owned(),
        unsandboxed,
    };
    let budgets = crate::pipeline::budget::Budgets::new(
        config,
        &[(info.clone(), agent.clone())],
        Some(summary),
    );
    if let Some(why) = budgets.refusal(&id, 1) {
        return Err(PipelineError::Usage(format!(
            "combine refused: {why}\n  hint: budgets are set in .rascal/config.yaml (`budget:` for the run, `agents.{}.budget` for each of its candidates); start a new run to spend more",
            combine.agent
        )));
    }
    Ok(info)
}

/// The combining agent's material written in `dir`, and its brief.
fn written_brief(dir: PathBuf, material: &Material<'_>) -> Result<Brief, PipelineError> {
    combine_brief::write(&dir, material).map_err(|e| {
        PipelineError::Usage(format!(
            "could not write the combining agent's material in {}: {e}",
            dir.display()
        ))
    })?;
    Ok(Brief {
        prompt: combine_brief::prompt(material),
        inputs: dir,
    })
}

/// What the combined change is traced to: its sources' diffs.
fn sources_of(
    inputs: &[Input],
    info: &CandidateInfo,
    holdout: &Arc<Holdout>,
    combine: &rascal_core::config::verification::CombineConfig,
) -> crate::pipeline::provenance::Sources {
    crate::pipeline::provenance::Sources {
        diffs: inputs
            .iter()
            .map(|i| (i.id.clone(), i.diff.clone()))
            .collect(),
        worktree: PathBuf::from(&info.worktree),
        holdout: holdout.clone(),
        allow_glue: combine.allow_new == rascal_core::config::verification::AllowNew::Glue,
    }
}

/// The combining agent's config, from `.rascal/config.yaml`.
fn combining_agent(
    config: &Config,
    combine: &rascal_core::config::verification::CombineConfig,
) -> Result<rascal_core::config::AgentConfig, PipelineError> {
    config
        .main
        .agents
        .get(&combine.agent)
        .cloned()
        .ok_or_else(|| {
            PipelineError::Usage(format!(
                "the combining agent `{}` is not in .rascal/config.yaml",
                combine.agent
            ))
        })
}

/// The run's task as it was loaded (else its instruction).
fn task_of(events: &[RunEvent], summary: &RunSummary) -> Task {
    events
        .iter()
        .find_map(|e| match e {
            RunEvent::TaskLoaded { task, .. } => Some((**task).clone()),
            _ => None,
        })
        .unwrap_or_else(|| Task::from_instruction(summary.instruction.clone()))
}

/// Whether the combining agent `name` may run here: its review has enough
/// reviewers, and nothing the preflight checks refuses it. Ok says
/// whether it runs unsandboxed.
fn may_combine(
    config: &Config,
    name: &str,
    agent: &rascal_core::config::AgentConfig,
    (repo, base): (&git2::Repository, git2::Oid),
    state: &Path,
) -> Result<bool, PipelineError> {
    if let Some(review) = config.verification.as_ref().and_then(|v| v.review.as_ref()) {
        crate::layers::review::eligible_reviewers(config, review, (name, agent))
            .map_err(|e| PipelineError::Usage(format!("the combined candidate: {e}")))?;
    }
    let launcher = config.main.launcher;
    let problems = crate::pipeline::preflight::problems(
        std::slice::from_ref(&name.to_string()),
        config,
        launcher,
        (repo, base),
        state,
    );
    if let Some(msg) = crate::pipeline::preflight::refusal(&problems) {
        return Err(PipelineError::Usage(
            msg.replace("the run was not started", "the combine was not started"),
        ));
    }
    crate::pipeline::prepare::unsandboxed(launcher, name, agent)
}

/// What the combining agent is given of each chosen candidate: its
/// verdict, its diff and its findings.
fn inputs_of(
    passing: &[&CandidateSummary],
    workdir: &Path,
    base: git2::Oid,
    holdout: &Holdout,
) -> Vec<Input> {
    passing
        .iter()
        .map(|c| Input {
            id: c.id.clone(),
            agent: c.agent.clone(),
            verdict: c.effective_verdict.or(c.verdict).unwrap_or(Verdict::Fail),
            diff: diff_of(workdir, c, base, holdout),
            findings: findings(c),
        })
        .collect()
}

/// Journalled as the pipeline starts: the combined candidate joins the
/// run, and the decision (who, when, from which candidates).
fn announced(info: &CandidateInfo, inputs: &[Input], who: &str, agent: &str) -> Vec<RunEvent> {
    let from: Vec<String> = inputs.iter().map(|i| i.id.clone()).collect();
    vec![
        RunEvent::CandidateAdded {
            candidate: info.clone(),
            combined_from: from.clone(),
        },
        RunEvent::DecisionRecorded {
            decision: Decision::new(
                Some(&info.id),
                DecisionKind::Combine { from },
                who,
                &format!("combining agent `{agent}`"),
            ),
        },
    ]
}

/// A candidate's verified change as a diff against the base (held-out
/// tests stripped); its live workspace when the tree cannot be read.
fn diff_of(origin: &Path, c: &CandidateSummary, base: git2::Oid, holdout: &Holdout) -> String {
    let ws = Path::new(&c.worktree);
    let text = match c.tree.as_deref().map(git2::Oid::from_str) {
        Some(Ok(tree)) => workspace::tree_diff_text(origin, ws, base, tree),
        _ => workspace::diff_text(origin, ws, base),
    };
    holdout.strip_from_diff(&text.unwrap_or_default())
}

/// What rebuilding the run's other candidates needs (a combine's, and a
/// retry's: the candidates not retried, cross-tested again with the new
/// attempt).
pub(crate) struct Others<'a> {
    pub(crate) config: &'a Config,
    pub(crate) run: &'a str,
    pub(crate) state: &'a Path,
    pub(crate) repo: &'a Path,
    pub(crate) base: git2::Oid,
    pub(crate) task: &'a Task,
    pub(crate) holdout: &'a Arc<Holdout>,
}

impl Others<'_> {
    /// Every candidate of `summary` but `except`, as it ended (see
    /// [`Others::outcome`]).
    pub(crate) fn outcomes(
        &self,
        summary: &RunSummary,
        except: Option<&str>,
    ) -> Vec<CandidateOutcome> {
        summary
            .candidates
            .iter()
            .filter(|c| Some(c.id.as_str()) != except)
            .map(|c| self.outcome(c))
            .collect()
    }

    /// Candidate `c` as it ended, for cross-testing and the ranking: its
    /// reports (without its earlier agreement report: cross-testing gives
    /// it a new one), its change read again from its workspace, and — when
    /// it passed — where its checks run.
    pub(crate) fn outcome(&self, c: &CandidateSummary) -> CandidateOutcome {
        let reports: Vec<_> = c
            .reports
            .iter()
            .filter(|r| r.layer != Layer::Compare)
            .cloned()
            .collect();
        let finished_cleanly = c.verdict.is_some()
            && c.escalated.is_none()
            && c.impossible.is_none()
            && c.state != State::Cancelled
            && c.tree.is_some()
            && c.agent_report().is_some_and(|r| r.status != Status::Fail);
        // Its gate verdict, as a fresh run has it before cross-testing:
        // what its own checks said (an earlier disagreement is judged
        // again; overrides stay decisions on the record, as in the
        // original ranking).
        let verdict = if finished_cleanly {
            candidate_verdict(&reports)
        } else {
            Verdict::Fail
        };
        let changes = workspace::comparable_change(
            self.repo,
            Path::new(&c.worktree),
            self.base,
            self.holdout,
        )
        .ok()
        .map(|mut ch| {
            ch.tree = c.tree.clone().unwrap_or_default();
            ch
        });
        let place = match (&changes, finished_cleanly && verdict != Verdict::Fail) {
            (Some(ch), true) => self.place(c, ch),
            _ => None,
        };
        CandidateOutcome {
            id: c.id.clone(),
            attempt: c.attempt,
            verdict,
            escalated: c.escalated.is_some(),
            finished_cleanly,
            reports,
            changes,
            usage: c.usage,
            place,
        }
    }

    /// Where candidate `c`'s checks ran, made again: a fresh copy of its
    /// change tree per command, in its own sandbox (see `candidate`).
    fn place(
        &self,
        c: &CandidateSummary,
        changes: &rascal_core::model::changeset::ChangeSet,
    ) -> Option<Place> {
        let agent = self.config.main.agents.get(&c.agent)?;
        let candidate_dir = rascal_exec::agents::candidate_dir(self.state, self.run, &c.id);
        let mut hide = rascal_exec::exec::confine::private_paths(self.repo, self.state);
        hide.extend(rascal_exec::git::holdout::outside_dirs(&self.task.holdout));
        let copy = Sandboxed {
            origin: self.repo.to_path_buf(),
            workspace: PathBuf::from(&c.worktree),
            tree: c.tree.clone()?,
            run_tree: None,
            scratch: candidate_dir.join("checks"),
            cache: rascal_exec::exec::cache::fresh_for_attempt(&candidate_dir).ok(),
            hide,
            confined: rascal_exec::exec::sandbox::available().is_ok(),
            holdout: self.holdout.clone(),
            with_holdout: false,
            limits: rascal_core::config::limits::Limits::of(agent),
        };
        let launcher = match self.config.main.launcher {
            LauncherKind::Process => "process",
            LauncherKind::Docker => "docker",
            LauncherKind::Kubernetes => "kubernetes",
        };
        let place = check_place(
            self.config,
            launcher,
            (self.run, &c.id, agent),
            copy,
            c.attempt,
        );
        let commands = crate::layers::evidence::test_run::check_commands(
            self.config,
            crate::pipeline::sequence::base_package_json(self.repo, &changes.base).as_deref(),
        );
        Some(crate::layers::evidence::base_defined::checks_from_base(
            &place,
            changes,
            &commands,
            &self.task.allow_test_changes,
        ))
    }
}

#[cfg(test)]
mod tests;
