//! Which guardrails are the test run, and so whether the test-evidence
//! layer and its implicit `test-integrity` check judge a change at all.

use super::test_run::{check_commands, integrity_guardrail, is_test_guardrail, test_commands};
use rascal_core::config::{Config, Guardrail, GuardrailKind, VerificationConfig};

fn guardrails(yaml: &str) -> Vec<Guardrail> {
    rascal_core::config::parse("test.yaml", yaml).expect("test guardrails")
}

fn config(yaml: &str) -> Config {
    Config {
        guardrails: Some(guardrails(yaml)),
        ..Config::default()
    }
}

#[test]
fn the_test_run_is_a_runner_a_name_or_a_flag() {
    let gs = guardrails(
        "[{name: unit, command: 'cargo test'}, {name: Tests, command: make}, \
          {name: build, command: make}, {name: check, command: make, tests: true}, \
          {name: test, command: 'cargo test', tests: false}, \
          {name: lint, command: 'npm test'}, {name: size, max_lines: 10}]",
    );
    let is =
        |pkg: Option<&str>| -> Vec<bool> { gs.iter().map(|g| is_test_guardrail(g, pkg)).collect() };
    assert_eq!(is(None), [true, true, false, true, false, false, false]);
    // `npm test` is the test run when package.json's script is a runner.
    let jest = r#"{"scripts": {"test": "jest"}}"#;
    assert_eq!(
        is(Some(jest)),
        [true, true, false, true, false, true, false]
    );
    let config = Config {
        guardrails: Some(gs.clone()),
        ..Config::default()
    };
    assert_eq!(test_commands(&config, None), ["cargo test", "make", "make"]);
    assert_eq!(
        test_commands(&config, Some(jest)),
        ["cargo test", "make", "make", "npm test"]
    );
}

#[test]
fn the_criteria_test_command_is_a_check_command_too() {
    let mut c = config("[{name: unit, command: 'cargo test'}, {name: build, command: make}]");
    assert_eq!(check_commands(&c, None), ["cargo test"]);
    c.verification = Some(
        rascal_core::config::parse::<VerificationConfig>(
            "verification.yaml",
            "criteria: {test_command: 'pytest -k {check}'}",
        )
        .expect("verification"),
    );
    assert_eq!(
        check_commands(&c, None),
        ["cargo test", "pytest -k {check}"]
    );
}

#[test]
fn test_integrity_runs_where_configured_or_where_tests_run() {
    let implicit = integrity_guardrail(&config("[{name: unit, command: 'cargo test'}]"), None)
        .expect("implicit");
    assert_eq!(implicit.name, "test-integrity");
    assert!(implicit.required);
    assert_eq!(implicit.kind, GuardrailKind::TestIntegrity);
    assert_eq!(
        integrity_guardrail(&config("[{name: build, command: make}]"), None),
        None
    );
    assert_eq!(integrity_guardrail(&Config::default(), None), None);
    let own = config(
        "[{name: build, command: make}, {name: integrity, builtin: test-integrity, required: false}]",
    );
    let g = integrity_guardrail(&own, None).expect("configured");
    assert_eq!((g.name.as_str(), g.required), ("integrity", false));
}
