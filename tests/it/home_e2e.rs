//! End to end, as a user at an 80×24 terminal: `rascal` with no arguments
//! opens the home screen on the repository's runs; `Enter` opens a run and
//! `q` comes back; `n` starts a new run from a prompt; from a run's screen
//! `E` opens the workspace in `$EDITOR` (the TUI suspends and resumes) and
//! `y` `p` copies its path through OSC 52; `D` removes a finished run's
//! workspaces. The real binary in tmux.

use crate::common;
use common::tmux::Tmux;
use common::{code, rascal_in, stdout};
use std::path::Path;

/// A kept demo repository with one finished run.
fn demo_repo() -> (tempfile::TempDir, String, String) {
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(common::bin())
        .args(["demo", "--keep", "--headless", "--fast"])
        .env("XDG_STATE_HOME", home.path())
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}");
    let run = text
        .split("replay: rascal show ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("run id")
        .to_string();
    let repo = text
        .split("kept the sample repository at ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("kept repository")
        .to_string();
    (home, run, repo)
}

#[test]
fn home_screen_opens_starts_jumps_out_and_deletes_at_80x24() {
    let (state, first, repo) = demo_repo();
    let bin = common::bin();
    let marks = tempfile::tempdir().unwrap();
    let editor = marks.path().join("editor.sh");
    let seen = marks.path().join("editor-saw");
    std::fs::write(
        &editor,
        format!(
            "#!/bin/sh\nprintf \"%s|%s|%s\" \"$1\" \"$(pwd)\" \"$GIT_CONFIG_KEY_0\" > {}\n",
            seen.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    let t = Tmux::start(
        "home",
        80,
        24,
        &format!(
            "XDG_STATE_HOME={} EDITOR={}",
            state.path().display(),
            editor.display()
        ),
        &format!("cd {repo} && {} ; echo RASCAL-EXIT=$?", bin.display()),
    );
    t.cmd(&["set", "-g", "set-clipboard", "on"]);

    // The home screen: the run, its state, the keys with `? help`.
    let s = t.wait_for("home", &["rascal-demo", "1 run", &first, "PASS"]);
    let bar = s.lines().rfind(|l| !l.trim().is_empty()).unwrap();
    assert!(bar.contains("?  help"), "status bar: {bar}\n{s}");
    assert!(s.contains("Add a `shout(name)`"), "{s}");

    // Enter opens the run's dashboard; q comes back home.
    t.keys(&["Enter"]);
    t.wait_for("run screen", &["finished PASS", "1 careful"]);
    t.keys(&["q"]);
    t.wait_for("home again", &["1 run", "RUN", "STATE"]);

    // n: a new run from a prompt, on the configured agents.
    t.keys(&["n"]);
    t.wait_for("new run dialog", &["new run", "Agents: careful, hasty"]);
    t.type_text("Add a wave function");
    t.keys(&["Enter"]);
    t.wait_for("the new run", &["task Add a wave function", "finished"]);

    // E: the editor opens on careful's workspace (the TUI suspends), and
    // the TUI comes back.
    t.keys(&["1", "E"]);
    t.wait_for("back from the editor", &["back from the editor"]);
    let saw = std::fs::read_to_string(&seen).expect("the editor ran");
    let parts: Vec<&str> = saw.split('|').collect();
    assert!(parts[0].ends_with("/careful"), "{saw}");
    assert!(Path::new(parts[0]).join("src/lib.rs").exists(), "{saw}");
    assert_eq!(
        std::fs::canonicalize(parts[0]).unwrap(),
        std::fs::canonicalize(parts[1]).unwrap(),
        "the editor runs in the workspace"
    );
    assert_eq!(
        parts[2], "core.fsmonitor",
        "git's fsmonitor is switched off"
    );

    // y p: the workspace path goes to the clipboard (tmux keeps it).
    t.keys(&["y"]);
    t.wait_for("copy dialog", &["the workspace path", "the tree id"]);
    t.keys(&["p"]);
    t.wait_for("copied", &["copied careful's workspace path"]);
    let buffer = String::from_utf8_lossy(&t.cmd(&["show-buffer"]).stdout).into_owned();
    assert_eq!(buffer, parts[0], "OSC 52 carried the path");

    // q: back home, with two runs.
    t.keys(&["q"]);
    t.wait_for("two runs", &["2 runs"]);

    // D on the first run (now second in the list): asks, then removes
    // its workspaces; its record stays.
    let ws = state.path().join("rascal");
    let first_ws = std::fs::read_dir(&ws)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("workspaces").join(&first))
        .find(|p| p.exists())
        .expect("the first run's workspaces");
    t.keys(&["j", "D"]);
    t.wait_for("delete dialog", &["Remove the workspaces of", &first]);
    t.keys(&["y"]);
    t.wait_for("removed", &["removed", "workspaces ("]);
    assert!(!first_ws.exists(), "{} still there", first_ws.display());

    t.keys(&["q"]);
    t.wait_for("quit", &["RASCAL-EXIT=0"]);
    let list = rascal_in(Path::new(&repo), &["list"]);
    assert!(stdout(&list).contains(&first), "the record stays");
    let _ = std::fs::remove_dir_all(&repo);
}

#[test]
fn rascal_with_no_arguments_and_no_terminal_prints_the_list() {
    let (_state, first, repo) = demo_repo();
    let out = rascal_in(Path::new(&repo), &[]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    assert!(text.contains("RUN") && text.contains(&first), "{text}");
    let _ = std::fs::remove_dir_all(&repo);
}
