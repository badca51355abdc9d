//! The listing and results commands written for a recognised runner.

use super::*;

fn listing_for(command: &str) -> String {
    listing_command(&recognise(command, None).unwrap(), command)
}

#[test]
fn cargo_listing_keeps_the_selection_and_merges_cargos_lines() {
    assert_eq!(
        listing_for("cargo test"),
        "cargo test -- --list --format terse 2>&1"
    );
    assert_eq!(
        listing_for("RUST_BACKTRACE=1 cargo test -p alpha --lib -- --nocapture --test-threads 1 adds"),
        "RUST_BACKTRACE=1 cargo test -p alpha --lib -- --test-threads 1 adds --list --format terse 2>&1"
    );
    assert_eq!(
        listing_for(
            "cargo test -- --ignored --exact tests::adds --format=json -Z unstable-options"
        ),
        "cargo test -- --ignored --exact tests::adds --list --format terse 2>&1"
    );
}

#[test]
fn listing_keeps_setup_and_drops_other_commands() {
    assert_eq!(
        listing_for("export X=1; cd sub && cargo fmt --check && cargo build && cargo test --workspace && cargo clippy"),
        "export X=1 && cd sub && cargo test --workspace -- --list --format terse 2>&1"
    );
    assert_eq!(
        listing_for("source .venv/bin/activate && PYTHONPATH='src lib' pytest tests"),
        "source .venv/bin/activate && PYTHONPATH='src lib' pytest --collect-only -q tests"
    );
}

#[test]
fn go_listing_lists_what_run_selects_with_the_same_build() {
    assert_eq!(listing_for("go test ./..."), "go test -list . ./...");
    assert_eq!(
        listing_for(
            "go test -v -race -count=1 -run 'TestA/sub' -tags integration ./pkg/... -args -update"
        ),
        "go test -list TestA -race -tags integration ./pkg/... -args -update"
    );
    assert_eq!(
        listing_for("go test -run=^TestB$ -json ."),
        "go test -list '^TestB$' ."
    );
}

#[test]
fn pytest_listing_drops_what_changes_its_shape() {
    assert_eq!(
        listing_for("python3 -m pytest -xvs -n auto tests/unit -k 'adds or subtracts' --junitxml=out.xml --cov=src"),
        "python3 -m pytest --collect-only -q -xs tests/unit -k 'adds or subtracts'"
    );
    assert_eq!(listing_for("pytest -q"), "pytest --collect-only -q");
    assert_eq!(
        listing_for("pytest -qq -p no:cacheprovider"),
        "pytest --collect-only -q -p no:cacheprovider"
    );
}

#[test]
fn js_listings() {
    assert_eq!(
        listing_for("npx jest --ci --coverage src/"),
        "npx jest src/ --listTests"
    );
    assert_eq!(
        listing_for("npx vitest run --coverage --reporter=dot src/a -t adds"),
        "npx vitest list src/a -t adds"
    );
    assert_eq!(listing_for("vitest"), "vitest list");
    let pj = r#"{"scripts": {"test": "jest --coverage"}}"#;
    let command = "cd web && npm test -- -t 'adds one'";
    let r = recognise(command, Some(pj)).unwrap();
    assert_eq!(
        listing_command(&r, command),
        "cd web && npx jest -t 'adds one' --listTests"
    );
    let pj = r#"{"scripts": {"test": "cd core && vitest run"}}"#;
    let r = recognise("npm test", Some(pj)).unwrap();
    assert_eq!(
        listing_command(&r, "npm test"),
        "cd core && npx vitest list"
    );
}

fn results_for(command: &str, package_json: Option<&str>) -> (String, Option<String>) {
    let r = recognise(command, package_json).unwrap();
    results_command(&r, command, ".rascal/results")
}

#[test]
fn cargo_results_keep_the_command_with_its_lines_in_order() {
    assert_eq!(
        results_for("cargo test --workspace", None),
        ("cargo test --workspace 2>&1".into(), None)
    );
    assert_eq!(
        results_for("cargo test && echo ok", None),
        ("cargo test 2>&1 && echo ok".into(), None)
    );
    // `-q` would print dots; libtest's pretty format prints each test.
    assert_eq!(
        results_for("cargo test -q", None).0,
        "cargo test -q -- --format pretty 2>&1"
    );
    assert_eq!(
        results_for("cargo test -- -q adds", None).0,
        "cargo test -- --format pretty -q adds 2>&1"
    );
}

#[test]
fn go_results_add_json() {
    assert_eq!(
        results_for("cd svc && go test -v ./...", None),
        ("cd svc && go test -json -v ./...".into(), None)
    );
    assert_eq!(
        results_for("go test -json ./...", None).0,
        "go test -json ./..."
    );
}

