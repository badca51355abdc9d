//! The journal writer: events are stored in the SQLite journal, in batches,
//! before they reach the subscriber (TUI or printer).

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
            if let Err(e) = store.append(&run, &batch) {
                if first_error.is_none() {
                    first_error = Some(e);
                }
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
