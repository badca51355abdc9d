//! The TUI's state: a pure fold of `RunEvent`s (what the run is doing) plus
//! UI state (focus, screen, dialog, scroll). Nothing here does I/O or reads
//! the clock; time arrives inside actions.

use super::decision::Decision;
use super::diff::Diff;
use super::highlight::Highlighter;
use super::logbuf::LogBuf;
use super::theme::Theme;
use rascal_core::model::clock::CandidateClock;
use rascal_core::model::decision::Blockers;
use rascal_core::model::event::{CandidateInfo, RunEvent};
use rascal_core::model::preview::Preview;
use rascal_core::model::state::State;
use rascal_core::model::summary::{CandidateSummary, RunSummary};
use rascal_core::model::verdict::{Layer, Report, Status, Verdict};
use rascal_engine::changes::Change;
use std::collections::HashMap;

mod apply;
mod candidate;

pub use candidate::Candidate;

/// The layers in a candidate's strip, in order.
pub const STRIP: [Layer; 5] = [
    Layer::Agent,
    Layer::Guardrails,
    Layer::Permissions,
    Layer::Criteria,
    Layer::Review,
];

/// Short names for the strip.
pub fn strip_name(l: Layer) -> &'static str {
    match l {
        Layer::Agent => "agent",
        Layer::Guardrails => "guard",
        Layer::Permissions => "perm",
        Layer::Criteria => "crit",
        Layer::Review => "review",
        Layer::Compare => "compare",
    }
}

/// `2 skipped not accepted (perm permissions, …) · 1 failing (guard build)`.
pub fn blockers_text(b: &rascal_core::model::decision::Blockers) -> String {
    let names = |list: &[(rascal_core::model::verdict::Layer, String)]| {
        let mut v: Vec<String> = list
            .iter()
            .take(3)
            .map(|(l, c)| format!("{} {}", strip_name(*l), c))
            .collect();
        if list.len() > 3 {
            v.push("…".into());
        }
        v.join(", ")
    };
    let mut parts = Vec::new();
    if !b.failing.is_empty() {
        parts.push(format!(
            "{} failing ({})",
            b.failing.len(),
            names(&b.failing)
        ));
    }
    if !b.skipped.is_empty() {
        parts.push(format!(
            "{} skipped not accepted ({})",
            b.skipped.len(),
            names(&b.skipped)
        ));
    }
    parts.join(" · ")
}

/// What the shell knows about the run beyond its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunMeta {
    /// `single` or `compare`.
    pub strategy: String,
    /// Layers configured for this run; others show as off.
    pub layers_on: Vec<Layer>,
    /// Some candidates run in containers that may outlive rascal.
    pub detachable: bool,
    /// Watching a run another process drives (`rascal attach`): quitting
    /// leaves it running.
    pub attached: bool,
    /// `combine:` is configured: `C` in compare starts the combining agent.
    pub combine: bool,
}

