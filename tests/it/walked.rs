//! docs/guide.md "Worked examples", run as written: every ```sh block
//! marked `<!-- walked: NAME -->` is played in order, in one shell, from an
//! empty directory, with the real binary on PATH (scripted and `command`
//! agents, bubblewrap, pytest, Python's unittest, the real Docker engine
//! with an image the block builds itself). Each block's output must hold
//! the lines the guide quotes after it, and the block its exit code.

use crate::common::{self, bin};
use std::process::Command;

/// What each example must print, and the exit code of its last command.
const EXPECTED: &[(&str, &[&str], i32)] = &[
    ("pytest", &["Python (test_prices.py, pytest)"], 0),
    (
        "two-agents",
        &[
            "test_prices.py:5: test_total: assert 2 == 3",
            "not run: the base's own tests",
            "new tests: 1 of 1 fail at the base and pass here",
            "pick: right",
            "run verdict PASS (exit 0)",
        ],
        0,
    ),
    (
        "retry",
        &["state: run PASS · right PASS · hasty PASS", "pick: right"],
        0,
    ),
    (
        "holdout",
        &["held-out tests passed", "run verdict PASS (exit 0)"],
        0,
    ),
    (
        "plan",
        &[
            "none met by the unchanged base",
            // Who approved: git's author variables, as git would sign.
            "plan approved by Walker <walker@example.com>",
            "✓ criteria - [x] a test of discount",
            "run verdict PASS (exit 0)",
        ],
        0,
    ),
    ("combine", &["pick: combined"], 0),
    (
        "unittest",
        &[
            "Python (test_ledger.py, unittest)",
            "base tests: 1/1 pass on this change",
            "run verdict PASS (exit 0)",
        ],
        0,
    ),
    (
        "docker",
        &[
            "image ledger-agent:local on the engine",
            "run verdict PASS (exit 0)",
        ],
        0,
    ),
];

/// The marked blocks of the guide, in order: (name, script).
fn blocks(guide: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = guide;
    while let Some(at) = rest.find("<!-- walked: ") {
        rest = &rest[at + "<!-- walked: ".len()..];
        let name = rest[..rest.find(" -->").expect("a closed marker")].to_string();
        let open = rest.find("```sh\n").expect("a sh block after the marker") + "```sh\n".len();
        let close = rest[open..].find("```").expect("a closed block") + open;
        out.push((name, rest[open..close].to_string()));
        rest = &rest[close..];
    }
    out
}

/// Whether a program answers `--version`.
fn answers(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_guides_worked_examples_run_as_written() {
    let root = env!("CARGO_MANIFEST_DIR");
    let guide = std::fs::read_to_string(format!("{root}/docs/guide.md")).unwrap();
    let mut walked = blocks(&guide);
    let names: Vec<&str> = walked.iter().map(|(n, _)| n.as_str()).collect();
    let expected: Vec<&str> = EXPECTED.iter().map(|(n, _, _)| *n).collect();
    assert_eq!(
        names, expected,
        "the guide's examples and this test's table"
    );
    if !common::bwrap() {
        return;
    }
    if !answers("pytest") {
        common::skip(
            "RASCAL_REQUIRE_TOOLCHAINS",
            "pytest is missing (apt-get install python3-pytest)",
        );
        return;
    }
    if common::docker::engine().is_none() || !answers("docker") {
        // The docker example is the last: the others still run.
        walked.retain(|(n, _)| n != "docker");
    }

    let tmp = tempfile::tempdir().unwrap();
    let path_dir = tmp.path().join("bin");
    std::fs::create_dir_all(&path_dir).unwrap();
    std::os::unix::fs::symlink(bin(), path_dir.join("rascal")).unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut script = String::new();
    for (name, body) in &walked {
        script.push_str(&format!(
            "echo '@@@ begin {name}'\n{body}echo \"@@@ end {name} $?\"\n"
        ));
    }
    let path = format!(
        "{}:{}",
        path_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(&work)
        .env("PATH", path)
        .env("HOME", tmp.path())
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env("NO_COLOR", "1")
        .env("GIT_AUTHOR_NAME", "Walker")
        .env("GIT_AUTHOR_EMAIL", "walker@example.com")
        .env("GIT_COMMITTER_NAME", "Walker")
        .env("GIT_COMMITTER_EMAIL", "walker@example.com")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for (name, _) in &walked {
        let begin = format!("@@@ begin {name}\n");
        let start = text
            .find(&begin)
            .unwrap_or_else(|| panic!("{name} did not start:\n{text}"));
        let section = &text[start..];
        let end_mark = format!("@@@ end {name} ");
        let end = section
            .find(&end_mark)
            .unwrap_or_else(|| panic!("{name} did not end:\n{section}"));
        let (body, tail) = section.split_at(end);
        let code: i32 = tail[end_mark.len()..]
            .lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .expect("an exit code");
        let (_, lines, want) = EXPECTED.iter().find(|(n, _, _)| n == name).unwrap();
        assert_eq!(
            code, *want,
            "example `{name}` ended with exit {code}:\n{body}"
        );
        for line in *lines {
            assert!(
                body.contains(line),
                "example `{name}` does not print `{line}`:\n{body}"
            );
        }
    }
}
