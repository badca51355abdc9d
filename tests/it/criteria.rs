//! Layer 3: every criterion and constraint type, passing and failing; task
//! specs (YAML, located errors) and Markdown issues; `rascal run --spec`
//! and `--issue` end to end.

use crate::common;
use common::{code, stderr, stdout, TestRepo};
use rascal_core::config::spec::{Constraint, ConstraintKind, Criterion, CriterionKind, Task};
use rascal_core::model::changeset::{ChangeSet, FileChange, Operation};
use rascal_core::model::verdict::{Status, Verdict};
use rascal_engine::layers::{
    check_constraint, check_file_exists, check_grep, checklist_line, run_command_criterion, Files,
};
use rascal_exec::exec::place::Place;
use std::collections::BTreeMap;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Files in memory: after the change, and at base.
#[derive(Default)]
struct Mem {
    new: BTreeMap<String, String>,
    base: BTreeMap<String, String>,
}

impl Files for Mem {
    fn read(&self, path: &str) -> Option<Vec<u8>> {
        self.new.get(path).map(|s| s.clone().into_bytes())
    }
    fn read_base(&self, path: &str) -> Option<Vec<u8>> {
        self.base.get(path).map(|s| s.clone().into_bytes())
    }
}

fn crit(kind: CriterionKind, check: &str) -> Criterion {
    Criterion {
        description: format!("{} {check}", kind.name()),
        kind,
        check: check.into(),
        required: true,
        new_test: false,
    }
}

fn changes(files: &[(&str, Operation, &[&str])]) -> ChangeSet {
    ChangeSet {
        base: "0".repeat(40),
        tree: String::new(),
        files: files
            .iter()
            .map(|(p, op, lines)| FileChange::new(*p, *op).with_lines(lines))
            .collect(),
    }
}

fn mem(new: &[(&str, &str)], base: &[(&str, &str)]) -> Mem {
    Mem {
        new: new
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        base: base
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
    }
}

