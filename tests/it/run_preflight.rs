//! `rascal run` checks its agents before it starts, as `doctor` does
//! (issue 31, item 4): a program missing from the base commit or PATH, a
//! path the sandbox cannot see, an unset credential — each one line, exit
//! 2, and nothing recorded.

use crate::common;
use common::{code, stderr, stdout, TestRepo};
use std::process::Command;

/// Run `rascal run` with `agents` in `t`, with the variable the test
/// expects unset.
fn run(t: &TestRepo, agents: &str) -> std::process::Output {
    Command::new(common::bin())
        .args(["run", "fix the bug", "--headless", "--agent", agents])
        .current_dir(t.path())
        .env("NO_COLOR", "1")
        .env_remove("RASCAL_PREFLIGHT_TOKEN")
        .output()
        .unwrap()
}

#[test]
fn a_run_whose_agents_cannot_work_is_refused_with_one_line_per_problem() {
    if !common::bwrap() {
        return;
    }
    // A script outside the repository, which the sandbox does not show.
    let outside = tempfile::Builder::new()
        .prefix("rascal-agents-")
        .tempdir()
        .unwrap();
    let script = outside.path().join("fix.sh");
    std::fs::write(&script, "echo fixed > fixed.txt\n").unwrap();
    let config = format!(
        "agents:\n  uncommitted: {{ runtime: command, command: [\"./agents/fix.sh\"] }}\n  \
         elsewhere: {{ runtime: command, command: [\"sh\", \"{}\"] }}\n  \
         keyless: {{ runtime: command, command: [\"sh\", \"-c\", \"true\"], env: [RASCAL_PREFLIGHT_TOKEN] }}\n",
        script.display()
    );
    let t = TestRepo::new(&[(".rascal/config.yaml", config.as_str()), ("a.txt", "a\n")]);
    // In the working tree, not in the base commit.
    t.write("agents/fix.sh", "#!/bin/sh\necho fixed > fixed.txt\n");

    let o = run(&t, "uncommitted,elsewhere,keyless");
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{}{err}", stdout(&o));
    assert!(
        err.starts_with("rascal: error: the run was not started: 3 problems"),
        "{err}"
    );
    let line = |needle: &str| {
        err.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?}: {err}"))
            .to_string()
    };
    assert!(
        line("agent `uncommitted`").contains("`./agents/fix.sh` is not in the base commit"),
        "{err}"
    );
    let elsewhere = line("agent `elsewhere`");
    assert!(
        elsewhere.contains(&script.display().to_string())
            && elsewhere.contains("outside what the agent's sandbox shows"),
        "{err}"
    );
    assert!(
        line("agent `keyless`").contains("$RASCAL_PREFLIGHT_TOKEN is not set"),
        "{err}"
    );
    assert!(!err.contains("^J"), "{err}");
    // Nothing was recorded.
    let list = stdout(&t.rascal(&["list"]));
    assert!(list.starts_with("no runs yet"), "{list}");
}

#[test]
fn the_same_agents_run_once_their_problems_are_fixed() {
    if !common::bwrap() {
        return;
    }
    let t = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            "agents:\n  fix: { runtime: command, command: [\"./agents/fix.sh\"] }\n",
        ),
        ("a.txt", "a\n"),
    ]);
    t.write("agents/fix.sh", "#!/bin/sh\necho fixed > fixed.txt\n");
    let o = run(&t, "fix");
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    // Committed, and executable in the base commit.
    use std::os::unix::fs::PermissionsExt;
    let p = t.path().join("agents/fix.sh");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    t.commit_all("the agent's script");
    let o = run(&t, "fix");
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
}
