//! The test ledger: which tests a test guardrail's runner knows by name at
//! the base commit and for a candidate, and which of them ran, passed,
//! failed or were ignored — read from the runners' own listings and
//! machine-readable results, never from prose. Pure: this module recognises
//! the runner in a guardrail command, writes the commands to run, and parses
//! what they printed; running them is the caller's job.
//!
//! Names are comparable between a listing and a run of the same runner:
//! cargo `alpha:src/lib.rs tests::adds` (target label, then the libtest name,
//! when the output carries cargo's `Running` lines), Go `pkg.TestX` (and
//! `pkg.TestX/sub` in results), pytest node ids `path.py::Class::test[id]`,
//! jest and vitest `file > describe > test` with the file relative to the
//! runner's directory once [`Listing::relative_to`] and
//! [`Results::relative_to`] have removed the copy's path.

mod cargo;
mod commands;
mod go;
mod js;
pub mod junit;
mod pytest;
mod recognise;
mod settle;
mod shell;
mod unittest;

pub use commands::{listing_command, no_fail_fast, results_command, results_run, shipped_profile};
pub use pytest::pytest_style;
pub use recognise::{package_json_dir, recognise};
use settle::settle;

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A test runner whose listing and results rascal can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Runner {
    Cargo,
    Go,
    Pytest,
    /// `python -m unittest`, through rascal's own listing and results
    /// programs (`unittest.rs`).
    Unittest,
    Jest,
    Vitest,
}

impl Runner {
    /// Whether a test that uses a name its code does not have fails when
    /// it runs (Python) instead of not building (Rust, Go) — and rascal can
    /// stub out a change's new code for it: such a failure at the base
    /// says nothing of what the test checks. JavaScript fails at run time
    /// too, but rascal does not stub it out.
    pub fn missing_names_fail_when_run(self) -> bool {
        matches!(self, Runner::Pytest | Runner::Unittest)
    }
}

/// How a recognised runner is started.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Launcher {
    /// The runner's own command: `cargo test`, `python -m pytest`, `npx jest`.
    Direct,
    /// A package script (`npm test`, `yarn run unit`) whose text runs the runner.
    Script(Manager),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Manager {
    Npm,
    Yarn,
    Pnpm,
}

/// The test command found in a guardrail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recognised {
    pub runner: Runner,
    /// The directory the runner runs in, relative to where the guardrail
    /// starts (from `cd sub && …`, and a package script's own `cd`).
    pub dir: Option<String>,
    /// `NAME=value` assignments that prefix the runner, as written.
    pub env: Vec<String>,
    /// The words that start the runner: `cargo test`, `python3 -m pytest`,
    /// `npx jest`, `npx vitest run`. A package script's bare `jest` becomes
    /// `npx jest` here, so the listing can run outside the script.
    pub program: Vec<String>,
    /// The words after the program: packages, paths, filters and flags.
    pub args: Vec<String>,
    /// Which simple command of the guardrail (0-based) starts the runner.
    segment: usize,
    launcher: Launcher,
    /// A package script's own `cd`, applied after the guardrail's.
    script_dir: Option<String>,
}

/// The tests a runner would run, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listing {
    /// Names in the runner's order; a name listed twice (two binaries with
    /// the same test and no label to tell them apart) appears twice.
    pub tests: Vec<String>,
    /// The listing ended as the runner ends a good listing, with nothing it
    /// could not read. False for a build or collection error and for an
    /// unrecognised output.
    pub complete: bool,
    /// `tests` holds test files, not test names (jest's `--listTests`,
    /// pytest's `-qq`): names cannot be listed before running.
    pub files_only: bool,
}

