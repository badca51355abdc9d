//! Integration tests for the built-in secret scanner.
//!
//! Fake secrets are generated from a seeded PRNG or concatenated from pieces,
//! so no whole real-looking secret literal sits in this file.

use crate::common;
use common::rnd;
use rascal_core::model::changeset::*;
use rascal_core::model::verdict::*;
use rascal_scan::secrets::*;

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER_NUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const HEX: &str = "0123456789abcdef";
const DIGITS: &str = "0123456789";

/// Base64 of `bytes`, standard or url-safe alphabet, padded.
fn b64(bytes: &[u8], url: bool) -> String {
    let alphabet = if url { B64URL } else { B64 }.as_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |acc, &b| (acc << 8) | b as u32) << (8 * (3 - chunk.len()));
        for k in 0..=chunk.len() {
            out.push(alphabet[((n >> (18 - 6 * k)) & 63) as usize] as char);
        }
    }
    while !out.len().is_multiple_of(4) {
        out.push('=');
    }
    out
}

fn hexs(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn multi(
    name: &'static str,
    lines: Vec<String>,
    secret: String,
    expect: Option<&'static str>,
) -> Case {
    Case {
        name,
        path: "src/config.rs",
        lines,
        secret,
        expect,
    }
}

fn scanner() -> SecretScanner {
    SecretScanner::new(&SecretsOptions::default()).expect("default options compile")
}

fn one_file<S: AsRef<str>>(path: &str, lines: &[S]) -> ChangeSet {
    ChangeSet {
        base: "0".repeat(40),
        tree: String::new(),
        files: vec![FileChange::new(path, Operation::Create).with_lines(lines)],
    }
}

fn rules_of(issues: &[Issue]) -> Vec<String> {
    issues.iter().map(|i| i.rule.clone()).collect()
}

/// No issue may contain `secret` in its message, rule or path.
fn assert_no_leak(issues: &[Issue], secret: &str) {
    for i in issues {
        assert!(
            !i.message.contains(secret),
            "issue message leaks the secret: {}",
            i.message
        );
        let json = serde_json::to_string(i).unwrap();
        assert!(!json.contains(secret), "serialised issue leaks: {json}");
    }
}

struct Case {
    name: &'static str,
    path: &'static str,
    lines: Vec<String>,
    /// The secret text that must never appear in an issue.
    secret: String,
    /// The rule id expected to fire (exactly one finding), or None.
    expect: Option<&'static str>,
}

fn case(name: &'static str, line: String, secret: String, expect: Option<&'static str>) -> Case {
    Case {
        name,
        path: "src/config.rs",
        lines: vec![line],
        secret,
        expect,
    }
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    let mut tp = |name, prefix: &str, secret: String, suffix: &str, rule| {
        v.push(case(
            name,
            format!("{prefix}{secret}{suffix}"),
            secret,
            Some(rule),
        ));
    };

    // ---- true positives, at least one per rule ----
    tp(
        "aws access key id AKIA",
        "let id = \"",
        "AKIA".to_string() + &rnd(1, 16, UPPER_NUM),
        "\";",
        "aws-access-key-id",
    );
    tp(
        "aws temporary key id ASIA",
        "AWS_ACCESS_KEY_ID=",
        "ASIA".to_string() + &rnd(2, 16, UPPER_NUM),
        "",
        "aws-access-key-id",
    );
    tp(
        "aws secret access key env form",
        "AWS_SECRET_ACCESS_KEY=",
        rnd(3, 40, B64),
        "",
        "aws-secret-access-key",
    );
    tp(
        "aws secret access key yaml form",
        "  aws_secret_access_key: \"",
        rnd(4, 40, B64),
        "\"",
        "aws-secret-access-key",
    );
    tp(
        "github classic ghp",
        "const T: &str = \"",
        "ghp_".to_string() + &rnd(5, 36, ALNUM),
        "\";",
        "github-token",
    );
    tp(
        "github oauth gho",
        "token: ",
        "gho_".to_string() + &rnd(6, 36, ALNUM),
        "",
        "github-token",
    );
    tp(
        "github server ghs in env",
        "GITHUB_TOKEN=",
        "ghs_".to_string() + &rnd(7, 36, ALNUM),
        "",
        "github-token",
    );
    tp(
        "github refresh ghr and user ghu",
        "refresh = '",
        "ghr_".to_string() + &rnd(8, 36, ALNUM),
        "'",
        "github-token",
    );
    tp(
        "github fine-grained pat",
        "export GH_PAT=",
        "github_pat_".to_string() + &rnd(9, 22, ALNUM) + "_" + &rnd(10, 59, ALNUM),
        "",
        "github-fine-grained-pat",
    );
    tp(
        "gitlab pat",
        "gitlab_token = \"",
        "glpat-".to_string() + &rnd(11, 20, ALNUM),
        "\"",
        "gitlab-token",
    );
    tp(
        "slack bot token",
        "SLACK_BOT_TOKEN=",
        "xoxb-".to_string()
            + &rnd(12, 12, DIGITS)
            + "-"
            + &rnd(13, 13, DIGITS)
            + "-"
            + &rnd(14, 24, ALNUM),
        "",
        "slack-token",
    );
    tp(
        "slack user token",
        "client = WebClient(\"",
        "xoxp-".to_string() + &rnd(15, 12, DIGITS) + "-" + &rnd(16, 32, ALNUM),
        "\")",
        "slack-token",
    );
    tp(
        "slack webhook",
        "url = \"",
        "https://hooks.slack.com/services/".to_string()
            + "T"
            + &rnd(17, 8, UPPER_NUM)
            + "/B"
            + &rnd(18, 8, UPPER_NUM)
            + "/"
            + &rnd(19, 24, ALNUM),
        "\"",
        "slack-webhook",
    );
    tp(
        "stripe live secret key",
        "Stripe.api_key = '",
        "sk_live_".to_string() + &rnd(20, 24, ALNUM),
        "'",
        "stripe-live-key",
    );
    tp(
        "stripe live restricted key",
        "STRIPE_KEY: ",
        "rk_live_".to_string() + &rnd(21, 24, ALNUM),
        "",
        "stripe-live-key",
    );
    tp(
        "stripe test key",
        "stripe.key = \"",
        "sk_test_".to_string() + &rnd(22, 24, ALNUM),
        "\"",
        "stripe-test-key",
    );
    tp(
        "google api key",
        "<meta name=\"maps\" content=\"",
        "AIza".to_string() + &rnd(23, 35, B64URL),
        "\">",
        "google-api-key",
    );
    tp(
        "openai legacy key",
        "openai.api_key = \"",
        "sk-".to_string() + &rnd(24, 48, ALNUM),
        "\"",
        "openai-api-key",
    );
    tp(
        "openai project key",
        "OPENAI_API_KEY=",
        "sk-proj-".to_string() + &rnd(25, 120, B64URL),
        "",
        "openai-api-key",
    );
    tp(
        "anthropic key",
        "ANTHROPIC_API_KEY=\"",
        "sk-ant-api03-".to_string() + &rnd(26, 93, B64URL) + "AA",
        "\"",
        "anthropic-api-key",
    );
    // A JWT's header and payload are base64url JSON (the rule decodes them).
    let claims = format!("{{\"sub\":\"{}\",\"iat\":1700000000}}", rnd(28, 12, ALNUM));
    tp(
        "jwt bearer",
        "Authorization: Bearer ",
        b64(br#"{"alg":"HS256","typ":"JWT"}"#, true)
            .trim_end_matches('=')
            .to_string()
            + "."
            + b64(claims.as_bytes(), true).trim_end_matches('=')
            + "."
            + &rnd(29, 43, B64URL),
        "",
        "jwt",
    );
    tp(
        "url with embedded password",
        "DATABASE_URL=postgres://app:",
        rnd(30, 16, ALNUM),
        "@db.internal:5432/app",
        "url-credentials",
    );
    tp(
        "token inside a git remote url wins over url-credentials",
        "git remote add origin https://x-access-token:",
        "ghp_".to_string() + &rnd(39, 36, ALNUM),
        "@github.com/org/repo.git",
        "github-token",
    );
    tp(
        "generic password quoted",
        "password = \"",
        rnd(31, 20, ALNUM),
        "\"",
        "generic-secret",
    );
    tp(
        "generic api_key yaml unquoted",
        "  api_key: ",
        rnd(32, 32, ALNUM),
        "",
        "generic-secret",
    );
    tp(
        "generic client_secret json",
        "  \"client_secret\": \"",
        rnd(33, 24, B64),
        "\",",
        "generic-secret",
    );
    tp(
        "generic env DB_PASSWORD",
        "DB_PASSWORD=",
        rnd(34, 18, ALNUM),
        "",
        "generic-secret",
    );
    tp(
        "generic shell export",
        "export SERVICE_TOKEN=",
        rnd(35, 40, HEX),
        "",
        "generic-secret",
    );
    tp(
        "generic go short assign camelCase",
        "\tauthToken := \"",
        rnd(36, 28, ALNUM),
        "\"",
        "generic-secret",
    );
    tp(
        "generic js camelCase apiKey",
        "const cfg = { apiKey: '",
        rnd(37, 26, ALNUM),
        "' };",
        "generic-secret",
    );

    // ---- private keys (multi-line) ----
    let body = rnd(38, 64, B64);
    for (name, kind) in [
        ("rsa private key", "RSA PRIVATE KEY"),
        ("openssh private key", "OPENSSH PRIVATE KEY"),
        ("ec private key", "EC PRIVATE KEY"),
        ("pkcs8 private key", "PRIVATE KEY"),
        ("encrypted private key", "ENCRYPTED PRIVATE KEY"),
        ("pgp private key block", "PGP PRIVATE KEY BLOCK"),
    ] {
        v.push(Case {
            name,
            path: "deploy/id_key",
            lines: vec![
                format!("-----BEGIN {kind}-----"),
                body.clone(),
                format!("-----END {kind}-----"),
            ],
            secret: body.clone(),
            expect: Some("private-key"),
        });
    }
    v.push(case(
        "private key in a json string with \\n",
        format!("  \"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----\\n\","),
        body.clone(),
        Some("private-key"),
    ));

    // ---- disguised: encoded, split, escaped ----
    let key = "AKIA".to_string() + &rnd(100, 16, UPPER_NUM);
    v.push(case(
        "base64 of an aws key id",
        format!("let blob = \"{}\";", b64(key.as_bytes(), false)),
        key.clone(),
        Some("aws-access-key-id"),
    ));
    let tok = "ghp_".to_string() + &rnd(101, 36, ALNUM);
    let mut raw = vec![0xfbu8, 0xff];
    raw.extend_from_slice(tok.as_bytes());
    raw.push(0xfe);
    v.push(case(
        "url-safe base64 of bytes around a github token",
        format!("blob: {}", b64(&raw, true)),
        tok.clone(),
        Some("github-token"),
    ));
    let stripe = "sk_live_".to_string() + &rnd(102, 24, ALNUM);
    v.push(case(
        "hex of a stripe live key",
        format!("data = \"{}\"", hexs(stripe.as_bytes())),
        stripe.clone(),
        Some("stripe-live-key"),
    ));
    let tok2 = "ghp_".to_string() + &rnd(103, 36, ALNUM);
    let twice = b64(
        b64(format!("token: {tok2}").as_bytes(), false).as_bytes(),
        false,
    );
    v.push(case(
        "base64 inside base64",
        format!("x = '{twice}'"),
        tok2.clone(),
        Some("github-token"),
    ));
    let pass = rnd(104, 18, ALNUM);
    v.push(multi(
        "base64 value of a kubernetes secret",
        vec![format!("  db_password: {}", b64(pass.as_bytes(), false))],
        pass.clone(),
        Some("generic-secret"),
    ));
    let aws_secret = rnd(105, 40, B64);
    let env = format!("REGION=eu-west-1\nAWS_SECRET_ACCESS_KEY={aws_secret}\nDEBUG=0\n");
    v.push(case(
        "base64 of a multi-line env file",
        format!("ENV_B64={}", b64(env.as_bytes(), false)),
        aws_secret.clone(),
        Some("aws-secret-access-key"),
    ));
    let key2 = "AKIA".to_string() + &rnd(106, 16, UPPER_NUM);
    v.push(case(
        "aws key joined with + on one line",
        format!(
            "k = \"{}\" + \"{}\" + \"{}\"",
            &key2[..4],
            &key2[4..10],
            &key2[10..]
        ),
        key2.clone(),
        Some("aws-access-key-id"),
    ));
    let glpat = "glpat-".to_string() + &rnd(107, 20, ALNUM);
    v.push(case(
        "gitlab token joined with . in php",
        format!("$t = '{}' . '{}';", &glpat[..8], &glpat[8..]),
        glpat.clone(),
        Some("gitlab-token"),
    ));
    let key3 = "AKIA".to_string() + &rnd(108, 16, UPPER_NUM);
    v.push(case(
        "aws key written with escapes",
        format!("k = \"\\x41\\u004BIA{}\"", &key3[4..]),
        key3[4..].to_string(),
        Some("aws-access-key-id"),
    ));
    let tok3 = "ghp_".to_string() + &rnd(109, 36, ALNUM);
    v.push(multi(
        "github token over two adjacent literals",
        vec![
            format!("TOKEN = (\"{}\"", &tok3[..12]),
            format!("         \"{}\")", &tok3[12..]),
        ],
        tok3.clone(),
        Some("github-token"),
    ));
    let stripe2 = "sk_live_".to_string() + &rnd(110, 24, ALNUM);
    v.push(multi(
        "stripe key in a concat! macro",
        vec![
            format!("let k = concat!(\"{}\",", &stripe2[..10]),
            format!("    \"{}\");", &stripe2[10..]),
        ],
        stripe2.clone(),
        Some("stripe-live-key"),
    ));
    let aws_secret2 = rnd(111, 40, B64);
    let wrapped = b64(
        format!("aws_secret_access_key = {aws_secret2}\n").as_bytes(),
        false,
    );
    v.push(multi(
        "base64 block wrapped over lines",
        vec![wrapped[..30].to_string(), wrapped[30..].to_string()],
        aws_secret2.clone(),
        Some("aws-secret-access-key"),
    ));
    v.push(case(
        "base64 of the documentation example key",
        format!(
            "k = \"{}\"",
            b64(
                ("AKIA".to_string() + "IOSFODNN7" + "EXAMPLE").as_bytes(),
                false
            )
        ),
        String::new(),
        None,
    ));
    v.push(case(
        "base64 of prose",
        format!(
            "const GREETING: &str = \"{}\";",
            b64(
                b"hello there, this is a plain sentence and no secret",
                false
            )
        ),
        String::new(),
        None,
    ));
    v.push(case(
        "joined placeholder",
        "api_key = \"your_\" + \"api_key_here\"".to_string(),
        String::new(),
        None,
    ));
    v.push(case(
        "long identifiers are not blobs",
        "let DEFAULT_PASSWORD_MIN_LENGTH_FOR_ADMINS = compute_password_policy_defaults();"
            .to_string(),
        String::new(),
        None,
    ));

    // ---- near misses: must not fire ----
    let mut fp = |name, line: String| {
        v.push(case(name, line, String::new(), None));
    };
    fp("git sha", format!("commit = \"{}\"", rnd(40, 40, HEX)));
    fp(
        "git sha with a rev key",
        format!("rev: {}", rnd(41, 40, HEX)),
    );
    let uuid = format!(
        "{}-{}-{}-{}-{}",
        rnd(42, 8, HEX),
        rnd(43, 4, HEX),
        rnd(44, 4, HEX),
        rnd(45, 4, HEX),
        rnd(46, 12, HEX)
    );
    fp("uuid assigned to a token key", format!("token: {uuid}"));
    fp("uuid request id", format!("let request_id = \"{uuid}\";"));
    fp(
        "sha256 digest",
        format!("sha256 = \"{}\"", rnd(47, 64, HEX)),
    );
    fp(
        "password hash column",
        format!("password_hash = \"{}\"", rnd(48, 64, HEX)),
    );
    fp(
        "base64 fixture without keyword",
        format!("const FIXTURE: &str = \"{}\";", rnd(49, 120, B64)),
    );
    fp(
        "aws documentation example id",
        "aws_access_key_id = AKIA".to_string() + "IOSFODNN7" + "EXAMPLE",
    );
    fp(
        "aws documentation example secret",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY".to_string() + "EXAMPLEKEY",
    );
    fp("x placeholder", format!("api_key = \"{}\"", "x".repeat(24)));
    fp("X placeholder env", format!("API_KEY={}", "X".repeat(16)));
    fp("angle placeholder", "api_key: <your-key>".to_string());
    fp(
        "your_api_key_here",
        "api_key = \"your_api_key_here\"".to_string(),
    );
    fp("changeme", "password = \"changeme\"".to_string());
    fp("dollar brace var", "password: ${DB_PASSWORD}".to_string());
    fp("dollar var", "token = $GITHUB_TOKEN".to_string());
    fp(
        "python os.environ",
        "api_key = os.environ[\"OPENAI_API_KEY\"]".to_string(),
    );
    fp(
        "node process.env",
        "const token = process.env.GITHUB_TOKEN_V2;".to_string(),
    );
    fp("rust env!", "let api_key = env!(\"API_KEY\");".to_string());
    fp("jinja template", "password: \"{{ secret }}\"".to_string());
    fp(
        "github actions secret",
        "  token: ${{ secrets.GITHUB_TOKEN }}".to_string(),
    );
    fp(
        "repeated characters",
        format!("secret = \"{}\"", "a".repeat(20)),
    );
    fp(
        "ghp with placeholder body",
        format!("token = \"ghp_{}\"", "x".repeat(36)),
    );
    fp("dummy", "password = \"dummy-password-123\"".to_string());
    fp("fake", "token = \"fake_token_abc123\"".to_string());
    fp("test", "api_key = \"test-key-12345678\"".to_string());
    fp("redacted", "secret: \"[REDACTED]\"".to_string());
    fp("too short", "password = \"k3y\"".to_string());
    fp(
        "tokenizer is not a token",
        "tokenizer = \"bert-base-uncased-v2\"".to_string(),
    );
    fp(
        "reference to settings",
        "password = settings.DB_PASSWORD".to_string(),
    );
    fp(
        "snake_case call-less reference",
        "token = token_value2".to_string(),
    );
    fp(
        "url with env password",
        "DATABASE_URL=mysql://user:${DB_PASS}@localhost/db".to_string(),
    );
    fp(
        "url with dev default password",
        "url: postgres://postgres:postgres@localhost:5432/app".to_string(),
    );
    fp(
        "url with placeholder password",
        "https://user:<password>@example.com/repo.git".to_string(),
    );
    fp(
        "url without password",
        "git clone https://github.com/org/repo.git".to_string(),
    );
    fp(
        "kebab css class after sk-",
        "let cls = \"sk-button-primary-large-rounded-outline\";".to_string(),
    );
    fp(
        "jwt header alone",
        "const HDR = \"eyJhbGciOiJIUzI1NiJ9\";".to_string(),
    );
    fp(
        "stripe publishable key",
        "publishableKey: \"pk_live_".to_string() + &rnd(50, 24, ALNUM) + "\"",
    );
    fp("token type field", "token_type = \"Bearer2\"".to_string());
    fp(
        "python type hint",
        "def login(user: str, password: Optional[str] = None) -> Session:".to_string(),
    );
    fp(
        "terraform variable reference",
        "  password = var.db_password".to_string(),
    );
    fp(
        "kubernetes secret name",
        "      secretName: my-app-tls-2024".to_string(),
    );
    fp(
        "shell command substitution",
        "DB_PASSWORD=$(cat /run/secrets/db_password)".to_string(),
    );
    fp(
        "docs with elided key",
        "export OPENAI_API_KEY=sk-...".to_string(),
    );
    fp(
        "constructor call",
        "let token = Token::new(&config, 3600);".to_string(),
    );
    v.push(Case {
        name: "private key header constant in code",
        path: "src/pem.rs",
        lines: vec![
            "const RSA_HEADER: &str = \"-----BEGIN RSA PRIVATE KEY-----\";".to_string(),
            "fn parse(pem: &str) -> Result<Key, Error> {".to_string(),
        ],
        secret: String::new(),
        expect: None,
    });

    // ---- lock files: integrity hashes never fire ----
    let lock = |name, path, line: String| Case {
        name,
        path,
        lines: vec![line],
        secret: String::new(),
        expect: None,
    };
    v.push(lock(
        "Cargo.lock checksum",
        "Cargo.lock",
        format!("checksum = \"{}\"", rnd(51, 64, HEX)),
    ));
    v.push(lock(
        "package-lock integrity",
        "web/package-lock.json",
        format!("      \"integrity\": \"sha512-{}==\",", rnd(52, 86, B64)),
    ));
    v.push(lock(
        "package-lock js-tokens entry",
        "package-lock.json",
        "    \"node_modules/js-tokens\": {".to_string(),
    ));
    v.push(lock(
        "yarn.lock integrity",
        "yarn.lock",
        format!("  integrity sha512-{}==", rnd(53, 86, B64)),
    ));
    v.push(lock(
        "go.sum hash",
        "go.sum",
        format!("golang.org/x/oauth2 v0.21.0 h1:{}=", rnd(54, 43, B64)),
    ));
    v.push(lock(
        "poetry.lock hash",
        "poetry.lock",
        format!(
            "    {{file = \"tokenizers-0.19.1.tar.gz\", hash = \"sha256:{}\"}},",
            rnd(55, 64, HEX)
        ),
    ));
    v.push(lock(
        "pnpm lock with token-ish package",
        "pnpm-lock.yaml",
        format!(
            "  /secret-token-lib@1.0.0: resolution: {{integrity: sha512-{}}}",
            rnd(56, 86, B64)
        ),
    ));
    v
}

#[test]
fn table_of_secret_cases() {
    let s = scanner();
    let cases = cases();
    let positives = cases.iter().filter(|c| c.expect.is_some()).count();
    let negatives = cases.len() - positives;
    assert!(positives >= 30, "only {positives} true-positive cases");
    assert!(negatives >= 30, "only {negatives} false-positive cases");

    let mut failures = Vec::new();
    for c in &cases {
        let issues = s.scan(&one_file(c.path, &c.lines));
        if !c.secret.is_empty() {
            assert_no_leak(&issues, &c.secret);
        }
        let got = rules_of(&issues);
        let want: Vec<String> = c
            .expect
            .map(|r| format!("secrets/{r}"))
            .into_iter()
            .collect();
        if got != want {
            failures.push(format!("{}: want {want:?}, got {got:?}", c.name));
            continue;
        }
        if let Some(i) = issues.first() {
            assert_eq!(i.path.as_deref(), Some(c.path), "{}", c.name);
            assert_eq!(i.line, Some(1), "{}", c.name);
            assert!(i.severity >= Severity::Warning, "{}", c.name);
        }
    }
    assert!(
        failures.is_empty(),
        "failing cases:\n{}",
        failures.join("\n")
    );
}

/// Every rule this table expects is a rule of the built-in set (each rule's
/// own true and false examples live in the rule file and are checked by
/// `tests/it/secret_rules.rs`).
#[test]
fn every_expected_rule_exists() {
    let ids: Vec<&str> = builtin().rules.iter().map(|r| r.id.as_str()).collect();
    for c in cases() {
        if let Some(id) = c.expect {
            assert!(ids.contains(&id), "{}: no rule {id}", c.name);
        }
    }
}

#[test]
fn severity_and_confidence() {
    let s = scanner();
    let check = |line: String, sev: Severity, conf: Confidence| {
        let issues = s.scan(&one_file("a.py", std::slice::from_ref(&line)));
        assert_eq!(issues.len(), 1, "{line}: {issues:?}");
        assert_eq!(issues[0].severity, sev, "{line}");
        assert_eq!(issues[0].confidence, conf, "{line}");
    };
    check(
        "x = 'AKIA".to_string() + &rnd(60, 16, UPPER_NUM) + "'",
        Severity::Critical,
        Confidence::High,
    );
    check(
        "x = 'ghp_".to_string() + &rnd(61, 36, ALNUM) + "'",
        Severity::Error,
        Confidence::High,
    );
    check(
        "x = 'sk_test_".to_string() + &rnd(62, 24, ALNUM) + "'",
        Severity::Warning,
        Confidence::High,
    );
    check(
        format!("password = '{}'", rnd(63, 20, ALNUM)),
        Severity::Error,
        Confidence::Medium,
    );
}

#[test]
fn message_shows_only_the_redacted_form() {
    let s = scanner();
    let token = "ghp_".to_string() + &rnd(70, 36, ALNUM);
    let issues = s.scan(&one_file("src/lib.rs", &[format!("let t = \"{token}\";")]));
    assert_eq!(issues.len(), 1);
    assert!(issues[0].message.contains("ghp_…"), "{}", issues[0].message);
    assert!(issues[0].message.contains("GitHub token"));
    assert_no_leak(&issues, &token);
    // Not even a long tail of it.
    assert_no_leak(&issues, &token[4..12]);
}

#[test]
fn redact_and_entropy() {
    assert_eq!(redact("ghp_abcdefghijkl"), "ghp_…");
    assert_eq!(redact("sk-ant-xyz"), "sk-a…");
    assert!(!redact("abcdefghijklmnop").contains("efgh"));
    assert_eq!(shannon_entropy("aaaaaaaa"), 0.0);
    assert!((shannon_entropy("abcd") - 2.0).abs() < 1e-9);
    assert!(shannon_entropy(&rnd(1, 40, ALNUM)) > 4.0);
}

#[test]
fn untracked_env_file_fires() {
    let s = scanner();
    let key = "sk-ant-api03-".to_string() + &rnd(80, 93, B64URL) + "AA";
    let mut f = FileChange::new(".env", Operation::Create).with_lines(&[
        "# local settings".to_string(),
        format!("ANTHROPIC_API_KEY={key}"),
    ]);
    f.untracked = true;
    let issues = s.scan(&ChangeSet {
        base: String::new(),
        tree: String::new(),
        files: vec![f],
    });
    assert_eq!(rules_of(&issues), vec!["secrets/anthropic-api-key"]);
    assert_eq!(issues[0].path.as_deref(), Some(".env"));
    assert_eq!(issues[0].line, Some(2));
    assert_no_leak(&issues, &key);
}

#[test]
fn deleted_file_and_removed_lines_do_not_fire() {
    let s = scanner();
    let token = "ghp_".to_string() + &rnd(81, 36, ALNUM);
    // A deleted file: even if lines were (wrongly) attached, nothing fires.
    let mut deleted = FileChange::new("old/.env", Operation::Delete)
        .with_lines(&[format!("GITHUB_TOKEN={token}")]);
    deleted.size = 0;
    // A modified file whose only change removed the secret line.
    let mut modified = FileChange::new("src/app.py", Operation::Modify)
        .with_lines(&["token = os.environ['GITHUB_TOKEN']".to_string()]);
    modified.removed = 1;
    let issues = s.scan(&ChangeSet {
        base: String::new(),
        tree: String::new(),
        files: vec![deleted, modified],
    });
    assert!(issues.is_empty(), "{issues:?}");
}

#[test]
fn what_cannot_be_scanned_whole_is_named_and_fails_unless_allowed() {
    let s = SecretScanner::new(&SecretsOptions {
        allow_paths: vec![],
        max_file_bytes: Some(1000),
        ..Default::default()
    })
    .unwrap();
    // A binary whose content the ChangeSet did not hold.
    let mut bin = FileChange::new("assets/logo.png", Operation::Create);
    bin.binary = true;
    bin.size = 5000;
    // A large file of which only one short line was added: that line is
    // all there is to scan.
    let token = "ghp_".to_string() + &rnd(82, 36, ALNUM);
    let mut large =
        FileChange::new("data/dump.sql", Operation::Create).with_lines(&[format!("-- {token}")]);
    large.size = 2000;
    // Size field wrong (0) but real content too large: named all the same.
    let lines: Vec<String> = (0..100)
        .map(|i| format!("line {i} {}", "z".repeat(20)))
        .collect();
    let mut lying = FileChange::new("data/lying.txt", Operation::Create).with_lines(&lines);
    lying.size = 0;
    let issues = s.scan(&ChangeSet {
        base: String::new(),
        tree: String::new(),
        files: vec![bin, large, lying],
    });
    assert_eq!(
        rules_of(&issues),
        vec![
            "secrets/unscanned",
            "secrets/github-token",
            "secrets/unscanned"
        ]
    );
    assert_eq!(issues[0].path.as_deref(), Some("assets/logo.png"));
    assert_eq!(issues[0].severity, Severity::Error);
    assert!(
        issues[0].message.contains("0 of its 5000 bytes"),
        "{}",
        issues[0].message
    );
    assert_eq!(issues[2].path.as_deref(), Some("data/lying.txt"));
    assert_eq!(issues[2].severity, Severity::Error);
    assert!(
        issues[2].message.contains("first 1000 of its"),
        "{}",
        issues[2].message
    );
    assert_no_leak(&issues, &token);

    // Allowed by path (`unscanned_allowed`), or every file with
    // `on_unscanned: warn`: a warning.
    for lenient in [
        SecretsOptions {
            max_file_bytes: Some(1000),
            unscanned_allowed: vec!["data/*.txt".into()],
            ..Default::default()
        },
        SecretsOptions {
            max_file_bytes: Some(1000),
            on_unscanned: OnUnscanned::Warn,
            ..Default::default()
        },
    ] {
        let issues = SecretScanner::new(&lenient)
            .unwrap()
            .scan(&one_file("data/lying.txt", &lines));
        assert_eq!(rules_of(&issues), vec!["secrets/unscanned"]);
        assert_eq!(issues[0].severity, Severity::Warning);
    }
    // Another path is not allowed.
    let s = SecretScanner::new(&SecretsOptions {
        max_file_bytes: Some(1000),
        unscanned_allowed: vec!["data/*.txt".into()],
        ..Default::default()
    })
    .unwrap();
    let issues = s.scan(&one_file("src/lying.rs", &lines));
    assert_eq!(issues[0].severity, Severity::Error);
}

#[test]
fn allow_marker_suppresses_a_line_but_leaves_an_info_trace() {
    let s = scanner();
    let token = "ghp_".to_string() + &rnd(83, 36, ALNUM);
    let issues = s.scan(&one_file(
        "tests/fixtures.rs",
        &[
            format!("let t = \"{token}\"; // rascal:allow"),
            format!("let u = \"{token}\";"),
        ],
    ));
    assert_eq!(
        rules_of(&issues),
        vec!["secrets/allowed-by-marker", "secrets/github-token"]
    );
    // The allowed line leaves an info trace (never silent), without the secret.
    assert_eq!(issues[0].severity, Severity::Info);
    assert_eq!(issues[0].line, Some(1));
    assert!(!issues[0].message.contains(&token));
    assert_eq!(issues[1].line, Some(2));
}

#[test]
fn allow_paths_globs_skip_silently() {
    let s = SecretScanner::new(&SecretsOptions {
        allow_paths: vec!["tests/fixtures/**".into(), "*.pem".into()],
        max_file_bytes: None,
        ..Default::default()
    })
    .unwrap();
    let token = "ghp_".to_string() + &rnd(84, 36, ALNUM);
    let line = [format!("t = \"{token}\"")];
    let cs = ChangeSet {
        base: String::new(),
        tree: String::new(),
        files: vec![
            FileChange::new("tests/fixtures/deep/a.txt", Operation::Create).with_lines(&line),
            FileChange::new("certs/dev/server.pem", Operation::Create).with_lines(&line),
            FileChange::new("src/main.rs", Operation::Create).with_lines(&line),
        ],
    };
    let issues = s.scan(&cs);
    assert_eq!(rules_of(&issues), vec!["secrets/github-token"]);
    assert_eq!(issues[0].path.as_deref(), Some("src/main.rs"));
}

#[test]
fn bad_allow_glob_is_an_error_naming_it() {
    let err = SecretScanner::new(&SecretsOptions {
        allow_paths: vec!["ok/**".into(), "bad/[z".into()],
        max_file_bytes: None,
        ..Default::default()
    })
    .unwrap_err();
    assert!(err.to_string().contains("bad/[z"), "{err}");
}

#[test]
fn options_deserialize() {
    let o: SecretsOptions =
        serde_json::from_str(r#"{"allow_paths": ["docs/**"], "max_file_bytes": 10}"#).unwrap();
    assert_eq!(o.allow_paths, vec!["docs/**"]);
    assert_eq!(o.max_file_bytes, Some(10));
    let d: SecretsOptions = serde_json::from_str("{}").unwrap();
    assert_eq!(d, SecretsOptions::default());
}

#[test]
fn crlf_lines() {
    let s = scanner();
    let token = "glpat-".to_string() + &rnd(85, 20, ALNUM);
    let pass = rnd(86, 20, ALNUM);
    let issues = s.scan(&one_file(
        "config\\win.ini",
        &[
            format!("token={token}\r"),
            format!("password={pass}\r"),
            "password=changeme\r".to_string(),
        ],
    ));
    assert_eq!(
        rules_of(&issues),
        vec!["secrets/gitlab-token", "secrets/generic-secret"]
    );
    assert_no_leak(&issues, &token);
    assert_no_leak(&issues, &pass);
    assert!(!issues.iter().any(|i| i.message.contains('\r')));
}

#[test]
fn very_long_line_still_finds_token() {
    let s = scanner();
    let token = "AIza".to_string() + &rnd(87, 35, B64URL);
    let line = format!(
        "var a=\"{}\";var k=\"{token}\";{}",
        "q".repeat(200_000),
        "w ".repeat(100_000)
    );
    let issues = s.scan(&one_file("dist/app.min.js", &[line]));
    assert_eq!(rules_of(&issues), vec!["secrets/google-api-key"]);
    assert_no_leak(&issues, &token);
}

#[test]
fn twenty_thousand_line_file() {
    let s = scanner();
    let token = "xoxb-".to_string() + &rnd(88, 12, DIGITS) + "-" + &rnd(89, 24, ALNUM);
    let mut lines: Vec<String> = (0..20_000)
        .map(|i| format!("let v{i} = get(token_count, {i}); // key"))
        .collect();
    lines[12_345] = format!("    let slack = \"{token}\";");
    let issues = s.scan(&one_file("src/big.rs", &lines));
    assert_eq!(rules_of(&issues), vec!["secrets/slack-token"]);
    assert_eq!(issues[0].line, Some(12_346));
}

#[test]
fn five_thousand_file_change_set() {
    let s = scanner();
    let mut files: Vec<FileChange> = (0..5_000)
        .map(|i| {
            FileChange::new(format!("pkg/m{i}/mod.rs"), Operation::Modify).with_lines(&[
                format!("pub fn f{i}(api: &Api) -> Result<Token, Error> {{"),
                "    let secret = api.fetch_secret()?;".to_string(),
                "}".to_string(),
            ])
        })
        .collect();
    let key = "sk_live_".to_string() + &rnd(90, 24, ALNUM);
    files[4_321] = FileChange::new("pkg/m4321/mod.rs", Operation::Modify)
        .with_lines(&[format!("const K: &str = \"{key}\";")]);
    let issues = s.scan(&ChangeSet {
        base: String::new(),
        tree: String::new(),
        files,
    });
    assert_eq!(rules_of(&issues), vec!["secrets/stripe-live-key"]);
    assert_eq!(issues[0].path.as_deref(), Some("pkg/m4321/mod.rs"));
}

#[test]
fn empty_change_set_and_empty_files() {
    let s = scanner();
    assert!(s.scan(&ChangeSet::default()).is_empty());
    let cs = ChangeSet {
        base: String::new(),
        tree: String::new(),
        files: vec![
            FileChange::new("empty.txt", Operation::Create),
            FileChange::new("blank.txt", Operation::Create).with_lines(&["", "\r", "   "]),
        ],
    };
    assert!(s.scan(&cs).is_empty());
}

#[test]
fn odd_paths_and_text() {
    let s = scanner();
    let token = "gho_".to_string() + &rnd(91, 36, ALNUM);
    let line = [format!("x = \"{token}\"")];
    let paths = [
        "dir with spaces/my file.env",
        "données/ключ/秘密.txt",
        "-rf",
        "--help",
        "a/\u{202e}gpj.exe",
    ];
    let cs = ChangeSet {
        base: String::new(),
        tree: String::new(),
        files: paths
            .iter()
            .map(|p| FileChange::new(*p, Operation::Create).with_lines(&line))
            .collect(),
    };
    let issues = s.scan(&cs);
    assert_eq!(issues.len(), paths.len());
    for (i, p) in issues.iter().zip(paths) {
        assert_eq!(i.path.as_deref(), Some(p));
    }
    // Lossily decoded junk, control characters, lone multibyte chars near keywords.
    let junk = [
        "\u{FFFD}\u{FFFD}password=\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}",
        "token=é漢字ééé漢字ééé漢字",
        "\0\0\0secret\0=\0\0\0\0\0\0\0\0\0\0",
        "-----BEGIN PRIVATE KEY-----",
        "postgres://:@",
        "eyJ.eyJ.",
    ];
    let _ = s.scan(&one_file("junk.bin.txt", &junk));
}

#[test]
fn findings_per_file_are_capped() {
    let s = scanner();
    let lines: Vec<String> = (0..200)
        .map(|i| format!("k{i} = \"ghp_{}\"", rnd(1000 + i, 36, ALNUM)))
        .collect();
    let issues = s.scan(&one_file("leaks.txt", &lines));
    assert_eq!(issues.len(), MAX_FINDINGS_PER_FILE + 1);
    let last = issues.last().unwrap();
    assert_eq!(last.rule, "secrets/too-many-findings");
    assert_eq!(last.severity, Severity::Info);
}

#[test]
fn rename_and_mode_changes_scan_added_lines() {
    let s = scanner();
    let key = "AKIA".to_string() + &rnd(92, 16, UPPER_NUM);
    let mut f =
        FileChange::new("new/name.cfg", Operation::Rename).with_lines(&[format!("id={key}")]);
    f.old_path = Some("old/name.cfg".into());
    let mut sym = FileChange::new("link", Operation::Create);
    sym.new_kind = Some(EntryKind::Symlink);
    sym.symlink_target = Some(key.clone());
    let issues = s.scan(&ChangeSet {
        base: String::new(),
        tree: String::new(),
        files: vec![f, sym],
    });
    // The symlink's target is a blob of the change: scanned as well.
    assert_eq!(
        rules_of(&issues),
        vec!["secrets/aws-access-key-id", "secrets/aws-access-key-id"]
    );
    assert_eq!(issues[0].path.as_deref(), Some("new/name.cfg"));
    assert_eq!(issues[1].path.as_deref(), Some("link"));
    assert!(
        issues[1].message.contains("symlink"),
        "{}",
        issues[1].message
    );
    assert_no_leak(&issues, &key);
}

#[test]
fn a_secret_in_a_file_name_is_found() {
    let s = scanner();
    let key = "AKIA".to_string() + &rnd(128, 16, UPPER_NUM);
    let cs = ChangeSet {
        base: String::new(),
        tree: String::new(),
        files: vec![
            FileChange::new(format!("keys/{key}.txt"), Operation::Create)
                .with_lines(&["nothing here"]),
        ],
    };
    let issues = s.scan(&cs);
    assert_eq!(rules_of(&issues), vec!["secrets/aws-access-key-id"]);
    assert!(issues[0].message.contains("name"), "{}", issues[0].message);
    // The message does not repeat it (the path, shown everywhere, has it).
    assert!(!issues[0].message.contains(&key));
}

/// Bytes of `s` in UTF-16, little- or big-endian.
fn utf16(s: &str, little: bool) -> Vec<u8> {
    s.bytes()
        .flat_map(|b| if little { [b, 0] } else { [0, b] })
        .collect()
}

#[test]
fn binary_content_is_scanned_byte_by_byte() {
    let s = scanner();
    let key = "AKIA".to_string() + &rnd(120, 16, UPPER_NUM);
    let tok = "ghp_".to_string() + &rnd(121, 36, ALNUM);
    let body = rnd(122, 64, B64);
    let allowed = "glpat-".to_string() + &rnd(123, 20, ALNUM);
    let mut bytes = b"\x7fELF\x02\x01\x01\0\0\0".to_vec();
    let key_at = bytes.len();
    bytes.extend_from_slice(key.as_bytes());
    bytes.extend_from_slice(b"\0\xff\xfe");
    let tok_at = bytes.len();
    bytes.extend_from_slice(&utf16(&format!("t={tok}"), false));
    bytes.extend_from_slice(b"\xff\xff");
    bytes.extend_from_slice(format!("-----BEGIN RSA PRIVATE KEY-----\n{body}\n").as_bytes());
    bytes.extend_from_slice(b"\0\x01");
    bytes.extend_from_slice(format!("{allowed} rascal:allow").as_bytes());
    bytes.push(0);
    let cs = ChangeSet {
        base: String::new(),
        tree: String::new(),
        files: vec![FileChange::new("bin/tool", Operation::Create).with_content(&bytes)],
    };
    let issues = s.scan(&cs);
    assert_eq!(
        rules_of(&issues),
        vec![
            "secrets/aws-access-key-id",
            "secrets/github-token",
            "secrets/private-key",
            "secrets/allowed-by-marker",
            "secrets/binary",
        ]
    );
    assert!(
        issues[0].message.contains(&format!("byte {key_at} ")),
        "{}",
        issues[0].message
    );
    // Big-endian: `t`, `=`, then the token's first byte after its NUL.
    let tok_byte = tok_at + 2 * 2 + 1;
    assert!(
        issues[1].message.contains(&format!("byte {tok_byte} ")),
        "{}",
        issues[1].message
    );
    assert!(issues.iter().all(|i| i.line.is_none()));
    assert_eq!(issues[3].severity, Severity::Info);
    assert_eq!(issues[4].severity, Severity::Info);
    for secret in [&key, &tok, &body, &allowed] {
        assert_no_leak(&issues, secret);
    }
}

#[test]
fn a_secret_reported_as_written_is_not_reported_again_decoded() {
    let s = scanner();
    let key = "AKIA".to_string() + &rnd(124, 16, UPPER_NUM);
    let issues = s.scan(&one_file(
        "src/a.rs",
        &[
            format!("const A: &str = \"{key}\";"),
            format!("const B: &str = \"{}\";", b64(key.as_bytes(), false)),
            format!("const C: &str = \"{}\" + \"{}\";", &key[..8], &key[8..]),
        ],
    ));
    assert_eq!(rules_of(&issues), vec!["secrets/aws-access-key-id"]);
    assert_eq!(issues[0].line, Some(1));
}

#[test]
fn a_decoded_secret_on_an_allowed_line_leaves_only_a_trace() {
    let s = scanner();
    let key = "AKIA".to_string() + &rnd(125, 16, UPPER_NUM);
    let issues = s.scan(&one_file(
        "tests/fixture.rs",
        &[format!(
            "const K: &str = \"{}\"; // rascal:allow",
            b64(key.as_bytes(), false)
        )],
    ));
    assert_eq!(rules_of(&issues), vec!["secrets/allowed-by-marker"]);
    assert!(
        issues[0].message.contains("base64-encoded"),
        "{}",
        issues[0].message
    );
    assert_no_leak(&issues, &key);
}

#[test]
fn a_line_longer_than_the_limit_is_scanned_up_to_it() {
    let s = SecretScanner::new(&SecretsOptions {
        max_file_bytes: Some(10_000),
        ..Default::default()
    })
    .unwrap();
    let early = "ghp_".to_string() + &rnd(126, 36, ALNUM);
    let late = "ghp_".to_string() + &rnd(127, 36, ALNUM);
    let line = format!("a = \"{early}\"; {} b = \"{late}\"", " ".repeat(20_000));
    let issues = s.scan(&one_file("dist/app.js", &[line]));
    assert_eq!(
        rules_of(&issues),
        vec!["secrets/github-token", "secrets/unscanned"]
    );
    assert_eq!(issues[1].severity, Severity::Error);
    assert!(
        issues[1].message.contains("dist/app.js"),
        "{}",
        issues[1].message
    );
}

#[test]
fn on_unscanned_option_reads_from_yaml_names() {
    let o: SecretsOptions = serde_json::from_str(r#"{"on_unscanned": "fail"}"#).unwrap();
    assert_eq!(o.on_unscanned, OnUnscanned::Fail);
    assert_eq!(SecretsOptions::default().on_unscanned, OnUnscanned::Fail);
    assert!(serde_json::from_str::<SecretsOptions>(r#"{"on_unscanned": "ignore"}"#).is_err());
}

#[test]
fn a_long_line_of_many_blobs_is_scanned_whole() {
    // Each blob decodes to text and is scanned in place with some context,
    // never with the whole line around it (which would be quadratic).
    let s = scanner();
    let blob = b64(b"just some harmless words here", false);
    let key = "AKIA".to_string() + &rnd(129, 16, UPPER_NUM);
    let line = format!(
        "{} k={}",
        format!("{blob} ").repeat(20_000),
        b64(key.as_bytes(), false)
    );
    let issues = s.scan(&one_file("data/blobs.txt", &[line]));
    assert_eq!(rules_of(&issues), vec!["secrets/aws-access-key-id"]);
}