#[test]
fn grep_must_match_in_changed_files() {
    let cs = changes(&[("src/routes.rs", Operation::Modify, &["route(\"/health\")"])]);
    let files = mem(
        &[
            ("src/routes.rs", "use x;\nroute(\"/health\")\n"),
            ("src/other.rs", "route(\"/status\")\n"),
        ],
        &[],
    );
    let r = check_grep(
        &crit(CriterionKind::Grep, r#"route\("/health"\)"#),
        &cs,
        &files,
    );
    assert_eq!(r.status, Status::Pass, "{r:?}");
    assert!(
        r.output.contains("src/routes.rs:2"),
        "evidence: {}",
        r.output
    );
    // An unchanged file does not count.
    let r = check_grep(
        &crit(CriterionKind::Grep, r#"route\("/status"\)"#),
        &cs,
        &files,
    );
    assert_eq!(r.status, Status::Fail);
    assert!(r.issues[0].message.contains("matched nowhere"), "{r:?}");
}

#[test]
fn negated_grep_must_not_match() {
    let cs = changes(&[("src/a.rs", Operation::Modify, &["x"])]);
    let files = mem(&[("src/a.rs", "fn a() {\n    dbg!(1);\n}\n")], &[]);
    let r = check_grep(&crit(CriterionKind::Grep, r"!dbg!\("), &cs, &files);
    assert_eq!(r.status, Status::Fail);
    assert_eq!(r.issues[0].location().as_deref(), Some("src/a.rs:2"));
    let r = check_grep(&crit(CriterionKind::Grep, r"!println!"), &cs, &files);
    assert_eq!(r.status, Status::Pass, "{r:?}");
}

#[test]
fn file_exists_passes_fails_and_refuses_escapes() {
    let files = mem(&[("src/health.rs", "pub fn h() {}\n")], &[]);
    let r = check_file_exists(&crit(CriterionKind::FileExists, "src/health.rs"), &files);
    assert_eq!(r.status, Status::Pass);
    assert!(r.output.contains("src/health.rs exists"));
    let r = check_file_exists(&crit(CriterionKind::FileExists, "src/missing.rs"), &files);
    assert_eq!(r.status, Status::Fail);
    assert!(r.issues[0].message.contains("does not exist"));
    for hostile in ["../etc/passwd", "/etc/passwd"] {
        let r = check_file_exists(&crit(CriterionKind::FileExists, hostile), &files);
        assert_eq!(r.status, Status::Fail, "{hostile}");
        assert!(r.issues[0].message.contains("not a path inside"), "{r:?}");
    }
}

fn constraint(kind: ConstraintKind) -> Constraint {
    Constraint {
        description: kind.name().into(),
        kind,
    }
}

#[test]
fn no_touch_files_sees_both_sides_of_a_rename() {
    let c = constraint(ConstraintKind::NoTouchFiles(
        "migrations/**".to_string().try_into().unwrap(),
    ));
    let ok = changes(&[("src/a.rs", Operation::Modify, &["x"])]);
    assert_eq!(
        check_constraint(&c, &ok, &Mem::default()).status,
        Status::Pass
    );
    let mut renamed = FileChange::new("archive/001.sql", Operation::Rename);
    renamed.old_path = Some("migrations/001.sql".into());
    let cs = ChangeSet {
        base: String::new(),
        tree: String::new(),
        files: vec![renamed],
    };
    let r = check_constraint(&c, &cs, &Mem::default());
    assert_eq!(r.status, Status::Fail);
    assert!(r.issues[0].message.contains("migrations/001.sql"), "{r:?}");
    // Path constraints match like permissions: case and NFC ignored.
    for path in ["MIGRATIONS/002.sql", "Migrations/x"] {
        let upper = changes(&[(path, Operation::Create, &["x"])]);
        let r = check_constraint(&c, &upper, &Mem::default());
        assert_eq!(r.status, Status::Fail, "{path}: {r:?}");
    }
    let c = constraint(ConstraintKind::NoTouchFiles(
        "caf\u{e9}/**".to_string().try_into().unwrap(),
    ));
    let decomposed = changes(&[("CAFE\u{301}/m", Operation::Create, &["x"])]);
    let r = check_constraint(&c, &decomposed, &Mem::default());
    assert_eq!(r.status, Status::Fail, "{r:?}");
}

#[test]
fn no_new_deps_in_every_manifest_kind() {
    let c = constraint(ConstraintKind::NoNewDeps);
    let cases: &[(&str, &str, &str, Option<&str>)] = &[
        (
            "Cargo.toml",
            "[dependencies]\nserde = \"1\"\n",
            "[dependencies]\nserde = \"1\"\nleftpad = \"0.1\"\n",
            Some("leftpad"),
        ),
        (
            "Cargo.toml",
            "[dependencies]\nserde = \"1\"\n",
            "[dependencies]\nserde = \"1.0.200\"\n",
            None,
        ),
        (
            "go.mod",
            "module m\nrequire a.com/x v1.0.0\n",
            "module m\nrequire (\n\ta.com/x v1.0.0\n\tb.com/y v0.1.0\n)\n",
            Some("b.com/y"),
        ),
        (
            "web/package.json",
            "{\"dependencies\": {\"react\": \"18\"}}",
            "{\"dependencies\": {\"react\": \"18\"}, \"devDependencies\": {\"left-pad\": \"1\"}}",
            Some("left-pad"),
        ),
        (
            "pyproject.toml",
            "[project]\ndependencies = [\"requests\"]\n",
            "[project]\ndependencies = [\"requests\", \"numpy>=1\"]\n",
            Some("numpy"),
        ),
        (
            "requirements-dev.txt",
            "pytest\n",
            "pytest\n# comment\nhypothesis==6\n",
            Some("hypothesis"),
        ),
        (
            "Cargo.toml",
            "[dependencies]\nserde = \"1\"\n",
            "[dependencies]\nserde = { version = \"1\", features = [\"derive\"] }\nlocal = { path = \"../local\" }\n",
            Some("local"),
        ),
        (
            "Cargo.toml",
            "[dependencies]\nserde_json = \"1\"\n",
            "[dependencies]\njson = { package = \"serde_json\", version = \"1\" }\n",
            None,
        ),
        (
            "Cargo.toml",
            "[dependencies]\nserde = \"1\"\n",
            "[dependencies]\nserde.version = \"1\"\nserde.features = [\"derive\"]\n",
            None,
        ),
        ("README.md", "a\n", "a\nserde = \"1\"\n", None),
    ];
    for (path, old, new, added) in cases {
        let cs = changes(&[(path, Operation::Modify, &["x"])]);
        let files = mem(&[(path, new)], &[(path, old)]);
        let r = check_constraint(&c, &cs, &files);
        match added {
            Some(dep) => {
                assert_eq!(r.status, Status::Fail, "{path}: {r:?}");
                assert!(r.issues[0].message.contains(dep), "{path}: {r:?}");
                assert_eq!(r.issues[0].path.as_deref(), Some(*path));
            }
            None => assert_eq!(r.status, Status::Pass, "{path}: {r:?}"),
        }
    }
    // A new manifest: all its dependencies are new.
    let cs = changes(&[("tools/Cargo.toml", Operation::Create, &["x"])]);
    let files = mem(
        &[("tools/Cargo.toml", "[dependencies]\nrand = \"0.8\"\n")],
        &[],
    );
    assert_eq!(check_constraint(&c, &cs, &files).status, Status::Fail);
    // A manifest that no longer parses cannot be checked: that fails, located.
    let cs = changes(&[("Cargo.toml", Operation::Modify, &["x"])]);
    let files = mem(
        &[("Cargo.toml", "[dependencies]\nserde = \"1\"\nrand = \n")],
        &[("Cargo.toml", "[dependencies]\nserde = \"1\"\n")],
    );
    let r = check_constraint(&c, &cs, &files);
    assert_eq!(r.status, Status::Fail, "{r:?}");
    assert!(
        r.issues[0].message.contains("not valid TOML at line 3"),
        "{r:?}"
    );
}

#[test]
fn max_lines_counts_added_and_removed() {
    let c = constraint(ConstraintKind::MaxLines(3));
    let cs = changes(&[("a", Operation::Modify, &["1", "2", "3"])]);
    assert_eq!(
        check_constraint(&c, &cs, &Mem::default()).status,
        Status::Pass
    );
    let mut cs = changes(&[("a", Operation::Modify, &["1", "2", "3"])]);
    cs.files[0].removed = 1;
    let r = check_constraint(&c, &cs, &Mem::default());
    assert_eq!(r.status, Status::Fail);
    assert!(r.issues[0].message.contains("4 lines changed"), "{r:?}");
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_failing_command_criterion_names_the_first_error_and_its_place() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "fn a() {}\n").unwrap();
    // The error as rustc prints it, with the absolute path of the tree.
    let script = format!(
        "printf 'error[E0308]: mismatched types\\n  --> {}/src/lib.rs:2:5\\n\\nerror: could not compile\\n'; exit 101",
        dir.path().display()
    );
    let c = crit(CriterionKind::Command, &script);
    let r = rt().block_on(run_command_criterion(
        &c,
        None,
        &Place::InPlace {
            origin: dir.path().to_path_buf(),
        },
        (Duration::from_secs(10), None),
        &CancellationToken::new(),
    ));
    assert_eq!(r.status, Status::Fail);
    let first = &r.issues[0];
    assert!(
        first
            .message
            .ends_with("exited with code 101 — src/lib.rs:2:5: error[E0308]: mismatched types"),
        "{r:?}"
    );
    assert_eq!(first.path.as_deref(), Some("src/lib.rs"));
    assert_eq!(first.line, Some(2));
    assert_eq!(r.issues.len(), 1, "cargo's summary is not an error: {r:?}");
    assert!(
        checklist_line(&r).contains("src/lib.rs:2:5: error[E0308]"),
        "{}",
        checklist_line(&r)
    );
}

#[test]
fn command_criterion_needs_exit_0() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let rt = rt();
    let c = crit(CriterionKind::Command, "test 1 -eq 1");
    let r = rt.block_on(run_command_criterion(
        &c,
        None,
        &Place::InPlace {
            origin: dir.path().to_path_buf(),
        },
        (Duration::from_secs(10), None),
        &cancel,
    ));
    assert_eq!(r.status, Status::Pass);
    assert!(r.output.contains("exit 0"), "{}", r.output);
    let c = crit(CriterionKind::Command, "echo nope; exit 3");
    let r = rt.block_on(run_command_criterion(
        &c,
        None,
        &Place::InPlace {
            origin: dir.path().to_path_buf(),
        },
        (Duration::from_secs(10), None),
        &cancel,
    ));
    assert_eq!(r.status, Status::Fail);
    assert_eq!(r.exit_code, Some(3));
    assert!(r.issues[0].message.contains("exited with code 3"), "{r:?}");
    let c = crit(CriterionKind::Command, "sleep 5");
    let r = rt.block_on(run_command_criterion(
        &c,
        None,
        &Place::InPlace {
            origin: dir.path().to_path_buf(),
        },
        (Duration::from_millis(300), None),
        &cancel,
    ));
    assert_eq!(r.status, Status::Fail);
    assert!(r.errored.as_deref().unwrap().contains("timed out"), "{r:?}");
}

