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

// ---------------------------------------------------------------------------
// Recognising.

#[test]
fn recognises_each_runner_and_how_it_is_started() {
    let cases: &[(&str, Runner, &[&str], &[&str])] = &[
        ("cargo test", Runner::Cargo, &["cargo", "test"], &[]),
        (
            "cargo t --workspace",
            Runner::Cargo,
            &["cargo", "t"],
            &["--workspace"],
        ),
        (
            "cargo +nightly --locked test -p a",
            Runner::Cargo,
            &["cargo", "+nightly", "--locked", "test"],
            &["-p", "a"],
        ),
        ("go test ./...", Runner::Go, &["go", "test"], &["./..."]),
        (
            "pytest -x tests/",
            Runner::Pytest,
            &["pytest"],
            &["-x", "tests/"],
        ),
        ("py.test", Runner::Pytest, &["py.test"], &[]),
        (
            "python -m pytest -k adds",
            Runner::Pytest,
            &["python", "-m", "pytest"],
            &["-k", "adds"],
        ),
        (
            "python3 -m pytest",
            Runner::Pytest,
            &["python3", "-m", "pytest"],
            &[],
        ),
        (
            "python3.11 -m pytest",
            Runner::Pytest,
            &["python3.11", "-m", "pytest"],
            &[],
        ),
        (
            "uv run pytest -q",
            Runner::Pytest,
            &["uv", "run", "pytest"],
            &["-q"],
        ),
        (
            "poetry run python -m pytest",
            Runner::Pytest,
            &["poetry", "run", "python", "-m", "pytest"],
            &[],
        ),
        (
            ".venv/bin/pytest",
            Runner::Pytest,
            &[".venv/bin/pytest"],
            &[],
        ),
        ("npx jest --ci", Runner::Jest, &["npx", "jest"], &["--ci"]),
        ("jest", Runner::Jest, &["jest"], &[]),
        ("yarn jest src", Runner::Jest, &["yarn", "jest"], &["src"]),
        (
            "pnpm exec jest",
            Runner::Jest,
            &["pnpm", "exec", "jest"],
            &[],
        ),
        (
            "node_modules/.bin/jest",
            Runner::Jest,
            &["node_modules/.bin/jest"],
            &[],
        ),
        (
            "npx vitest run",
            Runner::Vitest,
            &["npx", "vitest", "run"],
            &[],
        ),
        (
            "vitest run src/a",
            Runner::Vitest,
            &["vitest", "run"],
            &["src/a"],
        ),
        (
            "npx vitest --coverage",
            Runner::Vitest,
            &["npx", "vitest"],
            &["--coverage"],
        ),
    ];
    for (command, runner, program, args) in cases {
        let r = recognise(command, None).unwrap_or_else(|| panic!("{command}: not recognised"));
        assert_eq!(r.runner, *runner, "{command}");
        assert_eq!(r.program, strings(program), "{command}");
        assert_eq!(r.args, strings(args), "{command}");
        assert_eq!(r.dir, None, "{command}");
    }
}

#[test]
fn commands_that_run_no_tests_are_not_recognised() {
    for command in [
        "",
        "cargo build",
        "cargo clippy --all-targets -- -D warnings",
        "cargo test --no-run",
        "cargo test -- --list",
        "cargo nextest run",
        "go vet ./...",
        "go test -c ./pkg",
        "go test -list . ./...",
        "pytest --collect-only",
        "python3 -m pip install pytest",
        "python3 -m mypy",
        "npx jest --watch",
        "npx jest --listTests",
        "npx vitest watch",
        "npx vitest bench",
        "npx eslint .",
        "make test",
        "echo cargo test",
        "cargo test 'unclosed",
    ] {
        assert_eq!(recognise(command, None), None, "{command}");
    }
}

#[test]
fn env_assignments_and_wrappers_are_seen_through() {
    let r = recognise(
        "RUST_BACKTRACE=1 CARGO_TERM_COLOR=never cargo test --workspace",
        None,
    )
    .unwrap();
    assert_eq!(r.runner, Runner::Cargo);
    assert_eq!(
        r.env,
        strings(&["RUST_BACKTRACE=1", "CARGO_TERM_COLOR=never"])
    );
    assert_eq!(r.args, strings(&["--workspace"]));
    let r = recognise(
        "timeout -s KILL 600 env PYTHONPATH=src nice -n 5 python3 -m pytest",
        None,
    )
    .unwrap();
    assert_eq!(r.runner, Runner::Pytest);
    assert_eq!(r.env, strings(&["PYTHONPATH=src"]));
    assert_eq!(r.program, strings(&["python3", "-m", "pytest"]));
    // A quoted `NAME=value` is an argument, not an assignment.
    assert_eq!(recognise("'A=b' cargo test", None), None);
}

