//! The secret rules as data: every built-in rule's own true and false
//! examples (from `crates/scan/rules/secrets.toml`), a corpus of real code that must
//! produce no finding, and a repository's rule files (`.rascal/secrets.toml`,
//! `.gitleaks.toml`) merged with the built-in ones.

use rascal_core::config::secrets::{parse, Dialect, RuleFile};
use rascal_core::model::changeset::*;
use rascal_core::model::verdict::*;
use rascal_scan::secrets::*;

fn one_file(path: &str, text: &str) -> ChangeSet {
    let lines: Vec<&str> = text.split('\n').collect();
    ChangeSet {
        base: "0".repeat(40),
        tree: String::new(),
        files: vec![FileChange::new(path, Operation::Create).with_lines(&lines)],
    }
}

/// Findings that count: a warning or worse.
fn findings(issues: &[Issue]) -> Vec<&Issue> {
    issues
        .iter()
        .filter(|i| i.severity >= Severity::Warning)
        .collect()
}

fn scanner_with(files: Vec<RuleFile>) -> SecretScanner {
    SecretScanner::new(&SecretsOptions {
        rule_files: files,
        ..Default::default()
    })
    .expect("scanner")
}

/// No 12-character piece of `line` past its first 20 characters (where a
/// secret's redacted head may be) shows up in an issue.
fn assert_redacted(issues: &[Issue], line: &str) {
    let chars: Vec<char> = line.chars().collect();
    for i in issues {
        for w in chars.windows(12).skip(20) {
            let piece: String = w.iter().collect();
            if piece.chars().all(|c| c.is_ascii_alphanumeric()) {
                assert!(
                    !i.message.contains(&piece),
                    "issue shows part of the secret `{piece}`: {}",
                    i.message
                );
            }
        }
    }
}

