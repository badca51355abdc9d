//! Agent runtimes: how a task becomes argv + environment + stdin for one
//! candidate. `command` runs any program; `scripted` replays a built-in or
//! inline scenario (deterministic, no API key) through the same launcher.

pub mod ask;
pub mod events;
pub mod impossible;
pub mod prompt;
pub mod scripted;

use crate::Error;
use rascal_core::config::{AgentConfig, RuntimeKind};
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
    /// True when the agent runs inside a container (the docker launcher):
    /// only then may a real agent skip its own permission prompts.
    pub sandboxed: bool,
    /// 1 for the first attempt; 2, 3… for retries with feedback
    /// (`$RASCAL_ATTEMPT`).
    pub attempt: u32,
    /// Where an author agent may leave `commit_message.txt`, `pr_body.md`
    /// and `impossible.md` (`$RASCAL_ARTIFACTS_DIR`): outside its workspace, so
    /// nothing in the change can reference them. None for reviewers.
    pub artifacts: Option<&'a Path>,
    /// Material rascal laid out for the agent to read (the combining
    /// agent's, `$RASCAL_COMBINE_DIR`). None for every other agent.
    pub inputs: Option<&'a Path>,
    /// How fast a scripted agent's built-in scenario plays (watchable only
    /// in `rascal demo`).
    pub tempo: rascal_core::config::scenario::Tempo,
    /// A planned task's approved criteria, shown to an author (see
    /// `prompt`): None for reviewers and for tasks that were not planned.
    pub criteria: Option<&'a rascal_core::config::spec::Task>,
}

pub(crate) use crate::exec::env::BASE_ENV;

/// Build the invocation for `agent` (named `name`) on `instruction`. A
/// real agent CLI working as an author gets the composed prompt (see
/// `prompt`); a `command` or `scripted` agent, and a reviewer, the text as
/// given.
pub fn invocation(
    name: &str,
    agent: &AgentConfig,
    instruction: &str,
    ctx: &LaunchContext,
) -> Result<Invocation, Error> {
    let shown = ctx
        .criteria
        .filter(|_| ctx.artifacts.is_some())
        .and_then(prompt::criteria_section);
    let composed = composed_instruction(agent, instruction, ctx, shown.as_deref());
    let instruction = composed.as_deref().unwrap_or(instruction);
    std::fs::create_dir_all(ctx.run_dir)
        .map_err(|e| Error::Agent(format!("creating {}: {e}", ctx.run_dir.display())))?;
    let instruction_file = ctx.run_dir.join("instruction.md");
    std::fs::write(&instruction_file, instruction)
        .map_err(|e| Error::Agent(format!("writing {}: {e}", instruction_file.display())))?;

    let (mut env, missing_env) = agent_env(name, agent, ctx, &instruction_file, shown.is_some())?;
    let stdin = Some(instruction.as_bytes().to_vec());
    let argv = agent_argv(agent, ctx, &instruction_file)?;
    if agent.runtime == RuntimeKind::Goose {
        if let Some(m) = &agent.model {
            env.push(("GOOSE_MODEL".into(), m.clone()));
        }
    }
    if argv.is_empty() {
        return Err(Error::Agent(format!("agent `{name}` has an empty command")));
    }
    Ok(Invocation {
        argv,
        env,
        stdin,
        missing_env,
    })
}

/// The prompt a real agent CLI working as an author gets (the instruction,
/// the criteria `shown`, the way out); None: the text as given.
fn composed_instruction(
    agent: &AgentConfig,
    instruction: &str,
    ctx: &LaunchContext,
    shown: Option<&str>,
) -> Option<String> {
    match agent.runtime {
        RuntimeKind::Claude | RuntimeKind::Codex | RuntimeKind::Goose
            if ctx.artifacts.is_some() =>
        {
            Some(match shown {
                Some(section) => {
                    prompt::with_way_out(&format!("{}\n\n{section}", instruction.trim_end()))
                }
                None => prompt::with_way_out(instruction),
            })
        }
        _ => None,
    }
}

