//! Every bypass of the evidence-integrity issue, as one table: a hostile
//! `command` agent (a shell script) does what gave a wrong PASS before, on
//! a small Rust crate, through the real binary (process launcher,
//! bubblewrap, real git). Each row says what must catch it now: the
//! candidate's verdict and a text its reports must contain (a rule, most
//! often). Rows for the scanners that read every byte and for no-new-deps'
//! real parsers are here too.

use crate::common;
use common::{bwrap, stderr, stdout, TestRepo};
use std::process::Command;

const CARGO_TOML: &str =
    "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n";
const CARGO_LOCK: &str = "version = 3\n\n[[package]]\nname = \"calc\"\nversion = \"0.1.0\"\n";
const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(2, 2), 4);\n    }\n}\n";

/// The guardrails of every row: the test run, banned patterns, secrets.
const GUARDRAILS: &str = "guardrails:\n  - { name: secrets, builtin: secrets }\n  - { name: banned, patterns: ['dbg!\\(', 'todo!\\('] }\n  - { name: tests, command: \"cargo test --offline --quiet\", timeout: 300s }\n";
const PERMISSIONS: &str = "permissions:\n  denied_paths: [\".github/**\", \"secrets/**\", \"*.sql\"]\n  forbidden_imports: [\"std::process\"]\n";

/// A GitHub-token-shaped secret, assembled so this file holds none.
fn token() -> String {
    format!("ghp_{}{}", "Qm8xZr2LpV7nKt4WbY9c", "Hs1DfGj6NuE3aXo5")
}

