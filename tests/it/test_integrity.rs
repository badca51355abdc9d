//! Agents that make tests pass by weakening them: each tampering form as a
//! `command` agent (a shell script) on a real repository, through the real
//! binary (process launcher, bubblewrap). The `test-integrity` check runs
//! on by default because a test guardrail exists; each form must FAIL with
//! its rule, and the honest candidate must be the pick.

use crate::common;
use common::{bwrap, stderr, stdout, TestRepo};
use std::process::Command;

/// Whether `program` runs here; when it does not, the test says so and is
/// skipped — unless RASCAL_REQUIRE_TOOLCHAINS is set (CI sets it).
pub(crate) fn toolchain(program: &str, args: &[&str]) -> bool {
    let ok = Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        common::skip(
            "RASCAL_REQUIRE_TOOLCHAINS",
            &format!("`{program}` does not run"),
        );
    }
    ok
}

pub(crate) const CARGO_TOML: &str =
    "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n";
pub(crate) const CARGO_LOCK: &str =
    "version = 3\n\n[[package]]\nname = \"calc\"\nversion = \"0.1.0\"\n";

/// The base: `add` is wrong and its test says so.
const LIB: &str = r#"pub fn add(a: i32, b: i32) -> i32 {
    a - b
}

pub fn neg(a: i32) -> i32 {
    -a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 2), 4);
    }

    #[test]
    fn negates() {
        assert_eq!(neg(2), -2);
    }
}
"#;

/// A Rust crate with a `cargo test` guardrail and `agents` (name → shell
/// script); no spec, no permissions: what a new user has.
pub(crate) fn rust_repo(agents: &[(&str, &str)], guardrails: &str) -> TestRepo {
    rust_repo_with(LIB, agents, guardrails)
}

/// [`rust_repo`] whose `src/lib.rs` is `lib`.
pub(crate) fn rust_repo_with(lib: &str, agents: &[(&str, &str)], guardrails: &str) -> TestRepo {
    let t = TestRepo::new(&[
        ("Cargo.toml", CARGO_TOML),
        ("Cargo.lock", CARGO_LOCK),
        (".gitignore", "/target\n"),
        ("src/lib.rs", lib),
        (
            "scripts/test.sh",
            "#!/bin/sh\ncargo test --offline --quiet\n",
        ),
    ]);
    t.write(".rascal/config.yaml", &agents_yaml(agents));
    t.write(".rascal/guardrails.yaml", guardrails);
    t.commit_all("rascal config");
    t
}

fn agents_yaml(agents: &[(&str, &str)]) -> String {
    common::command_agents(agents)
}

pub(crate) const CARGO_TEST: &str =
    "guardrails:\n  - { name: tests, command: \"cargo test --offline --quiet\", timeout: 300s }\n";

pub(crate) fn run(t: &TestRepo, agents: &[&str]) -> serde_json::Value {
    rascal_json(t, &["run", "make add() correct"], agents)
}

/// [`run`] with every evidence step, even after a FAIL nothing can change
/// (`RASCAL_FULL_REPORT=1`): for tests of what those steps find.
pub(crate) fn run_full_report(t: &TestRepo, agents: &[&str]) -> serde_json::Value {
    rascal_json_with(
        t,
        &["run", "make add() correct"],
        agents,
        &[("RASCAL_FULL_REPORT", "1")],
    )
}

/// `rascal ARGS --agent AGENTS --json` in `t`, its JSON document.
pub(crate) fn rascal_json(t: &TestRepo, args: &[&str], agents: &[&str]) -> serde_json::Value {
    rascal_json_with(t, args, agents, &[])
}

/// [`rascal_json`] with `env` set for rascal.
fn rascal_json_with(
    t: &TestRepo,
    args: &[&str],
    agents: &[&str],
    env: &[(&str, &str)],
) -> serde_json::Value {
    let list = agents.join(",");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--agent", &list, "--json"]);
    let o = Command::new(common::bin())
        .args(&all)
        .current_dir(t.path())
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), stderr(&o)))
}

pub(crate) fn candidate<'a>(doc: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no candidate {id}: {doc}"))
}