#[test]
fn every_builtin_rule_finds_its_examples_and_not_its_false_ones() {
    let s = SecretScanner::new(&SecretsOptions::default()).unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (n, rule) in builtin().rules.iter().enumerate() {
        if rule.examples.is_empty() || rule.false_examples.is_empty() {
            failures.push(format!(
                "{}: needs at least one example and one false example",
                rule.id
            ));
        }
        let want = format!("secrets/{}", rule.id);
        for (k, template) in rule.examples.iter().enumerate() {
            // Three draws of each example's random parts.
            for seed in 0..3u64 {
                let line = expand_example(template, (n as u64) << 16 | (k as u64) << 8 | seed);
                let issues = s.scan(&one_file("src/example.txt", &line));
                checked += 1;
                if !issues.iter().any(|i| i.rule == want) {
                    failures.push(format!(
                        "{}: example not found: {line:?} (got {:?})",
                        rule.id,
                        issues.iter().map(|i| &i.rule).collect::<Vec<_>>()
                    ));
                }
                assert_redacted(&issues, &line);
            }
        }
        for (k, template) in rule.false_examples.iter().enumerate() {
            let line = expand_example(template, (n as u64) << 16 | (k as u64) << 8 | 99);
            let issues = s.scan(&one_file("src/example.txt", &line));
            checked += 1;
            let found = findings(&issues);
            if !found.is_empty() {
                failures.push(format!(
                    "{}: false example reported: {line:?} ({:?})",
                    rule.id,
                    found.iter().map(|i| &i.rule).collect::<Vec<_>>()
                ));
            }
        }
    }
    assert!(checked > 500, "only {checked} examples checked");
    assert!(
        failures.is_empty(),
        "{} failing examples:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn at_least_a_hundred_prefixed_formats() {
    // A rule is a prefixed format when a bare token, in code that names
    // nothing, is found: its first example is written that way.
    let prefixed = builtin()
        .rules
        .iter()
        .filter(|r| r.examples.iter().any(|e| e.starts_with("client.connect(")))
        .count();
    assert!(prefixed >= 100, "{prefixed} prefixed formats");
}

/// Real code from permissively licensed projects (see the README next to
/// it) must give no finding at all.
#[test]
fn a_corpus_of_real_code_gives_no_finding() {
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/secrets-corpus");
    let s = SecretScanner::new(&SecretsOptions::default()).unwrap();
    let mut files = Vec::new();
    let mut lines = 0;
    for dir in ["rust", "python", "go", "js"] {
        let mut names: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        assert!(!names.is_empty(), "no {dir} files in the corpus");
        for p in names {
            let text = std::fs::read_to_string(&p).unwrap();
            lines += text.lines().count();
            let rel = p.strip_prefix(&root).unwrap().display().to_string();
            let l: Vec<&str> = text.lines().collect();
            files.push(FileChange::new(rel, Operation::Create).with_lines(&l));
        }
    }
    assert!(lines > 5_000, "corpus has only {lines} lines");
    let issues = s.scan(&ChangeSet {
        base: String::new(),
        tree: String::new(),
        files,
    });
    let found: Vec<String> = findings(&issues)
        .iter()
        .map(|i| {
            format!(
                "{}:{:?} {} {}",
                i.path.as_deref().unwrap_or(""),
                i.line,
                i.rule,
                i.message
            )
        })
        .collect();
    assert!(
        found.is_empty(),
        "false alarms in real code:\n{}",
        found.join("\n")
    );
}

fn acme_line() -> String {
    // Built at run time, so this file holds no whole token.
    format!(
        "client.connect(\"acme_{}{}\")",
        "7c1e9b42d05fa836", "e4b1c9d07f2a5e38"
    )
}

#[test]
fn a_gitleaks_rule_takes_effect_next_to_the_builtin_ones() {
    let gl = parse(
        ".gitleaks.toml",
        r#"
title = "acme"
[extend]
useDefault = true
disabledRules = ["stripe-test-key"]

[[rules]]
id = "acme-token"
description = "ACME internal token"
regex = '''\bacme_[a-f0-9]{32}\b'''
keywords = ["acme_"]
entropy = 3
tags = ["internal"]
"#,
        Dialect::Gitleaks,
    )
    .unwrap();
    let s = scanner_with(vec![gl]);
    assert!(
        s.summary().contains("1 from .gitleaks.toml"),
        "{}",
        s.summary()
    );
    assert!(
        s.summary().contains("disabled: stripe-test-key"),
        "{}",
        s.summary()
    );
    let issues = s.scan(&one_file("src/a.py", &acme_line()));
    assert_eq!(
        issues.iter().map(|i| i.rule.as_str()).collect::<Vec<_>>(),
        ["secrets/acme-token"]
    );
    assert!(issues[0].message.contains("ACME internal token"));
    assert!(!issues[0].message.contains("7c1e"), "{}", issues[0].message);
    // The built-in rules still run; the disabled one does not.
    let gh = format!("t = \"ghp_{}\"", "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5");
    let stripe = format!("k = \"sk_test_{}\"", "aB3dE5gH7jK9mN1pQ3sT5vW7");
    let issues = s.scan(&one_file("src/b.py", &format!("{gh}\n{stripe}")));
    assert_eq!(
        issues.iter().map(|i| i.rule.as_str()).collect::<Vec<_>>(),
        ["secrets/github-token"]
    );
}

#[test]
fn a_gitleaks_file_without_use_default_replaces_the_builtin_rules() {
    let gl = parse(
        ".gitleaks.toml",
        "[[rules]]\nid = \"acme-token\"\nregex = '''acme_[a-f0-9]{32}'''\nkeywords = [\"acme_\"]\n",
        Dialect::Gitleaks,
    )
    .unwrap();
    let s = scanner_with(vec![gl]);
    assert_eq!(s.rules().len(), 1);
    assert!(
        s.summary().contains("built-in rules are off"),
        "{}",
        s.summary()
    );
    let gh = format!("t = \"ghp_{}\"", "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5");
    assert!(s.scan(&one_file("a.py", &gh)).is_empty());
    // First group is the secret when the rule names none.
    let issues = s.scan(&one_file("a.py", &acme_line()));
    assert_eq!(issues.len(), 1);
}

#[test]
fn gitleaks_allowlists_regexes_stopwords_paths_and_conditions() {
    let gl = parse(
        ".gitleaks.toml",
        r#"
[extend]
useDefault = true

[[rules]]
id = "acme-token"
regex = '''\b(acme_[a-f0-9]{32})\b'''
keywords = ["acme_"]
  [[rules.allowlists]]
  regexTarget = "line"
  regexes = ['''#\s*fixture''']
  [[rules.allowlists]]
  condition = "AND"
  paths = ['''^docs/''']
  stopwords = ["d05fa836"]

[allowlist]
description = "vendored code"
paths = ['''^vendor/''']

[[allowlists]]
targetRules = ["github-token"]
stopwords = ["ab3de5gh"]
"#,
        Dialect::Gitleaks,
    )
    .unwrap();
    assert!(gl.warnings.is_empty(), "{:?}", gl.warnings);
    let s = scanner_with(vec![gl]);
    let line = acme_line();
    let count = |path: &str, text: &str| findings(&s.scan(&one_file(path, text))).len();
    assert_eq!(count("src/a.py", &line), 1);
    assert_eq!(count("src/a.py", &format!("{line} # fixture")), 0);
    // AND: the path alone, or the stopword alone, is not enough.
    assert_eq!(count("docs/a.md", &line.replace("d05fa836", "b3a9e1c7")), 1);
    assert_eq!(count("src/a.py", &line), 1);
    assert_eq!(count("docs/a.md", &line), 0);
    // A global paths-only allowlist skips the file for every rule.
    assert_eq!(count("vendor/lib.py", &line), 0);
    // targetRules: only the GitHub rule is allowed by that stopword.
    let gh = format!("t = \"ghp_{}\"", "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5");
    assert_eq!(count("src/a.py", &gh), 0);
}

#[test]
fn unsupported_gitleaks_fields_are_located_warnings_in_the_report() {
    let text = "[extend]\nuseDefault = true\npath = \"other.toml\"\n\n[[rules]]\nid = \"x\"\nregex = 'acme_[a-f0-9]{32}'\nkeywords = [\"acme_\"]\n[[rules.required]]\nid = \"y\"\n\n[allowlist]\ncommits = [\"abc\"]\n";
    let gl = parse(".gitleaks.toml", text, Dialect::Gitleaks).unwrap();
    let lines: Vec<usize> = gl.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, [3, 9, 13], "{:?}", gl.warnings);
    let s = scanner_with(vec![gl]);
    let issues = s.scan(&ChangeSet::default());
    assert_eq!(issues.len(), 3);
    for i in &issues {
        assert_eq!(i.rule, "secrets/config");
        assert_eq!(i.severity, Severity::Warning);
        assert_eq!(i.path.as_deref(), Some(".gitleaks.toml"));
        assert!(i.message.starts_with(".gitleaks.toml:"), "{}", i.message);
    }
    assert!(
        issues[2].message.contains("commits"),
        "{}",
        issues[2].message
    );
}