/// An agent's environment, and the names it asked for that the host lacks.
type AgentEnv = (Vec<(String, String)>, Vec<String>);

/// The agent's environment (the host's base variables, the ones it asked
/// for, rascal's own) and the names it asked for that the host lacks;
/// writes the criteria file when they are `shown` and creates the
/// artifacts directory.
fn agent_env(
    name: &str,
    agent: &AgentConfig,
    ctx: &LaunchContext,
    instruction_file: &Path,
    shown: bool,
) -> Result<AgentEnv, Error> {
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
    env.push(("RASCAL_INSTRUCTION_FILE".into(), path_str(instruction_file)));
    env.push(("RASCAL_RUN".into(), ctx.run.to_string()));
    env.push(("RASCAL_CANDIDATE".into(), ctx.candidate.to_string()));
    env.push(("RASCAL_AGENT".into(), name.to_string()));
    env.push(("RASCAL_ATTEMPT".into(), ctx.attempt.to_string()));
    if let (Some(task), true) = (ctx.criteria, shown) {
        let file = ctx.run_dir.join("criteria.json");
        std::fs::write(&file, prompt::criteria_json(task))
            .map_err(|e| Error::Agent(format!("writing {}: {e}", file.display())))?;
        env.push((prompt::CRITERIA_ENV.into(), path_str(&file)));
    }
    if let Some(dir) = ctx.artifacts {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::Agent(format!("creating {}: {e}", dir.display())))?;
        env.push((ARTIFACTS_ENV.into(), path_str(dir)));
    }
    if let Some(dir) = ctx.inputs {
        env.push((crate::exec::env::COMBINE_ENV.into(), path_str(dir)));
    }
    Ok((env, missing_env))
}

/// The argv by runtime: the command as configured, the scripted player on
/// the scenario's file (written here), or a real agent CLI's.
fn agent_argv(
    agent: &AgentConfig,
    ctx: &LaunchContext,
    instruction_file: &Path,
) -> Result<Vec<String>, Error> {
    Ok(match agent.runtime {
        RuntimeKind::Command => agent.command.clone(),
        RuntimeKind::Scripted => {
            let steps = match &agent.scenario {
                Some(s) => scripted::builtin_at(s, ctx.tempo)
                    .ok_or_else(|| Error::Agent(format!("unknown scenario `{s}`")))?,
                None => agent.steps.clone(),
            };
            let file = ctx.run_dir.join("scenario.json");
            let json =
                serde_json::to_vec_pretty(&steps).map_err(|e| Error::Agent(e.to_string()))?;
            std::fs::write(&file, json)
                .map_err(|e| Error::Agent(format!("writing {}: {e}", file.display())))?;
            vec![
                path_str(ctx.rascal_exe),
                scripted::SUBCOMMAND.into(),
                path_str(&file),
            ]
        }
        RuntimeKind::Claude | RuntimeKind::Codex | RuntimeKind::Goose => {
            real_argv(agent, ctx.sandboxed, instruction_file)?
        }
    })
}

