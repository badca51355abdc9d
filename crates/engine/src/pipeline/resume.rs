//! Where an interrupted run resumes: the journal says which candidates
//! finished and how many output lines of each stream landed; their logs
//! resume after those lines (none lost, none repeated), and their results
//! are recorded as if rascal had never gone away (see `attach`).

use rascal_core::model::event::RunEvent;
use rascal_core::model::summary::RunSummary;
use rascal_core::model::verdict::{Report, Verdict};
use rascal_exec::exec::launch::Resume;
use std::collections::BTreeMap;

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
    /// Their states (IMPOSSIBLE among them counts for the run's escalation).
    pub states: Vec<rascal_core::model::state::State>,
    /// The task as it was loaded (with its criteria), when journalled.
    pub task: Option<rascal_core::config::spec::Task>,
}

impl Resumption {
    /// Where candidate `id` resumes: None when its agent never started.
    pub fn of(&self, id: &str) -> Option<Resume> {
        self.counts.get(id).copied()
    }

    /// What the run's summary (the one fold of its journal) says about
    /// resuming it.
    pub fn from_events(events: &[RunEvent]) -> Resumption {
        let summary = RunSummary::from_events(events);
        let mut r = Resumption {
            task: summary.task.clone(),
            ..Resumption::default()
        };
        for c in &summary.candidates {
            if c.started {
                r.counts.insert(
                    c.id.clone(),
                    Resume {
                        stdout_lines: c.output_lines[0],
                        stderr_lines: c.output_lines[1],
                    },
                );
            }
            if let Some(report) = c.agent_report() {
                r.agent_reports.insert(c.id.clone(), report.clone());
            }
            if let Some(v) = c.verdict {
                r.finished.push(v);
                r.states.push(c.state);
            }
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rascal_core::model::event::CandidateInfo;
    use rascal_core::model::log::Stream;

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
        let info = |id: &str| CandidateInfo {
            id: id.into(),
            agent: id.into(),
            runtime: "command".into(),
            worktree: String::new(),
            unsandboxed: false,
        };
        let events = vec![
            RunEvent::RunStarted {
                run: "r".into(),
                repo: String::new(),
                base: String::new(),
                instruction: String::new(),
                launcher: "docker".into(),
                candidates: vec![info("a"), info("b")],
            },
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
