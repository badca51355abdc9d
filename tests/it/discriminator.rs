//! The discriminator (issue 47, item 2) through the real binary on a real
//! Python repository: two candidates write `half(x)` differently, no test
//! tells them apart, so the pick is a coin flip. A scripted discriminator
//! (standing in for a model agent, which needs the internet) answers with
//! a probe; rascal runs it on each candidate in the sandbox. Where the
//! outputs differ the run is CONTESTED (exit 4) with the differing calls
//! as its question, and one answer settles it; where they agree the pick
//! stands and says so. A probe never fails or passes anyone.

use crate::common::{bwrap, code, command_agents, stderr, stdout, TestRepo};

const CALC: &str = "def double(x):\n    return x * 2\n";
const TESTS: &str = "import unittest\nfrom calc import double\n\n\nclass TestCalc(unittest.TestCase):\n    def test_double(self):\n        self.assertEqual(double(2), 4)\n";
const GUARDRAILS: &str = "guardrails:\n  - { name: tests, command: \"python3 -m unittest\" }\n";

/// A candidate that adds `half` with `body`.
fn half(body: &str) -> String {
    format!("printf '\\n\\ndef half(x):\\n    return {body}\\n' >> calc.py")
}

/// The probe the discriminator writes: `half` on a few inputs, errors
/// printed as outputs.
const PROBE: &str = "from calc import half\nfor x in [3, 4, -3]:\n    try:\n        print('PROBE {nonce} half(%r) => %r' % (x, half(x)))\n    except Exception as e:\n        print('PROBE {nonce} half(%r) => %s' % (x, type(e).__name__))\n";

/// `.rascal/config.yaml`: the two authors and a scripted discriminator
/// whose answer is the probe.
fn config(alder: &str, birch: &str) -> String {
    let answer = serde_json::json!({
        "nonce": "{nonce}",
        "file": "probe_half.py",
        "content": PROBE,
        "command": ["python3", "probe_half.py"],
    })
    .to_string();
    let mut y = command_agents(&[("alder", &half(alder)), ("birch", &half(birch))]);
    y.push_str(&format!(
        "  prober: {{ runtime: scripted, provider: other, steps: [{{ do: say, text: {} }}] }}\n",
        serde_json::to_string(&answer).unwrap()
    ));
    y
}

fn repo(alder: &str, birch: &str) -> TestRepo {
    let t = TestRepo::new(&[
        ("calc.py", CALC),
        ("test_calc.py", TESTS),
        (".rascal/guardrails.yaml", GUARDRAILS),
        (
            ".rascal/verification.yaml",
            "discriminator: { agent: prober }\n",
        ),
    ]);
    t.write(".rascal/config.yaml", &config(alder, birch));
    t.commit_all("rascal config");
    let mut cfg = t.repo.config().unwrap();
    cfg.set_str("user.name", "Tess Ter").unwrap();
    cfg.set_str("user.email", "tess@example.invalid").unwrap();
    t
}

