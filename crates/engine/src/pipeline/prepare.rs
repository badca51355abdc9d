//! A run made ready before anything is launched: config and task from the
//! base commit, candidates and their workspaces, the store. Setup errors
//! (exit 2) come from here.

use crate::pipeline::candidate::{Brief, CandidateOutcome};
use crate::pipeline::request::{PipelineError, RunRequest};
use crate::pipeline::resume::Resumption;
use crate::pipeline::run_id::new_run_id;
use crate::store::Store;
use rascal_core::config::spec::Task;
use rascal_core::config::{Config, LauncherKind};
use rascal_core::model::event::{CandidateInfo, RunEvent, WorkingTree};
use rascal_core::model::verdict::Verdict;
use rascal_exec::git::base::ConfigSource;
use rascal_exec::git::workspace::{self};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// A prepared run: config loaded, worktrees made, store opened. Split from
/// `execute` so setup errors (exit 2) come before anything is launched.
pub struct PreparedRun {
    pub run: String,
    pub config: Arc<Config>,
    pub base: git2::Oid,
    pub repo_dir: PathBuf,
    pub state: PathBuf,
    pub candidates: Vec<(CandidateInfo, rascal_core::config::AgentConfig)>,
    /// The task with its criteria (Layer 3); `task_source` is None for a
    /// bare command-line instruction.
    pub task: Arc<Task>,
    pub task_source: Option<String>,
    /// How the user's working tree stood (journalled with the task).
    pub worktree: WorkingTree,
    pub(crate) request: RunRequest,
    pub(crate) store: Store,
    /// Set by `rascal attach`: the run already started; these candidates
    /// resume where the journal stopped (see src/reattach.rs).
    pub(crate) resume: Option<Resumption>,
    /// Set by `rascal retry`: one finished candidate goes again with a
    /// human's feedback; the others' results stand.
    pub(crate) retry: Option<RetryStart>,
    /// Set by `rascal combine`: the combining agent's candidate joins the
    /// finished run; the others' results stand.
    pub(crate) combine: Option<CombineStart>,
}

/// A human's retry of one candidate of a finished run.
pub(crate) struct RetryStart {
    pub(crate) candidate: String,
    pub(crate) attempt: u32,
    pub(crate) feedback: String,
    /// The other candidates, as they ended: cross-tested again with the
    /// new attempt, then ranked with it.
    pub(crate) others: Vec<CandidateOutcome>,
}

/// What a combine (see `combine`) adds to a finished run: its candidate
/// and brief, and the run's other candidates as they ended (for
/// cross-testing and the new ranking).
pub(crate) struct CombineStart {
    pub(crate) candidate: String,
    pub(crate) brief: Arc<Brief>,
    pub(crate) others: Vec<CandidateOutcome>,
    /// The other candidates' workspaces (the judge reads their diffs).
    pub(crate) worktrees: BTreeMap<String, PathBuf>,
    /// Journalled first: the candidate joins the run, and the decision
    /// (who, when, from which candidates).
    pub(crate) announce: Vec<RunEvent>,
    /// The other candidates' verdicts as the journal has them.
    pub(crate) recorded: BTreeMap<String, Verdict>,
    /// What the combined change is traced to: its sources' diffs.
    pub(crate) provenance: crate::pipeline::provenance::Sources,
}

/// What every kind of prepared run has: the run, its config and task from
/// the base commit, its candidates and the store.
pub(crate) struct Setup {
    pub(crate) run: String,
    pub(crate) config: Config,
    pub(crate) base: git2::Oid,
    pub(crate) repo_dir: PathBuf,
    pub(crate) state: PathBuf,
    pub(crate) candidates: Vec<(CandidateInfo, rascal_core::config::AgentConfig)>,
    pub(crate) task: Task,
    pub(crate) request: RunRequest,
    pub(crate) store: Store,
}

impl PreparedRun {
    /// Whether the run's end prints a `replay:` line: every run but one
    /// whose repository is removed when it ends (`demo` without `--keep`).
    pub fn replays(&self) -> bool {
        !self.request.throwaway
    }

    fn from_setup(s: Setup, task_source: Option<String>) -> PreparedRun {
        PreparedRun {
            run: s.run,
            config: Arc::new(s.config),
            base: s.base,
            repo_dir: s.repo_dir,
            state: s.state,
            candidates: s.candidates,
            task: Arc::new(s.task),
            task_source,
            worktree: WorkingTree::default(),
            request: s.request,
            store: s.store,
            resume: None,
            retry: None,
            combine: None,
        }
    }

