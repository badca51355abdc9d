//! The honest way out, end to end through the real binary (headless `rascal
//! run`, process launcher): an agent that finds the task impossible writes
//! `$RASCAL_ARTIFACTS_DIR/impossible.md`; its candidate is IMPOSSIBLE with
//! its reason in `show` and `--json`, never retried with feedback and never
//! the pick — beside a cheater the test guardrails catch and an honest
//! candidate that wins. When every candidate declares, the run escalates
//! (exit 3) with their reasons side by side; a human's retry starts clean.

use crate::common::{code, stderr, stdout, TestRepo};
use crate::test_integrity::{candidate, toolchain};

/// `add` is wrong at the base, and its tests say so.
const CALC: &str = "def add(a, b):\n    return a - b\n";
const TESTS: &str = "from calc import add\n\n\ndef test_adds():\n    assert add(2, 2) == 4\n\n\ndef test_more():\n    assert add(1, 2) == 3\n";

const GUARDRAILS: &str =
    "guardrails:\n  - { name: tests, command: \"pytest -q -p no:cacheprovider\" }\n";

/// A reviewer that requests changes on every first attempt: any candidate
/// whose change is judged is retried once with feedback.
const RETRY: &str =
    "review:\n  reviewers: [reviewer]\n  on_request_changes: retry\n  max_retries: 2\n  timeout: 30s\n";

/// Scripted steps writing the fix.
const FIX: &str = "{ do: write, path: calc.py, content: \"def add(a, b):\\n    return a + b\\n\" }";

/// Scripted steps deleting the failing test (the bug stays): a cheat.
const CHEAT: &str = "{ do: write, path: test_calc.py, content: \"from calc import add\\n\\n\\ndef test_more():\\n    assert add(3, 1) == 2\\n\" }";

/// An author playing `steps` (a YAML flow sequence).
fn author(name: &str, steps: &str) -> String {
    format!("  {name}:\n    runtime: scripted\n    steps: {steps}\n")
}

/// The calculator with `authors` and the retrying reviewer.
fn repo(authors: &[String]) -> TestRepo {
    let mut agents = String::from("agents:\n");
    for a in authors {
        agents.push_str(a);
    }
    agents.push_str(
        "  reviewer: { runtime: scripted, scenario: review-request-once, provider: other-lab }\n",
    );
    TestRepo::new(&[
        ("calc.py", CALC),
        ("test_calc.py", TESTS),
        (".rascal/config.yaml", &agents),
        (".rascal/guardrails.yaml", GUARDRAILS),
        (".rascal/verification.yaml", RETRY),
    ])
}

/// `rascal run` headless with `agents`: its exit code, output and run id.
fn run(t: &TestRepo, agents: &str) -> (i32, String, String) {
    let o = t.rascal(&["run", "make add() correct", "--agent", agents, "--headless"]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    let id = out
        .lines()
        .find_map(|l| l.strip_prefix("replay: rascal show "))
        .unwrap_or_else(|| panic!("no run id: {out}"))
        .trim()
        .to_string();
    (code(&o), out, id)
}

fn show_json(t: &TestRepo, id: &str) -> serde_json::Value {
    let o = t.rascal(&["show", id, "--json"]);
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)))
}

const REASON: &str = "test_adds wants add(2, 2) == 4 but the spec I was given says add subtracts; the instruction and the tests contradict each other";

#[test]
fn a_declaration_is_impossible_with_its_reason_never_retried_and_the_cheat_never_the_pick() {
    if !toolchain("pytest", &["--version"]) {
        return;
    }
    let declarer = author(
        "declarer",
        &format!("[{FIX}, {{ do: impossible, reason: \"{REASON}\\nsee test_calc.py\" }}]"),
    );
    let t = repo(&[
        author("honest", &format!("[{FIX}]")),
        author("cheater", &format!("[{CHEAT}]")),
        declarer,
    ]);
    let (exit, out, id) = run(&t, "honest,cheater,declarer");
    // A lone declaration beside a passing candidate only shows.
    assert_eq!(exit, 0, "{out}");
    assert!(
        out.contains("[declarer] ⚐ its agent declared the task impossible"),
        "{out}"
    );
    assert!(out.contains(&format!("[declarer]     » {REASON}")), "{out}");
    assert!(
        out.contains(&format!(
            "[declarer] verdict FAIL (IMPOSSIBLE) · 0 files, 0 lines changed · the agent declared the task impossible: {REASON}"
        )),
        "{out}"
    );
    // Retries were on: the honest candidate was sent back once, the
    // declarer never.
    assert!(out.contains("[honest  ] ↻ attempt 2"), "{out}");
    assert!(!out.contains("[declarer] ↻"), "{out}");

    let shown = t.rascal(&["show", &id]);
    let text = stdout(&shown);
    assert_eq!(code(&shown), 0, "{text}");
    assert!(
        text.contains(&format!("[declarer]     » {REASON}")),
        "{text}"
    );
    assert!(
        text.contains("declarer IMPOSSIBLE — declared impossible: test_adds wants"),
        "{text}"
    );

    let doc = show_json(&t, &id);
    let d = candidate(&doc, "declarer");
    assert_eq!(d["state"], "impossible", "{d}");
    assert_eq!(
        d["impossible"].as_str().unwrap(),
        format!("{REASON}\nsee test_calc.py"),
        "{d}"
    );
    assert_eq!(d["attempt"], 1, "never retried: {d}");
    assert_eq!(d["verdict"], "fail", "{d}");
    let skipped = d["reports"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["layer"] != "agent")
        .all(|r| r["status"] == "skipped");
    assert!(skipped, "its change is not judged: {d}");
    let cheat = candidate(&doc, "cheater");
    assert_eq!(cheat["verdict"], "fail", "{cheat}");
    let honest = candidate(&doc, "honest");
    assert_eq!(honest["state"], "pass", "{honest}");
    assert_eq!(honest["attempt"], 2, "{honest}");
    assert_eq!(doc["ranking"]["pick"], "honest", "{}", doc["ranking"]);
    assert_eq!(doc["state"], "pass");

    // select and finalize refuse it, even forced, and say why.
    let sel = t.rascal(&["select", &id, "declarer", "--force", "--reason", "try"]);
    assert_eq!(code(&sel), 2, "{}", stderr(&sel));
    assert!(
        stderr(&sel).contains("candidate `declarer` is IMPOSSIBLE: its agent declared the task impossible (test_adds wants"),
        "{}",
        stderr(&sel)
    );
    // The pick finalizes.
    let fin = t.rascal(&["finalize", &id]);
    assert_eq!(code(&fin), 0, "{}{}", stdout(&fin), stderr(&fin));
    assert!(
        stdout(&fin).contains("finalizing honest"),
        "{}",
        stdout(&fin)
    );
}

