//! A human's answer, kept as a test (issue 47, item 2): when a contested
//! run asked a human which candidate is right and they chose one
//! (`rascal select`, `finalize --pick`, the TUI's `a`), what separated the
//! candidates is kept as a test of the task:
//!
//! - a question from the discriminator's probe: the probe, with the chosen
//!   candidate's outputs on the calls that differed;
//! - a question from the candidates' own tests (they disagreed): the tests
//!   that separated them and that the chosen one passes, with their
//!   author's test files as cross-testing laid them.
//!
//! Every later run of the same task (the same instruction, in this
//! repository) and every retry in that run is judged by them: on each
//! candidate that passed its own checks, in the sandbox, the probe runs
//! (a different output on an answered call fails) and the kept tests run
//! laid on its code as another author's tests are in cross-testing (one
//! that fails or does not run fails). Either fails the `answers` check,
//! naming what, what the human said is right, and where that was said.
//! Nothing is stored beside the journal: the answers are read from the
//! earlier runs' records.

use crate::layers::evidence::test_evidence::TestRuns;
use crate::layers::probes::{self, Probe};
use crate::pipeline::candidate::CandidateOutcome;
use crate::pipeline::journal::Journal;
use crate::store::Store;
use crate::Error;
use rascal_core::config::Config;
use rascal_core::model::agreement::Cell;
use rascal_core::model::ranking::ProbeSource;
use rascal_core::model::verdict::{Issue, Layer, Report, Severity, Status};
use rascal_exec::exec::place::Place;
use rascal_scan::ledger::{self, Listing};
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// The check's name (layer `compare`).
pub const ANSWERS: &str = "answers";
/// The rule of a call answered otherwise.
pub const RULE_ANSWERED: &str = "compare/answered-otherwise";

/// One kept answer: what separated the candidates, and who the human said
/// is right.
#[derive(Debug, Clone, PartialEq)]
pub struct Kept {
    /// The run it was answered in.
    pub run: String,
    /// The candidate the human chose.
    pub right: String,
    /// Who chose it.
    pub who: String,
    pub answer: Answer,
}

/// What a kept answer checks.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The discriminator's probe, with each answered call and the right
    /// output.
    Probe {
        probe: ProbeSource,
        expected: Vec<(String, String)>,
    },
    /// Tests `author` wrote that separated the candidates and that the
    /// chosen one passes, with the author's test files (path, text) and,
    /// per test, the words only the author's change had.
    Tests {
        author: String,
        names: Vec<String>,
        files: Vec<(String, String)>,
        leans_on: std::collections::BTreeMap<String, Vec<String>>,
    },
}

/// How a kept test that says nothing about a candidate fared there: it
/// uses a word only its author's change had, which this change has not.
pub const NOT_APPLICABLE: &str = "does not apply";

/// How a kept test fared on a candidate's code.
pub const PASSES: &str = "passes";

/// The answers kept for `instruction` in the store of the repository at
/// `repo_dir`, newest first (the run being judged included: a retry is
/// judged by its own run's answer).
pub fn kept(repo_dir: &Path, instruction: &str) -> Vec<Kept> {
    let Ok(repo) = rascal_exec::git::workspace::open(repo_dir) else {
        return Vec::new();
    };
    let state = rascal_exec::git::workspace::state_dir(&repo);
    let Ok(store) = Store::open_read(&Store::path_in(&state)) else {
        return Vec::new();
    };
    let runs = store.runs_of_task(instruction).unwrap_or_default();
    runs.iter()
        .filter_map(|run| Some((run, store.summary(run).ok()?)))
        .flat_map(|(run, s)| answers_of(run, &s))
        .collect()
}

