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
            ledger::recognise(command, package_json).is_some()
        }
        _ => false,
    }
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
    let plain = || crate::layers::guardrails::run_command(g, changes, place, digest, true, cancel);
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
    let (Some(rec), Some(repo)) = (
        ledger::recognise(command, package_json),
        git2::Repository::discover(place.origin()).ok(),
    ) else {
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
    r.ledger = Some(Box::new(s));
    if out.exit.success() && ran == 0 {
        r = r.errored(format!(
            "`{command}` is the test run, but 0 tests ran: a test run that runs no test proves nothing"
        ));
    }
    r.duration_ms = started.elapsed().as_millis() as u64;
    r.finish()
}
