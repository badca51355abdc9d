//! A test guardrail's judgement is made once per exact input (issue 52):
//! the same change tree, tests, command and configuration are reused,
//! said as reused; one byte changed in a test file is a fresh run.

use crate::common::bwrap;
use crate::evidence::repo_of;
use crate::test_integrity::{candidate, report, run};

/// The tests report's output of candidate `id` in a run's document.
fn tests_output(doc: &serde_json::Value, id: &str) -> String {
    let c = candidate(doc, id);
    report(c, "tests")["output"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

fn reused(output: &str) -> bool {
    output.starts_with("reused: ")
}

#[test]
fn the_same_change_is_judged_once_and_one_byte_of_a_test_file_judges_it_again() {
    if !bwrap() || !crate::test_integrity::toolchain("pytest", &["--version"]) {
        return;
    }
    let fix = "sed -i 's/a - b/a + b/' calc.py && printf 'from calc import add\\n\\ndef test_adds_more():\\n    assert add(1, 2) == 3\\n' > test_more.py";
    // The same fix, and one whose new test differs by one byte (3 → 4 with
    // 1 + 3).
    let twin = fix;
    let other = "sed -i 's/a - b/a + b/' calc.py && printf 'from calc import add\\n\\ndef test_adds_more():\\n    assert add(1, 3) == 4\\n' > test_more.py";
    let t = repo_of(
        &[
            ("calc.py", "def add(a, b):\n    return a - b\n"),
            (
                "test_calc.py",
                "from calc import add\n\ndef test_adds():\n    assert add(2, 2) == 4\n",
            ),
        ],
        &[("fix", fix), ("twin", twin), ("other", other)],
        "guardrails:\n  - { name: tests, command: \"pytest -q -p no:cacheprovider\" }\n",
    );
    // A first run judges the change.
    let first = run(&t, &["fix"]);
    assert_eq!(candidate(&first, "fix")["verdict"], "pass", "{first}");
    let judged = tests_output(&first, "fix");
    assert!(!reused(&judged), "nothing was judged before: {judged}");
    assert!(judged.contains("base tests: 1/1 pass"), "{judged}");
    // The next run with the same change reuses it, and says so; its
    // verdict is the same.
    let second = run(&t, &["twin"]);
    assert_eq!(candidate(&second, "twin")["verdict"], "pass", "{second}");
    let again = tests_output(&second, "twin");
    assert!(reused(&again), "the same change tree: {again}");
    assert!(
        again.contains("base tests: 1/1 pass"),
        "the same findings: {again}"
    );
    // One byte of the new test file differs: a different tree, judged.
    let third = run(&t, &["other"]);
    assert_eq!(candidate(&third, "other")["verdict"], "pass", "{third}");
    let fresh = tests_output(&third, "other");
    assert!(!reused(&fresh), "one byte differs: {fresh}");
    // Asked to, rascal judges everything again.
    let o = std::process::Command::new(crate::common::bin())
        .args(["run", "make add() correct", "--agent", "twin", "--json"])
        .current_dir(t.path())
        .env("RASCAL_FRESH", "1")
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let forced = tests_output(&doc, "twin");
    assert!(!reused(&forced), "RASCAL_FRESH=1: {forced}");
}

#[test]
fn two_candidates_with_the_same_change_in_one_run_are_judged_once() {
    if !bwrap() || !crate::test_integrity::toolchain("pytest", &["--version"]) {
        return;
    }
    let fix = "sed -i 's/a - b/a + b/' calc.py";
    let t = repo_of(
        &[
            ("calc.py", "def add(a, b):\n    return a - b\n"),
            (
                "test_calc.py",
                "from calc import add\n\ndef test_adds():\n    assert add(2, 2) == 4\n",
            ),
        ],
        &[("alder", fix), ("birch", fix)],
        "guardrails:\n  - { name: tests, command: \"pytest -q -p no:cacheprovider\" }\n",
    );
    let doc = run(&t, &["alder", "birch"]);
    let outputs = [tests_output(&doc, "alder"), tests_output(&doc, "birch")];
    let reused_count = outputs.iter().filter(|o| reused(o)).count();
    assert_eq!(reused_count, 1, "one judged, one reused: {outputs:?}");
    for id in ["alder", "birch"] {
        assert_eq!(candidate(&doc, id)["verdict"], "pass", "{doc}");
    }
}