impl Default for RunMeta {
    fn default() -> Self {
        RunMeta {
            strategy: "compare".into(),
            layers_on: STRIP.to_vec(),
            detachable: false,
            attached: false,
            combine: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Pending,
    Running,
    Pass,
    Warn,
    Fail,
    Overridden,
    Off,
}

impl Mark {
    /// Every mark, in the order the help's legend lists them.
    pub const ALL: [Mark; 7] = [
        Mark::Pending,
        Mark::Running,
        Mark::Pass,
        Mark::Warn,
        Mark::Fail,
        Mark::Overridden,
        Mark::Off,
    ];

    /// What the mark means (the help's legend).
    pub fn meaning(self) -> &'static str {
        match self {
            Mark::Pending => "pending",
            Mark::Running => "running",
            Mark::Pass => "pass",
            Mark::Warn => "warn",
            Mark::Fail => "fail",
            Mark::Overridden => "overridden",
            Mark::Off => "off/skipped",
        }
    }

    pub fn glyph(self, spinner: usize) -> &'static str {
        const SPIN: [&str; 8] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧"];
        match self {
            Mark::Pending => "○",
            Mark::Running => SPIN[spinner % SPIN.len()],
            Mark::Pass => "✓",
            Mark::Warn => "!",
            Mark::Fail => "✗",
            Mark::Overridden => "⊘",
            Mark::Off => "–",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunState {
    Starting,
    Running,
    Finished { verdict: Verdict, exit_code: i32 },
    Interrupted(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Dashboard,
    Detail,
    Diff,
    Compare,
    /// Plan, then execute: the planner's criteria, to approve before the
    /// candidates start.
    Plan,
}

impl Screen {
    pub fn name(self) -> &'static str {
        match self {
            Screen::Dashboard => "dashboard",
            Screen::Detail => "layer detail",
            Screen::Diff => "diff",
            Screen::Compare => "compare",
            Screen::Plan => "plan",
        }
    }
}

/// An open dialog and its text field.
#[derive(Debug, Clone, PartialEq)]
pub enum Dialog {
    Override {
        candidate: String,
        layer: Layer,
        check: String,
        rule: Option<String>,
        input: String,
        error: Option<String>,
        /// What would still keep the candidate from passing once this
        /// override is recorded.
        left: Blockers,
        /// Also accept, in the same step, every check that was skipped.
        with_skipped: bool,
    },
    Escalate {
        candidate: String,
        input: String,
        error: Option<String>,
    },
    Retry {
        candidate: String,
        input: String,
        error: Option<String>,
    },
    Select {
        candidate: String,
        input: String,
        /// Why it did not pass: selecting it then needs a reason.
        refusal: Option<String>,
        /// A combined candidate's lines of new code (in no candidate it
        /// was combined from): selecting it then needs a reason too.
        new_code: Option<String>,
        error: Option<String>,
    },
    Finalize(FinalizeDialog),
    /// Cancel one candidate (Some) or the whole run (None).
    Cancel {
        candidate: Option<String>,
    },
    Quit,
    /// Test `index` of the agreement matrix: its source as its author
    /// wrote it (None while it is read; why not when it cannot be),
    /// scrolled to `scroll`; `n`/`p` go to the next/previous test.
    TestSource {
        index: usize,
        found: Option<Result<crate::test_source::TestSource, String>>,
        scroll: usize,
    },
    /// `y`: what of the candidate to copy to the clipboard.
    Copy {
        candidate: String,
    },
    /// A contested run's question: the tests that separate the candidates
    /// (`lines`); a digit says which of `candidates` is right here.
    Question {
        candidates: Vec<String>,
        /// What it rests on (`Ranking::question_lead`).
        lead: &'static str,
        lines: Vec<String>,
    },
    /// The workspace has files that run code when opened: go on anyway?
    Hazards {
        jump: crate::jump::Jump,
        hazards: Vec<String>,
    },
}

/// Finalize: what would be committed, confirmed before it is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FinalizeDialog {
    pub candidate: String,
    /// Nothing is selected: confirming selects `candidate` first.
    pub select_first: bool,
    /// Why `candidate` cannot be finalized as it stands (it did not pass).
    pub refusal: Option<String>,
    /// Branch, commit message and PR body, once the shell read them.
    pub preview: Option<Preview>,
    /// First row of the preview shown.
    pub scroll: usize,
    /// Also open the pull request with `gh`.
    pub open_pr: bool,
    /// Finalizing now.
    pub busy: bool,
    pub error: Option<String>,
}

/// The diff view of one candidate against the base.
#[derive(Debug, Clone, Default)]
pub struct DiffView {
    pub candidate: String,
    pub file: usize,
    pub scroll: usize,
    pub side_by_side: bool,
    /// The line an issue jumped to (file, line): marked, with
    /// [`DiffView::CONTEXT`] lines shown above it.
    pub mark: Option<(usize, usize)>,
}

impl DiffView {
    /// Lines shown above the line an issue jumps to.
    pub const CONTEXT: usize = 4;

    /// Show line `line` of file `file`, marked, a few lines below the top.
    pub fn jump(&mut self, file: usize, line: usize) {
        self.file = file;
        self.scroll = line.saturating_sub(Self::CONTEXT);
        self.mark = Some((file, line));
    }
}

pub use super::search::Search;
pub use rascal_core::model::ranking::Ranking;

/// The compare view's evidence pane: the whole ranking with its reasons,
/// the agreement matrix and the similarity, scrolled to `scroll` rows
/// (`Enter` shows the matrix's tests' source).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Evidence {
    pub scroll: usize,
}

pub struct App {
    pub meta: RunMeta,
    /// The one fold of the run's events (shared with the printer, `show`,
    /// reports and reattach); candidates' verdicts and marks come from it.
    pub summary: RunSummary,
    pub run: String,
    pub base: String,
    pub instruction: String,
    pub launcher: String,
    pub state: RunState,
    pub candidates: Vec<Candidate>,
    pub focus: usize,
    /// Index into `STRIP` of the selected layer.
    pub layer_sel: usize,
    pub screen: Screen,
    pub dialog: Option<Dialog>,
    pub help: bool,
    /// First row of the help overlay shown.
    pub help_scroll: usize,
    /// The diff screens' search (`/`): its query, and whether it is being typed.
    pub search: Option<Search>,
    /// Columns the diff screens are scrolled to the right (`←`/`→`).
    pub hscroll: usize,
    /// Log filter; `filter_editing` while typing it.
    pub filter: Option<String>,
    pub filter_editing: bool,
    /// Show agents' raw event lines instead of their readable form.
    pub raw_logs: bool,
    /// Selected row in the layer detail.
    pub detail_sel: usize,
    pub diff_view: DiffView,
    /// Loaded diffs against the base, by candidate.
    pub diffs: HashMap<String, Diff>,
    /// Compare: the other candidate (index) and the loaded A-vs-B diff.
    pub compare_b: usize,
    pub compare_diff: Option<((String, String), Diff)>,
    pub compare_scroll: usize,
    /// Compare: the evidence pane (`e`) instead of the A-vs-B diff.
    pub evidence: Option<Evidence>,
    pub ranking: Option<Ranking>,
    pub decisions: Vec<Decision>,
    pub now_ms: i64,
    pub spinner: usize,
    pub width: u16,
    pub height: u16,
    pub theme: Theme,
    pub color: bool,
    pub who: String,
    /// A one-line message for the status bar (errors, confirmations).
    pub flash: Option<String>,
    pub dirty: bool,
    pub quit: bool,
    pub highlighter: std::cell::RefCell<Highlighter>,
    /// An issue location to show once its candidate's diff has loaded.
    pub pending_jump: Option<(String, Option<u32>)>,
    /// The diff view was opened from the layer detail (Esc goes back there).
    pub diff_from_detail: bool,
    /// Plan, then execute: the plan screen, once the planner proposed.
    pub plan: Option<super::plan::PlanScreen>,
}

impl App {
    /// Candidate `id`'s change: while it runs (a retry too) its workspace
    /// as it is, once it finished its verified tree.
    pub fn change(&self, id: &str) -> Option<Change> {
        let c = self.candidates.iter().find(|c| c.info.id == id)?;
        let running = matches!(c.state, State::Running | State::Queued);
        let tree = self
            .summary
            .candidates
            .iter()
            .find(|s| s.id == id)
            .and_then(|s| s.tree.clone())
            .filter(|_| !running);
        Some(Change {
            worktree: std::path::PathBuf::from(&c.info.worktree),
            tree,
        })
    }