/// The argv of a real agent CLI: one table per runtime (program and flags),
/// `--model` when configured, the agent's `args:`, and the permission flags
/// that skip prompts only inside a sandbox (or with `allow_unsandboxed`).
/// `command:` replaces the program (e.g. a wrapper script or full path).
pub(crate) fn real_argv(
    agent: &AgentConfig,
    sandboxed: bool,
    instruction_file: &Path,
) -> Result<Vec<String>, Error> {
    let trusted = sandboxed || agent.allow_unsandboxed;
    let (program, mut args): (&str, Vec<String>) = match agent.runtime {
        RuntimeKind::Claude => {
            let mut a: Vec<String> = ["-p", "--output-format", "stream-json", "--verbose"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            if trusted {
                a.push("--dangerously-skip-permissions".into());
            } else {
                // Edits in the worktree are fine; anything else is refused.
                a.extend(["--permission-mode".into(), "acceptEdits".into()]);
            }
            if let Some(m) = &agent.model {
                a.extend(["--model".into(), m.clone()]);
            }
            ("claude", a)
        }
        RuntimeKind::Codex => {
            let mut a: Vec<String> = vec![
                "exec".into(),
                "--json".into(),
                "--skip-git-repo-check".into(),
            ];
            if trusted {
                a.push("--dangerously-bypass-approvals-and-sandbox".into());
            } else {
                // Codex's own sandbox: writes only inside the workspace.
                a.extend(["--sandbox".into(), "workspace-write".into()]);
            }
            if let Some(m) = &agent.model {
                a.extend(["--model".into(), m.clone()]);
            }
            ("codex", a)
        }
        RuntimeKind::Goose => (
            "goose",
            vec![
                "run".into(),
                "--no-session".into(),
                "--output-format".into(),
                "stream-json".into(),
                "-i".into(),
                path_str(instruction_file),
            ],
        ),
        _ => return Err(Error::Agent("not a real agent runtime".into())),
    };
    args.extend(agent.args.iter().cloned());
    if agent.runtime == RuntimeKind::Codex {
        // The prompt comes on stdin.
        args.push("-".into());
    }
    let mut argv = if agent.command.is_empty() {
        vec![program.to_string()]
    } else {
        agent.command.clone()
    };
    argv.extend(args);
    Ok(argv)
}

fn path_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The run directory of one candidate: `<state>/runs/<run>/<candidate>`.
pub fn candidate_dir(state: &Path, run: &str, candidate: &str) -> PathBuf {
    state.join("runs").join(run).join(candidate)
}

pub(crate) use crate::exec::env::ARTIFACTS_ENV;

/// One candidate's artifacts directory (`commit_message.txt`, `pr_body.md`,
/// `impossible.md`): in its run files, never in its workspace or the change.
pub fn artifacts_dir(state: &Path, run: &str, candidate: &str) -> PathBuf {
    candidate_dir(state, run, candidate).join("artifacts")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The prompt `runtime` gets on stdin and in its instruction file, as
    /// an author (with an artifacts directory) or not.
    fn prompt_of(runtime: RuntimeKind, author: bool) -> (String, String) {
        let dir = tempfile::tempdir().unwrap();
        let artifacts = dir.path().join("artifacts");
        let mut agent = AgentConfig::new(runtime);
        agent.command = vec!["my-agent".into()];
        let ctx = LaunchContext {
            run: "r",
            candidate: "a",
            run_dir: dir.path(),
            rascal_exe: Path::new("/bin/rascal"),
            sandboxed: true,
            attempt: 1,
            artifacts: author.then_some(artifacts.as_path()),
            inputs: None,
            tempo: Default::default(),
            criteria: None,
        };
        let inv = invocation("a", &agent, "Add shout().", &ctx).unwrap();
        let file = std::fs::read_to_string(dir.path().join("instruction.md")).unwrap();
        (String::from_utf8(inv.stdin.unwrap()).unwrap(), file)
    }

    #[test]
    fn a_real_cli_author_is_offered_the_way_out_a_command_agent_gets_the_task_as_given() {
        for runtime in [RuntimeKind::Claude, RuntimeKind::Codex, RuntimeKind::Goose] {
            let (stdin, file) = prompt_of(runtime, true);
            assert!(stdin.starts_with("Add shout()."), "{stdin}");
            assert!(
                stdin.contains("$RASCAL_ARTIFACTS_DIR/impossible.md"),
                "{stdin}"
            );
            assert_eq!(stdin, file);
            // A reviewer's prompt is its own.
            assert_eq!(prompt_of(runtime, false).0, "Add shout().");
        }
        assert_eq!(prompt_of(RuntimeKind::Command, true).0, "Add shout().");
    }
}