/// A fake test runner that prints libtest-style output for the filter.
const FAKE_RUNNER: &str = "#!/bin/sh\nif [ \"$1\" = health_ok ]; then echo 'running 1 test'; echo 'test health_ok ... ok'; exit 0; fi\nif [ \"$1\" = broken ]; then echo 'running 1 test'; echo 'test broken ... FAILED'; exit 101; fi\necho 'running 0 tests'; exit 0\n";

#[test]
fn test_criterion_runs_the_named_test_and_zero_tests_is_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let runner = dir.path().join("fake-test");
    std::fs::write(&runner, FAKE_RUNNER).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&runner, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cancel = CancellationToken::new();
    let rt = rt();
    let t = Some("./fake-test {check}");
    let run = |check: &str| {
        rt.block_on(run_command_criterion(
            &crit(CriterionKind::Test, check),
            t,
            &Place::InPlace {
                origin: dir.path().to_path_buf(),
            },
            (Duration::from_secs(10), None),
            &cancel,
        ))
    };
    let r = run("health_ok");
    assert_eq!(r.status, Status::Pass, "{r:?}");
    assert!(r.output.contains("1 test ran"), "{}", r.output);
    assert!(
        r.output.contains("./fake-test health_ok"),
        "quoted: {}",
        r.output
    );
    let r = run("it's health_ok");
    assert!(
        r.output.contains(r#"./fake-test "it's health_ok""#),
        "one quoted word: {}",
        r.output
    );
    let r = run("health\0ok");
    assert_eq!(r.status, Status::Fail, "{r:?}");
    assert!(
        r.errored.as_deref().unwrap_or("").contains("NUL byte"),
        "a clear error, not a panic: {r:?}"
    );
    let r = run("broken");
    assert_eq!(r.status, Status::Fail);
    assert!(r.issues[0].message.contains("exited with code 101"));
    let r = run("no_such_test");
    assert_eq!(r.status, Status::Fail, "0 tests ran is not a pass: {r:?}");
    assert!(r.issues[0].message.contains("0 tests ran"), "{r:?}");
    assert!(checklist_line(&r).starts_with("- [ ] "));
    assert!(checklist_line(&r).contains("← FAILED: "));
    // A hostile test name cannot inject shell.
    let r = run("x'; touch pwned; echo '");
    assert_eq!(r.status, Status::Fail);
    assert!(!dir.path().join("pwned").exists());
}

