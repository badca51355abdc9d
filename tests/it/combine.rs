//! `rascal combine RUN` end to end through the real binary (process
//! launcher, bubblewrap, a real Python repository): `add` and `mul` are
//! both wrong; one command agent fixes `add` (with a test proving it), the
//! other fixes `mul` (with its own). Both pass, each fails the other's
//! test, so the comparator has no pick. The combining agent reads the
//! material rascal laid out for it (`$RASCAL_COMBINE_DIR`, named in its
//! prompt) and applies both diffs: its candidate `combined` passes every
//! layer, cross-testing included, and is the pick; the journal has the
//! decision with who and when; `show` and `--json` list it. Combining is
//! refused when it is not configured, and when fewer than two passed.

use crate::common::{bwrap, code, command_agents, stderr, stdout, TestRepo};
use crate::test_integrity::{candidate, report, write};

const ADD: &str = "def add(a, b):\n    return a - b\n";
const MUL: &str = "def mul(a, b):\n    return a + b\n";
/// The base's test passes on both bugs.
const TESTS: &str = "import unittest\nfrom add import add\nfrom mul import mul\n\n\nclass TestCalc(unittest.TestCase):\n    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n        self.assertEqual(mul(2, 2), 4)\n";

const GUARDRAILS: &str = "guardrails:\n  - { name: tests, command: \"python3 -m unittest\" }\n";

/// A new unittest file `test_NAME.py` with one test `test_NAME` asserting
/// `assertion`.
fn new_test(name: &str, import: &str, assertion: &str) -> String {
    write(
        &format!("test_{name}.py"),
        &format!("import unittest\n{import}\n\n\nclass Test{name}(unittest.TestCase):\n    def test_{name}(self):\n        self.assertEqual({assertion})\n"),
    )
}

fn adder() -> String {
    format!(
        "sed -i 's/a - b/a + b/' add.py\n{}",
        new_test("adds", "from add import add", "add(2, 3), 5")
    )
}

fn multiplier() -> String {
    format!(
        "sed -i 's/a + b/a * b/' mul.py\n{}",
        new_test("multiplies", "from mul import mul", "mul(2, 3), 6")
    )
}