#[test]
fn chains_take_the_last_test_command_and_the_directory_it_runs_in() {
    let r = recognise("cargo fmt --check && cargo test -p a && cargo clippy", None).unwrap();
    assert_eq!((r.runner, r.segment), (Runner::Cargo, 1));
    let r = recognise("cargo test; cd py && python3 -m pytest", None).unwrap();
    assert_eq!(r.runner, Runner::Pytest);
    assert_eq!(r.dir.as_deref(), Some("py"));
    let r = recognise("cd a && cd ../b/./c && go test ./...", None).unwrap();
    assert_eq!(r.dir.as_deref(), Some("b/c"));
    let r = recognise("(cd svc && go test ./...) && echo done", None).unwrap();
    assert_eq!((r.runner, r.dir.as_deref()), (Runner::Go, Some("svc")));
    let r = recognise("cd \"$REPO\" && cargo test", None).unwrap();
    assert_eq!(r.dir.as_deref(), Some("$REPO"));
    // A `cd` after the runner does not move it.
    let r = recognise("cargo test && cd docs", None).unwrap();
    assert_eq!(r.dir, None);
}

#[test]
fn output_piped_anywhere_but_tee_cannot_be_read() {
    assert_eq!(recognise("cargo test | tail -n 20", None), None);
    assert_eq!(recognise("go test ./... | grep -v ok", None), None);
    let r = recognise("cargo test 2>&1 | tee test.log", None).unwrap();
    assert_eq!(r.runner, Runner::Cargo);
    // An earlier runner still counts when the last one is piped away.
    let r = recognise("go test ./... && cargo test | head", None).unwrap();
    assert_eq!(r.runner, Runner::Go);
}

#[test]
fn package_scripts_are_recognised_through_package_json() {
    let jest = r#"{"scripts": {"test": "jest --coverage"}}"#;
    assert_eq!(recognise("npm test", None), None);
    let r = recognise("npm test", Some(jest)).unwrap();
    assert_eq!(r.runner, Runner::Jest);
    assert_eq!(r.program, strings(&["npx", "jest"]));
    assert_eq!(r.args, strings(&["--coverage"]));
    // npm passes on only what follows `--`; yarn and pnpm pass everything.
    let r = recognise("npm test --silent -- -t adds", Some(jest)).unwrap();
    assert_eq!(r.args, strings(&["--coverage", "-t", "adds"]));
    let r = recognise("yarn test -t adds", Some(jest)).unwrap();
    assert_eq!(r.args, strings(&["--coverage", "-t", "adds"]));
    for command in [
        "npm run test",
        "npm t",
        "pnpm test",
        "pnpm run test",
        "yarn run test",
    ] {
        assert_eq!(
            recognise(command, Some(jest)).map(|r| r.runner),
            Some(Runner::Jest),
            "{command}"
        );
    }

    let vitest = r#"{"scripts": {"test": "npm run unit", "unit": "cross-env CI=1 vitest run"}}"#;
    let r = recognise("cd web && npm test", Some(vitest)).unwrap();
    assert_eq!(r.runner, Runner::Vitest);
    assert_eq!(r.program, strings(&["npx", "vitest", "run"]));
    assert_eq!(r.env, strings(&["CI=1"]));
    assert_eq!(r.dir.as_deref(), Some("web"));
    assert_eq!(
        recognise("yarn unit", Some(vitest)).map(|r| r.runner),
        Some(Runner::Vitest)
    );

    let in_sub = r#"{"scripts": {"test": "cd packages/core && jest"}}"#;
    let r = recognise("cd web && npm test", Some(in_sub)).unwrap();
    assert_eq!(r.dir.as_deref(), Some("web/packages/core"));

    for other in [
        r#"{"scripts": {"test": "mocha"}}"#,
        r#"{"scripts": {}}"#,
        "not json",
        r#"{"scripts": {"test": 3}}"#,
    ] {
        assert_eq!(recognise("npm test", Some(other)), None, "{other}");
    }
    // A script that names itself does not recurse for ever.
    let looping = r#"{"scripts": {"test": "npm test"}}"#;
    assert_eq!(recognise("npm test", Some(looping)), None);
}

#[test]
fn package_json_dir_says_which_package_json_to_read() {
    assert_eq!(package_json_dir("npm test").as_deref(), Some(""));
    assert_eq!(
        package_json_dir("cd web && yarn test").as_deref(),
        Some("web")
    );
    assert_eq!(package_json_dir("cargo test"), None);
}

