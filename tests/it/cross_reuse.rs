//! A cross-test run's cells are worked out once per exact input (issue
//! 52): the next run of the same candidates reuses every cross-test run
//! and says so, with the same matrix; one byte of one author's test file
//! runs again every cross-test that involves that author (its tests on
//! the others, the others' tests on its code) and reuses the rest.

use crate::common::{bwrap, TestRepo};
use crate::test_integrity::{candidate, rascal_json, report};

/// The run's agreement matrix.
fn matrix(doc: &serde_json::Value) -> &serde_json::Value {
    &doc["ranking"]["agreement"]
}

/// `(runs, reused)` of the run's cross-testing.
fn counts(doc: &serde_json::Value) -> (u64, u64) {
    let m = matrix(doc);
    (
        m["runs"].as_u64().unwrap_or(0),
        m["reused"].as_u64().unwrap_or(0),
    )
}

#[test]
fn the_same_cross_test_is_run_once_and_one_byte_of_a_test_runs_it_again() {
    if !bwrap() || !crate::test_integrity::toolchain("python3", &["-c", "import unittest"]) {
        return;
    }
    let fix = "sed -i 's/a - b/a + b/' calc.py\n";
    let agent = |name: &str, case: &str| {
        format!(
            "{fix}{}",
            crate::test_integrity::write(
                &format!("test_{name}.py"),
                &format!("import unittest\nfrom calc import add\n\n\nclass Test{name}(unittest.TestCase):\n    def test_{name}(self):\n        self.assertEqual({case})\n"),
            )
        )
    };
    // `ash` writes its test with one more space when the task says so:
    // the same agent, one byte of its test file different.
    let ash = format!(
        "{fix}if grep -q 'one byte' \"$RASCAL_INSTRUCTION_FILE\"; then S=' '; else S=''; fi\nprintf 'import unittest\\nfrom calc import add\\n\\n\\nclass TestAsh(unittest.TestCase):\\n    def test_ash(self):\\n        self.assertEqual(add(3, 4),%s 7)\\n' \"$S\" > test_ash.py\n"
    );
    let t = TestRepo::new(&[
        ("calc.py", "def add(a, b):\n    return a - b\n"),
        (
            "test_calc.py",
            "import unittest\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(add(2, 2), 4)\n",
        ),
    ]);
    t.write(
        ".rascal/config.yaml",
        &crate::common::command_agents(&[
            ("oak", &agent("oak", "add(1, 2), 3")),
            ("elm", &agent("elm", "add(0, 5), 5")),
            ("ash", &ash),
        ]),
    );
    t.write(
        ".rascal/guardrails.yaml",
        "guardrails:\n  - { name: tests, command: \"python3 -m unittest\" }\n",
    );
    t.commit_all("rascal config");
    let agents = ["oak", "elm", "ash"];
    let run = |task: &str| rascal_json(&t, &["run", task], &agents);

    // The first run cross-tests: each of three authors' tests on the two
    // others' code, six runs, none reused.
    let first = run("make add() correct");
    assert_eq!(counts(&first), (6, 0), "{}", matrix(&first));
    // Three right fixes: every test passes on every code.
    let cells = matrix(&first)["cells"].clone();
    let marks: Vec<&serde_json::Value> = cells
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|row| row.as_array().unwrap())
        .collect();
    assert_eq!(marks.len(), 9, "{cells}");
    assert!(marks.iter().all(|c| *c == "passed"), "{cells}");

    // The same candidates again: every cross-test reused, said so, and
    // the same matrix.
    let second = run("make add() correct");
    assert_eq!(counts(&second), (6, 6), "{}", matrix(&second));
    assert_eq!(matrix(&second)["cells"], cells, "the same cells");
    let said = report(candidate(&second, "oak"), "agreement")["output"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(said.contains("6 of 6 cross-test runs reused"), "{said}");

    // One byte of ash's test file: ash's tests on oak and elm, and oak's
    // and elm's tests on ash's code, run again; oak's and elm's tests on
    // each other's code are reused.
    let third = run("make add() correct, one byte");
    assert_eq!(counts(&third), (6, 2), "{}", matrix(&third));
    assert_eq!(matrix(&third)["cells"], cells, "the same judgement");
    let sources = matrix(&third)["sources"].to_string();
    assert!(
        sources.contains("add(3, 4),  7"),
        "ash's new test was laid: {sources}"
    );

    // Asked to, rascal runs every cross-test again.
    let o = std::process::Command::new(crate::common::bin())
        .args([
            "run",
            "make add() correct",
            "--agent",
            "oak,elm,ash",
            "--json",
        ])
        .current_dir(t.path())
        .env("RASCAL_FRESH", "1")
        .output()
        .unwrap();
    let forced: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        counts(&forced),
        (6, 0),
        "RASCAL_FRESH=1: {}",
        matrix(&forced)
    );
}