    /// A new run (`rascal run`).
    pub(crate) fn fresh(setup: Setup, task_source: Option<String>) -> PreparedRun {
        PreparedRun::from_setup(setup, task_source)
    }

    /// The rest of an interrupted run (`rascal attach`, see `attach`).
    pub(crate) fn resumed(setup: Setup, resume: Resumption) -> PreparedRun {
        let mut p = PreparedRun::from_setup(setup, None);
        p.resume = Some(resume);
        p
    }

    /// One candidate of a finished run again, with a human's feedback
    /// (see `retry`).
    pub(crate) fn retried(setup: Setup, start: RetryStart) -> PreparedRun {
        let mut p = PreparedRun::from_setup(setup, None);
        p.retry = Some(start);
        p
    }

    /// The combining agent's candidate added to a finished run (see
    /// `combine`).
    pub(crate) fn combined(setup: Setup, start: CombineStart) -> PreparedRun {
        let mut p = PreparedRun::from_setup(setup, None);
        p.combine = Some(start);
        p
    }
}

/// Apply a task's permissions to the repository's (narrowing only).
pub(crate) fn narrow_permissions(config: &mut Config, task: &Task) {
    if let Some(scope) = &task.permissions {
        let repo_perms = config.permissions.clone().unwrap_or_default();
        config.permissions = Some(repo_perms.narrow(scope));
    }
}

/// The agents to run, one name per candidate: the request's, else the
/// strategy's, each `n` times. Refused (before anything is created) when
/// none is left, one is not defined, cannot be reviewed, or would run
/// without the sandbox its launcher needs.
fn agents_to_run(req: &RunRequest, config: &Config) -> Result<Vec<String>, PipelineError> {
    let mut names = if req.agents.is_empty() {
        config.main.strategy.agents.clone()
    } else {
        req.agents.clone()
    };
    let per_agent = req.n.or(config.main.strategy.n).unwrap_or(1).clamp(1, 16) as usize;
    if per_agent > 1 {
        names = names
            .iter()
            .flat_map(|n| std::iter::repeat_n(n.clone(), per_agent))
            .collect();
    }
    if names.is_empty() && config.main.agents.is_empty() {
        return Err(PipelineError::Usage(
            "no agent to run: .rascal/config.yaml at the base commit defines none\n  hint: `rascal init` writes a commented .rascal/ for this repository (with a scripted agent that needs no API key); commit it, then run again".into(),
        ));
    }
    if names.is_empty() {
        return Err(PipelineError::Usage(format!(
            "no agent to run\n  hint: pass --agent NAME (defined: {}) or set `strategy: {{agents: [...]}}` in .rascal/config.yaml",
            list_or_none(&config.agent_names())
        )));
    }
    for n in &names {
        if !config.main.agents.contains_key(n) {
            return Err(PipelineError::Usage(format!(
                "unknown agent `{n}`\n  hint: agents defined in .rascal/config.yaml at the base commit: {}",
                list_or_none(&config.agent_names())
            )));
        }
    }
    if let Some(review) = config.verification.as_ref().and_then(|v| v.review.as_ref()) {
        for n in &names {
            crate::layers::review::eligible_reviewers(config, review, (n, &config.main.agents[n]))
                .map_err(|e| PipelineError::Usage(e.to_string()))?;
        }
    }
    let launcher = req.launcher.unwrap_or(config.main.launcher);
    // Refuse before anything is created when a sandbox is missing.
    for n in &names {
        unsandboxed(launcher, n, &config.main.agents[n])?;
    }
    Ok(names)
}

/// A workspace at the base for each agent of `names` (the second of one
/// agent is `agent-2`, …), and each candidate as the run announces it.
fn create_candidates(
    names: &[String],
    config: &Config,
    launcher: LauncherKind,
    (repo, base): (&git2::Repository, git2::Oid),
    (state, run): (&std::path::Path, &str),
    holdout: &rascal_exec::git::holdout::Holdout,
) -> Result<Vec<(CandidateInfo, rascal_core::config::AgentConfig)>, PipelineError> {
    let mut candidates = Vec::new();
    let mut used = std::collections::BTreeMap::<String, usize>::new();
    for n in names {
        let count = used.entry(n.clone()).or_default();
        *count += 1;
        let id = if *count == 1 {
            n.clone()
        } else {
            format!("{n}-{count}")
        };
        let worktree = workspace::create_workspace(
            repo,
            base,
            &workspace::workspace_path(state, run, &id),
            holdout,
        )?;
        let agent = config.main.agents[n].clone();
        let unsandboxed = unsandboxed(launcher, n, &agent)?;
        candidates.push((
            CandidateInfo {
                id,
                agent: n.clone(),
                runtime: format!("{:?}", agent.runtime).to_lowercase(),
                worktree: worktree.to_string_lossy().into_owned(),
                unsandboxed,
            },
            agent,
        ));
    }
    Ok(candidates)
}