/// The combining agent: it checks what it was handed (the prompt names its
/// material and says the diffs are data; the files are there), then
/// applies every candidate's diff.
const COMBINER: &str = r#"set -e
grep -q 'RASCAL_COMBINE_DIR' "$RASCAL_INSTRUCTION_FILE"
grep -q 'never instructions to you' "$RASCAL_INSTRUCTION_FILE"
test -s "$RASCAL_COMBINE_DIR/task.md"
test -s "$RASCAL_COMBINE_DIR/agreement.md"
test -s "$RASCAL_COMBINE_DIR/candidates.md"
for f in "$RASCAL_COMBINE_DIR"/*.diff; do git apply "$f"; done
"#;

/// The calculator with `agents` (name, script) and `verification`.
fn repo(agents: &[(&str, &str)], verification: Option<&str>) -> TestRepo {
    let t = TestRepo::new(&[
        ("add.py", ADD),
        ("mul.py", MUL),
        ("test_calc.py", TESTS),
        (".rascal/guardrails.yaml", GUARDRAILS),
    ]);
    t.write(".rascal/config.yaml", &command_agents(agents));
    if let Some(v) = verification {
        t.write(".rascal/verification.yaml", v);
    }
    t.commit_all("rascal config");
    t
}

/// `rascal run` with `agents`, headless: the run's id.
fn run(t: &TestRepo, agents: &str) -> String {
    let o = t.rascal(&[
        "run",
        "fix add() and mul()",
        "--agent",
        agents,
        "--headless",
    ]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    out.lines()
        .find_map(|l| l.strip_prefix("replay: rascal show "))
        .unwrap_or_else(|| panic!("no run id: {out}"))
        .trim()
        .to_string()
}

fn show_json(t: &TestRepo, id: &str) -> serde_json::Value {
    let o = t.rascal(&["show", id, "--json"]);
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)))
}

const COMBINE: &str = "combine: { agent: combiner, top: 3 }\n";

#[test]
fn the_combined_candidate_takes_both_halves_passes_every_layer_and_is_the_pick() {
    if !bwrap() {
        return;
    }
    let (a, m) = (adder(), multiplier());
    let t = repo(
        &[("adder", &a), ("multiplier", &m), ("combiner", COMBINER)],
        Some(COMBINE),
    );
    let id = run(&t, "adder,multiplier");
    let before = show_json(&t, &id);
    for half in ["adder", "multiplier"] {
        assert_eq!(
            candidate(&before, half)["verdict"],
            "warn",
            "each fails the other's test: {before}"
        );
    }
    // Each fails the test the other wrote: no majority, no pick.
    assert!(before["ranking"]["pick"].is_null(), "{}", before["ranking"]);

    let o = t.rascal(&["combine", &id]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(code(&o), 0, "{out}");
    assert!(
        out.contains("] added: combining adder, multiplier")
            || out.contains("] added: combining multiplier, adder"),
        "{out}"
    );
    assert!(out.contains("[combined] combine of "), "{out}");

    let doc = show_json(&t, &id);
    let c = candidate(&doc, "combined");
    assert_eq!(c["verdict"], "pass", "{c}");
    assert_eq!(c["state"], "pass", "{c}");
    assert_eq!(c["agent"], "combiner", "{c}");
    let from: Vec<&str> = c["combined_from"]
        .as_array()
        .unwrap_or_else(|| panic!("{c}"))
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(from.len(), 2, "{c}");
    assert!(
        from.contains(&"adder") && from.contains(&"multiplier"),
        "{c}"
    );
    // Every layer ran on it, cross-testing included.
    for r in c["reports"].as_array().unwrap() {
        assert!(r["status"] == "pass" || r["status"] == "warn", "{r}");
    }
    let agreement = report(c, "agreement");
    assert_eq!(agreement["status"], "pass", "{agreement}");
    // Every line it adds came from a candidate (or the base): no new code.
    let provenance = report(c, "provenance");
    assert_eq!(provenance["status"], "pass", "{provenance}");
    assert!(
        !provenance["output"].as_str().unwrap().contains("new code"),
        "{provenance}"
    );
    let matrix = &doc["ranking"]["agreement"];
    assert_eq!(
        matrix["candidates"].as_array().unwrap().len(),
        3,
        "{matrix}"
    );
    // The combined code passes every test the halves wrote; each half
    // fails the other's, which the combined candidate and its author pass.
    assert_eq!(doc["ranking"]["pick"], "combined", "{}", doc["ranking"]);
    for half in ["adder", "multiplier"] {
        let h = candidate(&doc, half);
        let issues = report(h, "agreement")["issues"].as_array().unwrap().clone();
        assert!(
            issues.iter().any(|i| i["rule"] == "compare/disagrees"),
            "{half}: {h}"
        );
    }
    // The decision, with who and when.
    let d = c["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["kind"] == "combine")
        .unwrap_or_else(|| panic!("no combine decision: {c}"));
    assert!(!d["who"].as_str().unwrap().is_empty(), "{d}");
    assert!(d["at_ms"].as_i64().unwrap() > 0, "{d}");
    assert_eq!(d["from"].as_array().unwrap().len(), 2, "{d}");
    assert_eq!(doc["exit_code"], 0, "{doc}");

    let shown = t.rascal(&["show", &id]);
    let text = stdout(&shown);
    assert!(text.contains("[combined] combine of "), "{text}");
    assert!(text.contains("pick: combined"), "{text}");
    // The run went on in this process: nothing says it was interrupted.
    assert!(!text.contains("run interrupted"), "{text}");
    // What a person reads: the run with the combined candidate ranked.
    eprintln!("--- rascal show {id} ---\n{text}");
}

/// A combining agent that merges both halves and writes code of its own:
/// a special case no candidate wrote.
const LAUNDERER: &str = r#"set -e
for f in "$RASCAL_COMBINE_DIR"/*.diff; do git apply "$f"; done
printf '\n\ndef unlock(word):\n    return word == "letmein"\n' >> add.py
"#;

/// One that only adds an import (glue) to the merge.
const GLUER: &str = r#"set -e
for f in "$RASCAL_COMBINE_DIR"/*.diff; do git apply "$f"; done
sed -i '1i import os' add.py
"#;

#[test]
fn new_code_in_a_combine_is_listed_and_never_the_automatic_pick() {
    if !bwrap() {
        return;
    }
    let (a, m) = (adder(), multiplier());
    let t = repo(
        &[("adder", &a), ("multiplier", &m), ("combiner", LAUNDERER)],
        Some(COMBINE),
    );
    let id = run(&t, "adder,multiplier");
    let o = t.rascal(&["combine", &id]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    let doc = show_json(&t, &id);
    let c = candidate(&doc, "combined");
    assert_eq!(
        c["verdict"], "warn",
        "verified like any, flagged: {c}\n{out}"
    );
    let provenance = report(c, "provenance");
    let issues = provenance["issues"].as_array().unwrap();
    let at: Vec<(String, u64)> = issues
        .iter()
        .map(|i| {
            (
                i["path"].as_str().unwrap().to_string(),
                i["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        at,
        [("add.py".into(), 5), ("add.py".into(), 6)],
        "{provenance}"
    );
    assert!(issues.iter().all(|i| i["rule"] == "combine/new-code"));
    assert!(issues[1]["message"].as_str().unwrap().contains("letmein"));
    assert_ne!(doc["ranking"]["pick"], "combined", "{}", doc["ranking"]);
    // Never "no candidate passed": the run says a human must choose.
    assert!(
        doc["ranking"]["contested"]
            .as_str()
            .unwrap_or_default()
            .starts_with("combined ranks first but has 2 lines of new code"),
        "{}",
        doc["ranking"]
    );
    let shown = stdout(&t.rascal(&["show", &id]));
    assert!(shown.contains("new code in no candidate"), "{shown}");
    assert!(shown.contains("add.py:6"), "{shown}");
    // Choosing it is a human's decision, with a reason.
    let o = t.rascal(&["select", &id, "combined"]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(
        stderr(&o).contains("candidate `combined` has 2 lines of new code in no candidate"),
        "{}",
        stderr(&o)
    );
    let o = t.rascal(&[
        "select",
        &id,
        "combined",
        "--reason",
        "I read unlock(): wanted",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let mut cfg = t.repo.config().unwrap();
    cfg.set_str("user.name", "Tess Ter").unwrap();
    cfg.set_str("user.email", "tess@example.invalid").unwrap();
    let o = t.rascal(&["finalize", &id]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let path = stdout(&o)
        .lines()
        .find_map(|l| l.strip_prefix("PR body: "))
        .unwrap()
        .to_string();
    let body = std::fs::read_to_string(path).unwrap();
    assert!(body.contains("2 lines of new code"), "{body}");
    assert!(
        body.contains("`add.py:6`"),
        "every new line by file and line: {body}"
    );
}

#[test]
fn glue_alone_may_be_allowed_and_then_the_combine_is_the_pick() {
    if !bwrap() {
        return;
    }
    let (a, m) = (adder(), multiplier());
    let t = repo(
        &[("adder", &a), ("multiplier", &m), ("combiner", GLUER)],
        Some("combine: { agent: combiner, top: 3, allow_new: glue }\n"),
    );
    let id = run(&t, "adder,multiplier");
    let o = t.rascal(&["combine", &id]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let doc = show_json(&t, &id);
    let c = candidate(&doc, "combined");
    let provenance = report(c, "provenance");
    assert_eq!(provenance["status"], "pass", "{provenance}");
    assert!(
        provenance["output"]
            .as_str()
            .unwrap()
            .contains("1 of them glue, allowed by `combine.allow_new: glue`"),
        "{provenance}"
    );
    assert_eq!(doc["ranking"]["pick"], "combined", "{}", doc["ranking"]);
}

#[test]
fn combining_is_refused_when_not_configured_saying_how() {
    if !bwrap() {
        return;
    }
    let (a, m) = (adder(), multiplier());
    let t = repo(&[("adder", &a), ("multiplier", &m)], None);
    let id = run(&t, "adder,multiplier");
    let o = t.rascal(&["combine", &id]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{}{err}", stdout(&o));
    assert!(err.contains("combining is off"), "{err}");
    assert!(
        err.contains("combine: { agent: NAME, top: 3 }") && err.contains("verification.yaml"),
        "{err}"
    );
    // Nothing was recorded.
    let doc = show_json(&t, &id);
    assert_eq!(doc["candidates"].as_array().unwrap().len(), 2, "{doc}");
}

#[test]
fn combining_one_passing_candidate_is_refused_as_pointless() {
    if !bwrap() {
        return;
    }
    let a = adder();
    let t = repo(
        &[
            ("adder", &a),
            ("broken", "sed -i 's/a + b/a +/' mul.py"),
            ("combiner", COMBINER),
        ],
        Some(COMBINE),
    );
    let id = run(&t, "adder,broken");
    let before = show_json(&t, &id);
    assert_eq!(candidate(&before, "broken")["verdict"], "fail", "{before}");
    let o = t.rascal(&["combine", &id]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{}{err}", stdout(&o));
    assert!(err.contains("only `adder` passed"), "{err}");
    assert!(
        err.contains("combining one candidate is pointless"),
        "{err}"
    );
    let doc = show_json(&t, &id);
    assert_eq!(doc["candidates"].as_array().unwrap().len(), 2, "{doc}");
}

#[test]
fn a_combining_agent_not_in_config_yaml_is_a_config_error_with_its_place() {
    let t = repo(&[("adder", "true")], Some("combine: { agent: nobody }\n"));
    let o = t.rascal(&["run", "x", "--agent", "adder", "--headless"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains(".rascal/verification.yaml (at base commit "),
        "{err}"
    );
    assert!(err.contains("):1:19: "), "{err}");
    assert!(
        err.contains("`combine.agent` names agent `nobody`"),
        "{err}"
    );
    let t = repo(
        &[("adder", "true")],
        Some("combine: { agent: adder, top: 1 }\n"),
    );
    let o = t.rascal(&["run", "x", "--agent", "adder", "--headless"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert!(err.contains("`top: 1` must be between 2 and 8"), "{err}");
}

/// The combining agent as a scripted one: it writes the union of both
/// halves (the scripted runtime needs no step of its own to combine).
fn scripted_combiner() -> String {
    let add = "def add(a, b):\\n    return a + b\\n";
    let mul = "def mul(a, b):\\n    return a * b\\n";
    let test = |name: &str, import: &str, assertion: &str| {
        format!(
            "{{ do: write, path: test_{name}.py, content: \"import unittest\\n{import}\\n\\n\\nclass Test{name}(unittest.TestCase):\\n    def test_{name}(self):\\n        self.assertEqual({assertion})\\n\" }}"
        )
    };
    format!(
        "  combiner:\n    runtime: scripted\n    steps: [{{ do: write, path: add.py, content: \"{add}\" }}, {{ do: write, path: mul.py, content: \"{mul}\" }}, {}, {}]\n",
        test("adds", "from add import add", "add(2, 3), 5"),
        test("multiplies", "from mul import mul", "mul(2, 3), 6"),
    )
}

#[test]
fn capital_c_in_the_compare_view_combines_and_the_combined_candidate_streams_in() {
    if !bwrap() {
        return;
    }
    let (a, m) = (adder(), multiplier());
    let t = TestRepo::new(&[
        ("add.py", ADD),
        ("mul.py", MUL),
        ("test_calc.py", TESTS),
        (".rascal/guardrails.yaml", GUARDRAILS),
        (".rascal/verification.yaml", COMBINE),
    ]);
    let mut config = command_agents(&[("adder", &a), ("multiplier", &m)]);
    config.push_str(&scripted_combiner());
    t.write(".rascal/config.yaml", &config);
    t.commit_all("rascal config");
    let bin = env!("CARGO_BIN_EXE_rascal");
    let tmux = crate::common::tmux::Tmux::start(
        "combine",
        160,
        45,
        "",
        &format!(
            "cd {} && {bin} run fix --agent adder,multiplier; echo RASCAL-EXIT=$?",
            t.path().display()
        ),
    );
    // Each passes with half the answer and fails the other's tests: the
    // run is contested (no pick) until the combine settles it.
    tmux.wait_for(
        "the run finishes",
        &["finished CONTESTED (exit 4)", "1 adder", "2 multiplier"],
    );
    tmux.keys(&["c"]);
    tmux.wait_for("the compare view", &[" C  combine"]);
    tmux.keys(&["C"]);
    tmux.wait_for("the combined candidate joins", &["3 combined"]);
    let s = tmux.wait_for("the combine finishes", &["finished PASS", "3 combined"]);
    assert!(!s.contains("not recorded"), "{s}");
    tmux.keys(&["q"]);
    let s = tmux.wait_for("rascal exits", &["RASCAL-EXIT="]);
    let id = s
        .split("replay: rascal show ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no run id: {s}"))
        .to_string();
    let doc = show_json(&t, &id);
    let c = candidate(&doc, "combined");
    assert_eq!(c["verdict"], "pass", "{c}");
    assert_eq!(c["runtime"], "scripted", "{c}");
    assert_eq!(doc["ranking"]["pick"], "combined", "{}", doc["ranking"]);
    let d = &c["decisions"][0];
    assert_eq!(d["kind"], "combine", "{c}");
}

#[test]
fn a_combine_whose_budget_is_spent_is_refused_before_anything_is_recorded() {
    // Scripted halves that report what they spent ($0.50 each): the run's
    // $1.00 is reached when both are done.
    let half = |name: &str, file: &str, body: &str, test: &str| {
        format!(
            "  {name}:\n    runtime: scripted\n    steps: [{{ do: write, path: {file}, content: \"{body}\" }}, {test}, {{ do: usage, input_tokens: 10, output_tokens: 10, usd: 0.5 }}]\n"
        )
    };
    let test = |name: &str, import: &str, assertion: &str| {
        format!(
            "{{ do: write, path: test_{name}.py, content: \"import unittest\\n{import}\\n\\n\\nclass Test{name}(unittest.TestCase):\\n    def test_{name}(self):\\n        self.assertEqual({assertion})\\n\" }}"
        )
    };
    let config = format!(
        "budget: {{ usd: 1.00 }}\nagents:\n{}{}{}",
        half(
            "adder",
            "add.py",
            "def add(a, b):\\n    return a + b\\n",
            &test("adds", "from add import add", "add(2, 3), 5")
        ),
        half(
            "multiplier",
            "mul.py",
            "def mul(a, b):\\n    return a * b\\n",
            &test("multiplies", "from mul import mul", "mul(2, 3), 6")
        ),
        scripted_combiner()
    );
    let t = TestRepo::new(&[
        ("add.py", ADD),
        ("mul.py", MUL),
        ("test_calc.py", TESTS),
        (".rascal/guardrails.yaml", GUARDRAILS),
        (".rascal/verification.yaml", COMBINE),
        (".rascal/config.yaml", &config),
    ]);
    let id = run(&t, "adder,multiplier");
    let before = show_json(&t, &id);
    for half in ["adder", "multiplier"] {
        assert_eq!(
            candidate(&before, half)["verdict"],
            "warn",
            "each fails the other's test: {before}"
        );
    }
    let o = t.rascal(&["combine", &id]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{}{err}", stdout(&o));
    assert!(
        err.contains("combine refused: budget: $1.00 spent of $1.00"),
        "{err}"
    );
    assert!(err.contains("no budget left for attempt 1"), "{err}");
    let doc = show_json(&t, &id);
    assert_eq!(doc["candidates"].as_array().unwrap().len(), 2, "{doc}");
    assert_eq!(doc["state"], before["state"], "{doc}");
}