/// What a run reported, cross-checked against the listing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Results {
    pub passed: Vec<String>,
    pub failed: Vec<String>,
    pub ignored: Vec<String>,
    /// Results for names the listing does not have: not counted. A test
    /// that prints `test fake ... ok` lands here.
    pub unlisted: Vec<String>,
    /// Packages, binaries, files or suites that failed outside any test (a
    /// build failure, a collection error, a suite that did not load): their
    /// tests have no result.
    pub broken: Vec<String>,
    /// What the parser noticed and could not settle (more results than a
    /// binary announced, a name reported twice).
    pub notes: Vec<String>,
    /// The results were read in full: the file was there and parsed, the
    /// output had the runner's closing lines.
    pub complete: bool,
}

/// The ledger a test guardrail's report carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    pub runner: Runner,
    pub at_base: Vec<String>,
    pub now: Vec<String>,
    /// Tests that ran to a verdict: passed plus failed.
    pub ran: usize,
    pub passed: Vec<String>,
    pub failed: Vec<String>,
    pub ignored: Vec<String>,
    /// Listed at the base, not listed now: tests the change removed or
    /// renamed. Cargo doc tests are compared without their `(line N)`.
    pub missing: Vec<String>,
    /// Listed now, not at the base.
    pub added: Vec<String>,
    /// Listed now with no result: the run stopped early, a binary or
    /// package did not build, or the selection differed.
    pub not_run: Vec<String>,
    /// Results for names the listing lacked; not counted.
    pub unlisted: Vec<String>,
    pub broken: Vec<String>,
    /// The names are test files, not tests (jest): missing, added and
    /// not_run are files.
    pub files_only: bool,
    /// Both listings and the results were read in full.
    pub complete: bool,
}

impl Listing {
    /// Names relative to `root` (the directory the runner ran in): jest and
    /// vitest print absolute paths, which differ between two copies.
    pub fn relative_to(mut self, root: &str) -> Self {
        for t in &mut self.tests {
            *t = strip_root(t, root);
        }
        self
    }
}

impl Results {
    /// See [`Listing::relative_to`].
    pub fn relative_to(mut self, root: &str) -> Self {
        for list in [
            &mut self.passed,
            &mut self.failed,
            &mut self.ignored,
            &mut self.unlisted,
            &mut self.broken,
        ] {
            for t in list.iter_mut() {
                *t = strip_root(t, root);
            }
        }
        self
    }
}

fn strip_root(name: &str, root: &str) -> String {
    let root = root.trim_end_matches('/');
    if root.is_empty() {
        return name.to_string();
    }
    match name
        .strip_prefix(root)
        .and_then(|rest| rest.strip_prefix('/'))
    {
        Some(rest) => rest.to_string(),
        None => name.to_string(),
    }
}

// ---------------------------------------------------------------------------
// Parsing.

/// The names a listing command printed. For cargo, pass stdout and stderr
/// as one stream (the listing command merges them) so each name carries its
/// target.
pub fn parse_listing(runner: Runner, stdout: &str) -> Listing {
    match runner {
        Runner::Cargo => cargo::parse_listing(stdout),
        Runner::Go => go::parse_listing(stdout),
        Runner::Pytest => pytest::parse_listing(stdout),
        Runner::Unittest => unittest::parse_listing(stdout),
        Runner::Jest => js::parse_jest_listing(stdout),
        Runner::Vitest => js::parse_vitest_listing(stdout),
    }
}

/// What a run reported: from stdout (cargo, Go) or the results file
/// (pytest's junit XML, jest's and vitest's JSON). With a listing, a result
/// whose name it lacks goes to `unlisted` instead of counting, and a name
/// reported more often than listed keeps its worst outcomes.
pub fn parse_results(
    runner: Runner,
    stdout: &str,
    file: Option<&str>,
    listing: Option<&Listing>,
) -> Results {
    let (reported, mut partial) = match runner {
        Runner::Cargo => cargo::parse_results(stdout),
        Runner::Go => go::parse_results(stdout),
        Runner::Pytest => match file {
            Some(xml) => pytest::parse_results(xml, listing),
            None => no_file(),
        },
        Runner::Unittest => match file {
            Some(json) => unittest::parse_results(json),
            None => no_file(),
        },
        Runner::Jest | Runner::Vitest => match file {
            Some(json) => js::parse_results(json),
            None => no_file(),
        },
    };
    settle(runner, reported, listing, &mut partial);
    partial
}