pub fn prepare(mut req: RunRequest) -> Result<PreparedRun, PipelineError> {
    let repo = workspace::open(&req.repo)?;
    let base = workspace::resolve(&repo, &req.base)?;
    let worktree = working_tree(&repo, base, req.config_from_worktree);
    let workdir = workspace::workdir(&repo);
    let source = if req.config_from_worktree {
        ConfigSource::WorkingTree(&workdir)
    } else {
        ConfigSource::Base(&repo, base)
    };
    let config = rascal_exec::git::base::load_config_from(source)?;
    let (mut task, mut task_source) = rascal_exec::git::base::load_task(
        source,
        &req.instruction,
        req.spec.as_deref(),
        req.issue.as_deref(),
    )?;
    req.instruction = task.instruction.clone();
    // Dynamic scoping: the task's (and the command line's) permissions
    // narrow the repository's; they can never widen them. The command
    // line's scope joins the task's, so the journalled task carries it and a
    // retry or reattach applies the same narrowing.
    if let Some(scope) = &req.scope {
        task.permissions = Some(match &task.permissions {
            Some(p) => p.narrow(scope),
            None => scope.clone(),
        });
        task_source.get_or_insert_with(|| "command line".into());
    }
    let mut config = config;
    narrow_permissions(&mut config, &task);
    settle_plan(&mut req, &task, &config)?;
    refuse_criteria_that_cannot_run(&task, &config, &repo, base)?;
    let names = agents_to_run(&req, &config)?;
    let launcher = req.launcher.unwrap_or(config.main.launcher);
    // What doctor would say about these agents, before anything is
    // recorded: a run that cannot work is refused here.
    let problems = crate::pipeline::preflight::problems(
        &names,
        &config,
        launcher,
        (&repo, base),
        &workspace::files_dir(&repo),
    );
    if let Some(msg) = crate::pipeline::preflight::refusal(&problems) {
        return Err(PipelineError::Usage(msg));
    }
    let holdout = rascal_exec::git::holdout::Holdout::resolve(&repo, base, &task.holdout)
        .map_err(|e| PipelineError::Usage(format!("{e}\n  hint: `holdout:` in the task's spec names files of the base commit or a directory outside the repository")))?;
    let mut store = crate::store::project::store_at(&repo)?;
    store.mark_interrupted()?;
    // Workspaces and run files live outside the repository, in a
    // directory that names its repository (for `gc --orphans`).
    let state = workspace::files_dir(&repo);
    workspace::mark_owner(&repo);
    let run = new_run_id(&store)?;
    let candidates = create_candidates(
        &names,
        &config,
        launcher,
        (&repo, base),
        (&state, &run),
        &holdout,
    )?;
    let mut prepared = PreparedRun::fresh(
        Setup {
            run,
            config,
            base,
            repo_dir: workspace::workdir(&repo),
            state,
            candidates,
            task,
            request: req,
            store,
        },
        task_source,
    );
    prepared.worktree = worktree;
    Ok(prepared)
}

/// Whether the run is planned (`--plan`, `plan: true` in the task,
/// `strategy.plan: true`); a planned run needs a planner (`plan:` in
/// .rascal/verification.yaml), else it is refused here (exit 2).
/// A task whose `test` or `holdout` criteria have no test command to run
/// with (none configured, none known from the base's files) is refused
/// before any agent starts: every candidate would FAIL them afterwards.
fn refuse_criteria_that_cannot_run(
    task: &Task,
    config: &Config,
    repo: &git2::Repository,
    base: git2::Oid,
) -> Result<(), PipelineError> {
    use rascal_core::config::spec::CriterionKind;
    let needs: Vec<&str> = task
        .acceptance_criteria
        .iter()
        .filter(|c| matches!(c.kind, CriterionKind::Test | CriterionKind::Holdout))
        .map(|c| c.description.as_str())
        .collect();
    if needs.is_empty() {
        return Ok(());
    }
    let workdir = workspace::workdir(repo);
    let (template, _) = crate::layers::criteria::command_settings(config, &workdir, base);
    if template.is_some() {
        return Ok(());
    }
    Err(PipelineError::Usage(format!(
        "the task's criteria need a test command to run ({}), and none is set or known: the base has no Cargo.toml, go.mod, Python project or test files, or package.json\n  hint: set `criteria: {{ test_command: \"… {{check}}\" }}` in .rascal/verification.yaml (and commit it)",
        rascal_core::text::first_of(&needs.iter().map(|d| format!("`{d}`")).collect::<Vec<_>>(), 3)
    )))
}

