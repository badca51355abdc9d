//! The test run of a change: which command guardrails are the test run
//! (`tests: true`, or a known runner such as `cargo test`), the
//! `test-integrity` check that compares both sides of the change (on by
//! default when a test guardrail exists), and the guardrail's evidence that
//! tests ran at all — zero tests run by a test guardrail is an errored FAIL.

use crate::config::{Config, Guardrail, GuardrailKind};
use crate::exec::place::Place;
use crate::layers::ledger;
use crate::layers::test_integrity::{self, FileVersions, Input};
use crate::model::changeset::{ChangeSet, Operation};
use crate::model::verdict::{Layer, Report};

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
    r.issues.push(crate::model::verdict::Issue::new(
        "test-run/unreadable",
        crate::model::verdict::Severity::Warning,
        format!(
            "rascal cannot read the results of `{command}`: the ledger and the base-tests check do not apply, and its exit code (which the code under test controls) is all there is — run the tests with a runner rascal reads (cargo test, go test, pytest, python -m unittest, jest, vitest, npm test)"
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
            crate::git::workspace::read_at(&base.0, base.1, p)
                .ok()
                .flatten(),
        )
    };
    // (path, old path, base text, new text) of each file to compare.
    type Versions = (String, Option<String>, Option<String>, Option<String>);
    let mut owned: Vec<Versions> = Vec::new();
    let files_now = place.files_reader();
    for f in &changes.files {
        let relevant = f.paths().any(|p| test_integrity::relevant(p, commands));
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
    });
    r.output = if r.issues.is_empty() {
        format!(
            "{} compared with the base: no test removed, skipped or weakened",
            crate::text::plural(files.len() as u64, "test-related file")
        )
    } else {
        format!(
            "{} in {}",
            crate::text::plural(r.issues.len() as u64, "finding"),
            crate::text::plural(files.len() as u64, "test-related file")
        )
    };
    r.duration_ms = started.elapsed().as_millis() as u64;
    r.finish()
}

/// Where a run's copies gather a command's whole output (stdout and stderr
/// in order), up to this much.
const MAX_OUTPUT_BYTES: usize = 32 << 20;

