//! Cross-testing: after the gate, each passing candidate's new tests that
//! fail at the base (its test guardrail's evidence) run against every
//! other passing candidate's code, in a fresh sandboxed copy of that
//! candidate's checks with the tests laid in (`base_defined::tests_on_other`:
//! test files whole, Rust test modules into the same source file). A test
//! that fails there, does not build there, dies or gives no result fails
//! it (`cross_cell`), unless it leans on a word only its author's change
//! has: then it is not applicable. Bounded by `compare.cross_tests` runs
//! per run.
//!
//! Each run holds one author's tests on one candidate's code, with a
//! build cache of its own started from the base's seed: an author's test
//! code runs there, so it never shares a process, a test binary or a
//! build cache with another author's tests or with the candidate's own
//! checks — one author's tests cannot make another's fail (or pass) on
//! somebody else's code.

use crate::layers::evidence::test_evidence::TestRuns;
use crate::pipeline::compare::cross_cell;
use crate::pipeline::compare::cross_reuse::{self, Kept, KeptCell};
use rascal_core::config::{Config, Guardrail, GuardrailKind};
use rascal_core::model::agreement::{Agreement, Cell, CellNote, CrossTest, TestSource};
use rascal_core::model::changeset::ChangeSet;
use rascal_core::model::verdict::Report;
use rascal_exec::exec::place::Place;
use rascal_scan::ledger::{self, Listing, Recognised};
use rascal_scan::test_integrity::Corpus;
use tokio_util::sync::CancellationToken;

/// Default bound on cross-test runs per run (`compare.cross_tests`).
pub const DEFAULT_BOUND: usize = 200;

/// A candidate that passed the gate, as cross-testing needs it.
pub struct Crossing<'a> {
    pub id: &'a str,
    pub place: &'a Place,
    pub changes: &'a ChangeSet,
    pub reports: &'a [Report],
}

/// The test guardrail cross-testing runs, and its runner.
pub(crate) fn test_guardrail(
    config: &Config,
    origin: &std::path::Path,
    base: &str,
) -> Option<(Guardrail, Recognised)> {
    let package_json = crate::pipeline::sequence::base_package_json(origin, base);
    config
        .guardrails
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .filter(|g| {
            crate::layers::evidence::test_run::is_test_guardrail(g, package_json.as_deref())
        })
        .find_map(|g| match &g.kind {
            GuardrailKind::Command { command, .. } => {
                ledger::recognise(command, package_json.as_deref()).map(|r| (g.clone(), r))
            }
            _ => None,
        })
}

/// The tests `c` wrote that fail at the base and pass on its code, from
/// its report of guardrail `g` — with the base's tests it updated for an
/// API it altered (`api_change`) — and those of them that did not build on
/// the base's code.
fn proving(c: &Crossing<'_>, g: &Guardrail) -> (Vec<String>, Vec<String>) {
    let ledgers = c
        .reports
        .iter()
        .filter(|r| r.check == g.name)
        .filter_map(|r| r.ledger.as_ref());
    let mut out = (Vec::new(), Vec::new());
    for l in ledgers {
        if let Some(n) = &l.new_tests {
            out.0.extend(n.proving_names.iter().cloned());
            out.1.extend(n.unbuilt_at_base.iter().cloned());
        }
        if let Some(b) = &l.base_tests {
            out.0.extend(b.updated.iter().cloned());
            out.1.extend(b.updated.iter().cloned());
        }
    }
    out
}

/// One test's cell in a batch: its author (an index into the candidates),
/// its name, how it fared, and what the mark does not say.
type Outcome = (usize, String, Cell, Option<String>);

/// The texts cells are judged against: the base's, each author's code,
/// each target's code; and each author's tests that did not build on the
/// base's code.
struct Texts {
    base: Corpus,
    code: Vec<Corpus>,
    unbuilt: Vec<Vec<String>>,
    /// Each author's test files (and Rust sources with test modules):
    /// path and text.
    tests: Vec<Vec<(String, String)>>,
}

