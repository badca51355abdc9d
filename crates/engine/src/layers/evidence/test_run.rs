//! The test run of a change: which command guardrails are the test run
//! (`tests: true`, a guardrail named `test`/`tests`, or a known runner such
//! as `cargo test`), the `test-integrity` check that compares both sides of
//! the change (on by default when a test guardrail exists), and the test
//! guardrail's run with its ledger — zero tests run by a test guardrail is
//! an errored FAIL; what its results prove is `test_evidence`.

pub(crate) mod base_steps;

use crate::layers::evidence::base_cache::{at_base_once, base_tree_of, no_base_copy};
use crate::layers::evidence::test_evidence::{self, TestRuns};
use crate::layers::evidence::test_report::{merge_new_tests, own_run_of};
use crate::layers::test_results::{self, run_whole, Whole};
use crate::Error;
use rascal_core::config::{Config, Guardrail, GuardrailKind};
use rascal_core::model::changeset::{ChangeSet, Operation};
use rascal_core::model::verdict::{Issue, Layer, Report, Severity};
use rascal_core::text::plural;
use rascal_exec::exec::place::Place;
use rascal_scan::ledger;
use rascal_scan::test_integrity::{self, FileVersions, Input};

/// The name of the implicit `test-integrity` check.
pub const TEST_INTEGRITY: &str = "test-integrity";

/// Whether `g` is the test run: `tests: true`, or (unless `tests: false`)
/// a command a known test runner recognises.
pub fn is_test_guardrail(g: &Guardrail, package_json: Option<&str>) -> bool {
    match &g.kind {
        GuardrailKind::Command { tests: Some(t), .. } => *t,
        GuardrailKind::Command { command, .. } => {
            named_as_tests(&g.name) || ledger::recognise(command, package_json).is_some()
        }
        _ => false,
    }
}

/// A guardrail named `test` or `tests` is the test run, whatever runs it.
fn named_as_tests(name: &str) -> bool {
    matches!(name.to_ascii_lowercase().as_str(), "test" | "tests")
}

/// A test run whose results rascal cannot read: judged by its exit code,
/// which the code under test controls, so it says so.
fn unreadable(mut r: Report, command: &str) -> Report {
    r.issues.push(Issue::new(
        "test-run/unreadable",
        Severity::Warning,
        format!(
            "rascal cannot read the results of `{command}`: the ledger and the base-tests check do not apply, and its exit code (which the code under test controls) is all there is — run the tests with a runner rascal reads (cargo test, go test, pytest, python -m unittest, jest, vitest, npm test), or have the command write a JUnit XML file and add `tests: true` and `results: PATH` to the guardrail (e.g. `results: target/junit.xml`) so rascal reads it"
        ),
    ));
    r.finish()
}

/// The commands of the test guardrails of `config`.
pub fn test_commands(config: &Config, package_json: Option<&str>) -> Vec<String> {
    config
        .guardrails
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .filter(|g| is_test_guardrail(g, package_json))
        .filter_map(|g| match &g.kind {
            GuardrailKind::Command { command, .. } => Some(command.clone()),
            _ => None,
        })
        .collect()
}

/// The commands that run the tests (test guardrails and the `test`
/// criteria's command template): the scripts and Makefiles they name decide
/// how the tests run, and test integrity reports a change to them.
pub fn check_commands(config: &Config, package_json: Option<&str>) -> Vec<String> {
    let mut out = test_commands(config, package_json);
    if let Some(t) = config
        .verification
        .as_ref()
        .and_then(|v| v.criteria.as_ref())
        .and_then(|c| c.test_command.clone())
    {
        out.push(t);
    }
    out
}

/// The `test-integrity` check that runs for `config`: the one configured
/// (`builtin: test-integrity`), else an implicit required one when a test
/// guardrail exists, else none.
pub fn integrity_guardrail(config: &Config, package_json: Option<&str>) -> Option<Guardrail> {
    let list = config.guardrails.as_deref().unwrap_or(&[]);
    if let Some(g) = list.iter().find(|g| g.kind == GuardrailKind::TestIntegrity) {
        return Some(g.clone());
    }
    list.iter()
        .any(|g| is_test_guardrail(g, package_json))
        .then(|| Guardrail {
            name: TEST_INTEGRITY.into(),
            required: true,
            kind: GuardrailKind::TestIntegrity,
        })
}