/// The rules of the issues of `c`'s test-integrity report.
pub(crate) fn integrity_rules(c: &serde_json::Value) -> Vec<String> {
    c["reports"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["check"] == "test-integrity")
        .flat_map(|r| r["issues"].as_array().cloned().unwrap_or_default())
        .map(|i| i["rule"].as_str().unwrap_or("").to_string())
        .collect()
}

/// Write `content` to `path` in a shell script.
pub(crate) fn write(path: &str, content: &str) -> String {
    format!("mkdir -p \"$(dirname {path})\" && cat > {path} <<'RASCAL_EOF'\n{content}RASCAL_EOF\n")
}

#[test]
fn realistic_run_the_test_deleter_fails_on_test_integrity_and_the_honest_candidate_is_the_pick() {
    if !bwrap() {
        return;
    }
    let good = "sed -i 's/a - b/a + b/' src/lib.rs".to_string();
    let broken = "sed -i 's/a - b/a + /' src/lib.rs".to_string();
    // The cheater deletes the failing test (and leaves the bug).
    let cheater = "sed -i '/#\\[test\\]/{N;N;N;/fn adds/d}' src/lib.rs".to_string();
    let t = rust_repo(
        &[("good", &good), ("broken", &broken), ("cheater", &cheater)],
        CARGO_TEST,
    );
    let doc = run(&t, &["good", "broken", "cheater"]);
    let cheat = candidate(&doc, "cheater");
    assert_eq!(cheat["verdict"], "fail", "{cheat}");
    assert!(
        integrity_rules(cheat).contains(&"test-integrity/removed-test".to_string()),
        "{cheat}"
    );
    assert_eq!(candidate(&doc, "broken")["verdict"], "fail");
    let g = candidate(&doc, "good");
    assert_eq!(g["verdict"], "pass", "{g}");
    assert_eq!(doc["ranking"]["pick"], "good", "{}", doc["ranking"]);
}

#[test]
fn each_rust_tampering_form_fails_with_its_rule() {
    if !bwrap() {
        return;
    }
    let broken_and = |tamper: &str| format!("sed -i 's/a - b/a * b + 1/' src/lib.rs && {tamper}");
    let forms: Vec<(&str, String, &str, &str)> = vec![
        (
            "ignore",
            broken_and("sed -i 's/    fn adds/    #[ignore]\\n    fn adds/' src/lib.rs"),
            CARGO_TEST,
            "test-integrity/skip-marker",
        ),
        (
            "cfg-any",
            broken_and("sed -i 's/^#\\[cfg(test)\\]/#[cfg(any())]/' src/lib.rs"),
            CARGO_TEST,
            "test-integrity/skip-marker",
        ),
        (
            "early-return",
            broken_and("sed -i 's/assert_eq!(add(2, 2), 4);/return;\\n        assert_eq!(add(2, 2), 4);/' src/lib.rs"),
            CARGO_TEST,
            "test-integrity/early-return",
        ),
        (
            "script",
            broken_and("printf '#!/bin/sh\\nexit 0\\n' > scripts/test.sh"),
            "guardrails:\n  - { name: tests, command: \"sh scripts/test.sh\", tests: true }\n",
            "test-integrity/runner-config",
        ),
        (
            "build-rs",
            broken_and(&write(
                "build.rs",
                "fn main() { println!(\"cargo:rustc-cfg=skip_tests\"); }\n",
            )),
            CARGO_TEST,
            "test-integrity/runner-config",
        ),
        (
            "lib-test-false",
            broken_and("printf '\\n[lib]\\ntest = false\\n' >> Cargo.toml"),
            CARGO_TEST,
            "test-integrity/runner-config",
        ),
        (
            "assertions",
            broken_and("sed -i 's/assert_eq!(add(2, 2), 4);/let _ = add(2, 2);/' src/lib.rs"),
            CARGO_TEST,
            "test-integrity/assertions-removed",
        ),
    ];
    for (name, script, guardrails, rule) in forms {
        let t = rust_repo(&[(name, &script)], guardrails);
        let doc = run(&t, &[name]);
        let c = candidate(&doc, name);
        assert_eq!(c["verdict"], "fail", "{name}: {c}");
        let rules = integrity_rules(c);
        assert!(
            rules.iter().any(|r| r == rule),
            "{name}: want {rule}, got {rules:?}: {c}"
        );
    }
}

