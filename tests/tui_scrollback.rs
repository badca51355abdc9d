//! The whole log in the TUI, from its file: a candidate that printed far
//! more than the screen keeps (the ring holds the last 2,000 lines) can be
//! read from its first line (`g`), paged through, and followed again
//! (`G`). The real binary in tmux, on a recorded run (`rascal attach`).

mod common;
use common::tmux::Tmux;
use common::{code, command_agents, stdout, TestRepo};

#[test]
fn g_reads_the_log_from_its_first_line_and_capital_g_returns_to_the_tail() {
    let config = format!(
        "{}launcher: process\nstrategy: {{ agents: [chatty] }}\n",
        command_agents(&[(
            "chatty",
            "echo FIRST-LINE-MARKER; seq 2 12000 | sed \"s/^/chatty line /\"; echo LAST-LINE-MARKER"
        )])
    );
    let t = TestRepo::new(&[("README.md", "x\n"), (".rascal/config.yaml", &config)]);
    let out = t.rascal(&["run", "talk a lot", "--headless", "--quiet"]);
    let text = stdout(&out);
    assert!(code(&out) <= 1, "{text}");
    let run = text
        .split("replay: rascal show ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("run id")
        .to_string();
    let home = std::env::var("HOME").unwrap_or_default();
    let tmux = Tmux::start(
        "scrollback",
        120,
        40,
        &format!("HOME='{home}'"),
        &format!(
            "cd {} && {} attach {run}",
            t.path().display(),
            common::bin().display()
        ),
    );
    tmux.wait_for("the tail is shown", &["LAST-LINE-MARKER"]);
    let screen = tmux.capture();
    assert!(!screen.contains("FIRST-LINE-MARKER"), "{screen}");

    // `g`: the first line of the log, 12,000 lines up, read from the file.
    tmux.keys(&["g"]);
    let screen = tmux.wait_for("g shows the log's first line", &["FIRST-LINE-MARKER"]);
    assert!(screen.contains("chatty line 2"), "{screen}");
    assert!(!screen.contains("LAST-LINE-MARKER"), "{screen}");

    // Paging down moves through the file.
    tmux.keys(&["PageDown", "PageDown", "PageDown"]);
    tmux.wait_gone("paging moves on", &["FIRST-LINE-MARKER"]);

    // `G`: back to the tail, following.
    tmux.keys(&["G"]);
    let screen = tmux.wait_for("G returns to the tail", &["LAST-LINE-MARKER"]);
    assert!(!screen.contains("FIRST-LINE-MARKER"), "{screen}");
}
