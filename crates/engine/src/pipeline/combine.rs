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

use crate::config::spec::Task;
use crate::config::{Config, LauncherKind};
use crate::exec::place::{Place, Sandboxed};
use crate::git::holdout::Holdout;
use crate::git::workspace;
use crate::layers::compare::TEST_INTEGRITY;
use crate::model::decision::{Decision, DecisionKind};
use crate::model::event::{candidate_verdict, CandidateInfo, RunEvent};
use crate::model::state::State;
use crate::model::summary::{CandidateSummary, RunSummary};
use crate::model::verdict::{Layer, Severity, Status, Verdict};
use crate::pipeline::candidate::{check_place, Brief, CandidateOutcome};
use crate::pipeline::combine_brief::{self, Input, Material};
use crate::pipeline::prepare::{CombineStart, Setup};
use crate::pipeline::{PipelineError, PreparedRun, RunRequest};
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
            Some(c) => format!("select it (`rascal select {run} {}`), or retry the others with feedback (`rascal retry`)", crate::text::inert::shell_word(&c.id)),
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
                    crate::text::cut(&i.message.replace('\n', " "), 500)
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
    let agent = config
        .main
        .agents
        .get(&combine.agent)
        .cloned()
        .ok_or_else(|| {
            PipelineError::Usage(format!(
                "the combining agent `{}` is not in .rascal/config.yaml",
                combine.agent
            ))
        })?;
    let task = events
        .iter()
        .find_map(|e| match e {
            RunEvent::TaskLoaded { task, .. } => Some((**task).clone()),
            _ => None,
        })
        .unwrap_or_else(|| Task::from_instruction(summary.instruction.clone()));
    crate::pipeline::prepare::narrow_permissions(&mut config, &task);
    if let Some(review) = config.verification.as_ref().and_then(|v| v.review.as_ref()) {
        crate::layers::review::eligible_reviewers(&config, review, (&combine.agent, &agent))
            .map_err(|e| PipelineError::Usage(format!("the combined candidate: {e}")))?;
    }
    let launcher = config.main.launcher;
    let problems = crate::pipeline::preflight::problems(
        std::slice::from_ref(&combine.agent),
        &config,
        launcher,
        (&repo, base),
        &state,
    );
    if let Some(msg) = crate::pipeline::preflight::refusal(&problems) {
        return Err(PipelineError::Usage(
            msg.replace("the run was not started", "the combine was not started"),
        ));
    }
    let unsandboxed = crate::pipeline::prepare::unsandboxed(launcher, &combine.agent, &agent)?;
    let id = combined_name(&summary);
    let info = CandidateInfo {
        id: id.clone(),
        agent: combine.agent.clone(),
        runtime: format!("{:?}", agent.runtime).to_lowercase(),
        worktree: workspace::workspace_path(&state, run, &id)
            .to_string_lossy()
            .into_owned(),
        unsandboxed,
    };
    let budgets = crate::pipeline::budget::Budgets::new(
        &config,
        &[(info.clone(), agent.clone())],
        Some(&summary),
    );
    if let Some(why) = budgets.refusal(&id, 1) {
        return Err(PipelineError::Usage(format!(
            "combine refused: {why}\n  hint: budgets are set in .rascal/config.yaml (`budget:` for the run, `agents.{}.budget` for each of its candidates); start a new run to spend more",
            combine.agent
        )));
    }
    let holdout = Arc::new(Holdout::resolve(&repo, base, &task.holdout).unwrap_or_default());
    let workdir = workspace::workdir(&repo);
    let inputs: Vec<Input> = passing
        .iter()
        .map(|c| Input {
            id: c.id.clone(),
            agent: c.agent.clone(),
            verdict: c.effective_verdict.or(c.verdict).unwrap_or(Verdict::Fail),
            diff: diff_of(&workdir, c, base, &holdout),
            findings: findings(c),
        })
        .collect();
    let from: Vec<String> = inputs.iter().map(|i| i.id.clone()).collect();
    let provenance = crate::pipeline::provenance::Sources {
        diffs: inputs
            .iter()
            .map(|i| (i.id.clone(), i.diff.clone()))
            .collect(),
        worktree: PathBuf::from(&info.worktree),
        holdout: holdout.clone(),
        allow_glue: combine.allow_new == crate::config::verification::AllowNew::Glue,
    };
    let material = Material {
        task: &task,
        inputs: &inputs,
        agreement: summary.ranking.as_ref().and_then(|r| r.agreement.as_ref()),
    };
    let dir = crate::agents::artifacts_dir(&state, run, &id).join(crate::exec::env::COMBINE_DIR);
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
    let worktrees = summary
        .candidates
        .iter()
        .map(|c| (c.id.clone(), PathBuf::from(&c.worktree)))
        .collect();
    // Everything that can refuse has: now the workspace, the material and
    // the record.
    workspace::create_workspace(&repo, base, Path::new(&info.worktree), &holdout)?;
    combine_brief::write(&dir, &material).map_err(|e| {
        PipelineError::Usage(format!(
            "could not write the combining agent's material in {}: {e}",
            dir.display()
        ))
    })?;
    let brief = Arc::new(Brief {
        prompt: combine_brief::prompt(&material),
        inputs: dir,
    });
    store.resume_run(run)?;
    let info_added = info.clone();
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
        CombineStart {
            announce: vec![
                RunEvent::CandidateAdded {
                    candidate: info_added,
                    combined_from: from.clone(),
                },
                RunEvent::DecisionRecorded {
                    decision: Decision::new(
                        Some(&id),
                        DecisionKind::Combine { from },
                        who,
                        &format!("combining agent `{}`", combine.agent),
                    ),
                },
            ],
            candidate: id,
            brief,
            recorded: summary
                .candidates
                .iter()
                .filter_map(|c| Some((c.id.clone(), c.verdict?)))
                .collect(),
            others: outcomes,
            worktrees,
            provenance,
        },
    ))
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
        changes: &crate::model::changeset::ChangeSet,
    ) -> Option<Place> {
        let agent = self.config.main.agents.get(&c.agent)?;
        let candidate_dir = crate::agents::candidate_dir(self.state, self.run, &c.id);
        let mut hide = crate::exec::confine::private_paths(self.repo, self.state);
        hide.extend(crate::git::holdout::outside_dirs(&self.task.holdout));
        let copy = Sandboxed {
            origin: self.repo.to_path_buf(),
            workspace: PathBuf::from(&c.worktree),
            tree: c.tree.clone()?,
            run_tree: None,
            scratch: candidate_dir.join("checks"),
            cache: crate::exec::cache::fresh_for_attempt(&candidate_dir).ok(),
            hide,
            confined: crate::exec::sandbox::available().is_ok(),
            holdout: self.holdout.clone(),
            with_holdout: false,
            limits: crate::config::limits::Limits::of(agent),
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
mod tests {
    use super::*;
    use crate::model::ranking::{Ranked, Ranking};

    fn cand(id: &str, verdict: Verdict) -> CandidateSummary {
        let mut s = RunSummary::new();
        s.apply(&RunEvent::RunStarted {
            run: "r".into(),
            repo: String::new(),
            base: String::new(),
            instruction: String::new(),
            launcher: "process".into(),
            candidates: vec![CandidateInfo {
                id: id.into(),
                agent: id.into(),
                runtime: "command".into(),
                worktree: String::new(),
                unsandboxed: false,
            }],
        });
        let mut agent = crate::model::verdict::Report::new(Layer::Agent, "agent");
        if verdict == Verdict::Fail {
            agent.issues.push(crate::model::verdict::Issue::new(
                "agent/failed",
                Severity::Error,
                "exit 1",
            ));
        }
        s.apply(&RunEvent::ReportLanded {
            candidate: id.into(),
            report: Box::new(agent.finish()),
        });
        s.apply(&RunEvent::CandidateFinished {
            candidate: id.into(),
            verdict,
            reason: None,
            files: 1,
            lines: 1,
            tree: Some("ab".into()),
            cancelled: false,
        });
        s.candidates.remove(0)
    }

    fn run_of(cands: Vec<CandidateSummary>, order: &[&str]) -> RunSummary {
        let mut s = RunSummary::new();
        s.run = "r-1".into();
        s.candidates = cands;
        s.ranking = Some(Ranking {
            positions: order
                .iter()
                .enumerate()
                .map(|(i, c)| Ranked {
                    position: i + 1,
                    candidate: c.to_string(),
                    verdict: Verdict::Pass,
                    layers_passed: 0,
                    criteria_met: 0,
                    consensus: 1.0,
                    lines: 0,
                    files: 0,
                    reason: String::new(),
                    usage: None,
                    agreement: None,
                })
                .collect(),
            ids: Vec::new(),
            matrix: Vec::new(),
            pick: None,
            judge: None,
            agreement: None,
            contested: None,
            unseparated: Vec::new(),
            probes: None,
        });
        s
    }

    #[test]
    fn the_passing_candidates_in_the_rankings_order_at_most_top() {
        let s = run_of(
            vec![
                cand("a", Verdict::Pass),
                cand("b", Verdict::Fail),
                cand("c", Verdict::Warn),
                cand("d", Verdict::Pass),
            ],
            &["d", "c", "a", "b"],
        );
        let ids = |v: Vec<&CandidateSummary>| v.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(chosen(&s, 3)), ["d", "c", "a"]);
        assert_eq!(ids(chosen(&s, 2)), ["d", "c"]);
        assert!(too_few("r-1", &chosen(&s, 2)).is_none());
    }

    #[test]
    fn fewer_than_two_passing_is_refused_saying_why() {
        let s = run_of(
            vec![cand("a", Verdict::Pass), cand("b", Verdict::Fail)],
            &["a", "b"],
        );
        let why = too_few("r-1", &chosen(&s, 3)).unwrap();
        assert!(why.contains("only `a` passed"), "{why}");
        assert!(
            why.contains("combining one candidate is pointless"),
            "{why}"
        );
        let none = run_of(vec![cand("b", Verdict::Fail)], &["b"]);
        let why = too_few("r-1", &chosen(&none, 3)).unwrap();
        assert!(why.contains("no candidate passed"), "{why}");
    }

    #[test]
    fn a_second_combine_gets_a_name_of_its_own() {
        let s = run_of(vec![cand("a", Verdict::Pass)], &["a"]);
        assert_eq!(combined_name(&s), "combined");
        let s = run_of(vec![cand("combined", Verdict::Pass)], &["combined"]);
        assert_eq!(combined_name(&s), "combined-2");
    }
}
