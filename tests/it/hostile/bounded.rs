//! Bounded memory for any change, no unscanned file passing silently, and a store that is data, never a path or a policy switch.
//!
//! Through the real binary: a token past the old 1 MiB scan limit, a token
//! across the cut between two windows of a long line, a file over the
//! scan's cap (refused unless allowed by path), and a recorded run whose
//! unhashed columns are rewritten to turn `verify` off.

#[allow(unused_imports)]
use super::*;

/// A made-up AWS access key id the secret rules recognise.
fn aws_key(seed: u64) -> String {
    format!(
        "AKIA{}",
        common::rnd(seed, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    )
}

/// A repository whose base commit runs the secret scan (with `extra`
/// options) on `rascal check`.
fn secrets_repo(extra: &str) -> TestRepo {
    let t = TestRepo::new(&[("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n")]);
    t.write(
        ".rascal/guardrails.yaml",
        &format!("guardrails:\n  - {{ name: secrets, builtin: secrets{extra} }}\n"),
    );
    t.commit_all("secret scan");
    t
}

/// `rascal check --json`: (exit code, the secret scan's report).
fn check(t: &TestRepo) -> (i32, serde_json::Value) {
    let o = t.rascal(&["check", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), stderr(&o)));
    let report = doc["layers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "secrets")
        .cloned()
        .unwrap_or_else(|| panic!("no secrets report: {doc:#}"));
    (code(&o), report)
}

fn rules(report: &serde_json::Value) -> Vec<(String, String)> {
    report["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["rule"].as_str().unwrap_or_default().to_string(),
                i["severity"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_token_at_the_end_of_a_3_mib_file_fails_the_check() {
    let t = secrets_repo("");
    let key = aws_key(1);
    let mut dump = String::new();
    while dump.len() < 3 * 1024 * 1024 {
        dump.push_str("insert into t values (1, 'plain row of data');\n");
    }
    dump.push_str(&format!("-- {key}\n"));
    t.write("data/dump.sql", &dump);
    let (exit, report) = check(&t);
    let found = rules(&report);
    assert!(
        found.iter().any(|(r, _)| r == "secrets/aws-access-key-id"),
        "{report:#}"
    );
    assert!(
        !found.iter().any(|(r, _)| r == "secrets/unscanned"),
        "{report:#}"
    );
    assert_eq!(report["status"], "fail", "{report:#}");
    assert_eq!(exit, 1);
    assert!(
        !report.to_string().contains(&key),
        "no secret in the report"
    );
}

#[test]
fn a_token_across_the_cut_of_a_long_line_is_found() {
    let t = secrets_repo("");
    let key = aws_key(2);
    // One line of 3 MiB: handed to the checks in pieces of 1 MiB, the key
    // across the first cut.
    let piece = 1024 * 1024;
    let mut line = "x ".repeat(2 * piece).into_bytes();
    let at = piece - key.len() / 2;
    line[at - 1] = b' ';
    line[at..at + key.len()].copy_from_slice(key.as_bytes());
    line[at + key.len()] = b' ';
    line.extend_from_slice(b"\n");
    t.write_bytes("data/one-line.txt", &line);
    let (exit, report) = check(&t);
    assert!(
        rules(&report)
            .iter()
            .any(|(r, _)| r == "secrets/aws-access-key-id"),
        "{report:#}"
    );
    assert_eq!(exit, 1);

    // And in a binary file across the cut between two 4 MiB windows.
    std::fs::remove_file(t.path().join("data/one-line.txt")).unwrap();
    let window = 4 * 1024 * 1024;
    let mut blob: Vec<u8> = [0xffu8, 0].repeat((window + 4096) / 2);
    let at = window - key.len() / 2;
    blob[at..at + key.len()].copy_from_slice(key.as_bytes());
    t.write_bytes("data/blob.bin", &blob);
    let (exit, report) = check(&t);
    assert!(
        rules(&report)
            .iter()
            .any(|(r, _)| r == "secrets/aws-access-key-id"),
        "{report:#}"
    );
    assert_eq!(exit, 1);
}

#[test]
fn a_file_over_the_scan_cap_fails_unless_allowed_by_path() {
    // The cap is 1 GiB; `max_file_bytes` lowers it, which is how a test
    // makes a file over it without writing a gigabyte.
    let t = secrets_repo(", max_file_bytes: 65536");
    let mut big = String::new();
    while big.len() < 200 * 1024 {
        big.push_str("plain line of text with nothing in it\n");
    }
    t.write("data/big.txt", &big);
    let (exit, report) = check(&t);
    let found = rules(&report);
    assert!(
        found
            .iter()
            .any(|(r, s)| r == "secrets/unscanned" && s == "error"),
        "{report:#}"
    );
    assert_eq!(report["status"], "fail", "{report:#}");
    assert_eq!(exit, 1);

    // Allowed by path: a warning, named, not a failure.
    let t = secrets_repo(", max_file_bytes: 65536, unscanned_allowed: ['data/*.txt']");
    t.write("data/big.txt", &big);
    let (exit, report) = check(&t);
    assert!(
        rules(&report)
            .iter()
            .any(|(r, s)| r == "secrets/unscanned" && s == "warning"),
        "{report:#}"
    );
    assert_ne!(report["status"], "fail", "{report:#}");
    assert_eq!(exit, 0, "{report:#}");
    // Another path is still refused.
    t.write("other/big.txt", &big);
    let (exit, _) = check(&t);
    assert_eq!(exit, 1);

    // Over the hard cap in the config: refused with a clear error.
    let t = secrets_repo(", max_file_bytes: 2000000000");
    t.write("a.txt", "x\n");
    let o = t.rascal(&["check"]);
    assert_ne!(code(&o), 0);
    assert!(stderr(&o).contains("max_file_bytes"), "{}", stderr(&o));
}

/// A recorded run (one scripted agent).
fn recorded_run() -> (TestRepo, String) {
    let t = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            "agents:\n  a:\n    runtime: scripted\n    steps:\n      - { do: write, path: src/b.rs, content: \"pub fn b() {}\\n\" }\n",
        ),
        ("src/a.rs", "pub fn a() {}\n"),
    ]);
    let o = t.rascal(&["run", "add b", "--agent", "a", "--json"]);
    let doc = json(&o);
    let id = doc["run"].as_str().unwrap().to_string();
    let o = t.rascal(&["verify", &id]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("chain intact"), "{}", stdout(&o));
    // The control for `refused`: untouched, `show` succeeds and says PASS.
    let o = t.rascal(&["show", &id]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("PASS"), "{}", stdout(&o));
    (t, id)
}

fn db(t: &TestRepo) -> rusqlite::Connection {
    rusqlite::Connection::open(t.path().join(".git/rascal/rascal.db")).unwrap()
}

/// `verify` fails and names the chain; `show` does not print PASS.
fn refused(t: &TestRepo, id: &str) {
    let o = t.rascal(&["verify", id]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert_ne!(code(&o), 0, "{out}");
    assert!(!out.contains("nothing to check"), "{out}");
    assert!(
        out.contains("chain broken") || out.contains("changed"),
        "{out}"
    );
    let o = t.rascal(&["show", id]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert_ne!(code(&o), 0, "{out}");
    assert!(!out.contains("PASS"), "{out}");
}

/// Rewriting the journal's unhashed columns (or the list of unchained
/// runs) never turns `verify` off: the run is refused, and `show`, which
/// said PASS before, no longer does.
#[test]
fn an_unhashed_column_cannot_turn_verification_off() {
    let (t, id) = recorded_run();
    // Strip every hash and set the run's start back before chaining began:
    // on main, "unchained: recorded by an older rascal … nothing to check".
    db(&t)
        .execute_batch(&format!(
            "UPDATE events SET hash = NULL, n = NULL WHERE run_id = '{id}';
             UPDATE runs SET head = NULL, event_count = NULL, started_at = -1 WHERE id = '{id}';
             UPDATE meta SET value = '9999999999999' WHERE key = 'chained_since';"
        ))
        .unwrap();
    refused(&t, &id);

    // Naming the run in the database's list of unchained runs (without
    // its digest) does not help…
    let conn = db(&t);
    let marker: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'unchained_runs'",
            [],
            |r| r.get(0),
        )
        .ok();
    let marker = marker.expect("the database lists its unchained runs");
    let forged = marker.replace("\"runs\":[]", &format!("\"runs\":[\"{id}\"]"));
    assert_ne!(forged, marker, "{marker}");
    conn.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'unchained_runs'",
        [&forged],
    )
    .unwrap();
    drop(conn);
    refused(&t, &id);

    // …nor deleting the list, or the whole meta table.
    db(&t)
        .execute_batch("DELETE FROM meta WHERE key = 'unchained_runs'")
        .unwrap();
    refused(&t, &id);
    db(&t).execute_batch("DROP TABLE meta").unwrap();
    refused(&t, &id);
}