#[test]
fn rascal_rule_files_are_strict_and_located() {
    let bad = [
        (
            "[[rules]]\nid = \"a\"\nregex = '(unclosed'\n",
            3,
            "not a valid regex",
        ),
        (
            "[[rules]]\nid = \"a\"\nregex = 'x'\nseverity = \"loud\"\n",
            4,
            "severity",
        ),
        (
            "[[rules]]\nid = \"a\"\nregex = 'x'\n[[rules]]\nid = \"a\"\nregex = 'y'\n",
            5,
            "used twice",
        ),
        (
            "[[rules]]\ndescription = \"no id\"\nregex = 'x'\n",
            1,
            "needs an `id`",
        ),
        ("[[rules]]\nid = \"a\"\n", 2, "neither `regex` nor `path`"),
        ("rules = 3\n", 1, "array of tables"),
        ("disable = [\"a\"\n", 1, "not valid TOML"),
        (
            "[[rules]]\nid = \"a\"\nregex = '(x)'\nsecretGroup = 2\n",
            3,
            "secretGroup 2",
        ),
        (
            "[[rules]]\nid = \"a\"\nregex = 'x'\npublished = [\"md5:00\"]\n",
            4,
            "not `sha256:` and 64 hex digits",
        ),
        (
            "[[rules]]\nid = \"a\"\nregex = 'x'\npublished = \"sha256:00\"\n",
            4,
            "published",
        ),
    ];
    for (text, line, what) in bad {
        let e = parse(".rascal/secrets.toml", text, Dialect::Rascal).unwrap_err();
        assert_eq!(e.line, Some(line), "{text}: {e}");
        assert!(e.to_string().contains(what), "{text}: {e}");
        assert!(e.to_string().starts_with(".rascal/secrets.toml:"), "{e}");
    }
}

