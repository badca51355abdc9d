//! A closed terminal ends rascal (issue 31, item 1): after the home screen
//! has opened a run and come back, and while a run's screen has a
//! candidate running in its sandbox, killing the tmux session (the
//! terminal hangs up) leaves no rascal and no sandbox behind within 5 s.
//! The real binary in tmux.

use crate::common;
use common::tmux::Tmux;
use common::{code, stdout, survivors_after, TestRepo};
use std::path::Path;
use std::time::{Duration, Instant};

/// Live rascal processes whose working directory is `dir`.
fn rascals_in(dir: &Path) -> Vec<u32> {
    let dir = dir.canonicalize().unwrap();
    let bin = common::bin();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        if stat.contains(") Z ") {
            continue;
        }
        let exe = std::fs::read_link(e.path().join("exe")).ok();
        let cwd = std::fs::read_link(e.path().join("cwd")).ok();
        if exe.as_deref() == Some(bin.as_path()) && cwd.as_deref() == Some(dir.as_path()) {
            out.push(pid);
        }
    }
    out
}

/// Poll until no rascal runs in `dir`, for at most `secs`; the survivors.
fn rascals_after(dir: &Path, secs: u64) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let left = rascals_in(dir);
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What `pid` is doing, for a failure message.
fn describe(pids: &[u32]) -> String {
    pids.iter()
        .map(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            format!(
                "{p}: {}",
                stat.split(") ")
                    .nth(1)
                    .unwrap_or("")
                    .split(' ')
                    .next()
                    .unwrap_or("")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn kill_session(t: &Tmux) {
    let o = t.cmd(&["kill-session", "-t", "e2e"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn closing_the_terminal_after_home_opened_a_run_ends_rascal() {
    let state = tempfile::tempdir().unwrap();
    let t_repo = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            "agents:\n  quick: { runtime: scripted, steps: [{ do: write, path: b.txt, content: \"b\\n\" }] }\nstrategy: { agents: [quick] }\n",
        ),
        ("a.txt", "a\n"),
    ]);
    let o = std::process::Command::new(common::bin())
        .args(["run", "add b", "--headless"])
        .current_dir(t_repo.path())
        .env("XDG_STATE_HOME", state.path())
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let t = Tmux::start(
        "hangup-home",
        100,
        30,
        &format!("XDG_STATE_HOME={}", state.path().display()),
        &format!(
            "cd {} && {}",
            t_repo.path().display(),
            common::bin().display()
        ),
    );
    t.wait_for("home", &["1 run", "PASS"]);
    t.keys(&["Enter"]);
    t.wait_for("run screen", &["finished PASS"]);
    t.keys(&["q"]);
    t.wait_for("home again", &["1 run", "STATE"]);
    assert_eq!(
        rascals_in(t_repo.path()).len(),
        1,
        "rascal runs in the terminal"
    );

    kill_session(&t);
    let left = rascals_after(t_repo.path(), 5);
    assert!(
        left.is_empty(),
        "rascal outlived its terminal: {}",
        describe(&left)
    );
}

#[test]
fn closing_the_terminal_of_a_live_run_ends_rascal_and_its_sandboxes() {
    if !common::bwrap() {
        return;
    }
    let marker = format!("rascal-hangup-{}", std::process::id());
    let state = tempfile::tempdir().unwrap();
    let config = format!(
        "agents:\n  slow: {{ runtime: command, command: [\"sh\", \"-c\", \"sleep 120 # {marker}\"] }}\nstrategy: {{ agents: [slow] }}\n"
    );
    let t_repo = TestRepo::new(&[(".rascal/config.yaml", config.as_str()), ("a.txt", "a\n")]);
    let t = Tmux::start(
        "hangup-run",
        100,
        30,
        &format!("XDG_STATE_HOME={}", state.path().display()),
        &format!(
            "cd {} && {} run wait",
            t_repo.path().display(),
            common::bin().display()
        ),
    );
    t.wait_for("run screen", &["RUNNING"]);
    // The agent is up in its sandbox.
    let deadline = Instant::now() + Duration::from_secs(60);
    while common::procs_with(&marker).is_empty() {
        assert!(Instant::now() < deadline, "the agent never started");
        std::thread::sleep(Duration::from_millis(50));
    }

    kill_session(&t);
    let left = rascals_after(t_repo.path(), 5);
    assert!(
        left.is_empty(),
        "rascal outlived its terminal: {}",
        describe(&left)
    );
    let sandboxes = survivors_after(&marker, 5);
    assert!(
        sandboxes.is_empty(),
        "sandboxes outlived the terminal: {}",
        describe(&sandboxes)
    );
}
