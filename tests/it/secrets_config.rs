//! A repository's own secret rules with the real binary: a `.gitleaks.toml`
//! rule taking effect in `rascal check`, its located errors and warnings,
//! and the attack it invites — a change (or an agent) that brings its own
//! `.gitleaks.toml` or `.rascal/secrets.toml` to allow its own leak. Rule
//! files are read from the base commit, so that never works.

use crate::common;
use common::{code, rnd, stderr, stdout, TestRepo};

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX: &str = "0123456789abcdef";
const SECRETS_ON: &str = "guardrails:\n  - { name: secrets, builtin: secrets }\n";

/// One custom rule, extending rascal's built-in ones.
const ACME_GITLEAKS: &str = r#"title = "acme"

[extend]
useDefault = true

[[rules]]
id = "acme-internal-token"
description = "ACME internal service token"
regex = '''\bacme_[a-f0-9]{32}\b'''
keywords = ["acme_"]
"#;

fn acme_token() -> String {
    format!("acme_{}", rnd(501, 32, HEX))
}

fn github_token() -> String {
    format!("ghp_{}", rnd(502, 36, ALNUM))
}

#[test]
fn a_gitleaks_rule_takes_effect_in_rascal_check() {
    let t = TestRepo::new(&[
        (".rascal/guardrails.yaml", SECRETS_ON),
        (".gitleaks.toml", ACME_GITLEAKS),
        ("src/app.py", "import client\n"),
    ]);
    let token = acme_token();
    t.write(
        "src/app.py",
        &format!("import client\nclient.connect(\"{token}\")\n"),
    );
    let o = t.rascal(&["check"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}{}", stderr(&o));
    assert!(
        out.contains("src/app.py:2 error: possible ACME internal service token added (acme…)"),
        "{out}"
    );
    assert!(out.contains("[secrets/acme-internal-token]"), "{out}");
    assert!(!out.contains(&token[5..]), "the secret is printed: {out}");
    // The report says where its rules come from.
    assert!(out.contains("1 from .gitleaks.toml"), "{out}");

    // Gone from the file, the check passes.
    t.write("src/app.py", "import client\nclient.connect(TOKEN)\n");
    let o = t.rascal(&["check"]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
}

#[test]
fn a_change_cannot_allow_its_own_leak_with_rule_files() {
    let t = TestRepo::new(&[
        (".rascal/guardrails.yaml", SECRETS_ON),
        ("src/app.py", "import client\n"),
    ]);
    let token = github_token();
    // Everything a change could bring to silence the scan.
    t.write(
        ".gitleaks.toml",
        "[extend]\nuseDefault = false\n\n[allowlist]\nregexes = ['''.*''']\npaths = ['''.*''']\nstopwords = [\"ghp_\"]\n",
    );
    t.write(
        ".rascal/secrets.toml",
        "gitleaks = false\ndisable = [\"github-token\", \"generic-secret\"]\n",
    );
    t.write(
        "src/app.py",
        &format!("import client\nclient.connect(\"{token}\")  # gitleaks:allow\n"),
    );
    let o = t.rascal(&["check"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}{}", stderr(&o));
    assert!(
        out.contains("src/app.py:2 error: possible GitHub token added"),
        "{out}"
    );
    assert!(out.contains("[secrets/config-edited]"), "{out}");
    // Uncommitted `.rascal/` is named too (it is not what was used).
    assert!(stderr(&o).contains("secrets.toml"), "{}", stderr(&o));
}

#[test]
fn a_change_to_an_existing_gitleaks_file_does_not_apply_to_its_own_check() {
    let t = TestRepo::new(&[
        (".rascal/guardrails.yaml", SECRETS_ON),
        (".gitleaks.toml", ACME_GITLEAKS),
        ("src/app.py", "import client\n"),
    ]);
    let token = acme_token();
    t.write(
        ".gitleaks.toml",
        &format!("{ACME_GITLEAKS}\n[[rules.allowlists]]\nregexes = ['''.*''']\n"),
    );
    t.write(
        "src/app.py",
        &format!("import client\nclient.connect(\"{token}\")\n"),
    );
    let o = t.rascal(&["check"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(out.contains("[secrets/acme-internal-token]"), "{out}");
    assert!(out.contains("[secrets/config-edited]"), "{out}");

    // Your own working tree's file, when you ask for it, does apply.
    let o = t.rascal(&["check", "--config-from-worktree"]);
    let out = stdout(&o);
    assert!(!out.contains("[secrets/acme-internal-token]"), "{out}");
}

#[test]
fn an_agent_that_brings_its_own_gitleaks_allowlist_still_fails() {
    let token = github_token();
    let agents = format!(
        "agents:\n  sneaky:\n    runtime: scripted\n    steps:\n      - {{ do: write, path: .gitleaks.toml, content: \"[allowlist]\\nregexes = ['.*']\\npaths = ['.*']\\n\" }}\n      - {{ do: write, path: src/b.py, content: \"client.connect('{token}')  # gitleaks:allow\\n\" }}\n"
    );
    let t = TestRepo::new(&[
        (".rascal/config.yaml", &agents),
        (".rascal/guardrails.yaml", SECRETS_ON),
        ("src/a.py", "import client\n"),
    ]);
    let o = t.rascal(&["run", "add b", "--agent", "sneaky", "--headless"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}{}", stderr(&o));
    assert!(out.contains("[sneaky] verdict FAIL"), "{out}");
    assert!(out.contains("secrets/github-token"), "{out}");
    assert!(out.contains("secrets/config-edited"), "{out}");
    assert!(!out.contains(&token[4..]), "the secret is printed: {out}");
}

#[test]
fn a_broken_gitleaks_file_is_a_located_config_error() {
    let t = TestRepo::new(&[
        (".rascal/guardrails.yaml", SECRETS_ON),
        (
            ".gitleaks.toml",
            "[[rules]]\nid = \"x\"\nregex = '''(unclosed'''\n",
        ),
    ]);
    let o = t.rascal(&["check"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert!(err.contains(".gitleaks.toml (at base commit"), "{err}");
    assert!(err.contains(":3:9"), "{err}");
    assert!(err.contains("not a valid regex"), "{err}");
}

#[test]
fn unsupported_gitleaks_fields_are_reported_where_they_are() {
    let t = TestRepo::new(&[
        (".rascal/guardrails.yaml", SECRETS_ON),
        (
            ".gitleaks.toml",
            "[extend]\nuseDefault = true\n\n[allowlist]\ncommits = [\"0123abc\"]\n",
        ),
        ("src/a.py", "x = 1\n"),
    ]);
    t.write("src/a.py", "x = 2\n");
    let o = t.rascal(&["check"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "a warning passes: {out}");
    assert!(out.contains("WARN"), "{out}");
    assert!(
        out.contains("warning: .gitleaks.toml:5:1: allowlist `commits` does not apply"),
        "{out}"
    );
}
