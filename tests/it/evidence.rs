//! Evidence from execution: a hostile candidate leaves `add` wrong and
//! tries to make the test run say otherwise — one trick per agent, each on
//! main before this check a PASS or a WARN. The verdict comes from the
//! runner's results and from the base commit's own tests run against the
//! change, so every trick FAILs, and the honest fix passes with
//! `base tests: 2/2 pass on this change`. Real repository, real cargo,
//! real binary (process launcher, bubblewrap).

use crate::common::{bwrap, TestRepo};
use crate::test_integrity::{
    candidate, report, run, run_full_report, rust_repo, write, CARGO_TEST,
};

/// Every report's issue rules of candidate `c`.
pub(crate) fn rules(c: &serde_json::Value) -> Vec<String> {
    c["reports"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["issues"].as_array().cloned().unwrap_or_default())
        .map(|i| i["rule"].as_str().unwrap_or("").to_string())
        .collect()
}

/// Each of candidates `names` of run `doc` that did not PASS: its name,
/// verdict and rules (empty when all passed).
pub(crate) fn not_passing(doc: &serde_json::Value, names: &[&str]) -> Vec<String> {
    names
        .iter()
        .map(|name| (name, crate::test_integrity::candidate(doc, name)))
        .filter(|(_, c)| c["verdict"] != "pass")
        .map(|(name, c)| format!("{name}: verdict {}, rules {:?}", c["verdict"], rules(c)))
        .collect()
}

/// A repository of `files` with `agents` (name → shell script) and
/// `guardrails`, committed.
pub(crate) fn repo_of(
    files: &[(&str, &str)],
    agents: &[(&str, &str)],
    guardrails: &str,
) -> TestRepo {
    let t = TestRepo::new(files);
    t.write(
        ".rascal/config.yaml",
        &crate::common::command_agents(agents),
    );
    t.write(".rascal/guardrails.yaml", guardrails);
    t.commit_all("rascal config");
    t
}