/// What every batch of one cross-testing shares: the candidates, each
/// author's tests (names and files), the runs, the texts, and what the
/// runs' reuse is keyed on.
struct Shared<'a> {
    candidates: &'a [Crossing<'a>],
    names: &'a [Vec<String>],
    listed: &'a [Vec<String>],
    runs: &'a TestRuns<'a>,
    texts: &'a Texts,
    config: &'a Config,
}

/// One run of cross-testing: on `target`'s code, the tests of `author`
/// (indices into the candidates).
struct Batch {
    target: usize,
    author: usize,
}

/// The runs on `target`: one per other author, never two authors in one
/// run (their test code would share a process and a build).
fn batches(target: usize, authors: &[(usize, Vec<String>)]) -> Vec<Batch> {
    authors
        .iter()
        .filter(|(a, _)| *a != target)
        .map(|&(author, _)| Batch { target, author })
        .collect()
}

/// A fresh build cache for one cross-test run beside the target's own,
/// started from the base's seed (built by base code only); None when the
/// target has none. Removed when dropped.
pub(crate) struct OwnCache(pub(crate) Option<std::path::PathBuf>);

impl OwnCache {
    /// Made (and the seed copied) off the async workers.
    pub(crate) async fn new(target: &Place, author: &str) -> OwnCache {
        let Some(own) = target.cache() else {
            return OwnCache(None);
        };
        // Candidate ids name workspace directories already: safe here.
        let dir = own.with_file_name(format!("cross-build-cache-{author}"));
        let origin = target.origin().to_path_buf();
        let made = tokio::task::spawn_blocking(move || {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).ok()?;
            rascal_exec::exec::steady::begin(&dir);
            let seed = rascal_exec::git::workspace::open(&origin)
                .map(|r| rascal_exec::git::workspace::files_dir(&r))
                .map(|files| files.join("ledger").join(rascal_exec::exec::cache::SEED));
            if let Ok(seed) = seed {
                // A seed that cannot be copied only makes the build cold.
                let _ = rascal_exec::exec::cache::seed(&dir, &seed);
            }
            Some(dir)
        })
        .await;
        OwnCache(made.ok().flatten())
    }
}

impl Drop for OwnCache {
    fn drop(&mut self) {
        if let Some(d) = &self.0 {
            let _ = std::fs::remove_dir_all(d);
            rascal_exec::exec::steady::end(d);
        }
    }
}

