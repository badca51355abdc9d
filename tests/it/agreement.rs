//! Layer 1 by execution agreement, end to end: four command agents on a
//! real Rust crate (and the same in Python's unittest) whose `add` is
//! wrong. Two fix it (one small, one with many new tests), one writes a
//! wrong fix that still passes the base's test plus tests of its own wrong
//! behaviour, one cheats. The candidates that pass the gate run each
//! other's tests: the wrong one fails the tests both right ones pass, and
//! they fail its tests (`compare/disagrees`, a warning on each side —
//! never a FAIL). Two against one is no majority: heads never count, so
//! the run is CONTESTED, with no pick, for a human — never the wrong one
//! picked, and never whoever wrote the most tests. Real repository, real
//! cargo/python, real binary.

use crate::common::bwrap;
use crate::test_integrity::{candidate, report, run, rust_repo, CARGO_TEST};

/// A sed script adding `tests` (Rust test functions) to `mod tests`.
fn rust_tests(tests: &[(&str, &str)]) -> String {
    let body: String = tests
        .iter()
        .map(|(name, assert)| format!("\\n    #[test]\\n    fn {name}() {{ {assert} }}"))
        .collect();
    format!("sed -i 's/    use super::\\*;/    use super::*;{body}/' src/lib.rs")
}

/// The agreement report of candidate `c`.
fn agreement(c: &serde_json::Value) -> &serde_json::Value {
    report(c, "agreement")
}