// ---------------------------------------------------------------------------
// Commands.

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
            "mkdir -p .rascal; python3 -m pytest --junitxml=.rascal/results --override-ini=junit_family=xunit1 -x"
                .into(),
            Some(".rascal/results".into())
        )
    );
    // From a subdirectory the file is named back up to where the guardrail starts.
    assert_eq!(
        results_for("cd py/pkg && pytest", None).0,
        "mkdir -p .rascal; cd py/pkg && pytest --junitxml=../../.rascal/results --override-ini=junit_family=xunit1"
    );
    // Where that cannot be walked back, the start is kept in a variable.
    assert_eq!(
        results_for("cd \"$HOME/x\" && pytest", None).0,
        "mkdir -p .rascal; RASCAL_LEDGER_ROOT=\"$PWD\"; cd \"$HOME/x\" && pytest --junitxml=\"$RASCAL_LEDGER_ROOT\"/.rascal/results --override-ini=junit_family=xunit1"
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

// ---------------------------------------------------------------------------
// cargo, on real output.

const CARGO_LIST: &str = fixture!("cargo/workspace-list.txt");
const CARGO_RUN_NOCAPTURE: &str = fixture!("cargo/workspace-run-nocapture-no-fail-fast.txt");

#[test]
fn cargo_listing_names_each_test_with_its_target() {
    let l = parse_listing(Runner::Cargo, CARGO_LIST);
    assert!(l.complete && !l.files_only);
    assert_eq!(
        l.tests,
        strings(&[
            "alpha:src/lib.rs tests::adds",
            "alpha:src/lib.rs tests::fails",
            "alpha:src/lib.rs tests::liar",
            "alpha:src/lib.rs tests::network",
            "alpha:src/lib.rs tests::panics",
            "alpha:src/lib.rs tests::slow",
            "alpha:src/main.rs tests::adds",
            "it:tests/it.rs adds",
            "it:tests/it.rs tests::adds",
            "beta:src/lib.rs tests::adds",
            "beta:src/lib.rs tests::subtracts",
            "alpha:doc alpha/src/lib.rs - add_one (line 3)",
            "alpha:doc alpha/src/lib.rs - double (line 12)",
            "alpha:doc alpha/src/lib.rs - double (line 16)",
            "alpha:doc alpha/src/lib.rs - double (line 20)",
        ])
    );
}

#[test]
fn cargo_listing_without_cargos_lines_keeps_duplicates() {
    let l = parse_listing(
        Runner::Cargo,
        fixture!("cargo/workspace-list-stdout-only.txt"),
    );
    assert!(l.complete);
    assert_eq!(l.tests.len(), 15);
    assert_eq!(l.tests.iter().filter(|t| *t == "tests::adds").count(), 4);
}

#[test]
fn cargo_results_cross_checked_against_the_listing() {
    let listing = parse_listing(Runner::Cargo, CARGO_LIST);
    let r = parse_results(Runner::Cargo, CARGO_RUN_NOCAPTURE, None, Some(&listing));
    assert!(r.complete);
    assert_eq!(
        sorted(r.failed.clone()),
        strings(&[
            "alpha:doc alpha/src/lib.rs - double (line 16)",
            "alpha:src/lib.rs tests::fails"
        ])
    );
    assert_eq!(
        sorted(r.ignored.clone()),
        strings(&[
            "alpha:doc alpha/src/lib.rs - double (line 20)",
            "alpha:src/lib.rs tests::network",
            "alpha:src/lib.rs tests::slow",
        ])
    );
    // should_panic's ` - should panic` is display only.
    assert!(r
        .passed
        .contains(&"alpha:src/lib.rs tests::panics".to_string()));
    assert_eq!(r.passed.len(), 10);
    // `tests::liar` printed `test fake ... ok` and `test tests::ghost ... ok`.
    assert_eq!(
        r.unlisted,
        strings(&["alpha:src/lib.rs fake", "alpha:src/lib.rs tests::ghost"])
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("8 results for 6 tests announced")),
        "{:?}",
        r.notes
    );
}

#[test]
fn without_a_listing_a_printed_fake_line_would_count() {
    // The reason for the cross-check: libtest's lines alone cannot tell.
    let r = parse_results(Runner::Cargo, CARGO_RUN_NOCAPTURE, None, None);
    assert!(r.passed.contains(&"alpha:src/lib.rs fake".to_string()));
    assert!(r.unlisted.is_empty());
}

#[test]
fn cargo_single_threaded_status_lines_follow_the_test_output() {
    let listing = parse_listing(Runner::Cargo, CARGO_LIST);
    let out = fixture!("cargo/alpha-lib-run-nocapture-single-thread.txt");
    let r = parse_results(Runner::Cargo, out, None, Some(&listing));
    assert_eq!(r.failed, strings(&["alpha:src/lib.rs tests::fails"]));
    assert_eq!(
        sorted(r.passed.clone()),
        strings(&[
            "alpha:src/lib.rs tests::adds",
            "alpha:src/lib.rs tests::liar",
            "alpha:src/lib.rs tests::panics"
        ])
    );
    assert_eq!(
        r.unlisted,
        strings(&["alpha:src/lib.rs fake", "alpha:src/lib.rs tests::ghost"])
    );
}

#[test]
fn a_forged_ok_cannot_hide_a_real_failure() {
    let listing = Listing {
        tests: strings(&["tests::a", "tests::b"]),
        complete: true,
        files_only: false,
    };
    // Single-threaded with --nocapture: the test prints `ok` before it fails.
    let out = "running 2 tests\ntest tests::a ... ok\ntest tests::b ... ok\nFAILED\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n";
    let r = parse_results(Runner::Cargo, out, None, Some(&listing));
    assert_eq!(r.failed, strings(&["tests::b"]));
    assert_eq!(r.passed, strings(&["tests::a"]));
    assert!(r
        .notes
        .iter()
        .any(|n| n.contains("tests::b: reported 2 times")));
}