/// Run `command` where `place` says, to the end, keeping its whole output
/// (bounded) and reading back `files` afterwards.
async fn run_whole(
    place: &Place,
    command: &str,
    timeout: std::time::Duration,
    env: &[String],
    network: bool,
    files: &[String],
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<(crate::exec::runner::Outcome, String, Vec<Option<Vec<u8>>>), String> {
    let spec =
        crate::exec::runner::CommandSpec::shell(command, place.files().to_path_buf(), timeout);
    let (tx, mut rx) = crate::exec::runner::log_channel();
    let gather = tokio::spawn(async move {
        let mut all = String::new();
        while let Some(batch) = rx.recv().await {
            for l in batch {
                if all.len() + l.text.len() < MAX_OUTPUT_BYTES {
                    all.push_str(&l.text);
                    all.push('\n');
                }
            }
        }
        all
    });
    let result = place
        .run_reading(spec, env, network, Some(tx), cancel, files)
        .await;
    let all = gather.await.unwrap_or_default();
    result.map(|(o, read)| (o, all, read))
}

/// The tests the base commit has for `listing` (a listing command), run
/// once per base tree and command and kept in `cache_dir`: base code only,
/// in its own copy and build cache.
async fn base_listing(
    place: &Place,
    base_tree: &str,
    listing: &str,
    runner: ledger::Runner,
    g: &GuardrailKind,
    cache_dir: &std::path::Path,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<ledger::Listing, String> {
    static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let GuardrailKind::Command {
        timeout,
        env,
        network,
        ..
    } = g
    else {
        return Err("not a command".into());
    };
    let key = crate::digest::digest(format!(
        "{base_tree}\n{listing}\n{}",
        place.holdout().map(|h| h.len()).unwrap_or(0)
    ));
    let file = cache_dir.join(format!("{}.json", &key[..32]));
    let _one = ONE_AT_A_TIME.lock().await;
    if let Some(l) = std::fs::read(&file)
        .ok()
        .and_then(|b| serde_json::from_slice::<ledger::Listing>(&b).ok())
    {
        return Ok(l);
    }
    let at_base = place
        .at_base(base_tree, cache_dir.join("build-cache"))
        .ok_or("no copy of the base to list its tests in")?;
    let (out, text, _) =
        run_whole(&at_base, listing, timeout.get(), env, *network, &[], cancel).await?;
    if let Some(p) = out.exit.problem(timeout.get()) {
        return Err(format!("listing the base's tests: `{listing}` {p}"));
    }
    let l = ledger::parse_listing(runner, &text);
    let l = ledger::Listing {
        tests: strip_copies(l.tests.clone(), &None),
        ..l
    };
    if l.complete {
        let _ = std::fs::create_dir_all(cache_dir);
        let _ = std::fs::write(&file, serde_json::to_vec(&l).unwrap_or_default());
    }
    Ok(l)
}

/// `names` without the directory of the copy they were run in (jest and
/// vitest print absolute paths; each run has a copy of its own): a name
/// in a check's copy keeps only what follows it (and the guardrail's `cd`
/// directory).
fn strip_copies(names: Vec<String>, dir: &Option<String>) -> Vec<String> {
    names
        .into_iter()
        .map(|n| match (crate::layers::diagnostics::in_copy(&n), dir) {
            (Some(r), Some(d)) => r
                .strip_prefix(&format!("{}/", d.trim_end_matches('/')))
                .map(str::to_string)
                .unwrap_or(r),
            (Some(r), None) => r,
            (None, _) => n,
        })
        .collect()
}

/// The ledger in a report: counts and names a human reads.
fn summary(l: &ledger::Ledger) -> crate::model::ledger::Ledger {
    crate::model::ledger::Ledger {
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
    }
}

/// Run a test guardrail of a candidate with its ledger: the runner's own
/// listing at the base (cached per base tree) and now, its
/// machine-readable results, and what went missing. Where no runner is
/// recognised (or in place, for `rascal check`), the plain run with its
/// zero-tests check.
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
    let GuardrailKind::Command {
        command,
        timeout,
        env,
        network,
        ..
    } = &g.kind
    else {
        return plain().await;
    };
    let Some(rec) = ledger::recognise(command, package_json) else {
        return unreadable(plain().await, command);
    };
    let Some(repo) = git2::Repository::discover(place.origin()).ok() else {
        return plain().await;
    };
    let base_tree = match git2::Oid::from_str(&changes.base)
        .and_then(|b| repo.find_commit(b))
        .map(|c| c.tree_id().to_string())
    {
        Ok(t) => t,
        Err(_) => return plain().await,
    };
    if place.at_base(&base_tree, Default::default()).is_none() {
        return plain().await;
    }
    let started = std::time::Instant::now();
    let mut r = Report::new(Layer::Guardrails, &g.name)
        .input("base", &changes.base)
        .input("diff", changes.fingerprint())
        .input("config", digest)
        .input("command", command)
        .input("tests", "true");
    r.required = g.required;
    let results_file = ".rascal-results/results";
    let (run_cmd, read) = ledger::results_command(&rec, command, results_file);
    let read_path: Vec<String> = read
        .iter()
        .map(|f| match &rec.dir {
            Some(d) => format!("{}/{f}", d.trim_end_matches('/')),
            None => f.clone(),
        })
        .collect();
    // A results file the change itself holds is never read: it goes first.
    let run_cmd = match read_path.first() {
        Some(f) => match crate::layers::criteria::shell_quote(f) {
            Ok(q) => format!("rm -rf -- {q}; {run_cmd}"),
            Err(e) => return r.errored(format!("the results file {e}")).finish(),
        },
        None => run_cmd,
    };
    let listing_cmd = ledger::listing_command(&rec, command);
    let cache_dir = crate::git::workspace::files_dir(&repo).join("ledger");
    // 1. The guardrail itself, its results machine-readable.
    let (out, text, files) = match run_whole(
        place,
        &run_cmd,
        timeout.get(),
        env,
        *network,
        &read_path,
        cancel,
    )
    .await
    {
        Ok(x) => x,
        Err(e) => {
            return r
                .errored(format!("could not run `{command}`: {e}"))
                .finish()
        }
    };
    r.duration_ms = out.exit.duration_ms;
    r.exit_code = out.exit.code;
    // Read as plain lines (`go test -json` unwrapped): what a report keeps
    // and where the errors are found.
    let seen = crate::layers::diagnostics::Captured::from_text(&text);
    let tail_lines = crate::exec::runner::TAIL_LINES;
    r.output = if out.exit.success() {
        seen.last(&out.tail, tail_lines)
    } else {
        seen.kept(&out.tail, tail_lines)
    };
    if let Some(problem) = out.exit.problem(timeout.get()) {
        return r.errored(format!("`{command}` {problem}")).finish();
    }
    if !out.exit.success() {
        r.issues = crate::layers::guardrails::failure_issues(
            &g.name,
            command,
            out.exit.code,
            place,
            &seen,
        );
    }
    // 2. What the runner lists now and at the base.
    let now = match run_whole(
        place,
        &listing_cmd,
        timeout.get(),
        env,
        *network,
        &[],
        cancel,
    )
    .await
    {
        Ok((_, t, _)) => ledger::parse_listing(rec.runner, &t),
        Err(e) => return r.errored(format!("listing the tests: {e}")).finish(),
    };
    let now = ledger::Listing {
        tests: strip_copies(now.tests.clone(), &rec.dir),
        ..now
    };
    let at_base = match base_listing(
        place,
        &base_tree,
        &listing_cmd,
        rec.runner,
        &g.kind,
        &cache_dir,
        cancel,
    )
    .await
    {
        Ok(l) => l,
        Err(e) => return r.errored(e).finish(),
    };
    let file_text = files
        .first()
        .and_then(|f| f.as_ref())
        .map(|b| String::from_utf8_lossy(b).into_owned());
    let results = ledger::parse_results(rec.runner, &text, file_text.as_deref(), Some(&now));
    let results = ledger::Results {
        passed: strip_copies(results.passed.clone(), &rec.dir),
        failed: strip_copies(results.failed.clone(), &rec.dir),
        ignored: strip_copies(results.ignored.clone(), &rec.dir),
        ..results
    };
    let l = ledger::ledger(rec.runner, &at_base, &now, &results);
    let s = summary(&l);
    r.output = format!("{}\n{}", s.summary(), r.output);
    let ran = l.ran;
    // Tests listed at the base and gone, or now ignored: the runner's own
    // word, judged like the source (allow_test_changes applies).
    let names = |v: &[String]| v.to_vec();
    let (base_names, now_names) = (names(&at_base.tests), names(&now.tests));
    r.issues.extend(test_integrity::check(&Input {
        files: &[],
        test_commands: &[],
        allow,
        ledger: Some(test_integrity::LedgerView {
            at_base: &base_names,
            now: &now_names,
            ignored_now: &results.ignored,
            ignored_at_base: &[],
        }),
    }));
    // Results, not exit codes: an exit 0 proves nothing the results deny.
    let judged = ledger::judge(rec.runner, &now, &results);
    if out.exit.success() {
        r.issues
            .extend(results_issues(command, &now, &results, &judged));
    }
    // The base's own tests, byte for byte, against the change's code.
    let mut s = s;
    let runs = TestRuns {
        g,
        rec: &rec,
        run_cmd: &run_cmd,
        read_path: &read_path,
        cancel,
    };
    let judging = if at_base.complete {
        base_tests(&runs, place, changes, allow, &at_base, &results).await
    } else {
        r.issues.push(crate::model::verdict::Issue::new(
            RULE_BASE_TESTS,
            crate::model::verdict::Severity::Warning,
            "base tests: not judged — the runner's listing at the base could not be read in full (does the base build?)",
        ));
        Err(String::new())
    };
    match judging {
        Err(e) if e.is_empty() => {}
        Ok((b, issue)) => {
            // The ledger's line first, then the base tests'.
            r.output = match r.output.split_once('\n') {
                Some((first, rest)) => format!("{first}\n{}\n{rest}", b.summary()),
                None => format!("{}\n{}", r.output, b.summary()),
            };
            r.issues.extend(issue);
            s.base_tests = Some(b);
        }
        Err(e) => r = r.errored(format!("running the base's own tests: {e}")),
    }
    r.ledger = Some(Box::new(s));
    if out.exit.success() && ran == 0 {
        r = r.errored(format!(
            "`{command}` is the test run, but 0 tests ran: a test run that runs no test proves nothing"
        ));
    }
    r.duration_ms = started.elapsed().as_millis() as u64;
    r.finish()
}

/// Rule: a test run exited 0 but its results say tests failed.
pub const RULE_FAILED: &str = "test-run/failed";
/// Rule: tests the runner listed have no result.
pub const RULE_NOT_RUN: &str = "test-run/not-run";
/// Rule: results for tests the runner does not list.
pub const RULE_UNLISTED: &str = "test-run/unlisted";
/// Rule: the listing or the results could not be read in full.
pub const RULE_INCOMPLETE: &str = "test-run/incomplete";
/// Rule: a base test does not pass on the change.
pub const RULE_BASE_TESTS: &str = "base-tests/failed";

/// Up to `n` names, comma-separated, with how many more.
fn names(list: &[String], n: usize) -> String {
    let shown: Vec<&str> = list.iter().take(n).map(String::as_str).collect();
    let more = list.len().saturating_sub(shown.len());
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// What the results of a run that exited 0 deny: failures, listed tests
/// with no result, results for tests nobody listed (printed by the code
/// under test, not the runner), results or a listing not read in full.
fn results_issues(
    command: &str,
    listing: &ledger::Listing,
    results: &ledger::Results,
    judged: &ledger::Judged,
) -> Vec<crate::model::verdict::Issue> {
    use crate::model::verdict::{Issue, Severity};
    let mut out = Vec::new();
    if !judged.failed.is_empty() {
        out.push(Issue::new(
            RULE_FAILED,
            Severity::Error,
            format!(
                "`{command}` exited 0, but {} failed: {} — an exit code is not a result",
                crate::text::plural(judged.failed.len() as u64, "test"),
                names(&judged.failed, 8)
            ),
        ));
    }
    if !judged.not_run.is_empty() && listing.complete && !listing.files_only {
        out.push(Issue::new(
            RULE_NOT_RUN,
            Severity::Error,
            format!(
                "{} the runner lists had no result: {} — the run ended before them or did not run them",
                crate::text::plural(judged.not_run.len() as u64, "test"),
                names(&judged.not_run, 8)
            ),
        ));
    }
    if !results.unlisted.is_empty() {
        out.push(Issue::new(
            RULE_UNLISTED,
            Severity::Error,
            format!(
                "results for {} the runner does not list: {} — lines the code under test printed are not results",
                crate::text::plural(results.unlisted.len() as u64, "test"),
                names(&results.unlisted, 8)
            ),
        ));
    }
    if !listing.complete || !results.complete {
        let what = if listing.complete {
            "the results"
        } else {
            "the runner's listing"
        };
        let notes = if results.notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", results.notes.join("; "))
        };
        out.push(Issue::new(
            RULE_INCOMPLETE,
            Severity::Error,
            format!(
                "{what} could not be read in full{notes}: the run cannot be judged by its results"
            ),
        ));
    }
    out
}

/// How one test guardrail runs its runner (shared by the guardrail's run
/// and the base-tests run).
struct TestRuns<'a> {
    g: &'a Guardrail,
    rec: &'a ledger::Recognised,
    run_cmd: &'a str,
    read_path: &'a [String],
    cancel: &'a tokio_util::sync::CancellationToken,
}

