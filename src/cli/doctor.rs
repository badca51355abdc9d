//! `rascal doctor`: each agent's program (found, executable; never run for
//! a `command` agent) or image, the known CLIs' versions (asked inside the
//! sandbox), credentials; the Docker engine; containers of runs that are
//! gone (removed with `--remove`); the sandbox, how its limits are
//! enforced here, and a warning when rascal runs as root. Outside a git
//! repository, only the machine's checks (the sandbox and its limits).

use super::args::DoctorArgs;
use super::exit::{CliError, FAIL, PASS};
use super::shared::{open_store, out, say};
use rascal_core::config::LauncherKind;
use rascal_engine::doctor::{agent_checks, agent_lines, images, versions};
use rascal_exec::git::base::{load_config_from, ConfigSource};
use rascal_exec::git::workspace;
use std::path::Path;

pub fn doctor(dir: &Path, args: DoctorArgs) -> Result<i32, CliError> {
    let DoctorArgs {
        remove,
        json,
        config_from_worktree,
    } = args;
    // Outside a repository there are no agents to check: the machine's
    // own checks still answer whether rascal can work here.
    let repo = match workspace::open(dir) {
        Ok(r) => r,
        Err(e) => return machine_only(dir, &e, json),
    };
    let head = workspace::resolve(&repo, "HEAD")?;
    let workdir = workspace::workdir(&repo);
    let config = if config_from_worktree {
        load_config_from(ConfigSource::WorkingTree(&workdir))?
    } else {
        load_config_from(ConfigSource::Base(&repo, head))?
    };
    let tree = rascal_core::model::event::WorkingTree {
        config_from_worktree,
        config_changes: rascal_exec::git::base::config_changes(&repo, head),
        uncommitted: 0,
        uncommitted_files: Vec::new(),
    };
    for l in tree.lines(&head.to_string()) {
        super::shared::tell!("rascal: {l}");
    }
    let mut checks = agent_checks(&config, &repo, head);
    // What a CLI asked for its version must not see: the user's
    // repository and rascal's files (as for an agent).
    let hide = rascal_exec::exec::confine::private_paths(&workdir, &workspace::files_dir(&repo));
    // An unreachable engine only matters when this repository uses it.
    let uses_docker = config.main.launcher == LauncherKind::Docker;
    let uses_kube = config.main.launcher == LauncherKind::Kubernetes;
    let store = open_store(dir)?;
    let rt = rascal_engine::runtime()?;
    let mut probes = Vec::new();
    let docker = rt.block_on(async {
        if uses_kube {
            // The images are the cluster's to pull; nothing to ask here.
        } else if uses_docker {
            let pull = |agent: &str| config.main.agents.get(agent).is_some_and(|a| a.pull);
            images(&mut checks, pull).await;
        } else {
            versions(&mut checks, &hide).await;
            // The checks' toolchains, as the sandbox shows them.
            probes = rascal_engine::doctor::probe(&config, &hide).await;
        }
        if uses_kube {
            let k = config.main.kubernetes.clone().unwrap_or_default();
            rascal_engine::doctor::diagnose_kubernetes(&store, &workdir, &k, None, remove).await
        } else {
            rascal_engine::doctor::diagnose(&store, &workdir, remove).await
        }
    });
    let agents_ok = checks.iter().all(|c| c.problems.is_empty());
    let docker_ok = docker.exit_code == 0 || !(uses_docker || uses_kube);
    let checks_ok = probes.iter().all(|p| p.problem.is_none());
    let ok = agents_ok && docker_ok && checks_ok;
    let sandbox = rascal_engine::doctor::sandbox_lines();
    if json {
        say!(
            "{}",
            serde_json::json!({"ok": ok, "agents": checks, "checks": probes, "sandbox": sandbox, (if uses_kube { "kubernetes" } else { "docker" }): docker.lines})
        );
    } else {
        out(agent_lines(&checks));
        out(rascal_engine::doctor::check_lines(&probes));
        out(sandbox);
        out(docker.lines);
    }
    Ok(if ok { PASS } else { FAIL })
}

/// `rascal doctor` outside a git repository: the sandbox and its limits,
/// and a note that agents are checked in a repository. Exit 1 when the
/// sandbox does not work.
fn machine_only(dir: &Path, why: &workspace::WorkspaceError, json: bool) -> Result<i32, CliError> {
    let sandbox = rascal_engine::doctor::sandbox_lines();
    let ok = rascal_exec::exec::sandbox::available().is_ok();
    let note = format!(
        "agents: not checked: {} is not in a git repository ({}); run `rascal doctor` in a repository to check its agents",
        dir.display(),
        why.to_string().lines().next().unwrap_or_default()
    );
    if json {
        say!(
            "{}",
            serde_json::json!({"ok": ok, "repository": null, "agents": [], "note": note, "sandbox": sandbox})
        );
    } else {
        say!("{note}");
        out(sandbox);
    }
    Ok(if ok { PASS } else { FAIL })
}
