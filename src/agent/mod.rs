//! Agent runtimes: how a task becomes argv + environment + stdin for one
//! candidate. `command` runs any program; `scripted` replays a built-in or
//! inline scenario (deterministic, no API key) through the same launcher.

pub mod scripted;

use crate::config::{AgentConfig, RuntimeKind};
use std::path::{Path, PathBuf};

/// What to launch for one candidate.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub argv: Vec<String>,
    /// The complete, scrubbed environment of the agent.
    pub env: Vec<(String, String)>,
    pub stdin: Option<Vec<u8>>,
    /// Environment variable names the agent asked for that the host lacks.
    pub missing_env: Vec<String>,
}

/// What the runtime needs to know about the launch.
#[derive(Debug, Clone)]
pub struct LaunchContext<'a> {
    pub run: &'a str,
    pub candidate: &'a str,
    /// Where the instruction file and scenario files go (outside the worktree).
    pub run_dir: &'a Path,
    /// The rascal executable, for scripted agents.
    pub rascal_exe: &'a Path,
}

/// Host variables every agent gets so that ordinary programs work.
pub const BASE_ENV: &[&str] = &["PATH", "HOME", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER"];

/// Build the invocation for `agent` (named `name`) on `instruction`.
pub fn invocation(
    name: &str,
    agent: &AgentConfig,
    instruction: &str,
    ctx: &LaunchContext,
) -> Result<Invocation, String> {
    std::fs::create_dir_all(ctx.run_dir)
        .map_err(|e| format!("creating {}: {e}", ctx.run_dir.display()))?;
    let instruction_file = ctx.run_dir.join("instruction.md");
    std::fs::write(&instruction_file, instruction)
        .map_err(|e| format!("writing {}: {e}", instruction_file.display()))?;

    let mut env: Vec<(String, String)> = Vec::new();
    let mut missing_env = Vec::new();
    for var in BASE_ENV {
        if let Ok(v) = std::env::var(var) {
            env.push((var.to_string(), v));
        }
    }
    for var in &agent.env {
        match std::env::var(var) {
            Ok(v) => env.push((var.clone(), v)),
            Err(_) => missing_env.push(var.clone()),
        }
    }
    env.push((
        "RASCAL_INSTRUCTION_FILE".into(),
        path_str(&instruction_file),
    ));
    env.push(("RASCAL_RUN".into(), ctx.run.to_string()));
    env.push(("RASCAL_CANDIDATE".into(), ctx.candidate.to_string()));
    env.push(("RASCAL_AGENT".into(), name.to_string()));

    let stdin = Some(instruction.as_bytes().to_vec());
    let argv = match agent.runtime {
        RuntimeKind::Command => agent.command.clone(),
        RuntimeKind::Scripted => {
            let steps = match &agent.scenario {
                Some(s) => scripted::builtin(s).ok_or_else(|| format!("unknown scenario `{s}`"))?,
                None => agent.steps.clone(),
            };
            let file = ctx.run_dir.join("scenario.json");
            let json = serde_json::to_vec_pretty(&steps).map_err(|e| e.to_string())?;
            std::fs::write(&file, json).map_err(|e| format!("writing {}: {e}", file.display()))?;
            vec![
                path_str(ctx.rascal_exe),
                scripted::SUBCOMMAND.into(),
                path_str(&file),
            ]
        }
        RuntimeKind::Claude => with_args(
            agent,
            &[
                "claude",
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
        ),
        RuntimeKind::Codex => with_args(agent, &["codex", "exec", "--json", "-"]),
        RuntimeKind::Goose => {
            let f = path_str(&instruction_file);
            let mut v = with_args(agent, &["goose", "run", "-i"]);
            v.push(f);
            v
        }
    };
    if argv.is_empty() {
        return Err(format!("agent `{name}` has an empty command"));
    }
    Ok(Invocation {
        argv,
        env,
        stdin,
        missing_env,
    })
}

fn with_args(agent: &AgentConfig, base: &[&str]) -> Vec<String> {
    if agent.command.is_empty() {
        base.iter().map(|s| s.to_string()).collect()
    } else {
        agent.command.clone()
    }
}

fn path_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The run directory of one candidate: `<state>/runs/<run>/<candidate>`.
pub fn candidate_dir(state: &Path, run: &str, candidate: &str) -> PathBuf {
    state.join("runs").join(run).join(candidate)
}