#[test]
fn rascal_rule_file_adds_replaces_and_disables_rules() {
    let own = parse(
        ".rascal/secrets.toml",
        r#"
disable = ["generic-secret"]

[[rules]]
id = "acme-token"
description = "ACME token"
regex = '''\b(?P<secret>acme_(?P<body>[a-f0-9]{32}))\b'''
keywords = ["acme_"]
severity = "critical"
drop = ["placeholder", "letters-only"]

[[rules]]
id = "github-token"
description = "GitHub token (ours)"
regex = '''\b(?P<secret>ghp_[A-Za-z0-9]{36})\b'''
keywords = ["ghp_"]
severity = "warning"
"#,
        Dialect::Rascal,
    )
    .unwrap();
    let s = scanner_with(vec![own]);
    let issues = s.scan(&one_file("a.py", &acme_line()));
    assert_eq!(issues[0].rule, "secrets/acme-token");
    assert_eq!(issues[0].severity, Severity::Critical);
    let gh = format!("t = \"ghp_{}\"", "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5");
    let issues = s.scan(&one_file("a.py", &gh));
    assert_eq!(issues[0].severity, Severity::Warning);
    assert!(issues[0].message.contains("(ours)"));
    let pass = "password = \"q8Zr4Tm1Lx9Vb2Nc7Hj\"";
    assert!(s.scan(&one_file("a.py", pass)).is_empty());
}

#[test]
fn a_path_rule_reports_the_file_itself() {
    let gl = parse(
        ".gitleaks.toml",
        "[extend]\nuseDefault = true\n[[rules]]\nid = \"pkcs12-file\"\ndescription = \"PKCS #12 file\"\npath = '''(?i)\\.(?:p12|pfx)$'''\n",
        Dialect::Gitleaks,
    )
    .unwrap();
    let s = scanner_with(vec![gl]);
    let issues = s.scan(&one_file("certs/client.p12", "x"));
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!(issues[0].rule, "secrets/pkcs12-file");
    assert!(s.scan(&one_file("certs/client.pem", "x")).is_empty());
}

#[test]
fn the_gitleaks_marker_counts_only_with_a_gitleaks_file() {
    let gh = format!(
        "t = \"ghp_{}\" // gitleaks:allow",
        "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
    );
    let plain = SecretScanner::new(&SecretsOptions::default()).unwrap();
    assert_eq!(findings(&plain.scan(&one_file("a.py", &gh))).len(), 1);
    let gl = parse(
        ".gitleaks.toml",
        "[extend]\nuseDefault = true\n",
        Dialect::Gitleaks,
    )
    .unwrap();
    let with = scanner_with(vec![gl]);
    let issues = with.scan(&one_file("a.py", &gh));
    assert!(findings(&issues).is_empty());
    assert_eq!(issues[0].rule, "secrets/allowed-by-marker");
}

#[test]
fn a_change_to_the_gitleaks_file_is_flagged() {
    let s = SecretScanner::new(&SecretsOptions::default()).unwrap();
    let issues = s.scan(&one_file(".gitleaks.toml", "[allowlist]\nregexes = ['.*']"));
    assert_eq!(
        issues.iter().map(|i| i.rule.as_str()).collect::<Vec<_>>(),
        ["secrets/config-edited"]
    );
}

/// The example in docs/configuration.md § Secrets is a valid `.rascal/secrets.toml`.
#[test]
fn the_readme_example_parses() {
    let readme = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/configuration.md"
    ))
    .unwrap();
    let section = &readme[readme.find("### Secrets: the rules are data").unwrap()..];
    let start = section.find("```toml\n").unwrap() + "```toml\n".len();
    let text = &section[start..start + section[start..].find("```").unwrap()];
    let f = parse(".rascal/secrets.toml", text, Dialect::Rascal).unwrap();
    assert_eq!(f.rules.len(), 1);
    assert!(!f.read_gitleaks);
    let s = scanner_with(vec![f]);
    assert!(s.rules().iter().all(|r| r.id != "generic-secret"));
    let issues = s.scan(&one_file("a.py", &acme_line()));
    assert_eq!(issues[0].rule, "secrets/acme-token");
}

/// A rule file is untrusted input (it may come from anyone's commit):
/// mangled, it gives a located error or a rule set, never a panic — and
/// the scan with whatever it holds never panics either.
mod mangled {
    use super::*;
    use proptest::prelude::*;