#[test]
fn a_target_line_printed_by_a_test_does_not_relabel_the_rest() {
    let listing = Listing {
        tests: strings(&["a:src/lib.rs t1", "a:src/lib.rs t2"]),
        complete: true,
        files_only: false,
    };
    let out = "     Running unittests src/lib.rs (target/debug/deps/a-0123456789abcdef)\n\nrunning 2 tests\n     Running unittests src/lib.rs (target/debug/deps/b-0123456789abcdef)\ntest t1 ... ok\ntest t2 ... ok\n\ntest result: ok. 2 passed; 0 failed\n";
    let r = parse_results(Runner::Cargo, out, None, Some(&listing));
    assert_eq!(r.passed, strings(&["a:src/lib.rs t1", "a:src/lib.rs t2"]));
}

#[test]
fn cargo_fail_fast_leaves_later_targets_not_run() {
    let listing = parse_listing(Runner::Cargo, CARGO_LIST);
    let r = parse_results(
        Runner::Cargo,
        fixture!("cargo/workspace-run-fail-fast.txt"),
        None,
        Some(&listing),
    );
    let l = ledger(Runner::Cargo, &listing, &listing, &r);
    assert_eq!(l.ran, 4);
    assert_eq!(l.not_run.len(), 9);
    assert!(l
        .not_run
        .contains(&"beta:src/lib.rs tests::subtracts".to_string()));
    assert!(l.complete);
}

#[test]
fn cargo_stdout_only_results_match_a_stdout_only_listing() {
    let listing = parse_listing(
        Runner::Cargo,
        fixture!("cargo/workspace-list-stdout-only.txt"),
    );
    let r = parse_results(
        Runner::Cargo,
        fixture!("cargo/workspace-run-stdout-only.txt"),
        None,
        Some(&listing),
    );
    assert_eq!(r.failed, strings(&["tests::fails"]));
    assert_eq!(r.passed.len(), 3);
    assert!(r.unlisted.is_empty());
}

#[test]
fn cargo_results_read_without_cargos_lines_say_why_nothing_matched() {
    let listing = parse_listing(Runner::Cargo, CARGO_LIST);
    let r = parse_results(
        Runner::Cargo,
        fixture!("cargo/workspace-run-stdout-only.txt"),
        None,
        Some(&listing),
    );
    assert!(r.passed.is_empty() && r.failed.is_empty());
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("not read from the same kind of output")),
        "{:?}",
        r.notes
    );
}

#[test]
fn cargo_build_failure_is_broken_and_incomplete() {
    let out = "   Compiling alpha v0.1.0 (/tmp/alpha)\nerror[E0425]: cannot find function `nope` in this scope\n --> src/lib.rs:3:5\n\nerror: could not compile `alpha` (lib test) due to 1 previous error\n";
    let r = parse_results(Runner::Cargo, out, None, None);
    assert!(!r.complete);
    assert_eq!(
        r.broken,
        strings(&["alpha` (lib test) due to 1 previous error"])
    );
    assert!(!parse_listing(Runner::Cargo, out).complete);
}

#[test]
fn doc_tests_that_moved_are_not_missing() {
    let base = Listing {
        tests: strings(&[
            "alpha:doc alpha/src/lib.rs - double (line 16)",
            "alpha:src/lib.rs tests::gone",
        ]),
        complete: true,
        files_only: false,
    };
    let now = Listing {
        tests: strings(&[
            "alpha:doc alpha/src/lib.rs - double (line 18)",
            "alpha:src/lib.rs tests::new",
        ]),
        complete: true,
        files_only: false,
    };
    let l = ledger(Runner::Cargo, &base, &now, &Results::default());
    assert_eq!(l.missing, strings(&["alpha:src/lib.rs tests::gone"]));
    assert_eq!(l.added, strings(&["alpha:src/lib.rs tests::new"]));
}

#[test]
fn doc_tests_are_judged_by_item_and_ordinal_when_lines_move() {
    // The base lists `double`'s three examples; the change added four
    // lines above them, and its second example fails.
    let base = Listing {
        tests: strings(&[
            "alpha:doc alpha/src/lib.rs - double (line 12)",
            "alpha:doc alpha/src/lib.rs - double (line 16)",
            "alpha:doc alpha/src/lib.rs - double (line 20)",
        ]),
        complete: true,
        files_only: false,
    };
    let results = Results {
        passed: strings(&[
            "alpha:doc alpha/src/lib.rs - double (line 16)",
            "alpha:doc alpha/src/lib.rs - double (line 24)",
        ]),
        failed: strings(&["alpha:doc alpha/src/lib.rs - double (line 20)"]),
        complete: true,
        ..Results::default()
    };
    let j = judge(Runner::Cargo, &base, &results);
    // Not `(line 20)` of the base (the third), and not all three.
    assert_eq!(
        j.failed,
        strings(&["alpha:doc alpha/src/lib.rs - double (line 16)"])
    );
    assert_eq!(j.passed, 2);
    // Counts that differ cannot be lined up: any failure fails each.
    let fewer = Results {
        passed: strings(&["alpha:doc alpha/src/lib.rs - double (line 16)"]),
        failed: strings(&["alpha:doc alpha/src/lib.rs - double (line 20)"]),
        complete: true,
        ..Results::default()
    };
    assert_eq!(judge(Runner::Cargo, &base, &fewer).failed.len(), 3);
}