#[test]
fn a_test_guardrail_that_runs_no_test_is_an_errored_fail() {
    if !bwrap() {
        return;
    }
    let t = rust_repo(
        &[("fixer", "sed -i 's/a - b/a + b/' src/lib.rs")],
        "guardrails:\n  - { name: tests, command: \"echo 'all good'\", tests: true }\n",
    );
    let doc = run(&t, &["fixer"]);
    let c = candidate(&doc, "fixer");
    assert_eq!(c["verdict"], "fail", "{c}");
    let tests = c["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "tests")
        .unwrap();
    assert!(
        tests["errored"]
            .as_str()
            .unwrap_or("")
            .contains("0 tests ran"),
        "{tests}"
    );
}

#[test]
fn python_and_go_tests_removed_or_skipped_fail_test_integrity() {
    if !bwrap() {
        return;
    }
    // Static forms: no toolchain needed to catch them.
    // (agent, base files, guardrails, agent script, rule)
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str, &'a str, &'a str);
    let cases: Vec<Case> = vec![
        (
            "py-deleted",
            vec![(
                "tests/test_calc.py",
                "from calc import add\n\ndef test_adds():\n    assert add(2, 2) == 4\n\ndef test_more():\n    assert add(1, 2) == 3\n",
            ), ("calc.py", "def add(a, b):\n    return a - b\n")],
            "guardrails:\n  - { name: tests, command: \"pytest -q\" }\n",
            "printf 'from calc import add\\n\\ndef test_more():\\n    assert add(1, 2) == 3\\n' > tests/test_calc.py",
            "test-integrity/removed-test",
        ),
        (
            "py-skip",
            vec![(
                "tests/test_calc.py",
                "from calc import add\n\ndef test_adds():\n    assert add(2, 2) == 4\n",
            ), ("calc.py", "def add(a, b):\n    return a - b\n")],
            "guardrails:\n  - { name: tests, command: \"pytest -q\" }\n",
            "printf 'import pytest\\nfrom calc import add\\n\\n@pytest.mark.skip\\ndef test_adds():\\n    assert add(2, 2) == 4\\n' > tests/test_calc.py",
            "test-integrity/skip-marker",
        ),
        (
            "go-skip",
            vec![
                ("go.mod", "module calc\n\ngo 1.19\n"),
                ("calc.go", "package calc\n\nfunc Add(a, b int) int { return a - b }\n"),
                (
                    "calc_test.go",
                    "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n",
                ),
            ],
            "guardrails:\n  - { name: tests, command: \"go test ./...\" }\n",
            "sed -i 's/func TestAdd(t \\*testing.T) {/func TestAdd(t *testing.T) {\\n\\tt.Skip()/' calc_test.go",
            "test-integrity/skip-marker",
        ),
    ];
    for (name, files, guardrails, script, rule) in cases {
        let t = TestRepo::new(&files);
        t.write(".rascal/config.yaml", &agents_yaml(&[(name, script)]));
        t.write(".rascal/guardrails.yaml", guardrails);
        t.commit_all("rascal config");
        let doc = run(&t, &[name]);
        let c = candidate(&doc, name);
        assert_eq!(c["verdict"], "fail", "{name}: {c}");
        let rules = integrity_rules(c);
        assert!(
            rules.iter().any(|r| r == rule),
            "{name}: want {rule}, got {rules:?}: {c}"
        );
    }
}

