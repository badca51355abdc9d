//! `rascal run --headless`, `list`, `show` and `check` as a user runs them:
//! the real binary on real repositories.

use crate::common;
use common::{code, stderr, stdout, TestRepo};
use std::process::Command;
use std::time::{Duration, Instant};

const GUARDRAILS: &str = "guardrails:\n  - { name: no-todo, patterns: ['TODO'] }\n  - { name: has-b, command: \"test -f src/b.rs\", timeout: 10s }\n";

fn repo_with_agents(agents: &str) -> TestRepo {
    TestRepo::new(&[
        (".rascal/config.yaml", agents),
        (".rascal/guardrails.yaml", GUARDRAILS),
        ("src/a.rs", "fn a() {}\n"),
    ])
}

const TWO_AGENTS: &str = "agents:\n  good:\n    runtime: scripted\n    steps:\n      - { do: say, text: writing b }\n      - { do: write, path: src/b.rs, content: \"fn b() {}\\n\" }\n  lazy:\n    runtime: scripted\n    steps:\n      - { do: say, text: leaving a TODO }\n      - { do: write, path: src/c.rs, content: \"// TODO: later\\n\" }\n";

fn run_id(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("rascal run "))
        .and_then(|l| l.split_whitespace().next())
        .expect("run id in output")
        .to_string()
}

#[test]
fn two_scripted_candidates_headless_then_show_prints_the_same() {
    let t = repo_with_agents(TWO_AGENTS);
    let o = t.rascal(&[
        "run",
        "add b",
        "--agent",
        "good",
        "--agent",
        "lazy",
        "--headless",
    ]);
    let live = stdout(&o);
    assert_eq!(code(&o), 0, "one candidate passes: {live}{}", stderr(&o));
    assert!(live.contains("[good] verdict PASS"), "{live}");
    assert!(live.contains("[lazy] verdict FAIL"), "{live}");
    assert!(live.contains("src/c.rs:1"), "names file:line: {live}");
    assert!(live.contains("[good] │ writing b"), "streams logs: {live}");
    let id = run_id(&live);

    let shown = t.rascal(&["show", &id]);
    assert_eq!(code(&shown), 0);
    let live_body: Vec<&str> = live.lines().filter(|l| !l.starts_with("replay:")).collect();
    let shown_text = stdout(&shown);
    let shown_body: Vec<&str> = shown_text.lines().collect();
    assert_eq!(
        live_body, shown_body,
        "show must print what the run printed"
    );

    let list = stdout(&t.rascal(&["list"]));
    assert!(
        list.contains(&id) && list.contains("finished") && list.contains("PASS"),
        "{list}"
    );
}

