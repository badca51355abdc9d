//! Errors with their place, and config honesty, end to end with the real
//! binary on real repositories: a candidate that breaks a Rust build gets a
//! guardrail issue at `src/lib.rs:LINE` with rustc's message (in the JSON,
//! in `rascal show`, in the PR body); `.rascal/` edited but not committed is
//! warned about, or used with `--config-from-worktree` and recorded.

use crate::common;
use common::{code, stderr, stdout, TestRepo};
use std::process::Command;

const CARGO_TOML: &str =
    "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n";
const CARGO_LOCK: &str = "version = 3\n\n[[package]]\nname = \"calc\"\nversion = \"0.1.0\"\n";
const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";

/// The agent's change: line 6 returns a string where an i32 is due.
const BROKEN: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn name() -> i32 {\n    \"calc\"\n}\n";

fn run_id(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("replay: rascal show "))
        .unwrap_or_else(|| panic!("no run id in: {out}"))
        .trim()
        .to_string()
}

fn rascal(t: &TestRepo, args: &[&str]) -> std::process::Output {
    Command::new(common::bin())
        .args(args)
        .current_dir(t.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn a_broken_rust_build_is_an_issue_at_its_line_with_rustcs_message() {
    let agents = format!(
        "agents:\n  breaker:\n    runtime: scripted\n    steps:\n      - {{ do: write, path: src/lib.rs, content: {} }}\n",
        serde_json::to_string(BROKEN).unwrap()
    );
    let t = TestRepo::new(&[
        ("Cargo.toml", CARGO_TOML),
        ("Cargo.lock", CARGO_LOCK),
        (".gitignore", "/target\n"),
        ("src/lib.rs", LIB),
        (".rascal/config.yaml", &agents),
        (
            ".rascal/guardrails.yaml",
            "guardrails:\n  - { name: build, command: \"cargo build --offline\", timeout: 300s }\n",
        ),
    ]);
    let o = rascal(
        &t,
        &["run", "add name()", "--agent", "breaker", "--headless"],
    );
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}{}", stderr(&o));
    let run = run_id(&out);

    let doc: serde_json::Value =
        serde_json::from_slice(&rascal(&t, &["show", &run, "--json"]).stdout).unwrap();
    let build = doc["candidates"][0]["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "build")
        .unwrap_or_else(|| panic!("no build report: {doc}"))
        .clone();
    assert_eq!(build["status"], "fail", "{build}");
    let issue = &build["issues"][0];
    assert_eq!(issue["path"], "src/lib.rs", "{build}");
    assert_eq!(issue["line"], 6, "{build}");
    assert_eq!(
        issue["message"], "src/lib.rs:6:5: error[E0308]: mismatched types",
        "{build}"
    );
    // The output keeps rustc's block, whatever the tail holds.
    let output = build["output"].as_str().unwrap();
    assert!(
        output.contains("error[E0308]: mismatched types"),
        "{output}"
    );
    assert!(output.contains("--> src/lib.rs:6:5"), "{output}");

    // `rascal show` prints the error's line and its block.
    let shown = stdout(&rascal(&t, &["show", &run]));
    assert!(
        shown.contains(
            "    error: src/lib.rs:6:5: error[E0308]: mismatched types [guardrails/build]"
        ),
        "{shown}"
    );
    assert!(
        shown.contains("│ error[E0308]: mismatched types"),
        "{shown}"
    );
    assert!(shown.contains("│  --> src/lib.rs:6:5"), "{shown}");

    // The PR body carries the first error, fenced.
    let md = stdout(&rascal(&t, &["report", &run, "--format", "md"]));
    assert!(
        md.contains("- [ ] build ← FAILED: src/lib.rs:6:5: error[E0308]: mismatched types\n"),
        "{md}"
    );
    assert!(
        md.contains("  ```\n  error[E0308]: mismatched types\n   --> src/lib.rs:6:5"),
        "{md}"
    );
}

/// A repository whose committed guardrail passes; `.rascal/guardrails.yaml`
/// in the working tree adds one that fails, uncommitted; another file is
/// left uncommitted too.
fn drifted_repo() -> TestRepo {
    let t = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            "agents:\n  writer:\n    runtime: scripted\n    steps:\n      - { do: write, path: b.txt, content: \"b\\n\" }\n",
        ),
        (
            ".rascal/guardrails.yaml",
            "guardrails:\n  - { name: ok, command: \"true\" }\n",
        ),
        ("a.txt", "a\n"),
    ]);
    t.write(
        ".rascal/guardrails.yaml",
        "guardrails:\n  - { name: ok, command: \"true\" }\n  - { name: strict, command: \"exit 7\" }\n",
    );
    t.write("notes.txt", "mine\n");
    t
}

