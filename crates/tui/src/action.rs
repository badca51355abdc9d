//! Everything the TUI can do, as values: keys, mouse, run events and timers
//! all become an `Action`, and `update` is the only place state changes.

use rascal_core::model::event::RunEvent;

/// A line read from a log file: its stream, raw text and readable form.
pub type LogLineRead = (rascal_core::model::log::Stream, String, Option<String>);

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A run event arrived at time `at_ms` (wall clock injected for tests).
    Run(Box<RunEvent>, i64),
    /// Lines of a candidate's log file from line `first`: stream, raw
    /// text and readable form.
    LogLoaded {
        candidate: String,
        first: u64,
        lines: Vec<LogLineRead>,
    },
    /// The shell searched a candidate's log file lines `from..upto` for
    /// `query`: the matching lines' numbers (at most the cap; `more` past
    /// it), and the last matches' lines from match number `first` on
    /// (counted among this search's matches).
    LogSearched {
        candidate: String,
        query: String,
        from: u64,
        upto: u64,
        ring_from: u64,
        hits: Vec<u64>,
        more: u64,
        first: usize,
        lines: Vec<LogLineRead>,
    },
    /// Lines of matches `first..` of the whole-log filter `query`.
    FoundLoaded {
        candidate: String,
        query: String,
        first: usize,
        lines: Vec<LogLineRead>,
    },
    /// Time passed (spinner, elapsed time).
    Tick(i64),
    Resize(u16, u16),
    Quit,
    ForceQuit,
    FocusNext,
    FocusPrev,
    FocusCandidate(usize),
    LayerNext,
    LayerPrev,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Follow,
    Open,
    Back,
    Help,
    Filter,
    Diff,
    Compare,
    ToggleSideBySide,
    /// Diff screens: open the search prompt; the next / previous match.
    Search,
    NextMatch,
    PrevMatch,
    /// Diff screens: scroll long lines left / right.
    ScrollLeft,
    ScrollRight,
    /// Raw event lines ⇄ readable log lines.
    ToggleRawLogs,
    NextHunk,
    PrevHunk,
    NextFile,
    PrevFile,
    Override,
    Escalate,
    Retry,
    /// Hand the best passing candidates to the combining agent (`C` in
    /// compare, `rascal combine`).
    Combine,
    /// Choose the focused candidate as the one to finalize.
    Select,
    /// A contested run's question: which candidate is right here.
    Answer,
    /// Commit the selected candidate on a branch (confirmed first).
    Finalize,
    /// Open the pull request of the finalized branch with `gh`.
    OpenPr,
    /// Open the focused candidate's workspace in `$EDITOR` or a shell.
    Jump(crate::jump::JumpKind),
    /// Ask what to copy of the focused candidate (path, tree id, diff).
    Copy,
    /// The shell found files in the workspace that run code when opened:
    /// ask before jumping.
    JumpHazards(crate::jump::Jump, Vec<String>),
    /// The shell came back from a jump or a copy: what to say.
    Said(String),
    /// Flip the open dialog's option (override: with skipped; finalize:
    /// open the PR too).
    Toggle,
    CancelCandidate,
    CancelRun,
    /// Text typed into the open dialog or filter.
    Input(char),
    Backspace,
    Submit,
    /// A choice key in a dialog that offers choices (quit: stop / leave).
    Choose(char),
    /// Mouse: click at a cell, wheel up/down at a cell.
    Click(u16, u16),
    Scroll(i32),
    /// The shell finished loading a candidate's diff against the base.
    DiffLoaded {
        candidate: String,
        text: String,
    },
    /// The shell could read the candidate's change neither from its tree
    /// nor from its workspace: why.
    DiffUnreadable {
        candidate: String,
        why: String,
    },
    /// The shell could not read candidate A's or B's change: why.
    CompareUnreadable {
        a: String,
        b: String,
        why: String,
    },
    /// The shell finished loading candidate A's change against candidate B's.
    CompareLoaded {
        a: String,
        b: String,
        text: String,
    },
    /// Compare: the evidence pane on or off.
    Evidence,
    /// The shell read a test's source from its author's change (or why
    /// not).
    TestSourceLoaded {
        index: usize,
        found: Result<crate::test_source::TestSource, String>,
    },
    /// The shell read what finalizing would do (or why it cannot say).
    FinalizePreviewed(Result<rascal_core::model::preview::Preview, String>),
    /// The shell finalized: what to say, or why it was refused.
    FinalizeDone(Result<String, String>),
    /// `gh` opened the pull request (its output), or why not.
    PrOpened(Result<String, String>),
    /// The `notify:` command failed: why, in one line.
    NotifyFailed(String),
    /// The plan screen: keep / drop the selected criterion.
    PlanToggle,
    /// The plan screen: edit the selected criterion's description or
    /// check, or write a new one.
    PlanEdit(crate::plan::PlanField),
    /// The plan screen: the selected criterion required ⇄ optional.
    PlanOptional,
    /// The plan screen: approve the kept criteria; the candidates start.
    PlanApprove,
    /// The plan screen: save the kept criteria as a spec in the repository.
    PlanSave,
}
