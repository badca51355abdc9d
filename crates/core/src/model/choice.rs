//! Which candidate `rascal finalize RUN` commits: the one a human (or
//! `--auto`) selected, else the comparator's pick when it passed and nobody
//! contested it. Pure: a run's summary in; the candidate, or why there is
//! none with what to run instead, out. Here in the model (not beside
//! finalize) because every view that shows the pick (`show`, the TUI)
//! says what finalize would do with it.

use crate::model::decision::DecisionKind;
use crate::model::state::State;
use crate::model::summary::RunSummary;
use crate::model::verdict::Verdict;

/// The candidate finalize will commit, and how it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// Selected by a decision in the run's journal.
    Selected(String),
    /// Nobody selected one: the comparator's pick, which passed.
    Pick(String),
}

/// The candidate to finalize in `summary`, or the message (with a hint
/// naming the commands to run) saying why finalize cannot choose one.
pub fn choose(summary: &RunSummary) -> Result<Choice, crate::Error> {
    if let Some(s) = &summary.selected {
        return Ok(Choice::Selected(s.clone()));
    }
    let run = &summary.run;
    let select = format!("`rascal select {run} CANDIDATE`");
    let Some(ranking) = &summary.ranking else {
        return Err(crate::Error::CannotChoose(if summary.state.live() {
            format!(
                "run {run} is still running: it has no ranking yet\n  hint: finalize it once it has finished, or select a candidate now with {select}"
            )
        } else {
            format!(
                "run {run} has no selected candidate and no ranking to take a pick from\n  hint: select one first: {select}"
            )
        }));
    };
    if let (None, Some(why)) = (&ranking.pick, &ranking.contested) {
        return Err(crate::Error::CannotChoose(format!(
            "run {run} has no pick: {why}\n  hint: see the agreement matrix with `rascal show {run}`, then decide yourself: `rascal finalize {run} --pick CANDIDATE --reason \"why\"` (or {select})"
        )));
    }
    if summary.declarations_escalate() {
        let declared = summary.declarations().count();
        let why = format!(
            "{declared} of {} declared the task impossible",
            crate::text::plural(summary.candidates.len() as u64, "candidate")
        );
        return Err(crate::Error::CannotChoose(match &ranking.pick {
            Some(pick) => format!(
                "run {run}'s pick `{pick}` is contested: {why}, and the run was escalated to a human\n  hint: read their reasons with `rascal show {run}`; if the task can be done as asked, decide yourself: `rascal select {run} {}`, then `rascal finalize {run}`",
                crate::text::inert::shell_word(pick)
            ),
            None => format!(
                "run {run} has no pick: {why}, and the run was escalated to a human\n  hint: read their reasons with `rascal show {run}`; fix the task (or what it needs) and run it again, or give one another attempt with `rascal retry {run} CANDIDATE --feedback \"…\"`"
            ),
        }));
    }
    let Some(pick) = &ranking.pick else {
        return Err(crate::Error::CannotChoose(format!(
            "run {run} has no pick: no candidate passed\n  hint: see why with `rascal show {run}`; then retry one with feedback (`rascal retry {run} CANDIDATE --feedback \"…\"`), or accept its failures (`rascal override {run} CANDIDATE --layer L --check C --reason R --with-skipped`) and select it ({select})"
        )));
    };
    if let Some(why) = contested(summary, pick) {
        return Err(crate::Error::CannotChoose(format!(
            "run {run}'s pick `{pick}` is contested: {why}\n  hint: decide yourself: `rascal select {run} {}` (or another candidate), then `rascal finalize {run}`",
            crate::text::inert::shell_word(pick)
        )));
    }
    Ok(Choice::Pick(pick.clone()))
}