#[test]
fn test_criterion_with_real_cargo_filter_that_matches_nothing_fails() {
    let t = TestRepo::new(&[
        (
            "Cargo.toml",
            "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        ),
        (
            "src/lib.rs",
            "#[cfg(test)]\nmod tests {\n    #[test]\n    fn health_ok() {}\n}\n",
        ),
    ]);
    let cancel = CancellationToken::new();
    let rt = rt();
    let template = Some("CARGO_TARGET_DIR=target cargo test --offline --quiet {check}");
    let run = |check: &str| {
        rt.block_on(run_command_criterion(
            &crit(CriterionKind::Test, check),
            template,
            &Place::InPlace {
                origin: t.path().to_path_buf(),
            },
            (Duration::from_secs(300), None),
            &cancel,
        ))
    };
    let r = run("health_ok");
    assert_eq!(r.status, Status::Pass, "{r:?}");
    let r = run("no_such_test");
    assert_eq!(r.status, Status::Fail, "{r:?}");
    // Either the listing says the filter selects nothing, or the run says
    // nothing ran: never a pass.
    let why = format!("{:?} {:?}", r.errored, r.issues);
    assert!(
        why.contains("0 tests") || why.contains("no test") || why.contains("listing"),
        "{r:?}"
    );
}

#[test]
fn checklist_lines_carry_evidence() {
    let cs = changes(&[("a.rs", Operation::Modify, &["x"])]);
    let files = mem(&[("a.rs", "fn ok() {}\n")], &[]);
    let r = check_grep(&crit(CriterionKind::Grep, "fn ok"), &cs, &files);
    let line = checklist_line(&r);
    assert!(
        line.starts_with("- [x] grep fn ok — `fn ok` matched at a.rs:1"),
        "{line}"
    );
}

// ---- specs and issues ----

const SPEC: &str = r#"instruction: Add a /health endpoint that returns 200.
acceptance_criteria:
  - { description: "/health returns 200", type: test, check: "health_returns_ok" }
  - { description: "handler file exists", type: file-exists, check: "src/health.rs" }
  - { description: "route registered", type: grep, check: 'route\("/health"' }
  - { description: "no debug prints", type: grep, check: '!dbg!\(' , required: false }
  - { description: "matches the API style", type: llm-judge, check: "handlers look like the others" }
constraints:
  - { description: "no schema change", type: no-touch-files, value: "migrations/**" }
  - { description: "no new deps", type: no-new-deps }
  - { description: "small", type: max-lines, value: 200 }
"#;

#[test]
fn spec_yaml_parses_with_defaults() {
    let t = Task::from_yaml(".rascal/specs/health.yaml", SPEC).unwrap();
    assert_eq!(t.acceptance_criteria.len(), 5);
    assert!(
        t.acceptance_criteria[0].required,
        "required defaults to true"
    );
    assert!(!t.acceptance_criteria[3].required);
    assert_eq!(t.acceptance_criteria[4].kind, CriterionKind::LlmJudge);
    assert_eq!(t.constraints[2].kind, ConstraintKind::MaxLines(200));
    assert_eq!(t.constraints[1].kind, ConstraintKind::NoNewDeps);
}

#[test]
fn spec_errors_are_located() {
    let f = ".rascal/specs/x.yaml";
    let e = Task::from_yaml(
        f,
        "instruction: x\nacceptance_criteria:\n  - { description: d, type: unit-test, check: c }\n",
    )
    .unwrap_err();
    assert_eq!(e.line, Some(3), "{e}");
    assert!(e.to_string().contains("unknown variant `unit-test`"), "{e}");
    assert!(
        e.to_string().contains("file-exists"),
        "lists the allowed types: {e}"
    );
    let e = Task::from_yaml(f, "instruction: x\nacceptance_criteria:\n  - description: d\n    type: grep\n    check: 'bad('\n").unwrap_err();
    assert!(e.line.is_some(), "{e}");
    assert!(e.to_string().contains("invalid regex `bad(`"), "{e}");
    let e = Task::from_yaml(
        f,
        "instruction: x\nconstraints:\n  - { type: max-lines, value: lots }\n",
    )
    .unwrap_err();
    assert_eq!(e.line, Some(3), "{e}");
    assert!(e.to_string().contains("whole number"), "{e}");
    let e = Task::from_yaml(f, "instruction: x\ncriteria: []\n").unwrap_err();
    assert_eq!((e.line, e.column), (Some(2), Some(1)), "{e}");
    assert!(e.to_string().contains("acceptance_criteria"), "{e}");
    let e = Task::from_yaml(f, "acceptance_criteria: []\n").unwrap_err();
    assert!(e.to_string().contains("instruction"), "{e}");
    let e = Task::from_yaml(
        f,
        "instruction: x\nconstraints:\n  - { type: no-touch-files, value: 'src/[' }\n",
    )
    .unwrap_err();
    assert!(e.to_string().contains("src/["), "{e}");
}

const ISSUE: &str = "# Add a health endpoint\n\nWe need `/health` for the load balancer.\n\n## Acceptance Criteria\n\n- [ ] /health returns 200 `test: health_returns_ok`\n- [x] handler file exists `file-exists: src/health.rs`\n- [ ] it is documented in the README\n\n## Constraints\n\n- Do not touch the schema `no-touch-files: migrations/**`\n- No new dependencies\n- Keep it small `max-lines: 150`\n- Be nice to the on-call engineer\n\n## Notes\n\n- not a criterion\n";

#[test]
fn markdown_issue_checklist_and_constraints_are_parsed() {
    let t = Task::from_markdown("issue.md", ISSUE).unwrap();
    assert!(t.instruction.contains("load balancer"));
    let kinds: Vec<(CriterionKind, &str)> = t
        .acceptance_criteria
        .iter()
        .map(|c| (c.kind, c.check.as_str()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (CriterionKind::Test, "health_returns_ok"),
            (CriterionKind::FileExists, "src/health.rs"),
            (CriterionKind::LlmJudge, "it is documented in the README"),
            (CriterionKind::LlmJudge, "Be nice to the on-call engineer"),
        ]
    );
    assert_eq!(t.acceptance_criteria[0].description, "/health returns 200");
    let cons: Vec<&str> = t.constraints.iter().map(|c| c.kind.name()).collect();
    assert_eq!(cons, vec!["no-touch-files", "no-new-deps", "max-lines"]);
    let e = Task::from_markdown(
        "issue.md",
        "x\n## Acceptance Criteria\n- [ ] bad `grep: (`\n",
    )
    .unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("issue.md", Some(3)), "{e}");
    assert!(e.to_string().contains("invalid regex"), "{e}");
}

// ---- end to end ----

const AUTHOR_OK: &str = "agents:\n  author:\n    runtime: scripted\n    steps:\n      - { do: write, path: src/health.rs, content: \"pub fn health() -> u16 { 200 }\\n\" }\n      - { do: write, path: src/routes.rs, content: \"route(\\\"/health\\\");\\n\" }\n  judge: { runtime: scripted, scenario: judge-fail }\n";

