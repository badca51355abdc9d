//! A contested run (issue 47, item 1): two candidates that pass every
//! check rascal trusts, whose own tests fail on each other — one group
//! against another of the same size, nothing settles it. The run ends
//! CONTESTED: no pick, its own word in the headless output and in
//! `--json`, and exit code 4 — never a PASS with exit 0. Real repository,
//! real cargo, the real binary.

use crate::common::{bwrap, code};
use crate::test_integrity::{rust_repo, CARGO_TEST};

/// `add` right (`a + b`) with a test of negatives, and `add` that clamps
/// negatives to 0 with a test saying so: both pass the base's own test
/// (`add(2, 2) == 4`), each one's test fails at the base and on the other.
fn two_that_disagree() -> crate::common::TestRepo {
    let right = "sed -i 's/a - b/a + b/' src/lib.rs\nsed -i 's/    use super::\\*;/    use super::*;\\n    #[test]\\n    fn adds_negatives() { assert_eq!(add(-1, -1), -2); }/' src/lib.rs";
    let clamps = "sed -i 's/    a - b/    if a < 0 || b < 0 { 0 } else { a + b }/' src/lib.rs\nsed -i 's/    use super::\\*;/    use super::*;\\n    #[test]\\n    fn clamps_negatives() { assert_eq!(add(-1, 2), 0); }/' src/lib.rs";
    rust_repo(&[("alder", right), ("birch", clamps)], CARGO_TEST)
}

