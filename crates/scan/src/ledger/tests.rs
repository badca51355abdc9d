//! The ledger's spec: recognising runners in guardrail commands, the
//! commands written for them, and the parsers run on output captured from
//! the real runners (tests/fixtures/ledger/, made by its regenerate.sh).

use super::*;

macro_rules! fixture {
    ($path:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/ledger/",
            $path
        ))
    };
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

mod cargo_output;
mod commands;
mod go_output;
mod hostile;
mod js_output;
mod pytest_output;
mod recognising;

// Fixtures more than one part of the spec reads.
const CARGO_LIST: &str = fixture!("cargo/workspace-list.txt");
const CARGO_RUN_NOCAPTURE: &str = fixture!("cargo/workspace-run-nocapture-no-fail-fast.txt");
const GO_LIST: &str = fixture!("go/list.txt");
const PY_COLLECT: &str = fixture!("pytest/collect.txt");

// ---------------------------------------------------------------------------
// The ledger.

#[test]
fn ledger_records_what_went_missing_and_serialises() {
    let base = Listing {
        tests: strings(&["p.TestA", "p.TestB", "p.TestC"]),
        complete: true,
        files_only: false,
    };
    let now = Listing {
        tests: strings(&["p.TestA", "p.TestD"]),
        complete: true,
        files_only: false,
    };
    let results = Results {
        passed: strings(&["p.TestA", "p.TestD/x"]),
        complete: true,
        ..Results::default()
    };
    let l = ledger(Runner::Go, &base, &now, &results);
    assert_eq!(l.missing, strings(&["p.TestB", "p.TestC"]));
    assert_eq!(l.added, strings(&["p.TestD"]));
    assert!(l.not_run.is_empty());
    assert_eq!(l.ran, 2);
    assert!(l.complete);
    let json = serde_json::to_string(&l).unwrap();
    assert!(json.contains("\"runner\":\"go\""));
    assert_eq!(serde_json::from_str::<Ledger>(&json).unwrap(), l);
}

#[test]
fn ledger_is_incomplete_when_any_part_is() {
    let good = Listing {
        tests: strings(&["a"]),
        complete: true,
        files_only: false,
    };
    let bad = Listing {
        tests: strings(&["a"]),
        complete: false,
        files_only: false,
    };
    let results = Results {
        passed: strings(&["a"]),
        complete: true,
        ..Results::default()
    };
    assert!(ledger(Runner::Pytest, &good, &good, &results).complete);
    assert!(!ledger(Runner::Pytest, &bad, &good, &results).complete);
    assert!(!ledger(Runner::Pytest, &good, &bad, &results).complete);
    let partial = Results {
        complete: false,
        ..results
    };
    assert!(!ledger(Runner::Pytest, &good, &good, &partial).complete);
}

#[test]
fn the_files_a_listing_names_its_tests_in() {
    let pytest = Listing {
        tests: strings(&[
            "checks/check_calc.py::test_adds",
            "checks/check_calc.py::TestX::test_b[1.5]",
            "tests/test_more.py::test_c",
            "calc.py::calc.add",
        ]),
        complete: true,
        files_only: false,
    };
    assert_eq!(
        test_files(Runner::Pytest, &pytest),
        strings(&["checks/check_calc.py", "tests/test_more.py"])
    );
    let jest = Listing {
        tests: strings(&["src/sum.check.js > sums", "/abs/x.js > y"]),
        complete: true,
        files_only: false,
    };
    assert_eq!(
        test_files(Runner::Jest, &jest),
        strings(&["src/sum.check.js"])
    );
    assert!(test_files(Runner::Cargo, &pytest).is_empty());
}