#[test]
fn json_document_has_the_documented_shape() {
    let t = repo_with_agents(TWO_AGENTS);
    let o = t.rascal(&["run", "add b", "--agent", "good,lazy", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON document");
    assert_eq!(doc["verdict"], "pass");
    let cands = doc["candidates"].as_array().unwrap();
    assert_eq!(cands.len(), 2);
    let lazy = cands.iter().find(|c| c["id"] == "lazy").unwrap();
    assert_eq!(lazy["verdict"], "fail");
    let report = lazy["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "no-todo")
        .unwrap();
    for key in ["layer", "check", "status", "issues", "required", "receipt"] {
        assert!(report.get(key).is_some(), "{key} in {report}");
    }
    let issue = &report["issues"][0];
    for key in ["rule", "severity", "confidence", "path", "line", "message"] {
        assert!(issue.get(key).is_some(), "{key} in {issue}");
    }
    assert_eq!(issue["line"], 1);
    // show --json reads the same from the store.
    let id = doc["run"].as_str().unwrap();
    let shown: serde_json::Value =
        serde_json::from_str(&stdout(&t.rascal(&["show", id, "--json"]))).unwrap();
    assert_eq!(shown, doc);
}

#[test]
fn all_failing_candidates_exit_1_and_unknown_agent_exits_2() {
    let t = repo_with_agents(TWO_AGENTS);
    let o = t.rascal(&["run", "x", "--agent", "lazy", "--headless"]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(stdout(&o).contains("run verdict FAIL"));
    let o = t.rascal(&["run", "x", "--agent", "nobody", "--headless"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("unknown agent `nobody`"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("good, lazy"),
        "lists defined agents: {}",
        stderr(&o)
    );
}

/// A missing agent program is found before the run starts (issue 31,
/// item 4): refused with the problem named, exit 2, nothing recorded.
#[test]
fn missing_agent_binary_refuses_the_run_before_it_starts() {
    let t = repo_with_agents(
        "agents:\n  ghost: { runtime: command, command: [\"/nonexistent/agent-bin\"] }\n",
    );
    let o = t.rascal(&["run", "x", "--agent", "ghost", "--headless"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{}{err}", stdout(&o));
    assert!(
        err.contains("agent `ghost`: `/nonexistent/agent-bin` does not exist"),
        "{err}"
    );
    let list = stdout(&t.rascal(&["list"]));
    assert!(list.starts_with("no runs yet"), "nothing recorded: {list}");
}

#[test]
fn hanging_agent_is_killed_with_its_whole_process_group() {
    // A unique duration marks the backgrounded grandchild in /proc.
    let marker = format!("3000.{}", std::process::id());
    let t = repo_with_agents(&format!(
        "agents:\n  stuck: {{ runtime: command, command: [\"sh\", \"-c\", \"(setsid sleep {marker}; echo child) & sleep 300\"] }}\n"
    ));
    let started = Instant::now();
    let o = t.rascal(&[
        "run",
        "x",
        "--agent",
        "stuck",
        "--headless",
        "--timeout",
        "1s",
    ]);
    assert_eq!(code(&o), 1);
    assert!(
        stdout(&o).contains("timed out after 1.0s"),
        "{}",
        stdout(&o)
    );
    assert!(started.elapsed() < Duration::from_secs(60));
    // The backgrounded grandchild (in a session of its own) is gone too.
    let left = common::survivors_after(&marker, 30);
    assert!(left.is_empty(), "grandchild survived: {left:?}");
}

#[test]
fn noisy_agent_with_binary_garbage_and_a_10mb_line_is_survived_and_neutralised() {
    let t = repo_with_agents("agents:\n  noisy: { runtime: scripted, scenario: noisy }\n");
    let o = t.rascal(&["run", "x", "--agent", "noisy", "--headless"]);
    let out = stdout(&o);
    assert!(
        out.contains("[noisy] │ still alive"),
        "kept streaming after the garbage"
    );
    assert!(
        !out.contains('\u{1b}'),
        "no raw escape sequence reaches the terminal"
    );
    assert!(out.contains("^["), "escapes shown visibly");
    assert!(
        out.len() < 2_000_000,
        "the 10 MB line is cut: {} bytes",
        out.len()
    );
    assert!(out.contains("[noisy] verdict"), "finished with a verdict");
}

#[test]
fn agent_environment_is_scrubbed_and_named_credentials_are_redacted() {
    let t = repo_with_agents(
        "agents:\n  envy: { runtime: command, command: [\"sh\", \"-c\", \"env; echo x > out.txt\"], env: [RASCAL_TEST_TOKEN] }\n",
    );
    let o = Command::new(common::bin())
        .args(["run", "x", "--agent", "envy", "--headless"])
        .current_dir(t.path())
        .env("RASCAL_TEST_TOKEN", "tok-very-secret-123")
        .env("RASCAL_HOST_ONLY", "should-not-leak")
        .output()
        .unwrap();
    let out = stdout(&o);
    assert!(out.contains("RASCAL_TEST_TOKEN=[redacted]"), "{out}");
    assert!(!out.contains("tok-very-secret-123"));
    assert!(
        !out.contains("RASCAL_HOST_ONLY"),
        "unnamed host variable leaked: {out}"
    );
    assert!(out.contains("RASCAL_INSTRUCTION_FILE="));
    let db = std::fs::read(t.path().join(".git/rascal/rascal.db")).unwrap();
    assert!(!String::from_utf8_lossy(&db).contains("tok-very-secret-123"));
}

#[test]
fn killed_run_is_recorded_as_interrupted_and_the_next_run_works() {
    // The orphaned agent sleeps 20 s, not a day: SIGKILL of rascal leaves it behind.
    let t = repo_with_agents("agents:\n  stuck: { runtime: scripted, steps: [{ do: say, text: thinking very hard }, { do: sleep, ms: 20000 }] }\n  good: { runtime: scripted, steps: [{ do: write, path: src/b.rs, content: \"fn b() {}\\n\" }] }\n");
    let mut child = common::spawn_rascal(t.path(), &["run", "x", "--agent", "stuck", "--headless"]);
    // Wait until the run is listed and its agent has said its first line
    // (it is running, not about to start): the orphan the kill leaves
    // behind.
    let id = common::wait_for_running_run(&t, 30);
    common::wait::until(
        "the agent's first line is journalled",
        Duration::from_secs(30),
        || stdout(&t.rascal(&["show", &id])).contains("thinking very hard"),
    );
    child.kill().unwrap(); // SIGKILL: no cleanup at all
    child.wait().unwrap();
    let list = stdout(&t.rascal(&["list"]));
    assert!(list.contains("interrupted"), "{list}");
    let id = list
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let shown = stdout(&t.rascal(&["show", &id]));
    assert!(
        shown.contains("thinking very hard"),
        "landed logs kept: {shown}"
    );
    assert!(shown.contains("run interrupted"), "{shown}");
    let o = t.rascal(&["run", "y", "--agent", "good", "--headless"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn check_exit_codes_are_0_1_and_2() {
    let t = TestRepo::new(&[
        (
            ".rascal/guardrails.yaml",
            "guardrails:\n  - { name: no-todo, patterns: ['TODO'] }\n",
        ),
        ("a.txt", "a\n"),
    ]);
    t.write("a.txt", "a\nfine\n");
    let o = t.rascal(&["check"]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    t.write("b.txt", "TODO\n");
    let o = t.rascal(&["check", "--json"]);
    assert_eq!(code(&o), 1);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["verdict"], "fail");
    assert_eq!(doc["layers"][0]["issues"][0]["path"], "b.txt");
    let o = t.rascal(&["check", "--base", "no-such-ref"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("no-such-ref"), "{}", stderr(&o));
    let plain = tempfile::tempdir().unwrap();
    let o = common::rascal_in(plain.path(), &["check"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("not inside a git repository"));
    let o = t.rascal(&["check", "--no-such-flag"]);
    assert_eq!(code(&o), 2);
}

#[test]
fn check_denies_self_edits_only_when_permissions_are_configured() {
    let t = TestRepo::new(&[
        (
            ".rascal/permissions.yaml",
            "permissions:\n  denied_paths: ['secret/**']\n",
        ),
        ("a.txt", "a\n"),
    ]);
    t.write("secret/x.txt", "x\n");
    let o = t.rascal(&["check"]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(stdout(&o).contains("secret/x.txt"));
}

#[test]
fn agent_editing_rascal_config_is_caught_by_self_protection() {
    let t = repo_with_agents("agents:\n  sneaky:\n    runtime: scripted\n    steps:\n      - { do: write, path: src/b.rs, content: \"fn b() {}\\n\" }\n      - { do: write, path: .rascal/guardrails.yaml, content: \"guardrails: []\\n\" }\n");
    let o = t.rascal(&["run", "x", "--agent", "sneaky", "--headless"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(out.contains(".rascal/guardrails.yaml"), "{out}");
    // And its weakened config was not used: the guardrails still ran.
    assert!(out.contains("guardrails/no-todo"), "{out}");
}

/// Dynamic scoping: a task spec or `--allow-path`/`--deny-path` narrows the
/// repository's permissions and can never widen them.
#[test]
fn task_permissions_narrow_the_repository_and_never_widen_it() {
    let agents = "agents:\n  a:\n    runtime: scripted\n    steps:\n      - { do: write, path: src/ok.rs, content: \"x\\n\" }\n      - { do: write, path: src/private/k.rs, content: \"x\\n\" }\n      - { do: write, path: docs/n.md, content: \"x\\n\" }\n      - { do: write, path: .rascal/x.yaml, content: \"x\\n\" }\n";
    let spec = "instruction: do it\npermissions:\n  allowed_paths: ['src/**']\n  denied_paths: []\n  allow_self_edit: true\n";
    let t = TestRepo::new(&[
        (".rascal/config.yaml", agents),
        (
            ".rascal/permissions.yaml",
            "permissions:\n  denied_paths: ['src/private/**']\n",
        ),
        (".rascal/specs/narrow.yaml", spec),
        ("README.md", "x\n"),
    ]);
    let rules = |o: &std::process::Output| -> Vec<(String, String)> {
        let doc: serde_json::Value =
            serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stderr(o)));
        let mut v: Vec<(String, String)> = doc["candidates"][0]["reports"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["layer"] == "permissions")
            .flat_map(|r| r["issues"].as_array().unwrap().clone())
            .map(|i| {
                (
                    i["rule"].as_str().unwrap().to_string(),
                    i["path"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        v.sort();
        v
    };
    // The repository alone: only the denied path and self-protection.
    let o = t.rascal(&["run", "x", "--agent", "a", "--json"]);
    assert_eq!(
        rules(&o),
        vec![
            ("permissions/denied-path".into(), "src/private/k.rs".into()),
            (
                "permissions/self-protection".into(),
                ".rascal/x.yaml".into()
            ),
        ]
    );
    // The spec narrows to src/** but its empty deny list and allow_self_edit
    // widen nothing.
    let o = t.rascal(&["run", "--spec", "narrow", "--agent", "a", "--json"]);
    let r = rules(&o);
    assert!(
        r.contains(&(
            "permissions/outside-allowed-paths".into(),
            "docs/n.md".into()
        )),
        "{r:?}"
    );
    assert!(
        r.contains(&("permissions/denied-path".into(), "src/private/k.rs".into())),
        "{r:?}"
    );
    assert!(
        r.contains(&(
            "permissions/self-protection".into(),
            ".rascal/x.yaml".into()
        )),
        "{r:?}"
    );
    assert!(!r.iter().any(|(_, p)| p == "src/ok.rs"), "{r:?}");
    // The command line narrows too.
    let o = t.rascal(&[
        "run",
        "x",
        "--agent",
        "a",
        "--json",
        "--deny-path",
        "docs/**",
    ]);
    assert!(rules(&o).contains(&("permissions/denied-path".into(), "docs/n.md".into())));
    // A retry of that run keeps the command line's narrowing.
    let id = serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap()["run"]
        .as_str()
        .unwrap()
        .to_string();
    let r = t.rascal(&["retry", &id, "a", "--feedback", "again", "--quiet"]);
    assert_eq!(code(&r), 1, "{}{}", stdout(&r), stderr(&r));
    let shown = t.rascal(&["show", &id, "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&shown)).unwrap();
    assert_eq!(doc["candidates"][0]["attempt"], 2);
    assert!(rules(&shown).contains(&("permissions/denied-path".into(), "docs/n.md".into())));
    let o = t.rascal(&["run", "x", "--agent", "a", "--allow-path", "src/["]);
    assert_eq!(code(&o), 2, "a bad glob is a usage error");
}

#[test]
fn an_unsandboxed_agent_is_marked_in_the_lines_the_json_and_the_pr_body() {
    let t = repo_with_agents(
        "agents:\n  bare: { runtime: command, sandbox: none, command: [\"sh\", \"-c\", \"mkdir -p src && echo 'fn b() {}' > src/b.rs\"] }\n  boxed: { runtime: command, command: [\"sh\", \"-c\", \"mkdir -p src && echo 'fn b() {}' > src/b.rs\"] }\n",
    );
    let o = t.rascal(&["run", "x", "--agent", "bare,boxed", "--headless"]);
    let out = stdout(&o);
    assert!(out.contains("agent bare (command) UNSANDBOXED in"), "{out}");
    assert!(!out.contains("agent boxed (command) UNSANDBOXED"), "{out}");
    assert!(
        out.contains("note: UNSANDBOXED candidates ran as you"),
        "{out}"
    );
    let run = out
        .lines()
        .find_map(|l| l.strip_prefix("replay: rascal show "))
        .unwrap()
        .to_string();
    let doc: serde_json::Value =
        serde_json::from_slice(&t.rascal(&["show", &run, "--json"]).stdout).unwrap();
    let flags: Vec<(String, bool)> = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["unsandboxed"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        flags,
        vec![("bare".to_string(), true), ("boxed".to_string(), false)]
    );
    assert_eq!(code(&t.rascal(&["select", &run, "bare"])), 0);
    let md = stdout(&t.rascal(&["report", &run, "--format", "md"]));
    assert!(md.contains("**UNSANDBOXED**"), "{md}");
}

#[test]
fn without_bubblewrap_an_agent_refuses_to_start_and_scripted_ones_run_unsandboxed() {
    let t = repo_with_agents(
        "agents:\n  real: { runtime: command, command: [\"sh\", \"-c\", \"echo x > src/b.rs\"] }\n  bare: { runtime: command, sandbox: none, command: [\"sh\", \"-c\", \"mkdir -p src; echo 'fn b() {}' > src/b.rs\"] }\n  demo: { runtime: scripted, steps: [{ do: write, path: src/b.rs, content: \"fn b() {}\\n\" }] }\n",
    );
    let no_bwrap = |args: &[&str]| {
        std::process::Command::new(common::bin())
            .args(args)
            .current_dir(t.path())
            .env("RASCAL_BWRAP", "")
            .output()
            .unwrap()
    };
    let o = no_bwrap(&["run", "x", "--agent", "real,bare", "--headless"]);
    assert_eq!(code(&o), 2, "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("agent `real`") && stderr(&o).contains("apt-get install bubblewrap"),
        "{}",
        stderr(&o)
    );
    assert!(
        !stdout(&t.rascal(&["list"])).contains("r-"),
        "no run was started"
    );
    // `sandbox: none` and rascal's scripted agents run, marked.
    let o = no_bwrap(&["run", "x", "--agent", "bare,demo", "--headless"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(out.contains("agent bare (command) UNSANDBOXED"), "{out}");
    assert!(out.contains("agent demo (scripted) UNSANDBOXED"), "{out}");
    assert!(out.contains("apt-get install bubblewrap"), "{out}");
}

#[test]
fn strict_makes_a_warning_a_failure_for_ci() {
    if !common::bwrap() {
        return;
    }
    // The only candidate warns: an optional guardrail fails.
    let t = common::TestRepo::new(&[("README.md", "x\n")]);
    t.write(
        ".rascal/config.yaml",
        &common::command_agents(&[("note", "echo y >> README.md")]),
    );
    t.write(
        ".rascal/guardrails.yaml",
        "guardrails:\n  - { name: lint, command: \"false\", required: false }\n",
    );
    t.commit_all("rascal config");
    let plain = t.rascal(&["run", "note it", "--agent", "note", "--headless"]);
    assert_eq!(common::code(&plain), 0, "{}", common::stdout(&plain));
    assert!(common::stdout(&plain).contains("run verdict WARN"));
    let strict = t.rascal(&[
        "run",
        "note it",
        "--agent",
        "note",
        "--headless",
        "--strict",
    ]);
    assert_eq!(common::code(&strict), 1, "{}", common::stdout(&strict));
    assert!(common::stdout(&strict).contains("run verdict WARN (exit 1)"));
    // `rascal check` on the working tree, the same way.
    std::fs::write(t.path().join("README.md"), "x\nz\n").unwrap();
    assert_eq!(common::code(&t.rascal(&["check"])), 0);
    assert_eq!(common::code(&t.rascal(&["check", "--strict"])), 1);
}

/// Ctrl-C on a headless run: the last lines say it was cancelled, never
/// "no candidate passed" as though the candidates had failed.
#[test]
fn ctrl_c_says_the_run_was_cancelled_not_that_nothing_passed() {
    let t = common::TestRepo::new(&[(
        ".rascal/config.yaml",
        "agents:\n  slow: { runtime: command, command: [sh, -c, \"sleep 60\"] }\n",
    )]);
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("ctrl-c.log");
    let mut child = common::spawn_rascal_logged(
        t.path(),
        &["run", "x", "--headless", "--agent", "slow"],
        &log,
    );
    let run = common::wait_for_running_run(&t, 30);
    // The agent has started: its line is in the log.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("[slow] started")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the agent never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    rascal_exec::exec::os::signal(child.id() as i32, libc::SIGINT);
    child.wait().unwrap();
    let out = std::fs::read_to_string(&log).unwrap();
    assert!(
        out.contains("pick: none — cancelled: no candidate finished, so none passed"),
        "{out}"
    );
    assert!(
        out.contains("— cancelled: no candidate finished, so none passed"),
        "{out}"
    );
    assert!(!out.contains("no candidate passed\n"), "{out}");
    assert!(!out.contains("no pick: no candidate passed"), "{out}");
    assert!(out.contains(&format!("replay: rascal show {run}")), "{out}");
}
