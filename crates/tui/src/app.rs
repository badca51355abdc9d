//! The TUI's state: a pure fold of `RunEvent`s (what the run is doing) plus
//! UI state (focus, screen, dialog, scroll). Nothing here does I/O or reads
//! the clock; time arrives inside actions.

use super::decision::Decision;
use super::diff::Diff;
use super::highlight::Highlighter;
use super::logbuf::LogBuf;
use super::theme::Theme;
use crate::changes::Change;
use crate::model::clock::CandidateClock;
use crate::model::decision::Blockers;
use crate::model::event::{CandidateInfo, RunEvent};
use crate::model::preview::Preview;
use crate::model::state::State;
use crate::model::summary::{CandidateSummary, RunSummary};
use crate::model::verdict::{Layer, Report, Status, Verdict};
use std::collections::HashMap;

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
pub fn blockers_text(b: &crate::model::decision::Blockers) -> String {
    let names = |list: &[(crate::model::verdict::Layer, String)]| {
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

#[derive(Debug, Clone)]
pub struct Candidate {
    pub info: CandidateInfo,
    /// Where it stands (the run summary's state).
    pub state: State,
    /// Its clocks, from journal times.
    pub clock: CandidateClock,
    /// The agent started (in some attempt).
    pub started: bool,
    pub attempt: u32,
    pub running_layer: Option<Layer>,
    pub reports: Vec<Report>,
    pub verdict: Option<Verdict>,
    /// The verdict once overrides are applied.
    pub effective: Option<Verdict>,
    pub reason: Option<String>,
    pub files: usize,
    pub lines: u64,
    pub logs: LogBuf,
    pub decisions: Vec<Decision>,
    /// Overrides recorded for the current attempt.
    pub overrides: usize,
    /// What still keeps it from passing (after the current overrides).
    pub blockers: Blockers,
    /// Why selecting it needs a reason (it did not pass), if it does.
    pub select_refusal: Option<String>,
    pub tokens: Option<u64>,
    pub cost_usd: Option<f64>,
    /// The agent's final message.
    pub summary: Option<String>,
    /// Why the candidate was handed to a human, and who did (None: the
    /// pipeline).
    pub escalated: Option<(String, Option<String>)>,
    /// Why its agent declared the task impossible (it is IMPOSSIBLE).
    pub impossible: Option<String>,
    pub cancelled: bool,
    /// Layers shown as ⊘: as the run summary's override rule says.
    pub overridden_layers: Vec<Layer>,
    /// The egress proxy's decisions seen in the log so far (allowed,
    /// refused), until the agent's report says them.
    pub net_seen: (u64, u64),
    /// The log filter applied over the whole log file.
    pub found: Option<super::found::Found>,
}

impl Candidate {
    /// Count the egress proxy's lines (`rascal: network: allowed …`).
    fn see_network(&mut self, text: &str) {
        let Some(rest) = text.strip_prefix(crate::egress::proxy::LOG_PREFIX) else {
            return;
        };
        if rest.starts_with(" allowed ") {
            self.net_seen.0 += 1;
        } else if rest.starts_with(" refused ") {
            self.net_seen.1 += 1;
        }
    }

    /// The candidate's network as the agent's report says it, once it has
    /// landed.
    pub fn network(&self) -> Option<&crate::model::network::NetworkSummary> {
        self.reports
            .iter()
            .rev()
            .find(|r| r.layer == Layer::Agent)
            .and_then(|r| r.network.as_deref())
    }

    fn new(info: CandidateInfo) -> Self {
        Candidate {
            info,
            state: State::Queued,
            clock: CandidateClock::default(),
            started: false,
            attempt: 1,
            running_layer: None,
            reports: Vec::new(),
            verdict: None,
            effective: None,
            reason: None,
            files: 0,
            lines: 0,
            logs: LogBuf::new(),
            decisions: Vec::new(),
            overrides: 0,
            blockers: Blockers::default(),
            select_refusal: None,
            tokens: None,
            cost_usd: None,
            summary: None,
            escalated: None,
            impossible: None,
            cancelled: false,
            overridden_layers: Vec::new(),
            net_seen: (0, 0),
            found: None,
        }
    }

    pub fn finished(&self) -> bool {
        self.verdict.is_some()
    }

    pub fn overridden(&self, layer: Layer) -> bool {
        self.overridden_layers.contains(&layer)
    }

    /// Take what the run summary (the one fold of the events) says about
    /// this candidate; the TUI keeps only what is about the screen (logs,
    /// clocks, the running layer).
    fn sync(&mut self, s: &CandidateSummary) {
        self.state = s.state;
        self.clock = s.clock.clone();
        self.started = s.started;
        self.attempt = s.attempt;
        self.reports = s.reports.clone();
        self.verdict = s.verdict;
        self.effective = s.effective_verdict.or(s.verdict);
        self.reason = s.reason.clone();
        self.files = s.files_changed;
        self.lines = s.lines_changed;
        self.decisions = s.decisions.clone();
        self.overrides = s
            .current_decisions()
            .iter()
            .filter(|d| matches!(d.kind, super::decision::DecisionKind::Override { .. }))
            .count();
        self.blockers = s.blockers();
        self.select_refusal = s.select_refusal();
        self.tokens = s.usage.map(|u| u.input_tokens + u.output_tokens);
        self.cost_usd = s.usage.and_then(|u| u.cost_usd);
        self.summary = s.summary.clone();
        self.escalated = s
            .escalated
            .as_ref()
            .map(|e| (e.reason.clone(), e.by.clone()));
        self.impossible = s.impossible.clone();
        self.cancelled = s.state == State::Cancelled;
        self.overridden_layers = STRIP
            .iter()
            .copied()
            .filter(|l| s.layer_overridden(*l))
            .collect();
    }

    pub fn layer_reports(&self, layer: Layer) -> impl Iterator<Item = &Report> {
        self.reports.iter().filter(move |r| r.layer == layer)
    }

    pub fn mark(&self, layer: Layer, meta: &RunMeta) -> Mark {
        let reps: Vec<&Report> = self.layer_reports(layer).collect();
        let running = self.state == State::Running
            && (self.running_layer == Some(layer)
                || (layer == Layer::Agent && self.started && reps.is_empty()));
        if running {
            return Mark::Running;
        }
        if reps.is_empty() {
            return if !meta.layers_on.contains(&layer) || self.finished() || self.cancelled {
                Mark::Off
            } else {
                Mark::Pending
            };
        }
        let worst = if reps.iter().any(|r| r.status == Status::Fail) && self.cut_short(&reps) {
            // Stopped by the cancel, not failed: it reads as not run.
            Mark::Off
        } else if reps.iter().any(|r| r.status == Status::Fail) {
            Mark::Fail
        } else if reps.iter().any(|r| r.status == Status::Warn) {
            Mark::Warn
        } else if reps.iter().all(|r| r.status == Status::Skipped) {
            Mark::Off
        } else {
            Mark::Pass
        };
        // A layer whose failures (or skipped checks) were all accepted.
        if matches!(worst, Mark::Fail | Mark::Warn | Mark::Off) && self.overridden(layer) {
            Mark::Overridden
        } else {
            worst
        }
    }

    /// A cancelled candidate's failing checks of one layer all failed only
    /// because the cancel stopped them (their command's problem is
    /// `cancelled`): the layer was cut short, not failed.
    fn cut_short(&self, reps: &[&Report]) -> bool {
        (self.cancelled || self.state == State::Cancelled)
            && reps.iter().filter(|r| r.status == Status::Fail).all(|r| {
                r.issues.is_empty()
                    && r.errored
                        .as_deref()
                        .is_some_and(|e| e.trim_end().ends_with("cancelled"))
            })
    }

    /// The layer has checks that never ran and nobody accepted.
    pub fn has_skipped(&self, layer: Layer) -> bool {
        self.blockers.skipped.iter().any(|(l, _)| *l == layer)
    }

    /// Its state in words: RUNNING (and what runs), a verdict (`FAIL →
    /// PASS` once overrides lift it), CANCELLED, ESCALATED, INTERRUPTED.
    pub fn status_text(&self) -> String {
        match self.state {
            State::Running => match self.running_layer {
                Some(l) => format!("RUNNING · checking {}", l.name()),
                None if self.reports.is_empty() => "RUNNING · agent".into(),
                None => "RUNNING · verifying".into(),
            },
            State::Pass | State::Warn | State::Fail => match (self.verdict, self.effective) {
                (Some(raw), Some(eff)) if raw != eff => format!("{eff} ⊘ (was {raw})"),
                _ => self.state.label().into(),
            },
            s => s.label().into(),
        }
    }

    /// Time in the current attempt: from its agent's start to its verdict
    /// (never less than the agent's own time, which its launcher measured
    /// a little before the journal saw it start).
    pub fn elapsed_ms(&self, now: i64) -> Option<i64> {
        let attempt = self.clock.attempt.length_ms(now)?;
        Some(attempt.max(self.agent_ms(now).0.unwrap_or(0)))
    }

    /// The agent's time in the current attempt, and over every attempt.
    pub fn agent_ms(&self, now: i64) -> (Option<i64>, i64) {
        let reported = self
            .reports
            .iter()
            .find(|r| r.layer == Layer::Agent && r.check == "agent")
            .map(|r| r.duration_ms);
        (
            self.clock.agent_ms(now, reported),
            self.clock.agent_total_ms(now, reported),
        )
    }

    /// Issues of failing (or warning) reports, as feedback for a retry
    /// (computed by the pipeline, which reads the checks' output).
    pub fn failing_issues(&self) -> Vec<String> {
        crate::pipeline::policy::retry_feedback_lines(&self.reports)
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
pub use crate::model::ranking::Ranking;

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

    /// Fold one run event into the state.
    pub fn apply(&mut self, ev: &RunEvent, at_ms: i64) {
        self.now_ms = self.now_ms.max(at_ms);
        if let RunEvent::DecisionRecorded { decision } = ev {
            self.apply_decision(decision);
            return;
        }
        // A log line reaches the screen as it was read from the log file;
        // the summary counts the segment it came in.
        if !matches!(ev, RunEvent::Log { .. }) {
            self.summary.apply_at(ev, Some(at_ms));
        }
        self.apply_ui(ev, at_ms);
        match ev.candidate() {
            Some(_) if matches!(ev, RunEvent::Log { .. } | RunEvent::LogSegment(_)) => {}
            Some(id) => self.sync(id),
            // About the whole run: any candidate's state may follow.
            None => self.sync_all(),
        }
        self.dirty = true;
    }

    /// What an event changes beyond the run summary: the screen's own
    /// state (logs, the running layer, the run's phase).
    fn apply_ui(&mut self, ev: &RunEvent, _at_ms: i64) {
        match ev {
            RunEvent::RunStarted {
                run,
                base,
                instruction,
                launcher,
                candidates,
                ..
            } => {
                self.run = run.clone();
                self.base = base.clone();
                self.instruction = instruction.clone();
                self.launcher = launcher.clone();
                self.candidates = candidates.iter().cloned().map(Candidate::new).collect();
                self.state = RunState::Running;
                self.compare_b = if self.candidates.len() > 1 { 1 } else { 0 };
            }
            RunEvent::CandidateStarted { .. } => {}
            // A candidate joined the run (`C`, `rascal combine`): it is
            // listed and streams like the others.
            RunEvent::CandidateAdded { candidate, .. } => {
                if matches!(self.state, RunState::Finished { .. }) {
                    self.state = RunState::Running;
                }
                if self.index_of(&candidate.id).is_none() {
                    self.candidates.push(Candidate::new(candidate.clone()));
                    // The one a human asked for: watch it work.
                    self.focus = self.candidates.len() - 1;
                }
            }
            RunEvent::Log {
                candidate,
                stream,
                text,
                display,
            } => {
                let color = self.color;
                if let Some(c) = self.cand_mut(candidate) {
                    c.see_network(text);
                    match display {
                        Some(d) => c.logs.push_with_raw(*stream, d, Some(text), color),
                        None => c.logs.push(*stream, text, color),
                    }
                }
            }
            RunEvent::Usage { .. } | RunEvent::AgentSummary { .. } => {}
            RunEvent::LogSegment(seg) => {
                if let Some(c) = self.cand_mut(&seg.candidate) {
                    c.logs.segment(seg);
                }
            }
            RunEvent::Ranked { ranking } => self.ranking = Some((**ranking).clone()),
            RunEvent::TaskLoaded { .. } => {}
            RunEvent::CriteriaOnBase { vacuous, .. } => {
                if let Some(plan) = self.plan.as_mut() {
                    plan.on_base = Some(vacuous.clone());
                }
            }
            RunEvent::PlanProposed {
                agent,
                criteria,
                constraints,
                problem,
            } => {
                let mut plan =
                    super::plan::PlanScreen::new(agent, criteria, constraints, problem.as_deref());
                plan.existing = self
                    .summary
                    .task
                    .iter()
                    .flat_map(|t| &t.acceptance_criteria)
                    .map(|c| c.description.clone())
                    .collect();
                self.plan = Some(plan);
                // Only a live run waits for the approval.
                if self.live() {
                    self.screen = Screen::Plan;
                }
            }
            RunEvent::AttemptStarted {
                candidate,
                attempt,
                feedback,
            } => {
                let color = self.color;
                if matches!(self.state, RunState::Finished { .. }) {
                    // A retry after the run: it is live again.
                    self.state = RunState::Running;
                }
                if let Some(c) = self.cand_mut(candidate) {
                    // The layers run again: the strip shows this attempt.
                    c.running_layer = None;
                    c.logs.push(
                        crate::model::log::Stream::Stderr,
                        &format!(
                            "── attempt {attempt}: {}",
                            feedback.lines().next().unwrap_or("")
                        ),
                        color,
                    );
                }
            }
            RunEvent::CandidateEscalated { .. } | RunEvent::DecisionRecorded { .. } => {}
            RunEvent::LayerStarted { candidate, layer } => {
                if let Some(c) = self.cand_mut(candidate) {
                    c.running_layer = Some(*layer);
                }
            }
            RunEvent::ReportLanded { .. } => {}
            RunEvent::CandidateFinished { candidate, .. } => {
                if let Some(c) = self.cand_mut(candidate) {
                    c.running_layer = None;
                }
            }
            RunEvent::RunFinished { verdict, exit_code } => {
                if self.screen == Screen::Plan {
                    self.screen = Screen::Dashboard;
                }
                self.state = RunState::Finished {
                    verdict: *verdict,
                    exit_code: *exit_code,
                };
                for c in &mut self.candidates {
                    c.running_layer = None;
                }
            }
            RunEvent::RunInterrupted { reason } => {
                self.state = RunState::Interrupted(reason.clone());
                for c in &mut self.candidates {
                    c.running_layer = None;
                }
            }
            RunEvent::Finalized(_) => {}
            // Said in the candidate's log too, where it reads in full.
            RunEvent::DeclaredImpossible { candidate, reason } => {
                let color = self.color;
                if let Some(c) = self.cand_mut(candidate) {
                    let head = "rascal: its agent declared the task impossible (impossible.md):";
                    c.logs.push(crate::model::log::Stream::Stderr, head, color);
                    for l in reason.lines() {
                        c.logs.push(
                            crate::model::log::Stream::Stderr,
                            &format!("rascal:   {l}"),
                            color,
                        );
                    }
                }
            }
            // Said in the candidate's log, where its other notes are.
            RunEvent::OverBudget { candidate, reason }
            | RunEvent::BudgetUnenforced { candidate, reason } => {
                let (color, over) = (self.color, matches!(ev, RunEvent::OverBudget { .. }));
                if let Some(c) = self.cand_mut(candidate) {
                    let text = format!(
                        "rascal: {}{reason}",
                        if over { "stopped: " } else { "warning: " }
                    );
                    c.logs.push(crate::model::log::Stream::Stderr, &text, color);
                }
            }
        }
    }

    /// Record a decision in the state (its marks: ⊘, cancelled…).
    pub fn apply_decision(&mut self, d: &Decision) {
        if self.decisions.contains(d) {
            return;
        }
        self.decisions.push(d.clone());
        if let crate::model::decision::DecisionKind::ApprovePlan { .. } = d.kind {
            if let Some(p) = &mut self.plan {
                p.approved = true;
            }
            if self.screen == Screen::Plan {
                self.screen = Screen::Dashboard;
            }
        }
        self.summary.apply(&RunEvent::DecisionRecorded {
            decision: d.clone(),
        });
        match &d.candidate {
            Some(id) => self.sync(id),
            None => self.sync_all(),
        }
        self.dirty = true;
    }

    /// Refresh every candidate from the run summary.
    fn sync_all(&mut self) {
        for s in &self.summary.candidates {
            if let Some(c) = self.candidates.iter_mut().find(|c| c.info.id == s.id) {
                c.sync(s);
            }
        }
    }

    /// Refresh candidate `id` from the run summary.
    fn sync(&mut self, id: &str) {
        let Some(s) = self.summary.candidates.iter().find(|c| c.id == id) else {
            return;
        };
        if let Some(c) = self.candidates.iter_mut().find(|c| c.info.id == id) {
            c.sync(s);
        }
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
mod tests {
    use super::*;

    /// Issue 53: a planned run waits on its plan screen with no candidate
    /// running; its header clock stood at `wall 0:00` because nothing on
    /// screen was said to move.
    #[test]
    fn the_wall_clock_runs_while_the_plan_waits() {
        use crate::fixture;
        let mut app = fixture::app(2, false, false);
        let (started, at) = fixture::events(2, false).remove(0);
        let mut waiting = App::new(app.meta.clone(), app.theme.clone(), "Ada".into());
        crate::update::update(&mut waiting, crate::Action::Run(Box::new(started), at));
        assert!(waiting.candidates.iter().all(|c| !c.started));
        assert!(waiting.animating(), "the wall clock runs");
        crate::update::update(&mut waiting, crate::Action::Tick(at + 7_000));
        assert_eq!(waiting.summary.wall.length_ms(waiting.now_ms), Some(7_000));
        // A finished run's clock stands still.
        app.state = RunState::Finished {
            verdict: Verdict::Pass,
            exit_code: 0,
        };
        assert!(!app.animating());
    }

    fn candidate() -> Candidate {
        Candidate::new(CandidateInfo {
            id: "c".into(),
            agent: "a".into(),
            runtime: "command".into(),
            worktree: "/tmp/w".into(),
            unsandboxed: false,
        })
    }

    #[test]
    fn a_check_the_cancel_stopped_is_not_shown_as_failed() {
        let stopped = Report::new(Layer::Guardrails, "build")
            .errored("`cargo build` cancelled")
            .finish();
        let mut c = candidate();
        c.reports.push(stopped.clone());
        c.state = State::Cancelled;
        c.cancelled = true;
        assert_eq!(c.mark(Layer::Guardrails, &RunMeta::default()), Mark::Off);
        // The same report in a candidate nobody cancelled is a failure, and
        // so is a real failure beside it in a cancelled one.
        let mut c = candidate();
        c.reports.push(stopped.clone());
        c.state = State::Fail;
        assert_eq!(c.mark(Layer::Guardrails, &RunMeta::default()), Mark::Fail);
        let mut c = candidate();
        c.reports.push(stopped);
        c.reports.push(
            Report::new(Layer::Guardrails, "lint")
                .errored("`cargo clippy` exited 1")
                .finish(),
        );
        c.state = State::Cancelled;
        c.cancelled = true;
        assert_eq!(c.mark(Layer::Guardrails, &RunMeta::default()), Mark::Fail);
    }
}