fn run(t: &TestRepo) -> (std::process::Output, String, serde_json::Value) {
    let o = t.rascal(&["run", "add half(x)", "--agent", "alder,birch", "--headless"]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    let id = out
        .lines()
        .find_map(|l| l.strip_prefix("replay: rascal show "))
        .unwrap_or_else(|| panic!("no run id: {out}"))
        .trim()
        .to_string();
    let shown = t.rascal(&["show", &id, "--json"]);
    let doc = serde_json::from_str(&stdout(&shown)).unwrap();
    (o, id, doc)
}

#[test]
fn a_probe_that_finds_differing_outputs_makes_a_question_not_a_coin_flip() {
    if !bwrap() {
        return;
    }
    let t = repo("x // 2", "x / 2");
    let (o, id, doc) = run(&t);
    let out = stdout(&o);
    assert_eq!(
        code(&o),
        4,
        "CONTESTED, not a coin flip: {out}{}",
        stderr(&o)
    );
    // What a person reads (kept in the test's output).
    eprintln!("--- rascal run ---\n{out}");
    for c in doc["candidates"].as_array().unwrap() {
        assert_eq!(c["verdict"], "pass", "a probe fails nobody: {c}");
    }
    let r = &doc["ranking"];
    assert!(r["pick"].is_null(), "{r:#}");
    let p = &r["probes"];
    assert_eq!(p["agent"], "prober");
    assert_eq!(p["calls"], 3, "{p:#}");
    let calls: Vec<&str> = p["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["call"].as_str().unwrap())
        .collect();
    assert_eq!(calls, ["half(-3)", "half(3)", "half(4)"], "{p:#}");
    assert!(
        r["contested"]
            .as_str()
            .unwrap()
            .starts_with("the discriminator `prober` found 3 inputs where"),
        "{r:#}"
    );
    // The question, as the user reads it: each call, each candidate's output.
    assert!(
        out.contains(
            "question — which is right? The discriminator's probe gives them different outputs:"
        ),
        "{out}"
    );
    let first = ["alder", "birch"]
        .iter()
        .find(|c| out.contains(&format!("half(3): {c} → ")))
        .unwrap_or_else(|| panic!("{out}"));
    let (alder, birch) = ("alder → 1", "birch → 1.5");
    let line = out.lines().find(|l| l.contains("half(3): ")).unwrap();
    assert!(
        line.contains(alder) && line.contains(birch),
        "{first}: {line}"
    );
    // One answer settles it.
    let o = t.rascal(&[
        "finalize",
        &id,
        "--pick",
        "alder",
        "--reason",
        "alder is right here: half(3) is 1",
    ]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));

    // The answer is kept as a test: the same task run again is judged by
    // it — the candidate that answers the calls otherwise fails, with the
    // call, its output, the right one and who said so; the other is the
    // pick, and no question is asked again.
    let (o, _, doc) = run(&t);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    let cand = |id: &str| {
        doc["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(cand("birch")["verdict"], "fail", "{doc}");
    assert_eq!(cand("alder")["verdict"], "pass", "{doc}");
    let answers = cand("birch")["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "answers")
        .unwrap()
        .clone();
    let said = answers["issues"][1]["message"].as_str().unwrap();
    assert!(
        said.starts_with("half(3) returns 1.5, but 1 is right here (Tess Ter <tess@example.invalid> chose alder in run r-"),
        "{answers}"
    );
    assert_eq!(doc["ranking"]["pick"], "alder", "{}", doc["ranking"]);
    assert!(!out.contains("question —"), "{out}");
}

#[test]
fn a_probe_that_finds_no_difference_lets_the_pick_stand_and_says_so() {
    if !bwrap() {
        return;
    }
    // Different code, the same behaviour on every input probed.
    let t = repo("x // 2", "int(x // 2)");
    let (o, _, doc) = run(&t);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    let r = &doc["ranking"];
    assert!(r["pick"].is_string(), "{r:#}");
    assert_eq!(r["probes"]["calls"], 3, "{r:#}");
    assert!(r["probes"].get("differences").is_none(), "{r:#}");
    assert!(
        out.contains("3 calls with the same output on each — no input tells them apart"),
        "{out}"
    );
}

#[test]
fn a_retry_in_the_same_run_is_judged_by_the_answer_given_there() {
    if !bwrap() {
        return;
    }
    let t = repo("x // 2", "x / 2");
    let (o, id, _) = run(&t);
    assert_eq!(code(&o), 4, "{}", stdout(&o));
    let o = t.rascal(&["select", &id, "alder", "--reason", "half(3) is 1"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = t.rascal(&["retry", &id, "birch", "--feedback", "try again"]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    let shown = t.rascal(&["show", &id, "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&shown)).unwrap();
    let birch = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "birch")
        .unwrap()
        .clone();
    assert_eq!(birch["verdict"], "fail", "{out}\n{birch}");
    assert!(
        birch
            .to_string()
            .contains("half(3) returns 1.5, but 1 is right here"),
        "{birch}"
    );
}

/// A candidate whose code reads the kept probe (and its nonce) and prints
/// the answered output itself before returning its own is caught: the call
/// is printed twice, differently, which is never the right answer. (Code
/// that prints the forgery and then exits before the probe's own line is
/// the class issue 46 names: evidence inside the candidate's process.)
#[test]
fn a_candidate_that_forges_the_probes_lines_still_fails_the_kept_answer() {
    if !bwrap() {
        return;
    }
    let t = repo("x // 2", "x / 2");
    let (o, id, _) = run(&t);
    assert_eq!(code(&o), 4, "{}", stdout(&o));
    let o = t.rascal(&["select", &id, "alder", "--reason", "half(3) is 1"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // birch now forges: it finds the nonce in the probe's source and
    // prints what alder printed, then returns its own value.
    let forger = "cat >> calc.py <<'X'\n\n\nimport glob, re\n\n\ndef half(x):\n    for f in glob.glob('probe*.py'):\n        n = re.search(r'PROBE ([0-9a-f]{32})', open(f).read())\n        if n:\n            print('PROBE %s half(%r) => %r' % (n.group(1), x, x // 2))\n    return x / 2\nX\n";
    let mut y = command_agents(&[("alder", &half("x // 2")), ("birch", forger)]);
    let keep = std::fs::read_to_string(t.path().join(".rascal/config.yaml")).unwrap();
    y.push_str(keep.lines().find(|l| l.contains("prober:")).unwrap());
    y.push('\n');
    t.write(".rascal/config.yaml", &y);
    t.commit_all("birch forges");
    let (o, _, doc) = run(&t);
    let birch = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "birch")
        .unwrap()
        .clone();
    assert_eq!(birch["verdict"], "fail", "{}\n{birch}", stdout(&o));
    assert!(
        birch
            .to_string()
            .contains("half(3) returns (printed twice, differently), but 1 is right here"),
        "{birch}"
    );
}

/// A witness (issue 47): `birch` fails a lint and nothing else — its code
/// passes the base's tests and its test run is clean. No test separates it
/// from `alder`, whose code differs: it is among the candidates the pick
/// is said not to be separated from, and the discriminator probes it. Where
/// the outputs differ, the run is CONTESTED — never `alder` by default.
/// Before, a failed candidate's code was never asked: `alder` was picked,
/// exit 0. `birch` is never picked, and stays FAIL for its lint.
#[test]
fn a_candidate_that_failed_a_lint_alone_is_probed_with_the_pick() {
    if !bwrap() {
        return;
    }
    let t = repo("x // 2", "x / 2  # lint-me");
    t.write(
        ".rascal/guardrails.yaml",
        "guardrails:\n  - { name: tests, command: \"python3 -m unittest\" }\n  - { name: lint, command: \"! grep -q lint-me calc.py\" }\n",
    );
    t.commit_all("a lint");
    let (o, _, doc) = run(&t);
    let out = stdout(&o);
    assert_eq!(code(&o), 4, "{out}{}", stderr(&o));
    let r = &doc["ranking"];
    assert!(r["pick"].is_null(), "{r:#}");
    assert_eq!(
        r["agreement"]["witnesses"],
        serde_json::json!(["birch"]),
        "{r:#}"
    );
    assert_eq!(
        r["probes"]["candidates"],
        serde_json::json!(["alder", "birch"]),
        "{r:#}"
    );
    assert!(out.contains("half(3): "), "{out}");
    let birch = crate::test_integrity::candidate(&doc, "birch");
    assert_eq!(birch["verdict"], "fail", "{birch}");
    // The same code without the lint failure: no witness, and `birch`
    // passing is probed as before (control for the probe's path).
}