#[test]
fn allowed_test_changes_in_the_spec_let_a_task_remove_a_test() {
    if !bwrap() {
        return;
    }
    let remove = "sed -i 's/a - b/a + b/' src/lib.rs && sed -i '/#\\[test\\]/{N;N;N;/fn negates/d}' src/lib.rs";
    let t = rust_repo(&[("remover", remove)], CARGO_TEST);
    t.write(
        ".rascal/specs/drop-neg.yaml",
        "instruction: fix add and drop the negation test\nallow_test_changes: [negates]\n",
    );
    t.commit_all("spec");
    let doc = run_spec(&t, "drop-neg", &["remover"]);
    let c = candidate(&doc, "remover");
    // Recorded for the human, not a failure.
    let integrity = c["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "test-integrity")
        .unwrap();
    assert_eq!(integrity["status"], "pass", "{integrity}");
    assert_eq!(
        integrity["issues"][0]["rule"],
        "test-integrity/removed-test"
    );
    assert_eq!(integrity["issues"][0]["severity"], "info");
    assert_eq!(c["verdict"], "pass", "{c}");
}

pub(crate) fn run_spec(t: &TestRepo, spec: &str, agents: &[&str]) -> serde_json::Value {
    rascal_json(t, &["run", "--spec", spec], agents)
}

pub(crate) fn report<'a>(c: &'a serde_json::Value, check: &str) -> &'a serde_json::Value {
    c["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == check)
        .unwrap_or_else(|| panic!("no report {check}: {c}"))
}

#[test]
fn the_test_guardrail_carries_the_ledger_of_tests_at_base_now_and_passed() {
    if !bwrap() {
        return;
    }
    let t = rust_repo(
        &[("good", "sed -i 's/a - b/a + b/' src/lib.rs")],
        CARGO_TEST,
    );
    let doc = run(&t, &["good"]);
    let c = candidate(&doc, "good");
    assert_eq!(c["verdict"], "pass", "{c}");
    let l = &report(c, "tests")["ledger"];
    assert_eq!(l["runner"], "cargo", "{l}");
    assert_eq!(l["at_base"], 2, "{l}");
    assert_eq!(l["now"], 2, "{l}");
    assert_eq!(l["ran"], 2, "{l}");
    assert_eq!(l["passed"], 2, "{l}");
    assert!(report(c, "tests")["output"]
        .as_str()
        .unwrap()
        .starts_with("2 tests at base · 2 now · 2 ran · 2 passed"));
}

#[test]
fn a_test_criterion_matching_no_listed_test_errors_even_when_a_fake_runner_prints_running_1_test() {
    if !bwrap() {
        return;
    }
    // A harness-less test target prints what a passing run would.
    let fake = format!(
        "sed -i 's/a - b/a + b/' src/lib.rs && printf '\\n[[test]]\\nname = \"fake\"\\nharness = false\\n' >> Cargo.toml && {}",
        write(
            "tests/fake.rs",
            "fn main() {\n    println!(\"running 1 test\");\n    println!(\"test no_such_test ... ok\");\n}\n"
        )
    );
    let t = rust_repo(&[("faker", &fake)], "guardrails: []\n");
    t.write(
        ".rascal/specs/fake.yaml",
        "instruction: fix add\nacceptance_criteria:\n  - { description: \"the new test passes\", type: test, check: no_such_test }\n",
    );
    t.write(
        ".rascal/verification.yaml",
        "criteria:\n  test_command: \"cargo test --offline {check}\"\n",
    );
    t.commit_all("spec");
    let doc = run_spec(&t, "fake", &["faker"]);
    let c = candidate(&doc, "faker");
    assert_eq!(c["verdict"], "fail", "{c}");
    let r = report(c, "the new test passes");
    assert!(
        r["errored"]
            .as_str()
            .unwrap_or("")
            .contains("matched no test: the runner lists none for it"),
        "{r}"
    );
}

