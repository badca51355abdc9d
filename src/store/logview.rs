//! Log segments turned back into lines for a view (the headless printer,
//! `show`, the TUI): the segment's lines read from the candidate's log
//! file, checked against the journal, parsed into the agent's readable form
//! as they were live. A segment that cannot be read, or no longer matches,
//! is one line saying so — never silently nothing.

use crate::config::RuntimeKind;
use crate::model::event::RunEvent;
use crate::model::log::{Segment, Stream};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Reads segments of one run's candidates.
#[derive(Debug, Clone)]
pub struct LogView {
    state: PathBuf,
    runtimes: HashMap<String, RuntimeKind>,
}

impl LogView {
    /// For a repository whose run files are in `state` (`workspace::files_dir`).
    pub fn new(state: &Path) -> Self {
        LogView {
            state: state.to_path_buf(),
            runtimes: HashMap::new(),
        }
    }

    /// `candidate`'s lines are `runtime`'s output.
    pub fn runtime(&mut self, candidate: &str, runtime: RuntimeKind) {
        self.runtimes.insert(candidate.to_string(), runtime);
    }

    /// Learn the candidates' runtimes (from `RunStarted`).
    pub fn see(&mut self, ev: &RunEvent) {
        if let RunEvent::RunStarted { candidates, .. } = ev {
            for c in candidates {
                let rt = serde_json::from_value(serde_json::Value::String(c.runtime.clone()));
                if let Ok(rt) = rt {
                    self.runtimes.insert(c.id.clone(), rt);
                }
            }
        }
    }

    /// A view of `infos`' logs (their runtimes known).
    pub fn for_candidates(state: &Path, infos: &[crate::model::event::CandidateInfo]) -> Self {
        let mut v = LogView::new(state);
        for c in infos {
            if let Ok(rt) = serde_json::from_value(serde_json::Value::String(c.runtime.clone())) {
                v.runtime(&c.id, rt);
            }
        }
        v
    }

    /// `f` gets each of the segment's lines (the last `keep` of them) as a
    /// `RunEvent::Log`; returns how many lines were left out at the front.
    pub fn lines(&self, seg: &Segment, keep: usize, f: impl FnMut(RunEvent)) -> u64 {
        let skip = seg.lines.saturating_sub(keep as u64);
        self.range(seg, skip, seg.lines, f);
        skip
    }

    /// `f` gets the segment's lines `from..to` (counted in the segment).
    pub fn range(&self, seg: &Segment, from: u64, to: u64, mut f: impl FnMut(RunEvent)) {
        let runtime = self.runtimes.get(&seg.candidate).copied();
        let mut i = 0u64;
        let read = crate::store::logfile::each_line(&self.state, seg, |text| {
            if (from..to).contains(&i) {
                f(log_event(seg, runtime, text));
            }
            i += 1;
        });
        if let Err(e) = read {
            f(RunEvent::Log {
                candidate: seg.candidate.clone(),
                stream: Stream::Stderr,
                text: format!(
                    "rascal: {} lines of this log cannot be shown: {e}",
                    seg.lines
                ),
                display: None,
            });
        }
    }
}

fn log_event(seg: &Segment, runtime: Option<RuntimeKind>, text: &str) -> RunEvent {
    let display = runtime
        .filter(|rt| seg.stream == Stream::Stdout && crate::agents::events::parses(*rt))
        .and_then(|rt| crate::agents::events::parse_line(rt, text))
        .map(|evs| {
            evs.iter()
                .map(crate::agents::events::AgentEvent::display)
                .collect::<Vec<_>>()
                .join("  ")
        });
    RunEvent::Log {
        candidate: seg.candidate.clone(),
        stream: seg.stream,
        text: text.to_string(),
        display,
    }
}