#[test]
fn uncommitted_config_is_warned_about_and_used_only_when_asked() {
    let t = drifted_repo();
    let base = &t.head().to_string()[..8];
    let warning = format!(
        "using .rascal/ from base {base}; uncommitted changes to guardrails.yaml are ignored — commit them or pass --config-from-worktree"
    );

    // `check`: the base's config, with the warning; then the working tree's.
    let o = rascal(&t, &["check"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains(&warning), "{}", stderr(&o));
    assert_eq!(stderr(&o).matches("warning:").count(), 1, "{}", stderr(&o));
    let o = rascal(&t, &["check", "--config-from-worktree"]);
    assert_eq!(code(&o), 1, "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("guardrails/strict FAIL"),
        "{}",
        stdout(&o)
    );
    assert!(
        stderr(&o).contains(&format!(
            "config from the working tree, not from base {base} (differs in guardrails.yaml)"
        )),
        "{}",
        stderr(&o)
    );

    // `doctor` reads the config too: the same warning.
    let o = rascal(&t, &["doctor"]);
    assert!(stderr(&o).contains(&warning), "{}", stderr(&o));

    // `run`: the warning and the uncommitted files in its header.
    let o = rascal(&t, &["run", "write b", "--agent", "writer", "--headless"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    let header: Vec<&str> = out.lines().take(6).collect();
    assert!(header.iter().any(|l| l.contains(&warning)), "{out}");
    assert!(
        header.iter().any(|l| l.contains(&format!(
            "working tree has uncommitted changes (1 file: notes.txt); agents start from base {base}"
        ))),
        "{out}"
    );
    // Its JSON: not from the working tree, and what was ignored.
    let o = rascal(&t, &["run", "write b", "--agent", "writer", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        doc["worktree"]["config_changes"][0], "guardrails.yaml",
        "{doc}"
    );
    assert!(
        doc["worktree"].get("config_from_worktree").is_none(),
        "{doc}"
    );
    assert!(stderr(&o).contains(&warning), "{}", stderr(&o));

    // `--config-from-worktree`: the failing guardrail runs, and the run says so.
    let o = rascal(
        &t,
        &[
            "run",
            "write b",
            "--agent",
            "writer",
            "--headless",
            "--config-from-worktree",
        ],
    );
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}{}", stderr(&o));
    let note =
        format!("config from the working tree, not from base {base} (differs in guardrails.yaml)");
    assert!(out.contains(&format!("note: {note}")), "{out}");
    assert!(!out.contains(&warning), "{out}");
    let run = run_id(&out);
    let shown = stdout(&rascal(&t, &["show", &run]));
    assert!(shown.contains(&format!("note: {note}")), "{shown}");
    assert!(shown.contains("guardrails/strict FAIL"), "{shown}");
    let doc: serde_json::Value =
        serde_json::from_slice(&rascal(&t, &["show", &run, "--json"]).stdout).unwrap();
    assert_eq!(doc["worktree"]["config_from_worktree"], true, "{doc}");
    let md = stdout(&rascal(&t, &["report", &run, "--format", "md"]));
    assert!(md.contains(&format!("**Note: {note}**")), "{md}");

    // All committed: nothing to say, nothing journalled.
    t.commit_all("commit it all");
    let o = rascal(&t, &["check"]);
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    let o = rascal(&t, &["run", "write b", "--agent", "writer", "--headless"]);
    let out = stdout(&o);
    assert!(!out.contains("uncommitted"), "{out}");
    assert!(!out.contains("note: config"), "{out}");
    let doc: serde_json::Value =
        serde_json::from_slice(&rascal(&t, &["show", &run_id(&out), "--json"]).stdout).unwrap();
    assert!(doc.get("worktree").is_none(), "{doc}");
}
