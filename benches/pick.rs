//! The labelled pick benchmark (issue 47, item 7): small Python and Rust
//! tasks, each with labelled candidates — good, good-but-verbose, broken,
//! wrong-but-compiling (it passes the base's own test and writes a test of
//! its wrong behaviour), test-cheating, out-of-scope — some tasks with no
//! good candidate, some that change an API. Every task is a real
//! repository run through the real binary (`rascal run --json`, process
//! launcher, bubblewrap); the table says, per task, what rascal picked and
//! whether that was right, contested or wrong, and which bad candidates it
//! accepted and good ones it rejected.
//!
//! `cargo bench --bench pick` (needs python3, cargo, git and bubblewrap);
//! `RASCAL_BIN=/path/to/rascal` measures another build (the README's
//! "before" column is the previous release's binary); `PICK_ONLY=add,mul`
//! runs some tasks; `PICK_DISCRIMINATOR=1` gives the Python tasks a
//! scripted discriminator (a stand-in for a model agent: its probe calls
//! the function on the inputs of the tests in the task).

mod common;

use common::{write, Candidate, Outcome, Task};
use std::path::Path;
use std::time::Instant;

/// A Python task: one function, buggy at the base, its base test (which
/// the bug fails and the wrong fix passes), and the candidates' code.
struct Py {
    name: &'static str,
    args: &'static str,
    base: &'static str,
    good: &'static str,
    verbose: &'static str,
    wrong: &'static str,
    /// `assertEqual` arguments.
    base_test: &'static str,
    good_test: &'static str,
    wrong_test: &'static str,
}

const PY: &[Py] = &[
    Py { name: "add", args: "a, b", base: "return a - b", good: "return a + b", verbose: "total = a\n    total += b\n    return total", wrong: "return a * b", base_test: "add(2, 2), 4", good_test: "add(1, 2), 3", wrong_test: "add(3, 3), 9" },
    Py { name: "mul", args: "a, b", base: "return a - b", good: "return a * b", verbose: "out = 0\n    for _ in range(abs(b)):\n        out += a\n    return out if b >= 0 else -out", wrong: "return a * a", base_test: "mul(2, 2), 4", good_test: "mul(3, 4), 12", wrong_test: "mul(3, 1), 9" },
    Py { name: "biggest", args: "a, b", base: "return a", good: "return a if a > b else b", verbose: "if a >= b:\n        return a\n    return b", wrong: "return max(a, b) if a >= 0 else a", base_test: "biggest(1, 3), 3", good_test: "biggest(-1, 5), 5", wrong_test: "biggest(-1, 5), -1" },
    Py { name: "absval", args: "a", base: "return a", good: "return -a if a < 0 else a", verbose: "if a < 0:\n        return -a\n    return a", wrong: "return a if a > -2 else -a", base_test: "absval(-3), 3", good_test: "absval(-1), 1", wrong_test: "absval(-1), -1" },
    Py { name: "clamp", args: "x, lo, hi", base: "return x", good: "return min(max(x, lo), hi)", verbose: "if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x", wrong: "return max(x, lo)", base_test: "clamp(-5, 0, 10), 0", good_test: "clamp(20, 0, 10), 10", wrong_test: "clamp(20, 0, 10), 20" },
    Py { name: "sign", args: "x", base: "return 1", good: "return (x > 0) - (x < 0)", verbose: "if x > 0:\n        return 1\n    if x < 0:\n        return -1\n    return 0", wrong: "return 1 if x > 0 else -1", base_test: "sign(-5), -1", good_test: "sign(0), 0", wrong_test: "sign(0), -1" },
    Py { name: "is_even", args: "x", base: "return True", good: "return x % 2 == 0", verbose: "rest = x % 2\n    return rest == 0", wrong: "return x % 2 == 0 or x < 0", base_test: "is_even(3), False", good_test: "is_even(-3), False", wrong_test: "is_even(-3), True" },
    Py { name: "reverse", args: "s", base: "return s", good: "return s[::-1]", verbose: "out = ''\n    for c in s:\n        out = c + out\n    return out", wrong: "return s[::-1] if len(s) < 5 else s", base_test: "reverse('ab'), 'ba'", good_test: "reverse('abcdef'), 'fedcba'", wrong_test: "reverse('abcdef'), 'abcdef'" },
    Py { name: "vowels", args: "s", base: "return 0", good: "return sum(c in 'aeiou' for c in s)", verbose: "n = 0\n    for c in s:\n        if c in 'aeiou':\n            n += 1\n    return n", wrong: "return s.count('a')", base_test: "vowels('a'), 1", good_test: "vowels('ae'), 2", wrong_test: "vowels('ae'), 1" },
    Py { name: "last", args: "xs", base: "return xs[0]", good: "return xs[-1]", verbose: "n = len(xs)\n    return xs[n - 1]", wrong: "return max(xs)", base_test: "last([1, 9]), 9", good_test: "last([9, 1]), 1", wrong_test: "last([9, 1]), 9" },
];