#[test]
fn a_contested_run_has_no_pick_says_contested_and_exits_4() {
    if !bwrap() {
        return;
    }
    // `rascal run` of both agents in a fresh repository, with `how`.
    let run = |how: &str| {
        let t = two_that_disagree();
        let o = t.rascal(&["run", "make add() correct", "--agent", "alder,birch", how]);
        (t, o)
    };
    let (first, o) = run("--json");
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    assert!(doc["ranking"]["pick"].is_null(), "{}", doc["ranking"]);
    assert!(
        doc["ranking"]["contested"]
            .as_str()
            .is_some_and(|w| w.contains("alder") && w.contains("birch")),
        "{}",
        doc["ranking"]
    );
    assert_eq!(doc["state"], "contested", "{doc}");
    assert_eq!(doc["exit_code"], 4, "{doc}");
    assert_eq!(code(&o), 4, "a contested run is not a pass");
    // Finalize needs your choice, with a reason, and records it.
    let id = doc["run"].as_str().unwrap();
    let o = first.rascal(&["finalize", id]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_ne!(code(&o), 0, "{err}");
    assert!(
        err.contains("has no pick") && err.contains("--pick CANDIDATE --reason"),
        "{err}"
    );
    assert_eq!(code(&first.rascal(&["finalize", id, "--pick", "alder"])), 2);
    let o = first.rascal(&[
        "finalize",
        id,
        "--pick",
        "alder",
        "--reason",
        "negatives must add",
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let shown: serde_json::Value =
        serde_json::from_slice(&first.rascal(&["show", id, "--json"]).stdout).unwrap();
    assert_eq!(shown["selected"], "alder", "{shown}");
    let alder = crate::test_integrity::candidate(&shown, "alder");
    assert!(
        alder["decisions"].as_array().is_some_and(|ds| ds
            .iter()
            .any(|d| d["kind"] == "select" && d["reason"] == "negatives must add")),
        "{alder}"
    );
    assert!(shown["finalized"].is_object(), "{shown}");
    // The headless run says so in its last word.
    let (t, o) = run("--headless");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("run verdict CONTESTED (exit 4) — no pick: "),
        "{out}"
    );
    // The question: the tests that separate them, as examples — what each
    // side's run said.
    assert!(out.contains("question — which is right?"), "{out}");
    assert!(
        out.contains("`tests::adds_negatives` (by alder): ✓ alder · ✗ birch — birch: fails here: assertion `left == right` failed · left: 0 · right: -2"),
        "{out}"
    );
    assert!(
        out.contains("`tests::clamps_negatives` (by birch): ✓ birch · ✗ alder — alder: fails here: assertion `left == right` failed · left: 1 · right: 0"),
        "{out}"
    );
    assert_eq!(code(&o), 4);
    // `list` and `show` say CONTESTED, and who disagrees.
    let o = t.rascal(&["list"]);
    let list = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        list.contains("CONTESTED") && list.contains("contested: alder | birch"),
        "{list}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let run = list
        .lines()
        .find_map(|l| l.split_whitespace().next().filter(|w| w.starts_with("r-")))
        .unwrap();
    let show = String::from_utf8_lossy(&t.rascal(&["show", run]).stdout).to_string();
    assert!(show.contains("CONTESTED"), "{show}");
}

/// The dashboard of a contested run, in a real terminal: the header says
/// `finished CONTESTED (exit 4)`, and each candidate that passed is marked
/// CONTESTED beside its own verdict (WARN: each fails the other's test, a
/// `compare/disagrees` warning, never a FAIL).
#[test]
fn the_dashboard_of_a_contested_run_says_so_in_its_header_and_cells() {
    if !bwrap() {
        return;
    }
    let t = two_that_disagree();
    let bin = env!("CARGO_BIN_EXE_rascal");
    let tmux = crate::common::tmux::Tmux::start(
        "contested",
        140,
        30,
        "",
        &format!(
            "cd {} && {bin} run fix-add --agent alder,birch; echo RASCAL-EXIT=$?",
            t.path().display()
        ),
    );
    let s = tmux.wait_for(
        "the run finishes contested",
        &["finished CONTESTED (exit 4)", "1 alder", "2 birch"],
    );
    assert_eq!(s.matches("WARN · CONTESTED").count(), 2, "{s}");
    // `F` with nothing selected does not settle it silently: it says why
    // there is no pick and what to do.
    tmux.keys(&["F"]);
    let f = tmux.wait_for(
        "F says there is no pick",
        &["no pick —", "answer the question (a)"],
    );
    assert!(!f.contains("Nothing is selected"), "{f}");
    // `a`: the question — the tests that separate them, as examples — and
    // one key answers it.
    tmux.keys(&["a"]);
    let q = tmux.wait_for(
        "the question",
        &[
            "question",
            "tests::adds_negatives",
            "who is right here?",
            "1 alder",
            "2 birch",
        ],
    );
    assert!(q.contains("left: 0"), "what birch returns: {q}");
    tmux.keys(&["1"]);
    tmux.wait_for("the answer is recorded", &["recorded: alder is right here"]);
    tmux.keys(&["q"]);
    tmux.wait_for("rascal exits 4", &["RASCAL-EXIT=4"]);
    // The answer is journaled as the human's choice, with the example.
    let o = t.rascal(&["list", "--json"]);
    let runs: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let id = runs[0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{runs}"))
        .to_string();
    let shown: serde_json::Value =
        serde_json::from_slice(&t.rascal(&["show", &id, "--json"]).stdout).unwrap();
    assert_eq!(shown["selected"], "alder", "{shown}");
    let alder = crate::test_integrity::candidate(&shown, "alder");
    assert!(
        alder["decisions"]
            .as_array()
            .is_some_and(|ds| ds.iter().any(|d| d["kind"] == "select"
                && d["reason"].as_str().is_some_and(|r| r.starts_with(
                    "answered the question: alder is right here (`tests::adds_negatives`"
                )))),
        "{alder}"
    );
}

/// A retry keeps the evidence (issue 53): `rascal retry` of one side of a
/// contested run cross-tests its new attempt with the other candidate as
/// it ended, so the run stays CONTESTED (exit 4, no pick, the agreement
/// matrix with both authors' tests) — before, cross-testing was skipped,
/// the smaller candidate became the pick and the run exited 0.
#[test]
fn a_retry_of_a_contested_run_cross_tests_again_and_stays_contested() {
    if !bwrap() {
        return;
    }
    // Idempotent scripts: a retry runs the agent again in its worktree.
    let right = "grep -q adds_negatives src/lib.rs || { sed -i 's/a - b/a + b/' src/lib.rs; sed -i 's/    use super::\\*;/    use super::*;\\n    #[test]\\n    fn adds_negatives() { assert_eq!(add(-1, -1), -2); }/' src/lib.rs; }";
    let clamps = "grep -q clamps_negatives src/lib.rs || { sed -i 's/    a - b/    if a < 0 || b < 0 { 0 } else { a + b }/' src/lib.rs; sed -i 's/    use super::\\*;/    use super::*;\\n    #[test]\\n    fn clamps_negatives() { assert_eq!(add(-1, 2), 0); }/' src/lib.rs; }";
    let t = rust_repo(&[("alder", right), ("birch", clamps)], CARGO_TEST);
    let o = t.rascal(&[
        "run",
        "make add() correct",
        "--agent",
        "alder,birch",
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    assert_eq!(doc["exit_code"], 4, "{}", doc["ranking"]);
    let id = doc["run"].as_str().unwrap().to_string();
    let o = t.rascal(&[
        "retry",
        &id,
        "birch",
        "--feedback",
        "check negatives again",
        "--json",
    ]);
    let again: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    let ranking = &again["ranking"];
    assert!(ranking["pick"].is_null(), "{ranking}");
    assert!(
        ranking["contested"]
            .as_str()
            .is_some_and(|w| w.contains("alder") && w.contains("birch")),
        "{ranking}"
    );
    let authors: Vec<&str> = ranking["agreement"]["tests"]
        .as_array()
        .map(|ts| ts.iter().filter_map(|t| t["author"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        authors.contains(&"alder") && authors.contains(&"birch"),
        "{ranking}"
    );
    assert_eq!(again["exit_code"], 4, "{again}");
    assert_eq!(code(&o), 4);
    // `--auto` finalizes nothing where nothing settles the pick: the run's
    // own exit code (4), not a usage error.
    let o = t.rascal(&[
        "run",
        "make add() correct",
        "--agent",
        "alder,birch",
        "--headless",
        "--auto",
    ]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(code(&o), 4, "{err}");
    assert!(!err.contains("has no pick"), "{err}");
}

/// Issue 47, item 2: a human's answer to the question the candidates' own
/// tests asked is kept as a test. A later run of the same task is judged
/// by the tests that separated the candidates and that the chosen one
/// passes, laid on each candidate's code: the clamping one fails them and
/// the run picks the right one. Before, only a discriminator's probe was
/// kept, and the second run was contested again (exit 4).
#[test]
fn an_answer_to_the_tests_question_judges_later_runs_of_the_task() {
    if !bwrap() {
        return;
    }
    let t = two_that_disagree();
    let args = [
        "run",
        "make add() correct",
        "--agent",
        "alder,birch",
        "--json",
    ];
    let json = |o: &std::process::Output| -> serde_json::Value {
        serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)))
    };
    let o = t.rascal(&args);
    assert_eq!(code(&o), 4, "contested first");
    let first = json(&o)["run"].as_str().unwrap().to_string();
    let o = t.rascal(&["select", &first, "alder", "--reason", "negatives must add"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let o = t.rascal(&args);
    let doc = json(&o);
    assert_eq!(code(&o), 0, "{doc}");
    assert_eq!(doc["ranking"]["pick"], "alder", "{}", doc["ranking"]);
    let birch = crate::test_integrity::candidate(&doc, "birch");
    assert_eq!(birch["verdict"], "fail", "{birch}");
    let answers = crate::test_integrity::report(birch, "answers");
    let said = answers["issues"].to_string();
    assert!(
        said.contains(&format!(
            "`tests::adds_negatives` (alder's test, kept from run {first}) fails here, but alder passes it and is right here ("
        )) && said.contains(&format!("chose alder in run {first})")),
        "{answers}"
    );
    let alder = crate::test_integrity::candidate(&doc, "alder");
    assert_eq!(
        crate::test_integrity::report(alder, "answers")["status"],
        "pass",
        "{alder}"
    );
}

/// A unittest project where `add` is wrong at the base: `wrong` multiplies
/// (the base's `add(2, 2) == 4` passes) and writes a test of that;
/// `scope` adds right but touches `other.py`, which the task's constraint
/// forbids; `cheat` rewrites the base's test and leaves the code;
/// `broken` breaks the base's own test.
fn no_good_candidate() -> crate::common::TestRepo {
    let module = |body: &str| format!("printf 'def add(a, b):\\n    return {body}\\n' > add.py");
    let wrong = module("a * b")
        + "; printf 'import unittest\\nfrom add import add\\n\\n\\nclass TestWrong(unittest.TestCase):\\n    def test_0(self):\\n        self.assertEqual(add(3, 3), 9)\\n' > test_wrong.py";
    let scope = module("a + b") + "; echo 'VALUE = 2' > other.py";
    let cheat = "sed -i 's/add(2, 2), 4/add(1, 1), 0/' test_add.py".to_string();
    let broken = module("a + b + 1");
    crate::evidence::repo_of(
        &[
            ("add.py", "def add(a, b):\n    return a - b\n"),
            ("other.py", "VALUE = 1\n"),
            (
                "test_add.py",
                "import unittest\nfrom add import add\n\n\nclass TestBase(unittest.TestCase):\n    def test_0(self):\n        self.assertEqual(add(2, 2), 4)\n",
            ),
            (
                ".rascal/specs/task.yaml",
                "instruction: make add() correct\nconstraints:\n  - { description: \"leave other.py alone\", type: no-touch-files, value: \"other.py\" }\n",
            ),
        ],
        &[
            ("wrong", &wrong),
            ("scope", &scope),
            ("cheat", &cheat),
            ("broken", &broken),
        ],
        "guardrails:\n  - { name: tests, command: \"python3 -m unittest\", timeout: 60s }\n",
    )
}

/// Issue 47 (a coin flip presented as a pick): with no good candidate, the
/// wrong one was the lone passing candidate and was picked. A candidate
/// that failed the gate on scope alone — its code passes the base's tests
/// and its test run is clean — is a witness now: the passing candidates'
/// tests run on its code, and its disagreeing makes the run CONTESTED with
/// the question, never a pick by default. It is never picked itself, and
/// nobody FAILs for the disagreement. Candidates whose code fails the
/// base's tests (`cheat`, `broken`) are no witnesses: their code says
/// nothing (control: with them alone, `wrong` is picked as before).
#[test]
fn a_candidate_that_failed_on_scope_alone_is_asked_and_contests_a_lone_wrong_pick() {
    if !crate::common::bwrap() {
        return;
    }
    let t = no_good_candidate();
    let args = |who: &str| {
        vec![
            "run".to_string(),
            "--spec".into(),
            "task".into(),
            "--agent".into(),
            who.to_string(),
            "--json".into(),
        ]
    };
    let run = |who: &str| {
        let a = args(who);
        let o = t.rascal(&a.iter().map(String::as_str).collect::<Vec<_>>());
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
        (code(&o), doc)
    };
    let (exit, doc) = run("wrong,scope,cheat,broken");
    let ranking = &doc["ranking"];
    assert_eq!(exit, 4, "{ranking}");
    assert!(ranking["pick"].is_null(), "{ranking}");
    let why = ranking["contested"].as_str().unwrap_or_default();
    assert!(
        why.contains("wrong against scope (failed the gate on other checks; its code is asked)"),
        "{why}"
    );
    assert_eq!(
        ranking["agreement"]["witnesses"],
        serde_json::json!(["scope"]),
        "{ranking}"
    );
    let wrong = crate::test_integrity::candidate(&doc, "wrong");
    assert_ne!(
        wrong["verdict"], "fail",
        "a disagreement FAILs nobody: {wrong}"
    );
    // Control: no witness, no question — the lone passing one is picked.
    let (exit, doc) = run("wrong,cheat,broken");
    assert_eq!(exit, 0, "{}", doc["ranking"]);
    assert_eq!(doc["ranking"]["pick"], "wrong", "{}", doc["ranking"]);
    assert!(doc["ranking"]["agreement"].is_null(), "{}", doc["ranking"]);
}
