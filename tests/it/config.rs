//! Config files are parsed strictly, errors are located, and config always
//! comes from the base commit.

use crate::common;
use common::{code, stderr, stdout, TestRepo};
use rascal_core::config::{Config, ConfigError, GuardrailKind};

fn guard_err(text: &str) -> ConfigError {
    Config::from_texts(None, Some(text), None).expect_err("should be refused")
}

#[test]
fn unknown_key_names_file_line_column_and_allowed_keys() {
    let e = guard_err("guardrails:\n  - name: build\n    comand: cargo build\n");
    assert_eq!(e.file, ".rascal/guardrails.yaml");
    assert_eq!(e.line, Some(3), "{e}");
    assert_eq!(e.column, Some(5), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("unknown field `comand`"), "{msg}");
    assert!(msg.contains("command"), "lists allowed keys: {msg}");
    assert!(msg.starts_with(".rascal/guardrails.yaml:3:5: "), "{msg}");
}

/// A bad value anywhere — top level, an agent's last key, a list entry, a
/// nested mapping — is reported at the value's own line and column, with
/// that line shown and what was found in the user's words.
#[test]
fn a_bad_value_is_located_at_itself_at_any_depth_in_the_users_words() {
    let agents = "agents:\n  a:\n    runtime: scripted\n    scenario: nothing\n  b:\n    runtime: scripted\n    scenario: nothing\n  c:\n    runtime: scripted\n    scenario: nothing\n    timeout: [30]\n";
    let main = |t: &str| Config::from_texts(Some(t), None, None).expect_err(t);
    let cases: Vec<(ConfigError, usize, usize, &str, &str)> = vec![
        (main(agents), 11, 14, "got a list", "    timeout: [30]"),
        (
            main("agents:\n  a: { runtime: scripted, scenario: nothing }\ntimeout: 5\n"),
            3,
            10,
            "duration `5` has no unit",
            "timeout: 5",
        ),
        (
            main("agents:\n  a:\n    runtime: scripted\n    timeout:\n      minutes: 5\n"),
            5,
            7,
            "got a mapping",
            "      minutes: 5",
        ),
        (
            guard_err("guardrails:\n  - { name: a, command: \"true\" }\n  - name: b\n    command: \"true\"\n    timeout: true\n"),
            5,
            14,
            "got `true`",
            "    timeout: true",
        ),
        (
            main("agents:\n  a:\n    runtime: scripted\n    network: [github.com]\n"),
            4,
            14,
            "`network:` got a list",
            "    network: [github.com]",
        ),
        (
            main("agents:\n  a: { runtime: [scripted] }\n"),
            2,
            17,
            "invalid type: a list",
            "  a: { runtime: [scripted] }",
        ),
    ];
    for (e, line, column, words, shown) in cases {
        let msg = e.to_string();
        assert_eq!((e.line, e.column), (Some(line), Some(column)), "{msg}");
        assert!(msg.contains(words), "{msg}");
        assert!(
            !msg.contains("Sequence") && !msg.contains("Mapping"),
            "internal form: {msg}"
        );
        let caret = format!(
            "\n  {line} | {shown}\n  {} | {}^",
            " ".repeat(line.to_string().len()),
            " ".repeat(column - 1)
        );
        assert!(
            msg.contains(&caret),
            "the line, a caret under the value: {msg}"
        );
    }
}

#[test]
fn bad_duration_says_what_is_allowed() {
    let e = guard_err("guardrails:\n  - { name: t, command: \"true\", timeout: 5 minutes }\n");
    let msg = e.to_string();
    assert!(msg.contains("5 minutes"), "{msg}");
    assert!(msg.contains("90s"), "{msg}");
    assert_eq!(e.line, Some(2), "{msg}");
}

#[test]
fn repeated_or_misordered_duration_units_are_located_errors() {
    let e = guard_err("guardrails:\n  - { name: t, command: \"true\", timeout: 1h30m30m }\n");
    let msg = e.to_string();
    assert!(msg.contains("1h30m30m"), "{msg}");
    assert!(msg.contains("appears twice"), "{msg}");
    assert_eq!(e.line, Some(2), "{msg}");
    let e = guard_err("guardrails:\n  - name: t\n    command: \"true\"\n    timeout: 30m1h\n");
    let msg = e.to_string();
    assert!(msg.contains("largest to the smallest"), "{msg}");
    assert_eq!(
        (e.line, e.column),
        (Some(4), Some(14)),
        "the value itself is located: {msg}"
    );
    Config::from_texts(
        None,
        Some("guardrails:\n  - { name: t, command: \"true\", timeout: 1h30m }\n"),
        None,
    )
    .expect("1h30m is a duration");
}

#[test]
fn invalid_regex_is_located() {
    let e = guard_err("guardrails:\n  - name: banned\n    patterns: ['ok', 'bad(']\n");
    let msg = e.to_string();
    assert!(msg.contains("invalid regex `bad(`"), "{msg}");
    assert!(e.line.is_some(), "{msg}");
}