    pub fn new(meta: RunMeta, theme: Theme, who: String) -> App {
        let color = theme.syntax.is_some();
        App {
            meta,
            summary: RunSummary::new(),
            run: String::new(),
            base: String::new(),
            instruction: String::new(),
            launcher: String::new(),
            state: RunState::Starting,
            candidates: Vec::new(),
            focus: 0,
            layer_sel: 0,
            screen: Screen::Dashboard,
            dialog: None,
            help: false,
            help_scroll: 0,
            search: None,
            hscroll: 0,
            filter: None,
            filter_editing: false,
            raw_logs: false,
            detail_sel: 0,
            diff_view: DiffView::default(),
            diffs: HashMap::new(),
            compare_b: 1,
            compare_diff: None,
            compare_scroll: 0,
            evidence: None,
            ranking: None,
            decisions: Vec::new(),
            now_ms: 0,
            spinner: 0,
            width: 80,
            height: 24,
            theme,
            color,
            who,
            flash: None,
            dirty: true,
            quit: false,
            highlighter: Default::default(),
            pending_jump: None,
            diff_from_detail: false,
            plan: None,
        }
    }

    pub fn focused(&self) -> Option<&Candidate> {
        self.candidates.get(self.focus)
    }

    /// Whether candidate `i`'s log shows the whole-log filter: the filter
    /// is applied (not being typed) and its search is for that query.
    pub fn found_shown(&self, i: usize) -> bool {
        let Some(q) = self.filter.as_deref().filter(|q| !q.is_empty()) else {
            return false;
        };
        !self.filter_editing
            && self
                .candidates
                .get(i)
                .and_then(|c| c.found.as_ref())
                .is_some_and(|f| f.query == q)
    }

