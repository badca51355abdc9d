//! The container rascal asks the engine for: its environment, its labels,
//! and its hardened create body.

use super::{
    copy, user_ids, ARTIFACTS, CRITERIA, HOST_ONLY_ENV, INSTRUCTION, LABEL_CANDIDATE,
    LABEL_DEADLINE, LABEL_REPO, LABEL_RUN, LABEL_TIMEOUT, LABEL_VERSION, WORKSPACE,
};
use crate::exec::launch::LaunchSpec;
use bollard::models::{ContainerCreateBody, HostConfig};
use rascal_core::config::container::{
    ByteSize, DEFAULT_CPUS, DEFAULT_MEMORY, DEFAULT_NETWORK, DEFAULT_PIDS,
};
use std::collections::HashMap;

impl LaunchSpec {
    pub(super) fn agent_name(&self) -> String {
        self.env
            .iter()
            .find(|(k, _)| k == "RASCAL_AGENT")
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| self.candidate.clone())
    }
}

/// A variable of the agent's environment (a host path rascal set).
pub(super) fn env_of(spec: &LaunchSpec, key: &str) -> Option<String> {
    spec.env
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
}

pub(super) fn memory_limit(spec: &LaunchSpec) -> ByteSize {
    spec.agent
        .as_ref()
        .and_then(|a| a.memory)
        .unwrap_or(DEFAULT_MEMORY)
}

/// The agent's environment inside the container: host-only variables
/// dropped (unless the agent asks for them), host paths replaced by the
/// container's, and a HOME.
fn container_env(spec: &LaunchSpec, agent: &rascal_core::config::AgentConfig) -> Vec<String> {
    let mut env: Vec<String> = Vec::new();
    for (k, v) in &spec.env {
        if HOST_ONLY_ENV.contains(&k.as_str()) && !agent.env.contains(k) {
            continue;
        }
        if k == "RASCAL_INSTRUCTION_FILE" {
            env.push(format!("{k}={INSTRUCTION}"));
        } else if k == crate::exec::env::CRITERIA_ENV {
            // Bound in bind mode, uploaded in copy mode: the same path.
            env.push(format!("{k}={CRITERIA}"));
        } else if k == crate::exec::env::ARTIFACTS_ENV {
            env.push(format!("{k}={ARTIFACTS}"));
        } else if k == crate::exec::env::COMBINE_ENV {
            env.push(format!("{k}={ARTIFACTS}/{}", crate::exec::env::COMBINE_DIR));
        } else {
            env.push(format!("{k}={v}"));
        }
    }
    if !env.iter().any(|e| e.starts_with("HOME=")) {
        env.push("HOME=/tmp".into());
    }
    env
}

/// The container's labels: its run and candidate, the repository, this
/// rascal's version, and the deadline and timeout a reattach goes on with.
fn container_labels(spec: &LaunchSpec, deadline_ms: u64) -> HashMap<String, String> {
    HashMap::from([
        (LABEL_RUN.to_string(), spec.run.clone()),
        (LABEL_CANDIDATE.to_string(), spec.candidate.clone()),
        (
            LABEL_REPO.to_string(),
            spec.repo.to_string_lossy().into_owned(),
        ),
        (
            LABEL_VERSION.to_string(),
            env!("CARGO_PKG_VERSION").to_string(),
        ),
        (LABEL_DEADLINE.to_string(), deadline_ms.to_string()),
        (
            LABEL_TIMEOUT.to_string(),
            spec.timeout.as_millis().to_string(),
        ),
    ])
}

/// The container's create body: hardened by default (see the module doc).
pub(crate) fn container_body(spec: &LaunchSpec, deadline_ms: u64) -> ContainerCreateBody {
    let agent = spec.agent.clone().unwrap_or_else(|| {
        rascal_core::config::AgentConfig::new(rascal_core::config::RuntimeKind::Command)
    });
    let host_instruction = spec
        .env
        .iter()
        .find(|(k, _)| k == "RASCAL_INSTRUCTION_FILE")
        .map(|(_, v)| v.clone());
    let host_artifacts = spec
        .env
        .iter()
        .find(|(k, _)| k == crate::exec::env::ARTIFACTS_ENV)
        .map(|(_, v)| v.clone());
    let env = container_env(spec, &agent);
    // A runtime that names the instruction file by its host path gets the
    // container's.
    let argv: Vec<String> = spec
        .argv
        .iter()
        .map(|a| match &host_instruction {
            Some(h) if a == h => INSTRUCTION.to_string(),
            _ => a.clone(),
        })
        .collect();
    let mut binds = vec![format!("{}:{WORKSPACE}:rw", spec.workdir.display())];
    if let Some(h) = &host_instruction {
        binds.push(format!("{h}:{INSTRUCTION}:ro"));
    }
    if let Some(h) = &host_artifacts {
        binds.push(format!("{h}:{ARTIFACTS}:rw"));
    }
    if let Some((_, h)) = spec
        .env
        .iter()
        .find(|(k, _)| k == crate::exec::env::CRITERIA_ENV)
    {
        binds.push(format!("{h}:{CRITERIA}:ro"));
    }
    // Copy mode: no bind mounts; everything lives in the container's own
    // volume (uploaded before start, downloaded after exit).
    let copy_mode = copy::wanted(Some(&agent));
    let (binds, volumes, workdir) = if copy_mode {
        (None, Some(vec![copy::VOLUME.to_string()]), copy::WORKSPACE)
    } else {
        (Some(binds), None, WORKSPACE)
    };
    let memory = agent.memory.unwrap_or(DEFAULT_MEMORY).get() as i64;
    let labels = container_labels(spec, deadline_ms);
    let (uid, gid) = user_ids();
    ContainerCreateBody {
        image: spec.image.clone(),
        entrypoint: argv.first().map(|a| vec![a.clone()]),
        cmd: Some(argv.iter().skip(1).cloned().collect()),
        user: Some(format!("{uid}:{gid}")),
        working_dir: Some(workdir.into()),
        volumes,
        env: Some(env),
        labels: Some(labels),
        attach_stdin: Some(true),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        open_stdin: Some(true),
        stdin_once: Some(true),
        tty: Some(false),
        host_config: Some(HostConfig {
            binds,
            cap_drop: Some(vec!["ALL".into()]),
            security_opt: Some(vec!["no-new-privileges".into()]),
            memory: Some(memory),
            // No swap: past the limit the agent is OOM-killed, not slowed.
            memory_swap: Some(memory),
            nano_cpus: Some((agent.cpus.unwrap_or(DEFAULT_CPUS) * 1e9) as i64),
            pids_limit: Some(agent.pids.unwrap_or(DEFAULT_PIDS)),
            tmpfs: Some(HashMap::from([(
                "/tmp".to_string(),
                "rw,nosuid,nodev,mode=1777,size=512m".to_string(),
            )])),
            readonly_rootfs: Some(agent.read_only.unwrap_or(true)),
            // An allowlist's network is set by `egress` (`allowlist`
            // itself names no network, so nothing runs without it).
            network_mode: Some(
                agent
                    .network
                    .as_deref()
                    .unwrap_or(DEFAULT_NETWORK)
                    .to_string(),
            ),
            // A tiny init as PID 1 forwards SIGTERM to the agent and reaps zombies.
            init: Some(true),
            ..Default::default()
        }),
        ..Default::default()
    }
}
