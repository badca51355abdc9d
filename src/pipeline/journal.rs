//! The journal writer: events are stored in the SQLite journal, in batches,
//! before they reach the subscriber (TUI or printer).
//!
//! A write that fails (disk full, read-only directory) ends the run: what
//! was not recorded is never shown, the agents are stopped (`cancel`), the
//! views are told the run was interrupted and why, and the run returns the
//! store's error (exit 2) — a verdict that could not be recorded is never
//! printed as if it had been.

use crate::model::event::RunEvent;
use crate::store::{Store, StoreError};
use tokio::sync::mpsc;

/// Sends events to the journal thread, which stores then forwards them.
#[derive(Clone)]
pub(crate) struct Journal {
    tx: std::sync::mpsc::Sender<RunEvent>,
}

impl Journal {
    pub(crate) fn emit(&self, ev: RunEvent) {
        let _ = self.tx.send(ev);
    }
}

pub(crate) fn spawn_journal(
    mut store: Store,
    run: String,
    subscriber: mpsc::UnboundedSender<RunEvent>,
    cancel: tokio_util::sync::CancellationToken,
) -> (Journal, std::thread::JoinHandle<Result<(), StoreError>>) {
    let (tx, rx) = std::sync::mpsc::channel::<RunEvent>();
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
            if first_error.is_some() {
                // The record is already incomplete: nothing more is shown.
                continue;
            }
            if let Err(e) = store.append(&run, &batch) {
                cancel.cancel();
                let _ = subscriber.send(RunEvent::RunInterrupted {
                    reason: format!(
                        "the run record could not be written, so the run was stopped: {}",
                        e.to_string().lines().next().unwrap_or("")
                    ),
                });
                first_error = Some(e);
                continue;
            }
            for ev in batch {
                let _ = subscriber.send(ev);
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    });
    (Journal { tx }, handle)
}
