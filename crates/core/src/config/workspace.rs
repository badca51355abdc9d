//! `workspace:` — how a container gets the candidate's files: bind-mounted
//! from this machine, or copied in before the agent starts and copied back
//! when it exits (for an engine on another machine, with no shared disk).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkspaceMode {
    /// Bind-mount the workspace (the engine shares this machine's disk).
    Mount,
    /// Upload the workspace as a tar, download the result: no bind mounts.
    Copy,
}

/// The mode a container runs in: the agent's (or the config's) setting,
/// else copy when `DOCKER_HOST` names an engine that is not a local socket.
pub fn resolve(setting: Option<WorkspaceMode>, docker_host: Option<&str>) -> WorkspaceMode {
    match setting {
        Some(m) => m,
        None if is_remote(docker_host) => WorkspaceMode::Copy,
        None => WorkspaceMode::Mount,
    }
}

/// Whether a `DOCKER_HOST` value names an engine reached over the network
/// (tcp, ssh, http): its disk is not this machine's.
pub fn is_remote(docker_host: Option<&str>) -> bool {
    match docker_host.map(str::trim) {
        None | Some("") => false,
        Some(h) => !(h.starts_with("unix://") || h.starts_with("npipe://") || h.starts_with('/')),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_is_automatic_for_network_engines_and_a_setting_wins() {
        use WorkspaceMode::*;
        for (host, want) in [
            (None, Mount),
            (Some(""), Mount),
            (Some("unix:///var/run/docker.sock"), Mount),
            (Some("/var/run/docker.sock"), Mount),
            (Some("tcp://10.0.0.5:2376"), Copy),
            (Some("ssh://builder@ci-1"), Copy),
            (Some("http://127.0.0.1:2375"), Copy),
        ] {
            assert_eq!(resolve(None, host), want, "{host:?}");
        }
        assert_eq!(resolve(Some(Mount), Some("tcp://h:2376")), Mount);
        assert_eq!(resolve(Some(Copy), None), Copy);
    }

    #[test]
    fn the_configs_workspace_applies_to_agents_that_set_none() {
        let cfg = crate::config::Config::from_texts(
            Some("launcher: docker\nworkspace: copy\nagents:\n  a: { runtime: command, command: [x] }\n  b: { runtime: command, command: [x], workspace: mount }\n"),
            None,
            None,
        )
        .unwrap();
        assert_eq!(cfg.main.agents["a"].workspace, Some(WorkspaceMode::Copy));
        assert_eq!(cfg.main.agents["b"].workspace, Some(WorkspaceMode::Mount));
        let e = crate::config::Config::from_texts(Some("workspace: rsync\n"), None, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("config.yaml:1"), "{e}");
    }
}