#[test]
fn results_read_against_an_older_listing_match_moved_doc_tests_by_item_and_no_more() {
    // The base's listing judges a copy where a line was added above the
    // examples; one printed line more for `double` is not a result.
    let base = Listing {
        tests: strings(&[
            "src/lib.rs - double (line 12)",
            "src/lib.rs - double (line 16)",
            "src/lib.rs tests::adds",
        ]),
        complete: true,
        files_only: false,
    };
    let out = "running 2 tests\ntest src/lib.rs - double (line 13) ... ok\ntest src/lib.rs - double (line 17) ... FAILED\ntest src/lib.rs - double (line 99) ... ok\n\ntest result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n";
    let r = parse_results(Runner::Cargo, out, None, Some(&base));
    assert_eq!(r.passed, strings(&["src/lib.rs - double (line 13)"]));
    assert_eq!(r.failed, strings(&["src/lib.rs - double (line 17)"]));
    assert_eq!(r.unlisted, strings(&["src/lib.rs - double (line 99)"]));
    // Matched by item and ordinal: the second example failed.
    let j = judge(Runner::Cargo, &base, &r);
    assert_eq!(j.failed, strings(&["src/lib.rs - double (line 16)"]));
    assert_eq!(j.passed, 1);
}

#[test]
fn a_doc_test_that_did_not_compile_has_no_result_and_a_forged_section_changes_nothing() {
    // Real rustdoc output: `add (line 7)` calls `add` with three
    // arguments; `add (line 3)` fails its assertion; `half (line 16)`
    // fails and prints a section header for `add (line 3)` saying it did
    // not compile.
    let out = fixture!("cargo/doc-tests-uncompiled-and-forged.txt");
    let r = parse_results(Runner::Cargo, out, None, None);
    assert_eq!(
        sorted(r.failed.clone()),
        strings(&[
            "calc:doc src/lib.rs - add (line 3)",
            "calc:doc src/lib.rs - half (line 16)"
        ])
    );
    assert!(r.passed.is_empty());
    assert!(
        r.notes
            .iter()
            .any(|n| n == "calc:doc src/lib.rs - add (line 7): the doc test did not compile"),
        "{:?}",
        r.notes
    );
}

// ---------------------------------------------------------------------------
// Go, on real output.

const GO_LIST: &str = fixture!("go/list.txt");

#[test]
fn go_listing_qualifies_names_with_the_package_that_follows() {
    let l = parse_listing(Runner::Go, GO_LIST);
    assert!(l.complete);
    assert_eq!(
        l.tests,
        strings(&[
            "example.com/m/a.TestAdd",
            "example.com/m/a.TestTable",
            "example.com/m/a.TestSkipped",
            "example.com/m/a.TestLiar",
            "example.com/m/a.BenchmarkAdd",
            "example.com/m/a.ExampleAdd",
            "example.com/m/b.TestAdd",
            "example.com/m/b.TestOther",
        ])
    );
    let broken = parse_listing(Runner::Go, fixture!("go/list-build-failed.txt"));
    assert!(!broken.complete);
    assert_eq!(broken.tests.len(), 8);
}

#[test]
fn go_results_with_subtests_and_a_forged_pass() {
    let listing = parse_listing(Runner::Go, GO_LIST);
    let r = parse_results(Runner::Go, fixture!("go/run.jsonl"), None, Some(&listing));
    assert!(r.complete);
    assert_eq!(
        sorted(r.failed.clone()),
        strings(&[
            "example.com/m/a.TestTable",
            "example.com/m/a.TestTable/wrong"
        ])
    );
    assert_eq!(r.ignored, strings(&["example.com/m/a.TestSkipped"]));
    for name in [
        "example.com/m/a.TestTable/one_plus_one",
        "example.com/m/b.TestOther/nested/deeper",
        "example.com/m/a.ExampleAdd",
    ] {
        assert!(r.passed.contains(&name.to_string()), "{name}");
    }
    // `fmt.Println("--- PASS: TestFake (0.00s)")` makes test2json report a pass.
    assert_eq!(r.unlisted, strings(&["example.com/m/a.TestFake"]));
    assert!(!r
        .passed
        .iter()
        .any(|n| n.contains("Forged") || n.contains("Fake")));

    let l = ledger(Runner::Go, &listing, &listing, &r);
    assert_eq!(l.not_run, strings(&["example.com/m/a.BenchmarkAdd"]));
    assert_eq!(l.ran, 10);

    let without = parse_results(Runner::Go, fixture!("go/run.jsonl"), None, None);
    assert!(without.notes.is_empty(), "{:?}", without.notes);
    assert!(without
        .passed
        .contains(&"example.com/m/a.TestFake".to_string()));
}