/// The agreement matrix of `candidates` (those that passed the gate).
pub async fn cross_test(
    config: &Config,
    candidates: &[Crossing<'_>],
    bound: usize,
    cancel: &CancellationToken,
) -> Agreement {
    let mut m = Agreement {
        candidates: candidates.iter().map(|c| c.id.to_string()).collect(),
        ..Agreement::default()
    };
    let Some(first) = candidates.first() else {
        return m;
    };
    let Some((g, rec)) = test_guardrail(config, first.place.origin(), &first.changes.base) else {
        m.skipped = Some("no test guardrail whose runner rascal reads".into());
        return m;
    };
    let (names, unbuilt): (Vec<Vec<String>>, Vec<Vec<String>>) =
        candidates.iter().map(|c| proving(c, &g)).unzip();
    for (c, ns) in candidates.iter().zip(&names) {
        m.tests.extend(ns.iter().map(|n| CrossTest {
            author: c.id.to_string(),
            name: n.clone(),
        }));
    }
    m.cells = own_cells(&m.tests, candidates);
    if m.tests.is_empty() || candidates.len() < 2 {
        return m;
    }
    let files = |i: usize| -> Vec<String> {
        ledger::test_files(
            rec.runner,
            &Listing {
                tests: names[i].clone(),
                complete: true,
                files_only: false,
            },
        )
    };
    let authors: Vec<(usize, Vec<String>)> = (0..candidates.len())
        .filter(|&i| !names[i].is_empty())
        .map(|i| {
            let c = &candidates[i];
            (
                i,
                crate::layers::evidence::base_defined::test_paths(c.place, c.changes, &files(i)),
            )
        })
        .collect();
    let plan: Vec<Batch> = (0..candidates.len())
        .flat_map(|t| batches(t, &authors))
        .collect();
    if plan.len() > bound {
        m.skipped = Some(format!(
            "not run: {} test runs needed, over `compare.cross_tests: {bound}`",
            plan.len()
        ));
        return m;
    }
    let Some(runs) = TestRuns::new(&g, &rec, cancel) else {
        return m;
    };
    let listed: Vec<Vec<String>> = (0..candidates.len()).map(files).collect();
    let texts = texts_of(candidates, unbuilt, &authors).await;
    // What was laid is kept with the matrix: a human's answer to the
    // question it raises keeps these as tests for later runs.
    m.sources = sources_of(candidates, &authors, &names, &texts);
    let shared = Shared {
        candidates,
        names: &names,
        listed: &listed,
        runs: &runs,
        texts: &texts,
        config,
    };
    let outcomes = run_plan(&plan, &shared).await;
    m.runs = plan.len();
    m.reused = outcomes.iter().filter(|o| o.1).count();
    fill(&mut m, outcomes, candidates);
    m
}

/// The matrix before any run: the author's own tests pass on its code
/// (that is what proving means), the others' are not applicable.
fn own_cells(tests: &[CrossTest], candidates: &[Crossing<'_>]) -> Vec<Vec<Cell>> {
    candidates
        .iter()
        .map(|c| {
            tests
                .iter()
                .map(|t| {
                    if t.author == c.id {
                        Cell::Passed
                    } else {
                        Cell::NotApplicable
                    }
                })
                .collect()
        })
        .collect()
}

/// The words cross-testing reads: the base's, each candidate's code, and
/// each author's tests (`authors`: index and test paths).
async fn texts_of(
    candidates: &[Crossing<'_>],
    unbuilt: Vec<Vec<String>>,
    authors: &[(usize, Vec<String>)],
) -> Texts {
    let first = &candidates[0];
    let (origin, base) = (
        first.place.origin().to_path_buf(),
        first.changes.base.clone(),
    );
    Texts {
        base: tokio::task::spawn_blocking(move || cross_cell::base_corpus(&origin, &base))
            .await
            .unwrap_or_default(),
        code: candidates
            .iter()
            .map(|c| cross_cell::change_corpus(c.place, c.changes, true))
            .collect(),
        unbuilt,
        tests: (0..candidates.len())
            .map(|i| match authors.iter().find(|(a, _)| *a == i) {
                Some((_, paths)) => cross_cell::test_texts(candidates[i].place, paths),
                None => Vec::new(),
            })
            .collect(),
    }
}

/// Each author's laid tests, and for each of its tests the words only its
/// author's change has.
fn sources_of(
    candidates: &[Crossing<'_>],
    authors: &[(usize, Vec<String>)],
    names: &[Vec<String>],
    texts: &Texts,
) -> Vec<TestSource> {
    authors
        .iter()
        .map(|&(i, _)| TestSource {
            author: candidates[i].id.to_string(),
            files: texts.tests[i].clone(),
            leans_on: names[i]
                .iter()
                .map(|n| {
                    let words = cross_cell::words_of(&texts.tests[i], n);
                    let none = Corpus::default();
                    let theirs = rascal_scan::test_integrity::only_theirs(
                        &words,
                        &texts.code[i],
                        &texts.base,
                        &none,
                    );
                    (n.clone(), theirs)
                })
                .filter(|(_, w)| !w.is_empty())
                .collect(),
        })
        .collect()
}

/// Every batch of `plan`: targets in parallel; one target's batches one
/// after the other, as they share its build cache. Each with its target,
/// whether its cells were reused, and its cells.
async fn run_plan(plan: &[Batch], shared: &Shared<'_>) -> Vec<(usize, bool, Vec<Outcome>)> {
    let per_target = (0..shared.candidates.len()).map(|t| {
        let mine: Vec<&Batch> = plan.iter().filter(|b| b.target == t).collect();
        async move {
            let mut out = Vec::new();
            for b in mine {
                let (reused, cells) = reused_or_run(b, shared).await;
                out.push((b.target, reused, cells));
            }
            out
        }
    });
    futures::future::join_all(per_target)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// The runs' outcomes into the matrix: each cell, and its note.
fn fill(
    m: &mut Agreement,
    outcomes: Vec<(usize, bool, Vec<Outcome>)>,
    candidates: &[Crossing<'_>],
) {
    for (target, _, cells) in outcomes {
        for (name_author, name, cell, note) in cells {
            if let Some(col) = m
                .tests
                .iter()
                .position(|t| t.author == candidates[name_author].id && t.name == name)
            {
                m.cells[target][col] = cell;
                if let Some(note) = note {
                    m.notes.push(CellNote {
                        candidate: candidates[target].id.to_string(),
                        test: col,
                        note,
                    });
                }
            }
        }
    }
}

/// One batch's cells: kept from a run with exactly these inputs
/// (`cross_reuse`; true), else run now (false) and kept when the run gave
/// an answer.
async fn reused_or_run(b: &Batch, shared: &Shared<'_>) -> (bool, Vec<Outcome>) {
    let (author, target) = (&shared.candidates[b.author], &shared.candidates[b.target]);
    fn side<'a>(c: &Crossing<'a>) -> cross_reuse::Side<'a> {
        cross_reuse::Side {
            id: c.id,
            place: c.place,
            tree: &c.changes.tree,
        }
    }
    let inputs = cross_reuse::Inputs {
        base: &target.changes.base,
        guardrail: shared.runs.g,
        config: shared.config,
        names: &shared.names[b.author],
        files: &shared.listed[b.author],
        unbuilt: &shared.texts.unbuilt[b.author],
    };
    let kept = Kept::of(&side(author), &side(target), &inputs);
    let with_author = |cells: Vec<KeptCell>| {
        cells
            .into_iter()
            .map(|(name, cell, note)| (b.author, name, cell, note))
            .collect()
    };
    if let Some(cells) = kept.as_ref().and_then(Kept::cells) {
        return (true, with_author(cells));
    }
    let (cells, answered) = run_batch(b, shared).await;
    if let (Some(kept), true) = (&kept, answered) {
        let plain: Vec<KeptCell> = cells
            .iter()
            .map(|(_, n, c, note)| (n.clone(), *c, note.clone()))
            .collect();
        kept.keep(&plain);
    }
    (false, cells)
}

/// What one batch's run gave: the judged results, what went wrong with
/// the run, whether the tests could be laid, and what the run printed.
struct Ran {
    judged: Option<ledger::Judged>,
    trouble: Option<String>,
    laid: bool,
    said: String,
}

/// One batch's run: each author's test with its cell on the target's
/// code (see `cross_cell` for what each outcome means), and whether the
/// run gave an answer (it was laid and ran to its end: no timeout, no
/// cancel, no failure to start).
async fn run_batch(b: &Batch, shared: &Shared<'_>) -> (Vec<Outcome>, bool) {
    let ran = lay_and_run(b, shared).await;
    let answered = ran.laid && ran.trouble.is_none();
    (cells_of(b, shared, &ran), answered)
}

/// Lay the author's tests on the target's code and run them, in a build
/// cache of their own.
async fn lay_and_run(b: &Batch, shared: &Shared<'_>) -> Ran {
    let (candidates, runs) = (shared.candidates, shared.runs);
    let target = &candidates[b.target];
    let a = b.author;
    let authors = [(
        candidates[a].place,
        candidates[a].changes,
        shared.listed[a].as_slice(),
    )];
    let these = Listing {
        tests: shared.names[a].clone(),
        complete: true,
        files_only: false,
    };
    let laid = match crate::layers::evidence::base_defined::tests_on_other(
        &authors,
        (target.place, target.changes),
    ) {
        Ok(laid) => laid,
        Err(e) => {
            return Ran {
                judged: None,
                trouble: Some(format!("could not be laid on this code: {e}")),
                laid: false,
                said: String::new(),
            }
        }
    };
    let cache = OwnCache::new(target.place, candidates[a].id).await;
    let laid = match &cache.0 {
        Some(dir) => laid.with_cache(dir.clone()),
        None => laid,
    };
    let ran = runs.run(&laid).await;
    drop(cache);
    match ran {
        Ok(run) => {
            let results = runs.results(&run, &these);
            Ran {
                judged: Some(ledger::judge(runs.rec.runner, &these, &results)),
                trouble: run.outcome.exit.problem(runs.timeout),
                laid: true,
                said: run.text,
            }
        }
        Err(e) => Ran {
            judged: None,
            trouble: Some(e.to_string()),
            laid: true,
            said: String::new(),
        },
    }
}

/// Each of the author's tests' cell on the target's code, from the run.
fn cells_of(b: &Batch, shared: &Shared<'_>, ran: &Ran) -> Vec<Outcome> {
    let (candidates, texts) = (shared.candidates, shared.texts);
    let a = b.author;
    let author = (candidates[a].id, &texts.code[a]);
    let judged = ran.judged.as_ref();
    shared.names[a]
        .iter()
        .map(|n| {
            let passed = judged.is_some_and(|j| {
                !j.failed.contains(n) && !j.not_run.contains(n) && !j.ignored.contains(n)
            });
            if passed {
                return (a, n.clone(), Cell::Passed, None);
            }
            let words = cross_cell::words_of(&texts.tests[a], n);
            if let Some(why) =
                cross_cell::not_applicable(&words, author, &texts.base, &texts.code[b.target])
            {
                return (a, n.clone(), Cell::NotApplicable, Some(why));
            }
            if !ran.laid {
                return (a, n.clone(), Cell::NotApplicable, ran.trouble.clone());
            }
            let failed = judged.is_some_and(|j| j.failed.contains(n));
            let new_api = texts.unbuilt[a].contains(n);
            let note = match (&ran.trouble, failed) {
                (Some(t), _) => Some(format!("the run: {t}")),
                (None, true) => {
                    cross_cell::failure_excerpt(&ran.said, n).map(|e| format!("fails here: {e}"))
                }
                // An API the base never had, that this code does not
                // define as the author's does: the test cannot say
                // anything here.
                (None, false) if new_api => {
                    return (
                        a,
                        n.clone(),
                        Cell::NotApplicable,
                        Some(format!(
                            "did not build here: it uses an API the base never had, which this change does not define as {}'s does",
                            candidates[a].id
                        )),
                    )
                }
                (None, false) => Some(
                    "no result on this code: it builds on the base's code and not on this change (the change broke or removed what the base had), or it did not run to its end"
                        .to_string(),
                ),
            };
            (a, n.clone(), Cell::Failed, note)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_authors_tests_run_alone_and_never_on_their_authors_code() {
        let authors = vec![
            (0, vec!["src/lib.rs".to_string()]),
            (1, vec!["tests/a.rs".to_string()]),
            (2, vec!["src/lib.rs".to_string()]),
        ];
        let b = batches(3, &authors);
        assert_eq!(
            b.iter().map(|b| b.author).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        assert!(b.iter().all(|b| b.target == 3));
        // Tests touching different files still run apart; and a
        // candidate's own tests are never laid over its own code.
        let b = batches(0, &authors);
        assert_eq!(b.iter().map(|b| b.author).collect::<Vec<_>>(), vec![1, 2]);
    }
}