/// The base's own tests on the change: its test files and Rust test
/// modules laid over a copy of the change, run, and judged against the
/// base's listing. With nothing to lay (the change touches no test), the
/// guardrail's own `results` are that run.
async fn base_tests(
    runs: &TestRuns<'_>,
    place: &Place,
    changes: &ChangeSet,
    allow: &[String],
    at_base: &ledger::Listing,
    results: &ledger::Results,
) -> Result<
    (
        crate::model::ledger::BaseTests,
        Option<crate::model::verdict::Issue>,
    ),
    String,
> {
    let GuardrailKind::Command {
        timeout,
        env,
        network,
        ..
    } = &runs.g.kind
    else {
        return Err("not a command".into());
    };
    let (laid, files_laid) = crate::pipeline::base_defined::with_base_tests(place, changes, allow)?;
    let results = if files_laid == 0 {
        results.clone()
    } else {
        let (out, text, files) = run_whole(
            &laid,
            runs.run_cmd,
            timeout.get(),
            env,
            *network,
            runs.read_path,
            runs.cancel,
        )
        .await?;
        if let Some(p) = out.exit.problem(timeout.get()) {
            return Err(format!("`{}` {p}", runs.run_cmd));
        }
        let file_text = files
            .first()
            .and_then(|f| f.as_ref())
            .map(|b| String::from_utf8_lossy(b).into_owned());
        let res =
            ledger::parse_results(runs.rec.runner, &text, file_text.as_deref(), Some(at_base));
        ledger::Results {
            passed: strip_copies(res.passed.clone(), &runs.rec.dir),
            failed: strip_copies(res.failed.clone(), &runs.rec.dir),
            ignored: strip_copies(res.ignored.clone(), &runs.rec.dir),
            ..res
        }
    };
    let judged = ledger::judge(runs.rec.runner, at_base, &results);
    let not_passing: Vec<String> = judged
        .failed
        .iter()
        .chain(&judged.not_run)
        .cloned()
        .collect();
    let b = crate::model::ledger::BaseTests {
        listed: judged.listed - judged.ignored.len(),
        passed: judged.passed,
        not_passing: not_passing.iter().take(50).cloned().collect(),
        files_laid,
    };
    let issue = (!not_passing.is_empty()).then(|| {
        crate::model::verdict::Issue::new(
            RULE_BASE_TESTS,
            crate::model::verdict::Severity::Error,
            format!(
                "{}: the base commit's own tests must pass on the change (`allow_test_changes` names tests or paths the task may change)",
                b.summary()
            ),
        )
    });
    Ok((b, issue))
}
