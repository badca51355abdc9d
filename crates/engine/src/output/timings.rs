//! `rascal show RUN --timings`: where a run's time went. Per candidate,
//! each check of its latest attempt with its duration (the agent first),
//! a test guardrail's evidence split into its steps (its own run, the
//! listings, the base's tests on the change, the canaries, the release
//! profile, the new tests at the base), and when its verdict landed; then
//! the critical path: the candidate whose verdict landed last, its longest
//! step, and what the run spent after the last verdict (comparing,
//! cross-testing, probing). Everything comes from the journal: reports'
//! durations and the events' times.

use rascal_core::model::ledger::{steps_line, StepTime};
use rascal_core::model::summary::{CandidateSummary, RunSummary};
use rascal_core::text::sanitize;

/// One check's time.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CheckTime {
    pub layer: String,
    pub check: String,
    pub ms: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepTime>,
}

/// One candidate's times.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CandidateTimes {
    pub candidate: String,
    pub attempt: u32,
    /// When its latest attempt began, from the run's start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt_from_ms: Option<i64>,
    /// When its verdict landed, from the run's start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict_at_ms: Option<i64>,
    /// The checks that ran (skipped ones are only counted).
    pub checks: Vec<CheckTime>,
    #[serde(skip_serializing_if = "is_zero")]
    pub skipped: usize,
    /// The sum of its checks' times (they run one after another).
    pub total_ms: u64,
}

/// A run's times.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Timings {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_ms: Option<i64>,
    pub candidates: Vec<CandidateTimes>,
    /// The candidate whose verdict landed last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub critical: Option<String>,
    /// From the last verdict to the run's end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_verdicts_ms: Option<i64>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn of_candidate(c: &CandidateSummary, started: Option<i64>) -> CandidateTimes {
    use rascal_core::model::verdict::Status;
    let ran = |r: &&rascal_core::model::verdict::Report| r.status != Status::Skipped;
    let checks: Vec<CheckTime> = c
        .reports
        .iter()
        .filter(ran)
        .map(|r| CheckTime {
            layer: r.layer.name().to_string(),
            check: r.check.clone(),
            ms: r.duration_ms,
            steps: r
                .ledger
                .as_ref()
                .map(|l| l.steps.clone())
                .unwrap_or_default(),
        })
        .collect();
    let since = |at: Option<i64>| at.zip(started).map(|(e, s)| (e - s).max(0));
    CandidateTimes {
        candidate: c.id.clone(),
        attempt: c.attempt,
        attempt_from_ms: since(c.clock.attempt.started_ms),
        verdict_at_ms: since(c.clock.attempt.ended_ms),
        skipped: c.reports.iter().filter(|r| !ran(r)).count(),
        total_ms: checks.iter().map(|t| t.ms).sum(),
        checks,
    }
}

/// The run's times, from a summary folded with its events' times.
pub fn timings(s: &RunSummary) -> Timings {
    let started = s.wall.started_ms;
    let candidates: Vec<CandidateTimes> = s
        .candidates
        .iter()
        .map(|c| of_candidate(c, started))
        .collect();
    let last = candidates
        .iter()
        .filter_map(|c| Some((c.verdict_at_ms?, c)))
        .max_by_key(|(at, _)| *at);
    let wall_ms = s.wall.ended_ms.zip(started).map(|(e, b)| (e - b).max(0));
    Timings {
        wall_ms,
        critical: last.map(|(_, c)| c.candidate.clone()),
        after_verdicts_ms: last.zip(wall_ms).map(|((at, _), w)| (w - at).max(0)),
        candidates,
    }
}

/// `1.2s`, `2:05`.
fn shown(ms: i64) -> String {
    if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}:{:02}", ms / 60_000, (ms / 1000) % 60)
    }
}

