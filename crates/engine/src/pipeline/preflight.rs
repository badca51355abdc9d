//! Before a run starts: what `rascal doctor` checks about an agent, so a
//! run that cannot work is refused — one line per problem, exit 2, nothing
//! recorded — instead of every candidate failing. Its program must be on
//! PATH or in the base commit (every workspace starts from it) and
//! executable; a path its command names must be one its sandbox shows; the
//! credential variables it names must be set; under the docker launcher
//! its image must be on the engine (unless it may pull it). Doctor reads
//! these same checks. Nothing here runs an agent.

use rascal_core::config::{AgentConfig, Config, LauncherKind, RuntimeKind, SandboxKind};
use rascal_exec::exec::confine::{expand_home, program_path, Confinement};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The program an agent runs under the process launcher, as configured
/// (None: a scripted agent, which runs inside rascal).
pub fn program_of(agent: &AgentConfig) -> Option<String> {
    match agent.runtime {
        RuntimeKind::Scripted => None,
        RuntimeKind::Command => agent.command.first().cloned(),
        RuntimeKind::Claude => Some(agent.command.first().cloned().unwrap_or("claude".into())),
        RuntimeKind::Codex => Some(agent.command.first().cloned().unwrap_or("codex".into())),
        RuntimeKind::Goose => Some(agent.command.first().cloned().unwrap_or("goose".into())),
    }
}

/// Where a program was found.
pub struct Located {
    pub path: PathBuf,
    /// A path of the base commit, not of the host.
    pub in_base_commit: bool,
    pub executable: bool,
}

/// Where the program lives, as the process launcher would find it: a bare
/// name on PATH, an absolute path as given, a relative path with a `/` in
/// the candidate's workspace — that is, in the base commit.
pub fn locate(program: &str, base: Option<(&git2::Repository, git2::Oid)>) -> Option<Located> {
    if program.contains('/') && !program.starts_with('/') {
        let (repo, commit) = base?;
        let rel = Path::new(program.trim_start_matches("./"));
        let tree = repo.find_commit(commit).ok()?.tree().ok()?;
        let entry = tree.get_path(rel).ok()?;
        let executable = match entry.filemode() {
            0o100755 => true,
            // A link in the tree: judge what it points at in the checkout.
            0o120000 => rascal_exec::git::workspace::workdir(repo)
                .join(rel)
                .metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0),
            _ => false,
        };
        return Some(Located {
            path: rel.to_path_buf(),
            in_base_commit: true,
            executable,
        });
    }
    let path_var = std::env::var("PATH").ok();
    let path = program_path(program, path_var.as_deref())?;
    let executable = path
        .metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    Some(Located {
        path,
        in_base_commit: false,
        executable,
    })
}

/// What is wrong with `program` found as `found`, each a sentence with what
/// to do.
pub fn program_problems(program: &str, found: Option<&Located>) -> Vec<String> {
    let p = program;
    match found {
        None if p.contains('/') && !p.starts_with('/') => vec![format!(
            "`{p}` is not in the base commit: candidates' workspaces start from it, so commit the script (or give its absolute path)"
        )],
        None if p.contains('/') => {
            vec![format!("`{p}` does not exist: fix `command:` in .rascal/config.yaml")]
        }
        None => vec![format!(
            "`{p}` is not on PATH: install it, or set `command:` to its full path"
        )],
        Some(l) if !l.executable && l.in_base_commit => vec![format!(
            "`{p}` is not executable in the base commit: `git update-index --chmod=+x {}` and commit",
            rascal_core::text::inert::shell_word(&l.path.to_string_lossy())
        )],
        Some(l) if !l.executable => vec![format!(
            "`{}` is not executable: `chmod +x {}`",
            l.path.display(),
            rascal_core::text::inert::shell_word(&l.path.to_string_lossy())
        )],
        Some(_) => Vec::new(),
    }
}