#[test]
fn pytest_results_write_junit_where_the_caller_reads_it() {
    assert_eq!(
        results_for("python3 -m pytest -x", None),
        (
            "mkdir -p .rascal; python3 -m pytest --junitxml=.rascal/results --override-ini=junit_family=xunit1 --continue-on-collection-errors -x"
                .into(),
            Some(".rascal/results".into())
        )
    );
    // From a subdirectory the file is named back up to where the guardrail starts.
    assert_eq!(
        results_for("cd py/pkg && pytest", None).0,
        "mkdir -p .rascal; cd py/pkg && pytest --junitxml=../../.rascal/results --override-ini=junit_family=xunit1 --continue-on-collection-errors"
    );
    // Where that cannot be walked back, the start is kept in a variable.
    assert_eq!(
        results_for("cd \"$HOME/x\" && pytest", None).0,
        "mkdir -p .rascal; RASCAL_LEDGER_ROOT=\"$PWD\"; cd \"$HOME/x\" && pytest --junitxml=\"$RASCAL_LEDGER_ROOT\"/.rascal/results --override-ini=junit_family=xunit1 --continue-on-collection-errors"
    );
}

#[test]
fn js_results_write_json() {
    // jest will not write into a missing directory; a bare file name needs none.
    let r = recognise("npx jest", None).unwrap();
    assert_eq!(
        results_command(&r, "npx jest", "out.json").0,
        "npx jest --json --outputFile=out.json"
    );
    assert_eq!(
        results_for("npx jest --ci", None),
        (
            "mkdir -p .rascal; npx jest --json --outputFile=.rascal/results --ci".into(),
            Some(".rascal/results".into())
        )
    );
    assert_eq!(
        results_for("npx vitest run --coverage", None).0,
        "mkdir -p .rascal; npx vitest run --reporter=default --reporter=json --outputFile=.rascal/results --coverage"
    );
    let pj = r#"{"scripts": {"test": "jest"}}"#;
    assert_eq!(
        results_for("npm test", Some(pj)).0,
        "mkdir -p .rascal; npm test -- --json --outputFile=.rascal/results"
    );
    assert_eq!(
        results_for("npm test --silent -- --ci 2>&1", Some(pj)).0,
        "mkdir -p .rascal; npm test --silent -- --json --outputFile=.rascal/results --ci 2>&1"
    );
    assert_eq!(
        results_for("cd web && yarn test --ci", Some(pj)).0,
        "mkdir -p .rascal; cd web && yarn test --ci --json --outputFile=../.rascal/results"
    );
}

#[test]
fn results_command_leaves_a_different_command_alone() {
    let r = recognise("cargo test", None).unwrap();
    assert_eq!(
        results_command(&r, "echo hi", "f"),
        ("echo hi".into(), None)
    );
    assert_eq!(results_command(&r, "'open", "f"), ("'open".into(), None));
}

#[test]
fn python_m_unittest_runs_through_rascals_programs_with_its_arguments() {
    let r = recognise("cd py && python3 -m unittest discover -s tests", None).unwrap();
    assert_eq!(r.runner, Runner::Unittest);
    assert_eq!(r.args, strings(&["discover", "-s", "tests"]));
    let listing = listing_command(&r, "cd py && python3 -m unittest discover -s tests");
    assert!(
        listing.starts_with("cd py && python3 -c 'import sys, unittest"),
        "{listing}"
    );
    assert!(listing.ends_with(" discover -s tests"), "{listing}");
    let (run, file) = results_run(
        &r,
        "cd py && python3 -m unittest discover -s tests",
        "out/r",
    );
    // The results file is where the command starts; a copy of it the change
    // holds is removed first.
    assert_eq!(file.as_deref(), Some("out/r"));
    assert!(
        run.starts_with("rm -rf -- out/r; mkdir -p out; cd py && python3 -c 'import json"),
        "{run}"
    );
    assert!(run.ends_with(" ../out/r discover -s tests"), "{run}");
    assert!(recognise("python3 -m unittest --help", None).is_none());
}

#[test]
fn no_fail_fast_goes_after_cargo_test_and_only_there() {
    let with = |c: &str| no_fail_fast(&recognise(c, None).unwrap(), c);
    assert_eq!(
        with("cargo test --offline -q"),
        "cargo test --no-fail-fast --offline -q"
    );
    assert_eq!(
        with("cd app && cargo +stable test -- --nocapture"),
        "cd app && cargo +stable test --no-fail-fast -- --nocapture"
    );
    assert_eq!(
        with("cargo test --no-fail-fast"),
        "cargo test --no-fail-fast"
    );
    assert_eq!(with("go test ./..."), "go test ./...");
}

#[test]
fn the_shipped_profile_is_release_after_cargo_test_unless_one_is_named() {
    let with = |c: &str| shipped_profile(&recognise(c, None).unwrap(), c);
    assert_eq!(
        with("cargo test --no-fail-fast --offline -q").as_deref(),
        Some("cargo test --release --no-fail-fast --offline -q")
    );
    assert_eq!(
        with("cd app && cargo +stable test -- --nocapture").as_deref(),
        Some("cd app && cargo +stable test --release -- --nocapture")
    );
    assert_eq!(with("cargo test --release"), None);
    assert_eq!(with("cargo test -r"), None);
    assert_eq!(with("cargo test --profile ci"), None);
    assert_eq!(with("go test ./..."), None);
    assert_eq!(with("python3 -m pytest -q"), None);
}