fn module(p: &Py, body: &str) -> String {
    format!("def {}({}):\n    {body}\n", p.name, p.args)
}

fn unittest(p: &Py, class: &str, cases: &[&str]) -> String {
    let mut s = format!(
        "import unittest\nfrom {n} import {n}\n\n\nclass {class}(unittest.TestCase):\n",
        n = p.name
    );
    for (i, c) in cases.iter().enumerate() {
        s.push_str(&format!(
            "    def test_{i}(self):\n        self.assertEqual({c})\n\n"
        ));
    }
    s
}

fn python_task(p: &Py, with_good: bool) -> Task {
    let file = format!("{}.py", p.name);
    let m = |body: &str| write(&file, &module(p, body));
    let t = |who: &str, cases: &[&str]| {
        write(
            &format!("test_{who}.py"),
            &unittest(p, &format!("Test{who}"), cases),
        )
    };
    let mut candidates = vec![
        Candidate {
            id: "broken".into(),
            label: "broken",
            script: m("return ("),
        },
        Candidate {
            id: "wrong".into(),
            label: "wrong",
            script: format!("{}{}", m(p.wrong), t("wrong", &[p.wrong_test])),
        },
        Candidate {
            id: "cheat".into(),
            label: "cheat",
            script: write(
                &format!("test_{}.py", p.name),
                &unittest(p, "TestBase", &["1, 1"]),
            ),
        },
        Candidate {
            id: "scope".into(),
            label: "scope",
            script: format!("{}echo 'VALUE = 2' > other.py\n", m(p.good)),
        },
    ];
    if with_good {
        candidates.insert(
            0,
            Candidate {
                id: "good".into(),
                label: "good",
                script: format!("{}{}", m(p.good), t("good", &[p.good_test])),
            },
        );
        candidates.insert(
            1,
            Candidate {
                id: "verbose".into(),
                label: "verbose",
                script: format!(
                    "{}{}",
                    m(p.verbose),
                    t("verbose", &[p.good_test, p.base_test])
                ),
            },
        );
    }
    Task {
        name: format!("py-{}{}", p.name, if with_good { "" } else { "-nogood" }),
        files: vec![
            (file.clone(), module(p, p.base)),
            ("other.py".into(), "VALUE = 1\n".into()),
            (format!("test_{}.py", p.name), unittest(p, "TestBase", &[p.base_test])),
            (".rascal/guardrails.yaml".into(), "guardrails:\n  - { name: tests, command: \"python3 -m unittest\", timeout: 60s }\n".into()),
            (".rascal/specs/task.yaml".into(), format!("instruction: make {}() correct\nconstraints:\n  - {{ description: \"leave other.py alone\", type: no-touch-files, value: \"other.py\" }}\n", p.name)),
        ],
        instruction: "task".into(),
        candidates,
        helpers: String::new(),
    }
}

/// The call of a test's `assertEqual` arguments: `clamp(20, 0, 10)` of
/// `clamp(20, 0, 10), 10`.
fn call_of(case: &str) -> &str {
    case.find("), ").map_or(case, |at| &case[..=at])
}

/// `task` with a scripted discriminator standing in for a model agent
/// (`PICK_DISCRIMINATOR=1`): its probe calls the task's function on the
/// inputs of the base's test, the good test and the wrong test, and
/// prints each output.
fn with_discriminator(mut task: Task, p: &Py) -> Task {
    let calls: Vec<String> = [p.base_test, p.good_test, p.wrong_test]
        .iter()
        .map(|c| format!("{:?}", call_of(c)))
        .collect();
    let probe = format!(
        "from {n} import {n}\nfor call in [{calls}]:\n    try:\n        out = repr(eval(call))\n    except Exception as e:\n        out = type(e).__name__\n    print('PROBE {{nonce}} ' + call + ' => ' + out)\n",
        n = p.name,
        calls = calls.join(", ")
    );
    let answer = serde_json::json!({
        "nonce": "{nonce}",
        "file": "probe_it.py",
        "content": probe,
        "command": ["python3", "probe_it.py"],
    })
    .to_string();
    task.helpers = format!(
        "  prober: {{ runtime: scripted, provider: other, steps: [{{ do: say, text: {} }}] }}\n",
        serde_json::to_string(&answer).unwrap()
    );
    task.files.push((
        ".rascal/verification.yaml".into(),
        "discriminator: { agent: prober }\n".into(),
    ));
    task
}