    pub fn focused_mut(&mut self) -> Option<&mut Candidate> {
        self.candidates.get_mut(self.focus)
    }

    pub fn selected_layer(&self) -> Layer {
        STRIP[self.layer_sel.min(STRIP.len() - 1)]
    }

    /// The layer `o` overrides on the focused candidate: the selected one
    /// when it failed, warned or has skipped checks; on the dashboard, where
    /// no layer needs selecting first, else its first layer that did. None:
    /// nothing to override there.
    pub fn override_layer(&self) -> Option<Layer> {
        let c = self.focused()?;
        let open =
            |l: Layer| matches!(c.mark(l, &self.meta), Mark::Fail | Mark::Warn) || c.has_skipped(l);
        let selected = self.selected_layer();
        if open(selected) {
            return Some(selected);
        }
        match self.screen {
            Screen::Detail => None,
            _ => STRIP.iter().copied().find(|&l| open(l)),
        }
    }

    pub fn live(&self) -> bool {
        matches!(self.state, RunState::Starting | RunState::Running)
    }

    /// Something on screen moves by itself (a spinner or a running clock:
    /// the header's wall clock runs from the run's start, the plan screen
    /// included, until it ends).
    pub fn animating(&self) -> bool {
        self.live()
            && (self.summary.wall.open()
                || self
                    .candidates
                    .iter()
                    .any(|c| c.started && c.state == State::Running))
    }

    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.candidates.iter().position(|c| c.info.id == id)
    }

    fn cand_mut(&mut self, id: &str) -> Option<&mut Candidate> {
        self.candidates.iter_mut().find(|c| c.info.id == id)
    }

    pub fn pending_from_detail(&self) -> bool {
        self.diff_from_detail
    }

    /// The rows of the layer detail: (report index, issue index).
    pub fn detail_rows(&self) -> Vec<(usize, Option<usize>)> {
        let Some(c) = self.focused() else {
            return Vec::new();
        };
        let layer = self.selected_layer();
        let mut rows = Vec::new();
        for (ri, r) in c.reports.iter().enumerate() {
            if r.layer != layer {
                continue;
            }
            rows.push((ri, None));
            for ii in 0..r.issues.len() {
                rows.push((ri, Some(ii)));
            }
        }
        rows
    }
}

#[cfg(test)]
mod tests;