#[test]
fn invalid_glob_in_permissions_is_located() {
    let e = Config::from_texts(
        None,
        None,
        Some("permissions:\n  denied_paths: ['src/[']\n"),
    )
    .expect_err("bad glob");
    assert_eq!(e.file, ".rascal/permissions.yaml");
    assert!(e.line.is_some(), "{e}");
    assert!(e.to_string().contains("src/["), "{e}");
}

#[test]
fn wrong_type_and_mixed_kinds_are_refused() {
    let e = guard_err("guardrails:\n  - { name: size, max_lines: lots }\n");
    assert!(e.to_string().contains("invalid"), "{e}");
    let e = guard_err("guardrails:\n  - { name: x, command: \"true\", max_lines: 3 }\n");
    assert!(e.to_string().contains("exactly one of"), "{e}");
    let e = guard_err("guardrails:\n  - { name: x }\n");
    assert!(e.to_string().contains("it has none"), "{e}");
    let e = guard_err("guardrails:\n  - { name: x, command: a }\n  - { name: x, command: b }\n");
    assert!(
        e.to_string().contains("two guardrails are named `x`"),
        "{e}"
    );
}

#[test]
fn on_unscanned_belongs_to_the_secrets_builtin() {
    let cfg = Config::from_texts(
        None,
        Some("guardrails:\n  - { name: s, builtin: secrets, on_unscanned: fail }\n"),
        None,
    )
    .expect("config");
    match &cfg.guardrails.as_ref().unwrap()[0].kind {
        rascal_core::config::GuardrailKind::Secrets(o) => {
            assert_eq!(
                o.on_unscanned,
                rascal_core::config::guardrails::OnUnscanned::Fail
            )
        }
        other => panic!("{other:?}"),
    }
    let e = guard_err("guardrails:\n  - { name: x, command: a, on_unscanned: fail }\n");
    assert!(e.to_string().contains("on_unscanned"), "{e}");
    let e = guard_err("guardrails:\n  - { name: s, builtin: secrets, on_unscanned: maybe }\n");
    assert!(e.to_string().contains("maybe"), "{e}");
}

#[test]
fn unknown_agent_runtime_and_scenario_are_refused() {
    let e = Config::from_texts(Some("agents:\n  a: { runtime: gpt9 }\n"), None, None).unwrap_err();
    assert_eq!(e.file, ".rascal/config.yaml");
    assert!(e.to_string().contains("gpt9"), "{e}");
    let e = Config::from_texts(
        Some("agents:\n  a: { runtime: scripted, scenario: nope }\n"),
        None,
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("demo-good"), "lists scenarios: {e}");
}

#[test]
fn every_guardrail_kind_parses() {
    let cfg = Config::from_texts(
        None,
        Some(
            "guardrails:\n  - { name: build, command: \"cargo build\", timeout: 2m, parallel: true }\n  - { name: secrets, builtin: secrets }\n  - { name: banned, patterns: ['dbg!'], scope: all }\n  - { name: size, max_lines: 10, max_files: 2, required: false }\n",
        ),
        None,
    )
    .unwrap();
    let g = cfg.guardrails.unwrap();
    assert!(matches!(
        g[0].kind,
        GuardrailKind::Command { parallel: true, .. }
    ));
    assert!(matches!(g[1].kind, GuardrailKind::Secrets(_)));
    assert!(matches!(g[2].kind, GuardrailKind::Patterns { .. }));
    assert!(!g[3].required);
}

