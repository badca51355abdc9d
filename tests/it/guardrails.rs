//! Layer 2 guardrails on real worktrees: every kind passing and failing,
//! timeouts and missing commands as errored FAILs, fail fast.

use crate::common;
use common::TestRepo;
use rascal_core::config::Config;
use rascal_core::model::verdict::{gate, Layer, Report, Status, Verdict};
use rascal_engine::pipeline::{verify, Origin, Verification};
use rascal_exec::git::workspace;
use tokio_util::sync::CancellationToken;

fn run_check(t: &TestRepo, guardrails: &str) -> Vec<Report> {
    let cfg = Config::from_texts(None, Some(guardrails), None).expect("config");
    verify_with(t, &cfg)
}

fn verify_with(t: &TestRepo, cfg: &Config) -> Vec<Report> {
    let changes = workspace::changeset(t.path(), t.path(), t.head()).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let place = rascal_exec::exec::place::Place::InPlace {
            origin: t.path().to_path_buf(),
        };
        let v = Verification {
            config: cfg,
            place: &place,
            changes: &changes,
            origin: Origin::Human,
            allow_test_changes: &[],
            cancel: CancellationToken::new(),
        };
        verify(&v, &|_| {}).await
    })
}

fn by_name<'a>(reports: &'a [Report], name: &str) -> &'a Report {
    reports
        .iter()
        .find(|r| r.check == name)
        .unwrap_or_else(|| panic!("no report {name}: {reports:#?}"))
}

fn repo() -> TestRepo {
    TestRepo::new(&[("src/a.rs", "fn a() {}\n")])
}

#[test]
fn command_passing_and_failing_with_exit_code_and_output_tail() {
    let t = repo();
    t.write("src/b.rs", "fn b() {}\n");
    let r = run_check(
        &t,
        "guardrails:\n  - { name: ok, command: \"test -f src/b.rs\" }\n  - { name: bad, command: \"echo compiling; echo 'error: nope' >&2; exit 3\" }\n",
    );
    let ok = by_name(&r, "ok");
    assert_eq!(ok.status, Status::Pass);
    assert_eq!(ok.exit_code, Some(0));
    let bad = by_name(&r, "bad");
    assert_eq!(bad.status, Status::Fail);
    assert_eq!(bad.exit_code, Some(3));
    assert!(bad.errored.is_none());
    assert!(bad.output.contains("error: nope"), "{}", bad.output);
    // The error it printed is the failure's message…
    assert_eq!(bad.issues[0].message, "error: nope");
    assert_eq!(gate(&r), Verdict::Fail);
    // …and without one, its exit code.
    let r = run_check(
        &t,
        "guardrails:\n  - { name: mute, command: \"echo compiling; exit 4\" }\n",
    );
    let mute = by_name(&r, "mute");
    assert_eq!(mute.status, Status::Fail);
    assert!(mute.issues[0].message.contains("exited with code 4"));
}

#[test]
fn timed_out_command_is_an_errored_fail() {
    let t = repo();
    let r = run_check(
        &t,
        "guardrails:\n  - { name: slow, command: \"sleep 30\", timeout: 300ms }\n",
    );
    let slow = by_name(&r, "slow");
    assert_eq!(slow.status, Status::Fail);
    assert!(
        slow.errored.as_deref().unwrap().contains("timed out"),
        "{slow:?}"
    );
    assert!(slow.duration_ms < 10_000);
    assert_eq!(gate(&r), Verdict::Fail);
}

#[test]
fn missing_command_is_an_errored_fail_not_a_pass() {
    let t = repo();
    let r = run_check(
        &t,
        "guardrails:\n  - { name: lint, command: \"no-such-linter-xyz --all\" }\n",
    );
    let lint = by_name(&r, "lint");
    assert_eq!(lint.status, Status::Fail);
    assert!(
        lint.errored.as_deref().unwrap().contains("not found"),
        "{lint:?}"
    );
}

#[test]
fn fail_fast_skips_later_commands_but_permissions_read_the_change_first() {
    let t = repo();
    t.write("src/b.rs", "fn b() {}\n");
    let cfg = Config::from_texts(
        None,
        Some("guardrails:\n  - { name: first, command: \"false\" }\n  - { name: second, command: \"touch ran-second\" }\n"),
        Some("permissions:\n  denied_paths: ['nothing/**']\n"),
    )
    .unwrap();
    let r = verify_with(&t, &cfg);
    assert_eq!(by_name(&r, "second").status, Status::Skipped);
    assert!(!t.path().join("ran-second").exists());
    // Permissions only read the change: they ran before any command.
    let perm = r.iter().find(|r| r.layer == Layer::Permissions).unwrap();
    assert_eq!(perm.status, Status::Pass);
    let order: Vec<&str> = r.iter().map(|r| r.check.as_str()).collect();
    assert_eq!(order, vec!["permissions", "first", "second"]);
}

#[test]
fn no_command_runs_on_a_change_that_failed_a_read_only_check() {
    for (guardrails, permissions, why) in [
        (
            "guardrails:\n  - { name: run, command: \"touch ran\" }\n",
            "permissions:\n  denied_paths: ['src/**']\n",
            "skipped: the change failed permissions",
        ),
        (
            "guardrails:\n  - { name: no-fn, patterns: ['fn '] }\n  - { name: run, command: \"touch ran\" }\n",
            "permissions:\n  denied_paths: ['nothing/**']\n",
            "skipped: an earlier required guardrail failed",
        ),
    ] {
        let t = repo();
        t.write("src/b.rs", "fn b() {}\n");
        let cfg = Config::from_texts(None, Some(guardrails), Some(permissions)).unwrap();
        let r = verify_with(&t, &cfg);
        let run = by_name(&r, "run");
        assert_eq!(run.status, Status::Skipped, "{r:#?}");
        assert_eq!(run.output, why);
        assert!(!t.path().join("ran").exists());
    }
}