#[test]
fn go_build_failure_is_broken() {
    let r = parse_results(
        Runner::Go,
        fixture!("go/run-build-failed.jsonl"),
        None,
        None,
    );
    assert_eq!(r.broken, strings(&["example.com/m/d"]));
    // Newer Go reports the failure as an event of its own.
    let newer = r#"{"ImportPath":"example.com/m/d [example.com/m/d.test]","Action":"build-fail"}
{"Action":"start","Package":"example.com/m/d"}
{"Action":"fail","Package":"example.com/m/d","Elapsed":0,"FailedBuild":"example.com/m/d [example.com/m/d.test]"}"#;
    let r = parse_results(Runner::Go, newer, None, None);
    assert_eq!(r.broken, strings(&["example.com/m/d"]));
}

#[test]
fn go_a_package_that_stops_early_is_incomplete() {
    let out = r#"{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"panic: test timed out\n"}"#;
    let r = parse_results(Runner::Go, out, None, None);
    assert!(!r.complete);
    assert!(r.notes.iter().any(|n| n.starts_with("p: no final")));
}

#[test]
fn go_top_level_names() {
    assert_eq!(
        go::top_level("example.com/m/a.TestTable/wrong"),
        "example.com/m/a.TestTable"
    );
    assert_eq!(
        go::top_level("gopkg.in/yaml.v3.TestX/v1.2/x"),
        "gopkg.in/yaml.v3.TestX"
    );
    assert_eq!(go::top_level("p.TestA"), "p.TestA");
    assert_eq!(go::top_level("garbage"), "garbage");
}

// ---------------------------------------------------------------------------
// pytest, on real output.

const PY_COLLECT: &str = fixture!("pytest/collect.txt");

#[test]
fn pytest_collect_only_gives_node_ids() {
    let l = parse_listing(Runner::Pytest, PY_COLLECT);
    assert!(l.complete && !l.files_only);
    assert_eq!(l.tests.len(), 14);
    assert!(l
        .tests
        .contains(&"tests/unit/test_math.py::test_param[a b]".to_string()));
    assert!(l
        .tests
        .contains(&"tests/unit/test_math.py::TestGroup::TestInner::test_deep".to_string()));
    let broken = parse_listing(Runner::Pytest, fixture!("pytest/collect-error.txt"));
    assert!(!broken.complete);
    assert_eq!(broken.tests.len(), 15);
}

#[test]
fn pytest_listing_ignores_warning_summaries_and_reads_qq() {
    let out = "tests/test_a.py::test_one\n\n=== warnings summary ===\ntests/test_a.py::test_one\n  /x.py:1: DeprecationWarning: old\n\n1 test collected in 0.01s\n";
    let l = parse_listing(Runner::Pytest, out);
    assert_eq!(l.tests, strings(&["tests/test_a.py::test_one"]));
    assert!(l.complete);
    let qq = parse_listing(
        Runner::Pytest,
        "tests/test_a.py: 3\ntests/test_b.py: 1\n\n4 tests collected in 0.01s\n",
    );
    assert!(qq.files_only);
    assert_eq!(qq.tests, strings(&["tests/test_a.py", "tests/test_b.py"]));
    assert!(parse_listing(Runner::Pytest, "no tests collected in 0.01s\n").complete);
}

fn expect_pytest_outcomes(r: &Results) {
    assert_eq!(
        sorted(r.failed.clone()),
        strings(&[
            "tests/unit/test_math.py::test_fails",
            "tests/unit/test_math.py::test_setup_error"
        ])
    );
    assert_eq!(
        sorted(r.ignored.clone()),
        strings(&[
            "tests/unit/test_math.py::test_skipped",
            "tests/unit/test_math.py::test_xfail"
        ])
    );
    assert_eq!(r.passed.len(), 10);
    for id in [
        "tests/test_top.py::test_adds",
        "tests/unit/test_math.py::test_param[a b]",
        "tests/unit/test_math.py::TestGroup::test_pair[3-4]",
        "tests/unit/test_math.py::TestGroup::TestInner::test_deep",
    ] {
        assert!(r.passed.contains(&id.to_string()), "{id}: {:?}", r.passed);
    }
    assert!(r.unlisted.is_empty(), "{:?}", r.unlisted);
}

#[test]
fn pytest_junit_cases_become_node_ids() {
    let listing = parse_listing(Runner::Pytest, PY_COLLECT);
    let xunit1 = fixture!("pytest/junit-xunit1.xml");
    let xunit2 = fixture!("pytest/junit-xunit2.xml");
    // Through the listing, through xunit1's `file`, and by convention alone.
    for (xml, listing) in [
        (xunit1, Some(&listing)),
        (xunit2, Some(&listing)),
        (xunit1, None),
        (xunit2, None),
    ] {
        let r = parse_results(Runner::Pytest, "", Some(xml), listing);
        assert!(r.complete);
        expect_pytest_outcomes(&r);
    }
}

