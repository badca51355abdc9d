//! `rascal doctor`, the agents part: for each configured agent, whether its
//! CLI is found (process launcher) or its image is named (docker), whether
//! its credential variables are set — never printing their values — and the
//! CLI's version.

use crate::config::{AgentConfig, Config, LauncherKind, RuntimeKind};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AgentCheck {
    pub agent: String,
    pub runtime: String,
    /// The program run under the process launcher, when there is one.
    pub program: Option<String>,
    /// Where it was found on PATH (None: not found).
    pub found: Option<PathBuf>,
    /// What `PROGRAM --version` printed (first line).
    pub version: Option<String>,
    /// Credential variable name → set in this environment?
    pub credentials: Vec<(String, bool)>,
    pub image: Option<String>,
    /// Problems, each a sentence with what to do.
    pub problems: Vec<String>,
}

fn program_of(agent: &AgentConfig) -> Option<String> {
    match agent.runtime {
        RuntimeKind::Scripted => None,
        RuntimeKind::Command => agent.command.first().cloned(),
        RuntimeKind::Claude => Some(agent.command.first().cloned().unwrap_or("claude".into())),
        RuntimeKind::Codex => Some(agent.command.first().cloned().unwrap_or("codex".into())),
        RuntimeKind::Goose => Some(agent.command.first().cloned().unwrap_or("goose".into())),
    }
}

fn find(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return p.is_file().then_some(p);
    }
    crate::finalize::which(program)
}

/// `PROGRAM --version`, first line, bounded in time.
fn version(path: &PathBuf) -> Option<String> {
    let mut child = std::process::Command::new(path)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = String::new();
    use std::io::Read;
    child.stdout.take()?.read_to_string(&mut out).ok()?;
    out.lines().next().map(|l| crate::text::sanitize(l.trim()))
}

pub fn agent_checks(config: &Config) -> Vec<AgentCheck> {
    let docker = config.main.launcher == LauncherKind::Docker;
    config
        .main
        .agents
        .iter()
        .map(|(name, a)| {
            let program = program_of(a);
            let mut problems = Vec::new();
            let found = if docker {
                None
            } else {
                program.as_deref().and_then(find)
            };
            if !docker {
                if let (Some(p), None) = (&program, &found) {
                    problems.push(format!(
                        "`{p}` is not on PATH: install it, or set `command:` to its full path"
                    ));
                }
            } else if a.image.is_none() && a.runtime != RuntimeKind::Scripted {
                problems.push(
                    "no `image:` for the docker launcher: build one from docker/ and name it"
                        .into(),
                );
            }
            let credentials: Vec<(String, bool)> = a
                .env
                .iter()
                .map(|v| {
                    (
                        v.clone(),
                        std::env::var_os(v).is_some_and(|x| !x.is_empty()),
                    )
                })
                .collect();
            for (v, set) in &credentials {
                if !set {
                    problems.push(format!("${v} is not set: export it before running rascal"));
                }
            }
            AgentCheck {
                agent: name.clone(),
                runtime: format!("{:?}", a.runtime).to_lowercase(),
                version: found.as_ref().and_then(version),
                program,
                found,
                credentials,
                image: a.image.clone(),
                problems,
            }
        })
        .collect()
}

/// The agents section as lines.
pub fn agent_lines(checks: &[AgentCheck]) -> Vec<String> {
    let mut out = vec!["agents:".to_string()];
    if checks.is_empty() {
        out.push("  none configured (.rascal/config.yaml `agents:`)".into());
    }
    for c in checks {
        let mark = if c.problems.is_empty() { "✓" } else { "✗" };
        let mut line = format!("  {mark} {} ({})", c.agent, c.runtime);
        match (&c.program, &c.found) {
            (Some(_), Some(path)) => line.push_str(&format!(
                " · {} · {}",
                path.display(),
                c.version.as_deref().unwrap_or("version unknown")
            )),
            (Some(p), None) if c.image.is_none() => line.push_str(&format!(" · `{p}` not found")),
            _ => {}
        }
        if let Some(i) = &c.image {
            line.push_str(&format!(" · image {i}"));
        }
        for (v, set) in &c.credentials {
            line.push_str(&format!(" · ${v} {}", if *set { "set" } else { "NOT SET" }));
        }
        out.push(line);
        for p in &c.problems {
            out.push(format!("      {p}"));
        }
    }
    out
}