/// Bytes as text for the analysis; None for binary content.
fn text(bytes: Option<Vec<u8>>) -> Option<String> {
    bytes.and_then(|b| String::from_utf8(b).ok())
}

/// Run `test-integrity` on the change: the base and new text of every
/// changed file the analysis needs, read from the user's repository (base)
/// and the change's tree (never the live workspace).
pub fn integrity_report(
    g: &Guardrail,
    changes: &ChangeSet,
    place: &Place,
    commands: &[String],
    allow: &[String],
    config_digest: &str,
) -> Report {
    let started = std::time::Instant::now();
    let mut r = Report::new(Layer::Guardrails, &g.name)
        .input("base", &changes.base)
        .input("diff", changes.fingerprint())
        .input("config", config_digest)
        .input("tests", commands.join("\n"));
    r.required = g.required;
    let base = match git2::Repository::discover(place.origin())
        .ok()
        .zip(git2::Oid::from_str(&changes.base).ok())
    {
        Some(b) => b,
        None => {
            return r
                .errored("could not open the base commit to compare the tests")
                .finish()
        }
    };
    let read_base = |p: &str| {
        text(
            rascal_exec::git::workspace::read_at(&base.0, base.1, p)
                .ok()
                .flatten(),
        )
    };
    // (path, old path, base text, new text) of each file to compare.
    type Versions = (String, Option<String>, Option<String>, Option<String>);
    let mut owned: Vec<Versions> = Vec::new();
    let files_now = place.files_reader();
    // Items of Rust sources and files only test code uses are test data:
    // found by reference over the crate's files at the base.
    let words = crate::layers::evidence::base_defined::base_words(place, changes);
    let data = |p: &str| words.as_ref().is_some_and(|w| w.test_only_file(p));
    for f in &changes.files {
        let relevant = f
            .paths()
            .any(|p| test_integrity::relevant(p, commands) || data(p));
        if !relevant {
            continue;
        }
        let old_path = f.old_path.clone();
        let base_text = read_base(old_path.as_deref().unwrap_or(&f.path));
        let new_text = match f.op {
            Operation::Delete => None,
            _ => text(files_now.read(&f.path)),
        };
        owned.push((f.path.clone(), old_path, base_text, new_text));
    }
    let files: Vec<FileVersions> = owned
        .iter()
        .map(|(path, old, b, n)| FileVersions {
            path,
            old_path: old.as_deref(),
            base: b.as_deref(),
            new: n.as_deref(),
        })
        .collect();
    r.issues = test_integrity::check(&Input {
        files: &files,
        test_commands: commands,
        allow,
        ledger: None,
        crate_words: words.as_deref(),
    });
    r.output = if r.issues.is_empty() {
        format!(
            "{} compared with the base: no test removed, skipped or weakened",
            plural(files.len() as u64, "test-related file")
        )
    } else {
        format!(
            "{} in {}",
            plural(r.issues.len() as u64, "finding"),
            plural(files.len() as u64, "test-related file")
        )
    };
    r.duration_ms = started.elapsed().as_millis() as u64;
    r.finish()
}

/// The tests the base commit has for the guardrail's listing (cached per
/// base tree and command).
async fn base_listing(
    runs: &TestRuns<'_>,
    place: &Place,
    base_tree: &str,
    cache_dir: &std::path::Path,
) -> Result<ledger::Listing, Error> {
    let key = format!(
        "{base_tree}\n{}\n{}",
        runs.listing,
        place.holdout().map(|h| h.len()).unwrap_or(0)
    );
    at_base_once(cache_dir, key, |l: &ledger::Listing| l.complete, async {
        let at_base = place
            .at_base(base_tree, cache_dir.join("build-cache"))
            .ok_or_else(|| no_base_copy("list its tests in"))?;
        let w = run_whole(
            &at_base,
            &runs.listing,
            runs.timeout,
            runs.env,
            &[],
            runs.cancel,
        )
        .await?;
        if let Some(p) = w.outcome.exit.problem(runs.timeout) {
            let why = format!("listing the base's tests: `{}` {p}", runs.listing);
            return Err(Error::Verification(why));
        }
        Ok(test_results::listing(runs.rec.runner, &w, None))
    })
    .await
}

