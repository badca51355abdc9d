//! A human's answer, kept as a test (issue 47, item 2): when a contested
//! run's question came from the discriminator's probe and a human chose
//! the candidate that is right (`rascal select`, `finalize --pick`, the
//! TUI's `a`), that probe with the chosen candidate's outputs on the calls
//! that differed is a test. Every later run of the same task (the same
//! instruction, in this repository) and every retry in that run is judged
//! by it: the probe runs on each candidate that passed its own checks, in
//! the sandbox, and a candidate whose output on an answered call differs
//! fails the `answers` check, naming the call, what it returned, what the
//! human said is right, and where that was said. Nothing is stored beside
//! the journal: the answers are read from the earlier runs' records.

use crate::exec::place::Place;
use crate::layers::probes::{self, Probe};
use crate::model::ranking::ProbeSource;
use crate::model::verdict::{Issue, Layer, Report, Severity, Status};
use crate::pipeline::candidate::CandidateOutcome;
use crate::pipeline::journal::Journal;
use crate::store::Store;
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// The check's name (layer `compare`).
pub const ANSWERS: &str = "answers";
/// The rule of a call answered otherwise.
pub const RULE_ANSWERED: &str = "compare/answered-otherwise";

/// One kept answer: the probe, and what the human said is right.
#[derive(Debug, Clone, PartialEq)]
pub struct Kept {
    /// The run it was answered in.
    pub run: String,
    /// The candidate the human chose.
    pub right: String,
    /// Who chose it.
    pub who: String,
    pub probe: ProbeSource,
    /// Each answered call and the right output.
    pub expected: Vec<(String, String)>,
}

/// The answers kept for `instruction` in the store of the repository at
/// `repo_dir`, newest first (the run being judged included: a retry is
/// judged by its own run's answer).
pub fn kept(repo_dir: &Path, instruction: &str) -> Vec<Kept> {
    let Ok(repo) = crate::git::workspace::open(repo_dir) else {
        return Vec::new();
    };
    let state = crate::git::workspace::state_dir(&repo);
    let Ok(store) = Store::open_read(&Store::path_in(&state)) else {
        return Vec::new();
    };
    let runs = store.runs_of_task(instruction).unwrap_or_default();
    runs.iter()
        .filter_map(|run| {
            let s = store.summary(run).ok()?;
            let r = s.ranking.as_ref()?;
            let p = r.probes.as_ref()?;
            let source = p.source.clone()?;
            let right = s.selected.clone()?;
            if p.differences.is_empty() || !p.candidates.contains(&right) {
                return None;
            }
            let expected: Vec<(String, String)> = p
                .differences
                .iter()
                .filter_map(|d| {
                    let out = d.outputs.iter().find(|(c, _)| *c == right)?;
                    Some((d.call.clone(), out.1.clone()))
                })
                .collect();
            let chosen = |d: &&crate::model::decision::Decision| {
                d.candidate.as_deref() == Some(right.as_str())
                    && matches!(d.kind, crate::model::decision::DecisionKind::Select)
            };
            let who = s
                .candidates
                .iter()
                .flat_map(|c| &c.decisions)
                .chain(&s.decisions)
                .rfind(chosen)
                .map(|d| d.who.clone())
                .unwrap_or_else(|| "a human".into());
            Some(Kept {
                run: run.clone(),
                right,
                who,
                probe: source,
                expected,
            })
        })
        .collect()
}

/// The `answers` report of one candidate: each kept answer's calls, as it
/// answers them (`outputs`, one map per kept answer, or why the probe
/// could not run).
pub fn report(
    kept: &[Kept],
    outputs: &[Result<std::collections::BTreeMap<String, String>, String>],
) -> Report {
    let mut r = Report::new(Layer::Compare, ANSWERS);
    r.required = true;
    let mut checked = 0;
    for (k, out) in kept.iter().zip(outputs) {
        let said = format!("{} chose {} in run {}", k.who, k.right, k.run);
        match out {
            Err(why) => r.issues.push(Issue::new(
                RULE_ANSWERED,
                Severity::Error,
                format!(
                    "the answer kept from run {} could not be checked: {why}",
                    k.run
                ),
            )),
            Ok(out) => {
                for (call, right) in &k.expected {
                    checked += 1;
                    let got = out.get(call).map(String::as_str).unwrap_or("(no output)");
                    if got != right {
                        r.issues.push(Issue::new(
                            RULE_ANSWERED,
                            Severity::Error,
                            format!("{call} returns {got}, but {right} is right here ({said})"),
                        ));
                    }
                }
            }
        }
    }
    r.output = format!(
        "{} a human answered in earlier runs of this task: {}",
        crate::text::plural(checked as u64, "call"),
        if r.issues.is_empty() {
            "each answered as they said is right"
        } else {
            "answered otherwise"
        }
    );
    r.finish()
}

/// Judge every candidate that passed its own checks by the kept answers:
/// land an `answers` report on each (a FAIL where it answers a call
/// otherwise).
pub(crate) async fn judge(
    kept: &[Kept],
    results: &mut [CandidateOutcome],
    base: &str,
    timeout: std::time::Duration,
    journal: &Journal,
    cancel: &CancellationToken,
) {
    if kept.is_empty() {
        return;
    }
    for o in results.iter_mut() {
        let Some(place) = o.place.clone().filter(|_| o.finished_cleanly) else {
            continue;
        };
        if o.reports
            .iter()
            .any(|r| r.status == Status::Fail && r.required)
        {
            continue;
        }
        let mut outputs = Vec::new();
        for k in kept {
            outputs.push(run_kept(&place, base, &k.probe, timeout, cancel).await);
        }
        crate::pipeline::agree::land(journal, o, report(kept, &outputs));
    }
}

/// One kept probe on one candidate, with a fresh nonce.
async fn run_kept(
    place: &Place,
    base: &str,
    source: &ProbeSource,
    timeout: std::time::Duration,
    cancel: &CancellationToken,
) -> Result<std::collections::BTreeMap<String, String>, String> {
    let nonce = crate::layers::review::new_nonce()
        .map_err(|e| format!("could not get a nonce from /dev/urandom: {e}"))?;
    let probe = Probe::of(source, &nonce);
    let lines =
        crate::pipeline::discriminate::run_probe(place, base, &probe, timeout, cancel).await?;
    Ok(probes::outputs(lines.iter().map(String::as_str), &nonce))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept() -> Kept {
        Kept {
            run: "r-1".into(),
            right: "alder".into(),
            who: "Tess".into(),
            probe: ProbeSource {
                file: "p.py".into(),
                content: String::new(),
                command: vec!["python3".into()],
            },
            expected: vec![("half(3)".into(), "1".into())],
        }
    }

    #[test]
    fn a_call_answered_otherwise_fails_naming_who_said_what() {
        let k = [kept()];
        let right = [Ok([("half(3)".to_string(), "1".to_string())].into())];
        let r = report(&k, &right);
        assert_eq!(r.status, Status::Pass, "{r:?}");
        let wrong = [Ok([("half(3)".to_string(), "1.5".to_string())].into())];
        let r = report(&k, &wrong);
        assert_eq!(r.status, Status::Fail);
        assert_eq!(
            r.issues[0].message,
            "half(3) returns 1.5, but 1 is right here (Tess chose alder in run r-1)"
        );
        let broken = [Err("it did not build".to_string())];
        assert_eq!(
            report(&k, &broken).status,
            Status::Fail,
            "never a silent pass"
        );
    }
}
