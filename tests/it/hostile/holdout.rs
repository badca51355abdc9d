//! Held-out tests are invisible and silent; nothing a candidate's code writes survives into the next check or attempt.

#[allow(unused_imports)]
use super::*;

/// `rascal run --spec SPEC --agent AGENTS --json` in `t`.
fn run_spec(t: &TestRepo, spec: &str, agents: &str) -> std::process::Output {
    Command::new(common::bin())
        .args(["run", "--spec", spec, "--agent", agents, "--json"])
        .current_dir(t.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// `marker` split in two at a place where neither half is the whole: a
/// script can rebuild it (`M="$P$S"`) without holding it, so the agent's
/// own config never shows up as a find.
fn halves(m: &str) -> (&str, &str) {
    m.split_at(m.len() / 2)
}

/// The report `check` of candidate `c` (the last of that name).
fn report_of<'a>(c: &'a serde_json::Value, check: &str) -> &'a serde_json::Value {
    c["reports"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|r| r["check"] == check)
        .unwrap_or_else(|| panic!("no report {check}: {c}"))
}

/// A directory outside the repository, removed when dropped.
struct Outside(PathBuf);

impl Drop for Outside {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What the agent script writes to `seen.txt`: every path whose name
/// holds the marker (the whole visible filesystem), every file whose
/// content holds it (everything but the system's program directories),
/// and how many objects of the workspace's git store hold it.
const SEARCH: &str = r#"M="$P$S"
find / \( -path /proc -o -path /sys -o -path /dev \) -prune -o -name "*$M*" -print > /tmp/names 2>/dev/null
grep -rlsF "$M" / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev --exclude-dir=usr --exclude-dir=work --exclude-dir=opt --exclude-dir=snap --exclude-dir=nix --exclude-dir=boot --exclude-dir=lib --exclude-dir=lib32 --exclude-dir=lib64 --exclude-dir=bin --exclude-dir=sbin --exclude-dir=rustup --exclude-dir=registry > /tmp/content 2>/dev/null
for f in $(cat /tmp/names /tmp/content); do [ -f "$f" ] && cat "$f"; done > /tmp/read 2>/dev/null
git cat-file --batch-all-objects --batch 2>/dev/null | grep -caF "$M" > /tmp/objects
{ echo NAMES; cat /tmp/names; echo CONTENT; cat /tmp/content; echo READ; cat /tmp/read; echo OBJECTS; cat /tmp/objects; } > seen.txt
"#;

#[test]
fn an_agent_finds_no_held_out_test_nor_the_spec_naming_it_anywhere_it_can_look() {
    if !bwrap() {
        return;
    }
    let m = marker("heldout");
    let (p, s) = halves(&m);
    // Held-out tests in a directory outside the repository and in it. (The
    // outside directory's own name stays visible as the empty mount point
    // that hides it: it does not hold the marker.)
    let outside =
        Outside(PathBuf::from("/var/tmp").join(marker("outside").replace("hostile", "o")));
    std::fs::create_dir_all(outside.0.join("tests")).unwrap();
    std::fs::write(
        outside.0.join(format!("tests/{m}_outside.sh")),
        format!("# {m}\nexit 0\n"),
    )
    .unwrap();
    let script = format!(
        "P='{p}'; S='{s}'\n{SEARCH}{{ echo OUTSIDE; ls -A '{}'; }} >> seen.txt 2>&1\necho 'pub fn two() -> u32 {{ 2 }}' >> src/lib.rs\n",
        outside.0.display()
    );
    let t = repo(
        |_| common::command_agents(&[("peek", &script)]),
        "guardrails: []\n",
    );
    t.write(&format!("tests/{m}_inside.sh"), &format!("# {m}\nexit 0\n"));
    t.write(
        ".rascal/specs/hold.yaml",
        &format!(
            "instruction: add two\nholdout: [tests/{m}_inside.sh, {}]\n",
            outside.0.display()
        ),
    );
    t.commit_all("held-out tests");
    let o = run_spec(&t, "hold", "peek");
    let doc = json(&o);
    let c = &doc["candidates"][0];
    let ws = PathBuf::from(c["worktree"].as_str().unwrap());
    let seen = std::fs::read_to_string(ws.join("seen.txt"))
        .unwrap_or_else(|e| panic!("the agent left no seen.txt ({e}): {c}"));
    assert!(
        !seen.contains(&m),
        "the agent found the held-out tests or the spec naming them:\n{seen}"
    );
    assert!(seen.contains("OBJECTS\n0\n"), "{seen}");
    // The outside folder is not there at all (the sandbox shows only its
    // allowlist), or at most an empty mount point hiding it.
    let listed = seen.rsplit("OUTSIDE\n").next().unwrap_or_default();
    assert!(
        listed.is_empty() || listed.contains("No such file or directory"),
        "the agent listed the outside folder: {seen}"
    );
    // Its workspace has `.rascal/` without the specs; its change is only
    // what it wrote (the specs it never had are not deleted by it).
    assert!(ws.join(".rascal/config.yaml").exists());
    assert!(!ws.join(".rascal/specs").exists());
    assert_eq!(c["files_changed"], 2, "{c}");
    assert_eq!(c["verdict"], "pass", "{c}");
}

#[test]
fn held_out_results_reach_the_next_attempt_as_pass_or_fail_only() {
    if !bwrap() {
        return;
    }
    let m = marker("silent");
    let (p, s) = halves(&m);
    // 47 bits of "held-out text" the candidate's code tries to smuggle out
    // as a test count, beside the held-out test itself.
    let n = "117769185001473";
    let script = format!(
        "P='{p}'; S='{s}'\nif [ \"$RASCAL_ATTEMPT\" = 2 ]; then\n{SEARCH}fi\nprintf 'echo \"running {n} tests\"\\ncat tests/*\\necho not-fixed\\n' > src/prog.sh\n"
    );
    let t = TestRepo::new(&[
        (
            "check.sh",
            "#!/bin/sh\nsh src/prog.sh\nfor t in tests/*.sh; do sh \"$t\" || exit 1; done\n",
        ),
        ("src/prog.sh", "echo base\n"),
        ("tests/visible.sh", "exit 0\n"),
    ]);
    t.write(
        ".rascal/config.yaml",
        &format!(
            "{}  reviewer: {{ runtime: scripted, scenario: review-approve, provider: other-lab }}\n",
            common::command_agents(&[("smuggler", &script)])
        ),
    );
    t.write(".rascal/guardrails.yaml", "guardrails: []\n");
    t.write(
        ".rascal/verification.yaml",
        "criteria:\n  test_command: \"sh check.sh {check}\"\nreview:\n  reviewers: [reviewer]\n  on_request_changes: retry\n  max_retries: 1\n  timeout: 60s\n",
    );
    t.write(
        &format!("tests/{m}_hidden.sh"),
        &format!("# {m}\n[ \"$(sh src/prog.sh | tail -1)\" = fixed ]\n"),
    );
    t.write(
        ".rascal/specs/hold.yaml",
        &format!(
            "instruction: make prog print fixed\nholdout: [tests/{m}_hidden.sh]\nacceptance_criteria:\n  - {{ description: \"the {m} tests pass\", type: holdout, check: {m} }}\n"
        ),
    );
    t.commit_all("held-out tests");
    let o = run_spec(&t, "hold", "smuggler");
    let doc = json(&o);
    let c = &doc["candidates"][0];
    let run_id = doc["run"].as_str().unwrap();
    assert_eq!(c["attempt"], 2, "the held-out failure sent it back: {c}");
    // What the second attempt was told: its instruction file.
    let told = std::fs::read_to_string(
        t.files()
            .join("runs")
            .join(run_id)
            .join(c["id"].as_str().unwrap())
            .join("attempt-2/instruction.md"),
    )
    .unwrap();
    assert!(told.contains("What still fails"), "{told}");
    assert!(told.contains("held-out tests failed"), "{told}");
    assert!(!told.contains(n), "the count reached the agent:\n{told}");
    assert!(
        !told.contains(&m),
        "a held-out name reached the agent:\n{told}"
    );
    // The held-out report itself carries no count, output or name.
    let r = report_of(c, &format!("the {m} tests pass"));
    assert_eq!(r["status"], "fail", "{r}");
    let r = r.to_string();
    assert!(
        !r.contains(n) && !r.contains("running") && !r.contains("not-fixed"),
        "{r}"
    );
    // Nor did the workspace's object store keep the first attempt's
    // change tree, which names the held-out test.
    let ws = PathBuf::from(c["worktree"].as_str().unwrap());
    let seen = std::fs::read_to_string(ws.join("seen.txt")).unwrap();
    assert!(
        !seen.contains(&m),
        "attempt 2 found the held-out test:\n{seen}"
    );
    assert!(seen.contains("OBJECTS\n0\n"), "{seen}");
}

#[test]
fn a_build_cache_planted_by_one_attempt_never_stands_in_for_the_next() {
    if !bwrap() {
        return;
    }
    if Command::new("cargo").arg("--version").output().is_err() {
        common::skip("RASCAL_REQUIRE_TOOLCHAINS", "`cargo` does not run");
        return;
    }
    // Attempt 1 fixes add(), which also dates every file of the build
    // cache far into the future when the base's test calls it; attempt 2
    // (a human's retry) breaks add() again. With a cache that survives, cargo sees nothing
    // newer than its outputs and runs attempt 1's binaries: a PASS for
    // broken code.
    let fixed = r#"pub fn add(a: i32, b: i32) -> i32 {
    if let Ok(dir) = std::env::var("CARGO_TARGET_DIR") {
        let _ = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("find '{dir}' -exec touch -d '2100-01-01 00:00' {{}} +"))
            .status();
    }
    a + b
}
"#;
    let broken = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b + 0\n}\n";
    let script = format!(
        "if [ \"$RASCAL_ATTEMPT\" = 1 ]; then\ncat > src/lib.rs <<'EOF'\n{fixed}EOF\nelse\nprintf '{broken}' > src/lib.rs\nfi\n"
    );
    let t = TestRepo::new(&[
        (
            "Cargo.toml",
            "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
        ),
        (
            "Cargo.lock",
            "version = 3\n\n[[package]]\nname = \"calc\"\nversion = \"0.1.0\"\n",
        ),
        (".gitignore", "/target\n"),
        ("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n"),
        (
            "tests/add.rs",
            "#[test]\nfn adds() {\n    assert_eq!(calc::add(2, 2), 4);\n}\n",
        ),
    ]);
    t.write(
        ".rascal/config.yaml",
        &format!(
            "{}  reviewer: {{ runtime: scripted, scenario: review-request-once, provider: other-lab }}\n",
            common::command_agents(&[("planter", &script)])
        ),
    );
    t.write(
        ".rascal/guardrails.yaml",
        "guardrails:\n  - { name: tests, command: \"cargo test --offline\", timeout: 300s }\n",
    );
    t.write(
        ".rascal/verification.yaml",
        "review:\n  reviewers: [reviewer]\n  on_request_changes: retry\n  max_retries: 1\n  timeout: 60s\n",
    );
    t.commit_all("rascal config");
    let doc = json(&t.rascal(&["run", "make add() add", "--agent", "planter", "--json"]));
    let c = &doc["candidates"][0];
    // Attempt 1 dated the cache while its tests ran, so the mutated copy
    // of its test ran from a stale binary and passed: its own evidence is
    // void, in the attempt that planted it.
    assert_eq!(c["attempt"], 1, "{c}");
    let tests = report_of(c, "tests");
    assert!(
        tests["issues"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["rule"] == "test-run/forged"),
        "attempt 1's planted cache stood in for its canary run: {tests}"
    );
    assert_eq!(c["verdict"], "fail", "{c}");
    // A human sends it back: attempt 2 breaks add() again.
    let id = doc["run"].as_str().unwrap();
    let retried = t.rascal(&["retry", id, "planter", "--feedback", "try again", "--json"]);
    assert_eq!(
        retried.status.code(),
        Some(1),
        "the retry still fails: {}",
        String::from_utf8_lossy(&retried.stderr)
    );
    let doc = json(&t.rascal(&["show", id, "--json"]));
    let c = &doc["candidates"][0];
    assert_eq!(c["attempt"], 2, "the retry did not run: {c}");
    // Attempt 2's broken add() was compiled and its test failed.
    let tests = report_of(c, "tests");
    assert_eq!(
        tests["status"], "fail",
        "attempt 2 ran stale binaries: {tests}"
    );
    assert_eq!(c["verdict"], "fail", "{c}");
}
