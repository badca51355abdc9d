//! The run store under faults: a store that fills up during a run stops
//! the run (agents stopped, exit 2) and never prints a verdict it could
//! not record; a store that cannot be written is still read by `list` and
//! `show`. The store sits on a real tiny tmpfs mounted over `.git/rascal`
//! (skipped with the reason where mounting is not allowed, unless
//! RASCAL_REQUIRE_MOUNT is set, as CI does).

use crate::common;
use common::{code, command_agents, stderr, stdout, TestRepo};
use std::path::Path;
use std::process::Command;

/// A tmpfs of `size` mounted at `dir`, unmounted on drop.
struct Mount(std::path::PathBuf);

impl Mount {
    fn tmpfs(dir: &Path, size: &str) -> Option<Mount> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            common::skip(
                "RASCAL_REQUIRE_MOUNT",
                "cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN)",
            );
            return None;
        }
        Some(Mount(dir.to_path_buf()))
    }

    fn read_only(&self) {
        let ok = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&self.0)
            .status()
            .unwrap();
        assert!(ok.success());
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn flood_repo(script: &str) -> TestRepo {
    let config = format!(
        "{}launcher: process\nstrategy: {{ agents: [flood] }}\n",
        command_agents(&[("flood", script)])
    );
    TestRepo::new(&[("README.md", "x\n"), (".rascal/config.yaml", &config)])
}

/// Output on both streams by turns: many small log segments, each a
/// journal row.
const CHOPPY: &str = "i=0; while [ $i -lt 20000 ]; do echo \"log line number $i\"; echo \"err $i\" >&2; i=$((i+1)); done; echo done > out.txt";

#[test]
fn a_store_that_fills_up_stops_the_run_and_prints_no_verdict_then_reads_read_only() {
    if !common::bwrap() {
        return;
    }
    let t = flood_repo(CHOPPY);
    let store_dir = t.path().join(".git/rascal");
    let Some(mount) = Mount::tmpfs(&store_dir, "400k") else {
        return;
    };
    let out = t.rascal(&["run", "add out.txt", "--headless"]);
    let (o, e) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), 2, "stdout:\n{}\nstderr:\n{e}", tail(&o));
    assert!(
        !o.contains("verdict PASS") && !o.contains("run PASS") && !o.contains("(exit 0)"),
        "a verdict that could not be recorded was printed:\n{}",
        tail(&o)
    );
    // It says what happened and why: the record could not be written
    // because the disk is full (SQLite's or the kernel's words for it).
    assert!(
        format!("{o}{e}").contains("the run record could not be written"),
        "says what:\n{}\n{e}",
        tail(&o)
    );
    let full = ["database or disk is full", "No space left on device"];
    assert!(
        full.iter().any(|w| e.contains(w)),
        "says why (one of {full:?}):\n{e}"
    );

    // Read-only now: list and show still read what was recorded.
    mount.read_only();
    let list = t.rascal(&["list"]);
    assert_eq!(code(&list), 0, "{}", stderr(&list));
    let run = stdout(&list)
        .lines()
        .find(|l| l.starts_with("r-"))
        .and_then(|l| l.split_whitespace().next())
        .map(String::from)
        .expect("the run is listed");
    assert!(
        stderr(&list).contains("cannot be written"),
        "{}",
        stderr(&list)
    );
    let show = t.rascal(&["show", &run]);
    // A run without a recorded end is never a PASS: exit 1.
    assert_eq!(code(&show), 1, "{}", stderr(&show));
    assert!(
        stdout(&show).contains("log line number 1"),
        "{}",
        stdout(&show)
    );
}

#[test]
fn a_log_file_that_cannot_be_written_stops_the_run_with_exit_2() {
    if !common::bwrap() {
        return;
    }
    let t = flood_repo("seq 100000 | sed 's/^/log line number /'; echo done > out.txt");
    // The runs' files (the agents' logs) on a tiny file system; the
    // workspaces and the store elsewhere.
    let Some(_mount) = Mount::tmpfs(&t.files().join("runs"), "256k") else {
        return;
    };
    let out = t.rascal(&["run", "add out.txt", "--headless"]);
    let (o, e) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), 2, "stdout:\n{}\nstderr:\n{e}", tail(&o));
    assert!(
        !o.contains("verdict PASS") && !o.contains("(exit 0)"),
        "{}",
        tail(&o)
    );
    assert!(
        format!("{o}{e}").contains("could not write the log file"),
        "says which file and why:\n{}\n{e}",
        tail(&o)
    );
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}
