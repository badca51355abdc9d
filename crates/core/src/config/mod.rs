//! `.rascal/*.yaml`: schemas, strict loading from the BASE commit (never the
//! candidate's worktree, so an agent cannot weaken its own checks), and
//! errors that name file, line, column and what is allowed.

/// Inside a `serde::de::Visitor` of a setting written as text: the
/// shapes it is not (`true`, nothing, a list, a mapping) refused with
/// `$got(what)`, the message naming what was found in the user's words —
/// raised where the value is, so the error points at it.
macro_rules! refuse_other_shapes {
    ($value:ty, $got:expr) => {
        fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<$value, E> {
            Err(E::custom($got(&format!("`{b}`"))))
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<$value, E> {
            Err(E::custom($got("nothing (an empty value)")))
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, _: A) -> Result<$value, A::Error> {
            Err(serde::de::Error::custom($got("a list")))
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, _: A) -> Result<$value, A::Error> {
            Err(serde::de::Error::custom($got(
                "a mapping (`key: value` lines)",
            )))
        }
    };
}

pub(crate) mod budget;
pub mod compare;
pub mod container;
pub mod duration;
pub mod guardrails;
pub mod kubernetes;
pub mod limits;
pub mod network;
pub mod notify;
pub mod permissions;
pub mod scenario;
pub mod secrets;
pub mod spec;
pub mod theme;
pub mod verification;
pub mod workspace;
pub mod yaml;

pub use budget::Budget;
pub use duration::Dur;
pub use guardrails::{Guardrail, GuardrailKind, Scope};
pub use permissions::PermissionsConfig;
pub use verification::{VerificationConfig, VERIFICATION_FILE};

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

pub const CONFIG_FILE: &str = ".rascal/config.yaml";
pub const GUARDRAILS_FILE: &str = ".rascal/guardrails.yaml";
pub const PERMISSIONS_FILE: &str = ".rascal/permissions.yaml";

/// A config problem: what, where, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
    pub hint: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        write!(f, ": {}", self.message)?;
        if !self.hint.is_empty() {
            write!(f, "\n  hint: {}", self.hint)?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

/// How agents are launched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LauncherKind {
    #[default]
    Process,
    Docker,
    /// One hardened Job per candidate (see `kubernetes:`).
    Kubernetes,
}

/// Agent runtimes: how a task becomes argv + env + stdin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuntimeKind {
    /// Any command; the instruction on stdin and in $RASCAL_INSTRUCTION_FILE.
    Command,
    /// A deterministic built-in agent that applies a scenario's edits.
    Scripted,
    Claude,
    Codex,
    Goose,
}

/// How the process launcher confines an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxKind {
    /// bubblewrap: the system read-only, the workspace writable, a private
    /// home and /tmp, no network unless `network: host`.
    Bwrap,
    /// No sandbox: the agent runs as the user (marked UNSANDBOXED).
    None,
}

/// One agent in `.rascal/config.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    pub runtime: RuntimeKind,
    /// argv for `runtime: command`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// Container image for the docker launcher.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Names of host environment variables passed to the agent (values are
    /// read at launch, never stored).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Dur>,
    /// For `runtime: scripted`: the built-in scenario to play.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// For `runtime: scripted`: inline steps instead of a named scenario.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<scenario::Step>,
    /// For claude/codex/goose: the model to ask for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// For claude/codex/goose: extra arguments after the runtime's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Let a real agent skip its permission prompts under the bare process
    /// launcher (no container). Off by default: only a sandbox gets that.
    #[serde(default)]
    pub allow_unsandboxed: bool,
    /// Process launcher: `bwrap` (default: bubblewrap) or `none` (run the
    /// agent unsandboxed; it is marked UNSANDBOXED everywhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxKind>,
    /// Process launcher: host files or directories the agent may read
    /// (e.g. a CLI's login file), bound read-only at the same path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mounts: Vec<String>,
    /// The model provider (for goose, command and scripted agents), used to
    /// keep reviewers independent of authors. Default: the agent's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Docker launcher: memory limit (`512m`, `2g`; default 2g).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<container::ByteSize>,
    /// Docker launcher: CPU limit (default 2.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<f64>,
    /// Docker launcher: process limit (default 512).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids: Option<i64>,
    /// `none`, `bridge` (docker default), `host` (process launcher), a
    /// named network, `default` or `{ allow: [...] }` (see `network`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<network::NetworkSetting>,
    /// Docker launcher: read-only root filesystem (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// Docker launcher: pull the image when the engine lacks it (default false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pull: bool,
    /// Docker launcher: keep the container after the run, for debugging.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_containers: bool,
    /// Docker launcher: `mount` or `copy` the workspace (default: copy when
    /// DOCKER_HOST is not a local socket; see `workspace::resolve`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<workspace::WorkspaceMode>,
    /// What each candidate of this agent may spend, over all its attempts
    /// (see `budget::Budget`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// Bubblewrap sandboxes (the agent's, its checks', a reviewer's or
    /// judge's): process and memory limits (see `limits::Limits`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<limits::LimitsSetting>,
}

