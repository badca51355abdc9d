//! [`verdict`]: what a base-tests run says of the canaries planted in it.
//! A canary that is listed must be reported failing in a run that exits
//! non-zero; anything else is the `test-run/canary` error.

use super::*;
use crate::layers::test_results::tests::whole as run;

fn canary(nonce: &str, path: &str) -> Canary {
    Canary {
        nonce: nonce.into(),
        path: path.into(),
        text: String::new(),
    }
}

fn listed(tests: &[&str]) -> Listing {
    Listing {
        tests: tests.iter().map(|s| s.to_string()).collect(),
        complete: true,
        files_only: false,
    }
}

/// cargo's output for `results` (name, "ok" or "FAILED").
fn cargo(results: &[(&str, &str)]) -> String {
    let mut out = format!("running {} tests\n", results.len());
    for (name, how) in results {
        out.push_str(&format!("test {name} ... {how}\n"));
    }
    out.push_str("\ntest result: FAILED. 1 passed; 1 failed; 0 ignored\n");
    out
}

const A: &str = "t_ab1200::t_ab1200";
const B: &str = "t_ab1201::t_ab1201";

/// The message of the canary issue for these runs, or None.
fn judged(cs: &[Canary], names: &[&str], run: &Whole) -> Option<String> {
    let found = verdict(cs, Runner::Cargo, &listed(names), run)?;
    assert_eq!(found.rule, RULE_CANARY);
    assert_eq!(found.severity, Severity::Error);
    Some(found.message)
}

#[test]
fn listed_canaries_reported_failing_in_a_failed_run_pass() {
    let cs = [
        canary("ab1200", "src/lib.rs"),
        canary("ab1201", "tests/it.rs"),
    ];
    let failing = cargo(&[("adds", "ok"), (A, "FAILED"), (B, "FAILED")]);
    let names = ["adds", A, B];
    assert_eq!(judged(&cs, &names, &run(101, &failing, None)), None);
    // Only one listed (the other is filtered out): it alone must fail.
    let one = cargo(&[("adds", "ok"), (A, "FAILED")]);
    assert_eq!(judged(&cs, &["adds", A], &run(101, &one, None)), None);
}

#[test]
fn unlisted_canaries_say_nothing() {
    let cs = [canary("ab1200", "src/lib.rs")];
    let passing = cargo(&[("adds", "ok")]);
    assert_eq!(judged(&cs, &["adds"], &run(0, &passing, None)), None);
    assert_eq!(judged(&[], &["adds", A], &run(0, &passing, None)), None);
}

#[test]
fn a_canary_passing_missing_or_in_a_run_that_exited_0_is_an_error() {
    let cs = [
        canary("ab1200", "src/lib.rs"),
        canary("ab1201", "tests/it.rs"),
    ];
    let names = ["adds", A, B];
    let passed = cargo(&[("adds", "ok"), (A, "FAILED"), (B, "ok")]);
    let msg = judged(&cs, &names, &run(101, &passed, None)).expect("passing canary");
    assert!(
        msg.contains("in `tests/it.rs` was reported passing"),
        "{msg}"
    );
    let missing = cargo(&[("adds", "ok"), (A, "FAILED")]);
    let msg = judged(&cs, &names, &run(101, &missing, None)).expect("no result");
    assert!(msg.contains("in `tests/it.rs` has no result"), "{msg}");
    let both = cargo(&[("adds", "ok"), (A, "FAILED"), (B, "FAILED")]);
    let msg = judged(&cs, &names, &run(0, &both, None)).expect("exit 0");
    assert!(
        msg.contains("was reported failing, but the run exited 0"),
        "{msg}"
    );
}

/// pytest's results are read from the results file the run wrote, not
/// from what the code under test printed.
#[test]
fn results_are_read_from_the_results_file_first() {
    let cs = [canary("ab1200", "tests/test_calc.py")];
    let name = "tests/test_calc.py::test_adds_ab1200";
    let xml = |outcome: &str| {
        format!(
            r#"<testsuites><testsuite tests="1"><testcase classname="tests.test_calc" name="test_adds_ab1200" file="tests/test_calc.py">{outcome}</testcase></testsuite></testsuites>"#
        )
    };
    let judge = |file: &str, code: i32| {
        verdict(
            &cs,
            Runner::Pytest,
            &listed(&[name]),
            &run(code, "", Some(file)),
        )
    };
    assert_eq!(judge(&xml(r#"<failure message="x"/>"#), 1), None);
    let forged = judge(&xml(""), 1).expect("passing canary");
    assert!(
        forged.message.contains("was reported passing"),
        "{}",
        forged.message
    );
}
