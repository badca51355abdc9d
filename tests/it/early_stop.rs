//! A FAIL nothing later can change stops the evidence early (issue 52):
//! once a candidate's own test run has failed a required test guardrail,
//! the base's tests, the release profile and the new tests at the base do
//! not run, and the report says so; a passing candidate in the same run
//! gets all of them, and `RASCAL_FULL_REPORT=1` runs them for the failing
//! one too.

use crate::common::bwrap;
use crate::evidence::repo_of;
use crate::test_integrity::{candidate, report, run};

fn tests_output(doc: &serde_json::Value, id: &str) -> String {
    report(candidate(doc, id), "tests")["output"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

const NOT_RUN: &str = "not run: the base's own tests";

#[test]
fn a_failed_own_test_run_skips_the_base_steps_and_a_full_report_runs_them() {
    if !bwrap() || !crate::test_integrity::toolchain("pytest", &["--version"]) {
        return;
    }
    let fix = "sed -i 's/a - b/a + b/' calc.py";
    let broken = "sed -i 's/a - b/a * b + 1/' calc.py";
    let t = repo_of(
        &[
            ("calc.py", "def add(a, b):\n    return a - b\n"),
            (
                "test_calc.py",
                "from calc import add\n\ndef test_adds():\n    assert add(2, 2) == 4\n",
            ),
        ],
        &[("fix", fix), ("broken", broken)],
        "guardrails:\n  - { name: tests, command: \"pytest -q -p no:cacheprovider\" }\n",
    );
    let doc = run(&t, &["fix", "broken"]);
    // The positive control: a passing candidate gets every step.
    assert_eq!(candidate(&doc, "fix")["verdict"], "pass", "{doc}");
    let honest = tests_output(&doc, "fix");
    assert!(honest.contains("base tests: 1/1 pass"), "{honest}");
    assert!(!honest.contains(NOT_RUN), "{honest}");
    // The failing one: a FAIL, the base's steps not run, and said.
    assert_eq!(candidate(&doc, "broken")["verdict"], "fail", "{doc}");
    let failed = tests_output(&doc, "broken");
    assert!(failed.contains(NOT_RUN), "{failed}");
    assert!(!failed.contains("base tests:"), "{failed}");
    let steps = report(candidate(&doc, "broken"), "tests")["ledger"]["steps"].to_string();
    assert!(steps.contains("own run"), "{steps}");
    assert!(!steps.contains("base tests"), "{steps}");
    // Asked for everything, the same FAIL with the base's evidence (the
    // early-stopped judgement kept above is not reused for it).
    let o = std::process::Command::new(crate::common::bin())
        .args(["run", "make add() correct", "--agent", "broken", "--json"])
        .current_dir(t.path())
        .env("RASCAL_FULL_REPORT", "1")
        .output()
        .unwrap();
    let full: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(candidate(&full, "broken")["verdict"], "fail", "{full}");
    let all = tests_output(&full, "broken");
    assert!(!all.contains(NOT_RUN), "{all}");
    assert!(all.contains("base tests:"), "{all}");
}
