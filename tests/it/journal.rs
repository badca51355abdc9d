//! The tamper-evident journal, end to end: a run's record changed after it
//! was written (as a process an agent left behind could) is refused by
//! every command that reads it, named by `rascal verify`, and marked by
//! `rascal list`; an intact run publishes its chain head in the PR body.

use crate::common;
use common::{code, stderr, stdout, TestRepo};
use rusqlite::Connection;

const AGENTS: &str = r#"agents:
  good:
    runtime: scripted
    steps:
      - { do: say, text: "writing the new function" }
      - { do: write, path: src/b.rs, content: "pub fn b() -> u32 {\n    42\n}\n" }
  sneaky:
    runtime: scripted
    steps:
      - { do: write, path: src/b.rs, content: "pub fn b() -> u32 {\n    42\n}\n" }
      - { do: write, path: secret/key.txt, content: "hunter2\n" }
"#;

fn repo() -> TestRepo {
    let t = TestRepo::new(&[
        (".rascal/config.yaml", AGENTS),
        (
            ".rascal/permissions.yaml",
            "permissions:\n  denied_paths: ['secret/**']\n",
        ),
        ("src/a.rs", "pub fn a() {}\n"),
    ]);
    let mut cfg = t.repo.config().unwrap();
    cfg.set_str("user.name", "Tess Ter").unwrap();
    cfg.set_str("user.email", "tess@example.invalid").unwrap();
    t
}

/// Run both agents; the run id (good passes, sneaky fails on permissions).
fn run(t: &TestRepo) -> String {
    let o = t.rascal(&[
        "run",
        "make b return 42",
        "--agent",
        "good,sneaky",
        "--json",
    ]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let sneaky = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "sneaky")
        .unwrap()
        .clone();
    assert_eq!(sneaky["verdict"], "fail", "{sneaky:#}");
    doc["run"].as_str().unwrap().to_string()
}

fn db(t: &TestRepo) -> Connection {
    Connection::open(t.path().join(".git/rascal/rascal.db")).unwrap()
}

