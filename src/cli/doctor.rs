//! `rascal doctor`: each agent's program (found, executable; never run for
//! a `command` agent) or image, the known CLIs' versions (asked inside the
//! sandbox), credentials; the Docker engine; containers of runs that are
//! gone (removed with `--remove`).

use super::args::DoctorArgs;
use super::exit::{CliError, FAIL, PASS};
use super::shared::{open_store, out, say};
use crate::config::LauncherKind;
use crate::doctor::agents::{agent_checks, agent_lines, images, versions};
use crate::git::workspace;
use std::path::Path;

pub fn doctor(dir: &Path, args: DoctorArgs) -> Result<i32, CliError> {
    let DoctorArgs { remove, json } = args;
    let repo = workspace::open(dir)?;
    let head = workspace::resolve(&repo, "HEAD")?;
    let config = crate::git::base::load_config(&repo, head)?;
    let mut checks = agent_checks(&config, &repo, head);
    // What a CLI asked for its version must not see: the user's
    // repository and rascal's files (as for an agent).
    let hide = crate::exec::confine::private_paths(
        &workspace::workdir(&repo),
        &workspace::files_dir(&repo),
    );
    // An unreachable engine only matters when this repository uses it.
    let uses_docker = config.main.launcher == LauncherKind::Docker;
    let store = open_store(dir)?;
    let rt = crate::exec::runtime().map_err(CliError::Usage)?;
    let docker = rt.block_on(async {
        if uses_docker {
            let pull = |agent: &str| config.main.agents.get(agent).is_some_and(|a| a.pull);
            images(&mut checks, pull).await;
        } else {
            versions(&mut checks, &hide).await;
        }
        crate::doctor::diagnose(&store, &workspace::workdir(&repo), remove).await
    });
    let agents_ok = checks.iter().all(|c| c.problems.is_empty());
    let docker_ok = docker.exit_code == 0 || !uses_docker;
    let ok = agents_ok && docker_ok;
    if json {
        say!(
            "{}",
            serde_json::json!({"ok": ok, "agents": checks, "docker": docker.lines})
        );
    } else {
        out(agent_lines(&checks));
        out(docker.lines);
    }
    Ok(if ok { PASS } else { FAIL })
}