/// What the base's own run at the base says: the tests that fail on the
/// base's own code (the bug a task is about) and those it ignores.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct BaseRun {
    failed: Vec<String>,
    ignored: Vec<String>,
}

/// The base's own run at the base ([`BaseRun`]), once per base tree and
/// command.
async fn base_run(
    runs: &TestRuns<'_>,
    place: &Place,
    base_tree: &str,
    cache_dir: &std::path::Path,
    at_base: &ledger::Listing,
) -> Result<BaseRun, Error> {
    let key = format!("base-run\n{base_tree}\n{}", runs.run.0);
    at_base_once(cache_dir, key, |_: &BaseRun| true, async {
        let at_base_place = place
            .at_base(base_tree, cache_dir.join("build-cache"))
            .ok_or_else(|| no_base_copy("run its tests in"))?;
        let run = runs.run(&at_base_place).await?;
        if let Some(p) = run.outcome.exit.problem(runs.timeout) {
            return Err(Error::Verification(format!(
                "running the base's tests at the base: `{}` {p}",
                runs.run.0
            )));
        }
        let results = runs.results(&run, at_base);
        Ok(BaseRun {
            failed: ledger::judge(runs.rec.runner, at_base, &results).failed,
            ignored: results.ignored,
        })
    })
    .await
}

/// Rule: tests that fail on the change fail on the base's own code too.
pub const RULE_FAILS_AT_BASE: &str = "test-run/fails-at-base";

/// Which of the `failed` tests also fail at the base (`red`), as a note
/// that comes first: the base's suite is red there, not only the change's.
fn fails_at_base_too(failed: &[String], red: &[String]) -> Option<Issue> {
    let both: Vec<String> = failed.iter().filter(|t| red.contains(t)).cloned().collect();
    (!both.is_empty()).then(|| {
        Issue::new(
            RULE_FAILS_AT_BASE,
            Severity::Info,
            format!(
                "fails at the base too: {} of the {} failing here ({}) — the base's suite is red there, not only this change's",
                both.len(),
                plural(failed.len() as u64, "test"),
                rascal_core::text::first_of(&both, 5)
            ),
        )
    })
}

/// The ledger in a report: counts and names a human reads.
fn summary(l: &ledger::Ledger) -> rascal_core::model::ledger::Ledger {
    rascal_core::model::ledger::Ledger {
        runner: format!("{:?}", l.runner).to_lowercase(),
        at_base: l.at_base.len(),
        now: l.now.len(),
        ran: l.ran,
        passed: l.passed.len(),
        failed: l.failed.len(),
        ignored: l.ignored.len(),
        missing: l.missing.clone(),
        failed_names: l.failed.iter().take(50).cloned().collect(),
        base_tests: None,
        new_tests: None,
        steps: Vec::new(),
    }
}