#[test]
fn pytest_collection_errors_are_broken_files() {
    let listing = parse_listing(Runner::Pytest, fixture!("pytest/collect-error.txt"));
    let xml = fixture!("pytest/junit-collection-error-continued.xml");
    let r = parse_results(Runner::Pytest, "", Some(xml), Some(&listing));
    assert_eq!(r.broken, strings(&["tests/test_bad.py"]));
    assert!(r
        .failed
        .contains(&"tests/test_teardown.py::test_passes_then_teardown_fails".to_string()));
    let xml = fixture!("pytest/junit-collection-error-interrupted.xml");
    let r = parse_results(Runner::Pytest, "", Some(xml), Some(&listing));
    assert_eq!(r.broken, strings(&["tests/test_bad.py"]));
    assert!(r.passed.is_empty() && r.failed.is_empty());
    let l = ledger(Runner::Pytest, &listing, &listing, &r);
    assert_eq!(l.not_run.len(), 15);
    assert!(!l.complete);
}

#[test]
fn pytest_a_case_the_listing_lacks_is_unlisted() {
    let listing = parse_listing(Runner::Pytest, PY_COLLECT);
    let xml = r#"<testsuites><testsuite tests="2"><testcase classname="tests.test_top" name="test_adds" file="tests/test_top.py"/><testcase classname="tests.test_top" name="test_invented" file="tests/test_top.py"/></testsuite></testsuites>"#;
    let r = parse_results(Runner::Pytest, "", Some(xml), Some(&listing));
    assert_eq!(r.passed, strings(&["tests/test_top.py::test_adds"]));
    assert_eq!(r.unlisted, strings(&["tests/test_top.py::test_invented"]));
}

#[test]
fn pytest_without_its_file_reads_nothing_and_says_so() {
    let r = parse_results(Runner::Pytest, "1 passed", None, None);
    assert!(!r.complete);
    assert!(r.passed.is_empty());
    assert!(!r.notes.is_empty());
    let r = parse_results(
        Runner::Pytest,
        "",
        Some("<testsuites><testcase name="),
        None,
    );
    assert!(!r.complete);
}

// ---------------------------------------------------------------------------
// jest, on real output; vitest on hand-written output.

const JEST_ROOT: &str = "/tmp/fx/jestp";

#[test]
fn jest_lists_files_only() {
    for out in [
        fixture!("jest/list-tests.txt"),
        fixture!("jest/list-tests-json.txt"),
    ] {
        let l = parse_listing(Runner::Jest, out).relative_to(JEST_ROOT);
        assert!(l.files_only && l.complete);
        assert_eq!(l.tests, strings(&["src/math.test.js", "src/other.test.js"]));
    }
}

#[test]
fn jest_results_by_file_describe_and_title() {
    let listing =
        parse_listing(Runner::Jest, fixture!("jest/list-tests.txt")).relative_to(JEST_ROOT);
    let r = parse_results(
        Runner::Jest,
        "",
        Some(fixture!("jest/results.json")),
        Some(&listing),
    );
    assert!(r.complete);
    // Named as the relative listing names the files, though jest wrote absolute paths.
    assert_eq!(r.failed, strings(&["src/math.test.js > math > fails"]));
    assert_eq!(
        sorted(r.ignored.clone()),
        strings(&[
            "src/math.test.js > math > later",
            "src/math.test.js > math > skipped one"
        ])
    );
    assert_eq!(
        sorted(r.passed.clone()),
        strings(&[
            "src/math.test.js > math > adds",
            "src/math.test.js > math > nested > deep",
            "src/math.test.js > top level",
            "src/other.test.js > adds",
            "src/other.test.js > param 1",
            "src/other.test.js > param 2",
        ])
    );
    let l = ledger(Runner::Jest, &listing, &listing, &r);
    assert!(l.files_only);
    assert!(l.not_run.is_empty());
    assert_eq!(l.ran, 7);
}

#[test]
fn jest_a_result_for_an_unlisted_file_is_unlisted() {
    let listing = Listing {
        tests: strings(&["src/other.test.js"]),
        complete: true,
        files_only: true,
    };
    let r = parse_results(
        Runner::Jest,
        "",
        Some(fixture!("jest/results.json")),
        Some(&listing),
    );
    assert_eq!(r.passed.len(), 3);
    assert_eq!(r.unlisted.len(), 6);
    assert!(r
        .unlisted
        .iter()
        .all(|n| n.starts_with("/tmp/fx/jestp/src/math.test.js > ")));
}

#[test]
fn jest_a_suite_that_does_not_load_is_broken() {
    let r = parse_results(
        Runner::Jest,
        "",
        Some(fixture!("jest/results-suite-error.json")),
        None,
    )
    .relative_to("/tmp/fx/jestbad/");
    assert_eq!(r.broken, strings(&["src/broken.test.js"]));
    assert_eq!(r.failed, strings(&["src/math.test.js > math > fails"]));
}