const E2E_SPEC: &str = "instruction: Add a /health endpoint.\nacceptance_criteria:\n  - { description: handler exists, type: file-exists, check: src/health.rs }\n  - { description: route registered, type: grep, check: 'route\\(\"/health\"' }\n  - { description: builds, type: command, check: 'test -s src/health.rs' }\n  - { description: style, type: llm-judge, check: handlers are tidy }\nconstraints:\n  - { description: no schema change, type: no-touch-files, value: 'migrations/**' }\n  - { description: small, type: max-lines, value: 50 }\n";

#[test]
fn run_spec_prints_the_checklist_and_an_advisory_judge_only_warns() {
    let t = TestRepo::new(&[
        (".rascal/config.yaml", AUTHOR_OK),
        (".rascal/verification.yaml", "criteria:\n  judge: judge\n"),
        (".rascal/specs/health.yaml", E2E_SPEC),
        ("src/a.rs", "fn a() {}\n"),
    ]);
    let o = t.rascal(&["run", "--spec", "health", "--agent", "author", "--headless"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(
        out.contains("task from spec health: 4 acceptance criteria, 2 constraints"),
        "{out}"
    );
    assert!(
        out.contains("✓ criteria - [x] handler exists — src/health.rs exists"),
        "{out}"
    );
    assert!(
        out.contains("- [x] route registered — `route\\(\"/health\"` matched at src/routes.rs:1"),
        "{out}"
    );
    assert!(
        out.contains("- [x] builds — `test -s src/health.rs` exit 0"),
        "{out}"
    );
    assert!(
        out.contains(
            "! criteria - [ ] style (advisory) ← WARNING: judge `judge`: the criterion is not met"
        ),
        "{out}"
    );
    assert!(out.contains("[author] verdict WARN"), "{out}");
    let id = out
        .lines()
        .find_map(|l| l.strip_prefix("replay: rascal show "))
        .unwrap();
    let doc: serde_json::Value =
        serde_json::from_str(&stdout(&t.rascal(&["show", id, "--json"]))).unwrap();
    let checklist = doc["candidates"][0]["checklist"].as_str().unwrap();
    assert!(checklist.contains("- [x] small — "), "{checklist}");
    assert_eq!(doc["task_source"], "spec health");
    assert_eq!(doc["task"]["acceptance_criteria"][0]["type"], "file-exists");
}

#[test]
fn a_judge_over_its_budget_never_judges_a_part_of_the_change() {
    let t = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            AUTHOR_OK.replace("judge-fail", "judge-pass").as_str(),
        ),
        (
            ".rascal/verification.yaml",
            "criteria:\n  judge: judge\n  budget: { tokens: 10 }\n",
        ),
        (".rascal/specs/health.yaml", E2E_SPEC),
        ("src/a.rs", "fn a() {}\n"),
    ]);
    let o = t.rascal(&["run", "--spec", "health", "--agent", "author", "--headless"]);
    let out = stdout(&o);
    assert!(
        out.contains("- [ ] style (advisory) ← WARNING: judge incomplete: the diff is about"),
        "a passing judge shown nothing is not a pass: {out}"
    );
    assert!(out.contains("over `criteria.budget.tokens` (10)"), "{out}");
    assert!(out.contains("[author] verdict WARN"), "{out}");
}