/// The paths an agent's command names (after its program) that its
/// sandbox does not show: an absolute path outside the system directories
/// and its `mounts:` (the user's home, the repository itself, /tmp…), and a
/// `./` path that is not in the base commit. `hide` is what every
/// candidate's sandbox hides (`confine::private_paths`), `scratch` a
/// directory standing in for its workspace.
pub fn unseen_paths(
    agent: &AgentConfig,
    base: (&git2::Repository, git2::Oid),
    hide: &[PathBuf],
    scratch: &Path,
) -> Vec<String> {
    let confine = Confinement {
        workspace: scratch.to_path_buf(),
        writable: Vec::new(),
        hide: hide.to_vec(),
        read_only: agent.mounts.iter().map(|m| expand_home(m)).collect(),
        network: false,
        limits: Default::default(),
    };
    let path_var = std::env::var("PATH").ok();
    let Ok(policy) = confine.policy(&agent.command, path_var.as_deref()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for arg in agent.command.iter().skip(1) {
        if arg.chars().any(char::is_whitespace) {
            continue;
        }
        if arg.starts_with("./") {
            if locate(arg, Some(base)).is_none() {
                out.push(format!(
                    "`{arg}` is not in the base commit: candidates' workspaces start from it, so commit it"
                ));
            }
            continue;
        }
        if !(arg.starts_with('/') || arg.starts_with("~/")) {
            continue;
        }
        let host = expand_home(arg);
        let real = host.canonicalize().unwrap_or_else(|_| host.clone());
        if !policy.shows(&real) {
            out.push(format!(
                "`{arg}` is outside what the agent's sandbox shows (its workspace, the system directories, its `mounts:`), so the agent cannot read it: commit it to the repository and name it relatively (`./{}`), or add its directory to the agent's `mounts:`",
                host.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
            ));
        }
    }
    out
}

/// The credential variables an agent names that are not set here.
pub fn credential_problems(agent: &AgentConfig) -> Vec<String> {
    agent
        .env
        .iter()
        .filter(|v| std::env::var_os(v).is_none_or(|x| x.is_empty()))
        .map(|v| format!("${v} is not set: export it before running rascal"))
        .collect()
}

/// Every problem of the agents `names` (each once) for a run on `launcher`
/// from `base`: `agent `NAME`: …` lines, empty when the run may start.
/// `files` is rascal's directory of this repository's runs.
pub fn problems(
    names: &[String],
    config: &Config,
    launcher: LauncherKind,
    base: (&git2::Repository, git2::Oid),
    files: &Path,
) -> Vec<String> {
    let workdir = rascal_exec::git::workspace::workdir(base.0);
    let hide = rascal_exec::exec::confine::private_paths(&workdir, files);
    let scratch = files.join("preflight");
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for name in names {
        if !seen.insert(name) {
            continue;
        }
        let Some(agent) = config.main.agents.get(name) else {
            continue;
        };
        let mut found = Vec::new();
        // Under a container launcher the program is inside the image.
        if launcher == LauncherKind::Process {
            if let Some(p) = program_of(agent) {
                found.extend(program_problems(&p, locate(&p, Some(base)).as_ref()));
            }
            if agent.runtime == RuntimeKind::Command && agent.sandbox != Some(SandboxKind::None) {
                found.extend(unseen_paths(agent, base, &hide, &scratch));
            }
        }
        found.extend(credential_problems(agent));
        out.extend(found.into_iter().map(|p| format!("agent `{name}`: {p}")));
    }
    if launcher == LauncherKind::Docker {
        let wanted: Vec<(String, String, Option<RuntimeKind>)> = names
            .iter()
            .filter_map(|n| Some((n, config.main.agents.get(n)?)))
            .filter(|(_, a)| !a.pull)
            .filter_map(|(n, a)| Some((n.clone(), a.image.clone()?, Some(a.runtime))))
            .collect();
        out.extend(missing_images(&wanted));
    }
    out
}

/// The agents (name, image, runtime) whose image is not on the Docker
/// engine, or that engine does not answer: one problem line each, with how
/// to build it. Asked on a thread of its own (a run is prepared before any
/// async runtime starts, a combine inside one).
fn missing_images(wanted: &[(String, String, Option<RuntimeKind>)]) -> Vec<String> {
    if wanted.is_empty() {
        return Vec::new();
    }
    let wanted = wanted.to_vec();
    let asked = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| crate::Error::Usage(e.to_string()))?;
        rt.block_on(async {
            use rascal_exec::exec::launch::docker;
            let engine = docker::connect().await?;
            let mut out = Vec::new();
            for (name, image, runtime) in &wanted {
                match docker::has_image(&engine, image).await {
                    Ok(true) => {}
                    Ok(false) => out.push(format!(
                        "agent `{name}`: image `{image}` is not on the Docker engine at {} — {} (or set `pull: true` on the agent to pull it)",
                        docker::engine_address(),
                        docker::build_hint(*runtime, image)
                    )),
                    Err(e) => out.push(format!("agent `{name}`: {e}")),
                }
            }
            Ok::<_, crate::Error>(out)
        })
    })
    .join();
    match asked {
        Ok(Ok(lines)) => lines,
        Ok(Err(e)) => vec![format!("the docker launcher needs a Docker engine: {e}")],
        Err(_) => vec!["the docker launcher: asking the engine for images failed".into()],
    }
}

/// `problems` as the error a refused run prints: a count, one line each,
/// and where to look further.
pub fn refusal(problems: &[String]) -> Option<String> {
    if problems.is_empty() {
        return None;
    }
    let mut msg = format!(
        "the run was not started: {} with its agents",
        rascal_core::text::plural(problems.len() as u64, "problem")
    );
    for p in problems {
        msg.push_str(&format!("\n  {p}"));
    }
    msg.push_str("\n  hint: fix .rascal/config.yaml (and commit it), then run again; `rascal doctor` checks every agent");
    Some(msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_missing_program_says_where_it_was_looked_for() {
        let p = program_problems("./agents/fix.sh", None);
        assert!(p[0].contains("not in the base commit"), "{p:?}");
        let p = program_problems("no-such-agent-cli", None);
        assert!(p[0].contains("not on PATH"), "{p:?}");
        let p = program_problems("/opt/none/agent", None);
        assert!(p[0].contains("does not exist"), "{p:?}");
        let l = Located {
            path: "agents/fix.sh".into(),
            in_base_commit: true,
            executable: false,
        };
        let p = program_problems("./agents/fix.sh", Some(&l));
        assert!(p[0].contains("--chmod=+x agents/fix.sh"), "{p:?}");
    }

    #[test]
    fn a_refusal_has_one_line_per_problem_and_no_raw_control_character() {
        let m = refusal(&["agent `a`: one".into(), "agent `b`: two".into()]).unwrap();
        let lines: Vec<&str> = m.lines().collect();
        assert!(lines[0].contains("2 problems"), "{m}");
        assert_eq!(lines[1], "  agent `a`: one");
        assert_eq!(lines[2], "  agent `b`: two");
        assert!(lines[3].contains("rascal doctor"), "{m}");
        assert_eq!(refusal(&[]), None);
    }
}
