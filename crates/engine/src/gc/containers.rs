//! The Docker engine some run of this repository used, and this
//! repository's containers on it.

use super::GcError;
use crate::store::Store;
use rascal_exec::exec::launch::docker::{self, LABEL_CANDIDATE, LABEL_REPO, LABEL_RUN};
use std::path::Path;

/// The Docker engine, when some run of this repository used it.
pub(super) struct Engine {
    pub(super) rt: tokio::runtime::Runtime,
    pub(super) docker: bollard::Docker,
}

impl Engine {
    /// Connect when a recorded run used the docker launcher; without an
    /// engine, say so in `notes` (those runs' containers are not looked at).
    pub(super) fn connect_if_needed(
        store: &Store,
        notes: &mut Vec<String>,
    ) -> Result<Option<Engine>, GcError> {
        let launchers = store.launchers()?;
        if !launchers.values().any(|l| l == "docker") {
            return Ok(None);
        }
        let rt = match rascal_exec::exec::runtime() {
            Ok(rt) => rt,
            Err(e) => {
                notes.push(format!("containers were not looked at: {e}"));
                return Ok(None);
            }
        };
        match rt.block_on(docker::connect()) {
            Ok(docker) => Ok(Some(Engine { rt, docker })),
            Err(e) => {
                notes.push(format!(
                    "containers were not looked at: {}",
                    e.to_string().lines().next().unwrap_or("")
                ));
                Ok(None)
            }
        }
    }
}

/// A container of this repository on the engine.
pub(super) struct Container {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) run: String,
    pub(super) candidate: Option<String>,
    pub(super) state: String,
}

impl Container {
    /// Whether it runs (or is about to): then its run counts as running.
    pub(super) fn live(&self) -> bool {
        !matches!(self.state.as_str(), "exited" | "dead" | "removing")
    }
}

pub(super) fn containers(
    engine: &Engine,
    repo_dir: &Path,
    notes: &mut Vec<String>,
) -> Vec<Container> {
    let here = repo_dir.to_string_lossy().trim_end_matches('/').to_string();
    let list = match engine
        .rt
        .block_on(docker::list_rascal_containers(&engine.docker, None))
    {
        Ok(l) => l,
        Err(e) => {
            notes.push(format!("containers were not looked at: {e}"));
            return Vec::new();
        }
    };
    list.into_iter()
        .filter_map(|c| {
            let labels = c.labels.unwrap_or_default();
            if labels.get(LABEL_REPO).map(|r| r.trim_end_matches('/')) != Some(here.as_str()) {
                return None;
            }
            let id = c.id?;
            Some(Container {
                name: c
                    .names
                    .and_then(|n| n.into_iter().next())
                    .map(|n| n.trim_start_matches('/').to_string())
                    .unwrap_or_else(|| id[..id.len().min(12)].to_string()),
                id,
                run: labels.get(LABEL_RUN).cloned().unwrap_or_default(),
                candidate: labels.get(LABEL_CANDIDATE).cloned(),
                state: c.state.map(|s| s.to_string()).unwrap_or_default(),
            })
        })
        .collect()
}
