//! What a run is asked to do, how it ended, and the errors that stop it
//! before anything is launched.

use crate::store::StoreError;
use rascal_core::config::{ConfigError, LauncherKind};
use rascal_core::model::verdict::Verdict;
use rascal_exec::git::workspace::WorkspaceError;
use std::path::PathBuf;
use std::time::Duration;

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// Any directory inside the target repository.
    pub repo: PathBuf,
    /// The base ref (default HEAD).
    pub base: String,
    pub instruction: String,
    /// Agent names from `.rascal/config.yaml`; empty = the strategy's agents.
    pub agents: Vec<String>,
    /// The rascal executable (scripted agents run through it).
    pub rascal_exe: PathBuf,
    /// Overrides every agent's timeout.
    pub timeout: Option<Duration>,
    /// `--spec NAME`: the task is `.rascal/specs/NAME.yaml` at the base commit.
    pub spec: Option<String>,
    /// `--issue FILE.md`: the task is a Markdown issue body.
    pub issue: Option<PathBuf>,
    /// Candidates per agent (overrides `strategy.n`).
    pub n: Option<u32>,
    /// Headless auto policy: select the comparator's pick when it passes.
    pub auto: bool,
    /// `--strict`: a run whose best verdict is WARN exits 1 (for CI).
    pub strict: bool,
    /// Overrides `launcher:` of .rascal/config.yaml.
    pub launcher: Option<LauncherKind>,
    /// `--allow-path` / `--deny-path`: narrows the permissions for this run.
    pub scope: Option<rascal_core::config::PermissionsConfig>,
    /// `--config-from-worktree`: read `.rascal/` from the user's working
    /// tree instead of the base commit (recorded in the run).
    pub config_from_worktree: bool,
    /// The repository is removed when the run ends (`demo` without
    /// `--keep`): no `replay:` line, it could not work.
    pub throwaway: bool,
    /// How fast scripted agents' built-in scenarios play: watchable only
    /// for `rascal demo` (without `--fast`), never for a user's `run`.
    pub tempo: rascal_core::config::scenario::Tempo,
    /// Plan, then execute (`--plan`, `plan: true` in the spec,
    /// `strategy.plan: true`): how the planner's proposal is approved.
    /// The caller says how a plan would be approved here; `prepare`
    /// settles whether there is one (`plan_wanted`, the task, the config)
    /// and turns it `Off` when not.
    pub plan: PlanGate,
    /// `--plan` was given.
    pub plan_wanted: bool,
    /// `--allow-vacuous`: `--approve` accepts criteria the unchanged base
    /// already meets (they still never count as evidence).
    pub allow_vacuous: bool,
}

/// Who approves a plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PlanGate {
    /// No plan: the candidates start at once.
    #[default]
    Off,
    /// Headless without `--approve`: the proposal is printed and the run
    /// ends needing a human (exit 3).
    Print,
    /// `--approve`: the proposal is accepted as it is (recorded as such).
    Approve,
    /// The TUI: the human approves (or edits) it on the plan screen.
    Ask,
}

impl RunRequest {
    pub fn new(repo: PathBuf, instruction: &str, agents: Vec<String>, rascal_exe: PathBuf) -> Self {
        RunRequest {
            repo,
            base: "HEAD".into(),
            instruction: instruction.to_string(),
            agents,
            rascal_exe,
            ..RunRequest::default()
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error("{0}")]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Workspace(#[from] WorkspaceError),
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("{0}")]
    Usage(String),
}

/// A caller that reports errors as text (the TUI's decision callback)
/// keeps using `?`: the message is the error's own.
impl From<PipelineError> for String {
    fn from(e: PipelineError) -> Self {
        e.to_string()
    }
}

/// The outcome of a finished run.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub run: String,
    pub verdict: Verdict,
    pub exit_code: i32,
}
