//! `rascal doctor`: is a Docker engine reachable (and which version), can
//! rascal close the host to its agents' internal networks, and which rascal containers on it belong to runs this repository's store no
//! longer has (removable with `--remove`) or to interrupted runs (resumable
//! with `rascal attach`).

pub(crate) mod agents;
pub(crate) mod checks;
pub(crate) mod firewall;
pub(crate) mod kubernetes;
pub(crate) mod sandbox;

// What callers outside the engine use (the CLI, the TUI, tests).
pub use agents::agent_checks;
pub use agents::agent_lines;
pub use agents::images;
pub use agents::versions;
pub use checks::lines as check_lines;
pub use checks::probe;
pub use kubernetes::diagnose as diagnose_kubernetes;
pub use sandbox::lines as sandbox_lines;

use crate::store::Store;
use rascal_exec::exec::launch::docker::{self, LABEL_CANDIDATE, LABEL_REPO, LABEL_RUN};
use std::path::Path;

/// What doctor found: lines to print and the exit code (0 healthy, 1 not).
pub struct Diagnosis {
    pub lines: Vec<String>,
    pub exit_code: i32,
}

/// Examine the engine and the containers of the repository at `repo_dir`
/// whose store is `store`; remove orphans when `remove` is set.
pub async fn diagnose(store: &Store, repo_dir: &Path, remove: bool) -> Diagnosis {
    let mut lines = Vec::new();
    let engine = match docker::connect().await {
        Ok(d) => d,
        Err(e) => {
            lines.push(format!("docker: {e}"));
            return Diagnosis {
                lines,
                exit_code: 1,
            };
        }
    };
    match engine.version().await {
        Ok(v) => lines.push(format!(
            "docker: engine {} (API {}, client speaks {}) at {}",
            v.version.unwrap_or_default(),
            v.api_version.unwrap_or_default(),
            engine.client_version(),
            docker::engine_address()
        )),
        Err(e) => {
            lines.push(format!(
                "docker: the engine at {} did not say its version: {e}",
                docker::engine_address()
            ));
            return Diagnosis {
                lines,
                exit_code: 1,
            };
        }
    }
    lines.push(firewall::firewall_line(&rascal_exec::egress::firewall::Firewall::default()).await);
    let containers = match docker::list_rascal_containers(&engine, None).await {
        Ok(c) => c,
        Err(e) => {
            lines.push(format!("docker: {e}"));
            return Diagnosis {
                lines,
                exit_code: 1,
            };
        }
    };
    let here = repo_dir.to_string_lossy().into_owned();
    let mut orphans = 0;
    let mut exit_code = 0;
    let mut mine = 0;
    for c in &containers {
        let labels = c.labels.clone().unwrap_or_default();
        if labels.get(LABEL_REPO) != Some(&here) {
            continue;
        }
        mine += 1;
        let run = labels.get(LABEL_RUN).cloned().unwrap_or_default();
        let candidate = labels.get(LABEL_CANDIDATE).cloned().unwrap_or_default();
        let id = c.id.clone().unwrap_or_default();
        let short = &id[..id.len().min(12)];
        let state = c.state.map(|s| s.to_string()).unwrap_or_default();
        let status = store.run_status(&run).ok().flatten();
        match status.as_deref() {
            None => {
                orphans += 1;
                if remove {
                    match docker::remove(&engine, &id).await {
                        Ok(()) => lines.push(format!(
                            "removed container {short} ({state}) of run {run} / {candidate}: the run is not in this repository's store"
                        )),
                        Err(e) => {
                            exit_code = 1;
                            lines.push(format!("could not remove container {short}: {e}"));
                        }
                    }
                } else {
                    exit_code = 1;
                    lines.push(format!(
                        "orphan: container {short} ({state}) of run {run} / {candidate}: the run is not in this repository's store"
                    ));
                }
            }
            Some("interrupted") => lines.push(format!(
                "container {short} ({state}) of interrupted run {run} / {candidate}\n  hint: `rascal attach {run}` records its result"
            )),
            Some(s) => lines.push(format!(
                "container {short} ({state}) of {s} run {run} / {candidate}"
            )),
        }
    }
    if mine == 0 {
        lines.push("no rascal containers of this repository on the engine".into());
    } else if orphans > 0 && !remove {
        lines.push(format!(
            "{}\n  hint: `rascal doctor --remove` removes them",
            rascal_core::text::plural(orphans as u64, "orphan container")
        ));
    }
    Diagnosis { lines, exit_code }
}