    const GOOD: &str = r#"[extend]
useDefault = true
disabledRules = ["generic-secret"]

[[rules]]
id = "acme"
regex = '''\b(acme_[a-f0-9]{32})\b'''
secretGroup = 1
entropy = 3
keywords = ["acme_"]
  [[rules.allowlists]]
  condition = "AND"
  regexTarget = "line"
  regexes = ['''fixture''']
  stopwords = ["0000"]
  paths = ['''^docs/''']

[allowlist]
paths = ['''^vendor/''']
"#;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
        #[test]
        fn never_panics(edits in proptest::collection::vec((0usize..400, any::<char>()), 0..6), cut in 0usize..500) {
            let mut chars: Vec<char> = GOOD.chars().collect();
            for (at, c) in edits {
                let at = at % chars.len();
                chars[at] = c;
            }
            chars.truncate(cut.max(1).min(chars.len()));
            let text: String = chars.into_iter().collect();
            for dialect in [Dialect::Gitleaks, Dialect::Rascal] {
                match parse(".gitleaks.toml", &text, dialect) {
                    Ok(f) => {
                        if let Ok(s) = SecretScanner::new(&SecretsOptions { rule_files: vec![f], ..Default::default() }) {
                            let _ = s.scan(&one_file("docs/a.txt", &acme_line()));
                        }
                    }
                    Err(e) => prop_assert!(e.line.is_some(), "{e}"),
                }
            }
        }
    }
}

/// sha256 of `s`, as `published` lists it.
fn sha256(s: &str) -> String {
    use sha2::Digest;
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(s.as_bytes())))
}

/// One of the sample keys the Firebase SDKs' own tests use (built at run
/// time, so this file holds no whole key).
fn firebase_sample_key() -> String {
    format!("AIzaSy{}{}", "A4UrcGxgwQFTfaI3no", "3t7Lt1sjmdnP5sQ")
}

#[test]
fn published_sample_keys_leave_a_trace_and_only_they_pass() {
    let s = SecretScanner::new(&SecretsOptions::default()).unwrap();
    let key = firebase_sample_key();
    for line in [
        key.clone(),
        format!("      .setApiKey(\"{key}\")"),
        format!("apiKey: \"{key}\","),
    ] {
        let issues = s.scan(&one_file("src/app.kt", &line));
        assert!(findings(&issues).is_empty(), "{line}: {issues:?}");
        let traces: Vec<_> = issues
            .iter()
            .filter(|i| i.rule == "secrets/published-sample")
            .collect();
        assert_eq!(traces.len(), 1, "{line}: {issues:?}");
        assert_eq!(traces[0].severity, Severity::Info);
        assert_redacted(&issues, &line);
    }
    // One character off is another key: reported.
    let other = key.replace("P5sQ", "P5sM");
    let issues = s.scan(&one_file("src/app.kt", &other));
    assert!(
        issues.iter().any(|i| i.rule == "secrets/google-api-key"),
        "{issues:?}"
    );
    // A real key next to a published one is still found.
    let line = format!(
        "keys = [\"{key}\", \"AIzaSyC{}\"]",
        "q8Zr4Tm1Lx9Vb2NcW7pK3dF6hJ0sYuE5"
    );
    let issues = s.scan(&one_file("src/app.kt", &line));
    assert_eq!(
        findings(&issues)
            .iter()
            .filter(|i| i.rule == "secrets/google-api-key")
            .count(),
        1,
        "{issues:?}"
    );
    // Hidden in base64, it is still only the published value.
    use base64::Engine;
    let hidden = base64::engine::general_purpose::STANDARD.encode(format!("key={key}"));
    let issues = s.scan(&one_file("src/app.kt", &format!("blob = \"{hidden}\"")));
    assert!(findings(&issues).is_empty(), "{issues:?}");
}

#[test]
fn the_key_yarn_bundles_is_published_but_the_name_still_counts() {
    let s = SecretScanner::new(&SecretsOptions::default()).unwrap();
    let key = format!("{}{}", "6fe4476ee5a18328", "82e326b506d14126");
    let line = format!("{{appId:\"OFCNCOG2CU\",apiKey:\"{key}\",indexName:\"npm-search\"}}");
    let issues = s.scan(&one_file(".yarn/releases/yarn-4.1.1.cjs", &line));
    assert!(findings(&issues).is_empty(), "{issues:?}");
    // Another value under the same name is reported.
    let line = line.replace(&key, "9a3c7e1f5b2d8046c4e9a1b7d3f50c28");
    let issues = s.scan(&one_file("src/search.js", &line));
    assert!(
        issues.iter().any(|i| i.rule == "secrets/generic-secret"),
        "{issues:?}"
    );
}

