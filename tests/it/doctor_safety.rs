//! `rascal doctor` is safe to run: it never executes a `command` agent's
//! program (a wrapper script may ignore `--version` and edit the checkout or
//! call a paid API), it asks only the known CLIs for their version, inside
//! bubblewrap, in an empty directory, without credentials — and not at all
//! without bubblewrap. Real repositories in temp dirs, the real binary.

use crate::common;
use common::{code, stderr, stdout, TestRepo};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

const LIB: &str = "pub fn lib() {}\n";

fn make_executable(path: &Path, yes: bool) {
    let mode = if yes { 0o755 } else { 0o644 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A script that leaves `marker` (and rewrites src/lib.rs in its working
/// directory) when it is run, whatever its arguments.
fn tattletale(marker: &Path) -> String {
    format!(
        "#!/bin/sh\ntouch '{}'\necho 'pub fn pwned() {{}}' > src/lib.rs\necho 'agent 1.0'\n",
        marker.display()
    )
}

fn doctor(t: &TestRepo, envs: &[(&str, &str)]) -> std::process::Output {
    let mut c = Command::new(common::bin());
    c.arg("doctor").current_dir(t.path()).env("NO_COLOR", "1");
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn doctor_never_runs_a_command_agent_and_says_where_its_program_is() {
    let outside = tempfile::tempdir().unwrap();
    let in_repo_marker = outside.path().join("in-repo-script-ran");
    let host_marker = outside.path().join("host-script-ran");
    let host_script = outside.path().join("my-agent.sh");
    std::fs::write(&host_script, tattletale(&host_marker)).unwrap();
    make_executable(&host_script, true);
    let config = format!(
        "agents:\n  local: {{ runtime: command, command: [\"./scripts/agent.sh\", \"--task\"] }}\n  host: {{ runtime: command, command: [\"{}\"] }}\n",
        host_script.display()
    );
    let t = TestRepo::new(&[
        (".rascal/config.yaml", config.as_str()),
        ("src/lib.rs", LIB),
    ]);
    t.write("scripts/agent.sh", &tattletale(&in_repo_marker));
    make_executable(&t.path().join("scripts/agent.sh"), true);
    t.commit_all("the agent wrapper");

    let o = doctor(&t, &[]);
    let out = stdout(&o);
    assert!(
        !in_repo_marker.exists(),
        "the repository's script ran: {out}"
    );
    assert!(!host_marker.exists(), "the host script ran: {out}");
    assert_eq!(
        std::fs::read_to_string(t.path().join("src/lib.rs")).unwrap(),
        LIB,
        "the checkout was edited"
    );
    assert!(
        out.contains("✓ local (command) · scripts/agent.sh in the base commit · executable"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "✓ host (command) · {} · executable",
            host_script.display()
        )),
        "{out}"
    );
    assert!(
        out.contains("not run: doctor never runs a command agent"),
        "{out}"
    );
    assert!(!out.contains("agent 1.0"), "{out}");
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
}

#[test]
fn doctor_reports_a_program_that_is_not_executable_or_not_there() {
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("ran");
    let plain = outside.path().join("plain.sh");
    std::fs::write(&plain, tattletale(&marker)).unwrap();
    make_executable(&plain, false);
    let config = format!(
        "agents:\n  plain: {{ runtime: command, command: [\"{}\"] }}\n  unmarked: {{ runtime: command, command: [\"./scripts/unmarked.sh\"] }}\n  uncommitted: {{ runtime: command, command: [\"./scripts/later.sh\"] }}\n  absent: {{ runtime: command, command: [\"no-such-agent-program-x\"] }}\n",
        plain.display()
    );
    let t = TestRepo::new(&[
        (".rascal/config.yaml", config.as_str()),
        ("scripts/unmarked.sh", "#!/bin/sh\necho hi\n"),
        ("src/lib.rs", LIB),
    ]);
    // On disk, executable, but not in the base commit.
    t.write("scripts/later.sh", "#!/bin/sh\necho hi\n");
    make_executable(&t.path().join("scripts/later.sh"), true);

    let o = doctor(&t, &[]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(!marker.exists());
    assert!(
        out.contains(&format!(
            "✗ plain (command) · {} · NOT executable",
            plain.display()
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("chmod +x {}", plain.display())),
        "{out}"
    );
    assert!(
        out.contains(
            "✗ unmarked (command) · scripts/unmarked.sh in the base commit · NOT executable"
        ),
        "{out}"
    );
    assert!(
        out.contains("git update-index --chmod=+x scripts/unmarked.sh"),
        "{out}"
    );
    assert!(
        out.contains("✗ uncommitted (command) · `./scripts/later.sh` not found")
            && out.contains("`./scripts/later.sh` is not in the base commit"),
        "{out}"
    );
    assert!(
        out.contains("✗ absent (command) · `no-such-agent-program-x` not found")
            && out.contains("`no-such-agent-program-x` is not on PATH"),
        "{out}"
    );
}

/// A stand-in `claude` that tries to leave traces and says what it saw.
fn spying_claude(bin: &Path, repo: &Path) {
    let claude = bin.join("claude");
    std::fs::write(
        &claude,
        format!(
            "#!/bin/sh\necho 'pub fn pwned() {{}}' > '{}/src/lib.rs' 2>/dev/null\necho \"2.0.14 (Claude Code) key=${{ANTHROPIC_API_KEY:-none}} files-here=$(ls -A | wc -l)\"\n",
            repo.display()
        ),
    )
    .unwrap();
    make_executable(&claude, true);
}

#[test]
fn doctor_asks_a_known_cli_its_version_inside_the_sandbox_in_an_empty_directory() {
    let t = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            "agents:\n  cc: { runtime: claude, env: [ANTHROPIC_API_KEY] }\n",
        ),
        ("src/lib.rs", LIB),
    ]);
    let bin = tempfile::tempdir().unwrap();
    spying_claude(bin.path(), t.path());
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let o = doctor(
        &t,
        &[
            ("PATH", &path),
            ("ANTHROPIC_API_KEY", "sk-test-doctor-1234"),
        ],
    );
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(
        out.contains("2.0.14 (Claude Code) key=none files-here=0"),
        "ran without credentials, in an empty directory: {out}"
    );
    assert_eq!(
        std::fs::read_to_string(t.path().join("src/lib.rs")).unwrap(),
        LIB,
        "the checkout is not reachable from the sandbox"
    );
}

#[test]
fn doctor_runs_no_cli_when_bubblewrap_is_missing_and_says_so() {
    let t = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            "agents:\n  cc: { runtime: claude }\n",
        ),
        ("src/lib.rs", LIB),
    ]);
    let bin = tempfile::tempdir().unwrap();
    spying_claude(bin.path(), t.path());
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    // RASCAL_BWRAP names the bubblewrap program; empty: not installed.
    let o = doctor(&t, &[("PATH", &path), ("RASCAL_BWRAP", "")]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "runs would refuse: {out}");
    assert!(!out.contains("2.0.14"), "the CLI ran: {out}");
    assert_eq!(
        std::fs::read_to_string(t.path().join("src/lib.rs")).unwrap(),
        LIB
    );
    assert!(
        out.contains("· not run: bubblewrap is not available"),
        "{out}"
    );
    assert!(out.contains("runs of this agent refuse to start"), "{out}");
}