/// Why the pick cannot be taken without a human's word: the run or the
/// pick was handed to a human, or the pick no longer passes. Every view
/// that shows the pick says this beside it.
pub fn contested(summary: &RunSummary, pick: &str) -> Option<String> {
    let Ok(cand) = summary.candidate(pick) else {
        return Some("it is not a candidate of the run".into());
    };
    if let Some(e) = &cand.escalated {
        return Some(format!("it was escalated to a human ({})", e.reason.trim()));
    }
    if summary.state == State::Escalated
        || summary
            .decisions
            .iter()
            .any(|d| d.kind == DecisionKind::Escalate)
    {
        return Some("the run was escalated to a human".into());
    }
    match cand.effective_verdict.or(cand.verdict) {
        Some(Verdict::Pass | Verdict::Warn) => None,
        _ => Some(format!("it is {} now", cand.state.label())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::decision::Decision;
    use crate::model::event::{CandidateInfo, RunEvent};
    use crate::model::ranking::{Ranked, Ranking};
    use crate::model::verdict::{Layer, Report};

    fn run(verdicts: &[(&str, Verdict)], pick: Option<&str>) -> RunSummary {
        let mut events = vec![RunEvent::RunStarted {
            run: "r-1".into(),
            repo: "/tmp/repo".into(),
            base: "0123456789abcdef".into(),
            instruction: "do it".into(),
            launcher: "process".into(),
            candidates: verdicts
                .iter()
                .map(|(id, _)| CandidateInfo {
                    id: id.to_string(),
                    agent: "a".into(),
                    runtime: "scripted".into(),
                    worktree: "/tmp/w".into(),
                    unsandboxed: false,
                })
                .collect(),
        }];
        for (id, v) in verdicts {
            let mut agent = Report::new(Layer::Agent, "agent");
            if *v == Verdict::Fail {
                agent = agent.errored("it broke");
            }
            events.push(RunEvent::ReportLanded {
                candidate: id.to_string(),
                report: Box::new(agent.finish()),
            });
            events.push(RunEvent::CandidateFinished {
                candidate: id.to_string(),
                verdict: *v,
                reason: None,
                files: 1,
                lines: 1,
                tree: None,
                cancelled: false,
            });
        }
        events.push(RunEvent::Ranked {
            ranking: Box::new(Ranking {
                positions: verdicts
                    .iter()
                    .enumerate()
                    .map(|(i, (id, v))| Ranked {
                        position: i + 1,
                        candidate: id.to_string(),
                        verdict: *v,
                        layers_passed: 0,
                        criteria_met: 0,
                        consensus: 1.0,
                        lines: 1,
                        files: 1,
                        reason: "r".into(),
                        usage: None,
                        agreement: None,
                    })
                    .collect(),
                ids: verdicts.iter().map(|(id, _)| id.to_string()).collect(),
                matrix: Vec::new(),
                pick: pick.map(String::from),
                judge: None,
                agreement: None,
                contested: None,
                unseparated: Vec::new(),
                probes: None,
            }),
        });
        events.push(RunEvent::RunFinished {
            verdict: if pick.is_some() {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
            exit_code: if pick.is_some() { 0 } else { 1 },
        });
        RunSummary::from_events(&events)
    }

    fn decided(s: &mut RunSummary, candidate: Option<&str>, kind: DecisionKind) {
        s.apply(&RunEvent::DecisionRecorded {
            decision: Decision::new(candidate, kind, "Tess", "because"),
        });
    }

    #[test]
    fn a_passing_pick_is_taken_when_nobody_selected() {
        let s = run(
            &[("careful", Verdict::Pass), ("hasty", Verdict::Fail)],
            Some("careful"),
        );
        assert_eq!(choose(&s), Ok(Choice::Pick("careful".into())));
    }

    #[test]
    fn a_selection_wins_over_the_pick() {
        let mut s = run(
            &[("careful", Verdict::Pass), ("other", Verdict::Pass)],
            Some("careful"),
        );
        decided(&mut s, Some("other"), DecisionKind::Select);
        assert_eq!(choose(&s), Ok(Choice::Selected("other".into())));
    }

    #[test]
    fn no_pick_says_what_to_run() {
        let s = run(&[("hasty", Verdict::Fail)], None);
        let e = choose(&s).unwrap_err().to_string();
        assert!(e.contains("no candidate passed"), "{e}");
        assert!(
            e.contains("rascal show r-1") && e.contains("rascal select r-1"),
            "{e}"
        );
    }

    #[test]
    fn a_pick_the_agreement_matrix_contests_is_no_pick() {
        let mut s = run(&[("a", Verdict::Pass), ("b", Verdict::Pass)], None);
        if let Some(r) = s.ranking.as_mut() {
            r.contested = Some("the candidates disagree on the tests they wrote, and no majority settles it: a against b".into());
        }
        let e = choose(&s).unwrap_err().to_string();
        assert!(e.contains("has no pick: the candidates disagree"), "{e}");
        assert!(e.contains("rascal select r-1"), "{e}");
    }

    #[test]
    fn an_escalated_run_or_pick_is_contested() {
        let mut s = run(&[("careful", Verdict::Pass)], Some("careful"));
        decided(&mut s, None, DecisionKind::Escalate);
        let e = choose(&s).unwrap_err().to_string();
        assert!(
            e.contains("contested") && e.contains("rascal select r-1 careful"),
            "{e}"
        );
        let mut s = run(&[("careful", Verdict::Pass)], Some("careful"));
        decided(&mut s, Some("careful"), DecisionKind::Escalate);
        assert!(choose(&s).unwrap_err().to_string().contains("escalated"));
    }

    #[test]
    fn a_pick_beside_a_majority_that_declared_the_task_impossible_is_contested() {
        let mut s = run(
            &[
                ("careful", Verdict::Pass),
                ("b", Verdict::Fail),
                ("c", Verdict::Fail),
            ],
            Some("careful"),
        );
        for id in ["b", "c"] {
            s.apply(&RunEvent::DeclaredImpossible {
                candidate: id.into(),
                reason: "the tests contradict the task".into(),
            });
        }
        let e = choose(&s).unwrap_err().to_string();
        assert!(
            e.contains(
                "pick `careful` is contested: 2 of 3 candidates declared the task impossible"
            ),
            "{e}"
        );
        assert!(
            e.contains("rascal show r-1") && e.contains("rascal select r-1 careful"),
            "{e}"
        );
        // Selected by a human, it is theirs to finalize.
        decided(&mut s, Some("careful"), DecisionKind::Select);
        assert_eq!(choose(&s), Ok(Choice::Selected("careful".into())));
    }
}