#[test]
fn a_repository_lists_its_own_published_values() {
    let public = acme_line()
        .trim_start_matches("client.connect(\"")
        .trim_end_matches("\")")
        .to_string();
    // Upper-case hex is read too.
    let digest = format!("sha256:{}", sha256(&public)[7..].to_uppercase());
    let own = parse(
        ".rascal/secrets.toml",
        &format!(
            r#"
[[rules]]
id = "acme-token"
description = "ACME token"
regex = '''\b(?P<secret>acme_(?P<body>[a-f0-9]{{32}}))\b'''
keywords = ["acme_"]
published = ["{digest}"]
"#
        ),
        Dialect::Rascal,
    )
    .unwrap();
    let s = scanner_with(vec![own]);
    let issues = s.scan(&one_file("src/a.py", &acme_line()));
    assert!(findings(&issues).is_empty(), "{issues:?}");
    assert!(
        issues
            .iter()
            .any(|i| i.rule == "secrets/published-sample"
                && i.message.contains(".rascal/secrets.toml")),
        "{issues:?}"
    );
    let other = acme_line().replace("e4b1", "e4b2");
    let issues = s.scan(&one_file("src/a.py", &other));
    assert!(
        issues.iter().any(|i| i.rule == "secrets/acme-token"),
        "{issues:?}"
    );
    // In a gitleaks file the key is rascal's own: a located warning.
    let gl = parse(
        ".gitleaks.toml",
        "[[rules]]\nid = \"a\"\nregex = 'x'\npublished = []\n",
        Dialect::Gitleaks,
    )
    .unwrap();
    assert_eq!(gl.warnings.len(), 1);
    assert_eq!(gl.warnings[0].line, 4);
}

/// Lines of real crates (winapi, windows-sys, ring, rustls) and TypeScript
/// where a secret-sounding name is followed by a type or an argument, not
/// a value: no finding in a source file. The same words as text — in a
/// comment, a string, a YAML file — are still secrets.
#[test]
fn types_and_arguments_in_source_files_are_not_secrets() {
    let s = SecretScanner::new(&SecretsOptions::default()).unwrap();
    let code = [
        ("src/um/iphlpapi.rs", "    Token: PULONG64,"),
        ("src/wmi.rs", "    pub credentials: MI_UserCredentials_0,"),
        (
            "src/certs.rs",
            "pub const PrivateKeyExportable: X509CertificateTemplatePrivateKeyFlag = 16i32;",
        ),
        ("src/signing.rs", "    private_key_ops: &p256::PRIVATE_KEY_OPS,"),
        (
            "src/tls12.rs",
            "        16 => ConnectionTrafficSecrets::Aes128Gcm { key, iv },",
        ),
        (
            "src/fs.rs",
            "windows_link::link!(\"ntdll.dll\" \"system\" fn NtPrivilegeCheck(clienttoken : super::super::super::Win32::Foundation:: HANDLE, result : *mut bool) -> NTSTATUS);",
        ),
        ("web/auth.ts", "  secret: Uint8Array,"),
        (
            "web/auth.ts",
            "  login(password: PasswordInput2, token: Types.AccessToken3) {}",
        ),
    ];
    for (path, line) in code {
        let issues = s.scan(&one_file(path, line));
        assert!(findings(&issues).is_empty(), "{path}: {line}: {issues:?}");
    }
    let secret = format!("{}{}", "Xk29fLq0", "Zr8Tq4Wm");
    let text = [
        ("src/a.rs", format!("let token = \"{secret}\";")),
        ("src/a.rs", format!("// password: {secret}, user admin")),
        (
            "src/a.rs",
            format!("let conn = \"Server=db;Password={secret};Database=x\";"),
        ),
        (
            "app/db.py",
            format!("conn = 'Server=db;Password={secret};Database=x'"),
        ),
        ("app/db.py", format!("# password: {secret},")),
        // In a docstring begun on an earlier line: text, not code.
        ("app/db.py", format!("    password: {secret},")),
        ("config.yaml", format!("password: {secret},")),
        (".env", format!("DB_PASSWORD={secret}")),
    ];
    for (path, line) in text {
        let issues = s.scan(&one_file(path, &line));
        assert!(
            issues.iter().any(|i| i.rule == "secrets/generic-secret"),
            "{path}: {line}: {issues:?}"
        );
    }
}
