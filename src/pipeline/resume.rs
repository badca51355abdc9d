//! `rascal attach RUN`: pick up a docker run whose rascal died. The journal
//! says which candidates finished and how many output lines of each stream
//! landed; the containers are found on the engine by their labels, their
//! logs resume after those lines (none lost, none repeated), and their
//! results are recorded as if rascal had never gone away.

use crate::exec::launch::Resume;
use crate::model::event::RunEvent;
use crate::model::log::Stream;
use crate::model::verdict::{Layer, Report, Verdict};
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
