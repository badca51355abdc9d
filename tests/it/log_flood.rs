//! A log flood, counted at both ends: every line an agent prints reaches
//! its log file, the journal's segments account for each one, and
//! `rascal show` prints them all, in order — none lost, none repeated,
//! none reordered — while the journal holds segments, not a row per line.

use crate::common;
use common::{code, command_agents, stdout, TestRepo};

const LINES: usize = 100_000;

#[test]
fn every_line_of_a_flood_is_kept_and_shown_in_order() {
    let config = format!(
        "{}launcher: process\nstrategy: {{ agents: [flood, other] }}\n",
        command_agents(&[
            ("flood", &format!("seq {LINES} | sed 's/^/flood /'")),
            ("other", &format!("seq {LINES} | sed 's/^/other /' >&2")),
        ])
    );
    let t = TestRepo::new(&[("README.md", "x\n"), (".rascal/config.yaml", &config)]);
    let out = t.rascal(&["run", "flood", "--headless"]);
    let live = stdout(&out);
    assert!(
        code(&out) <= 1,
        "{}",
        &live[live.len().saturating_sub(2000)..]
    );
    let run = live
        .split("replay: rascal show ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("run id")
        .to_string();
    // Live: every line printed once, in order, per candidate and stream.
    for (who, bar) in [("flood", "│"), ("other", "┃")] {
        let got = numbers(&live, who, bar);
        assert_eq!(got.len(), LINES, "{who}: live");
        assert!(
            got.iter().enumerate().all(|(i, n)| *n == i + 1),
            "{who}: order"
        );
    }
    // Replayed from the log files: the same.
    let shown = stdout(&t.rascal(&["show", &run]));
    for (who, bar) in [("flood", "│"), ("other", "┃")] {
        let got = numbers(&shown, who, bar);
        assert_eq!(got.len(), LINES, "{who}: show");
        assert!(
            got.iter().enumerate().all(|(i, n)| *n == i + 1),
            "{who}: order"
        );
    }
    // The journal: segments whose line counts add up, far fewer rows
    // than lines.
    let db = rusqlite::Connection::open(t.path().join(".git/rascal/rascal.db")).unwrap();
    let (rows, lines): (i64, i64) = db
        .query_row(
            "SELECT count(*), sum(json_extract(json, '$.lines')) FROM events
             WHERE run_id = ?1 AND kind = 'log_segment'",
            [&run],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(lines as usize, 2 * LINES);
    assert!(
        rows < (2 * LINES / 100) as i64,
        "{rows} segments for {} lines",
        2 * LINES
    );
    let per_line: i64 = db
        .query_row(
            "SELECT count(*) FROM events WHERE run_id = ?1 AND kind = 'log'",
            [&run],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        per_line < 10,
        "{per_line} log rows: lines are not journalled one by one"
    );
    // The files on disk hold exactly the lines.
    let log = t
        .files()
        .join("runs")
        .join(&run)
        .join("flood")
        .join("agent.log");
    let text = std::fs::read_to_string(log).unwrap();
    assert_eq!(text.lines().count(), LINES);
}

/// The numbers of `who`'s lines on stream `bar`, in the order printed.
fn numbers(out: &str, who: &str, bar: &str) -> Vec<usize> {
    out.lines()
        .filter_map(|l| {
            let (tag, rest) = l.split_once(&format!(" {bar} "))?;
            if !tag.starts_with(&format!("[{who}")) {
                return None;
            }
            rest.strip_prefix(&format!("{who} "))?.parse().ok()
        })
        .collect()
}

/// A hostile agent that knows where its log is (beside its instruction
/// file) and tries to rewrite what it printed: the run directory is
/// read-only in its sandbox, so the write fails, the record verifies, and
/// `show` prints what it really printed.
#[test]
fn an_agent_cannot_rewrite_its_own_log() {
    if !common::bwrap() {
        return;
    }
    let script = "echo 'tests: 3 failed'; \
        log=\"$(dirname \"$RASCAL_INSTRUCTION_FILE\")/agent.log\"; \
        (printf 'tests: 0 failed\\n' > \"$log\") 2>/dev/null && echo overwrote || echo write-refused; \
        (printf 'forged\\n' >> \"$log\") 2>/dev/null && echo appended || echo append-refused";
    let config = format!(
        "{}launcher: process\nstrategy: {{ agents: [sly] }}\n",
        command_agents(&[("sly", script)])
    );
    let t = TestRepo::new(&[("README.md", "x\n"), (".rascal/config.yaml", &config)]);
    let out = t.rascal(&["run", "tamper", "--headless"]);
    let live = stdout(&out);
    let run = live
        .split("replay: rascal show ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("run id")
        .to_string();
    assert!(
        live.contains("write-refused") && live.contains("append-refused"),
        "{live}"
    );
    let v = t.rascal(&["verify", &run]);
    assert_eq!(code(&v), 0, "{}", stdout(&v));
    let shown = stdout(&t.rascal(&["show", &run]));
    // The agent's log lines (its command line, also printed, names the
    // forgeries it tried).
    let logged: Vec<&str> = shown.lines().filter(|l| l.contains(" │ ")).collect();
    assert!(
        logged.iter().any(|l| l.ends_with("tests: 3 failed")),
        "{shown}"
    );
    assert!(
        !logged
            .iter()
            .any(|l| l.ends_with("tests: 0 failed") || l.ends_with("forged")),
        "{shown}"
    );
}