#[test]
fn when_every_candidate_declares_the_run_escalates_with_the_reasons_side_by_side() {
    if !toolchain("pytest", &["--version"]) || !crate::common::bwrap() {
        return;
    }
    // `first` declares on its first attempt only; a human's retry must not
    // find that declaration again.
    let first = author(
        "first",
        &format!(
            "[{{ do: when, attempt: 1, then: [{{ do: impossible, reason: \"libfoo is not installed\" }}], otherwise: [{FIX}] }}]"
        ),
    );
    // `second` is a `command` agent keeping the README's contract.
    let script = r#"printf 'the tests contradict the task | really\n' > "$RASCAL_ARTIFACTS_DIR/impossible.md""#;
    let second = format!(
        "  second: {{ runtime: command, command: [\"sh\", \"-c\", {}] }}\n",
        serde_json::to_string(script).unwrap()
    );
    let t = repo(&[first, second]);
    let (exit, out, id) = run(&t, "first,second");
    assert_eq!(exit, 3, "{out}");
    assert!(
        out.contains(
            "(exit 3) — 2 of 2 candidates declared the task impossible; escalated to a human"
        ),
        "{out}"
    );
    let table = "    | candidate | why it declared the task impossible |\n    |---|---|\n    | first | libfoo is not installed |\n    | second | the tests contradict the task \\| really |\n";
    assert!(out.contains(table), "{out}");
    let shown = t.rascal(&["show", &id]);
    assert_eq!(code(&shown), 3);
    assert!(stdout(&shown).contains(table), "{}", stdout(&shown));
    assert!(
        stdout(&shown).contains("state: run ESCALATED · first IMPOSSIBLE"),
        "{}",
        stdout(&shown)
    );
    let doc = show_json(&t, &id);
    assert_eq!(doc["state"], "escalated");
    assert_eq!(doc["exit_code"], 3);
    assert_eq!(
        candidate(&doc, "second")["impossible"],
        "the tests contradict the task | really"
    );
    assert_eq!(doc["ranking"]["pick"], serde_json::Value::Null);
    let fin = t.rascal(&["finalize", &id]);
    assert_ne!(code(&fin), 0, "{}", stdout(&fin));

    // A human's retry: the earlier attempt's impossible.md is gone before
    // the agent runs again, so it speaks only for attempt 1.
    let o = t.rascal(&[
        "retry",
        &id,
        "first",
        "--feedback",
        "libfoo is vendored now; fix add()",
    ]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    let doc = show_json(&t, &id);
    let f = candidate(&doc, "first");
    assert_eq!(f["attempt"], 2, "{out}");
    assert!(f.get("impossible").is_none(), "{f}");
    assert_eq!(f["state"], "pass", "{out}");
    assert_eq!(candidate(&doc, "second")["state"], "impossible");
    // One declaration left against one judged change: no escalation.
    assert_ne!(doc["state"], "escalated", "{out}");
}

#[test]
fn a_pass_beside_two_declarations_escalates_and_auto_finalizes_nothing() {
    if !toolchain("pytest", &["--version"]) {
        return;
    }
    let t = repo(&[
        author("honest", &format!("[{FIX}]")),
        author("one", "[{ do: impossible, reason: \"libfoo is missing\" }]"),
        author(
            "two",
            "[{ do: impossible, reason: \"the tests contradict the task\" }]",
        ),
    ]);
    let o = t.rascal(&[
        "run",
        "make add() correct",
        "--agent",
        "honest,one,two",
        "--headless",
        "--auto",
    ]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(code(&o), 3, "{out}");
    assert!(
        out.contains("run verdict PASS (exit 3) — 2 of 3 candidates declared the task impossible; escalated to a human"),
        "{out}"
    );
    assert!(!out.contains("committed"), "{out}");
    let id = out
        .lines()
        .find_map(|l| l.strip_prefix("replay: rascal show "))
        .unwrap()
        .trim()
        .to_string();
    let doc = show_json(&t, &id);
    assert_eq!(doc["state"], "escalated");
    assert_eq!(doc["ranking"]["pick"], "honest");
    assert!(
        doc.get("selected").is_none(),
        "--auto selected nothing: {doc}"
    );
    let fin = t.rascal(&["finalize", &id]);
    assert_eq!(code(&fin), 2, "{}", stderr(&fin));
    assert!(
        stderr(&fin)
            .contains("pick `honest` is contested: 2 of 3 candidates declared the task impossible"),
        "{}",
        stderr(&fin)
    );
}