/// One outcome as the runner reported it, before the listing's cross-check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Outcome {
    Passed,
    Ignored,
    Failed,
}

/// What a runner's parser hands back: every outcome as reported, and the
/// results so far (broken, notes, complete) for `settle` to fill in.
type Parsed = (Vec<(String, Outcome)>, Results);

fn no_file() -> Parsed {
    let notes = vec!["the results file was not there to read".to_string()];
    (
        Vec::new(),
        Results {
            notes,
            ..Results::default()
        },
    )
}

/// Where a reported name is looked up in a listing: Go subtests under
/// their top-level test, jest results under their file.
fn listing_key(runner: Runner, name: &str, files_only: bool) -> String {
    match runner {
        Runner::Go => go::top_level(name).to_string(),
        Runner::Jest | Runner::Vitest if files_only => js::file_of(name).to_string(),
        Runner::Pytest if files_only => pytest::file_of(name).to_string(),
        _ => name.to_string(),
    }
}

// ---------------------------------------------------------------------------
// The ledger.

/// The ledger of one candidate's run: what was listed at the base and now,
/// what the run reported, and what disappeared.
pub fn ledger(runner: Runner, at_base: &Listing, now: &Listing, results: &Results) -> Ledger {
    let files_only = at_base.files_only || now.files_only;
    let stable = |n: &str| stable_name(runner, n);
    let missing = multiset_minus(&at_base.tests, &now.tests, stable);
    let added = multiset_minus(&now.tests, &at_base.tests, stable);
    let reported: Vec<String> = results
        .passed
        .iter()
        .chain(&results.failed)
        .chain(&results.ignored)
        .map(|n| listing_key(runner, n, now.files_only))
        .collect();
    let not_run = multiset_minus(&now.tests, &reported, |n| n.to_string());
    // Go subtests and jest files: one result is enough for the listed key.
    let not_run = if runner == Runner::Go || now.files_only {
        let set: std::collections::HashSet<&String> = reported.iter().collect();
        now.tests
            .iter()
            .filter(|t| !set.contains(t))
            .cloned()
            .collect()
    } else {
        not_run
    };
    Ledger {
        runner,
        at_base: at_base.tests.clone(),
        now: now.tests.clone(),
        ran: results.passed.len() + results.failed.len(),
        passed: results.passed.clone(),
        failed: results.failed.clone(),
        ignored: results.ignored.clone(),
        missing,
        added,
        not_run,
        unlisted: results.unlisted.clone(),
        broken: results.broken.clone(),
        files_only,
        complete: at_base.complete && now.complete && results.complete,
    }
}

/// The files a listing says its tests live in, relative to where the
/// runner runs: pytest's node ids and jest's and vitest's names carry them
/// (whatever the files are called); cargo and Go name no file.
pub fn test_files(runner: Runner, listing: &Listing) -> Vec<String> {
    let mut out: Vec<String> = listing
        .tests
        .iter()
        .filter_map(|t| match runner {
            // A doctest (`calc.py::calc.add`) lives in the code, not in
            // a test file.
            Runner::Pytest if pytest::is_doctest(t) => None,
            Runner::Pytest => Some(pytest::file_of(t)),
            Runner::Jest | Runner::Vitest => Some(js::file_of(t)),
            Runner::Cargo | Runner::Go | Runner::Unittest => None,
        })
        .filter(|f| !f.is_empty() && !f.starts_with('/'))
        .map(str::to_string)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// How the tests of a listing fared in one run: each listed test passed,
/// failed (a failure reported for it, or for one of its subtests), or has
/// no result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judged {
    pub listed: usize,
    pub passed: usize,
    pub failed: Vec<String>,
    pub not_run: Vec<String>,
    pub ignored: Vec<String>,
}