/// Two `parallel` commands run at once: each waits for the other's marker
/// file (the event, not a time), so they pass only together; one run
/// after the other, the first gives up after a minute saying what it
/// waited for.
#[test]
fn parallel_commands_run_together() {
    let t = repo();
    let waits = |me: &str, other: &str| {
        format!("touch {me}; for i in $(seq 600); do [ -f {other} ] && exit 0; sleep 0.1; done; echo timed out after 60s waiting for {other}; exit 1")
    };
    let r = run_check(
        &t,
        &format!(
            "guardrails:\n  - {{ name: p1, command: \"{}\", parallel: true }}\n  - {{ name: p2, command: \"{}\", parallel: true }}\n",
            waits("m1", "m2"),
            waits("m2", "m1")
        ),
    );
    assert_eq!(by_name(&r, "p1").status, Status::Pass, "{r:#?}");
    assert_eq!(by_name(&r, "p2").status, Status::Pass);
}

#[test]
fn banned_pattern_diff_only_names_file_and_line_and_ignores_old_lines() {
    let t = TestRepo::new(&[("src/a.go", "package a\n// fmt.Println old\n")]);
    t.write(
        "src/a.go",
        "package a\n// fmt.Println old\nfunc f() { os.Exit(1) }\n",
    );
    let r = run_check(
        &t,
        "guardrails:\n  - { name: banned, patterns: ['os\\.Exit', 'fmt\\.Print'], scope: diff-only }\n",
    );
    let b = by_name(&r, "banned");
    assert_eq!(b.status, Status::Fail);
    assert_eq!(b.issues.len(), 1, "{b:#?}");
    assert_eq!(b.issues[0].path.as_deref(), Some("src/a.go"));
    assert_eq!(b.issues[0].line, Some(3));
}

#[test]
fn banned_pattern_scope_all_sees_untouched_files_too() {
    let t = TestRepo::new(&[("old.go", "fmt.Println(1)\n"), ("b.go", "package b\n")]);
    t.write("b.go", "package b\n// fine\n");
    let r = run_check(
        &t,
        "guardrails:\n  - { name: banned, patterns: ['fmt\\.Print'], scope: all }\n",
    );
    let b = by_name(&r, "banned");
    assert_eq!(b.status, Status::Fail);
    assert_eq!(b.issues[0].path.as_deref(), Some("old.go"));
    let r = run_check(
        &t,
        "guardrails:\n  - { name: banned, patterns: ['fmt\\.Print'] }\n",
    );
    assert_eq!(by_name(&r, "banned").status, Status::Pass);
}

#[test]
fn diff_size_limits_lines_and_files() {
    let t = repo();
    t.write("a.txt", "1\n2\n3\n");
    t.write("b.txt", "1\n");
    let r = run_check(
        &t,
        "guardrails:\n  - { name: size, max_lines: 3, max_files: 5 }\n",
    );
    let s = by_name(&r, "size");
    assert_eq!(s.status, Status::Fail);
    assert!(s.issues[0].message.contains("4 lines changed"), "{s:#?}");
    let r = run_check(
        &t,
        "guardrails:\n  - { name: size, max_lines: 10, max_files: 1 }\n",
    );
    assert!(by_name(&r, "size").issues[0].message.contains("2 files"));
    let r = run_check(
        &t,
        "guardrails:\n  - { name: size, max_lines: 4, max_files: 2 }\n",
    );
    assert_eq!(by_name(&r, "size").status, Status::Pass);
}

#[test]
fn secrets_scan_fires_on_added_credential_in_untracked_file() {
    let t = repo();
    let key = format!("AKIA{}", "Q3ZJ7RXH2M4TP6WB");
    t.write(".env", &format!("AWS_ACCESS_KEY_ID={key}\n"));
    let r = run_check(&t, "guardrails:\n  - { name: secrets, builtin: secrets }\n");
    let s = by_name(&r, "secrets");
    assert_eq!(s.status, Status::Fail, "{s:#?}");
    assert_eq!(s.issues[0].path.as_deref(), Some(".env"));
    let clean = repo();
    clean.write("src/b.rs", "fn b() {}\n");
    let r = run_check(
        &clean,
        "guardrails:\n  - { name: secrets, builtin: secrets }\n",
    );
    assert_eq!(by_name(&r, "secrets").status, Status::Pass);
}

#[test]
fn optional_guardrail_failure_only_warns() {
    let t = repo();
    t.write("x.txt", "x\n");
    let r = run_check(
        &t,
        "guardrails:\n  - { name: lint, command: \"false\", required: false }\n",
    );
    assert_eq!(by_name(&r, "lint").status, Status::Warn);
    assert_eq!(gate(&r), Verdict::Warn);
}

#[test]
fn receipts_digest_the_command_and_the_diff() {
    let t = repo();
    t.write("x.txt", "x\n");
    let r = run_check(&t, "guardrails:\n  - { name: ok, command: \"true\" }\n");
    let ok = by_name(&r, "ok");
    for key in ["base", "diff", "config", "command"] {
        assert!(
            ok.receipt.inputs.contains_key(key),
            "{key}: {:?}",
            ok.receipt
        );
    }
    assert_eq!(
        ok.receipt.inputs["command"],
        rascal_core::model::verdict::digest("true")
    );
    assert_eq!(ok.receipt.result.len(), 64);
}
