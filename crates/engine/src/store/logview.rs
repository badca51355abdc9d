//! Log segments turned back into lines for a view (the headless printer,
//! `show`, the TUI): the segment's lines read from the candidate's log
//! file, checked against the journal, parsed into the agent's readable form
//! as they were live. A segment that cannot be read, or no longer matches,
//! is one line saying so — never silently nothing.

use rascal_core::config::RuntimeKind;
use rascal_core::model::event::RunEvent;
use rascal_core::model::log::{Segment, Stream};
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

    /// Learn the candidates' runtimes (from `RunStarted`, and
    /// `CandidateAdded` for one that joined later).
    pub fn see(&mut self, ev: &RunEvent) {
        let candidates = match ev {
            RunEvent::RunStarted { candidates, .. } => candidates.as_slice(),
            RunEvent::CandidateAdded { candidate, .. } => std::slice::from_ref(candidate),
            _ => return,
        };
        for c in candidates {
            let rt = serde_json::from_value(serde_json::Value::String(c.runtime.clone()));
            if let Ok(rt) = rt {
                self.runtimes.insert(c.id.clone(), rt);
            }
        }
    }

    /// A view of `infos`' logs (their runtimes known).
    pub fn for_candidates(
        state: &Path,
        infos: &[rascal_core::model::event::CandidateInfo],
    ) -> Self {
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
        self.each(seg, from, to, |stream, text, display| {
            f(RunEvent::Log {
                candidate: seg.candidate.clone(),
                stream,
                text: text.to_string(),
                display,
            })
        });
    }

    /// `f` gets each of the segment's lines `from..to`: its stream, text and
    /// readable form (when the runtime's events parse). A segment that
    /// cannot be read is one line saying so.
    pub fn each(
        &self,
        seg: &Segment,
        from: u64,
        to: u64,
        mut f: impl FnMut(Stream, &str, Option<String>),
    ) {
        let runtime =
            self.runtimes.get(&seg.candidate).copied().filter(|rt| {
                seg.stream == Stream::Stdout && rascal_exec::agents::events::parses(*rt)
            });
        let mut i = 0u64;
        let read = crate::store::logfile::each_line(&self.state, seg, |text| {
            if (from..to).contains(&i) {
                f(seg.stream, text, runtime.and_then(|rt| display(rt, text)));
            }
            i += 1;
        });
        if let Err(e) = read {
            let note = format!(
                "rascal: {} lines of this log cannot be shown: {e}",
                seg.lines
            );
            f(Stream::Stderr, &note, None);
        }
    }
}

/// The readable form of a line of `runtime`'s event stream.
fn display(runtime: RuntimeKind, text: &str) -> Option<String> {
    rascal_exec::agents::events::parse_line(runtime, text).map(|evs| {
        evs.iter()
            .map(rascal_exec::agents::events::AgentEvent::display)
            .collect::<Vec<_>>()
            .join("  ")
    })
}
