//! `test`, `holdout` and `command` criteria: the tests a filter selects, the
//! run, and the verdict from its exit code and the runner's results.

use super::test_command::{criterion_command, tests_ran_in};
use super::*;
use crate::Error;

/// The tests a test filter selects, as the runner itself lists them
/// (None when rascal cannot read the runner): printed "running 1 test"
/// lines prove nothing. `Err` is the criterion's report when it ends here.
async fn selected_tests(
    c: &Criterion,
    r: Report,
    command: &str,
    place: &Place,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<(Report, Option<(Recognised, Listing)>), Report> {
    let holdout = c.kind == CriterionKind::Holdout;
    match listed_tests(command, place, timeout, cancel).await {
        // Held-out tests say pass or fail, nothing else.
        Err(_) if holdout => Err(held_out(r, false)),
        Err(e) => Err(r.errored(e.to_string()).finish()),
        Ok(Some((rec, l))) if l.tests.is_empty() && holdout => {
            let listing = shown_listing(&rec, command);
            Err(held_out(r.errored(unmatched_holdout(&c.check, &listing)), false))
        }
        Ok(Some((rec, l))) if l.tests.is_empty() => Err(r
            .errored(format!(
                "the filter `{}` matched no test: the runner lists none for it (`{}`), so 0 tests would run",
                c.check,
                shown_listing(&rec, command)
            ))
            .finish()),
        Ok(found) => Ok((r, found)),
    }
}

/// What the runner's results say of the selected tests when they do not
/// all pass (None when they do).
fn results_deny(j: &Judged) -> Option<String> {
    if j.failed.is_empty() && j.not_run.is_empty() && j.passed > 0 {
        return None;
    }
    let mut s = format!(
        "the runner's results: {} of {} selected passed",
        j.passed,
        rascal_core::text::plural(j.listed as u64, "test")
    );
    if !j.failed.is_empty() {
        s.push_str(&format!(", failed: {}", j.failed.join(", ")));
    }
    if !j.not_run.is_empty() {
        s.push_str(&format!(", no result: {}", j.not_run.join(", ")));
    }
    Some(s)
}

/// `test` and `command` criteria: run in the worktree. A test filter's
/// tests are judged by the runner's results, never by its exit code alone.
pub async fn run_command_criterion(
    c: &Criterion,
    template: Option<&str>,
    place: &Place,
    (timeout, base): (Duration, Option<&dyn BaseSide>),
    cancel: &CancellationToken,
) -> Report {
    let started = Instant::now();
    let r = criterion_report(c);
    let (command, is_test) = match criterion_command(c, template) {
        Ok(x) => x,
        Err(e) => return r.errored(e.to_string()).finish(),
    };
    let r = r.input("command", &command);
    let (mut r, selected) = if is_test {
        match selected_tests(c, r, &command, place, timeout, cancel).await {
            Ok(x) => x,
            Err(done) => return done,
        }
    } else {
        (r, None)
    };
    let (to_run, read) = match &selected {
        Some((rec, _)) => ledger::results_run(rec, &command, ".rascal-results/criterion"),
        None => (command.clone(), None),
    };
    let read: Vec<String> = read.into_iter().collect();
    let result = run_whole(place, &to_run, timeout, (&[], false), &read, cancel).await;
    r.duration_ms = started.elapsed().as_millis() as u64;
    // The selected tests as the runner's results report them.
    let judged = match (&selected, &result) {
        (Some((rec, listing)), Ok(run)) => {
            let res = test_results::results(rec.runner, run, listing, rec.dir.as_deref());
            Some(ledger::judge(rec.runner, listing, &res))
        }
        _ => None,
    };
    let results_say = judged.as_ref().and_then(results_deny);
    let ran = match (&judged, &result) {
        (Some(j), _) => (j.passed + j.failed.len()) as u64,
        (None, Ok(run)) => run.text.lines().map(tests_ran_in).sum(),
        (None, Err(_)) => 0,
    };
    // Held-out tests say pass or fail, nothing else: their output, their
    // count, their exit code (all of which the candidate's code can shape)
    // would reach the agent as feedback.
    if c.kind == CriterionKind::Holdout {
        let passed = matches!(&result, Ok(run) if run.outcome.exit.code == Some(0))
            && ran > 0
            && judged.is_some()
            && results_say.is_none();
        return held_out(r, passed);
    }
    let run = match result {
        Ok(run) => run,
        Err(e) => return r.errored(e.to_string()).finish(),
    };
    let ran = is_test.then_some(ran);
    let r = command_verdict(c, r, &command, place, &run, (timeout, ran, results_say));
    match (selected, base) {
        (Some((rec, listing)), Some(side))
            if c.kind == CriterionKind::Test && r.issues.is_empty() && r.errored.is_none() =>
        {
            let s = criterion_proof::Selected {
                rec: &rec,
                command: &command,
                listing: &listing,
                timeout,
                cancel,
                new_test: c.new_test,
            };
            proven(r, criterion_proof::prove(&s, side).await)
        }
        // A new test is shown new against the base: without a copy of
        // it, the criterion could not be checked.
        (Some(_), None) if c.new_test && r.issues.is_empty() && r.errored.is_none() => r
            .errored("the criterion asks for a new test, and there is no copy of the base commit to show the test fails there")
            .finish(),
        (None, _) if c.new_test && r.issues.is_empty() && r.errored.is_none() => r
            .errored(format!(
                "the criterion asks for a new test, and `{command}` is not a test runner rascal can list, so it cannot show which tests ran or that they fail on the base"
            ))
            .finish(),
        _ => r,
    }
}

/// A passing `test` criterion with what the base says of its tests: met
/// by the base's tests or by the change's that fail at the base, else a
/// FAIL (`criteria/test-unproven`); a base side that could not run is an
/// error.
fn proven(r: Report, proof: Result<criterion_proof::Proof, Error>) -> Report {
    use criterion_proof::Proof;
    match proof {
        Ok(p @ (Proof::Unproven(_) | Proof::Unchecked(_) | Proof::NotNew(_))) => {
            let output = r.output.clone();
            let rule = match p {
                Proof::NotNew(_) => criterion_proof::RULE_NOT_NEW,
                _ => criterion_proof::RULE_UNPROVEN,
            };
            let mut r = fail(r, rule, p.evidence());
            r.output = format!("{}\n{output}", r.output);
            r.finish()
        }
        Ok(p) => {
            let mut r = r;
            r.output = format!("{} · {}", r.output, p.evidence());
            r.finish()
        }
        Err(e) => r
            .errored(format!(
                "the selected tests could not be compared with the base: {e}"
            ))
            .finish(),
    }
}

/// A `test` or `command` criterion's verdict from its run: a clean exit 0
/// (whose results, for a test run, say every selected test passed) passes;
/// anything else fails with the errors in its output.
fn command_verdict(
    c: &Criterion,
    mut r: Report,
    command: &str,
    place: &Place,
    run: &Whole,
    (timeout, ran, results_say): (Duration, Option<u64>, Option<String>),
) -> Report {
    let outcome = &run.outcome;
    let seen = Captured::from_text(&run.text);
    r.exit_code = outcome.exit.code;
    let tail = if outcome.exit.success() {
        seen.last(&outcome.tail, TAIL_LINES)
    } else {
        seen.kept(&outcome.tail, TAIL_LINES)
    };
    if let Some(p) = outcome.exit.problem(timeout) {
        r.output = tail;
        return r.errored(format!("`{command}` {p}")).finish();
    }
    let code = outcome.exit.code.unwrap_or(-1);
    let rule = format!("criteria/{}", c.kind.name());
    let failed = |r: Report, why: String| {
        let mut r = fail(r, &rule, why);
        r.output = format!("{}\n{tail}", r.output);
        r
    };
    if code != 0 {
        let ran = ran
            .map(|n| format!(" ({} ran)", rascal_core::text::plural(n, "test")))
            .unwrap_or_default();
        let mut r = failed(r, format!("`{command}` exited with code {code}{ran}"));
        // The errors in its output, each with its place: the first one
        // joins the evidence.
        let found = diagnostics::place::issues(&rule, command, place, &seen);
        if let Some(first) = found.first() {
            let evidence = std::mem::replace(&mut r.issues[0], first.clone());
            r.issues[0].message = format!("{} — {}", evidence.message, first.message);
            r.issues.extend(found.into_iter().skip(1));
        }
        return r.finish();
    }
    if let Some(why) = results_say {
        return failed(r, format!("`{command}` exited 0, but {why}")).finish();
    }
    match ran {
        Some(0) => failed(
            r,
            format!(
                "`{command}` exited 0 but 0 tests ran: the filter `{}` matched no test",
                c.check
            ),
        )
        .finish(),
        Some(n) => pass(
            r,
            format!(
                "`{command}` exit 0 · {} ran",
                rascal_core::text::plural(n, "test")
            ),
        ),
        None => pass(r, format!("`{command}` exit 0")),
    }
}

/// Whether `r` is the report of a held-out criterion (`type: holdout`):
/// whatever it says, an agent is only ever told it failed.
pub fn is_held_out(r: &Report) -> bool {
    r.layer == Layer::Criteria
        && r.receipt.inputs.get("type").map(String::as_str)
            == Some(rascal_core::digest::digest(CriterionKind::Holdout.name()).as_str())
}

/// A held-out criterion's report once the candidate's code has run: one of
/// two fixed sentences ([`rascal_exec::git::holdout::PASSED`], `FAILED`). A run
/// that could not start, selected or ran no test, or exited non-zero is a
/// FAIL alike, so not even the kind of failure says anything.
fn held_out(r: Report, passed: bool) -> Report {
    use rascal_exec::git::holdout::{FAILED, PASSED};
    if passed {
        pass(r, PASSED.into())
    } else {
        fail(r, "criteria/holdout", FAILED.into())
    }
}

/// The operator's note on a held-out criterion whose filter the runner
/// lists no test for: the report's `errored`, shown in `show`, the TUI and
/// `--json`, never to an agent (feedback and the retry dialog carry only
/// the fixed [`rascal_exec::git::holdout::FAILED`] line for a held-out report).
pub fn unmatched_holdout(filter: &str, listing: &str) -> String {
    format!(
        "the held-out filter `{filter}` matched no held-out test: the runner lists none for it (`{listing}`), so the criterion can only fail — check the filter and the `holdout:` paths in the task's spec (agents are told only that held-out tests failed)"
    )
}

/// The tests the runner of `command` lists for it (its own listing mode,
/// same filter), when it is a runner rascal knows; None when it is not (the
/// run's own count decides then). A listing that fails or cannot be read
/// in full is an error: which tests the filter selects is not known.
async fn listed_tests(
    command: &str,
    place: &Place,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<Option<(Recognised, Listing)>, Error> {
    let Some(rec) = ledger::recognise(command, None) else {
        return Ok(None);
    };
    let listing = ledger::listing_command(&rec, command);
    let w = run_whole(place, &listing, timeout, (&[], false), &[], cancel).await?;
    // pytest's exit code 5 is its word for "no test collected": the filter
    // matched none, said as such (never "the listing failed").
    if rec.runner == ledger::Runner::Pytest && w.outcome.exit.code == Some(5) {
        let none = Listing {
            tests: Vec::new(),
            complete: true,
            files_only: false,
        };
        return Ok(Some((rec, none)));
    }
    if !w.outcome.exit.success() {
        return Err(Error::Verification(format!(
            "listing the tests (`{listing}`) {}: which tests the filter selects is not known",
            w.outcome.exit.problem(timeout).unwrap_or_else(|| format!(
                "exited with code {}",
                w.outcome.exit.code.unwrap_or(-1)
            ))
        )));
    }
    let l = test_results::listing(rec.runner, &w, rec.dir.as_deref());
    if !l.complete {
        return Err(Error::Verification(format!(
            "the listing of `{listing}` could not be read in full: which tests the filter selects is not known"
        )));
    }
    Ok(Some((rec, l)))
}