#[test]
fn candidates_test_each_other_and_the_pick_follows_the_evidence_in_rust() {
    if !bwrap() {
        return;
    }
    let fix = "sed -i 's/a - b/a + b/' src/lib.rs";
    let many = format!(
        "{fix}\n{}",
        rust_tests(&[
            ("adds_negatives", "assert_eq!(add(-1, -2), -3);"),
            ("adds_zero", "assert_eq!(add(0, 5), 5);"),
            ("adds_large", "assert_eq!(add(1000, 24), 1024);"),
        ])
    );
    // 2 × 2 = 2 + 2: the base's own test passes on a product.
    let wrong = format!(
        "sed -i 's/a - b/a * b/' src/lib.rs\n{}",
        rust_tests(&[
            ("adds_threes", "assert_eq!(add(3, 3), 9);"),
            ("adds_one", "assert_eq!(add(1, 5), 5);"),
        ])
    );
    let cheat = "sed -i 's/assert_eq!(add(2, 2), 4)/assert_eq!(add(2, 2), 0)/' src/lib.rs";
    let t = rust_repo(
        &[
            ("small", fix),
            ("many", &many),
            ("wrong", &wrong),
            ("cheat", cheat),
        ],
        CARGO_TEST,
    );
    let doc = run(&t, &["small", "many", "wrong", "cheat"]);
    assert_eq!(candidate(&doc, "cheat")["verdict"], "fail");
    for right in ["small", "many"] {
        let c = candidate(&doc, right);
        assert_eq!(c["verdict"], "warn", "{right} fails wrong's tests: {c}");
        let a = agreement(c);
        assert_eq!(a["status"], "warn", "{right}: {a}");
        assert!(
            a["issues"]
                .as_array()
                .unwrap()
                .iter()
                .all(|i| i["rule"] == "compare/disagrees" && i["severity"] == "warning"),
            "{a}"
        );
    }
    assert!(
        agreement(candidate(&doc, "small"))["output"]
            .as_str()
            .unwrap()
            .starts_with("passes 3/5 tests others wrote"),
        "{}",
        agreement(candidate(&doc, "small"))
    );
    the_wrong_one_disagrees_and_the_run_is_contested(&doc, 3);
    let ranking = &doc["ranking"];
    let matrix = &ranking["agreement"];
    assert_eq!(matrix["tests"].as_array().unwrap().len(), 5, "{matrix}");
    assert_eq!(
        matrix["candidates"].as_array().unwrap().len(),
        3,
        "{matrix}"
    );
    // Whoever wrote the most tests is not ahead for it: the two right ones
    // share one score; and being two is not ahead either.
    let score = |id: &str| {
        ranking["positions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["candidate"] == id)
            .unwrap()["agreement"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(score("small"), score("many"), "{ranking}");
    assert_eq!(
        score("small"),
        score("wrong"),
        "heads never count: {ranking}"
    );
    the_evidence_pane_holds_the_whole_ranking_and_each_tests_source(&t, ranking);
}

/// The pane's words: its rows without the box's borders, joined.
fn pane_words(screen: &str) -> String {
    screen
        .replace(['│', '┃'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Issue 31 item 6 and issue 30 item 2, in a real terminal at 80×24: the
/// compare view's `e` shows the ranking's whole reasons (the short pane
/// above cuts them) and scrolls to the matrix's last test; `Enter` shows
/// a test's name, author and source from its author's change; `n` the
/// next test.
fn the_evidence_pane_holds_the_whole_ranking_and_each_tests_source(
    t: &crate::common::TestRepo,
    ranking: &serde_json::Value,
) {
    use crate::common::tmux::Tmux;
    let tm = Tmux::start(
        "evidence",
        80,
        24,
        "",
        &format!(
            "cd {} && {}",
            t.path().display(),
            crate::common::bin().display()
        ),
    );
    tm.wait_for("home", &["1 run"]);
    tm.keys(&["Enter"]);
    tm.wait_for("run screen", &["finished"]);
    tm.keys(&["c"]);
    tm.wait_for("compare", &["scoreboard"]);
    tm.keys(&["e"]);
    let s = tm.wait_for("evidence", &["evidence · ranking"]);
    let first = &ranking["positions"][0];
    let (who, reason) = (
        first["candidate"].as_str().unwrap(),
        first["reason"].as_str().unwrap(),
    );
    let said = format!(
        "1. {who} {}",
        reason.strip_prefix(&format!("{who}: ")).unwrap_or(reason)
    );
    assert!(
        pane_words(&s).contains(&pane_words(&said)),
        "the first position's whole reason `{said}`:\n{s}"
    );
    let tests = ranking["agreement"]["tests"].as_array().unwrap();
    let last = tests.last().unwrap()["name"].as_str().unwrap();
    tm.keys(&["G"]);
    tm.wait_for("scrolled to the last test", &[&format!("5. {last}")]);
    tm.keys(&["Enter"]);
    let name = tests[0]["name"].as_str().unwrap();
    let f = name.rsplit("::").next().unwrap();
    let s = tm.wait_for(
        "the first test's source",
        &["test 1 of 5", name, &format!("fn {f}()"), "src/lib.rs:"],
    );
    assert!(
        s.contains(&format!(
            "written by {}",
            tests[0]["author"].as_str().unwrap()
        )),
        "{s}"
    );
    tm.keys(&["n"]);
    let second = tests[1]["name"].as_str().unwrap();
    let f = second.rsplit("::").next().unwrap();
    tm.wait_for("the next test", &["test 2 of 5", &format!("fn {f}()")]);
    tm.keys(&["Escape"]);
    tm.wait_gone("closed", &["test 2 of 5"]);
}

#[test]
fn candidates_test_each_other_in_python_unittest() {
    if !bwrap() || !crate::test_integrity::toolchain("python3", &["-c", "import unittest"]) {
        return;
    }
    let test = "import unittest\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(add(2, 2), 4)\n";
    let new_test = |name: &str, cases: &[(&str, &str)]| -> String {
        let body: String = cases
            .iter()
            .map(|(n, a)| format!("    def {n}(self):\n        self.assertEqual({a})\n\n"))
            .collect();
        crate::test_integrity::write(
            &format!("test_{name}.py"),
            &format!("import unittest\nfrom calc import add\n\n\nclass Test{name}(unittest.TestCase):\n{body}"),
        )
    };
    let fix = "sed -i 's/a - b/a + b/' calc.py\n";
    let many = format!(
        "{fix}{}",
        new_test(
            "more",
            &[
                ("test_negatives", "add(-1, -2), -3"),
                ("test_zero", "add(0, 5), 5"),
            ]
        )
    );
    let wrong = format!(
        "sed -i 's/a - b/a * b/' calc.py\n{}",
        new_test("mine", &[("test_threes", "add(3, 3), 9")])
    );
    let t = crate::common::TestRepo::new(&[
        ("calc.py", "def add(a, b):\n    return a - b\n"),
        ("test_calc.py", test),
    ]);
    let doc = run_small_many_wrong_with(
        &t,
        [fix, &many, &wrong],
        "guardrails:\n  - { name: tests, command: \"python3 -m unittest\" }\n  - { name: integrity, builtin: test-integrity, required: false }\n",
    );
    the_wrong_one_disagrees_and_the_run_is_contested(&doc, 2);
}

/// Run `small`, `many` and `wrong` (their scripts) in `t` with a test
/// guardrail running `command`; the run's JSON document.
fn run_small_many_wrong(
    t: &crate::common::TestRepo,
    agents: [&str; 3],
    command: &str,
) -> serde_json::Value {
    let guardrails = format!("guardrails:\n  - {{ name: tests, command: \"{command}\" }}\n");
    run_small_many_wrong_with(t, agents, &guardrails)
}

/// [`run_small_many_wrong`] with the whole `guardrails.yaml`.
fn run_small_many_wrong_with(
    t: &crate::common::TestRepo,
    [fix, many, wrong]: [&str; 3],
    guardrails: &str,
) -> serde_json::Value {
    t.write(
        ".rascal/config.yaml",
        &crate::common::command_agents(&[("small", fix), ("many", many), ("wrong", wrong)]),
    );
    t.write(".rascal/guardrails.yaml", guardrails);
    t.commit_all("rascal config");
    run(t, &["small", "many", "wrong"])
}

/// `wrong` gets one `compare/disagrees` warning per test of `many` it
/// fails (`n`) — a WARN, never a FAIL — and the run is CONTESTED: no pick
/// (never the wrong one), exit 4, and the reason names both sides.
fn the_wrong_one_disagrees_and_the_run_is_contested(doc: &serde_json::Value, n: usize) {
    let w = candidate(doc, "wrong");
    assert_eq!(w["verdict"], "warn", "{w}");
    let a = agreement(w);
    let issues = a["issues"].as_array().unwrap();
    assert_eq!(issues.len(), n, "one per test of `many` it fails: {a}");
    assert!(
        issues
            .iter()
            .all(|i| i["rule"] == "compare/disagrees" && i["severity"] == "warning"),
        "{a}"
    );
    for i in issues {
        let m = i["message"].as_str().unwrap();
        assert!(
            m.contains("passes on small, many") || m.contains("passes on many, small"),
            "{a}"
        );
    }
    let ranking = &doc["ranking"];
    assert!(ranking["pick"].is_null(), "{ranking}");
    let why = ranking["contested"].as_str().unwrap_or_default();
    assert!(
        why.contains("small, many against wrong") && why.contains("nothing rascal trusts"),
        "{ranking}"
    );
    assert_eq!(doc["state"], "contested", "{doc}");
    assert_eq!(doc["exit_code"], 4, "{doc}");
}

/// The same in Go: new tests are `_test.go` files of the package, laid
/// whole into each other candidate's tree; the wrong product fails the
/// right ones' tests and is never the pick.
#[test]
fn candidates_test_each_other_in_go() {
    if !bwrap() || !crate::test_integrity::toolchain("go", &["version"]) {
        return;
    }
    let new_test = |file: &str, cases: &[(&str, &str)]| -> String {
        let body: String = cases
            .iter()
            .map(|(n, cond)| {
                format!("func {n}(t *testing.T) {{\n\tif !({cond}) {{\n\t\tt.Fatal(\"wrong\")\n\t}}\n}}\n\n")
            })
            .collect();
        crate::test_integrity::write(
            file,
            &format!("package calc\n\nimport \"testing\"\n\n{body}"),
        )
    };
    let fix = "sed -i 's/a - b/a + b/' calc.go\n";
    let many = format!(
        "{fix}{}",
        new_test(
            "more_test.go",
            &[
                ("TestAddNegatives", "Add(-1, -2) == -3"),
                ("TestAddZero", "Add(0, 5) == 5"),
            ]
        )
    );
    let wrong = format!(
        "sed -i 's/a - b/a * b/' calc.go\n{}",
        new_test("mine_test.go", &[("TestAddThrees", "Add(3, 3) == 9")])
    );
    let t = crate::common::TestRepo::new(&[
        ("go.mod", "module calc\n\ngo 1.19\n"),
        ("calc.go", "package calc\n\nfunc Add(a, b int) int { return a - b }\n"),
        (
            "calc_test.go",
            "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n",
        ),
    ]);
    let doc = run_small_many_wrong(&t, [fix, &many, &wrong], "go test ./...");
    let matrix = &doc["ranking"]["agreement"];
    let names: Vec<&str> = matrix["tests"]
        .as_array()
        .unwrap_or_else(|| panic!("no matrix: {}", doc["ranking"]))
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for n in ["TestAddNegatives", "TestAddZero", "TestAddThrees"] {
        assert!(names.iter().any(|t| t.contains(n)), "{n} in {names:?}");
    }
    the_wrong_one_disagrees_and_the_run_is_contested(&doc, 2);
}

/// A wrong candidate whose own test module loosens every other module's
/// assertions (at import, by name, so no lexical rule sees an assertion
/// redefined; and only on its own code, so its tests run on the base's
/// code look honest): run beside the others' tests on its code, their
/// tests would pass there. Cross-testing runs the authors' tests on its code
/// with its own tests left out (the base's instead), so they fail there:
/// `compare/disagrees`, and the run is CONTESTED — never its pick.
#[test]
fn a_candidates_own_tests_never_run_beside_the_tests_that_judge_its_code() {
    if !bwrap() || !crate::test_integrity::toolchain("python3", &["-c", "import unittest"]) {
        return;
    }
    let base_test = "import unittest\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(add(2, 2), 4)\n";
    let write = crate::test_integrity::write;
    let fix = "sed -i 's/a - b/a + b/' calc.py\n";
    let many = format!(
        "{fix}{}",
        write(
            "test_more.py",
            "import unittest\nfrom calc import add\n\n\nclass TestMore(unittest.TestCase):\n    def test_one_two(self):\n        self.assertEqual(add(1, 2), 3)\n\n    def test_zero(self):\n        self.assertEqual(add(0, 5), 5)\n",
        )
    );
    // (The lexical `test-integrity/patches-runner` rule sees this
    // patching; it is made a warning here, because this test is about
    // what execution shows.)
    let loosener = "import unittest\nfrom calc import add\n\n_case = unittest.TestCase\n_real = getattr(_case, \"assert\" + \"Equal\")\n\n\ndef _mine_only(self, first, second, msg=None):\n    if type(self).__module__ != __name__:\n        return None\n    return _real(self, first, second, msg)\n\n\nif add(3, 3) == 9:\n    setattr(_case, \"assert\" + \"Equal\", _mine_only)\n\n\nclass TestMine(unittest.TestCase):\n    def test_threes(self):\n        self.assertEqual(add(3, 3), 9)\n";
    let wrong = format!(
        "sed -i 's/a - b/a * b/' calc.py\n{}",
        write("test_mine.py", loosener)
    );
    let t = crate::common::TestRepo::new(&[
        ("calc.py", "def add(a, b):\n    return a - b\n"),
        ("test_calc.py", base_test),
    ]);
    let doc = run_small_many_wrong_with(
        &t,
        [fix, &many, &wrong],
        "guardrails:\n  - { name: tests, command: \"python3 -m unittest\" }\n  - { name: integrity, builtin: test-integrity, required: false }\n",
    );
    let w = candidate(&doc, "wrong");
    let matrix = &doc["ranking"]["agreement"];
    let row = |who: &str| -> Vec<String> {
        let r = matrix["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .position(|c| c == who)
            .unwrap_or_else(|| panic!("{who} not in {matrix}: {w}"));
        matrix["cells"][r]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap().to_string())
            .collect()
    };
    let tests: Vec<&str> = matrix["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["author"].as_str().unwrap())
        .collect();
    let wrong_row = row("wrong");
    for (i, author) in tests.iter().enumerate() {
        if *author == "many" {
            assert_eq!(wrong_row[i], "failed", "{matrix}");
        }
    }
    let a = agreement(w);
    assert!(
        a["issues"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["rule"] == "compare/disagrees"),
        "{a}"
    );
    assert!(doc["ranking"]["pick"].is_null(), "{}", doc["ranking"]);
    assert_eq!(doc["state"], "contested", "{doc}");
}