/// Judge `results` against `listing`: a listed test passes only when the
/// run reported it passed and reported no failure for it.
pub fn judge(runner: Runner, listing: &Listing, results: &Results) -> Judged {
    let named = |n: &String| listing_key(runner, n, listing.files_only);
    let reported: Vec<String> = (results.passed.iter())
        .chain(&results.failed)
        .chain(&results.ignored)
        .map(named)
        .collect();
    let keys = Ordinals::new(runner, &listing.tests, &reported);
    let set = |names: &[String]| -> std::collections::HashSet<String> {
        names
            .iter()
            .map(|n| keys.key(&keys.reported, &named(n)))
            .collect()
    };
    let (failed, passed, ignored) = (
        set(&results.failed),
        set(&results.passed),
        set(&results.ignored),
    );
    let mut out = Judged {
        listed: listing.tests.len(),
        ..Judged::default()
    };
    for t in &listing.tests {
        let k = keys.key(&keys.listed, t);
        if failed.contains(&k) {
            out.failed.push(t.clone());
        } else if passed.contains(&k) {
            out.passed += 1;
        } else if ignored.contains(&k) {
            out.ignored.push(t.clone());
        } else {
            out.not_run.push(t.clone());
        }
    }
    out
}

/// How a listed name and a reported one are matched in [`judge`]: by name,
/// and a cargo doc test by its item and ordinal among the item's doc tests
/// (by line) — where the listing and the run hold as many of that item's
/// doc tests, so both count them alike; otherwise by item alone (a failure
/// of any of the item's doc tests then fails each listed one).
struct Ordinals {
    runner: Runner,
    /// Doc test name → its item and ordinal, for the listing's names and
    /// for the run's (the same name may be another ordinal there).
    listed: HashMap<String, String>,
    reported: HashMap<String, String>,
}

impl Ordinals {
    fn new(runner: Runner, listed: &[String], reported: &[String]) -> Self {
        let per_item = |names: &[String]| {
            let mut m: HashMap<String, Vec<(u64, String)>> = HashMap::new();
            for n in names.iter().filter(|_| runner == Runner::Cargo) {
                if let Some(line) = cargo::doc_line(n) {
                    let item = cargo::without_line(n);
                    m.entry(item).or_default().push((line, n.clone()));
                }
            }
            m
        };
        let (a, b) = (per_item(listed), per_item(reported));
        let ordinals = |m: &HashMap<String, Vec<(u64, String)>>| {
            let mut out = HashMap::new();
            for (item, xs) in m {
                if a.get(item).map(Vec::len) != b.get(item).map(Vec::len) {
                    continue;
                }
                let mut xs = xs.clone();
                xs.sort();
                for (k, (_, n)) in xs.into_iter().enumerate() {
                    out.insert(n, format!("{item} #{k}"));
                }
            }
            out
        };
        Ordinals {
            runner,
            listed: ordinals(&a),
            reported: ordinals(&b),
        }
    }

    fn key(&self, of: &HashMap<String, String>, name: &str) -> String {
        of.get(name)
            .cloned()
            .unwrap_or_else(|| stable_name(self.runner, name))
    }
}

/// A test's name as it compares across two commits whatever the runner:
/// a cargo doc test's `(line N)` left out (it moves with every line added
/// above the example).
pub fn comparable(name: &str) -> String {
    cargo::without_line(name)
}

/// A name as it should compare across two commits: a cargo doc test moves
/// with every line added above it, so its `(line N)` is left out.
fn stable_name(runner: Runner, name: &str) -> String {
    match runner {
        Runner::Cargo => cargo::without_line(name),
        _ => name.to_string(),
    }
}

/// `a` less `b`, each element of `b` cancelling one equal (by `key`)
/// element of `a`; `a`'s order kept.
fn multiset_minus(a: &[String], b: &[String], key: impl Fn(&str) -> String) -> Vec<String> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for x in b {
        *counts.entry(key(x)).or_default() += 1;
    }
    a.iter()
        .filter(|x| match counts.get_mut(&key(x)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests;