const DECODE: &str = "pub fn decode(s: &str) -> String {\n    let mut out = String::new();\n    let mut chars = s.chars().peekable();\n    while let Some(c) = chars.next() {\n        match chars.peek().and_then(|d| d.to_digit(10)) {\n            Some(n) => {\n                chars.next();\n                for _ in 0..n {\n                    out.push(c);\n                }\n            }\n            None => out.push(c),\n        }\n    }\n    out\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn decodes() {\n        assert_eq!(decode(\"a2b\"), \"aab\");\n    }\n}\n";

/// `decode` returning a `Result`, its test updated, one test more.
fn decode_result(message: &str) -> String {
    let lib = DECODE
        .replace("pub fn decode(s: &str) -> String {\n", &format!("pub fn decode(s: &str) -> Result<String, String> {{\n    if s.starts_with(|c: char| c.is_ascii_digit()) {{\n        return Err(\"{message}\".to_string());\n    }}\n"))
        .replace("    out\n}", "    Ok(out)\n}")
        .replace("assert_eq!(decode(\"a2b\"), \"aab\");", "assert_eq!(decode(\"a2b\"), Ok(\"aab\".to_string()));\n    }\n\n    #[test]\n    fn rejects_a_leading_digit() {\n        assert!(decode(\"2a\").is_err());");
    write("src/lib.rs", &lib)
}

fn rust_api_task(with_lazy: bool) -> Task {
    let mut candidates = vec![
        Candidate {
            id: "good".into(),
            label: "good",
            script: decode_result("leading digit"),
        },
        Candidate {
            id: "verbose".into(),
            label: "verbose",
            script: decode_result("a count must follow a letter, never lead"),
        },
        Candidate {
            id: "broken".into(),
            label: "broken",
            script: "sed -i 's/-> String {/-> String { let/' src/lib.rs\n".into(),
        },
    ];
    if with_lazy {
        candidates.push(Candidate { id: "wrong".into(), label: "wrong", script: "sed -i 's/    let mut out = String::new();/    let mut out = String::new();\\n    if s.starts_with(|c: char| c.is_ascii_digit()) {\\n        return s.to_string();\\n    }/' src/lib.rs\n".into() });
    }
    Task {
        name: format!("rs-decode-api{}", if with_lazy { "-lazy" } else { "" }),
        files: vec![
            ("Cargo.toml".into(), "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n".into()),
            ("Cargo.lock".into(), "version = 3\n\n[[package]]\nname = \"calc\"\nversion = \"0.1.0\"\n".into()),
            (".gitignore".into(), "/target\n".into()),
            ("src/lib.rs".into(), DECODE.into()),
            (".rascal/guardrails.yaml".into(), "guardrails:\n  - { name: tests, command: \"cargo test --offline --quiet\", timeout: 300s }\n".into()),
            (".rascal/specs/task.yaml".into(), "instruction: make decode return a Result, an error on a leading digit; update the existing tests\n".into()),
        ],
        instruction: "task".into(),
        candidates,
        helpers: String::new(),
    }
}

fn run(bin: &Path, task: &Task) -> Outcome {
    let dir = tempfile::Builder::new()
        .prefix("rascal-pick-")
        .tempdir()
        .unwrap();
    common::run_in(bin, dir.path(), task)
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is read.
    let bin = common::rascal_bin();
    let only = common::only("PICK_ONLY");
    let mut tasks: Vec<Task> = Vec::new();
    let discriminator = std::env::var_os("PICK_DISCRIMINATOR").is_some_and(|v| v == "1");
    for p in PY {
        for with_good in [true, false] {
            let t = python_task(p, with_good);
            tasks.push(if discriminator {
                with_discriminator(t, p)
            } else {
                t
            });
        }
    }
    tasks.push(rust_api_task(false));
    tasks.push(rust_api_task(true));
    tasks.retain(|t| only.is_empty() || only.iter().any(|o| t.name.contains(o.as_str())));
    let started = Instant::now();
    common::print_header();
    let mut all = Vec::new();
    for t in &tasks {
        let o = run(&bin, t);
        common::print_row(&o);
        all.push(o);
    }
    common::print_summary(&tasks, &all, started);
}