/// The answers a human gave in run `s` (none when nobody chose a candidate
/// or nothing separated them).
fn answers_of(run: &str, s: &rascal_core::model::summary::RunSummary) -> Vec<Kept> {
    let (Some(r), Some(right)) = (s.ranking.as_ref(), s.selected.clone()) else {
        return Vec::new();
    };
    let chosen = |d: &&rascal_core::model::decision::Decision| {
        d.candidate.as_deref() == Some(right.as_str())
            && matches!(d.kind, rascal_core::model::decision::DecisionKind::Select)
    };
    let who = s
        .candidates
        .iter()
        .flat_map(|c| &c.decisions)
        .chain(&s.decisions)
        .rfind(chosen)
        .map(|d| d.who.clone())
        .unwrap_or_else(|| "a human".into());
    let kept = |answer| Kept {
        run: run.to_string(),
        right: right.clone(),
        who: who.clone(),
        answer,
    };
    let mut out = Vec::new();
    if let Some(p) = &r.probes {
        if let Some(source) = p.source.clone() {
            if !p.differences.is_empty() && p.candidates.contains(&right) {
                let expected: Vec<(String, String)> = p
                    .differences
                    .iter()
                    .filter_map(|d| {
                        let out = d.outputs.iter().find(|(c, _)| *c == right)?;
                        Some((d.call.clone(), out.1.clone()))
                    })
                    .collect();
                out.push(kept(Answer::Probe {
                    probe: source,
                    expected,
                }));
            }
        }
    }
    // The candidates' tests asked the question when the run was contested
    // on them: the tests the chosen one passes and another fails.
    if let (Some(a), Some(_)) = (&r.agreement, &r.contested) {
        for src in &a.sources {
            let names: Vec<String> = a
                .tests
                .iter()
                .enumerate()
                .filter(|(col, t)| {
                    t.author == src.author
                        && a.cell(&right, *col) == Some(Cell::Passed)
                        && a.candidates
                            .iter()
                            .any(|c| a.cell(c, *col) == Some(Cell::Failed))
                })
                .map(|(_, t)| t.name.clone())
                .collect();
            if !names.is_empty() {
                out.push(kept(Answer::Tests {
                    author: src.author.clone(),
                    names,
                    files: src.files.clone(),
                    leans_on: src.leans_on.clone(),
                }));
            }
        }
    }
    out
}

