//! The decisions taken while a run is live: each journalled, a cancel
//! stopping its candidate, a retry's feedback queued for it.

use super::*;

/// Takes decisions while the run is live: journals each, cancels what a
/// cancel names, and queues a retry's feedback for its candidate.
pub(super) struct Decider {
    pub(super) journal: Journal,
    pub(super) cancel: CancellationToken,
    pub(super) tokens: BTreeMap<String, CancellationToken>,
    /// Every decision taken, for the run's verdict.
    pub(super) seen: Arc<std::sync::Mutex<Vec<Decision>>>,
    pub(super) waiting: HumanFeedback,
    /// Stop taking decisions live.
    pub(super) stop: CancellationToken,
}

impl Decider {
    /// Take decisions from `decisions` until it closes (or until `stop`,
    /// after what was already sent).
    pub(super) fn spawn(
        self,
        mut decisions: mpsc::UnboundedReceiver<Decision>,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                let d = tokio::select! {
                    d = decisions.recv() => d,
                    _ = self.stop.cancelled() => {
                        // Nothing more is taken live; what was already sent
                        // is still journalled (later senders fall back to
                        // the store).
                        decisions.close();
                        decisions.recv().await
                    }
                };
                let Some(d) = d else { break };
                self.take(d);
            }
        })
    }

    /// One decision: a retry's feedback waits for its candidate, a cancel
    /// stops its candidate (or the run), and it is journalled.
    fn take(&self, d: Decision) {
        if let (DecisionKind::Retry { feedback }, Some(c)) = (&d.kind, &d.candidate) {
            if let Ok(mut m) = self.waiting.lock() {
                m.insert(c.clone(), feedback.clone());
            }
        }
        if d.kind == DecisionKind::Cancel {
            match d.candidate.as_ref().and_then(|c| self.tokens.get(c)) {
                Some(t) => t.cancel(),
                None => self.cancel.cancel(),
            }
        }
        if let Ok(mut v) = self.seen.lock() {
            v.push(d.clone());
        }
        self.journal
            .emit(RunEvent::DecisionRecorded { decision: d });
    }
}