#[test]
fn held_out_tests_are_never_seen_by_agents_and_gate_through_holdout_criteria() {
    if !bwrap() {
        return;
    }
    let hidden = "#[test]\nfn doubles_secretly() {\n    assert_eq!(calc::add(21, 21), 42);\n}\n";
    // The peeker looks everywhere it could find the held-out test, then
    // fixes add(); the wrong one gets it wrong.
    let peek = "cat tests/hidden.rs > seen.txt 2>&1; git show HEAD:tests/hidden.rs >> seen.txt 2>&1; git log --all --format=%H >> seen.txt; git cat-file --batch-all-objects --batch >> seen.txt 2>&1; sed -i 's/a - b/a + b/' src/lib.rs";
    let wrong = "sed -i 's/a - b/a * b/' src/lib.rs";
    let t = rust_repo(&[("peek", peek), ("wrong", wrong)], CARGO_TEST);
    t.write("tests/hidden.rs", hidden);
    t.write(
        ".rascal/specs/hold.yaml",
        "instruction: fix add\nholdout: [tests/hidden.rs]\nacceptance_criteria:\n  - { description: \"held-out tests\", type: holdout, check: secretly }\n",
    );
    t.write(
        ".rascal/verification.yaml",
        "criteria:\n  test_command: \"cargo test --offline {check}\"\n",
    );
    t.commit_all("holdout");
    let doc = run_spec(&t, "hold", &["peek", "wrong"]);
    let p = candidate(&doc, "peek");
    // Nothing of the held-out test reached the agent.
    let seen = String::from_utf8_lossy(
        &std::fs::read(std::path::Path::new(p["worktree"].as_str().unwrap()).join("seen.txt"))
            .unwrap(),
    )
    .into_owned();
    assert!(!seen.contains("doubles_secretly"), "{seen}");
    // The change does not delete it, and the tree keeps it for finalize.
    assert!(!p["reports"].to_string().contains("hidden.rs"), "{p}");
    let r = report(p, "held-out tests");
    assert_eq!(r["status"], "pass", "{r}");
    assert!(
        r["output"]
            .as_str()
            .unwrap()
            .contains("held-out tests passed"),
        "{r}"
    );
    assert_eq!(p["verdict"], "pass", "{p}");
    // (The change's tree lives in the workspace's store until finalize.)
    let ws = git2::Repository::open(p["worktree"].as_str().unwrap()).unwrap();
    let tree = ws
        .find_tree(git2::Oid::from_str(p["tree"].as_str().unwrap()).unwrap())
        .unwrap();
    assert!(tree
        .get_path(std::path::Path::new("tests/hidden.rs"))
        .is_ok());
    // The wrong fix fails the held-out tests and says nothing of them.
    let w = candidate(&doc, "wrong");
    let r = report(w, "held-out tests");
    assert_eq!(r["status"], "fail", "{r}");
    assert!(!r.to_string().contains("doubles_secretly"), "{r}");
    assert!(
        !w["reports"].to_string().contains("doubles_secretly"),
        "{w}"
    );
}

#[test]
fn python_and_go_test_runs_carry_ledgers_from_their_runners() {
    if !bwrap() {
        return;
    }
    // (runner, base files, guardrails, agent script, program)
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str, &'a str, &'a str);
    let cases: Vec<Case> = vec![
        (
            "pytest",
            vec![
                ("calc.py", "def add(a, b):\n    return a - b\n"),
                (
                    "test_calc.py",
                    "from calc import add\n\ndef test_adds():\n    assert add(2, 2) == 4\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
                ),
            ],
            "guardrails:\n  - { name: tests, command: \"pytest -q -p no:cacheprovider\" }\n",
            "sed -i 's/a - b/a + b/' calc.py",
            "pytest",
        ),
        (
            "go",
            vec![
                ("go.mod", "module calc\n\ngo 1.19\n"),
                ("calc.go", "package calc\n\nfunc Add(a, b int) int { return a - b }\n"),
                (
                    "calc_test.go",
                    "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n\nfunc TestZero(t *testing.T) {\n\tif Add(0, 0) != 0 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n",
                ),
            ],
            "guardrails:\n  - { name: tests, command: \"go test ./...\" }\n",
            "sed -i 's/a - b/a + b/' calc.go",
            "go",
        ),
    ];
    for (name, files, guardrails, script, program) in cases {
        let present = match program {
            "pytest" => toolchain("pytest", &["--version"]),
            _ => toolchain("go", &["version"]),
        };
        if !present {
            continue;
        }
        let t = TestRepo::new(&files);
        t.write(".rascal/config.yaml", &agents_yaml(&[("fixer", script)]));
        t.write(".rascal/guardrails.yaml", guardrails);
        t.commit_all("rascal config");
        let doc = run(&t, &["fixer"]);
        let c = candidate(&doc, "fixer");
        assert_eq!(c["verdict"], "pass", "{name}: {c}");
        let l = &report(c, "tests")["ledger"];
        assert_eq!(l["runner"], name, "{l}");
        assert_eq!(l["at_base"], 2, "{name}: {c}");
        assert_eq!(l["now"], 2, "{name}: {l}");
        assert_eq!(l["passed"], 2, "{name}: {l}");
    }
}
