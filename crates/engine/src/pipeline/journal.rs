//! The journal writer: events are stored in the SQLite journal, in batches,
//! before they reach the subscriber (TUI or printer).
//!
//! Bounded end to end: log segments (the bulk) take a slot before they are
//! queued and give it back once stored and passed on, and the subscriber's
//! queue is bounded, so a view or a store that falls behind slows the
//! agents' pipes down instead of growing a queue; rascal's own events (a
//! handful per layer) are never held up.
//!
//! A write that fails (disk full, read-only directory) ends the run: what
//! was not recorded is never shown, the agents are stopped (`cancel`), the
//! views are told the run was interrupted and why, and the run returns the
//! store's error (exit 2) — a verdict that could not be recorded is never
//! printed as if it had been.

use crate::store::{Store, StoreError};
use rascal_core::model::event::RunEvent;
use std::sync::Arc;
use tokio::sync::{mpsc, Semaphore};

/// Log segments queued for the journal at most.
const LOG_SLOTS: usize = 64;
/// Events queued for the views at most.
pub const VIEW_QUEUE: usize = 1024;

/// A bounded queue of events for a view.
pub fn view_channel() -> (mpsc::Sender<RunEvent>, mpsc::Receiver<RunEvent>) {
    mpsc::channel(VIEW_QUEUE)
}

enum Msg {
    Event(RunEvent),
    /// A log segment, holding a slot.
    Log(RunEvent),
    /// A candidate's log could not be written: the record is incomplete.
    Failed(crate::store::logfile::LogFileError),
}

/// Sends events to the journal thread, which stores then forwards them.
#[derive(Clone)]
pub(crate) struct Journal {
    tx: std::sync::mpsc::Sender<Msg>,
    slots: Arc<Semaphore>,
}

impl Journal {
    pub(crate) fn emit(&self, ev: RunEvent) {
        let _ = self.tx.send(Msg::Event(ev));
    }

    /// Queue a log segment, waiting for a slot while the journal is behind.
    pub(crate) async fn emit_log(&self, ev: RunEvent) {
        if let Ok(permit) = self.slots.acquire().await {
            permit.forget();
        }
        let _ = self.tx.send(Msg::Log(ev));
    }

    /// A log write failed: the run stops as when the journal cannot be
    /// written.
    pub(crate) fn failed(&self, e: crate::store::logfile::LogFileError) {
        let _ = self.tx.send(Msg::Failed(e));
    }
}

pub(crate) fn spawn_journal(
    mut store: Store,
    run: String,
    subscriber: mpsc::Sender<RunEvent>,
    cancel: tokio_util::sync::CancellationToken,
) -> (Journal, std::thread::JoinHandle<Result<(), StoreError>>) {
    let (tx, rx) = std::sync::mpsc::channel::<Msg>();
    let slots = Arc::new(Semaphore::new(LOG_SLOTS));
    let freed = slots.clone();
    let handle = std::thread::spawn(move || {
        let mut first_error = None;
        while let Ok(ev) = rx.recv() {
            let mut batch = vec![ev];
            while batch.len() < 1024 {
                match rx.try_recv() {
                    Ok(ev) => batch.push(ev),
                    Err(_) => break,
                }
            }
            let logs = batch.iter().filter(|m| matches!(m, Msg::Log(_))).count();
            let mut events = Vec::with_capacity(batch.len());
            let mut failed = None;
            for m in batch {
                match m {
                    Msg::Event(ev) | Msg::Log(ev) => events.push(ev),
                    Msg::Failed(e) => failed = failed.or(Some(e)),
                }
            }
            if first_error.is_some() {
                // The record is already incomplete: nothing more is shown.
                freed.add_permits(logs);
                continue;
            }
            let stored = match failed {
                // What came before the failure is kept; nothing after it.
                Some(e) => store.append(&run, &events).and(Err(StoreError::Log(e))),
                None => store.append(&run, &events),
            };
            if let Err(e) = stored {
                cancel.cancel();
                let _ = subscriber.blocking_send(RunEvent::RunInterrupted {
                    reason: format!(
                        "the run record could not be written, so the run was stopped: {}",
                        e.to_string().lines().next().unwrap_or("")
                    ),
                });
                first_error = Some(e);
                freed.add_permits(logs);
                continue;
            }
            for ev in events {
                // A view that has gone (the TUI quit) takes nothing more.
                let _ = subscriber.blocking_send(ev);
            }
            freed.add_permits(logs);
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    });
    (Journal { tx, slots }, handle)
}