/// The times as lines a human reads.
pub fn timings_lines(t: &Timings) -> Vec<String> {
    let mut out = vec![match t.wall_ms {
        Some(w) => format!("timings (wall {}):", shown(w)),
        None => "timings:".to_string(),
    }];
    let width = t
        .candidates
        .iter()
        .flat_map(|c| c.checks.iter().map(|k| k.check.chars().count()))
        .max()
        .unwrap_or(0)
        .min(32);
    for c in &t.candidates {
        let from = match c.attempt_from_ms {
            Some(f) if c.attempt > 1 => format!(", from {}", shown(f)),
            _ => String::new(),
        };
        let at = c
            .verdict_at_ms
            .map(|v| format!(" · verdict at {}", shown(v)))
            .unwrap_or_default();
        let skipped = match c.skipped {
            0 => String::new(),
            n => format!(" · {n} skipped"),
        };
        out.push(format!(
            "  {} (attempt {}{from}){at} · checks {}{skipped}",
            sanitize(&c.candidate),
            c.attempt,
            shown(c.total_ms as i64)
        ));
        for k in &c.checks {
            let steps = if k.steps.is_empty() {
                String::new()
            } else {
                format!("  {}", steps_line(&k.steps))
            };
            out.push(format!(
                "    {:<width$} {:>6}{steps}",
                sanitize(&k.check),
                shown(k.ms as i64)
            ));
        }
    }
    if let Some(crit) = t
        .critical
        .as_ref()
        .and_then(|id| t.candidates.iter().find(|c| &c.candidate == id))
    {
        let longest = crit.checks.iter().max_by_key(|k| k.ms);
        let mut line = format!("critical path: {}", sanitize(&crit.candidate));
        if let Some(at) = crit.verdict_at_ms {
            line.push_str(&format!("'s verdict landed last, at {}", shown(at)));
        }
        if let Some(k) = longest {
            line.push_str(&format!(
                "; its longest check: {} {}",
                sanitize(&k.check),
                shown(k.ms as i64)
            ));
            if let Some(s) = k.steps.iter().max_by_key(|s| s.ms) {
                line.push_str(&format!(" (most of it {} {})", s.step, shown(s.ms as i64)));
            }
        }
        if let Some(after) = t.after_verdicts_ms {
            line.push_str(&format!(
                "; after the last verdict (comparing, cross-testing, probing): {}",
                shown(after)
            ));
        }
        out.push(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rascal_core::model::clock::Span;
    use rascal_core::model::ledger::Ledger;
    use rascal_core::model::verdict::{Layer, Report};

    fn candidate(id: &str, ended: i64, checks: &[(&str, u64)]) -> CandidateSummary {
        let mut c = CandidateSummary::queued(&rascal_core::model::event::CandidateInfo {
            id: id.into(),
            agent: id.into(),
            runtime: "scripted".into(),
            worktree: String::new(),
            unsandboxed: false,
        });
        c.clock.attempt = Span {
            started_ms: Some(1_000),
            ended_ms: Some(ended),
        };
        c.reports = checks
            .iter()
            .map(|(name, ms)| {
                let mut r = Report::new(Layer::Guardrails, *name);
                r.duration_ms = *ms;
                if *name == "tests" {
                    r.ledger = Some(Box::new(Ledger {
                        steps: vec![
                            StepTime {
                                step: "own run".into(),
                                ms: 500,
                                runs: 1,
                            },
                            StepTime {
                                step: "canaries".into(),
                                ms: 1_900,
                                runs: 2,
                            },
                        ],
                        ..Ledger::default()
                    }));
                }
                r
            })
            .collect();
        c
    }

    #[test]
    fn the_critical_path_is_the_last_verdict_and_its_longest_step() {
        let mut s = RunSummary::new();
        s.wall = Span {
            started_ms: Some(1_000),
            ended_ms: Some(9_000),
        };
        s.candidates = vec![
            candidate("alder", 4_000, &[("build", 300), ("tests", 2_600)]),
            candidate("birch", 7_500, &[("build", 400), ("tests", 5_000)]),
        ];
        let t = timings(&s);
        assert_eq!(t.critical.as_deref(), Some("birch"));
        assert_eq!(t.wall_ms, Some(8_000));
        assert_eq!(t.after_verdicts_ms, Some(1_500));
        assert_eq!(t.candidates[1].total_ms, 5_400);
        let lines = timings_lines(&t);
        assert_eq!(lines[0], "timings (wall 8.0s):");
        assert!(
            lines.contains(&"  birch (attempt 1) · verdict at 6.5s · checks 5.4s".to_string()),
            "{lines:#?}"
        );
        assert!(
            lines.iter().any(|l| l.starts_with("    tests")
                && l.ends_with("5.0s  own run 0.5s · canaries 1.9s (2 runs)")),
            "{lines:#?}"
        );
        assert_eq!(
            lines.last().unwrap(),
            "critical path: birch's verdict landed last, at 6.5s; its longest check: tests 5.0s (most of it canaries 1.9s); after the last verdict (comparing, cross-testing, probing): 1.5s"
        );
    }
}