#[test]
fn failing_criteria_fail_the_candidate_and_skip_review() {
    let agents = "agents:\n  author: { runtime: scripted, steps: [{ do: write, path: migrations/002.sql, content: \"drop table x;\\n\" }] }\n  reviewer: { runtime: scripted, scenario: review-approve }\n";
    let t = TestRepo::new(&[
        (".rascal/config.yaml", agents),
        (
            ".rascal/verification.yaml",
            "review:\n  reviewers: [reviewer]\n  on_request_changes: fail\n",
        ),
        (".rascal/specs/health.yaml", E2E_SPEC),
        ("src/a.rs", "fn a() {}\n"),
    ]);
    let o = t.rascal(&["run", "--spec", "health", "--agent", "author", "--headless"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}{}", stderr(&o));
    assert!(
        out.contains(
            "- [ ] handler exists ← FAILED: src/health.rs does not exist after the change"
        ),
        "{out}"
    );
    assert!(
        out.contains("- [ ] no schema change ← FAILED: migrations/002.sql matches `migrations/**`"),
        "{out}"
    );
    assert!(
        out.contains("review/reviewer skipped — skipped: acceptance criteria failed"),
        "{out}"
    );
    // no judge configured: advisory, a warning that says what to do
    assert!(out.contains("no judge configured"), "{out}");
}

#[test]
fn criteria_failures_are_fed_back_and_rechecked_before_review() {
    let agents = "agents:\n  author:\n    runtime: scripted\n    steps:\n      - { do: write, path: src/routes.rs, content: \"route(\\\"/health\\\");\\n\" }\n      - do: when\n        attempt: 2\n        then: [{ do: write, path: src/health.rs, content: \"pub fn health() {}\\n\" }]\n  reviewer: { runtime: scripted, scenario: review-approve }\n";
    let spec = "instruction: Add /health.\nacceptance_criteria:\n  - { description: handler exists, type: file-exists, check: src/health.rs }\n";
    let t = TestRepo::new(&[
        (".rascal/config.yaml", agents),
        (
            ".rascal/verification.yaml",
            "review:\n  reviewers: [reviewer]\n",
        ),
        (".rascal/specs/h.yaml", spec),
        ("src/a.rs", "fn a() {}\n"),
    ]);
    let o = t.rascal(&["run", "--spec", "h", "--agent", "author", "--headless"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    let fail1 = out.find("- [ ] handler exists ← FAILED").unwrap();
    let retry = out.find("↻ attempt 2").unwrap();
    let pass2 = out.find("- [x] handler exists").unwrap();
    let review2 = out.find("review/reviewer pass").unwrap();
    assert!(
        fail1 < retry && retry < pass2 && pass2 < review2,
        "L3 then L5: {out}"
    );
    assert!(
        out.contains("» - [ ] handler exists ← FAILED: src/health.rs does not exist"),
        "{out}"
    );
}

#[test]
fn run_issue_markdown_end_to_end() {
    let t = TestRepo::new(&[
        (".rascal/config.yaml", AUTHOR_OK),
        ("src/a.rs", "fn a() {}\n"),
    ]);
    let issue = t.path().join("issue.md");
    std::fs::write(
        &issue,
        "Add health.\n\n## Acceptance Criteria\n- [ ] handler `file-exists: src/health.rs`\n- [ ] routed `grep: /health`\n\n## Constraints\n- tiny `max-lines: 1`\n",
    )
    .unwrap();
    let o = t.rascal(&[
        "run",
        "--issue",
        issue.to_str().unwrap(),
        "--agent",
        "author",
        "--headless",
    ]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}{}", stderr(&o));
    assert!(
        out.contains("- [x] handler — src/health.rs exists"),
        "{out}"
    );
    assert!(
        out.contains("- [ ] tiny ← FAILED: 2 lines changed, over the maximum of 1"),
        "{out}"
    );
    // Like `git -C`, a relative --issue path is relative to DIR.
    let elsewhere = tempfile::tempdir().unwrap();
    let o = common::rascal_in(
        elsewhere.path(),
        &[
            "-C",
            t.path().to_str().unwrap(),
            "run",
            "--issue",
            "issue.md",
            "--agent",
            "author",
            "--headless",
        ],
    );
    assert_eq!(code(&o), 1, "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("task from issue"), "{}", stdout(&o));
    let o = t.rascal(&["run", "--issue", "missing.md", "--agent", "author"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("missing.md: could not read the issue file"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn spec_usage_errors_exit_2() {
    let t = TestRepo::new(&[
        (".rascal/config.yaml", AUTHOR_OK),
        (".rascal/specs/ok.yaml", "instruction: x\n"),
        (".rascal/specs/bad.yaml", "instruction: x\nacceptance_criteria:\n  - { description: d, type: grep, check: '(' }\n"),
    ]);
    let o = t.rascal(&["run", "--spec", "nope", "--agent", "author"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("no such spec"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("bad, ok"),
        "lists specs: {}",
        stderr(&o)
    );
    let o = t.rascal(&["run", "--spec", "bad", "--agent", "author"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains(".rascal/specs/bad.yaml (at base commit"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains(":3:"), "located: {}", stderr(&o));
    let o = t.rascal(&["run", "--spec", "../config", "--agent", "author"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("not a plain file name"),
        "{}",
        stderr(&o)
    );
    let o = t.rascal(&["run", "text", "--spec", "ok", "--agent", "author"]);
    assert_eq!(code(&o), 2, "instruction and --spec conflict");
    let o = t.rascal(&["run", "--agent", "author"]);
    assert_eq!(code(&o), 2, "no task at all");
    // A spec only in the working tree (not committed) is not used.
    t.write(".rascal/specs/new.yaml", "instruction: x\n");
    let o = t.rascal(&["run", "--spec", "new", "--agent", "author"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("commit the file first"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn verdict_of_a_spec_without_criteria_is_unchanged() {
    let t = TestRepo::new(&[
        (".rascal/config.yaml", AUTHOR_OK),
        (".rascal/specs/plain.yaml", "instruction: just do it\n"),
    ]);
    let o = t.rascal(&["run", "--spec", "plain", "--agent", "author", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["verdict"], serde_json::to_value(Verdict::Pass).unwrap());
    assert_eq!(doc["instruction"], "just do it");
}

#[test]
fn a_passing_judge_checks_its_box_with_its_reason() {
    let agents = AUTHOR_OK.replace("judge-fail", "judge-pass");
    let t = TestRepo::new(&[
        (".rascal/config.yaml", agents.as_str()),
        (".rascal/verification.yaml", "criteria:\n  judge: judge\n"),
        (".rascal/specs/health.yaml", E2E_SPEC),
        ("src/a.rs", "fn a() {}\n"),
    ]);
    let o = t.rascal(&["run", "--spec", "health", "--agent", "author", "--headless"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(
        out.contains(
            "- [x] style (advisory) — judge `judge`: the change does what the criterion asks"
        ),
        "{out}"
    );
    assert!(out.contains("[author] verdict PASS"), "{out}");
}

// ---- no-new-deps against hostile manifests, end to end ----

const APP_TOML: &str =
    "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\nhelper = { path = \"helper\" }\n";
const APP_LOCK: &str = "version = 4\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\"helper\"]\n\n[[package]]\nname = \"helper\"\nversion = \"0.1.0\"\n";

/// A Rust workspace whose author agent makes `steps` (scripted writes),
/// run with a spec that has only `no-new-deps`. Returns the run's output.
fn run_deps_attack(steps: serde_json::Value) -> (i32, String) {
    let config = serde_json::json!({
        "agents": { "author": { "runtime": "scripted", "steps": steps } }
    });
    let t = TestRepo::new(&[
        (".rascal/config.yaml", &config.to_string()),
        (
            ".rascal/specs/deps.yaml",
            "instruction: Tidy up.\nconstraints:\n  - { description: no new deps, type: no-new-deps }\n",
        ),
        ("Cargo.toml", APP_TOML),
        ("Cargo.lock", APP_LOCK),
        ("src/lib.rs", "pub fn app() {}\n"),
        (
            "helper/Cargo.toml",
            "[package]\nname = \"helper\"\nversion = \"0.1.0\"\n",
        ),
        ("helper/src/lib.rs", "pub fn help() {}\n"),
    ]);
    let o = t.rascal(&["run", "--spec", "deps", "--agent", "author", "--headless"]);
    (code(&o), format!("{}{}", stdout(&o), stderr(&o)))
}

fn write(path: &str, content: &str) -> serde_json::Value {
    serde_json::json!({ "do": "write", "path": path, "content": content })
}

/// The files of a local crate named `name` in directory `dir`.
fn evil_crate(dir: &str, name: &str) -> Vec<serde_json::Value> {
    vec![
        write(
            &format!("{dir}/Cargo.toml"),
            &format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\n"),
        ),
        write(
            &format!("{dir}/src/lib.rs"),
            "pub fn help() { std::process::exit(0) }\n",
        ),
    ]
}

#[test]
fn no_new_deps_sees_through_hidden_and_swapped_dependencies() {
    let evil_lock = format!("{APP_LOCK}\n[[package]]\nname = \"evil\"\nversion = \"0.1.0\"\n");
    let attacks: Vec<(&str, Vec<serde_json::Value>, &str)> = vec![
        (
            "a top-level inline dependency table",
            [
                vec![
                    write(
                        "Cargo.toml",
                        "dependencies = { helper = { path = \"helper\" }, evil = { path = \"evil\" } }\n\n[package]\nname = \"app\"\nversion = \"0.1.0\"\n",
                    ),
                    write("Cargo.lock", &evil_lock),
                ],
                evil_crate("evil", "evil"),
            ]
            .concat(),
            "new dependency `evil`",
        ),
        (
            "a rename under an old key",
            [
                vec![
                    write(
                        "Cargo.toml",
                        &APP_TOML.replace(
                            "{ path = \"helper\" }",
                            "{ path = \"evil\", package = \"evil\" }",
                        ),
                    ),
                    write("Cargo.lock", &evil_lock),
                ],
                evil_crate("evil", "evil"),
            ]
            .concat(),
            "new dependency `evil`",
        ),
        (
            "the same name from another directory",
            [
                vec![write(
                    "Cargo.toml",
                    &APP_TOML.replace("path = \"helper\"", "path = \"evil\""),
                )],
                evil_crate("evil", "helper"),
            ]
            .concat(),
            "dependency `helper` in Cargo.toml [dependencies] now comes from path `evil` (was path `helper`)",
        ),
        (
            "the same name from a git repository",
            vec![write(
                "Cargo.toml",
                &APP_TOML.replace(
                    "path = \"helper\"",
                    "git = \"https://evil.example/helper\"",
                ),
            )],
            "now comes from git `https://evil.example/helper`",
        ),
        (
            "a patch in .cargo/config.toml",
            [
                vec![write(
                    ".cargo/config.toml",
                    "[patch.crates-io]\nhelper = { path = \"evil\" }\n",
                )],
                evil_crate("evil", "helper"),
            ]
            .concat(),
            "new dependency `helper` from path `evil` in .cargo/config.toml [patch.crates-io]",
        ),
        (
            "only the lockfile",
            vec![write("Cargo.lock", &evil_lock)],
            "new dependency `evil` from a local package in Cargo.lock",
        ),
        (
            "the manifest replaced by a symlink",
            vec![
                write(
                    "deps.toml",
                    &format!("{APP_TOML}evil = {{ path = \"evil\" }}\n"),
                ),
                serde_json::json!({ "do": "delete", "path": "Cargo.toml" }),
                serde_json::json!({ "do": "symlink", "path": "Cargo.toml", "target": "deps.toml" }),
            ],
            "could not check Cargo.toml: it is a symlink after the change",
        ),
        (
            "a manifest that no longer parses",
            vec![write(
                "Cargo.toml",
                &format!("{APP_TOML}evil = {{ path = \"evil\"\n"),
            )],
            "could not parse Cargo.toml: not valid TOML at line 7",
        ),
    ];
    for (what, steps, want) in attacks {
        let (code, out) = run_deps_attack(serde_json::Value::Array(steps));
        assert_eq!(code, 1, "{what}: {out}");
        assert!(
            out.contains("- [ ] no new deps ← FAILED: "),
            "{what}: {out}"
        );
        assert!(out.contains(want), "{what}: wanted {want:?} in {out}");
    }
    // The same workspace with a harmless edit passes.
    let (code, out) = run_deps_attack(serde_json::json!([write(
        "Cargo.toml",
        &APP_TOML.replace(
            "{ path = \"helper\" }",
            "{ path = \"./helper/\", version = \"0.1\" }"
        )
    )]));
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("- [x] no new deps — no dependency added (1 manifest(s) changed)"),
        "{out}"
    );
}

/// A plain unittest project (no pytest anywhere): a `test` criterion runs
/// with the standard library's runner, as `rascal init` would set up, and
/// passes on a candidate whose named test passes (issue 53).
#[test]
fn a_plain_unittest_project_runs_its_test_criteria_with_unittest() {
    if !common::bwrap() || !crate::test_integrity::toolchain("python3", &["-c", "import unittest"])
    {
        return;
    }
    let fix = "sed -i 's/a - b/a + b/' calc.py && cat >> test_calc.py <<'EOF2'\n\n\nclass TestMore(unittest.TestCase):\n    def test_adds_three(self):\n        self.assertEqual(add(1, 2), 3)\nEOF2\n";
    let t = crate::evidence::repo_of(
        &[
            ("calc.py", "def add(a, b):\n    return a - b\n"),
            (
                "test_calc.py",
                "import unittest\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(add(2, 2), 4)\n",
            ),
            (
                ".rascal/specs/task.yaml",
                "instruction: make add() correct\nacceptance_criteria:\n  - { description: adds three, type: test, check: test_adds_three }\n",
            ),
        ],
        &[("fix", fix)],
        "guardrails:\n  - { name: tests, command: \"python3 -m unittest\" }\n",
    );
    let doc = crate::test_integrity::rascal_json(&t, &["run", "--spec", "task"], &["fix"]);
    let c = crate::test_integrity::candidate(&doc, "fix");
    let criteria = c["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["layer"] == "criteria")
        .unwrap_or_else(|| panic!("no criteria report: {c}"));
    assert_eq!(criteria["status"], "pass", "{criteria}");
    assert!(
        criteria["output"]
            .as_str()
            .is_some_and(|o| o.contains("python3 -m unittest -k test_adds_three")),
        "{criteria}"
    );
}

/// A task whose `test` criterion has no test command to run with is
/// refused before any agent starts (exit 2, nothing recorded), saying what
/// to set — not a FAIL for every candidate afterwards (issue 53).
#[test]
fn a_test_criterion_with_no_test_command_refuses_the_run_up_front() {
    let t = TestRepo::new(&[
        ("notes.md", "hello\n"),
        (
            ".rascal/config.yaml",
            "agents:\n  a: { runtime: command, command: [\"sh\", \"-c\", \"echo x > x.txt\"] }\n",
        ),
        (
            ".rascal/specs/task.yaml",
            "instruction: write x\nacceptance_criteria:\n  - { description: x is tested, type: test, check: test_x }\n",
        ),
    ]);
    let o = t.rascal(&["run", "--spec", "task", "--agent", "a", "--headless"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}{}", stdout(&o));
    assert!(
        err.contains("the task's criteria need a test command to run (`x is tested`)")
            && err.contains("test_command"),
        "{err}"
    );
    assert!(
        !stdout(&t.rascal(&["list"])).contains("r-"),
        "a run was recorded"
    );
}

/// `calc.py` with a wrong `add`, `test` (a test file: path and text), the
/// task's spec and pytest as its test command; one agent, `fix`, makes
/// `add` right. Run it: the `fix` candidate of `rascal run --spec task`.
/// None where bubblewrap or pytest is missing.
fn pytest_task(test: (&str, &str), spec: &str) -> Option<serde_json::Value> {
    let py = crate::evidence::python_with_pytest();
    if !common::bwrap() || !crate::test_integrity::toolchain(py, &["-c", "import pytest"]) {
        return None;
    }
    let t = crate::evidence::repo_of(
        &[
            ("calc.py", "def add(a, b):\n    return a - b\n"),
            test,
            (".rascal/specs/task.yaml", spec),
            (
                ".rascal/verification.yaml",
                &format!("criteria:\n  test_command: \"{py} -m pytest -k {{check}}\"\n"),
            ),
        ],
        &[("fix", "sed -i 's/a - b/a + b/' calc.py")],
        "guardrails: []\n",
    );
    let doc = crate::test_integrity::rascal_json(&t, &["run", "--spec", "task"], &["fix"]);
    Some(crate::test_integrity::candidate(&doc, "fix").clone())
}

/// A pytest filter that matches nothing is said as such (pytest exits 5
/// when it collects nothing), not as a listing that failed (issue 53).
#[test]
fn a_pytest_filter_matching_nothing_says_so() {
    let Some(c) = pytest_task(
        ("test_calc.py", "from calc import add\n\n\ndef test_adds():\n    assert add(2, 2) == 4\n"),
        "instruction: make add() correct\nacceptance_criteria:\n  - { description: converts, type: test, check: test_f_to_c }\n",
    ) else {
        return;
    };
    let r = crate::test_integrity::report(&c, "converts");
    let why = r["errored"].as_str().unwrap_or_default();
    assert!(
        why.contains("the filter `test_f_to_c` matched no test"),
        "{r}"
    );
    assert!(!why.contains("exited with code 5"), "{r}");
}

/// A held-out filter that matches no held-out test is told to the operator
/// (issue 53): the report's error names the filter, while the agents' side
/// stays one fixed sentence. Before, the report was the bare FAIL of
/// failing code, with no error. The right filter passes (control).
#[test]
fn a_held_out_filter_matching_nothing_is_told_to_the_operator() {
    let Some(c) = pytest_task(
        ("tests/test_held.py", "from calc import add\n\n\ndef test_held_adds():\n    assert add(2, 3) == 5\n"),
        "instruction: make add() correct\nholdout: [tests/test_held.py]\nacceptance_criteria:\n  - { description: held right, type: holdout, check: test_held }\n  - { description: held typo, type: holdout, check: test_hld }\n",
    ) else {
        return;
    };
    let right = crate::test_integrity::report(&c, "held right");
    assert_eq!(right["status"], "pass", "{right}");
    let typo = crate::test_integrity::report(&c, "held typo");
    assert_eq!(typo["status"], "fail", "{typo}");
    let why = typo["errored"].as_str().unwrap_or_default();
    assert!(
        why.contains("the held-out filter `test_hld` matched no held-out test"),
        "{typo}"
    );
    // What an agent would be told is the fixed sentence alone.
    let issues = typo["issues"].to_string();
    assert!(
        !issues.contains("test_hld") && !issues.contains("matched"),
        "{issues}"
    );
}
