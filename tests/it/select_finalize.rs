//! The CLI's select → finalize path as a user walks it (issue 31, item 8):
//! `rascal finalize RUN` takes the comparator's passing pick when nobody
//! selected one and says so; no pick, or a contested one, is an error
//! that says what to run; hints name the real run; a refusal keeps its
//! whole reason; `rascal retry` ends with every candidate's state.

use crate::common;
use common::{code, stderr, stdout, TestRepo};

/// `careful` passes; `hasty` leaves a TODO (a failed guardrail whose
/// reason is long: it quotes the whole banned pattern, then the line).
const AGENTS: &str = r#"agents:
  careful:
    runtime: scripted
    steps:
      - { do: write, path: src/b.rs, content: "pub fn b() -> u32 {\n    42\n}\n" }
  hasty:
    runtime: scripted
    steps:
      - { do: write, path: src/b.rs, content: "pub fn b() -> u32 {\n    42 // TODO tidy\n}\n" }
strategy: { mode: compare, agents: [careful, hasty] }
"#;

const LONG_RULE: &str = "TODO|every open question is an issue in the tracker, linked from the pull request that leaves it open, so that nothing is forgotten";

fn repo() -> TestRepo {
    let guardrails = format!("guardrails:\n  - {{ name: no-todo, patterns: ['{LONG_RULE}'] }}\n");
    let t = TestRepo::new(&[
        (".rascal/config.yaml", AGENTS),
        (".rascal/guardrails.yaml", guardrails.as_str()),
        ("src/a.rs", "pub fn a() {}\n"),
    ]);
    let mut cfg = t.repo.config().unwrap();
    cfg.set_str("user.name", "Tess Ter").unwrap();
    cfg.set_str("user.email", "tess@example.invalid").unwrap();
    t
}

/// A headless run of `agents`; its output and id.
fn run(t: &TestRepo, agents: &str) -> (std::process::Output, String) {
    let o = t.rascal(&["run", "make b return 42", "--headless", "--agent", agents]);
    let id = stdout(&o)
        .lines()
        .find_map(|l| l.strip_prefix("replay: rascal show "))
        .unwrap_or_else(|| panic!("no replay line: {}{}", stdout(&o), stderr(&o)))
        .to_string();
    (o, id)
}

fn show(t: &TestRepo, id: &str) -> serde_json::Value {
    let o = t.rascal(&["show", id, "--json"]);
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)))
}

#[test]
fn finalize_without_a_selection_takes_the_passing_pick_and_says_so() {
    let t = repo();
    let (o, id) = run(&t, "careful,hasty");
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    // The hint names this run, never a literal `RUN`.
    let pick = stdout(&o)
        .lines()
        .find(|l| l.starts_with("pick: "))
        .unwrap_or_else(|| panic!("no pick line: {}", stdout(&o)))
        .to_string();
    assert!(pick.contains(&format!("rascal finalize {id}")), "{pick}");
    assert!(!pick.contains(" RUN"), "{pick}");

    let o = t.rascal(&["finalize", &id]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).starts_with("finalizing careful, the pick"),
        "{}",
        stdout(&o)
    );
    let doc = show(&t, &id);
    assert_eq!(doc["selected"], "careful", "the record says who chose it");
    assert_eq!(doc["finalized"]["candidate"], "careful");
    let selected = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "careful")
        .unwrap()["decisions"][0]
        .clone();
    assert_eq!(selected["who"], "Tess Ter <tess@example.invalid>");
}

#[test]
fn finalize_without_a_pick_says_what_to_run() {
    let t = repo();
    let (o, id) = run(&t, "hasty");
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let o = t.rascal(&["finalize", &id]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("no candidate passed"), "{err}");
    assert!(err.contains(&format!("rascal show {id}")), "{err}");
    assert!(
        err.contains(&format!("rascal select {id} CANDIDATE")),
        "{err}"
    );
    assert!(show(&t, &id).get("finalized").is_none());
}

#[test]
fn finalize_of_an_escalated_run_leaves_the_pick_to_a_human() {
    let t = repo();
    let (_, id) = run(&t, "careful,hasty");
    let o = t.rascal(&["escalate", &id, "--note", "is 42 right?"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let o = t.rascal(&["finalize", &id]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("contested") && err.contains("escalated"),
        "{err}"
    );
    assert!(
        err.contains(&format!("rascal select {id} careful")),
        "{err}"
    );
    let doc = show(&t, &id);
    assert!(doc.get("selected").is_none(), "{doc:#}");
    // A human's selection settles it.
    let o = t.rascal(&["select", &id, "careful"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = t.rascal(&["finalize", &id]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(!stdout(&o).contains("the pick"), "{}", stdout(&o));
}

#[test]
fn a_refused_selection_keeps_the_whole_reason() {
    let t = repo();
    let (_, id) = run(&t, "careful,hasty");
    let o = t.rascal(&["select", &id, "hasty"]);
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert!(err.contains("candidate `hasty` is FAIL"), "{err}");
    assert!(
        err.contains(&format!("{LONG_RULE}` matched: 42 // TODO tidy")),
        "the reason is cut: {err}"
    );
    assert!(!err.contains('…'), "{err}");
    assert!(err.contains("`rascal finalize` refuses"), "{err}");
}

#[test]
fn retry_ends_with_every_candidates_state() {
    let t = repo();
    let (_, id) = run(&t, "careful,hasty");
    let o = t.rascal(&["retry", &id, "hasty", "--feedback", "remove the TODO"]);
    let out = stdout(&o);
    let state = out
        .lines()
        .find(|l| l.starts_with("state: run "))
        .unwrap_or_else(|| panic!("no state line: {out}{}", stderr(&o)));
    assert!(
        state.contains("careful PASS") && state.contains("hasty FAIL"),
        "{state}"
    );
    assert!(
        out.contains(&format!("rascal finalize {id}")),
        "the new ranking's hint names the run: {out}"
    );
    // The retry runs in this process: its record never says the run was
    // interrupted.
    let shown = stdout(&t.rascal(&["show", &id]));
    assert!(!shown.contains("run interrupted"), "{shown}");
}