fn settle_plan(req: &mut RunRequest, task: &Task, config: &Config) -> Result<(), PipelineError> {
    let wanted = req.plan_wanted || task.plan || config.main.strategy.plan;
    if !wanted && req.plan == crate::pipeline::PlanGate::Approve {
        return Err(PipelineError::Usage(
            "--approve accepts a planner's proposal, but this run is not planned\n  hint: add --plan (or `plan: true` in the spec, `strategy.plan: true` in .rascal/config.yaml), or leave out --approve".into(),
        ));
    }
    if !wanted || req.plan == crate::pipeline::PlanGate::Off {
        req.plan = crate::pipeline::PlanGate::Off;
        return Ok(());
    }
    if config
        .verification
        .as_ref()
        .and_then(|v| v.plan.as_ref())
        .is_none()
    {
        return Err(PipelineError::Usage(format!(
            "the run asks for a plan (--plan, `plan: true` in the spec or `strategy.plan: true`) but {} names no planner\n  hint: add `plan: {{ agent: NAME, timeout: 5m }}` to {} (NAME: an agent of .rascal/config.yaml)",
            rascal_core::config::VERIFICATION_FILE,
            rascal_core::config::VERIFICATION_FILE
        )));
    }
    Ok(())
}

/// The config a run that goes on (`rascal retry`, `rascal attach`) uses:
/// read from where the run first read it — the working tree when it was
/// started with `--config-from-worktree` (as the tree is now), else `base`.
pub(crate) fn config_as_recorded(
    repo: &git2::Repository,
    base: git2::Oid,
    events: &[rascal_core::model::event::RunEvent],
) -> Result<Config, PipelineError> {
    let from_worktree = events.iter().any(|e| {
        matches!(e, rascal_core::model::event::RunEvent::TaskLoaded { worktree, .. } if worktree.config_from_worktree)
    });
    let workdir = workspace::workdir(repo);
    let source = if from_worktree {
        ConfigSource::WorkingTree(&workdir)
    } else {
        ConfigSource::Base(repo, base)
    };
    Ok(rascal_exec::git::base::load_config_from(source)?)
}

/// How the working tree of `repo` stands against `base`: `.rascal/`
/// differences, whether `.rascal/` is read from it, other uncommitted
/// changes.
pub fn working_tree(repo: &git2::Repository, base: git2::Oid, from_worktree: bool) -> WorkingTree {
    if repo.is_bare() {
        return WorkingTree::default();
    }
    let uncommitted = rascal_exec::git::base::uncommitted(repo);
    WorkingTree {
        config_from_worktree: from_worktree,
        config_changes: rascal_exec::git::base::config_changes(repo, base),
        uncommitted: uncommitted.len(),
        uncommitted_files: uncommitted
            .into_iter()
            .take(rascal_core::model::event::NAMED_UNCOMMITTED)
            .collect(),
    }
}

/// Whether agent `name` runs unsandboxed: containers are a sandbox; the
/// process launcher uses bubblewrap unless the agent says `sandbox: none`.
/// Without bubblewrap, only rascal's own scripted agents run (marked
/// UNSANDBOXED); any other agent refuses to start.
pub(crate) fn unsandboxed(
    launcher: LauncherKind,
    name: &str,
    agent: &rascal_core::config::AgentConfig,
) -> Result<bool, PipelineError> {
    if launcher != LauncherKind::Process {
        return Ok(false);
    }
    if agent.sandbox == Some(rascal_core::config::SandboxKind::None) {
        return Ok(true);
    }
    match rascal_exec::exec::sandbox::available() {
        Ok(_) => Ok(false),
        Err(_) if agent.runtime == rascal_core::config::RuntimeKind::Scripted => Ok(true),
        Err(why) => Err(PipelineError::Usage(format!("agent `{name}`: {why}"))),
    }
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}