/// The `answers` report of one candidate: each kept answer's calls, as it
/// answers them (`outputs`, one map per kept answer, or why the probe
/// could not run).
pub fn report(
    kept: &[Kept],
    outputs: &[Result<std::collections::BTreeMap<String, String>, Error>],
) -> Report {
    let mut r = Report::new(Layer::Compare, ANSWERS);
    r.required = true;
    let mut checked = 0;
    // Kept tests that say nothing about this change: said, never failed.
    let mut apart: Vec<String> = Vec::new();
    for (k, out) in kept.iter().zip(outputs) {
        let said = format!("{} chose {} in run {}", k.who, k.right, k.run);
        let out = match out {
            Err(why) => {
                r.issues.push(Issue::new(
                    RULE_ANSWERED,
                    Severity::Error,
                    format!(
                        "the answer kept from run {} could not be checked: {why}",
                        k.run
                    ),
                ));
                continue;
            }
            Ok(out) => out,
        };
        match &k.answer {
            Answer::Probe { expected, .. } => {
                for (call, right) in expected {
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
            Answer::Tests { author, names, .. } => {
                for name in names {
                    let got = out.get(name).map(String::as_str).unwrap_or("did not run");
                    if got.starts_with(NOT_APPLICABLE) {
                        apart.push(format!("`{name}` {got}"));
                        continue;
                    }
                    checked += 1;
                    if got != PASSES {
                        r.issues.push(Issue::new(
                            RULE_ANSWERED,
                            Severity::Error,
                            format!(
                                "`{name}` ({author}'s test, kept from run {}) {got} here, but {} passes it and is right here ({said})",
                                k.run, k.right
                            ),
                        ));
                    }
                }
            }
        }
    }
    r.output = format!(
        "{} a human answered in earlier runs of this task: {}",
        rascal_core::text::plural(checked as u64, "call or test"),
        if r.issues.is_empty() {
            "each answered as they said is right"
        } else {
            "answered otherwise"
        }
    );
    for a in apart {
        r.output.push_str(&format!("\n{a}"));
    }
    r.finish()
}

/// Judge every candidate that passed its own checks by the kept answers:
/// land an `answers` report on each (a FAIL where it answers a call
/// otherwise).
pub(crate) async fn judge(
    config: &Config,
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
        // The change's code, read once per candidate where a kept test
        // asks which names it has.
        let mut code = None;
        let mut outputs = Vec::new();
        for k in kept {
            outputs.push(match (&k.answer, &o.changes) {
                (Answer::Probe { probe, .. }, _) => {
                    run_kept(&place, base, probe, timeout, cancel).await
                }
                (Answer::Tests { .. }, None) => {
                    Err(Error::Verification("its change could not be read".into()))
                }
                (
                    Answer::Tests {
                        author,
                        names,
                        files,
                        leans_on,
                    },
                    Some(changes),
                ) => {
                    let code = code.get_or_insert_with(|| {
                        crate::pipeline::compare::cross_cell::change_corpus(&place, changes, true)
                    });
                    let (apply, apart) = applicable(names, leans_on, code, author);
                    let mut out = if apply.is_empty() {
                        Ok(std::collections::BTreeMap::new())
                    } else {
                        let at = (&place, changes);
                        run_kept_tests(config, &k.run, (&apply, files), at, cancel).await
                    };
                    if let Ok(out) = &mut out {
                        out.extend(apart);
                    }
                    out
                }
            });
        }
        crate::pipeline::compare::agree::land(journal, o, report(kept, &outputs));
    }
}

/// One kept probe on one candidate, with a fresh nonce.
async fn run_kept(
    place: &Place,
    base: &str,
    source: &ProbeSource,
    timeout: std::time::Duration,
    cancel: &CancellationToken,
) -> Result<std::collections::BTreeMap<String, String>, Error> {
    let nonce = crate::layers::review::new_nonce().map_err(|e| {
        Error::Verification(format!("could not get a nonce from /dev/urandom: {e}"))
    })?;
    let probe = Probe::of(source, &nonce);
    let lines =
        crate::pipeline::compare::discriminate::run_probe(place, base, &probe, timeout, cancel)
            .await?;
    Ok(probes::outputs(lines.iter().map(String::as_str), &nonce))
}

/// The kept tests that can say something about a change whose code is
/// `code`, and those that cannot (each with how it fared: it uses a word
/// only `author`'s change had, which this one has not), as cross-testing
/// tells them apart.
fn applicable(
    names: &[String],
    leans_on: &std::collections::BTreeMap<String, Vec<String>>,
    code: &rascal_scan::test_integrity::Corpus,
    author: &str,
) -> (Vec<String>, Vec<(String, String)>) {
    let mut apply = Vec::new();
    let mut apart = Vec::new();
    for n in names {
        let missing: Vec<String> = leans_on
            .get(n)
            .into_iter()
            .flatten()
            .filter(|w| !code.has(w))
            .take(3)
            .map(|w| format!("`{w}`"))
            .collect();
        if missing.is_empty() {
            apply.push(n.clone());
        } else {
            apart.push((
                n.clone(),
                format!(
                    "{NOT_APPLICABLE} here: it uses {}, which only {author}'s change had",
                    missing.join(", ")
                ),
            ));
        }
    }
    (apply, apart)
}

/// A kept answer's tests on one candidate's code: laid as another
/// author's are in cross-testing (its own tests from the base, a build
/// cache of their own started from the base's seed), run by the task's
/// test guardrail; each test's name and how it fared ([`PASSES`],
/// `fails`, `did not run`).
async fn run_kept_tests(
    config: &Config,
    run: &str,
    (names, files): (&[String], &[(String, String)]),
    (place, changes): (&Place, &rascal_core::model::changeset::ChangeSet),
    cancel: &CancellationToken,
) -> Result<std::collections::BTreeMap<String, String>, Error> {
    let (g, rec) =
        crate::pipeline::compare::cross_test::test_guardrail(config, place.origin(), &changes.base)
            .ok_or_else(|| {
                Error::Verification(
                    "the task has no test guardrail whose runner rascal reads".into(),
                )
            })?;
    let runs = TestRuns::new(&g, &rec, cancel)
        .ok_or_else(|| Error::Verification("the test guardrail runs no command".into()))?;
    let laid = crate::layers::evidence::base_defined::kept_tests_on(files, (place, changes))
        .map_err(|e| {
            Error::Verification(format!("its tests could not be laid on this code: {e}"))
        })?;
    let cache =
        crate::pipeline::compare::cross_test::OwnCache::new(place, &format!("kept-{run}")).await;
    let laid = match &cache.0 {
        Some(dir) => laid.with_cache(dir.clone()),
        None => laid,
    };
    let ran = runs.run(&laid).await;
    drop(cache);
    let ran = ran?;
    let these = Listing {
        tests: names.to_vec(),
        complete: true,
        files_only: false,
    };
    let j = ledger::judge(rec.runner, &these, &runs.results(&ran, &these));
    Ok(names
        .iter()
        .map(|n| {
            let fared = if j.failed.contains(n) {
                "fails"
            } else if j.not_run.contains(n) || j.ignored.contains(n) {
                "did not run"
            } else {
                PASSES
            };
            (n.clone(), fared.to_string())
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept() -> Kept {
        Kept {
            run: "r-1".into(),
            right: "alder".into(),
            who: "Tess".into(),
            answer: Answer::Probe {
                probe: ProbeSource {
                    file: "p.py".into(),
                    content: String::new(),
                    command: vec!["python3".into()],
                },
                expected: vec![("half(3)".into(), "1".into())],
            },
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
        let broken = [Err(Error::Verification("it did not build".into()))];
        assert_eq!(
            report(&k, &broken).status,
            Status::Fail,
            "never a silent pass"
        );
    }

    #[test]
    fn a_kept_test_that_fails_or_does_not_run_fails_naming_its_author_and_run() {
        let k = [Kept {
            answer: Answer::Tests {
                author: "alder".into(),
                names: vec!["tests::adds_negatives".into()],
                files: vec![("src/lib.rs".into(), String::new())],
                leans_on: Default::default(),
            },
            ..kept()
        }];
        let fared = |how: &str| {
            [Ok(
                [("tests::adds_negatives".to_string(), how.to_string())].into()
            )]
        };
        assert_eq!(report(&k, &fared(PASSES)).status, Status::Pass);
        let r = report(&k, &fared("fails"));
        assert_eq!(r.status, Status::Fail);
        assert_eq!(
            r.issues[0].message,
            "`tests::adds_negatives` (alder's test, kept from run r-1) fails here, but alder passes it and is right here (Tess chose alder in run r-1)"
        );
        let none = [Ok(std::collections::BTreeMap::new())];
        assert!(report(&k, &none).issues[0]
            .message
            .contains("did not run here"));
    }

    /// A kept test that uses a name only its author's change had says
    /// nothing about a change without it (another name for the same
    /// thing): it is not run there and fails nobody, and the report says so.
    #[test]
    fn a_kept_test_leaning_on_its_authors_own_name_does_not_apply_without_it() {
        let mut code = rascal_scan::test_integrity::Corpus::default();
        code.add("pub fn add(a: i32, b: i32) -> i32 { a + b }");
        let names = vec!["tests::a".to_string(), "tests::b".to_string()];
        let leans: std::collections::BTreeMap<String, Vec<String>> =
            [("tests::b".to_string(), vec!["add_checked".to_string()])].into();
        let (apply, apart) = applicable(&names, &leans, &code, "alder");
        assert_eq!(apply, vec!["tests::a".to_string()]);
        assert_eq!(
            apart,
            vec![(
                "tests::b".to_string(),
                "does not apply here: it uses `add_checked`, which only alder's change had"
                    .to_string()
            )]
        );
        code.add("pub fn add_checked() {}");
        assert_eq!(applicable(&names, &leans, &code, "alder").0.len(), 2);
        let k = [Kept {
            answer: Answer::Tests {
                author: "alder".into(),
                names,
                files: Vec::new(),
                leans_on: leans,
            },
            ..kept()
        }];
        let out = [Ok([
            ("tests::a".to_string(), PASSES.to_string()),
            (apart[0].0.clone(), apart[0].1.clone()),
        ]
        .into())];
        let r = report(&k, &out);
        assert_eq!(r.status, Status::Pass, "{r:?}");
        assert!(
            r.output.contains("`tests::b` does not apply here"),
            "{}",
            r.output
        );
    }
}
