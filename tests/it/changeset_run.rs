//! `rascal run` reads a candidate's change as a stream (issue 17): each file
//! of the workspace once, its content handed to the checks that read it and
//! written into the change tree from the same bytes, then let go. Nothing is
//! lost on the way: a hostile change of thousands of files fails under
//! `run` exactly where it fails under `check`.

use crate::common;
use common::{code, stderr, stdout, TestRepo};

const GUARDRAILS: &str = "guardrails:\n  - { name: secrets, builtin: secrets }\n  - { name: banned, patterns: ['dbg!\\('], scope: diff-only }\n";
const NO_PROCESS: &str = "permissions:\n  forbidden_imports: ['std::process']\n";

/// An agent (a shell script) that writes 6,000 new files, the last of
/// them in path order with a key at its end, a banned pattern into a file
/// of the base, and a forbidden import into a new file.
fn hostile_agent(key: &str) -> String {
    format!(
        "awk 'BEGIN {{ system(\"mkdir -p gen\"); for (i = 0; i < 6000; i++) {{ p = sprintf(\"gen/f%04d.rs\", i); print \"pub fn f\" i \"() -> u32 {{ \" i \" }}\" > p; close(p) }} }}' && \
         printf 'const KEY: &str = \"%s\";\\n' {key} >> gen/f5999.rs && \
         printf 'fn two() {{ dbg!(2); }}\\n' >> src/a.rs && \
         printf 'use std::process::Command;\\n' > src/run.rs"
    )
}

fn agents(script: &str) -> String {
    let sandbox = if common::bwrap() {
        ""
    } else {
        "sandbox: none, "
    };
    format!(
        "agents:\n  gen: {{ runtime: command, {sandbox}command: [\"sh\", \"-c\", {}] }}\nlauncher: process\n",
        serde_json::to_string(script).unwrap()
    )
}

/// (rule, path, line) of every issue of a report list.
fn issues(reports: &serde_json::Value) -> Vec<(String, String, Option<u64>)> {
    reports
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["issues"].as_array().cloned().unwrap_or_default())
        .map(|i| {
            (
                i["rule"].as_str().unwrap_or("").to_string(),
                i["path"].as_str().unwrap_or("").to_string(),
                i["line"].as_u64(),
            )
        })
        .collect()
}

#[test]
fn a_hostile_change_of_6000_files_fails_under_run_as_under_check() {
    let key = format!(
        "AKIA{}",
        common::rnd(17, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    );
    let t = TestRepo::new(&[
        ("src/a.rs", "fn a() {}\n"),
        (".rascal/config.yaml", &agents(&hostile_agent(&key))),
        (".rascal/guardrails.yaml", GUARDRAILS),
        (".rascal/permissions.yaml", NO_PROCESS),
    ]);
    let out = t.rascal(&["run", "write files", "--agent", "gen", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&out), stderr(&out)));
    assert_eq!(code(&out), 1, "{doc:#}");
    let cand = &doc["candidates"][0];
    assert_eq!(cand["verdict"], "fail", "{cand:#}");
    let found = issues(&cand["reports"]);
    let has = |rule: &str, path: &str, line: Option<u64>| {
        assert!(
            found
                .iter()
                .any(|(r, p, l)| r == rule && p == path && (line.is_none() || *l == line)),
            "{rule} at {path}:{line:?} in {found:#?}"
        )
    };
    has("secrets/aws-access-key-id", "gen/f5999.rs", Some(2));
    has("guardrails/banned", "src/a.rs", Some(2));
    has("permissions/forbidden-import", "src/run.rs", Some(1));
    assert!(!stdout(&out).contains(&key), "no secret in the report");
    // Every file is part of the change, and no check said it could not
    // read one.
    assert!(
        !found
            .iter()
            .any(|(r, _, _)| r.ends_with("unread") || r.ends_with("unscanned")),
        "{found:#?}"
    );

    // `rascal check` on the same files (written into the working tree)
    // finds the same.
    let script = hostile_agent(&key);
    let ok = std::process::Command::new("sh")
        .args(["-c", &script])
        .current_dir(t.path())
        .status()
        .unwrap();
    assert!(ok.success());
    let out = t.rascal(&["check", "--json"]);
    let check: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(code(&out), 1);
    assert_eq!(check["files_changed"], 6002, "{check:#}");
    let mut by_check = issues(&check["layers"]);
    let mut by_run: Vec<_> = found
        .into_iter()
        .filter(|(r, _, _)| by_check.iter().any(|(c, _, _)| c == r))
        .collect();
    by_check.sort();
    by_run.sort();
    assert_eq!(by_run, by_check, "run and check find the same");
}

#[test]
fn rascal_run_reads_each_file_of_the_change_once() {
    let ok = std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        common::skip(
            "RASCAL_REQUIRE_TOOLCHAINS",
            "strace does not run (apt-get install strace)",
        );
        return;
    }
    let script =
        "printf 'fn b() {}\\n' > src/new.rs && printf 'fn a() {}\\nfn two() {}\\n' > src/a.rs";
    let t = TestRepo::new(&[
        ("src/a.rs", "fn a() {}\n"),
        (".rascal/config.yaml", &agents(script)),
        (".rascal/guardrails.yaml", GUARDRAILS),
        (".rascal/permissions.yaml", NO_PROCESS),
    ]);
    let state = t.dir.path().join(".state-strace");
    let log = state.with_extension("log");
    let out = std::process::Command::new("strace")
        .args(["-f", "-y", "-e", "trace=open,openat,openat2", "-o"])
        .arg(&log)
        .arg(common::bin())
        .args(["run", "x", "--agent", "gen", "--json"])
        .env("XDG_STATE_HOME", &state)
        .env("NO_COLOR", "1")
        .current_dir(t.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let ws = std::path::PathBuf::from(doc["candidates"][0]["worktree"].as_str().unwrap());
    let text = std::fs::read_to_string(&log).unwrap();
    let count = |p: &str| {
        let name = format!("{}\"", ws.join(p).display());
        // rascal opens the workspace's files beneath it (openat2 on the
        // workspace's descriptor, the path relative to it).
        let beneath = format!("{}>, \"{p}\"", ws.display());
        text.lines()
            .filter(|l| {
                (l.contains(name.as_str())
                    || (l.contains("openat2(") && l.contains(beneath.as_str())))
                    && !l.contains("O_DIRECTORY")
            })
            .filter(|l| !l.contains("O_WRONLY") && !l.contains("O_RDWR"))
            .filter(|l| !l.contains("= -1"))
            .count()
    };
    // New: read once, by rascal (checks, digest, blob). Modified: read
    // once by rascal for everything else; git's status pass hashes it to
    // learn that it changed, and its rename detection reads it as a
    // possible rewrite. Before: (2, 6).
    assert_eq!(
        (count("src/new.rs"), count("src/a.rs")),
        (1, 3),
        "{}",
        stdout(&out)
    );
}