/// Run a test guardrail of a candidate with its ledger: the runner's own
/// listing at the base (cached per base tree) and now, its
/// machine-readable results judged against the listing, what went missing,
/// and the base's own tests on the change. Where no runner is recognised
/// (or in place, for `rascal check`), the plain run with its zero-tests
/// check.
#[allow(clippy::too_many_arguments)]
pub async fn run_test_guardrail(
    g: &Guardrail,
    changes: &ChangeSet,
    place: &Place,
    digest: &str,
    package_json: Option<&str>,
    allow: &[String],
    cancel: &tokio_util::sync::CancellationToken,
) -> Report {
    // The zero-tests check needs a run that says it is the test run
    // (`tests: true`) or a runner rascal reads; a guardrail that is the test
    // run only by its name gets the `unreadable` warning instead.
    let counted = !matches!(
        &g.kind,
        GuardrailKind::Command { tests: None, command, .. }
            if ledger::recognise(command, package_json).is_none()
    );
    let plain =
        || crate::layers::guardrails::run_command(g, changes, place, digest, counted, cancel);
    let GuardrailKind::Command { command, .. } = &g.kind else {
        return plain().await;
    };
    let Some(rec) = ledger::recognise(command, package_json) else {
        if matches!(
            &g.kind,
            GuardrailKind::Command {
                results: Some(_),
                ..
            }
        ) {
            // Boxed: its future is large, and a worker's stack is not.
            return Box::pin(crate::layers::evidence::junit_run::run_junit_guardrail(
                g, changes, place, digest, allow, cancel,
            ))
            .await;
        }
        return unreadable(plain().await, command);
    };
    let Some((repo, base_tree)) = base_tree_of(place, changes) else {
        return plain().await;
    };
    let started = std::time::Instant::now();
    let mut r = test_report(g, changes, digest, command);
    let Some(runs) = TestRuns::new(g, &rec, cancel) else {
        return plain().await;
    };
    // 1. The guardrail itself, its results machine-readable (and beside
    //    it, what the base alone decides).
    let cache_dir = rascal_exec::git::workspace::files_dir(&repo).join("ledger");
    let base_side = base_steps::start_base_side(&runs, place, (&base_tree, &cache_dir));
    let own = run_own(&mut r, &runs, place, command).await;
    base_steps::stop_if_settled(&base_side, r.required, &own);
    let own = match own {
        Ok(w) => w,
        Err(e) => return r.errored(e.to_string()).finish(),
    };
    // 2. What the runner lists now and at the base.
    let (now, at_base) = match listings(&runs, place, &base_tree, &cache_dir).await {
        Ok(l) => l,
        Err(e) => return r.errored(e.to_string()).finish(),
    };
    // 3. The results, judged against both listings and the base's tests.
    let results = runs.results(&own, &now);
    let l = ledger::ledger(rec.runner, &at_base, &now, &results);
    let mut s = summary(&l);
    r.output = format!("{}\n{}", s.summary(), r.output);
    let at = AtBase {
        runs: &runs,
        place,
        changes,
        allow,
        tree: &base_tree,
        cache_dir: &cache_dir,
        listing: &at_base,
    };
    r.issues.extend(gone_or_ignored(&at, &now, &results).await);
    if own.outcome.exit.success() {
        let judged = ledger::judge(rec.runner, &now, &results);
        r.issues.extend(test_evidence::results_issues(
            command, &now, &results, &judged,
        ));
    }
    let own_passed = own.outcome.exit.success();
    let found = (&now, &results, l.added.as_slice());
    r = base_steps::base_steps(&at, r, &mut s, own_passed, found).await;
    if !l.failed.is_empty() {
        red_at_base_too(&at, &mut r, &l.failed).await;
    }
    s.steps = runs.clock.steps();
    r.ledger = Some(Box::new(s));
    if own.outcome.exit.success() && l.ran == 0 {
        r = r.errored(format!(
            "`{command}` is the test run, but 0 tests ran: a test run that runs no test proves nothing"
        ));
    }
    r.duration_ms = started.elapsed().as_millis() as u64;
    r.finish()
}

/// A test guardrail's report, before it runs.
fn test_report(g: &Guardrail, changes: &ChangeSet, digest: &str, command: &str) -> Report {
    let mut r = Report::new(Layer::Guardrails, &g.name)
        .input("base", &changes.base)
        .input("diff", changes.fingerprint())
        .input("config", digest)
        .input("command", command)
        .input("tests", "true");
    r.required = g.required;
    r
}

/// What the runner lists now, and at the base (cached per base tree in
/// `cache_dir`). Err says which could not be had.
async fn listings(
    runs: &TestRuns<'_>,
    place: &Place,
    base_tree: &str,
    cache_dir: &std::path::Path,
) -> Result<(ledger::Listing, ledger::Listing), Error> {
    runs.clock.step("listing");
    let listed = runs.list(place).await;
    let now = listed.map_err(|e| Error::Verification(format!("listing the tests: {e}")))?;
    let at_base = base_listing(runs, place, base_tree, cache_dir).await?;
    Ok((now, at_base))
}