#[test]
fn check_reads_config_from_base_not_from_the_working_tree() {
    let t = TestRepo::new(&[
        (
            ".rascal/guardrails.yaml",
            "guardrails:\n  - { name: no-dbg, patterns: ['dbg!'] }\n",
        ),
        ("src/a.rs", "fn a() {}\n"),
    ]);
    // The working tree weakens the config and adds a banned line.
    t.write(".rascal/guardrails.yaml", "guardrails: []\n");
    t.write("src/a.rs", "fn a() { dbg!(1); }\n");
    let o = t.rascal(&["check"]);
    assert_eq!(code(&o), 1, "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("src/a.rs:1"), "{}", stdout(&o));
    // A broken config in the working tree is not even read.
    t.write(".rascal/guardrails.yaml", "guardrails: [[[");
    assert_eq!(code(&t.rascal(&["check"])), 1);
}

#[test]
fn malformed_yaml_at_base_exits_2_with_location() {
    let t = TestRepo::new(&[(
        ".rascal/guardrails.yaml",
        "guardrails:\n  - name: x\n   command: y\n",
    )]);
    let o = t.rascal(&["check"]);
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert!(err.contains(".rascal/guardrails.yaml"), "{err}");
    assert!(err.contains("at base commit"), "{err}");
    assert!(err.contains(":3:") || err.contains(":2:"), "{err}");
    assert!(err.contains("hint:"), "{err}");
}

// ------------------------------------------------- hostile config files

/// A 1 MB scalar anchored once and aliased 5,000 times (5 GB expanded)
/// used to abort rascal on allocation; now it is a located config error.
#[test]
fn an_alias_bomb_at_base_exits_2_naming_file_and_location() {
    let big = "x".repeat(1_000_000);
    let refs = vec!["*big"; 5_000].join(", ");
    let text = format!(
        "guardrails:\n  - name: a\n    command: 'true'\n    env: [&big {big}]\n  - name: b\n    command: 'true'\n    env: [{refs}]\n"
    );
    let t = TestRepo::new(&[(".rascal/guardrails.yaml", text.as_str())]);
    let o = t.rascal(&["check"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains(".rascal/guardrails.yaml (at base commit"),
        "{err}"
    );
    assert!(err.contains(":4:"), "points at the anchored value: {err}");
    assert!(err.contains("aliases"), "{err}");
    assert!(err.contains("guardrails[1].env["), "{err}");
    assert!(err.len() < 2000, "{err}");
}

#[test]
fn a_config_file_over_1_mib_at_base_exits_2() {
    let text = format!("guardrails: []\n#{}\n", "x".repeat(1 << 20));
    let t = TestRepo::new(&[(".rascal/guardrails.yaml", text.as_str())]);
    let o = t.rascal(&["check"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert!(err.contains(".rascal/guardrails.yaml"), "{err}");
    assert!(err.contains("at most 1048576 bytes"), "{err}");
    // The same text handed over directly is refused at the byte where the
    // cap falls.
    let e = guard_err(&text);
    let col = (1 << 20) - "guardrails: []\n".len() + 1;
    assert_eq!((e.line, e.column), (Some(2), Some(col)), "{e}");
}

#[test]
fn deep_flow_nesting_is_refused_before_it_is_parsed() {
    let text = format!("guardrails: {}\n", "[".repeat(500_000));
    let start = std::time::Instant::now();
    let e = guard_err(&text);
    assert!(e.message.contains("too many `[`"), "{e}");
    assert!(start.elapsed().as_secs() < 5, "{:?}", start.elapsed());
}

#[test]
fn duplicate_agent_names_are_an_error_naming_both_lines() {
    let e = Config::from_texts(
        Some("agents:\n  a: { runtime: scripted, scenario: demo-good }\n  b: { runtime: scripted, scenario: demo-good }\n  a: { runtime: claude }\n"),
        None,
        None,
    )
    .unwrap_err();
    assert_eq!(e.file, ".rascal/config.yaml");
    assert_eq!(e.line, Some(4), "{e}");
    assert!(
        e.message
            .contains("duplicate key `a` in `agents`: at line 2 and at line 4"),
        "{e}"
    );
    // The same key twice inside one agent, too.
    let e = Config::from_texts(
        Some("agents:\n  a:\n    runtime: claude\n    model: x\n    model: y\n"),
        None,
        None,
    )
    .unwrap_err();
    assert!(e.message.contains("at line 4 and at line 5"), "{e}");
}

#[test]
fn duplicate_guardrail_names_name_both_lines() {
    let e = guard_err(
        "guardrails:\n  - name: build\n    command: a\n  - name: lint\n    command: b\n  - name: build\n    command: c\n",
    );
    assert_eq!(e.line, Some(6), "{e}");
    assert!(
        e.message
            .contains("two guardrails are named `build`: at line 2 and at line 6"),
        "{e}"
    );
}

#[test]
fn duplicate_strategy_agents_and_reviewers_name_both_lines() {
    let agents = "agents:\n  a: { runtime: scripted, scenario: demo-good }\n  b: { runtime: scripted, scenario: demo-good }\n";
    let e = Config::from_texts(
        Some(&format!(
            "{agents}strategy:\n  agents:\n    - a\n    - b\n    - a\n"
        )),
        None,
        None,
    )
    .unwrap_err();
    assert!(e.message.contains("at line 6 and at line 8"), "{e}");
    let cfg = Config::from_texts(Some(agents), None, None).unwrap();
    let e = cfg
        .with_verification(Some("review:\n  reviewers: [a, b, a]\n  consensus: 2\n"))
        .unwrap_err();
    assert_eq!(e.file, ".rascal/verification.yaml");
    assert!(
        e.message
            .contains("two reviewers are named `a`: at line 2 and at line 2"),
        "{e}"
    );
    assert_eq!(e.column, Some(21), "{e}");
}

#[test]
fn duplicate_criteria_name_both_lines() {
    use rascal_core::config::spec::Task;
    let e = Task::from_yaml(
        ".rascal/specs/x.yaml",
        "instruction: x\nacceptance_criteria:\n  - { description: ok, type: file-exists, check: a }\n  - { description: ok, type: file-exists, check: b }\n",
    )
    .unwrap_err();
    assert!(
        e.message
            .contains("two acceptance criteria are named `ok`: at line 3 and at line 4"),
        "{e}"
    );
    let e = Task::from_markdown(
        "issue.md",
        "Do it.\n\n## Acceptance Criteria\n- [ ] works `test: a`\n- [ ] other\n- [ ] works `test: b`\n",
    )
    .unwrap_err();
    assert_eq!(e.line, Some(6), "{e}");
    assert!(e.message.contains("at line 4 and at line 6"), "{e}");
}
