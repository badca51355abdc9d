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

/// A candidate's code cannot plant a judgement: a test of its change that
/// tries to write into the kept reports' folder or the kept cross-tests'
/// (a result for a tree it could make next) never reaches the host's
/// folders, while the same write into its own copy works (the control),
/// and only rascal's own report is kept there.
#[test]
fn a_candidates_code_cannot_write_a_kept_judgement() {
    if !bwrap() || !crate::test_integrity::toolchain("pytest", &["--version"]) {
        return;
    }
    let probe = |kept: &std::path::Path, cross: &std::path::Path| {
        format!(
            "sed -i 's/a - b/a + b/' calc.py && cat > test_plant.py <<'EOF'\nimport os\n\ndef test_plants():\n    for path in ({:?}, {:?}, 'planted-here.json'):\n        try:\n            os.makedirs(os.path.dirname(path) or '.', exist_ok=True)\n            with open(path, 'w') as f:\n                f.write('{{\"status\": \"pass\"}}')\n            print('WROTE', path)\n        except OSError as e:\n            print('REFUSED', path, e)\nEOF\n",
            kept.join("planted.json").to_string_lossy(),
            cross.join("planted.json").to_string_lossy()
        )
    };
    let files = [
        ("calc.py", "def add(a, b):\n    return a - b\n"),
        (
            "test_calc.py",
            "from calc import add\n\ndef test_adds():\n    assert add(2, 2) == 4\n",
        ),
    ];
    let guard = "guardrails:\n  - { name: tests, command: \"pytest -q -s -p no:cacheprovider\" }\n";
    // The kept reports' folder of this repository is known before the
    // run (it depends on the repository's path), so the agent writes it in.
    let t = repo_of(&files, &[], guard);
    let kept = t.files().join("ledger").join("reused");
    // Cross-tests' kept cells are beside it (`ledger/cross-tests`).
    let cross = t.files().join("ledger").join("cross-tests");
    t.write(
        ".rascal/config.yaml",
        &crate::common::command_agents(&[("planter", &probe(&kept, &cross))]),
    );
    t.commit_all("the planter");
    let doc = run(&t, &["planter"]);
    let out = tests_output(&doc, "planter");
    assert!(
        out.contains("WROTE planted-here.json"),
        "the control: {out}"
    );
    // It tried (inside its sandbox the store's folders are hidden or
    // read-only: what it wrote there, if anything, was never the host's).
    let tried = kept.join("planted.json").to_string_lossy().to_string();
    assert!(out.contains(&tried), "the attempt was made: {out}");
    assert!(!kept.join("planted.json").exists(), "planted: {out}");
    let tried = cross.join("planted.json").to_string_lossy().to_string();
    assert!(out.contains(&tried), "the attempt was made: {out}");
    assert!(!cross.join("planted.json").exists(), "planted: {out}");
    // What is kept is rascal's report of this change, nothing else.
    let entries: Vec<_> = std::fs::read_dir(&kept).unwrap().flatten().collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
}
