//! The loop's background work: logs, searches, diffs, tests' sources, a
//! finalize's preview and the finalize itself, read or done off the UI
//! thread and sent back to the loop as actions.

use super::*;

/// Effects that read or write off the UI thread: what they load comes
/// back to the loop as an action.
pub(super) struct Background<'a> {
    pub(super) shell: &'a Shell,
    pub(super) loaded: &'a mpsc::UnboundedSender<Action>,
}

impl Background<'_> {
    /// Read a candidate's log file lines `from..from + count`.
    pub(super) fn load_log(&self, app: &App, candidate: String, from: u64, count: u64) {
        let Some(c) = app.candidates.iter().find(|c| c.info.id == candidate) else {
            return;
        };
        let (spans, info) = (c.logs.spans(from, count), c.info.clone());
        let (run, tx) = (self.shell.run.clone(), self.loaded.clone());
        tokio::task::spawn_blocking(move || {
            let lines = crate::logread::window(&run, &info, spans);
            let _ = tx.send(Action::LogLoaded {
                candidate,
                first: from,
                lines,
            });
        });
    }

    /// Search a candidate's log file lines `from..upto` for `query` (the
    /// whole-log filter).
    pub(super) fn search_log(
        &self,
        app: &App,
        candidate: String,
        query: String,
        (from, upto): (u64, u64),
        ring_from: u64,
    ) {
        let Some(c) = app.candidates.iter().find(|c| c.info.id == candidate) else {
            return;
        };
        let spans = c.logs.spans(from, upto.saturating_sub(from));
        let (run, tx, info) = (self.shell.run.clone(), self.loaded.clone(), c.info.clone());
        tokio::task::spawn_blocking(move || {
            let found = crate::logread::search(&run, &info, from, spans, &query);
            let _ = tx.send(Action::LogSearched {
                candidate,
                query,
                from,
                upto,
                ring_from,
                hits: found.hits,
                more: found.more,
                first: found.first,
                lines: found.lines,
            });
        });
    }

    /// Read the log file lines of the whole-log filter's matches `first..`.
    pub(super) fn load_found(
        &self,
        app: &App,
        candidate: String,
        query: String,
        first: usize,
        lines: Vec<u64>,
    ) {
        let Some(c) = app.candidates.iter().find(|c| c.info.id == candidate) else {
            return;
        };
        let wanted = c.logs.spans_of(&lines);
        let (run, tx, info) = (self.shell.run.clone(), self.loaded.clone(), c.info.clone());
        tokio::task::spawn_blocking(move || {
            let lines = crate::logread::chosen(&run, &info, wanted);
            let _ = tx.send(Action::FoundLoaded {
                candidate,
                query,
                first,
                lines,
            });
        });
    }

    /// Run `read` off the event loop on the run; send what it answers back
    /// as an action.
    fn read_changes(&self, read: impl FnOnce(&RunHandle) -> Action + Send + 'static) {
        let run = self.shell.run.clone();
        let tx = self.loaded.clone();
        tokio::task::spawn_blocking(move || {
            let _ = tx.send(read(&run));
        });
    }

    /// Read a candidate's diff against the base.
    pub(super) fn load_diff(&self, app: &App, id: String) {
        let Some(change) = app.change(&id) else {
            return;
        };
        self.read_changes(move |run| match run.diff(&change) {
            Ok(text) => Action::DiffLoaded {
                candidate: id,
                text,
            },
            Err(why) => Action::DiffUnreadable {
                candidate: id,
                why: why.to_string(),
            },
        });
    }

    /// Read how two candidates' changes differ.
    pub(super) fn load_compare(&self, app: &App, a: String, b: String) {
        let (Some(ca), Some(cb)) = (app.change(&a), app.change(&b)) else {
            return;
        };
        self.read_changes(move |run| match run.compare(&ca, &cb) {
            Ok(text) => Action::CompareLoaded { a, b, text },
            Err(why) => Action::CompareUnreadable {
                a,
                b,
                why: why.to_string(),
            },
        });
    }

    /// Read test `index` (`name`, by `author`) from its author's change.
    pub(super) fn load_test_source(&self, app: &App, index: usize, author: String, name: String) {
        let change = app.change(&author);
        self.read_changes(move |run| {
            let found = change
                .ok_or_else(|| format!("{author} is not a candidate of this run"))
                .and_then(|c| run.changed_files(&c).map_err(|e| e.to_string()))
                .and_then(|files| {
                    crate::test_source::find(&files, &name).ok_or_else(|| {
                        format!(
                            "no function named `{}` in the {} files {author}'s change wrote",
                            crate::test_source::function_name(&name),
                            files.len()
                        )
                    })
                });
            Action::TestSourceLoaded { index, found }
        });
    }

    /// Read what finalizing this candidate would do.
    pub(super) fn preview_finalize(&self, candidate: String) {
        let (run, tx) = (self.shell.run.clone(), self.loaded.clone());
        tokio::task::spawn_blocking(move || {
            let r = run.preview(&candidate).map_err(|e| e.to_string());
            let _ = tx.send(Action::FinalizePreviewed(r));
        });
    }

    /// Commit the selected candidate on its branch, then open the pull
    /// request when `open_pr`.
    pub(super) fn finalize(&self, open_pr: bool) {
        let (run, tx) = (self.shell.run.clone(), self.loaded.clone());
        let clock = self.shell.clock;
        tokio::task::spawn_blocking(move || {
            let done = run.finalize(open_pr).map_err(|e| e.to_string()).map(|out| {
                let (message, event) = crate::finalize::said(out);
                if let Some(ev) = event {
                    let _ = tx.send(Action::Run(Box::new(ev), clock()));
                }
                message
            });
            let _ = tx.send(Action::FinalizeDone(done));
        });
    }

    /// Open the pull request of the finalized branch with `gh`.
    pub(super) fn open_pr(&self, app: &App) {
        let Some(f) = app.summary.finalized.clone() else {
            return;
        };
        let (run, tx) = (self.shell.run.clone(), self.loaded.clone());
        let clock = self.shell.clock;
        tokio::task::spawn_blocking(move || {
            let r = run.open_pr(&f).map_err(|e| e.to_string()).map(|(out, ev)| {
                if let Some(ev) = ev {
                    let _ = tx.send(Action::Run(Box::new(ev), clock()));
                }
                out
            });
            let _ = tx.send(Action::PrOpened(r));
        });
    }
}
