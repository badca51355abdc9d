//! `rascal attach RUN`: pick up a docker run whose rascal died. The journal
//! says which candidates finished and how many output lines of each stream
//! landed; the containers are found on the engine by their labels, their
//! logs resume after those lines (none lost, none repeated), and their
//! results are recorded as if rascal had never gone away.

use crate::config::LauncherKind;
use crate::exec::launch::Resume;
use crate::git::workspace;
use crate::model::event::{CandidateInfo, RunEvent};
use crate::model::log::Stream;
use crate::model::verdict::{Layer, Report, Verdict};
use crate::pipeline::{PipelineError, PreparedRun, RunRequest};
use crate::store::Store;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What the journal knows about a run being resumed.
#[derive(Debug, Clone, Default)]
pub struct Resumption {
    /// Output lines already journalled, per candidate whose agent started.
    pub counts: BTreeMap<String, Resume>,
    /// Agent reports that had landed (the agent is done; only the layers
    /// remain).
    pub agent_reports: BTreeMap<String, Report>,
    /// Verdicts of candidates that had finished.
    pub finished: Vec<Verdict>,
    /// The task as it was loaded (with its criteria), when journalled.
    pub task: Option<crate::config::spec::Task>,
}

impl Resumption {
    /// Where candidate `id` resumes: None when its agent never started.
    pub fn of(&self, id: &str) -> Option<Resume> {
        self.counts.get(id).copied()
    }

    /// Fold a run's journal.
    pub fn from_events(events: &[RunEvent]) -> Resumption {
        let mut r = Resumption::default();
        for ev in events {
            match ev {
                RunEvent::TaskLoaded { task, .. } => r.task = Some((**task).clone()),
                RunEvent::CandidateStarted { candidate, .. } => {
                    r.counts.insert(candidate.clone(), Resume::default());
                }
                RunEvent::Log {
                    candidate,
                    stream,
                    text,
                    ..
                } => {
                    // rascal's own notes are not the agent's output.
                    if text.starts_with("rascal: ") {
                        continue;
                    }
                    if let Some(c) = r.counts.get_mut(candidate) {
                        match stream {
                            Stream::Stdout => c.stdout_lines += 1,
                            Stream::Stderr => c.stderr_lines += 1,
                        }
                    }
                }
                RunEvent::ReportLanded { candidate, report }
                    if report.layer == Layer::Agent && report.check == "agent" =>
                {
                    r.agent_reports
                        .insert(candidate.clone(), (**report).clone());
                }
                RunEvent::CandidateFinished { verdict, .. } => r.finished.push(*verdict),
                _ => {}
            }
        }
        r
    }
}

/// Prepare the rest of run `run` in the repository at `repo`. Blocking:
/// call it outside an async runtime.
pub fn prepare_attach(
    repo_path: &Path,
    run: &str,
    rascal_exe: PathBuf,
) -> Result<PreparedRun, PipelineError> {
    let repo = workspace::open(repo_path)?;
    let state = workspace::state_dir(&repo);
    let mut store = Store::open(&Store::path_in(&state))?;
    store.mark_interrupted()?;
    let events = store.events(run)?;
    let Some(RunEvent::RunStarted {
        base,
        instruction,
        launcher,
        candidates,
        ..
    }) = events.first().cloned()
    else {
        return Err(PipelineError::Usage(format!(
            "run `{run}` has no start record\n  hint: `rascal show {run}` prints what was recorded"
        )));
    };
    if events
        .iter()
        .any(|e| matches!(e, RunEvent::RunFinished { .. }))
    {
        return Err(PipelineError::Usage(format!(
            "run `{run}` has already finished; nothing to attach to\n  hint: `rascal show {run}` prints it"
        )));
    }
    if launcher != "docker" {
        return Err(PipelineError::Usage(format!(
            "run `{run}` used the `{launcher}` launcher: its agents stopped with the rascal that ran them, so there is nothing to reattach\n  hint: `rascal show {run}` prints what landed; run the task again"
        )));
    }
    if store.run_status(run)?.as_deref() == Some("running") {
        return Err(PipelineError::Usage(format!(
            "run `{run}` is still being run by a live rascal process\n  hint: watch it with `rascal show {run}`, or stop that process first"
        )));
    }
    let base_oid = git2::Oid::from_str(&base).map_err(|e| {
        PipelineError::Usage(format!(
            "run `{run}` records a bad base commit `{base}`: {e}"
        ))
    })?;
    let mut config = crate::git::base::load_config(&repo, base_oid)?;
    let resumption = Resumption::from_events(&events);
    // The same narrowing as when the run started (journalled with the task).
    if let Some(task) = &resumption.task {
        crate::pipeline::narrow_permissions(&mut config, task);
    }
    let finished: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::CandidateFinished { candidate, .. } => Some(candidate.as_str()),
            _ => None,
        })
        .collect();
    let mut pending: Vec<(CandidateInfo, crate::config::AgentConfig)> = Vec::new();
    for c in candidates {
        if finished.contains(&c.id.as_str()) {
            continue;
        }
        let agent = config.main.agents.get(&c.agent).cloned().ok_or_else(|| {
            PipelineError::Usage(format!(
                "agent `{}` of run `{run}` is not in .rascal/config.yaml at its base commit",
                c.agent
            ))
        })?;
        pending.push((c, agent));
    }
    // Without an engine the run stays interrupted, to be attached later
    // (rather than its candidates failing for want of an engine).
    let engine = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| PipelineError::Usage(format!("starting the async runtime: {e}")))?
        .block_on(crate::exec::launch::docker::connect());
    if let Err(e) = engine {
        return Err(PipelineError::Usage(format!(
            "cannot attach to run `{run}`: {e}"
        )));
    }
    store.resume_run(run)?;
    let mut request = RunRequest::new(
        repo_path.to_path_buf(),
        &instruction,
        Vec::new(),
        rascal_exe,
    );
    request.base = base;
    request.launcher = Some(LauncherKind::Docker);
    Ok(PreparedRun::resumed(
        run.to_string(),
        config,
        base_oid,
        workspace::workdir(&repo),
        state,
        pending,
        request,
        store,
        resumption,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(c: &str, stream: Stream, text: &str) -> RunEvent {
        RunEvent::Log {
            display: None,
            candidate: c.into(),
            stream,
            text: text.into(),
        }
    }

    #[test]
    fn counts_journalled_output_per_stream_without_rascals_notes() {
        let events = vec![
            RunEvent::CandidateStarted {
                candidate: "a".into(),
                command: "x".into(),
            },
            log("a", Stream::Stderr, "rascal: warning: $K is not set"),
            log("a", Stream::Stdout, "1"),
            log("a", Stream::Stderr, "e1"),
            log("a", Stream::Stdout, "2"),
            log("b", Stream::Stdout, "never started"),
        ];
        let r = Resumption::from_events(&events);
        assert_eq!(
            r.of("a"),
            Some(Resume {
                stdout_lines: 2,
                stderr_lines: 1
            })
        );
        assert_eq!(r.of("b"), None);
    }
}
