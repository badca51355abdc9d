//! The whole log in the TUI, from its file: a candidate that printed far
//! more than the screen keeps (the ring holds the last 2,000 lines) can be
//! read from its first line (`g`), paged through, and followed again
//! (`G`), and filtered with `/` over the whole file, not only the lines
//! in memory. The real binary in tmux, on a recorded run (`rascal attach`).

use crate::common;
use common::tmux::Tmux;
use common::{code, command_agents, stdout, TestRepo};

/// A recorded run of one `command` agent printing `script`, attached in
/// tmux; the screen once `ready` shows.
fn attached(name: &str, script: &str, ready: &str) -> (TestRepo, Tmux) {
    let config = format!(
        "{}launcher: process\nstrategy: {{ agents: [chatty] }}\n",
        command_agents(&[("chatty", script)])
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
        name,
        120,
        40,
        &format!("HOME='{home}'"),
        &format!(
            "cd {} && {} attach {run}",
            t.path().display(),
            common::bin().display()
        ),
    );
    tmux.wait_for("the tail is shown", &[ready]);
    (t, tmux)
}

#[test]
fn g_reads_the_log_from_its_first_line_and_capital_g_returns_to_the_tail() {
    let (_t, tmux) = attached(
        "scrollback",
        "echo FIRST-LINE-MARKER; seq 2 12000 | sed \"s/^/chatty line /\"; echo LAST-LINE-MARKER",
        "LAST-LINE-MARKER",
    );
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

#[test]
fn slash_filters_the_whole_log_from_its_file() {
    let (_t, tmux) = attached(
        "wholefilter",
        "echo needle-EARLY; seq 2 6000 | sed \"s/^/chatty line /\"; echo Needle-MIDDLE; \
         seq 6001 12000 | sed \"s/^/chatty line /\"; echo NEEDLE-LATE; echo LAST-LINE-MARKER",
        "LAST-LINE-MARKER",
    );
    let screen = tmux.capture();
    assert!(!screen.contains("needle-EARLY"), "{screen}");

    // A query in lower case ignores case; Enter searches the whole file.
    tmux.keys(&["/"]);
    tmux.type_text("needle");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for(
        "the filter shows the matches of the whole log",
        &[
            "needle-EARLY",
            "Needle-MIDDLE",
            "NEEDLE-LATE",
            "3 matches in",
        ],
    );
    assert!(!screen.contains("chatty line"), "{screen}");
    assert_eq!(screen.matches("NEEDLE-LATE").count(), 1, "{screen}");

    // A capital letter makes it exact.
    tmux.keys(&["/"]);
    tmux.keys(&["BSpace"; 6]);
    tmux.type_text("Needle");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("an exact query", &["1 match in"]);
    assert!(screen.contains("Needle-MIDDLE"), "{screen}");
    assert!(!screen.contains("needle-EARLY"), "{screen}");

    // Thousands of matches: the newest first, `g` the oldest, read from
    // the file a window at a time.
    tmux.keys(&["/"]);
    tmux.keys(&["BSpace"; 6]);
    tmux.type_text("chatty line 1");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for(
        "the newest matches",
        &["chatty line 12000", "3,111 matches in"],
    );
    assert!(!screen.contains("LAST-LINE-MARKER"), "{screen}");
    tmux.keys(&["g"]);
    let screen = tmux.wait_for(
        "g shows the first match",
        &["chatty line 10 ", "chatty line 19 "],
    );
    assert!(!screen.contains("chatty line 12000"), "{screen}");
    assert!(!screen.contains("chatty line 2 "), "{screen}");
    tmux.keys(&["PageDown"; 20]);
    tmux.wait_for("paging moves through the matches", &["chatty line 1"]);
    tmux.wait_gone("past the first matches", &["chatty line 10 "]);

    // Esc in the prompt clears the filter: the tail again.
    tmux.keys(&["/", "Escape"]);
    let screen = tmux.wait_for("the unfiltered tail", &["LAST-LINE-MARKER"]);
    assert!(screen.contains("chatty line 12000"), "{screen}");
}