impl AgentConfig {
    /// An agent of `runtime` with every other setting at its default.
    pub fn new(runtime: RuntimeKind) -> AgentConfig {
        serde_yaml::from_value(serde_yaml::Value::Mapping(
            [(
                "runtime".into(),
                serde_yaml::to_value(runtime).expect("runtime serialises"),
            )]
            .into_iter()
            .collect(),
        ))
        .expect("defaults deserialise")
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StrategyMode {
    #[default]
    Single,
    Compare,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Strategy {
    #[serde(default)]
    pub mode: StrategyMode,
    #[serde(default)]
    pub agents: Vec<String>,
    /// Candidates per agent (compare mode): `n: 3` runs each agent 3 times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u32>,
    /// At most this many candidates run at once (default: number of CPUs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_parallel: Option<u32>,
    /// When no candidate passes: fail the run (exit 1) or escalate (exit 3).
    #[serde(default)]
    pub on_no_pass: OnNoPass,
    /// Plan, then execute, on every run: the planner of
    /// `.rascal/verification.yaml` proposes acceptance criteria a human
    /// approves before the candidates start (`rascal run --plan`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub plan: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnNoPass {
    #[default]
    Fail,
    Escalate,
}

/// `.rascal/config.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MainConfig {
    #[serde(default)]
    pub agents: BTreeMap<String, AgentConfig>,
    #[serde(default)]
    pub launcher: LauncherKind,
    /// Docker launcher: `workspace:` for every agent that sets none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<workspace::WorkspaceMode>,
    #[serde(default)]
    pub strategy: Strategy,
    /// Default agent timeout.
    #[serde(default = "default_timeout")]
    pub timeout: Dur,
    /// TUI theme name (`--theme` wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
    /// Keep every candidate's workspace after `finalize` (default false:
    /// finalize removes the workspaces of the candidates it did not commit
    /// and keeps the finalized one's). `rascal gc` removes old runs'
    /// workspaces either way.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_workspaces: bool,
    /// What the whole run may spend: every candidate, every attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// How a run that needs you gets your attention (bell, desktop
    /// notification, your command).
    #[serde(default)]
    pub notify: notify::Notify,
    /// What one agent's log may hold (default 1g); past it, lines are
    /// counted and dropped, with one marker line and a warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_log_bytes: Option<container::ByteSize>,
    /// Where `launcher: kubernetes` runs candidates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<kubernetes::KubernetesConfig>,
    /// How the comparator cross-tests the candidates.
    #[serde(default)]
    pub compare: compare::CompareConfig,
}

fn default_timeout() -> Dur {
    Dur::from_secs(30 * 60)
}

impl Default for MainConfig {
    fn default() -> Self {
        MainConfig {
            agents: BTreeMap::new(),
            launcher: LauncherKind::Process,
            workspace: None,
            strategy: Strategy::default(),
            timeout: default_timeout(),
            theme: None,
            keep_workspaces: false,
            budget: None,
            notify: notify::Notify::default(),
            max_log_bytes: None,
            kubernetes: None,
            compare: compare::CompareConfig::default(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GuardrailsFile {
    #[serde(default)]
    guardrails: Vec<Guardrail>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PermissionsFile {
    #[serde(default)]
    permissions: PermissionsConfig,
}

/// Everything rascal reads from `.rascal/` at the base commit.
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub main: MainConfig,
    /// None when `.rascal/guardrails.yaml` is absent (layer off).
    pub guardrails: Option<Vec<Guardrail>>,
    /// None when `.rascal/permissions.yaml` is absent.
    pub permissions: Option<PermissionsConfig>,
    /// None when `.rascal/verification.yaml` is absent (Layer 5 off, Layer 3
    /// with defaults).
    pub verification: Option<VerificationConfig>,
    /// File → sha256 of its bytes at the base commit, for receipts.
    pub digests: BTreeMap<String, String>,
}

/// Parse one YAML document strictly into `T`, with a located error. The
/// file's size, what its aliases expand to and duplicate keys are checked
/// too (see [`yaml`]).
pub fn parse<T: DeserializeOwned>(file: &str, text: &str) -> Result<T, ConfigError> {
    yaml::from_str(file, text)
}

pub fn text_of(file: &str, bytes: Vec<u8>) -> Result<String, ConfigError> {
    String::from_utf8(bytes).map_err(|e| ConfigError {
        file: file.to_string(),
        line: None,
        column: None,
        message: format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()),
        hint: "save the file as UTF-8".into(),
    })
}

impl Config {
    /// Parse the three files from their texts (None = absent).
    pub fn from_texts(
        main: Option<&str>,
        guardrails: Option<&str>,
        permissions: Option<&str>,
    ) -> Result<Config, ConfigError> {
        let mut cfg = Config::default();
        if let Some(t) = main {
            if !t.trim().is_empty() {
                cfg.main = parse(CONFIG_FILE, t)?;
                if let Some(w) = cfg.main.workspace {
                    for a in cfg.main.agents.values_mut() {
                        a.workspace.get_or_insert(w);
                    }
                }
            }
            cfg.digests
                .insert(CONFIG_FILE.into(), crate::digest::digest(t));
        }
        if let Some(t) = guardrails {
            let list = if t.trim().is_empty() {
                Vec::new()
            } else {
                parse::<GuardrailsFile>(GUARDRAILS_FILE, t)?.guardrails
            };
            yaml::unique_names(
                GUARDRAILS_FILE,
                t,
                &[yaml::Seg::key("guardrails")],
                Some("name"),
                list.iter().map(|g| g.name.as_str()),
                "guardrails",
                "each guardrail needs a unique name: its reports are known by it",
            )?;
            cfg.guardrails = Some(list);
            cfg.digests
                .insert(GUARDRAILS_FILE.into(), crate::digest::digest(t));
        }
        if let Some(t) = permissions {
            let p = if t.trim().is_empty() {
                PermissionsConfig::default()
            } else {
                parse::<PermissionsFile>(PERMISSIONS_FILE, t)?.permissions
            };
            cfg.permissions = Some(p);
            cfg.digests
                .insert(PERMISSIONS_FILE.into(), crate::digest::digest(t));
        }
        if let Some(t) = main {
            yaml::unique_names(
                CONFIG_FILE,
                t,
                &[yaml::Seg::key("strategy"), yaml::Seg::key("agents")],
                None,
                cfg.main.strategy.agents.iter().map(String::as_str),
                "strategy agents",
                "name each agent once; `n: 3` runs each agent 3 times",
            )?;
            budget::check(t, &cfg.main)?;
            notify::check(t, &cfg.main.notify)?;
        }
        cfg.check_strategy()?;
        Ok(cfg)
    }

    /// Add `.rascal/verification.yaml` (None = absent) to a parsed config.
    pub fn with_verification(mut self, text: Option<&str>) -> Result<Config, ConfigError> {
        if let Some(t) = text {
            let v: VerificationConfig = if t.trim().is_empty() {
                VerificationConfig::default()
            } else {
                parse(VERIFICATION_FILE, t)?
            };
            if let Some(r) = &v.review {
                yaml::unique_names(
                    VERIFICATION_FILE,
                    t,
                    &[yaml::Seg::key("review"), yaml::Seg::key("reviewers")],
                    None,
                    r.reviewers.iter().map(String::as_str),
                    "reviewers",
                    "name each reviewer once: a reviewer listed twice would count twice towards `consensus`",
                )?;
            }
            for (key, name) in v.agents_named() {
                if !self.main.agents.contains_key(name) {
                    // Point at the first mention of the name.
                    let at = t
                        .lines()
                        .enumerate()
                        .find_map(|(i, l)| l.find(name).map(|c| (i + 1, c + 1)));
                    return Err(ConfigError {
                        file: VERIFICATION_FILE.into(),
                        line: at.map(|a| a.0),
                        column: at.map(|a| a.1),
                        message: format!(
                            "`{key}` names agent `{name}`, which is not defined in {CONFIG_FILE}"
                        ),
                        hint: format!("defined agents: {}", list_names(&self.agent_names())),
                    });
                }
            }
            self.verification = Some(v);
            self.digests
                .insert(VERIFICATION_FILE.into(), crate::digest::digest(t));
        }
        Ok(self)
    }

    fn check_strategy(&self) -> Result<(), ConfigError> {
        if let Some(msg) = self.main.kubernetes.as_ref().and_then(kubernetes::problem) {
            return Err(ConfigError {
                file: CONFIG_FILE.into(),
                line: None,
                column: None,
                message: format!("kubernetes: {msg}"),
                hint: "see docs/kubernetes.md".into(),
            });
        }
        for name in &self.main.strategy.agents {
            if !self.main.agents.contains_key(name) {
                return Err(ConfigError {
                    file: CONFIG_FILE.into(),
                    line: None,
                    column: None,
                    message: format!(
                        "strategy names agent `{name}`, which is not defined under `agents:`"
                    ),
                    hint: format!("defined agents: {}", self.agent_names().join(", ")),
                });
            }
        }
        for (name, a) in &self.main.agents {
            let bad = match a.runtime {
                RuntimeKind::Command if a.command.is_empty() => {
                    Some("`runtime: command` needs `command: [program, args…]`")
                }
                RuntimeKind::Scripted if a.scenario.is_none() && a.steps.is_empty() => {
                    Some("`runtime: scripted` needs `scenario: NAME` or `steps: [...]`")
                }
                _ => None,
            };
            if let Some(msg) = bad {
                return Err(ConfigError {
                    file: CONFIG_FILE.into(),
                    line: None,
                    column: None,
                    message: format!("agent `{name}`: {msg}"),
                    hint: "see docs/configuration.md".into(),
                });
            }
            if let Some(msg) = limits::problem(a) {
                return Err(ConfigError {
                    file: CONFIG_FILE.into(),
                    line: None,
                    column: None,
                    message: format!("agent `{name}`: {msg}"),
                    hint: "write e.g. `limits: { pids: 512, memory: 2g }` (see docs/security.md)"
                        .into(),
                });
            }
            if let Some(msg) = container::problem(a) {
                return Err(ConfigError {
                    file: CONFIG_FILE.into(),
                    line: None,
                    column: None,
                    message: format!("agent `{name}`: {msg}"),
                    hint: "see docs/launchers.md § Docker launcher".into(),
                });
            }
            if let Some(s) = &a.scenario {
                if !scenario::BUILTIN_NAMES.contains(&s.as_str()) {
                    return Err(ConfigError {
                        file: CONFIG_FILE.into(),
                        line: None,
                        column: None,
                        message: format!("agent `{name}`: unknown scenario `{s}`"),
                        hint: format!("built-in scenarios: {}", scenario::BUILTIN_NAMES.join(", ")),
                    });
                }
            }
        }
        Ok(())
    }

    pub fn agent_names(&self) -> Vec<String> {
        self.main.agents.keys().cloned().collect()
    }
}

fn list_names(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}