/// `run R: N events, chain intact, head H` → (N, H).
fn intact(t: &TestRepo, id: &str) -> (u64, String) {
    let o = t.rascal(&["verify", id]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    let rest = out
        .trim()
        .strip_prefix(&format!("run {id}: "))
        .unwrap_or_else(|| panic!("{out}"));
    let (n, rest) = rest.split_once(" events, chain intact, head ").unwrap();
    let (head, logs) = rest.trim().split_once("; ").unwrap();
    assert!(logs.ends_with("log segments match their files"), "{out}");
    let head = head.to_string();
    assert_eq!(head.len(), 64, "{out}");
    (n.parse().unwrap(), head)
}

#[test]
fn an_intact_run_verifies_and_its_pr_body_publishes_the_head() {
    let t = repo();
    let id = run(&t);
    let (n, head) = intact(&t, &id);
    let o = t.rascal(&["verify", &id, "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["chain"], "intact");
    assert_eq!(doc["events"], n);
    assert_eq!(doc["head"], head.as_str());

    let o = t.rascal(&["select", &id, "good"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let (n, head) = {
        let (m, h) = intact(&t, &id);
        assert_eq!(m, n + 1, "the decision is one more event in the chain");
        (m, h)
    };
    let line = format!("Journal: {n} events, chain head `{head}`");
    let md = stdout(&t.rascal(&["report", &id, "--format", "md"]));
    assert!(md.contains(&line), "{md}");

    let o = t.rascal(&["finalize", &id]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let body_path = stdout(&o)
        .lines()
        .find_map(|l| l.strip_prefix("PR body: ").map(str::to_string))
        .unwrap();
    let body = std::fs::read_to_string(body_path).unwrap();
    assert!(body.contains(&line), "{body}");
    assert!(
        body.contains(&format!("rascal verify {id} --expect {head}")),
        "{body}"
    );

    // The published head is in the chain, also once more events came.
    let o = t.rascal(&["escalate", &id, "--note", "a second look"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let o = t.rascal(&["verify", &id, "--expect", &head]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains(&format!("is the hash of event {n}")),
        "{}",
        stdout(&o)
    );
    // A head that is not in the chain fails.
    let o = t.rascal(&["verify", &id, "--expect", &"0".repeat(64)]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(
        stdout(&o).contains("is not in this run's chain"),
        "{}",
        stdout(&o)
    );

    let list = stdout(&t.rascal(&["list"]));
    assert!(!list.contains("TAMPERED"), "{list}");
}

#[test]
fn an_edited_log_file_is_named_by_verify_and_marked_by_show() {
    let t = repo();
    let id = run(&t);
    let log = t
        .files()
        .join("runs")
        .join(&id)
        .join("good")
        .join("agent.log");
    let text = std::fs::read_to_string(&log).unwrap();
    // The same length, other bytes: what an agent's leftover process
    // might do to make its output say something else.
    let forged: String = text
        .chars()
        .map(|c| if c == 'e' { 'E' } else { c })
        .collect();
    assert_ne!(forged, text, "the agent printed lines");
    let shown = stdout(&t.rascal(&["show", &id]));
    std::fs::write(&log, forged).unwrap();
    let o = t.rascal(&["verify", &id]);
    assert_ne!(code(&o), 0, "{}", stdout(&o));
    assert!(
        stdout(&o).contains("log segment at event")
            && stdout(&o).contains("was changed after it was recorded"),
        "{}",
        stdout(&o)
    );
    let after = stdout(&t.rascal(&["show", &id]));
    assert!(after.contains("cannot be shown"), "{after}");
    assert!(shown.contains("writing the new function"), "{shown}");
    assert!(
        !after.contains("writing thE nEw"),
        "forged lines shown: {after}"
    );
}

#[test]
fn a_rewritten_verdict_is_refused_everywhere_and_named() {
    let t = repo();
    let id = run(&t);
    // Selected while the record was honest.
    let o = t.rascal(&["select", &id, "sneaky", "--force", "--reason", "on purpose"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let (_, published) = intact(&t, &id);

    // A hostile process rewrites the record: the permissions report and
    // the candidate's verdict now say pass, the projections agree.
    let conn = db(&t);
    let first: i64 = conn
        .query_row(
            "SELECT MIN(n) FROM events WHERE run_id = ?1 AND candidate_id = 'sneaky'
             AND kind = 'report_landed' AND json LIKE '%\"layer\":\"permissions\"%'
             AND json LIKE '%\"status\":\"fail\"%'",
            [&id],
            |r| r.get(0),
        )
        .unwrap();
    let edited = conn
        .execute(
            "UPDATE events SET json = replace(json, '\"status\":\"fail\"', '\"status\":\"pass\"')
             WHERE run_id = ?1 AND candidate_id = 'sneaky' AND kind = 'report_landed'
             AND json LIKE '%\"layer\":\"permissions\"%'",
            [&id],
        )
        .unwrap();
    assert!(edited >= 1);
    let edited = conn
        .execute(
            "UPDATE events SET json = replace(json, '\"verdict\":\"fail\"', '\"verdict\":\"pass\"')
             WHERE run_id = ?1 AND candidate_id = 'sneaky' AND kind = 'candidate_finished'",
            [&id],
        )
        .unwrap();
    assert_eq!(edited, 1);
    conn.execute_batch(&format!(
        "DELETE FROM reports WHERE run_id = '{id}' AND layer = 'permissions';
         UPDATE candidates SET verdict = 'pass' WHERE run_id = '{id}';
         UPDATE runs SET verdict = 'pass', exit_code = 0 WHERE id = '{id}';"
    ))
    .unwrap();
    drop(conn);

    let message = format!(
        "rascal: error: the record of run {id} was changed after it was written (event {first})\n"
    );
    let refused = |args: &[&str]| {
        let o = t.rascal(args);
        assert_eq!(code(&o), 1, "{args:?}: {}{}", stdout(&o), stderr(&o));
        assert_eq!(stderr(&o), message, "{args:?}");
        o
    };
    refused(&["show", &id]);
    refused(&["show", &id, "--json"]);
    refused(&["report", &id, "--format", "md"]);
    refused(&["report", &id, "--format", "json"]);
    refused(&["select", &id, "sneaky"]);
    refused(&["escalate", &id, "--note", "x"]);
    refused(&[
        "override",
        &id,
        "sneaky",
        "--layer",
        "permissions",
        "--check",
        "permissions",
        "--reason",
        "x",
    ]);
    refused(&["retry", &id, "sneaky", "--feedback", "again"]);
    refused(&["attach", &id]);
    refused(&["finalize", &id]);
    assert!(
        t.repo
            .branches(Some(git2::BranchType::Local))
            .unwrap()
            .all(|b| !b
                .unwrap()
                .0
                .name()
                .unwrap()
                .unwrap()
                .starts_with("rascal/make")),
        "nothing was committed"
    );

    let o = refused(&["verify", &id]);
    assert!(
        stdout(&o).starts_with(&format!("run {id}: chain broken at event {first}: ")),
        "{}",
        stdout(&o)
    );
    let o = refused(&["verify", &id, "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (doc["chain"].as_str(), doc["event"].as_i64()),
        (Some("broken"), Some(first))
    );
    refused(&["verify", &id, "--expect", &published]);

    let list = stdout(&t.rascal(&["list"]));
    let line = list.lines().find(|l| l.starts_with(&id)).unwrap();
    assert!(line.contains("TAMPERED"), "{list}");
    assert!(!line.contains("PASS"), "{list}");
    assert!(
        list.contains(&format!("changed after it was written (event {first})")),
        "{list}"
    );
    let rows: serde_json::Value =
        serde_json::from_str(&stdout(&t.rascal(&["list", "--json"]))).unwrap();
    assert_eq!(rows[0]["verdict"], "tampered");
    assert_eq!(rows[0]["chain"], "broken");
    assert_eq!(rows[0]["broken_event"], first);
}

#[test]
fn a_deleted_event_is_named_by_its_position() {
    let t = repo();
    let id = run(&t);
    let (n, _) = intact(&t, &id);
    let conn = db(&t);
    // The permissions report removed outright.
    let gone: i64 = conn
        .query_row(
            "SELECT MIN(n) FROM events WHERE run_id = ?1 AND candidate_id = 'sneaky'
             AND kind = 'report_landed' AND json LIKE '%\"layer\":\"permissions\"%'",
            [&id],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute(
        "DELETE FROM events WHERE run_id = ?1 AND n = ?2",
        rusqlite::params![id, gone],
    )
    .unwrap();
    let o = t.rascal(&["verify", &id]);
    assert_eq!(code(&o), 1);
    assert!(
        stdout(&o).contains(&format!("event {gone} is missing")),
        "{}",
        stdout(&o)
    );
    // The tail cut off: the run's recorded head still counts it.
    conn.execute(
        "DELETE FROM events WHERE run_id = ?1 AND n >= ?2",
        rusqlite::params![id, gone],
    )
    .unwrap();
    let o = t.rascal(&["verify", &id]);
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).contains(&format!("(event {gone})")),
        "{}",
        stderr(&o)
    );
    assert!(n > gone as u64);
}

/// The limit, stated: a writer who recomputes every later hash and the
/// run's head gets past the local check (its rewrite then reads as the
/// record), and only a head published before (the PR body's) shows it.
#[test]
fn a_recomputed_chain_is_caught_only_by_the_published_head() {
    let t = repo();
    let id = run(&t);
    let (_, published) = intact(&t, &id);
    let conn = db(&t);
    conn.execute(
        "UPDATE events SET json = replace(json, '\"status\":\"fail\"', '\"status\":\"pass\"')
         WHERE run_id = ?1 AND candidate_id = 'sneaky' AND kind = 'report_landed'",
        [&id],
    )
    .unwrap();
    conn.execute(
        "UPDATE events SET json = replace(json, '\"verdict\":\"fail\"', '\"verdict\":\"pass\"')
         WHERE run_id = ?1 AND candidate_id = 'sneaky' AND kind = 'candidate_finished'",
        [&id],
    )
    .unwrap();
    // Rehash by the recipe in src/store/chain.rs.
    let rows: Vec<(i64, i64, i64, String, String)> = conn
        .prepare("SELECT seq, n, at, kind, json FROM events WHERE run_id = ?1 ORDER BY seq")
        .unwrap()
        .query_map([&id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    let mut prev = rascal_engine::store::genesis(&id);
    for (seq, n, at, kind, json) in rows {
        prev = rascal_engine::store::event_hash(&id, n as u64, at, &kind, &json, &prev);
        conn.execute(
            "UPDATE events SET hash = ?2 WHERE seq = ?1",
            rusqlite::params![seq, prev],
        )
        .unwrap();
    }
    conn.execute(
        "UPDATE runs SET head = ?2 WHERE id = ?1",
        rusqlite::params![id, prev],
    )
    .unwrap();
    drop(conn);
    // The rewrite is what the record now says...
    let o = t.rascal(&["show", &id, "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let sneaky = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "sneaky")
        .unwrap()
        .clone();
    assert_eq!(sneaky["verdict"], "pass", "the edit took: {sneaky:#}");
    let (_, head) = intact(&t, &id);
    assert_ne!(head, published);
    // ...and the head published before is not in it.
    let o = t.rascal(&["verify", &id, "--expect", &published]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
}
