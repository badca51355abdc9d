//! One path per job (issue 49): the same human decisions taken in the TUI
//! and on the command line leave the same rows in the run's journal. A
//! finished demo run is copied; on one copy `rascal override` and `rascal
//! escalate` record two decisions, on the other the TUI (`rascal attach`
//! in a real terminal) takes the same two with its keys. The journal rows
//! each adds — kind and body, their times aside — are compared.

use crate::common::tmux::Tmux;
use crate::demo::{forget, kept_of, run_id};
use std::path::Path;
use std::process::Command;

/// The run's journal rows from row `from` on: kind and body, with every
/// time in the body left out (they differ by when a key was pressed).
fn rows_after(repo: &Path, run: &str, from: usize) -> Vec<(String, serde_json::Value)> {
    let db = repo.join(".git/rascal/rascal.db");
    let conn = rusqlite::Connection::open(db).unwrap();
    let rows: Vec<(String, String)> = conn
        .prepare("SELECT kind, json FROM events WHERE run_id = ?1 ORDER BY seq")
        .unwrap()
        .query_map([run], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    rows.into_iter()
        .skip(from)
        .map(|(kind, json)| {
            let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
            untimed(&mut v);
            (kind, v)
        })
        .collect()
}

fn untimed(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.retain(|k, _| !matches!(k.as_str(), "at" | "at_ms" | "time" | "ts"));
            m.values_mut().for_each(untimed);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(untimed),
        _ => {}
    }
}

fn rascal(repo: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rascal"))
        .arg("-C")
        .arg(repo)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn the_tui_and_the_cli_record_the_same_decisions_as_the_same_rows() {
    let out = Command::new(env!("CARGO_BIN_EXE_rascal"))
        .args(["demo", "--headless", "--keep", "--fast"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (cli, run) = (kept_of(&text), run_id(&text));
    let tui = cli.with_file_name(format!(
        "{}-tui",
        cli.file_name().unwrap().to_string_lossy()
    ));
    let copied = Command::new("cp")
        .arg("-a")
        .arg(&cli)
        .arg(&tui)
        .status()
        .unwrap();
    assert!(copied.success());
    let before = rows_after(&cli, &run, 0).len();
    assert_eq!(before, rows_after(&tui, &run, 0).len());

    // On the command line.
    let o = rascal(
        &cli,
        &[
            "override",
            &run,
            "hasty",
            "--layer",
            "guardrails",
            "--check",
            "build",
            "--reason",
            "flaky offline build",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let e = rascal(
        &cli,
        &["escalate", &run, "careful", "--note", "unsure of the API"],
    );
    assert_eq!(
        e.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&e.stderr)
    );

    // In the TUI, on the copy: the same two, by keys.
    let t = Tmux::start(
        "one-path",
        200,
        50,
        "",
        &format!(
            "{} -C {} attach {run}; echo RASCAL-EXIT=$?",
            env!("CARGO_BIN_EXE_rascal"),
            tui.display()
        ),
    );
    t.wait_for("the run's record", &["1 careful", "2 hasty"]);
    t.keys(&["2", "l"]);
    t.keys(&["o"]);
    t.wait_for("override dialog", &["Override", "Reason (required)"]);
    t.type_text("flaky offline build");
    t.keys(&["Enter"]);
    t.wait_for("override recorded", &["recorded: override hasty"]);
    t.keys(&["1", "!"]);
    t.wait_for("escalate dialog", &["Escalate careful", "Note (required)"]);
    t.type_text("unsure of the API");
    t.keys(&["Enter"]);
    t.wait_for("escalated", &["recorded: escalate careful"]);
    t.keys(&["q"]);
    t.wait_for("quit", &["RASCAL-EXIT="]);

    let (by_cli, by_tui) = (
        rows_after(&cli, &run, before),
        rows_after(&tui, &run, before),
    );
    assert_eq!(by_cli.len(), 2, "two decisions, two rows: {by_cli:#?}");
    assert_eq!(
        by_cli, by_tui,
        "the CLI's rows (left) and the TUI's (right) differ"
    );
    // And they say what was decided.
    let said = format!("{by_cli:?}");
    for w in [
        "flaky offline build",
        "unsure of the API",
        "hasty",
        "careful",
    ] {
        assert!(said.contains(w), "{w}: {said}");
    }
    forget(&cli);
    forget(&tui);
}