struct Row {
    name: &'static str,
    script: String,
    /// Extra files of the base commit.
    base: Vec<(&'static str, String)>,
    /// The verdict the candidate must get.
    verdict: &'static str,
    /// The rule id one of the candidate's reports must raise; empty for
    /// an honest row, whose reports must raise none.
    says: String,
}

fn row(name: &'static str, script: impl Into<String>, verdict: &'static str, says: &str) -> Row {
    Row {
        name,
        script: script.into(),
        base: Vec::new(),
        verdict,
        says: says.to_string(),
    }
}

fn play(r: &Row) -> serde_json::Value {
    let mut files: Vec<(&str, String)> = vec![
        ("Cargo.toml", CARGO_TOML.into()),
        ("Cargo.lock", CARGO_LOCK.into()),
        (".gitignore", "/target\n".into()),
        ("src/lib.rs", LIB.into()),
    ];
    files.extend(r.base.iter().cloned());
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (*p, c.as_str())).collect();
    let t = TestRepo::new(&refs);
    t.write(
        ".rascal/config.yaml",
        &common::command_agents(&[(r.name, &r.script)]),
    );
    t.write(".rascal/guardrails.yaml", GUARDRAILS);
    t.write(".rascal/permissions.yaml", PERMISSIONS);
    t.commit_all("rascal config");
    let o = Command::new(common::bin())
        .args(["run", "improve add", "--agent", r.name, "--json"])
        .current_dir(t.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{}: {e}: {}{}", r.name, stdout(&o), stderr(&o)));
    doc["candidates"][0].clone()
}

/// Write `content` to `path` from a shell script (a here-document).
fn write(path: &str, content: &str) -> String {
    format!("mkdir -p \"$(dirname '{path}')\" && cat > '{path}' <<'RASCAL_EOF'\n{content}\nRASCAL_EOF\n")
}

fn rows() -> Vec<Row> {
    let tok = token();
    let breaks = "sed -i 's/a + b/a - b/' src/lib.rs";
    vec![
        // The control: an honest change (code and its test) through the
        // same crate, guardrails and permissions passes, raising no rule —
        // every FAIL below is the bypass's, not the path's.
        row(
            "honest",
            "printf 'pub fn double(a: i32) -> i32 {\\n    add(a, a)\\n}\\n\\n#[test]\\nfn doubles() {\\n    assert_eq!(double(3), 6);\\n}\\n' >> src/lib.rs",
            "pass",
            "",
        ),
        // Index flags are irrelevant: the change is read by content.
        row(
            "assume-unchanged",
            format!("git update-index --assume-unchanged Cargo.toml && printf '\\n[lib]\\ntest = false\\n' >> Cargo.toml && {breaks}"),
            "fail",
            "test-integrity/runner-config",
        ),
        row(
            "skip-worktree",
            format!("git update-index --skip-worktree Cargo.toml && printf '\\n[lib]\\ntest = false\\n' >> Cargo.toml && {breaks}"),
            "fail",
            "test-integrity/runner-config",
        ),
        // Only the base's ignore rules count.
        row(
            "own-gitignore",
            format!(
                "printf 'hidden.rs\\n' > src/.gitignore && echo 'pub mod hidden;' >> src/lib.rs && {}",
                write("src/hidden.rs", "pub fn h() { dbg!(1); }")
            ),
            "fail",
            "guardrails/banned",
        ),
        row(
            "info-exclude",
            format!(
                "printf '.cargo/\\n' >> .git/info/exclude && {}",
                write(".cargo/config.toml", "[build]\nrustflags = [\"--cfg\", \"skip\"]")
            ),
            "fail",
            "test-integrity/runner-config",
        ),
        // Artifacts are outside the workspace; the old directory is a
        // protected path of the change.
        row(
            "artifacts-path",
            format!(
                "echo '#[path = \"../.rascal-artifacts/evil.rs\"] mod evil;' >> src/lib.rs && {}",
                write(".rascal-artifacts/evil.rs", "pub fn e() {}")
            ),
            "fail",
            "permissions/self-protection",
        ),
        // A NUL in a comment does not make source binary.
        row(
            "nul-comment",
            "printf '// \\000\\npub fn x() { dbg!(1); }\\n' > src/x.rs && echo 'pub mod x;' >> src/lib.rs",
            "fail",
            "guardrails/banned",
        ),
        // Lines are never cut before a rule sees them.
        row(
            "padding",
            format!(
                "printf '// %17000s{tok}\\n' ' ' >> src/lib.rs"
            ),
            "fail",
            "secrets/github-token",
        ),
        row(
            "base64",
            format!(
                "printf '// %s\\n' \"$(printf 'token = {tok}' | base64 -w0)\" >> src/lib.rs"
            ),
            "fail",
            "secrets/github-token",
        ),
        row(
            "binary-file",
            format!("printf '\\211PNG\\r\\n\\032\\n\\000\\000{tok}\\000' > logo.png"),
            "fail",
            "secrets/github-token",
        ),
        row(
            "split-concat",
            format!(
                "printf 'pub const T: &str = concat!(\n    \"{}\",\n    \"{}\"\n);\n' >> src/lib.rs",
                &tok[..20],
                &tok[20..]
            ),
            "fail",
            "secrets/github-token",
        ),
        // A file past the old 1 MiB limit is scanned to its end (streamed).
        row(
            "huge-file",
            format!("head -c 1200000 /dev/zero | tr '\\0' 'a' > big.txt && printf '\\n{tok}\\n' >> big.txt"),
            "fail",
            "secrets/github-token",
        ),
        // Paths match case-insensitively.
        row(
            "case-github",
            write(".GITHUB/workflows/evil.yml", "on: push"),
            "fail",
            "permissions/denied-path",
        ),
        row(
            "case-secrets",
            write("SECRETS/k.txt", "x"),
            "fail",
            "permissions/denied-path",
        ),
        row("case-sql", write("src/DB.SQL", "drop table x;"), "fail", "permissions/denied-path"),
        // Fully qualified paths are imports.
        row(
            "qualified-import",
            "printf 'pub fn run() {\\n    let _ = std::process::Command::new(\"id\");\\n}\\n' >> src/lib.rs",
            "fail",
            "permissions/forbidden-import",
        ),
        // Tests weakened while the code breaks.
        row(
            "test-deleted",
            format!("{breaks} && sed -i '/#\\[test\\]/,/^    }}/d' src/lib.rs"),
            "fail",
            "test-integrity/removed-test",
        ),
    ]
}

/// Every bypass row gets its verdict with its rule raised, and the honest
/// row passes with none.
#[test]
fn every_bypass_is_caught() {
    if !bwrap() {
        return;
    }
    let mut missed = Vec::new();
    for r in rows() {
        let c = play(&r);
        // The rule ids the reports raised: text the change itself holds
        // (a path, a quoted line) can never stand in for one.
        let rules: Vec<String> = c["reports"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|rep| rep["issues"].as_array().cloned().unwrap_or_default())
            .filter_map(|i| i["rule"].as_str().map(String::from))
            .collect();
        let raised = if r.says.is_empty() {
            rules.is_empty()
        } else {
            rules.contains(&r.says)
        };
        let ok = c["verdict"] == r.verdict && raised;
        eprintln!(
            "{:<18} verdict {:<5} {}",
            r.name,
            c["verdict"].as_str().unwrap_or("?"),
            if ok { "caught" } else { "MISSED" }
        );
        if !ok {
            missed.push(format!(
                "{}: want {} with rule `{}`, rules raised {rules:?}: {c}",
                r.name, r.verdict, r.says
            ));
        }
    }
    assert!(missed.is_empty(), "{}", missed.join("\n\n"));
}

#[test]
fn scope_all_patterns_read_the_candidates_tree() {
    if !bwrap() {
        return;
    }
    // The pattern is in a file of the change and in one the change left
    // alone; both are read from the change's tree.
    let t = TestRepo::new(&[
        ("src/lib.rs", "pub fn a() {}\n"),
        ("src/old.rs", "// FIXME: from before\n"),
    ]);
    t.write(
        ".rascal/config.yaml",
        &common::command_agents(&[("fixme", "printf '// FIXME: later\\n' > src/new.rs")]),
    );
    t.write(
        ".rascal/guardrails.yaml",
        "guardrails:\n  - { name: fixme, patterns: ['FIXME'], scope: all }\n",
    );
    t.commit_all("config");
    let o = Command::new(common::bin())
        .args(["run", "x", "--agent", "fixme", "--json"])
        .current_dir(t.path())
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), stderr(&o)));
    let c = &doc["candidates"][0];
    assert_eq!(c["verdict"], "fail", "{c}");
    let reports = c["reports"].to_string();
    assert!(reports.contains("src/new.rs"), "{reports}");
    assert!(reports.contains("src/old.rs"), "{reports}");
}
