//! A run's one owner. A [`Session`] starts the pipeline on the current
//! runtime and holds what belongs to the run while it lives: its
//! cancellation, the channel of decisions taken while it runs, and its
//! outcome. It takes the human's decisions during the run and after it (a
//! retry then starts the candidate's next attempt, in the same journal).
//! The headless CLI and the TUI are its clients: they read its events and
//! pass decisions on; neither spawns a pipeline or prepares a retry itself.
//! What they read of the run or do to finish it (a diff, a log, a
//! preview, the finalize, the pull request) goes through the
//! [`RunHandle`] the session hands out.

use super::{execute_with, journal, record_decision, PipelineError, PreparedRun, RunOutcome};
use crate::RunHandle;
use rascal_core::model::decision::{Decision, DecisionKind};
use rascal_core::model::event::RunEvent;
use std::path::PathBuf;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// What became of a decision.
pub enum Decided {
    /// Passed to the running pipeline, which journals it (it comes back
    /// among the run's events).
    Sent,
    /// Recorded in the run's journal (the run is over): the event written.
    Recorded(RunEvent),
    /// A retry (or a combine) after the run: the candidate's next attempt
    /// (or the combined candidate) runs in the same journal, and its
    /// events arrive on this receiver.
    Retrying(mpsc::Receiver<RunEvent>),
}

/// One run, from its start (or from its record, for `attach`) to its end.
pub struct Session {
    repo: PathBuf,
    run: String,
    /// The run's read and finish side.
    handle: RunHandle,
    cancel: CancellationToken,
    /// To the running pipeline (closed once it is over, or when the run is
    /// another process's).
    decisions: mpsc::UnboundedSender<Decision>,
    /// The running pipeline, until its outcome is taken.
    pipeline: std::sync::Mutex<Option<JoinHandle<Result<RunOutcome, PipelineError>>>>,
    /// Whether a retry after the run starts here (not when attached to a
    /// run another rascal process owns).
    retries: bool,
    /// The rascal binary the run's agents are started with (the scripted
    /// runtime, the egress proxy): a retry's are started the same way.
    exe: PathBuf,
}

impl Session {
    /// Start `prepared` on the current tokio runtime. The run's events
    /// arrive on the returned receiver, which closes when the run is over.
    pub fn start(prepared: PreparedRun) -> (Session, mpsc::Receiver<RunEvent>) {
        let (tx, events) = journal::view_channel();
        let cancel = CancellationToken::new();
        let (decisions, rx) = mpsc::unbounded_channel();
        let (repo, run) = (prepared.repo_dir.clone(), prepared.run.clone());
        let handle = RunHandle::new(&repo, &run, &prepared.base.to_string());
        let exe = prepared.request.rascal_exe.clone();
        let pipeline = tokio::spawn(execute_with(prepared, tx, cancel.clone(), rx));
        let session = Session {
            repo,
            run,
            handle,
            cancel,
            decisions,
            pipeline: std::sync::Mutex::new(Some(pipeline)),
            retries: true,
            exe,
        };
        (session, events)
    }

    /// A session on the recorded run `run` of the repository at `repo`,
    /// whose base commit is `base`, which another rascal process runs (or
    /// ran): decisions are recorded in its journal, nothing is started
    /// here.
    pub fn recorded(repo: PathBuf, run: String, base: &str) -> Session {
        let (decisions, _) = mpsc::unbounded_channel();
        Session {
            handle: RunHandle::new(&repo, &run, base),
            repo,
            run,
            cancel: CancellationToken::new(),
            decisions,
            pipeline: std::sync::Mutex::new(None),
            retries: false,
            exe: PathBuf::new(),
        }
    }

    /// The run's id.
    pub fn run(&self) -> &str {
        &self.run
    }

    /// The run as a front end reads and finishes it (cheap to clone into
    /// a background task).
    pub fn handle(&self) -> RunHandle {
        self.handle.clone()
    }

    /// Cancelling this stops the run (and any retry started after it).
    pub fn cancellation(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Take decision `d`. While the run is `live` it goes to the pipeline;
    /// after it, a retry starts the candidate's next attempt, anything else
    /// is recorded.
    pub fn decide(&self, d: &Decision, live: bool) -> Result<Decided, PipelineError> {
        if live && self.decisions.send(d.clone()).is_ok() {
            return Ok(Decided::Sent);
        }
        if let (true, DecisionKind::Retry { feedback }, Some(c)) =
            (self.retries, &d.kind, &d.candidate)
        {
            let prepared = super::retry::prepare_retry(
                &self.repo,
                &self.run,
                c,
                feedback,
                &d.who,
                self.exe.clone(),
            )?;
            return Ok(Decided::Retrying(self.go_on(prepared)));
        }
        // A combine after the run: the combining agent's candidate joins
        // it, in the same journal. Only the process that owns the run
        // starts one.
        if let (false, DecisionKind::Combine { .. }) = (self.retries, &d.kind) {
            return Err(PipelineError::Usage(format!(
                "this screen watches run {}; combine it with `rascal combine {}` once it has finished",
                self.run, self.run
            )));
        }
        if let DecisionKind::Combine { .. } = &d.kind {
            let prepared =
                super::combine::prepare_combine(&self.repo, &self.run, &d.who, self.exe.clone())?;
            return Ok(Decided::Retrying(self.go_on(prepared)));
        }
        record_decision(&self.repo, &self.run, d.clone()).map(Decided::Recorded)
    }

    /// The finished run goes on with `prepared` (a retry, a combine): its
    /// events arrive on the returned receiver.
    fn go_on(&self, prepared: PreparedRun) -> mpsc::Receiver<RunEvent> {
        let (tx, events) = journal::view_channel();
        let (keep, rx) = mpsc::unbounded_channel::<Decision>();
        let cancel = self.cancel.clone();
        tokio::spawn(async move {
            // Nothing decides during a retry's run: the sender lives
            // as long as it does, so the pipeline waits for none.
            let _keep = keep;
            let _ = execute_with(prepared, tx, cancel, rx).await;
        });
        events
    }

    /// Wait for the run's outcome (None for a recorded run: nothing ran
    /// here).
    pub async fn outcome(&self) -> Option<Result<RunOutcome, PipelineError>> {
        let handle = self.pipeline.lock().ok()?.take()?;
        Some(match handle.await {
            Ok(r) => r,
            Err(e) => Err(PipelineError::Usage(format!("internal error: {e}"))),
        })
    }
}
