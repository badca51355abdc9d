//! One candidate as the TUI shows it: its reports, logs, decisions and
//! marks, kept in step with the run summary.

use super::*;

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
    pub found: Option<crate::found::Found>,
}

impl Candidate {
    /// Count the egress proxy's lines (`rascal: network: allowed …`).
    pub(super) fn see_network(&mut self, text: &str) {
        let Some(rest) = text.strip_prefix(rascal_engine::EGRESS_LOG_PREFIX) else {
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
    pub fn network(&self) -> Option<&rascal_core::model::network::NetworkSummary> {
        self.reports
            .iter()
            .rev()
            .find(|r| r.layer == Layer::Agent)
            .and_then(|r| r.network.as_deref())
    }

    pub(super) fn new(info: CandidateInfo) -> Self {
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
    pub(super) fn sync(&mut self, s: &CandidateSummary) {
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
            .filter(|d| matches!(d.kind, crate::decision::DecisionKind::Override { .. }))
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
        rascal_engine::pipeline::retry_feedback_lines(&self.reports)
    }
}