/// The base's side of a test guardrail's evidence: the change's place
/// and the base's tree and listing, whose runs are cached per base tree.
struct AtBase<'a> {
    runs: &'a TestRuns<'a>,
    place: &'a Place,
    changes: &'a ChangeSet,
    allow: &'a [String],
    tree: &'a str,
    cache_dir: &'a std::path::Path,
    listing: &'a ledger::Listing,
}

impl AtBase<'_> {
    /// The base's own tests run on the base (cached).
    async fn run(&self) -> Result<BaseRun, Error> {
        base_run(
            self.runs,
            self.place,
            self.tree,
            self.cache_dir,
            self.listing,
        )
        .await
    }
}

/// Tests listed at the base and gone, or now ignored: the runner's own
/// word, judged like the source (allow_test_changes applies). Which the
/// base ignores too its own run says (run only when a test the base
/// lists is ignored now).
async fn gone_or_ignored(
    at: &AtBase<'_>,
    now: &ledger::Listing,
    results: &ledger::Results,
) -> Vec<Issue> {
    let ignored_at_base = if results.ignored.iter().any(|t| at.listing.tests.contains(t)) {
        at.runs.clock.step("base's own run");
        at.run().await.map(|b| b.ignored).unwrap_or_default()
    } else {
        Vec::new()
    };
    test_integrity::check(&Input {
        files: &[],
        test_commands: &[],
        allow: at.allow,
        ledger: Some(test_integrity::LedgerView {
            at_base: &at.listing.tests,
            now: &now.tests,
            ignored_now: &results.ignored,
            ignored_at_base: &ignored_at_base,
        }),
        crate_words: None,
    })
}

/// The change's tests on the base's code: new ones (`added`, from what
/// the runner lists `now` and its `results`), and the base's failing ones
/// in the change's version (only when the change touched tests:
/// otherwise they are the base's own).
async fn new_tests_at_base(
    at: &AtBase<'_>,
    r: Report,
    s: &mut rascal_core::model::ledger::Ledger,
    (now, results, added): (&ledger::Listing, &ledger::Results, &[String]),
) -> Report {
    let touched = s.base_tests.as_ref().is_some_and(|b| b.files_laid > 0);
    at.runs.clock.step("new tests at the base");
    let failing = if touched {
        at.run().await.map(|b| b.failed)
    } else {
        Ok(Vec::new())
    };
    let new = match failing {
        Ok(failing) => {
            let seen = (now, results, added, failing.as_slice());
            test_evidence::new_tests(at.runs, at.place, at.changes, seen).await
        }
        Err(e) => Err(e),
    };
    merge_new_tests(r, s, new)
}

/// A suite already red at the base is not this change's doing: say which
/// of the `failed` tests fail at the base too (its run is cached).
async fn red_at_base_too(at: &AtBase<'_>, r: &mut Report, failed: &[String]) {
    at.runs.clock.step("base's own run");
    if let Ok(red) = Box::pin(at.run()).await {
        if let Some(issue) = fails_at_base_too(failed, &red.failed) {
            r.output =
                crate::layers::evidence::test_report::with_evidence(&r.output, &issue.message);
            r.issues.insert(0, issue);
        }
    }
}

/// Run the guardrail itself (its results machine-readable) into `r`; Err
/// says why it could not run or did not end cleanly.
async fn run_own(
    r: &mut Report,
    runs: &TestRuns<'_>,
    place: &Place,
    command: &str,
) -> Result<Whole, Error> {
    runs.clock.step("own run");
    let own = runs
        .run(place)
        .await
        .map_err(|e| Error::Verification(format!("could not run `{command}`: {e}")))?;
    match own_run(r, runs, place, &own) {
        Some(problem) => Err(Error::Verification(format!("`{command}` {problem}"))),
        None => Ok(own),
    }
}

/// The guardrail's own run into its report: exit code, the output a report
/// keeps (read as plain lines, `go test -json` unwrapped), and the errors
/// of a failed run with their places. A run that did not end cleanly
/// (timeout, signal, limit) says why.
fn own_run(r: &mut Report, runs: &TestRuns<'_>, place: &Place, own: &Whole) -> Option<String> {
    own_run_of(r, runs.g, runs.timeout, place, own)
}
