//! Real agent runtimes (Claude Code, Codex, Goose) exercised through
//! stand-in executables placed first on PATH: they record the argv, stdin
//! and environment they got, make a change, and replay a recorded event
//! stream (crates/exec/tests/fixtures/streams/*.jsonl) that follows each tool's format —
//! including errors, tool calls, cost lines, malformed lines and a stream cut
//! off mid-line. The real CLIs and model APIs are not reachable here.

use crate::common;
use common::{code, stderr, stdout, TestRepo};
use rascal_core::config::RuntimeKind;
use rascal_exec::agents::events::{parse_line, AgentEvent};
use std::path::{Path, PathBuf};
use std::process::Command;

const KEY: &str = "sk-ant-api03-THISisAfakeCREDENTIALvalue0123456789";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/exec/tests/fixtures/streams")
        .join(name)
}

/// A directory holding a stand-in `program` that records what it got and
/// replays `stream`.
fn standin(program: &str, stream: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        r#"#!/bin/sh
rec="$RASCAL_ARTIFACTS_DIR"
mkdir -p "$rec"
printf '%s\n' "$0" "$@" > "$rec/standin-argv.txt"
cat > "$rec/standin-stdin.txt"
env > "$rec/standin-env.txt"
mkdir -p src && printf 'pub fn health() -> u16 {{ 200 }}\n' > src/health.rs
echo "debug: using key $ANTHROPIC_API_KEY$OPENAI_API_KEY"
printf '%s' '{}'
"#,
        // The stream is inside the script: a sandboxed agent cannot read
        // the test's checkout (it may lie under /tmp or the home).
        std::fs::read_to_string(fixture(stream))
            .unwrap()
            .replace('\'', "'\\''")
    );
    let path = dir.path().join(program);
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn repo(agents: &str) -> TestRepo {
    TestRepo::new(&[
        (".rascal/config.yaml", agents),
        ("src/lib.rs", "pub fn x() {}\n"),
    ])
}

/// Run `rascal run` with the stand-in first on PATH and the fake key set.
fn run(t: &TestRepo, bin: &Path, agent: &str, extra: &[&str]) -> std::process::Output {
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut args = vec!["run", "Add a /health endpoint", "--agent", agent];
    args.extend_from_slice(extra);
    Command::new(common::bin())
        .args(&args)
        .current_dir(t.path())
        .env("PATH", path)
        .env("ANTHROPIC_API_KEY", KEY)
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap()
}

/// What the stand-in recorded in its artifacts directory
/// (`$RASCAL_ARTIFACTS_DIR`, the one place outside its workspace it may
/// write).
fn recorded(t: &TestRepo, file: &str) -> String {
    let runs = t.files().join("runs");
    let run = std::fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let cand = std::fs::read_dir(run)
        .unwrap()
        .flatten()
        .find(|e| e.path().is_dir())
        .unwrap()
        .path();
    std::fs::read_to_string(cand.join("artifacts").join(file)).unwrap_or_default()
}

fn argv(t: &TestRepo) -> Vec<String> {
    recorded(t, "standin-argv.txt")
        .lines()
        .skip(1)
        .map(String::from)
        .collect()
}

