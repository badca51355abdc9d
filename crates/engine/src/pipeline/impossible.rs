//! An attempt's declaration that the task is impossible: a stale one is
//! cleared before the agent runs again; after it, the agent's
//! `impossible.md` is journalled (`RunEvent::DeclaredImpossible`) with the
//! report that fails the candidate, and its change is not judged (every
//! later layer is skipped). The retry policy never argues with it, the
//! comparator never picks it, finalize refuses it.

use crate::pipeline::candidate::CandidateJob;
use rascal_core::model::event::RunEvent;
use rascal_core::model::verdict::{Layer, Report};
use rascal_exec::agents;

/// Why the layers after the agent did not run.
pub(crate) const SKIPPED: &str = "skipped: the agent declared the task impossible";

impl CandidateJob {
    /// Before the agent of `attempt` runs: an earlier attempt's
    /// `impossible.md` is removed, so it cannot speak for this one. The
    /// errored agent report when it cannot be.
    pub(crate) fn clear_declaration(&self, attempt: u32) -> Option<Report> {
        let artifacts = agents::artifacts_dir(&self.state, &self.run, &self.info.id);
        let e = agents::impossible::clear(&artifacts).err()?;
        Some(
            Report::new(Layer::Agent, "agent")
                .errored(format!(
                    "could not remove the last attempt's {} before attempt {attempt}: {e}",
                    rascal_core::model::impossible::FILE
                ))
                .finish(),
        )
    }

    /// After the agent: its declaration, if it left one — journalled, its
    /// report landed and the later layers skipped. The reason, bounded.
    pub(crate) fn take_declaration(&self, reports: &mut Vec<Report>) -> Option<String> {
        let artifacts = agents::artifacts_dir(&self.state, &self.run, &self.info.id);
        let reason = agents::impossible::read(&artifacts)?;
        self.journal.emit(RunEvent::DeclaredImpossible {
            candidate: self.info.id.clone(),
            reason: reason.clone(),
        });
        self.land(rascal_core::model::impossible::report(&reason), reports);
        self.skip_layers(reports, SKIPPED);
        Some(reason)
    }
}
