//! The real binary in a real terminal: a private tmux server per test,
//! keys sent as a user would, the pane captured and polled against a
//! deadline (never fixed sleeps).

use std::process::Command;
use std::time::{Duration, Instant};

pub struct Tmux {
    pub socket: String,
}

impl Tmux {
    /// A fresh server running `script` (through `sh -c`) in a `w`×`h`
    /// window, in a clean environment: nothing from `cargo test`
    /// (CARGO_TARGET_DIR…) leaks into what rascal runs. `extra` is added
    /// to that environment (`NAME='value' …`).
    pub fn start(name: &str, w: u16, h: u16, extra: &str, script: &str) -> Tmux {
        assert!(
            Command::new("tmux").arg("-V").output().is_ok(),
            "tmux is needed for this test (.ci/run installs it)"
        );
        let t = Tmux {
            socket: format!("rascal-e2e-{name}-{}", std::process::id()),
        };
        let mut keep = String::new();
        for var in ["PATH", "HOME", "CARGO_HOME", "RUSTUP_HOME", "USER"] {
            if let Ok(v) = std::env::var(var) {
                keep.push_str(&format!("{var}='{v}' "));
            }
        }
        let line = format!("env -i {keep} {extra} TERM=xterm-256color sh -c '{script}'; sleep 300");
        let (w, h) = (w.to_string(), h.to_string());
        let out = t.cmd(&[
            "new-session",
            "-d",
            "-s",
            "e2e",
            "-x",
            &w,
            "-y",
            &h,
            "sh",
            "-c",
            &line,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        t
    }

    pub fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("running tmux (install it: apt-get install tmux)")
    }

    pub fn capture(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", "e2e"]).stdout).into_owned()
    }

    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            self.cmd(&["send-keys", "-t", "e2e", k]);
        }
    }

    pub fn type_text(&self, s: &str) {
        self.cmd(&["send-keys", "-t", "e2e", "-l", s]);
    }

    /// Esc, then wait for the dashboard (its columns' `following`) before
    /// the next key: sent together, Esc and a letter read as Alt-letter.
    pub fn back_to_dashboard(&self) {
        self.keys(&["Escape"]);
        self.wait_for("back to the dashboard", &["└ following"]);
    }

    /// Wait until no needle is on screen; fail with the screen if not.
    pub fn wait_gone(&self, step: &str, needles: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let screen = self.capture();
            if !needles.iter().any(|n| screen.contains(n)) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("step `{step}`: {needles:?} still on screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Wait until every needle is on screen; fail with the screen if not.
    pub fn wait_for(&self, step: &str, needles: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(240);
        loop {
            let screen = self.capture();
            if needles.iter().all(|n| screen.contains(n)) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("step `{step}`: {needles:?} not on screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}
