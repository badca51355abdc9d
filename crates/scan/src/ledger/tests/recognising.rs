//! Recognising a runner in a guardrail command: how it is started,
//! through env assignments, wrappers, chains and package scripts.

use super::*;

/// Commands and how each starts its runner: (command, runner, the words
/// that start it, the arguments after them).
const STARTS: &[(&str, Runner, &[&str], &[&str])] = &[
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

#[test]
fn recognises_each_runner_and_how_it_is_started() {
    for (command, runner, program, args) in STARTS {
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