#[test]
fn claude_argv_stdin_redaction_readable_events_and_cost() {
    let bin = standin("claude", "claude.jsonl");
    let t = repo(
        "agents:\n  cc: { runtime: claude, sandbox: none, env: [ANTHROPIC_API_KEY], model: claude-sonnet-4-5 }\n",
    );
    let o = run(&t, bin.path(), "cc", &["--headless"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    // Under the bare process launcher it does not skip permission prompts.
    assert_eq!(
        argv(&t),
        [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "acceptEdits",
            "--model",
            "claude-sonnet-4-5"
        ]
    );
    // The task, then the honest way out every author is offered.
    assert_eq!(
        recorded(&t, "standin-stdin.txt"),
        rascal_exec::agents::prompt::with_way_out("Add a /health endpoint")
    );
    assert!(recorded(&t, "standin-env.txt").contains("ANTHROPIC_API_KEY="));
    assert!(
        !recorded(&t, "standin-env.txt").contains("OPENAI_API_KEY"),
        "only named credentials"
    );
    // Readable lines, raw lines kept, the cut-off line shown raw.
    for want in [
        "● session started · model claude-sonnet-4-5 · 7 tools",
        "I'll add the health endpoint.",
        "▸ Edit src/health.rs",
        "✓ The file src/health.rs has been updated.",
        "▸ Bash cargo test health",
        "✗ error[E0425]: cannot find function `health`",
        "warning: this line is not JSON at all",
        "· rate_limit_event (an event rascal does not read; folded)",
        "■ done: Added /health returning 200 and a test.",
        "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"te",
        "[cc] summary: Added /health returning 200 and a test.",
        "1234 in · 567 out · 89 cached · $0.0123",
    ] {
        assert!(out.contains(want), "missing {want:?} in:\n{out}");
    }
    // An event of a kind rascal does not read is folded, never raw.
    assert!(!out.contains("{\"type\":\"rate_limit_event\""), "{out}");
    // The credential never reaches the screen, the log file or the store.
    assert!(out.contains("debug: using key [redacted]"), "{out}");
    assert!(!out.contains(KEY));
    let stored = walk(&t.path().join(".git/rascal"));
    for entry in stored.into_iter().chain(walk(&t.files())) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(KEY) || entry.ends_with("standin-env.txt"),
            "credential leaked into {}",
            entry.display()
        );
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn claude_skips_permissions_only_when_allowed() {
    let bin = standin("claude", "claude.jsonl");
    let t = repo(
        "agents:\n  cc: { runtime: claude, sandbox: none, allow_unsandboxed: true, args: [--max-turns, '5'] }\n",
    );
    let o = run(&t, bin.path(), "cc", &["--headless"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let a = argv(&t);
    assert!(
        a.contains(&"--dangerously-skip-permissions".to_string()),
        "{a:?}"
    );
    assert!(!a.contains(&"acceptEdits".to_string()));
    assert_eq!(&a[a.len() - 2..], ["--max-turns", "5"]);
}

#[test]
fn codex_reads_stdin_and_sums_turn_usage_into_the_json_and_scoreboard() {
    let bin = standin("codex", "codex.jsonl");
    let t = repo("agents:\n  cx: { runtime: codex, env: [OPENAI_API_KEY], model: gpt-5-codex }\n");
    let o = run(&t, bin.path(), "cx", &["--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // Inside rascal's bubblewrap sandbox, codex need not build its own.
    assert_eq!(
        argv(&t),
        [
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "--model",
            "gpt-5-codex",
            "-"
        ]
    );
    // The task, then the honest way out every author is offered.
    assert_eq!(
        recorded(&t, "standin-stdin.txt"),
        rascal_exec::agents::prompt::with_way_out("Add a /health endpoint")
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let usage = &doc["candidates"][0]["usage"];
    assert_eq!(usage["input_tokens"], 3000);
    assert_eq!(usage["output_tokens"], 400);
    assert_eq!(usage["cached_tokens"], 500);
    assert_eq!(
        doc["candidates"][0]["summary"],
        "Added the /health endpoint."
    );
    assert_eq!(
        doc["ranking"]["positions"][0]["usage"]["input_tokens"],
        3000
    );
    assert!(!stdout(&o).contains(KEY));
}

#[test]
fn goose_gets_the_instruction_as_a_file_and_model_from_config() {
    let bin = standin("goose", "goose.jsonl");
    let t = repo("agents:\n  gs: { runtime: goose, model: gpt-4o, env: [OPENAI_API_KEY] }\n");
    let o = run(&t, bin.path(), "gs", &["--headless"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    let a = argv(&t);
    assert_eq!(
        &a[..5],
        [
            "run",
            "--no-session",
            "--output-format",
            "stream-json",
            "-i"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(&a[5]).unwrap(),
        rascal_exec::agents::prompt::with_way_out("Add a /health endpoint")
    );
    assert!(recorded(&t, "standin-env.txt").contains("GOOSE_MODEL=gpt-4o"));
    for want in [
        "▸ developer__text_editor src/health.rs",
        "✓ Successfully wrote to src/health.rs",
        "✗ error: provider returned 429: rate limited",
        "Σ 0 in · 4321 out",
    ] {
        assert!(out.contains(want), "missing {want:?} in:\n{out}");
    }
}

#[test]
fn every_fixture_line_parses_or_is_folded_without_panicking() {
    for (rt, file) in [
        (RuntimeKind::Claude, "claude.jsonl"),
        (RuntimeKind::Codex, "codex.jsonl"),
        (RuntimeKind::Goose, "goose.jsonl"),
    ] {
        let text = std::fs::read_to_string(fixture(file)).unwrap();
        let mut parsed = 0;
        let mut raw = 0;
        for line in text.lines() {
            match parse_line(rt, line) {
                Some(evs) => {
                    parsed += 1;
                    for e in evs {
                        assert!(!e.display().is_empty());
                    }
                }
                None => raw += 1,
            }
        }
        assert!(
            parsed >= 5 && raw >= 1,
            "{file}: {parsed} parsed, {raw} raw"
        );
    }
    // Hostile and odd input.
    for line in [
        "",
        "{",
        "{}",
        "[1,2]",
        "{\"type\":42}",
        "{\"type\":\"assistant\"}",
        "\u{0}\u{1b}[2J",
    ] {
        for rt in [RuntimeKind::Claude, RuntimeKind::Codex, RuntimeKind::Goose] {
            let _ = parse_line(rt, line);
        }
    }
    // A kind no parser reads is named and folded, never shown raw.
    assert_eq!(
        parse_line(RuntimeKind::Claude, "{\"type\":\"mystery\",\"x\":\"raw\"}"),
        Some(vec![AgentEvent::Progress {
            text: "mystery (an event rascal does not read; folded)".into()
        }])
    );
    assert_eq!(
        parse_line(RuntimeKind::Command, "{\"type\":\"result\"}"),
        None
    );
    let evs = parse_line(
        RuntimeKind::Codex,
        r#"{"type":"turn.failed","error":{"message":"quota exceeded"}}"#,
    )
    .unwrap();
    assert_eq!(
        evs,
        vec![AgentEvent::Error {
            message: "quota exceeded".into()
        }]
    );
}

#[test]
fn doctor_reports_cli_version_and_credentials_without_values() {
    let bin = tempfile::tempdir().unwrap();
    let claude = bin.path().join("claude");
    std::fs::write(&claude, "#!/bin/sh\necho '2.0.14 (Claude Code)'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    let t = repo("agents:\n  cc: { runtime: claude, env: [ANTHROPIC_API_KEY] }\n  cx: { runtime: codex, env: [OPENAI_API_KEY] }\n");
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let doctor = |with_key: bool| {
        let mut c = Command::new(common::bin());
        c.args(["doctor"])
            .current_dir(t.path())
            .env("PATH", &path)
            .env_remove("OPENAI_API_KEY");
        if with_key {
            c.env("ANTHROPIC_API_KEY", KEY);
        } else {
            c.env_remove("ANTHROPIC_API_KEY");
        }
        c.output().unwrap()
    };
    let o = doctor(true);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "codex is missing: {out}");
    assert!(
        out.contains("✓ cc (claude)") && out.contains("2.0.14 (Claude Code)"),
        "{out}"
    );
    assert!(out.contains("$ANTHROPIC_API_KEY set"), "{out}");
    assert!(
        out.contains("✗ cx (codex)") && out.contains("`codex` is not on PATH"),
        "{out}"
    );
    assert!(out.contains("$OPENAI_API_KEY NOT SET"), "{out}");
    assert!(!out.contains(KEY), "never prints a credential value");
    let out = stdout(&doctor(false));
    assert!(
        out.contains("✗ cc (claude)") && out.contains("$ANTHROPIC_API_KEY is not set"),
        "{out}"
    );
}