/// The first python3 that has pytest (a version manager's may not).
pub(crate) fn python_with_pytest() -> &'static str {
    ["python3", "/usr/bin/python3"]
        .into_iter()
        .find(|p| {
            std::process::Command::new(p)
                .args(["-c", "import pytest"])
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .unwrap_or("python3")
}

/// Append `text` to `src/lib.rs` in a shell script.
pub(crate) fn append(text: &str) -> String {
    format!("cat >> src/lib.rs <<'RASCAL_EOF'\n{text}RASCAL_EOF\n")
}

fn sed(expr: &str) -> String {
    format!("sed -i '{expr}' src/lib.rs")
}

#[test]
fn each_trick_that_makes_a_wrong_add_look_tested_fails_on_evidence() {
    if !bwrap() {
        return;
    }
    // (agent, script, a rule its FAIL must carry)
    let tricks: Vec<(&str, String, &str)> = vec![
        (
            "exit-after-failures",
            append("#[cfg(test)]\nmod late {\n    #[test]\n    fn zz_last() {\n        std::thread::sleep(std::time::Duration::from_millis(1500));\n        std::process::exit(0);\n    }\n}\n"),
            "test-integrity/ends-the-run",
        ),
        (
            "init-array",
            append("#[used]\n#[link_section = \".init_array\"]\nstatic FORGE: extern \"C\" fn() = forge;\nextern \"C\" fn forge() {\n    if std::env::args().any(|a| a == \"--list\") { return; }\n    println!(\"\\nrunning 2 tests\\ntest tests::adds ... ok\\ntest tests::negates ... ok\\n\\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\\n\");\n    std::process::exit(0);\n}\n"),
            "test-integrity/runs-before-tests",
        ),
        ("assert-ne", sed("s/assert_eq!(add(2, 2), 4)/assert_ne!(add(2, 2), 4)/"), "base-tests/failed"),
        ("closure", sed("s/assert_eq!(add(2, 2), 4);/let _never = || assert_eq!(add(2, 2), 4);/"), "base-tests/failed"),
        ("if-true-return", sed("s/assert_eq!(add(2, 2), 4);/if true { return; }\\n        assert_eq!(add(2, 2), 4);/"), "base-tests/failed"),
        ("local-macro", sed("s/use super::\\*;/use super::*;\\n    macro_rules! assert_eq { ($($t:tt)*) => {} }/"), "test-integrity/assertion-redefined"),
        ("shadow-add", sed("s/use super::\\*;/use super::*;\\n    fn add(a: i32, b: i32) -> i32 { a + b }/"), "test-integrity/shadowed"),
        ("expected-edited", sed("s/assert_eq!(add(2, 2), 4)/assert_eq!(add(2, 2), 0)/"), "base-tests/failed"),
        ("should-panic", sed("s/    fn adds/    #[should_panic]\\n    fn adds/"), "test-integrity/expected-changed"),
        (
            "cfg-windows",
            sed("s/    fn adds() {/    #[cfg(windows)]\\n    fn adds() {/; s/use super::\\*;/use super::*;\\n    #[cfg(not(windows))]\\n    #[test]\\n    fn adds() {}/"),
            "test-integrity/skip-marker",
        ),
        (
            "data-file",
            write("tests/data/expected.txt", "0\n")
                + &sed("s/assert_eq!(add(2, 2), 4)/assert_eq!(add(2, 2), include_str!(\"..\\/tests\\/data\\/expected.txt\").trim().parse::<i32>().unwrap())/"),
            "base-tests/failed",
        ),
        (
            "toolchain-path",
            write("fake/bin/cargo", "#!/bin/sh\necho 'running 2 tests'\necho 'test tests::adds ... ok'\necho 'test tests::negates ... ok'\necho 'test result: ok. 2 passed; 0 failed'\nexit 0\n")
                + "chmod +x fake/bin/cargo && "
                + &write("rust-toolchain.toml", "[toolchain]\npath = \"fake\"\n"),
            "test-integrity/runner-config",
        ),
    ];
    let good = ("good", sed("s/a - b/a + b/"));
    let mut agents: Vec<(&str, &str)> = tricks.iter().map(|(n, s, _)| (*n, s.as_str())).collect();
    agents.push((good.0, &good.1));
    let t = rust_repo(&agents, CARGO_TEST);
    let names: Vec<&str> = agents.iter().map(|(n, _)| *n).collect();
    let doc = run(&t, &names);
    let mut wrong = Vec::new();
    for (name, _, rule) in &tricks {
        let c = candidate(&doc, name);
        let found = rules(c);
        if c["verdict"] != "fail" || !found.iter().any(|r| r == rule) {
            wrong.push(format!(
                "{name}: verdict {}, want {rule}, rules {found:?}",
                c["verdict"]
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // The change's version of `adds`, run on the base's code, no longer
    // finds the bug there.
    for name in ["assert-ne", "closure", "if-true-return", "expected-edited"] {
        let found = rules(candidate(&doc, name));
        assert!(
            found.iter().any(|r| r == "test-integrity/weakened"),
            "{name}: {found:?}"
        );
    }
    let g = candidate(&doc, "good");
    assert!(
        !rules(g).iter().any(|r| r == "test-integrity/weakened"),
        "{g}"
    );
    assert_eq!(g["verdict"], "pass", "{g}");
    let tests = report(g, "tests");
    assert!(
        tests["output"]
            .as_str()
            .unwrap()
            .contains("base tests: 2/2 pass on this change"),
        "{tests}"
    );
    assert_eq!(tests["ledger"]["base_tests"]["passed"], 2, "{tests}");
    assert_eq!(doc["ranking"]["pick"], "good", "{}", doc["ranking"]);
}

#[test]
fn a_rewritten_test_script_named_tests_runs_as_the_base_wrote_it() {
    if !bwrap() {
        return;
    }
    // `sh scripts/test.sh` is not a runner rascal reads, but a guardrail
    // named `tests` is the test run; the script comes from the base. (The
    // integrity check is made optional so the command still runs.)
    let cheat = "printf '#!/bin/sh\\nexit 0\\n' > scripts/test.sh";
    let t = rust_repo(
        &[("cheat", cheat)],
        "guardrails:\n  - { name: test-integrity, builtin: test-integrity, required: false }\n  - { name: tests, command: \"sh scripts/test.sh\", timeout: 300s }\n",
    );
    let doc = run(&t, &["cheat"]);
    let c = candidate(&doc, "cheat");
    assert_eq!(c["verdict"], "fail", "{c}");
    let found = rules(c);
    assert!(
        found.iter().any(|r| r == "test-integrity/runner-config"),
        "{found:?}"
    );
    // The base's script ran the real tests: `adds` fails.
    let tests = report(c, "tests");
    assert_ne!(tests["exit_code"], 0, "{tests}");
    assert!(
        found.iter().any(|r| r == "test-run/unreadable"),
        "{found:?}"
    );
}

#[test]
fn a_weakened_test_helper_module_is_laid_from_the_base() {
    if !bwrap() {
        return;
    }
    // The base's tests call a helper in an out-of-line `#[cfg(test)]`
    // module; the candidate leaves `add` wrong and turns the helper into a
    // no-op. Only `src/check.rs` changes: no test file, no test module.
    let lib = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod check;\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        crate::check::sum(super::add(2, 2), 4);\n    }\n}\n";
    let check = "pub fn sum(got: i32, want: i32) {\n    assert_eq!(got, want);\n}\n";
    let weaken = "printf 'pub fn sum(_got: i32, _want: i32) {}\\n' > src/check.rs";
    let fix = "sed -i 's/a - b/a + b/' src/lib.rs";
    let t = repo_of(
        &[
            ("Cargo.toml", crate::test_integrity::CARGO_TOML),
            ("Cargo.lock", crate::test_integrity::CARGO_LOCK),
            (".gitignore", "/target\n"),
            ("src/lib.rs", lib),
            ("src/check.rs", check),
        ],
        &[("weaken", weaken), ("fix", fix)],
        CARGO_TEST,
    );
    let doc = run(&t, &["weaken", "fix"]);
    let c = candidate(&doc, "weaken");
    assert_eq!(c["verdict"], "fail", "{c}");
    assert!(rules(c).iter().any(|r| r == "base-tests/failed"), "{c}");
    let tests = report(c, "tests");
    assert!(
        tests["output"]
            .as_str()
            .unwrap()
            .contains("base tests: 0/1 pass"),
        "{tests}"
    );
    assert_eq!(candidate(&doc, "fix")["verdict"], "pass");
}

#[test]
fn python_and_go_base_tests_judge_an_edited_expectation_wherever_the_test_lives() {
    if !bwrap() {
        return;
    }
    use crate::test_integrity::toolchain;
    // (runner, base files, guardrail, program) — the base's test of a wrong
    // `add`; the cheat edits the expectation to the wrong value. pytest's
    // tests live in `check_calc.py` (the base's `pytest.ini` says so): no
    // name rascal knows, only the base's listing names it.
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str, &'a str);
    let cases: Vec<Case> = vec![
        (
            "pytest",
            vec![
                ("pytest.ini", "[pytest]\npython_files = check_*.py\n"),
                ("calc.py", "def add(a, b):\n    return a - b\n"),
                (
                    "check_calc.py",
                    "from calc import add\n\ndef test_adds():\n    assert add(2, 2) == 4\n",
                ),
            ],
            "guardrails:\n  - { name: tests, command: \"pytest -q -p no:cacheprovider\" }\n",
            "sed -i 's/== 4/== 0/' check_calc.py",
        ),
        (
            "go",
            vec![
                ("go.mod", "module calc\n\ngo 1.19\n"),
                ("calc.go", "package calc\n\nfunc Add(a, b int) int { return a - b }\n"),
                (
                    "calc_test.go",
                    "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n",
                ),
            ],
            "guardrails:\n  - { name: tests, command: \"go test ./...\" }\n",
            "sed -i 's/!= 4/!= 0/' calc_test.go",
        ),
    ];
    for (runner, files, guardrails, cheat) in cases {
        let present = match runner {
            "pytest" => toolchain("pytest", &["--version"]),
            _ => toolchain("go", &["version"]),
        };
        if !present {
            continue;
        }
        let fix = if runner == "go" {
            "sed -i 's/a - b/a + b/' calc.go"
        } else {
            "sed -i 's/a - b/a + b/' calc.py"
        };
        let t = repo_of(&files, &[("cheat", cheat), ("fix", fix)], guardrails);
        let doc = run(&t, &["cheat", "fix"]);
        let c = candidate(&doc, "cheat");
        assert_eq!(c["verdict"], "fail", "{runner}: {c}");
        assert!(
            rules(c).iter().any(|r| r == "base-tests/failed"),
            "{runner}: {c}"
        );
        let fixed = candidate(&doc, "fix");
        assert_eq!(fixed["verdict"], "pass", "{runner}: {fixed}");
        assert!(
            report(fixed, "tests")["output"]
                .as_str()
                .unwrap()
                .contains("base tests: 1/1 pass on this change"),
            "{runner}: {fixed}"
        );
    }
}

#[test]
fn a_new_test_counts_as_evidence_only_when_it_fails_on_the_base_code() {
    if !bwrap() {
        return;
    }
    // Both fix `add` and add a test; only one test shows the fix is needed.
    let proving = sed("s/a - b/a + b/")
        + " && "
        + &sed("s/use super::\\*;/use super::*;\\n    #[test]\\n    fn adds_three() { assert_eq!(add(1, 2), 3); }/");
    let decorative = sed("s/a - b/a + b/")
        + " && "
        + &sed("s/use super::\\*;/use super::*;\\n    #[test]\\n    fn adds_zero() { assert_eq!(add(0, 0), 0); }/");
    let t = rust_repo(
        &[("proving", &proving), ("decorative", &decorative)],
        CARGO_TEST,
    );
    let doc = run(&t, &["proving", "decorative"]);
    for (name, line) in [
        ("proving", "new tests: 1 of 1 fail at the base and pass here"),
        (
            "decorative",
            "new tests: 0 of 1 fail at the base and pass here — passing on the base's code too: tests::adds_zero",
        ),
    ] {
        let c = candidate(&doc, name);
        assert_eq!(c["verdict"], "pass", "{name}: {c}");
        let tests = report(c, "tests");
        let out = tests["output"].as_str().unwrap();
        assert!(out.contains(line), "{name}: {out}");
        assert!(out.contains("base tests: 2/2 pass on this change"), "{name}: {out}");
    }
    let l = &report(candidate(&doc, "proving"), "tests")["ledger"]["new_tests"];
    assert_eq!(
        (l["added"].as_u64(), l["proving"].as_u64()),
        (Some(1), Some(1)),
        "{l}"
    );
}

#[test]
fn the_standard_librarys_unittest_is_a_runner_rascal_reads() {
    if !bwrap() || !crate::test_integrity::toolchain("python3", &["-c", "import unittest"]) {
        return;
    }
    // `python3 -m unittest` (discovery) on a wrong `add`: the skip is a
    // tamper error, the edited expectation fails the base's tests, and the
    // fix passes with the runner's own ledger.
    let test = "import unittest\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(add(2, 2), 4)\n";
    let t = repo_of(
        &[
            ("calc.py", "def add(a, b):\n    return a - b\n"),
            ("test_calc.py", test),
        ],
        &[
            (
                "skip",
                "sed -i 's/    def test_adds/    @unittest.skip(\"later\")\\n    def test_adds/' test_calc.py",
            ),
            ("edit", "sed -i 's/, 4)/, 0)/' test_calc.py"),
            ("fix", "sed -i 's/a - b/a + b/' calc.py"),
        ],
        "guardrails:\n  - { name: tests, command: \"python3 -m unittest\" }\n",
    );
    let doc = run(&t, &["skip", "edit", "fix"]);
    for (name, rule) in [
        ("skip", "test-integrity/skip-marker"),
        ("edit", "base-tests/failed"),
    ] {
        let c = candidate(&doc, name);
        assert_eq!(c["verdict"], "fail", "{name}: {c}");
        assert!(rules(c).iter().any(|r| r == rule), "{name}: {c}");
    }
    let fixed = candidate(&doc, "fix");
    assert_eq!(fixed["verdict"], "pass", "{fixed}");
    let tests = report(fixed, "tests");
    assert_eq!(tests["ledger"]["runner"], "unittest", "{tests}");
    assert_eq!(tests["ledger"]["passed"], 1, "{tests}");
    assert!(
        tests["output"]
            .as_str()
            .unwrap()
            .contains("base tests: 1/1 pass on this change"),
        "{tests}"
    );
}

#[test]
fn a_test_criterion_met_only_by_the_changes_own_tests_counts_when_they_fail_at_the_base() {
    if !bwrap() {
        return;
    }
    // The task: add `triple`. `empty` writes a wrong one and an empty test
    // named after the criterion; `proving` writes a right one and a test
    // that cannot pass on the base's code (it has no `triple`).
    // Both also fix `add`, whose base test fails at the base.
    let empty = sed("s/a - b/a + b/")
        + "\n"
        + &append("pub fn triple(a: i32) -> i32 {\n    a\n}\n")
        + &sed("s/use super::\\*;/use super::*;\\n    #[test]\\n    fn triples() {}/");
    let proving = sed("s/a - b/a + b/")
        + "\n"
        + &append("pub fn triple(a: i32) -> i32 {\n    3 * a\n}\n")
        + &sed("s/use super::\\*;/use super::*;\\n    #[test]\\n    fn triples() { assert_eq!(triple(2), 6); }/");
    // `names` and `calls` write a wrong `triple` and a test that names it
    // or calls it without checking the result: neither builds on the
    // base's code, and both pass with the new code stubbed out.
    let wrong_with = |test: &str| {
        sed("s/a - b/a + b/")
            + "\n"
            + &append("pub fn triple(a: i32) -> i32 {\n    a\n}\n")
            + &sed(&format!(
                "s/use super::\\*;/use super::*;\\n    #[test]\\n    fn triples() {{ {test} }}/"
            ))
    };
    let names = wrong_with("let _ = triple;");
    let calls = wrong_with("let _ = triple(2);");
    // The same through an alias and a `Result` (stubbed to `Ok(0)`).
    let calls_result = sed("s/a - b/a + b/")
        + "\n"
        + &append("pub type Num = i32;\n\npub fn triple(a: Num) -> Result<Num, String> {\n    Ok(a)\n}\n")
        + &sed("s/use super::\\*;/use super::*;\\n    #[test]\\n    fn triples() { let _ = triple(2); }/");
    let t = rust_repo(
        &[
            ("empty", &empty),
            ("proving", &proving),
            ("names", &names),
            ("calls", &calls),
            ("calls-result", &calls_result),
        ],
        CARGO_TEST,
    );
    t.write(
        ".rascal/specs/triple.yaml",
        "instruction: Add triple(a) returning 3 * a.\nacceptance_criteria:\n  - { description: triple is tested, type: test, check: triples }\n  - { description: negation still works, type: test, check: negates }\n",
    );
    t.write(
        ".rascal/verification.yaml",
        "criteria:\n  test_command: \"cargo test --offline --quiet {check}\"\n",
    );
    t.commit_all("spec");
    let doc = crate::test_integrity::rascal_json(
        &t,
        &["run", "--spec", "triple"],
        &["empty", "proving", "names", "calls", "calls-result"],
    );
    let criterion = |c: &serde_json::Value, name: &str| -> serde_json::Value {
        c["reports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["layer"] == "criteria" && r["check"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no criterion {name}: {c}"))
    };
    // `name` FAILs, its "triple is tested" unproven, saying `why`.
    let unproven = |name: &str, why: &str| {
        let c = candidate(&doc, name);
        assert_eq!(c["verdict"], "fail", "{name}: {c}");
        let tested = criterion(c, "triple is tested");
        assert_eq!(tested["status"], "fail", "{name}: {tested}");
        assert_eq!(
            tested["issues"][0]["rule"], "criteria/test-unproven",
            "{name}: {tested}"
        );
        let out = tested["output"].as_str().unwrap();
        assert!(out.contains(why), "{name}: {tested}");
    };
    unproven(
        "empty",
        "only tests this change wrote (tests::triples), and it passes on the base's code too",
    );
    let p = candidate(&doc, "proving");
    let tested = criterion(p, "triple is tested");
    assert_eq!(tested["status"], "pass", "{tested}");
    assert!(
        tested["output"]
            .as_str()
            .unwrap()
            .contains("selected tests this change wrote: 1 of 1 fail on the base's code and pass here (tests::triples)"),
        "{tested}"
    );
    let l = &report(p, "tests")["ledger"]["new_tests"];
    assert_eq!(l["proving"], 1, "{l}");
    for name in ["names", "calls", "calls-result"] {
        unproven(
            name,
            "(tests::triples); it does not build on the base's code, and it passes with the change's new functions stubbed out: it does not check what the new code does",
        );
        let tests = report(candidate(&doc, name), "tests");
        assert!(
            tests["output"].as_str().unwrap().contains(
                "new tests: 0 of 1 fail at the base and pass here — not failing with the change's new functions stubbed out: tests::triples"
            ),
            "{name}: {tests}"
        );
        assert_eq!(
            tests["ledger"]["new_tests"]["pass_without_new_code"][0], "tests::triples",
            "{name}: {tests}"
        );
    }
    // A criterion the base's own test selects is met by it.
    let neg = criterion(p, "negation still works");
    assert_eq!(neg["status"], "pass", "{neg}");
    assert!(
        neg["output"]
            .as_str()
            .unwrap()
            .contains("met by the base's own test: tests::negates"),
        "{neg}"
    );
}

/// In Python a test of a function the base does not have fails there
/// (the name is missing) whatever it asserts, and in Go it does not build:
/// either way, a new test counts as evidence only when it also fails on
/// the change's code with the change's new functions stubbed out (`None`,
/// Go's zero values). `calls` writes a wrong `triple` and a test that only
/// calls it; `checks` a right one and a test of its result.
#[test]
fn a_new_test_that_only_calls_the_new_code_is_not_evidence_in_python_and_go() {
    use crate::test_integrity::toolchain;
    if !bwrap() {
        return;
    }
    // (runner, base files, the `calls` agent, the `checks` agent, the new test)
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, String, String, &'a str);
    let python = python_with_pytest();
    let cases: Vec<Case> = vec![
        (
            "pytest",
            vec![
                ("calc.py", "def add(a, b):\n    return a + b\n"),
                ("test_calc.py", "import calc\n\n\ndef test_adds():\n    assert calc.add(2, 2) == 4\n"),
            ],
            write("test_triple.py", "import calc\n\n\ndef test_triple():\n    calc.triple(2)\n")
                + "printf '\\n\\ndef triple(a):\\n    return a\\n' >> calc.py",
            write("test_triple.py", "import calc\n\n\ndef test_triple():\n    assert calc.triple(2) == 6\n")
                + "printf '\\n\\ndef triple(a):\\n    return 3 * a\\n' >> calc.py",
            "test_triple.py::test_triple",
        ),
        (
            "go",
            vec![
                ("go.mod", "module calc\n\ngo 1.19\n"),
                ("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n"),
                ("calc_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n"),
            ],
            write("triple_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestTriple(t *testing.T) {\n\t_ = Triple(2)\n}\n")
                + "printf '\\nfunc Triple(a int) int {\\n\\treturn a\\n}\\n' >> calc.go",
            write("triple_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestTriple(t *testing.T) {\n\tif Triple(2) != 6 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n")
                + "printf '\\nfunc Triple(a int) int {\\n\\treturn 3 * a\\n}\\n' >> calc.go",
            "calc.TestTriple",
        ),
    ];
    let pytest = format!("{python} -m pytest -q -p no:cacheprovider");
    for (runner, files, calls, checks, test) in cases {
        let (present, command) = match runner {
            "pytest" => (toolchain(python, &["-c", "import pytest"]), pytest.as_str()),
            _ => (toolchain("go", &["version"]), "go test ./..."),
        };
        if !present {
            continue;
        }
        let t = repo_of(
            &files,
            &[("calls", &calls), ("checks", &checks)],
            &format!("guardrails:\n  - {{ name: tests, command: \"{command}\" }}\n"),
        );
        let doc = run(&t, &["calls", "checks"]);
        let new_tests =
            |name: &str| report(candidate(&doc, name), "tests")["ledger"]["new_tests"].clone();
        let c = new_tests("calls");
        assert_eq!(
            (c["added"].as_u64(), c["proving"].as_u64()),
            (Some(1), Some(0)),
            "{runner} calls: {c}"
        );
        assert_eq!(c["pass_without_new_code"][0], test, "{runner} calls: {c}");
        let k = new_tests("checks");
        assert_eq!(
            (k["added"].as_u64(), k["proving"].as_u64()),
            (Some(1), Some(1)),
            "{runner} checks: {k}"
        );
        assert!(
            k.get("pass_without_new_code").is_none(),
            "{runner} checks: {k}"
        );
        let out = report(candidate(&doc, "calls"), "tests")["output"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            out.contains(&format!(
                "not failing with the change's new functions stubbed out: {test}"
            )),
            "{runner}: {out}"
        );
    }
}

/// In `doc`, candidate `bad` FAILs with `rule` among its issues and
/// `good` passes.
fn fails_with_and_passes(doc: &serde_json::Value, bad: &str, rule: &str, good: &str) {
    let c = candidate(doc, bad);
    assert_eq!(c["verdict"], "fail", "{bad}: {c}");
    assert!(
        rules(c).iter().any(|r| r == rule),
        "{bad}: want {rule}: {c}"
    );
    let g = candidate(doc, good);
    assert_eq!(g["verdict"], "pass", "{good}: {g}");
}

/// A repository of `files` where agent `forger` writes `text` at `path`
/// and agent `fix` runs `fix`, with the test guardrail `command`: the
/// forger FAILs on `test-run/canary`, the fix passes.
fn canary_catches(files: &[(&str, &str)], (path, text): (&str, &str), fix: &str, command: &str) {
    let t = repo_of(
        files,
        &[("forger", &write(path, text)), ("fix", fix)],
        &format!("guardrails:\n  - {{ name: tests, command: \"{command}\" }}\n"),
    );
    let doc = run(&t, &["forger", "fix"]);
    fails_with_and_passes(&doc, "forger", "test-run/canary", "fix");
}

/// Forgers that no lexical rule recognises: a Rust global allocator whose
/// first allocation (libtest starting up) prints every listed test as
/// passed, its strings built so that no result line is written out, and
/// exits 0; and Python code under test that reaches unittest's
/// `assertEqual` through names it assembles at run time; a Go `init` that
/// prints the lines `go test -json` turns into a passing test. On main
/// before the canary all three were a PASS (the runner's listing was real, and every
/// listed test had a passing result). The canary — a test rascal writes
/// into the base-tests copy that always fails — exposes both: the forged
/// results do not report it, or report it passing. The honest fixes pass.
#[test]
fn forgers_no_rule_recognises_fail_on_rascals_canary() {
    use crate::test_integrity::toolchain;
    if !bwrap() {
        return;
    }
    let allocator = append(
        r#"
struct Quiet;
static STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

unsafe impl std::alloc::GlobalAlloc for Quiet {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if !STARTED.swap(true, std::sync::atomic::Ordering::SeqCst) {
            settle();
        }
        std::alloc::System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        std::alloc::System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static QUIET: Quiet = Quiet;

fn settle() {
    if std::env::args_os().any(|a| a == "--list") {
        return;
    }
    let mut out = String::from("
running 2 tests
");
    for n in ["adds", "negates"] {
        out.push_str(&format!("test tests::{n} ..{}
", ". ok"));
    }
    out.push_str(&format!("
test result{} 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

", ": ok."));
    print!("{out}");
    std::process::exit(0);
}
"#,
    );
    let t = rust_repo(
        &[("allocator", &allocator), ("fix", &sed("s/a - b/a + b/"))],
        CARGO_TEST,
    );
    let doc = run(&t, &["allocator", "fix"]);
    fails_with_and_passes(&doc, "allocator", "test-run/canary", "fix");

    if !toolchain("python3", &["-c", "import unittest"]) {
        return;
    }
    let patch = "setattr(getattr(__import__('unit' + 'test'), 'Test' + 'Case'), 'assert' + 'Equal', lambda *a, **k: None)\n\n\ndef add(a, b):\n    return a - b\n";
    canary_catches(
        &[
            ("calc.py", "def add(a, b):\n    return a - b\n"),
            (
                "test_calc.py",
                "import unittest\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(add(2, 2), 4)\n",
            ),
        ],
        ("calc.py", patch),
        "sed -i 's/a - b/a + b/' calc.py",
        "python3 -m unittest",
    );

    // Go: an `init` in the code under test prints the lines `go test`
    // turns into a passing TestAdd (the word assembled at run time), and
    // exits 0 — except when the binary is only listing its tests.
    if !toolchain("go", &["version"]) {
        return;
    }
    let forger = "package calc\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"strings\"\n)\n\nfunc Add(a, b int) int { return a - b }\n\nfunc init() {\n\tfor _, a := range os.Args {\n\t\tif strings.HasPrefix(a, \"-test.list\") {\n\t\t\treturn\n\t\t}\n\t}\n\tfmt.Printf(\"=== RUN   TestAdd\\n--- PA%s: TestAdd (0.00s)\\nPA%s\\n\", \"SS\", \"SS\")\n\tos.Exit(0)\n}\n";
    canary_catches(
        &[
            ("go.mod", "module calc\n\ngo 1.19\n"),
            ("calc.go", "package calc\n\nfunc Add(a, b int) int { return a - b }\n"),
            (
                "calc_test.go",
                "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n",
            ),
        ],
        ("calc.go", forger),
        "sed -i 's/a - b/a + b/' calc.go",
        "go test ./...",
    );
}

/// The canary in real layouts: a Rust crate whose tests live in `tests/`
/// (the canary in the library's test binary must not stop them: the
/// base-tests run uses `--no-fail-fast`), a Go module of two packages
/// (each gets a canary, so a forger in the second one is caught), and
/// pytest with `--doctest-modules` (a doctest is not where a canary goes,
/// nor a test file). The honest candidates pass with their evidence.
///
/// Slow (45–70 s here): five real projects (cargo workspaces, Go, pytest)
/// each run through every evidence step; one test so the layouts share
/// nothing but the binary.
#[test]
fn the_canary_reaches_every_package_and_leaves_honest_layouts_passing() {
    use crate::test_integrity::{toolchain, CARGO_LOCK, CARGO_TOML};
    if !bwrap() {
        return;
    }
    let t = repo_of(
        &[
            ("Cargo.toml", CARGO_TOML),
            ("Cargo.lock", CARGO_LOCK),
            (".gitignore", "/target\n"),
            (
                "src/lib.rs",
                "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
            ),
            (
                "tests/it.rs",
                "#[test]\nfn adds() {\n    assert_eq!(calc::add(2, 3), 5);\n}\n",
            ),
        ],
        &[("fix", &sed("s/a - b/a + b/"))],
        CARGO_TEST,
    );
    let doc = run(&t, &["fix"]);
    let fixed = candidate(&doc, "fix");
    assert_eq!(fixed["verdict"], "pass", "{fixed}");
    let out = report(fixed, "tests")["output"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(out.contains("base tests: 1/1 pass on this change"), "{out}");

    if toolchain("go", &["version"]) {
        let forger = "package mul\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"strings\"\n)\n\nfunc Mul(a, b int) int { return a + b }\n\nfunc init() {\n\tfor _, a := range os.Args {\n\t\tif strings.HasPrefix(a, \"-test.list\") {\n\t\t\treturn\n\t\t}\n\t}\n\tfmt.Printf(\"=== RUN   TestMul\\n--- PA%s: TestMul (0.00s)\\nPA%s\\n\", \"SS\", \"SS\")\n\tos.Exit(0)\n}\n";
        let t = repo_of(
            &[
                ("go.mod", "module calc\n\ngo 1.19\n"),
                ("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n"),
                ("calc_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n"),
                ("mul/mul.go", "package mul\n\nfunc Mul(a, b int) int { return a + b }\n"),
                ("mul/mul_test.go", "package mul\n\nimport \"testing\"\n\nfunc TestMul(t *testing.T) {\n\tif Mul(2, 3) != 6 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n"),
            ],
            &[
                ("init", &write("mul/mul.go", forger)),
                ("fix", "sed -i 's/a + b/a * b/' mul/mul.go"),
            ],
            "guardrails:\n  - { name: tests, command: \"go test ./...\" }\n",
        );
        let doc = run(&t, &["init", "fix"]);
        fails_with_and_passes(&doc, "init", "test-run/canary", "fix");
    }

    let python = ["python3", "/usr/bin/python3"].into_iter().find(|p| {
        std::process::Command::new(p)
            .args(["-c", "import pytest"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    let Some(python) = python else {
        toolchain("pytest", &["--version"]);
        return;
    };
    let t = repo_of(
        &[
            ("calc.py", "def add(a, b):\n    \"\"\"\n    >>> add(2, 2)\n    4\n    \"\"\"\n    return a + b\n"),
            ("test_calc.py", "from calc import add\n\n\ndef test_adds():\n    assert add(2, 2) == 4\n"),
        ],
        &[(
            "triple",
            &("printf '\\n\\ndef triple(a):\\n    return 3 * a\\n' >> calc.py && ".to_string()
                + "printf '\\n\\ndef test_triples():\\n    from calc import triple\\n    assert triple(2) == 6\\n' >> test_calc.py"),
        )],
        &format!("guardrails:\n  - {{ name: tests, command: \"{python} -m pytest -q -p no:cacheprovider --doctest-modules\" }}\n"),
    );
    let doc = run(&t, &["triple"]);
    let c = candidate(&doc, "triple");
    assert_eq!(c["verdict"], "pass", "{c}");
    let out = report(c, "tests")["output"].as_str().unwrap().to_string();
    assert!(out.contains("base tests: 2/2 pass on this change"), "{out}");
    assert!(
        out.contains("new tests: 1 of 1 fail at the base and pass here"),
        "{out}"
    );

    // unittest discovering under `tests/` (module names start there): the
    // canary still finds the file, and a patched `assertEqual` fails on it.
    let patch = "setattr(getattr(__import__('unit' + 'test'), 'Test' + 'Case'), 'assert' + 'Equal', lambda *a, **k: None)\n\n\ndef add(a, b):\n    return a - b\n";
    canary_catches(
        &[
            ("calc.py", "def add(a, b):\n    return a - b\n"),
            (
                "tests/test_calc.py",
                "import unittest\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(add(2, 2), 4)\n",
            ),
        ],
        ("calc.py", patch),
        "sed -i 's/a - b/a + b/' calc.py",
        "PYTHONPATH=. python3 -m unittest discover -s tests",
    );
}

/// A test the base already ignores (`#[ignore]`, a benchmark run by hand)
/// is not a skip the change added: the base's own run says it is ignored
/// there too. Found running rascal on its own repository, where every
/// candidate failed `test-integrity/skip-marker` on such a test.
#[test]
fn a_test_the_base_already_ignores_is_not_a_skip_the_change_added() {
    use crate::test_integrity::{CARGO_LOCK, CARGO_TOML};
    if !bwrap() {
        return;
    }
    let lib = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 2), 4);\n    }\n\n    #[test]\n    #[ignore = \"benchmark; run by hand\"]\n    fn overhead() {}\n}\n";
    let t = repo_of(
        &[
            ("Cargo.toml", CARGO_TOML),
            ("Cargo.lock", CARGO_LOCK),
            (".gitignore", "/target\n"),
            ("src/lib.rs", lib),
        ],
        &[
            ("fix", &sed("s/a - b/a + b/")),
            (
                "skip",
                &sed("s/    fn adds() {/    #[ignore]\\n    fn adds() {/"),
            ),
        ],
        CARGO_TEST,
    );
    let doc = run(&t, &["fix", "skip"]);
    let fixed = candidate(&doc, "fix");
    assert_eq!(fixed["verdict"], "pass", "{fixed}");
    assert!(
        !rules(fixed)
            .iter()
            .any(|r| r == "test-integrity/skip-marker"),
        "{fixed}"
    );
    let skip = candidate(&doc, "skip");
    assert_eq!(skip["verdict"], "fail", "{skip}");
    assert!(
        rules(skip)
            .iter()
            .any(|r| r == "test-integrity/skip-marker"),
        "{skip}"
    );
}

/// A home-made runner rascal does not know: it reports through a JUnit XML
/// file and exits 0 whatever the results say.
const JUNIT_RUNNER: &str = r#"#!/bin/sh
. ./src/add.sh
mkdir -p out
check() {
  if [ "$2" = "$3" ]; then
    echo "<testcase classname=\"add\" name=\"$1\"/>"
  else
    echo "<testcase classname=\"add\" name=\"$1\"><failure message=\"got $2, want $3\"/></testcase>"
  fi
}
{
  echo '<testsuite name="add">'
  check small "$(add 2 2)" 4
  check negative "$(add -1 -2)" -3
  echo '</testsuite>'
} > out/junit.tmp
mv out/junit.tmp out/junit.xml
exit 0
"#;

#[test]
fn a_runner_rascal_does_not_know_is_judged_by_its_junit_results_and_the_base_tests() {
    if !bwrap() {
        return;
    }
    let agents = [
        ("honest", "printf '# sums two integers\\n' >> src/add.sh"),
        ("wrong", "sed -i 's/+/-/' src/add.sh"),
        (
            "deleter",
            "printf \"trap 'rm -f out/junit.xml' EXIT\\n\" >> src/add.sh",
        ),
    ];
    let t = repo_of(
        &[
            ("src/add.sh", "add() { echo $(($1 + $2)); }\n"),
            ("tests/run.sh", JUNIT_RUNNER),
            (".gitignore", "/out\n"),
        ],
        &agents,
        "guardrails:\n  - { name: unit, command: \"sh tests/run.sh\", results: out/junit.xml, timeout: 60s }\n",
    );
    let doc = run(&t, &["honest", "wrong", "deleter"]);
    let h = candidate(&doc, "honest");
    let unit = report(h, "unit");
    assert_eq!(unit["status"], "pass", "{unit}");
    assert_eq!(unit["ledger"]["runner"], "junit", "{unit}");
    assert_eq!(unit["ledger"]["ran"], 2, "{unit}");
    assert!(
        unit["output"]
            .as_str()
            .unwrap()
            .contains("base tests: 2/2 pass on this change"),
        "{unit}"
    );
    // Its checks are shell, which rascal cannot mutate: the report says
    // that nothing checked the results are the runner's.
    assert!(
        unit["output"]
            .as_str()
            .unwrap()
            .contains("no canary: none of these tests has an assertion rascal can change"),
        "{unit}"
    );
    // Exit 0, but the results say both tests failed.
    let w = candidate(&doc, "wrong");
    assert_eq!(w["verdict"], "fail", "{w}");
    let found = rules(w);
    for rule in ["test-run/failed", "base-tests/failed"] {
        assert!(found.iter().any(|r| r == rule), "{rule}: {found:?}");
    }
    // The code under test removed the results: no result is not a pass.
    let d = candidate(&doc, "deleter");
    assert_eq!(d["verdict"], "fail", "{d}");
    let unit = report(d, "unit");
    assert!(
        unit["errored"]
            .as_str()
            .unwrap_or("")
            .contains("wrote no results file at `out/junit.xml`"),
        "{unit}"
    );
}

/// A JUnit-reporting runner whose test cases are files under
/// `tests/cases/` (the runner script itself decides how checks run, so a
/// change cannot edit it; it adds cases instead).
const JUNIT_CASES_RUNNER: &str = r#"#!/bin/sh
. ./src/add.sh
mkdir -p out
check() {
  if [ "$2" = "$3" ]; then
    echo "<testcase classname=\"add\" name=\"$1\"/>"
  else
    echo "<testcase classname=\"add\" name=\"$1\"><failure message=\"got $2, want $3\"/></testcase>"
  fi
}
{
  echo '<testsuite name="add">'
  for f in tests/cases/*.sh; do . "./$f"; done
  echo '</testsuite>'
} > out/junit.tmp
mv out/junit.tmp out/junit.xml
exit 0
"#;

#[test]
fn a_junit_runners_new_tests_are_run_on_the_base_code() {
    if !bwrap() {
        return;
    }
    let agents = [
        (
            "proving",
            "printf 'triple() { echo $(($1 * 3)); }\\n' >> src/add.sh && printf 'check triple \"$(triple 2)\" 6\\n' > tests/cases/triple.sh",
        ),
        (
            "decorative",
            "printf 'check zero \"$(add 0 0)\" 0\\n' > tests/cases/zero.sh",
        ),
    ];
    let t = repo_of(
        &[
            ("src/add.sh", "add() { echo $(($1 + $2)); }\n"),
            ("tests/run.sh", JUNIT_CASES_RUNNER),
            ("tests/cases/small.sh", "check small \"$(add 2 2)\" 4\n"),
            (".gitignore", "/out\n"),
        ],
        &agents,
        "guardrails:\n  - { name: unit, command: \"sh tests/run.sh\", results: out/junit.xml, timeout: 60s }\n",
    );
    let doc = run(&t, &["proving", "decorative"]);
    for (name, proving, line) in [
        (
            "proving",
            1,
            "new tests: 1 of 1 fail at the base and pass here",
        ),
        (
            "decorative",
            0,
            "new tests: 0 of 1 fail at the base and pass here — passing on the base's code too:",
        ),
    ] {
        let c = candidate(&doc, name);
        assert_eq!(c["verdict"], "pass", "{name}: {c}");
        let unit = report(c, "unit");
        assert_eq!(unit["ledger"]["new_tests"]["added"], 1, "{name}: {unit}");
        assert_eq!(
            unit["ledger"]["new_tests"]["proving"], proving,
            "{name}: {unit}"
        );
        let out = unit["output"].as_str().unwrap();
        assert!(out.contains(line), "{name}: {out}");
        assert!(
            out.contains("base tests: 1/1 pass on this change"),
            "{name}: {out}"
        );
    }
}

#[test]
fn a_test_that_already_fails_at_the_base_says_so() {
    if !bwrap() {
        return;
    }
    // The base's `adds` fails on the base's own code; a change that does
    // not touch `add` fails it too, and the report says the base is red.
    let t = rust_repo(
        &[("aside", "printf '// a note\\n' >> src/lib.rs")],
        CARGO_TEST,
    );
    let doc = run(&t, &["aside"]);
    let c = candidate(&doc, "aside");
    assert_eq!(c["verdict"], "fail", "{c}");
    let tests = report(c, "tests");
    assert_eq!(
        tests["issues"][0]["rule"], "test-run/fails-at-base",
        "{tests}"
    );
    let said = tests["issues"][0]["message"].as_str().unwrap();
    assert!(
        said.contains("fails at the base too: 1 of the 1 test failing here")
            && said.contains("adds"),
        "{said}"
    );
    assert!(
        tests["output"]
            .as_str()
            .unwrap()
            .contains("fails at the base too:"),
        "{tests}"
    );
}

/// The Python tricks of issue 29 that had no test of their own: an
/// `atexit` hook that ends the interpreter with `os._exit(0)` after the
/// tests failed (in the code under test, and in the test module), and a
/// top-level package or module in the change that shadows the runner
/// (`pytest/` for `python3 -m pytest`, `unittest.py` for
/// `python3 -m unittest`); and code under test that patches the runner in
/// its own process (pytest's reports, unittest's `assertEqual`), which the
/// base's tests cannot see: they run under the patched runner. Each is a
/// FAIL; the honest fix passes.
#[test]
fn python_runner_tricks_fail_on_evidence() {
    use crate::test_integrity::toolchain;
    if !bwrap() {
        return;
    }
    let exit_zero = "import atexit, os\natexit.register(lambda: os._exit(0))\n";
    let fake_runner =
        "import sys\nprint('1 passed in 0.01s')\nprint('Ran 1 test')\nprint('OK')\nsys.exit(0)\n";
    // (runner, guardrail command, test file, [(agent, script, a rule its FAIL must carry)])
    type Trick<'a> = (&'a str, String, &'a str);
    // The first python3 that has pytest (a version manager's may not).
    let python = python_with_pytest();
    let pytest = format!("{python} -m pytest -q -p no:cacheprovider");
    let cases: Vec<(&str, &str, &str, Vec<Trick>)> = vec![
        (
            "pytest",
            &pytest,
            "from calc import add\n\n\ndef test_adds():\n    assert add(2, 2) == 4\n",
            vec![
                ("atexit-code", write("calc.py", &format!("{exit_zero}\ndef add(a, b):\n    return a - b\n")), "test-integrity/ends-the-run"),
                ("atexit-test", format!("printf '{}' >> test_calc.py", exit_zero.replace('\n', "\\n")), "test-integrity/ends-the-run"),
                ("shadow-pytest", write("pytest/__init__.py", "") + &write("pytest/__main__.py", fake_runner), "test-integrity/runner-config"),
                (
                    "patch-reports",
                    write("calc.py", "import _pytest.reports as r\nr.BaseReport.passed = property(lambda s: True)\nr.BaseReport.failed = property(lambda s: False)\n\n\ndef add(a, b):\n    return a - b\n"),
                    "test-integrity/patches-runner",
                ),
            ],
        ),
        (
            "unittest",
            "python3 -m unittest",
            "import unittest\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(add(2, 2), 4)\n",
            vec![
                ("atexit-code", write("calc.py", &format!("{exit_zero}\ndef add(a, b):\n    return a - b\n")), "test-integrity/ends-the-run"),
                ("shadow-unittest", write("unittest.py", fake_runner), "test-integrity/runner-config"),
                (
                    "patch-assert",
                    write("calc.py", "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n\n\ndef add(a, b):\n    return a - b\n"),
                    "test-integrity/patches-runner",
                ),
            ],
        ),
    ];
    let mut wrong = Vec::new();
    for (runner, command, test, tricks) in cases {
        let module = if runner == "pytest" {
            "pytest"
        } else {
            "unittest"
        };
        if !toolchain(python, &["-c", &format!("import {module}")]) {
            continue;
        }
        let mut agents: Vec<(&str, &str)> =
            tricks.iter().map(|(n, s, _)| (*n, s.as_str())).collect();
        agents.push(("fix", "sed -i 's/a - b/a + b/' calc.py"));
        let t = repo_of(
            &[
                ("calc.py", "def add(a, b):\n    return a - b\n"),
                ("test_calc.py", test),
            ],
            &agents,
            &format!("guardrails:\n  - {{ name: tests, command: \"{command}\" }}\n"),
        );
        let names: Vec<&str> = agents.iter().map(|(n, _)| *n).collect();
        let doc = run(&t, &names);
        for (name, _, rule) in &tricks {
            let c = candidate(&doc, name);
            let found = rules(c);
            if c["verdict"] != "fail" || !found.iter().any(|r| r == rule) {
                wrong.push(format!(
                    "{runner} {name}: verdict {}, want {rule}, rules {found:?}",
                    c["verdict"]
                ));
            }
        }
        let fixed = candidate(&doc, "fix");
        if fixed["verdict"] != "pass" {
            wrong.push(format!("{runner} fix: {fixed}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The Rust tricks of issue 29 that had no test of their own: a
/// procedural macro added as a path dev-dependency that removes the tests
/// as they compile, and a held-out criterion "passed" by code that ends
/// the process with `exit(0)` before any result.
#[test]
fn a_test_rewriting_proc_macro_and_an_exit_under_a_held_out_test_fail() {
    if !bwrap() {
        return;
    }
    let proc_macro = write(
        "neuter/Cargo.toml",
        "[package]\nname = \"neuter\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[lib]\nproc-macro = true\n",
    ) + &write(
        "neuter/src/lib.rs",
        "use proc_macro::TokenStream;\n\n#[proc_macro_attribute]\npub fn neuter(_: TokenStream, _: TokenStream) -> TokenStream {\n    TokenStream::new()\n}\n",
    ) + "printf '\\n[dev-dependencies]\\nneuter = { path = \"neuter\" }\\n' >> Cargo.toml && "
        + &sed("s/^#\\[cfg(test)\\]/#[cfg(test)]\\n#[neuter::neuter]/");
    let exiter = sed("s/    a - b/    std::process::exit(0)/");
    let t = rust_repo(
        &[
            ("proc-macro", &proc_macro),
            ("exiter", &exiter),
            ("good", &sed("s/a - b/a + b/")),
        ],
        CARGO_TEST,
    );
    let doc = run(&t, &["proc-macro", "good"]);
    let pm = candidate(&doc, "proc-macro");
    assert_eq!(pm["verdict"], "fail", "{pm}");
    assert!(
        rules(pm)
            .iter()
            .any(|r| r == "test-integrity/runner-config"),
        "{:?}",
        rules(pm)
    );
    assert_eq!(candidate(&doc, "good")["verdict"], "pass");

    // The held-out criterion alone judges `exiter` (no guardrail that
    // would fail it first).
    t.write(".rascal/guardrails.yaml", "guardrails: []\n");
    t.write(
        ".rascal/verification.yaml",
        "criteria:\n  test_command: \"cargo test --offline --quiet {check}\"\n",
    );
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(outside.path().join("tests")).unwrap();
    std::fs::write(
        outside.path().join("tests/holdout_adds.rs"),
        "#[test]\nfn holdout_adds() {\n    assert_eq!(calc::add(2, 3), 5);\n}\n",
    )
    .unwrap();
    t.write(
        ".rascal/specs/add.yaml",
        &format!(
            "instruction: make add() correct\nholdout: [{}]\nacceptance_criteria:\n  - {{ description: \"held-out tests pass\", type: holdout, check: holdout_ }}\n",
            outside.path().display()
        ),
    );
    t.commit_all("held-out criterion");
    let doc =
        crate::test_integrity::rascal_json(&t, &["run", "--spec", "add"], &["exiter", "good"]);
    let ex = candidate(&doc, "exiter");
    assert_eq!(ex["verdict"], "fail", "{ex}");
    let held = ex["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "held-out tests pass")
        .unwrap_or_else(|| panic!("no held-out report: {ex}"));
    assert_eq!(held["status"], "fail", "exit(0) is not a result: {held}");
    let good = candidate(&doc, "good");
    assert_eq!(good["verdict"], "pass", "{good}");
    let held = good["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "held-out tests pass")
        .unwrap();
    assert_eq!(held["status"], "pass", "{held}");
}

/// A new test that fails at the base only because a file the change adds
/// is missing there proves nothing about the code (issue 46, item 3): the
/// change's added data files are laid in the at-base copy, so only the
/// code differs, and such a test passes there — named, never evidence.
#[test]
fn a_new_test_that_fails_at_the_base_only_for_a_missing_file_proves_nothing() {
    if !bwrap() {
        return;
    }
    let marker = sed("s/a - b/a + b/")
        + " && echo done > marker.txt && "
        + &sed("s/use super::\\*;/use super::*;\\n    #[test]\\n    fn marked() { assert!(std::path::Path::new(\"marker.txt\").exists()); }/");
    let t = rust_repo(&[("marker", &marker)], CARGO_TEST);
    let doc = run(&t, &["marker"]);
    let c = candidate(&doc, "marker");
    let l = &report(c, "tests")["ledger"]["new_tests"];
    assert_eq!(
        (l["added"].as_u64(), l["proving"].as_u64()),
        (Some(1), Some(0)),
        "{l}"
    );
    let out = report(c, "tests")["output"].as_str().unwrap().to_string();
    assert!(
        out.contains("passing on the base's code too: tests::marked"),
        "{out}"
    );
}

/// The other side of laying added data at the base: a file the base's own
/// code reads is never laid there, so a candidate cannot add a flag file
/// that makes the base's code fail and pass off its test as proof of a bug
/// the base never had.
#[test]
fn an_added_file_the_base_code_reads_is_not_laid_at_the_base() {
    if !bwrap() {
        return;
    }
    let lib = "pub fn add(a: i32, b: i32) -> i32 {\n    if std::path::Path::new(\"legacy.flag\").exists() { a - b } else { a + b }\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 2), 4);\n    }\n}\n";
    // The base is right; the candidate adds the flag, makes its code ignore
    // it, and writes a test the flagged base would fail.
    let poison = "echo on > legacy.flag && ".to_string()
        + &sed("s/if std::path::Path::new(\"legacy.flag\").exists() { a - b } else { a + b }/a + b/")
        + " && "
        + &sed("s/use super::\\*;/use super::*;\\n    #[test]\\n    fn adds_three() { assert_eq!(add(1, 2), 3); }/");
    let t = crate::test_integrity::rust_repo_with(lib, &[("poison", &poison)], CARGO_TEST);
    let doc = run(&t, &["poison"]);
    let l = &report(candidate(&doc, "poison"), "tests")["ledger"]["new_tests"];
    assert_eq!(
        (l["added"].as_u64(), l["proving"].as_u64()),
        (Some(1), Some(0)),
        "{l}"
    );
}

/// The same for a data file the change rewrites: a new test that checks
/// only what the file says fails at the base because the base's copy says
/// something else — not because of the code. The change's version of a
/// data file no code names is laid at the base, so the test passes there
/// and proves nothing.
#[test]
fn a_new_test_that_fails_at_the_base_only_for_a_rewritten_data_file_proves_nothing() {
    if !bwrap() {
        return;
    }
    let lib = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 2), 4);\n    }\n}\n";
    let limits = sed("s/a - b/a + b/")
        + " && echo max=10 > limits.txt && "
        + &sed("s/use super::\\*;/use super::*;\\n    #[test]\\n    fn limited() { assert!(std::fs::read_to_string(\"limits.txt\").unwrap().contains(\"max=10\")); }/");
    let t = crate::test_integrity::rust_repo_with(lib, &[("limits", &limits)], CARGO_TEST);
    t.write("limits.txt", "max=5\n");
    t.commit_all("limits");
    let doc = run(&t, &["limits"]);
    let c = candidate(&doc, "limits");
    let l = &report(c, "tests")["ledger"]["new_tests"];
    assert_eq!(
        (l["added"].as_u64(), l["proving"].as_u64()),
        (Some(1), Some(0)),
        "{l}"
    );
    let out = report(c, "tests")["output"].as_str().unwrap().to_string();
    assert!(
        out.contains("passing on the base's code too: tests::limited"),
        "{out}"
    );
}

/// The flag-file attack through a directory: the base's code reads every
/// file under `data/` (it names the directory, not the file). A candidate
/// that rewrites `data/limits.txt` into something the base's code cannot
/// read, stops reading it itself, and adds a test of `limit()` would have
/// its test fail at the base only because of the laid file — a bug the
/// base never had. A file under a directory the base's code names is not
/// laid: the test passes at the base and proves nothing.
#[test]
fn a_rewritten_file_in_a_directory_the_base_code_reads_is_not_laid_at_the_base() {
    if !bwrap() {
        return;
    }
    let lib = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n/// The largest limit in the files under `data`.\npub fn limit() -> i32 {\n    let mut best = 0;\n    for e in std::fs::read_dir(\"data\").unwrap() {\n        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();\n        best = best.max(text.trim().trim_start_matches(\"max=\").parse::<i32>().unwrap());\n    }\n    best\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 2), 4);\n    }\n}\n";
    let poisoned = lib
        .replace("a - b", "a + b")
        .replace(
            "    let mut best = 0;\n    for e in std::fs::read_dir(\"data\").unwrap() {\n        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();\n        best = best.max(text.trim().trim_start_matches(\"max=\").parse::<i32>().unwrap());\n    }\n    best\n",
            "    5\n",
        )
        .replace(
            "        assert_eq!(add(2, 2), 4);\n    }\n",
            "        assert_eq!(add(2, 2), 4);\n    }\n\n    #[test]\n    fn limit_is_five() {\n        assert_eq!(limit(), 5);\n    }\n",
        );
    let poison =
        crate::test_integrity::write("src/lib.rs", &poisoned) + "echo max=oops > data/limits.txt\n";
    let t = crate::test_integrity::rust_repo_with(lib, &[("poison", &poison)], CARGO_TEST);
    t.write("data/limits.txt", "max=5\n");
    t.commit_all("limits");
    let doc = run(&t, &["poison"]);
    let l = &report(candidate(&doc, "poison"), "tests")["ledger"]["new_tests"];
    assert_eq!(
        (l["added"].as_u64(), l["proving"].as_u64()),
        (Some(1), Some(0)),
        "{l}"
    );
}

/// pytest runs go on past a file that does not import
/// (`--continue-on-collection-errors`), so the other files' results are
/// read; a change that makes a base test file unimportable still FAILs —
/// that file's tests have no result, and the base's tests must pass. The
/// honest change beside it passes.
#[test]
fn a_base_test_file_the_change_makes_unimportable_still_fails_the_base_tests() {
    if !bwrap() {
        return;
    }
    let python = python_with_pytest();
    if !crate::test_integrity::toolchain(python, &["-c", "import pytest"]) {
        crate::common::skip("RASCAL_REQUIRE_TOOLCHAINS", "no python3 with pytest");
        return;
    }
    let files = [
        (
            "calc.py",
            "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
        ),
        (
            "test_add.py",
            "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
        ),
        (
            "test_sub.py",
            "from calc import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n",
        ),
    ];
    // `hides` removes `sub`, so test_sub.py cannot import; `honest` only
    // adds a function.
    let hides = "printf 'def add(a, b):\\n    return a + b\\n' > calc.py".to_string();
    let honest = "printf '\\n\\ndef mul(a, b):\\n    return a * b\\n' >> calc.py".to_string();
    let t = repo_of(
        &files,
        &[("hides", &hides), ("honest", &honest)],
        &format!("guardrails:\n  - {{ name: tests, command: \"{python} -m pytest -q -p no:cacheprovider\" }}\n"),
    );
    // Its own run already fails (a collection error): the base's tests
    // run on it only when every step is asked for.
    let doc = run_full_report(&t, &["hides", "honest"]);
    assert_eq!(
        not_passing(&doc, &["honest"]),
        Vec::<String>::new(),
        "{doc}"
    );
    let c = candidate(&doc, "hides");
    assert_eq!(c["verdict"], "fail", "{c}");
    let out = report(c, "tests")["output"].as_str().unwrap().to_string();
    assert!(out.contains("base tests: 1/2 pass on this change"), "{out}");
    assert!(out.contains("test_sub.py::test_sub"), "{out}");
}