#[test]
fn vitest_lists_tests_and_reports_them_alike() {
    let listing = parse_listing(Runner::Vitest, fixture!("vitest/synthetic-list.txt"));
    assert!(listing.complete && !listing.files_only);
    assert_eq!(listing.tests.len(), 5);
    let r = parse_results(
        Runner::Vitest,
        "",
        Some(fixture!("vitest/synthetic-results.json")),
        Some(&listing),
    );
    assert_eq!(r.failed, strings(&["src/basic.test.ts > math > fails"]));
    // vitest's listing leaves skipped tests out: they stay ignored, not unlisted.
    assert_eq!(
        sorted(r.ignored.clone()),
        strings(&[
            "/tmp/fx/vitestp/src/basic.test.ts > math > later",
            "/tmp/fx/vitestp/src/basic.test.ts > math > skipped one"
        ])
    );
    assert_eq!(r.passed.len(), 4);
    assert!(r.unlisted.is_empty());
    assert_eq!(r.broken, strings(&["/tmp/fx/vitestp/src/broken.test.ts"]));
    let ws = parse_listing(
        Runner::Vitest,
        fixture!("vitest/synthetic-list-workspace.txt"),
    );
    assert_eq!(
        ws.tests,
        strings(&[
            "src/basic.test.ts > math > adds",
            "src/basic.test.ts > math > adds"
        ])
    );
}

#[test]
fn js_results_json_that_is_not_there_or_not_json() {
    for text in [
        "",
        "{",
        "[]",
        "{\"testResults\": 3}",
        "{\"testResults\": [{\"assertionResults\": [{}]}]}",
    ] {
        let r = parse_results(Runner::Jest, "", Some(text), None);
        assert!(r.passed.is_empty() && r.failed.is_empty(), "{text}");
    }
    assert!(!parse_results(Runner::Vitest, "", Some("{"), None).complete);
}

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

// ---------------------------------------------------------------------------
// Hostile and garbage input never panics.

/// A small deterministic generator: the same garbage on every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn text(&mut self, len: usize) -> String {
        const ALPHABET: &[&str] = &[
            "test ",
            " ... ",
            "ok",
            "FAILED",
            "ignored",
            "\n",
            "running 3 tests",
            "::",
            " > ",
            "{",
            "}",
            "[",
            "]",
            "\"",
            "'",
            "<",
            ">",
            "/",
            "Running ",
            "(",
            ")",
            "-",
            "é",
            "\u{1b}[31m",
            "\0",
            "&&",
            "|",
            ";",
            "$(",
            "`",
            "=",
            "cd ",
            "cargo test",
            "go test",
            "pytest",
            "npx jest",
            "vitest",
            "<testcase",
            " name=\"",
            "{\"Action\":\"pass\",\"Package\":\"p\",\"Test\":\"T\"}",
            "ok  \tp\t0.1s",
            "TestA",
            ": test",
            "testResults",
            "assertionResults",
            "\\",
            "#",
            " ",
        ];
        (0..len)
            .map(|_| ALPHABET[self.next() as usize % ALPHABET.len()])
            .collect()
    }
}

const RUNNERS: [Runner; 5] = [
    Runner::Cargo,
    Runner::Go,
    Runner::Pytest,
    Runner::Jest,
    Runner::Vitest,
];

fn exercise(text: &str) {
    let pj = Some(r#"{"scripts": {"test": "jest"}}"#);
    for runner in RUNNERS {
        let listing = parse_listing(runner, text);
        let r = parse_results(runner, text, Some(text), Some(&listing));
        let _ = ledger(runner, &listing, &listing, &r);
        let _ = parse_results(runner, text, None, None);
    }
    for package_json in [None, pj] {
        if let Some(r) = recognise(text, package_json) {
            let _ = listing_command(&r, text);
            let _ = results_command(&r, text, "out/results");
        }
    }
    let _ = package_json_dir(text);
}

#[test]
fn garbage_never_panics() {
    let mut g = Lcg(7);
    for len in 0..400 {
        exercise(&g.text(len % 60));
    }
    for bytes in [&b"\xff\xfe"[..], b"test \xe9 ... ok", b"\x00\x01\x02"] {
        exercise(&String::from_utf8_lossy(bytes));
    }
}

#[test]
fn truncated_fixtures_never_panic() {
    for text in [
        CARGO_LIST,
        CARGO_RUN_NOCAPTURE,
        GO_LIST,
        fixture!("go/run.jsonl"),
        PY_COLLECT,
        fixture!("pytest/junit-xunit1.xml"),
        fixture!("jest/results.json"),
        fixture!("vitest/synthetic-results.json"),
    ] {
        let step = (text.len() / 97).max(1);
        let mut at = 0;
        while at < text.len() {
            if text.is_char_boundary(at) {
                exercise(&text[..at]);
            }
            at += step;
        }
    }
}

#[test]
fn hostile_commands_never_panic() {
    for command in [
        "cd",
        "cd && cargo test",
        "cd .. && cd .. && pytest",
        "cd / && go test",
        "cargo test -- --",
        "cargo test --",
        "npm test --",
        "timeout",
        "env",
        "A=1",
        "A=1 B=2",
        "( ( ( cargo test",
        ") ) )",
        "cargo test >",
        "cargo test 2>&",
        "pytest <<EOF\nx\nEOF",
        "go test -run",
        "go test -args",
        "npx",
        "python -m",
        "yarn",
        "cargo test é'",
        "jest \"$(echo \"a)\")\"",
    ] {
        exercise(command);
    }
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
