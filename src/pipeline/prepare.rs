//! A run made ready before anything is launched: config and task from the
//! base commit, candidates and their workspaces, the store. Setup errors
//! (exit 2) come from here.

use crate::config::spec::Task;
use crate::config::Config;
use crate::git::workspace::{self};
use crate::layers::compare::Contender;
use crate::model::event::CandidateInfo;
use crate::pipeline::request::{PipelineError, RunRequest};
use crate::pipeline::resume::Resumption;
use crate::pipeline::run_id::new_run_id;
use crate::store::Store;
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
    pub candidates: Vec<(CandidateInfo, crate::config::AgentConfig)>,
    /// The task with its criteria (Layer 3); `task_source` is None for a
    /// bare command-line instruction.
    pub task: Arc<Task>,
    pub task_source: Option<String>,
    pub(crate) request: RunRequest,
    pub(crate) store: Store,
    /// Set by `rascal attach`: the run already started; these candidates
    /// resume where the journal stopped (see src/reattach.rs).
    pub(crate) resume: Option<Resumption>,
    /// Set by `rascal retry`: one finished candidate goes again with a
    /// human's feedback; the others' results stand.
    pub(crate) retry: Option<RetryStart>,
}

/// A human's retry of one candidate of a finished run.
pub(crate) struct RetryStart {
    pub(crate) candidate: String,
    pub(crate) attempt: u32,
    pub(crate) feedback: String,
    /// The other candidates, as they ended, for the new ranking.
    pub(crate) others: Vec<Contender>,
}

impl PreparedRun {
    /// The rest of an interrupted run (src/reattach.rs).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn resumed(
        run: String,
        config: Config,
        base: git2::Oid,
        repo_dir: PathBuf,
        state: PathBuf,
        candidates: Vec<(CandidateInfo, crate::config::AgentConfig)>,
        request: RunRequest,
        store: Store,
        resume: Resumption,
    ) -> PreparedRun {
        // The task as the journal recorded it, else the bare instruction.
        let task = resume
            .task
            .clone()
            .unwrap_or_else(|| Task::from_instruction(request.instruction.clone()));
        PreparedRun {
            run,
            config: Arc::new(config),
            base,
            repo_dir,
            state,
            candidates,
            task: Arc::new(task),
            task_source: None,
            request,
            store,
            resume: Some(resume),
            retry: None,
        }
    }
}

impl PreparedRun {
    /// One candidate of a finished run again, with a human's feedback
    /// (src/retry.rs).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn retried(
        run: String,
        config: Config,
        base: git2::Oid,
        repo_dir: PathBuf,
        state: PathBuf,
        candidate: (CandidateInfo, crate::config::AgentConfig),
        task: Task,
        request: RunRequest,
        store: Store,
        attempt: u32,
        feedback: String,
        others: Vec<Contender>,
    ) -> PreparedRun {
        let id = candidate.0.id.clone();
        PreparedRun {
            run,
            config: Arc::new(config),
            base,
            repo_dir,
            state,
            candidates: vec![candidate],
            task: Arc::new(task),
            task_source: None,
            request,
            store,
            resume: None,
            retry: Some(RetryStart {
                candidate: id,
                attempt,
                feedback,
                others,
            }),
        }
    }
}

/// Apply a task's permissions to the repository's (narrowing only).
pub(crate) fn narrow_permissions(config: &mut Config, task: &Task) {
    if let Some(scope) = &task.permissions {
        let repo_perms = config.permissions.clone().unwrap_or_default();
        config.permissions = Some(repo_perms.narrow(scope));
    }
}

pub fn prepare(mut req: RunRequest) -> Result<PreparedRun, PipelineError> {
    let repo = workspace::open(&req.repo)?;
    let base = workspace::resolve(&repo, &req.base)?;
    let config = crate::git::base::load_config(&repo, base)?;
    let (mut task, mut task_source) = crate::git::base::load_task(
        &repo,
        base,
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
            crate::layers::review::eligible_reviewers(&config, review, (n, &config.main.agents[n]))
                .map_err(PipelineError::Usage)?;
        }
    }
    let state = workspace::state_dir(&repo);
    let mut store = Store::open(&Store::path_in(&state))?;
    store.mark_interrupted()?;
    let _ = workspace::prune_worktrees(&repo);
    let run = new_run_id(&store)?;
    let mut candidates = Vec::new();
    let mut used = std::collections::BTreeMap::<String, usize>::new();
    for n in &names {
        let count = used.entry(n.clone()).or_default();
        *count += 1;
        let id = if *count == 1 {
            n.clone()
        } else {
            format!("{n}-{count}")
        };
        let worktree = workspace::create_worktree(&repo, base, &run, &id)?;
        let agent = config.main.agents[n].clone();
        candidates.push((
            CandidateInfo {
                id,
                agent: n.clone(),
                runtime: format!("{:?}", agent.runtime).to_lowercase(),
                worktree: worktree.to_string_lossy().into_owned(),
            },
            agent,
        ));
    }
    Ok(PreparedRun {
        run,
        config: Arc::new(config),
        base,
        repo_dir: workspace::workdir(&repo),
        state,
        candidates,
        task: Arc::new(task),
        task_source,
        request: req,
        store,
        resume: None,
        retry: None,
    })
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}
