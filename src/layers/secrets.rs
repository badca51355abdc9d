//! Built-in secret scanner (guardrails layer, DESIGN §2 and §10.4).
//!
//! Looks for credentials that an agent added to a change: cloud and SaaS API
//! keys with distinctive prefixes, private key blocks, JWTs, URLs with
//! embedded passwords and generic `password/secret/token = "…"` assignments
//! whose value has high Shannon entropy.
//!
//! How a change is scanned — every byte, and never a silent skip:
//!
//! * In a text file, the *added* lines (`FileChange::added_lines`), whole:
//!   nothing is cut before a rule sees it. In a binary file, every byte of
//!   the new content (`FileChange::content`): its runs of printable ASCII
//!   and UTF-16 text are scanned like lines, and a finding names its byte
//!   offset. A file's path and a symlink's target are scanned too. Deleted
//!   files are ignored; files matching an `allow_paths` glob are skipped
//!   silently.
//! * Up to `max_file_bytes` of each file is scanned. What lies beyond (or
//!   what the ChangeSet could not read) is named in a `secrets/unscanned`
//!   warning — an error with `on_unscanned: fail`.
//! * Each text gets one case-insensitive Aho-Corasick pass over the keywords
//!   of all [`RULES`]; only the rules whose keywords occur run their regex.
//! * Obvious disguises are undone and the result scanned again: base64
//!   (standard and url-safe, [`MIN_BASE64`] chars or more) and hex
//!   ([`MIN_HEX`] or more) blobs are decoded, twice over at most; string
//!   literals joined by `+`, `.`, `..`, `&`, `~`, `||`, juxtaposition (on one
//!   line or continued on the next) or the commas of a `concat`/`join` are
//!   joined and unescaped (`\x41`, `\u0041`); consecutive lines that are
//!   each one bare token (a wrapped base64 block, a folded value) are joined.
//!   Such a finding says how it was hidden ("base64-encoded") and is
//!   reported at its original line; a secret already reported is not
//!   reported again.
//! * A line containing the marker `rascal:allow` is never reported as an
//!   error: its findings leave an `Info` trace.
//! * Candidates that look like placeholders (`xxxx`, `<your-key>`, `EXAMPLE`,
//!   `${VAR}`, `process.env.X`, repeated characters, …) or whose entropy is
//!   below the rule's threshold are dropped. In lock files (`Cargo.lock`,
//!   `package-lock.json`, `go.sum`, …) the generic assignment rule is off.
//! * Long lines are scanned whole: the `regex` crate runs in time linear in
//!   the input. At most [`MAX_FINDINGS_PER_FILE`] findings are reported per
//!   file; the rest are summarised in one `Info` issue.
//! * An issue never contains a secret: the message shows only [`redact`]ed
//!   text (the first four characters, then `…`), never the line itself.
//!
//! Not seen: compressed content (a zip, a PNG's `zTXt`), encodings other
//! than base64 and hex (rot13, XOR, percent-encoding), strings computed at
//! run time, and pieces farther apart than adjacent lines.

mod decode;
mod join;

use std::collections::{HashMap, HashSet};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use globset::GlobSet;
use regex::Regex;

use crate::model::changeset::{ChangeSet, EntryKind, FileChange, Operation};
use crate::model::verdict::{Confidence, Issue, Severity};

/// Default for [`SecretsOptions::max_file_bytes`]: 1 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;

/// At most this many findings are reported for one file.
pub const MAX_FINDINGS_PER_FILE: usize = 50;

/// The inline marker that suppresses findings on its line.
pub const ALLOW_MARKER: &str = "rascal:allow";

/// Decoded text is decoded again at most this many times over in all
/// (base64 inside base64).
pub const MAX_DECODE_DEPTH: usize = 2;

pub use crate::config::guardrails::{OnUnscanned, SecretsOptions};
pub use decode::{MIN_BASE64, MIN_HEX};

/// One detection rule, as readable data.
///
/// `regex` must have a capture group named `secret` (the text that is
/// redacted and checked for placeholders) and may have a group named `body`
/// (the random part, without a fixed prefix, used for the entropy and
/// placeholder checks). `keywords` are matched case-insensitively; the regex
/// only runs on lines that contain at least one of them, so every match of
/// the regex must contain one of the keywords.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SecretRule {
    pub id: &'static str,
    pub description: &'static str,
    pub regex: &'static str,
    pub keywords: &'static [&'static str],
    /// Minimum Shannon entropy (bits per char) of the body. For short
    /// values the bar is lowered to 80% of the maximum possible entropy.
    pub min_entropy: Option<f64>,
}

/// The rules, most specific first: when two findings overlap on a line the
/// earlier rule wins (so `sk-ant-…` is Anthropic, not OpenAI, and
/// `GITHUB_TOKEN=ghp_…` is a GitHub token, not a generic assignment).
pub const RULES: &[SecretRule] = &[
    SecretRule {
        id: "private-key",
        description: "private key block",
        regex: r"(?P<secret>-----BEGIN (?:(?:RSA|EC|DSA|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY(?: BLOCK)?-----)",
        keywords: &["private key"],
        min_entropy: None,
    },
    SecretRule {
        id: "aws-access-key-id",
        description: "AWS access key ID",
        regex: r"\b(?P<secret>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})\b",
        keywords: &["akia", "asia", "abia", "acca"],
        min_entropy: Some(3.0),
    },
    SecretRule {
        id: "aws-secret-access-key",
        description: "AWS secret access key",
        regex: r#"(?i)aws_?(?:secret|sec)(?:_?access)?_?key["']?\s*(?::=|=>|=|:)\s*["'`]?(?P<secret>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#,
        keywords: &["aws_secret", "awssecret", "aws_sec", "awssec"],
        min_entropy: Some(3.5),
    },
    SecretRule {
        id: "github-token",
        description: "GitHub token",
        regex: r"\b(?P<secret>gh[pousr]_(?P<body>[A-Za-z0-9]{36,251}))\b",
        keywords: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        min_entropy: Some(3.0),
    },
    SecretRule {
        id: "github-fine-grained-pat",
        description: "GitHub fine-grained personal access token",
        regex: r"\b(?P<secret>github_pat_(?P<body>[A-Za-z0-9_]{50,251}))\b",
        keywords: &["github_pat_"],
        min_entropy: Some(3.0),
    },
    SecretRule {
        id: "gitlab-token",
        description: "GitLab personal access token",
        regex: r"\b(?P<secret>glpat-(?P<body>[A-Za-z0-9_\-]{20,64}))(?:[^A-Za-z0-9_\-]|$)",
        keywords: &["glpat-"],
        min_entropy: Some(3.0),
    },
    SecretRule {
        id: "slack-token",
        description: "Slack token",
        regex: r"\b(?P<secret>xox[abposr]-(?P<body>[0-9A-Za-z][0-9A-Za-z\-]{14,250}))(?:[^0-9A-Za-z\-]|$)",
        keywords: &["xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxr-", "xoxs-"],
        min_entropy: Some(3.0),
    },
    SecretRule {
        id: "slack-webhook",
        description: "Slack incoming webhook URL",
        regex: r"(?P<secret>https://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<body>[A-Za-z0-9+/_\-]{20,200}))",
        keywords: &["hooks.slack.com"],
        min_entropy: Some(3.0),
    },
    SecretRule {
        id: "stripe-live-key",
        description: "Stripe live secret key",
        regex: r"\b(?P<secret>(?:sk|rk)_live_(?P<body>[A-Za-z0-9]{20,247}))\b",
        keywords: &["sk_live_", "rk_live_"],
        min_entropy: Some(3.0),
    },
    SecretRule {
        id: "stripe-test-key",
        description: "Stripe test secret key",
        regex: r"\b(?P<secret>(?:sk|rk)_test_(?P<body>[A-Za-z0-9]{20,247}))\b",
        keywords: &["sk_test_", "rk_test_"],
        min_entropy: Some(3.0),
    },
    SecretRule {
        id: "google-api-key",
        description: "Google API key",
        regex: r"\b(?P<secret>AIza(?P<body>[0-9A-Za-z_\-]{35}))(?:[^0-9A-Za-z_\-]|$)",
        keywords: &["aiza"],
        min_entropy: Some(3.0),
    },
    SecretRule {
        id: "anthropic-api-key",
        description: "Anthropic API key",
        regex: r"\b(?P<secret>sk-ant-(?:(?:api|admin|sid)[0-9]{2}-)?(?P<body>[A-Za-z0-9_\-]{32,250}))(?:[^A-Za-z0-9_\-]|$)",
        keywords: &["sk-ant-"],
        min_entropy: Some(3.5),
    },
    SecretRule {
        id: "openai-api-key",
        description: "OpenAI API key",
        regex: r"\b(?P<secret>sk-(?:proj-|svcacct-|admin-|None-)?(?P<body>[A-Za-z0-9_\-]{32,250}))(?:[^A-Za-z0-9_\-]|$)",
        keywords: &["sk-"],
        min_entropy: Some(4.0),
    },
    SecretRule {
        id: "jwt",
        description: "JSON Web Token",
        regex: r"\b(?P<secret>eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.(?P<body>[A-Za-z0-9_\-]{16,}))",
        keywords: &["eyj"],
        min_entropy: Some(3.0),
    },
    SecretRule {
        id: "url-credentials",
        description: "URL with embedded credentials",
        regex: r#"\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://(?P<user>[^\s:@/'"`<>{}]{1,128}):(?P<secret>[^\s@/'"`<>]{3,256})@[A-Za-z0-9\[]"#,
        keywords: &["://"],
        min_entropy: None,
    },
    SecretRule {
        id: "generic-secret",
        description: "hard-coded password, secret or token",
        regex: r#"(?i)(?P<key>[A-Za-z0-9_.\-]{0,40}(?:password|passwd|pwd|secret|token|api[_\-]?key|access[_\-]?key|auth[_\-]?key|private[_\-]?key|credential)(?:s|[_.\-][A-Za-z0-9_.\-]{0,30}|(?-i:[A-Z])[A-Za-z0-9_]{0,30})?)["']?\s*(?::=|=>|=|:)\s*["'`]?(?P<secret>[A-Za-z0-9+/_\-!@#%^&*~.=?|:][^\s"'`,;]{7,255})"#,
        keywords: &[
            "password",
            "passwd",
            "pwd",
            "secret",
            "token",
            "api_key",
            "api-key",
            "apikey",
            "access_key",
            "access-key",
            "accesskey",
            "auth_key",
            "auth-key",
            "authkey",
            "private_key",
            "private-key",
            "privatekey",
            "credential",
        ],
        min_entropy: Some(3.5),
    },
];

/// Severity and confidence of a rule's findings (kept out of [`SecretRule`]
/// so the public rule table stays a plain pattern list).
fn policy(id: &str) -> (Severity, Confidence) {
    match id {
        "private-key" | "aws-access-key-id" | "aws-secret-access-key" => {
            (Severity::Critical, Confidence::High)
        }
        "stripe-test-key" => (Severity::Warning, Confidence::High),
        "generic-secret" | "url-credentials" => (Severity::Error, Confidence::Medium),
        _ => (Severity::Error, Confidence::High),
    }
}

/// `secret` with everything after the first four characters replaced by
/// `…`. Secrets of fewer than eight characters show only their first half.
pub fn redact(secret: &str) -> String {
    let n = secret.chars().count();
    let keep = if n >= 8 { 4 } else { n / 2 };
    let mut out: String = secret.chars().take(keep).collect();
    out.push('…');
    out
}

/// Shannon entropy of `s` in bits per character (0.0 for an empty string).
pub fn shannon_entropy(s: &str) -> f64 {
    let mut counts: HashMap<char, usize> = HashMap::new();
    let mut total = 0usize;
    for c in s.chars() {
        *counts.entry(c).or_default() += 1;
        total += 1;
    }
    if total == 0 {
        return 0.0;
    }
    let total = total as f64;
    counts
        .values()
        .map(|&c| {
            let p = c as f64 / total;
            -p * p.log2()
        })
        .sum()
}

/// Words that mark a value as a placeholder, not a real secret (checked on
/// the lower-cased candidate).
const PLACEHOLDER_WORDS: &[&str] = &[
    "example",
    "xxxx",
    "your",
    "changeme",
    "change_me",
    "change-me",
    "placeholder",
    "dummy",
    "fake",
    "redacted",
    "sample",
    "test",
    "mock",
    "insert",
    "replace",
    "todo",
    "fixme",
    "foobar",
    "lorem",
    "here",
    "password",
    "notreal",
    "not_real",
    "not-real",
    "invalid",
    "abcdef",
    "123456",
    "****",
    "...",
    "…",
    "{{",
    "${",
    "%(",
    "process.env",
    "os.environ",
    "getenv",
    "env!",
    "env(",
    "env.",
    "secrets.",
    "vault:",
];

/// Key names (lower-cased) that hold something other than a secret value.
const NON_SECRET_KEY_PARTS: &[&str] = &[
    "hash",
    "sha",
    "digest",
    "checksum",
    "integrity",
    "url",
    "uri",
    "path",
    "file",
    "dir",
    "name",
    "type",
    "length",
    "_len",
    "count",
    "prefix",
    "header",
    "endpoint",
    "field",
    "policy",
    "expir",
    "ttl",
    "timeout",
    "format",
    "kind",
    "mode",
    "limit",
    "size",
    "regex",
    "pattern",
    "label",
    "public",
    "placeholder",
    "env_var",
    "_env",
    "_id",
    "manager",
    "store",
    "provider",
];

/// Passwords in URLs that are local-development defaults, not leaks.
const DEV_URL_PASSWORDS: &[&str] = &[
    "password", "pass", "passwd", "secret", "postgres", "mysql", "root", "admin", "guest", "user",
    "test", "example", "changeme", "redis", "mongo", "rabbitmq", "dev", "local",
];

fn is_placeholder(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    if PLACEHOLDER_WORDS.iter().any(|w| lower.contains(w)) {
        return true;
    }
    let first = value.chars().next().unwrap_or(' ');
    if matches!(first, '$' | '%' | '<' | '{' | '[' | '(') {
        return true;
    }
    // Repeated characters: a run of five, or very few distinct characters.
    let mut run = 0usize;
    let mut prev = None;
    let mut distinct: Vec<char> = Vec::new();
    for c in value.chars() {
        if Some(c) == prev {
            run += 1;
            if run >= 5 {
                return true;
            }
        } else {
            run = 1;
            prev = Some(c);
        }
        if distinct.len() < 6 && !distinct.contains(&c) {
            distinct.push(c);
        }
    }
    distinct.len() < 6
}

fn entropy_ok(value: &str, min: Option<f64>) -> bool {
    let Some(min) = min else { return true };
    let n = value.chars().count().max(1) as f64;
    let bar = min.min(n.log2() * 0.8);
    shannon_entropy(value) >= bar
}

fn is_uuid(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// A code identifier or dotted reference rather than a literal value.
fn looks_like_reference(v: &str) -> bool {
    let ident = |s: &str| {
        !s.is_empty()
            && s.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    // `settings.SECRET_KEY`, `self.token`, `config.auth.password`
    if v.contains('.') && v.split('.').all(ident) {
        return true;
    }
    // `API_TOKEN_V2`, `get_token_value`
    let upper_snake = v.contains('_')
        && v.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    let lower_snake = v.contains('_')
        && v.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    (upper_snake || lower_snake) && ident(v)
}

/// Extra checks for a generic `key = value` candidate.
fn generic_ok(key: &str, value: &str) -> bool {
    let key = key.to_ascii_lowercase();
    if NON_SECRET_KEY_PARTS.iter().any(|p| key.contains(p)) {
        return false;
    }
    if value.contains(['(', ')', '[', ']', '{', '}', '<', '>', '\\']) {
        return false;
    }
    if value.starts_with("http") || value.starts_with('/') || value.starts_with("./") {
        return false;
    }
    if is_uuid(value) || looks_like_reference(value) {
        return false;
    }
    if value.contains(':')
        && value.split(':').next().is_some_and(|p| {
            matches!(
                p,
                "sha1" | "sha256" | "sha384" | "sha512" | "md5" | "file" | "env"
            )
        })
    {
        return false;
    }
    let has_digit = value.chars().any(|c| c.is_ascii_digit());
    let n = value.chars().count();
    has_digit || (n >= 24 && shannon_entropy(value) >= 4.2)
}

fn url_password_ok(user: &str, pass: &str) -> bool {
    let lower = pass.to_ascii_lowercase();
    if pass == user || DEV_URL_PASSWORDS.contains(&lower.as_str()) {
        return false;
    }
    if pass.starts_with('$') || pass.starts_with('%') || pass.contains("{{") {
        return false;
    }
    !is_placeholder(pass)
}

/// Lock files hold hashes, not hand-written config: the generic rule is off.
fn is_lock_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(
        name,
        "Cargo.lock"
            | "package-lock.json"
            | "npm-shrinkwrap.json"
            | "yarn.lock"
            | "pnpm-lock.yaml"
            | "go.sum"
            | "poetry.lock"
            | "Pipfile.lock"
            | "Gemfile.lock"
            | "composer.lock"
            | "flake.lock"
            | "uv.lock"
            | "bun.lock"
            | "mix.lock"
            | "pubspec.lock"
            | "packages.lock.json"
            | "gradle.lockfile"
    ) || name.ends_with(".lock")
}

/// Does the text after a private-key header (same line, or the next added
/// line) look like key material rather than a header constant in code?
fn key_body_follows(rest: &str, next: Option<&str>) -> bool {
    let base64ish = |s: &str| {
        let s = s.trim().trim_start_matches("\\n").trim_start_matches("\\r");
        s.starts_with("Proc-Type:")
            || s.starts_with("Comment:")
            || s.starts_with("Version:")
            || s.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '='))
                .count()
                >= 32
    };
    if let Some(i) = rest.find("\\n") {
        if base64ish(&rest[i..]) {
            return true;
        }
    }
    if base64ish(rest) {
        return true;
    }
    next.is_some_and(|n| base64ish(n.trim_start_matches(['"', '\'', ' ', '\t'])))
}

struct Compiled {
    rule: &'static SecretRule,
    regex: Regex,
    has_body: bool,
    severity: Severity,
    confidence: Confidence,
}

/// The compiled scanner: build once with [`SecretScanner::new`], then call
/// [`SecretScanner::scan`] for each change set.
pub struct SecretScanner {
    rules: Vec<Compiled>,
    keywords: AhoCorasick,
    /// Keyword pattern id → bit set of rule indices.
    keyword_rules: Vec<u64>,
    allow: GlobSet,
    max_file_bytes: u64,
    on_unscanned: OnUnscanned,
}

impl std::fmt::Debug for SecretScanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretScanner")
            .field("rules", &self.rules.len())
            .field("max_file_bytes", &self.max_file_bytes)
            .field("on_unscanned", &self.on_unscanned)
            .finish()
    }
}

struct Finding {
    rule: usize,
    start: usize,
    end: usize,
    secret: String,
}

/// Where in a file a text that is scanned comes from.
#[derive(Debug, Clone, Copy)]
struct At {
    /// The (new) line number, in a text file.
    line: Option<u32>,
    place: Place,
    /// The text, or the line it was derived from, carries [`ALLOW_MARKER`].
    allowed: bool,
}

#[derive(Debug, Clone, Copy)]
enum Place {
    /// An added line.
    Added,
    /// Binary content: the byte offset of the text's first character and
    /// the bytes per character (0: every finding is at that offset).
    Binary { base: u64, stride: u64 },
    /// The file's path.
    Name,
    /// Where a symlink points.
    Target,
}

impl At {
    fn line(line: u32, text: &str) -> At {
        At {
            line: Some(line),
            place: Place::Added,
            allowed: text.contains(ALLOW_MARKER),
        }
    }

    /// The same place, for a text derived from the part of this text that
    /// starts at `start` (a decoded token).
    fn within(self, start: usize) -> At {
        let place = match self.place {
            Place::Binary { base, stride } => Place::Binary {
                base: base + start as u64 * stride,
                stride: 0,
            },
            other => other,
        };
        At { place, ..self }
    }

    /// How a finding at byte `start` of the text is placed, for its message.
    fn describe(&self, start: usize) -> String {
        match self.place {
            Place::Added => " added".to_string(),
            Place::Binary { base, stride } => {
                format!(
                    " in binary content at byte {}",
                    base + start as u64 * stride
                )
            }
            Place::Name => " in the file's name".to_string(),
            Place::Target => " as a symlink's target".to_string(),
        }
    }
}

/// The findings of one file, turned into issues: capped, deduplicated
/// across the ways a secret can be reached.
struct FileIssues<'a> {
    path: &'a str,
    issues: &'a mut Vec<Issue>,
    reported: usize,
    suppressed: usize,
    /// Secrets already reported (or allowed) in this file.
    seen: HashSet<String>,
}

impl SecretScanner {
    /// Compile the rules and the `allow_paths` globs. The error names the
    /// glob that does not parse.
    pub fn new(opts: &SecretsOptions) -> Result<Self, String> {
        assert!(RULES.len() <= 64, "rule bit set holds 64 rules");
        let mut rules = Vec::with_capacity(RULES.len());
        let mut patterns: Vec<String> = Vec::new();
        let mut keyword_rules: Vec<u64> = Vec::new();
        for (i, rule) in RULES.iter().enumerate() {
            let regex = Regex::new(rule.regex)
                .map_err(|e| format!("secret rule {}: bad regex: {e}", rule.id))?;
            let (severity, confidence) = policy(rule.id);
            rules.push(Compiled {
                rule,
                has_body: regex.capture_names().any(|n| n == Some("body")),
                regex,
                severity,
                confidence,
            });
            for kw in rule.keywords {
                let kw = kw.to_ascii_lowercase();
                match patterns.iter().position(|p| *p == kw) {
                    Some(p) => keyword_rules[p] |= 1 << i,
                    None => {
                        patterns.push(kw);
                        keyword_rules.push(1 << i);
                    }
                }
            }
        }
        let keywords = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&patterns)
            .map_err(|e| format!("secret keywords: {e}"))?;

        let allow = crate::config::guardrails::secrets_allow_set(&opts.allow_paths)?;

        Ok(SecretScanner {
            rules,
            keywords,
            keyword_rules,
            allow,
            max_file_bytes: opts.max_file_bytes.unwrap_or(DEFAULT_MAX_FILE_BYTES),
            on_unscanned: opts.on_unscanned,
        })
    }

    /// Scan every changed file; returns one issue per finding (plus issues
    /// for what could not be scanned). Never panics on odd input and never
    /// puts a secret in an issue.
    pub fn scan(&self, changes: &ChangeSet) -> Vec<Issue> {
        let mut issues = Vec::new();
        for file in &changes.files {
            self.scan_file(file, &mut issues);
        }
        issues
    }

    fn scan_file(&self, file: &FileChange, issues: &mut Vec<Issue>) {
        if file.op == Operation::Delete
            || matches!(file.new_kind, None | Some(EntryKind::Submodule))
        {
            return;
        }
        if self.allow.is_match(&file.path) {
            return;
        }
        let mut out = FileIssues {
            path: &file.path,
            issues,
            reported: 0,
            suppressed: 0,
            seen: HashSet::new(),
        };
        // A name and a link target are bytes of the change too.
        self.scan_short(&file.path, Place::Name, &mut out);
        if file.new_kind == Some(EntryKind::Symlink) {
            if let Some(target) = &file.symlink_target {
                self.scan_short(target, Place::Target, &mut out);
            }
        } else if file.binary {
            self.scan_binary(file, &mut out);
        } else {
            self.scan_text(file, &mut out);
        }
        if out.suppressed > 0 {
            let n = out.suppressed;
            out.issues.push(
                Issue::new(
                    "secrets/too-many-findings",
                    Severity::Info,
                    format!("{n} more possible secrets in this file not listed"),
                )
                .at(file.path.clone(), None),
            );
        }
    }

    /// A path or a symlink target, as written and decoded.
    fn scan_short(&self, text: &str, place: Place, out: &mut FileIssues) {
        let at = At {
            line: None,
            place,
            allowed: text.contains(ALLOW_MARKER),
        };
        let mut findings = Vec::new();
        self.scan_line(text, None, false, &mut findings);
        out.add(self, &mut findings, at, "", false);
        self.decode(text, false, 0, "", at, out);
    }

    /// The added lines of a text file, up to `max_file_bytes`.
    fn scan_text(&self, file: &FileChange, out: &mut FileIssues) {
        let lock = is_lock_file(&file.path);
        let total: u64 = file
            .added_lines
            .iter()
            .map(|l| l.text.len() as u64 + 1)
            .sum();
        let mut budget = self.max_file_bytes;
        let mut lines: Vec<(u32, &str)> = Vec::with_capacity(file.added_lines.len());
        for added in &file.added_lines {
            if budget == 0 {
                break;
            }
            let mut text = added.text.as_str();
            if text.len() as u64 >= budget {
                let mut cut = budget as usize;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text = &text[..cut];
                budget = 0;
            } else {
                budget -= text.len() as u64 + 1;
            }
            lines.push((added.line, text.strip_suffix('\r').unwrap_or(text)));
        }
        let next = |i: usize| {
            lines
                .get(i + 1)
                .filter(|n| n.0 == lines[i].0.wrapping_add(1))
                .map(|n| n.1)
        };
        let ats: Vec<At> = lines.iter().map(|&(l, text)| At::line(l, text)).collect();
        let mut findings = Vec::new();
        for (i, &(_, text)) in lines.iter().enumerate() {
            self.scan_line(text, next(i), lock, &mut findings);
            if !findings.is_empty() {
                out.add(self, &mut findings, ats[i], "", false);
            }
        }
        for (i, &(_, text)) in lines.iter().enumerate() {
            self.decode(text, lock, 0, "", ats[i], out);
        }
        // Runs of adjacent lines, for what is split across them.
        let mut start = 0;
        while start < lines.len() {
            let mut end = start + 1;
            while end < lines.len() && lines[end].0 == lines[end - 1].0.wrapping_add(1) {
                end += 1;
            }
            let run: Vec<&str> = lines[start..end].iter().map(|l| l.1).collect();
            for joined in join::literal_chains(&run)
                .into_iter()
                .chain(join::token_blocks(&run))
            {
                let at = ats[start + joined.line];
                let how = joined.how;
                self.derived(&joined.text, None, joined.body.clone(), lock, how, at, out);
                self.decode(&joined.text[joined.body], lock, 0, how, at, out);
            }
            start = end;
        }
        if total > self.max_file_bytes {
            self.unscanned(file, self.max_file_bytes, total, out);
        }
    }

    /// Every byte of a binary file's new content, up to `max_file_bytes`.
    fn scan_binary(&self, file: &FileChange, out: &mut FileIssues) {
        let Some(bytes) = file.content.as_deref() else {
            self.unscanned(file, 0, file.size, out);
            return;
        };
        let total = file.size.max(bytes.len() as u64);
        let n = (bytes.len() as u64).min(self.max_file_bytes) as usize;
        let runs = decode::text_runs(&bytes[..n]);
        let mut findings = Vec::new();
        for (i, run) in runs.iter().enumerate() {
            // A private key's body follows its header after a line break.
            let next = runs
                .get(i + 1)
                .filter(|r| r.stride == run.stride && r.offset <= run.end() + 2 * run.stride)
                .map(|r| r.text.as_str());
            let at = At {
                line: None,
                place: Place::Binary {
                    base: run.offset as u64,
                    stride: run.stride as u64,
                },
                allowed: run.text.contains(ALLOW_MARKER),
            };
            self.scan_line(&run.text, next, false, &mut findings);
            out.add(self, &mut findings, at, "", true);
            self.decode(&run.text, false, 0, "", at, out);
        }
        out.issues.push(
            Issue::new(
                "secrets/binary",
                Severity::Info,
                "binary file: its text (ASCII and UTF-16 runs, base64 and hex decoded) was \
                 scanned for secrets; compressed or otherwise encoded content cannot be",
            )
            .at(file.path.clone(), None),
        );
        if total > n as u64 {
            self.unscanned(file, n as u64, total, out);
        }
    }

    /// Name the part of `file` that was not scanned: a warning, or an error
    /// with `on_unscanned: fail`.
    fn unscanned(&self, file: &FileChange, scanned: u64, total: u64, out: &mut FileIssues) {
        let severity = match self.on_unscanned {
            OnUnscanned::Warn => Severity::Warning,
            OnUnscanned::Fail => Severity::Error,
        };
        let what = if scanned >= self.max_file_bytes {
            format!(
                "only the first {scanned} of its {total} bytes were scanned for secrets \
                 (max_file_bytes: {}): raise max_file_bytes to scan it whole",
                self.max_file_bytes
            )
        } else {
            format!("only {scanned} of its {total} bytes could be read to scan for secrets")
        };
        let hint = match self.on_unscanned {
            OnUnscanned::Warn => "; `on_unscanned: fail` refuses such files",
            OnUnscanned::Fail => "; refused by `on_unscanned: fail`",
        };
        out.issues.push(
            Issue::new(
                "secrets/unscanned",
                severity,
                format!("{} not fully scanned: {what}{hint}", file.path),
            )
            .at(file.path.clone(), None),
        );
    }

    /// Scan `text` derived from a line or run (decoded, joined): report the
    /// findings that overlap `region` (the derived part) and were not
    /// reported already.
    #[allow(clippy::too_many_arguments)]
    fn derived(
        &self,
        text: &str,
        next: Option<&str>,
        region: std::ops::Range<usize>,
        lock: bool,
        how: &str,
        at: At,
        out: &mut FileIssues,
    ) {
        let mut findings = Vec::new();
        self.scan_line(text, next, lock, &mut findings);
        findings.retain(|f| f.start < region.end && region.start < f.end);
        out.add(self, &mut findings, at, how, true);
    }

    /// Decode the base64 and hex blobs in `text` and scan what they hold.
    /// `how` says how `text` itself was reached ("" for a line as added).
    fn decode(
        &self,
        text: &str,
        lock: bool,
        depth: usize,
        how: &str,
        at: At,
        out: &mut FileIssues,
    ) {
        if depth >= MAX_DECODE_DEPTH {
            return;
        }
        for token in decode::tokens(text) {
            let how = if how.is_empty() {
                format!(", {}-encoded", token.encoding)
            } else {
                format!(", {}-encoded{how}", token.encoding)
            };
            let at = at.within(token.start);
            for bytes in decode::decodings(&text[token.start..token.end], token.encoding) {
                match decode::as_text(&bytes) {
                    Some(s) if !s.contains('\n') => {
                        // On its own, and in place of the blob, so that
                        // `password: <base64>` is still an assignment.
                        self.derived(s, None, 0..s.len(), lock, &how, at, out);
                        let head = decode::before(text, token.start);
                        let line = format!("{head}{s}{}", decode::after(text, token.end));
                        let region = head.len()..head.len() + s.len();
                        self.derived(&line, None, region, lock, &how, at, out);
                        self.decode(s, lock, depth + 1, &how, at, out);
                    }
                    Some(s) => {
                        let lines: Vec<&str> = s.lines().collect();
                        for (i, l) in lines.iter().enumerate() {
                            let next = lines.get(i + 1).copied();
                            self.derived(l, next, 0..l.len(), lock, &how, at, out);
                            self.decode(l, lock, depth + 1, &how, at, out);
                        }
                    }
                    None => {
                        let runs = decode::text_runs(&bytes);
                        for (i, run) in runs.iter().enumerate() {
                            let next = runs.get(i + 1).map(|r| r.text.as_str());
                            let t = run.text.as_str();
                            self.derived(t, next, 0..t.len(), lock, &how, at, out);
                            self.decode(t, lock, depth + 1, &how, at, out);
                        }
                    }
                }
            }
        }
    }

    /// Find secrets in one text (a line already stripped of `\r`).
    fn scan_line(&self, text: &str, next: Option<&str>, lock: bool, out: &mut Vec<Finding>) {
        let mut set = 0u64;
        for m in self.keywords.find_overlapping_iter(text) {
            set |= self.keyword_rules[m.pattern().as_usize()];
        }
        if set == 0 {
            return;
        }
        for (i, c) in self.rules.iter().enumerate() {
            if set & (1 << i) == 0 {
                continue;
            }
            let id = c.rule.id;
            if lock && id == "generic-secret" {
                continue;
            }
            for caps in c.regex.captures_iter(text) {
                let Some(secret) = caps.name("secret") else {
                    continue;
                };
                let body = if c.has_body {
                    caps.name("body").map_or(secret.as_str(), |b| b.as_str())
                } else {
                    secret.as_str()
                };
                let ok = match id {
                    "private-key" => key_body_follows(&text[secret.end()..], next),
                    "url-credentials" => {
                        let user = caps.name("user").map_or("", |u| u.as_str());
                        url_password_ok(user, secret.as_str())
                    }
                    "generic-secret" => {
                        let key = caps.name("key").map_or("", |k| k.as_str());
                        !is_placeholder(body)
                            && entropy_ok(body, c.rule.min_entropy)
                            && generic_ok(key, body)
                    }
                    _ => !is_placeholder(body) && entropy_ok(body, c.rule.min_entropy),
                };
                if !ok {
                    continue;
                }
                let (start, end) = (secret.start(), secret.end());
                if out.iter().any(|f| f.start < end && start < f.end) {
                    continue;
                }
                out.push(Finding {
                    rule: i,
                    start,
                    end,
                    secret: secret.as_str().to_string(),
                });
            }
        }
    }
}

impl FileIssues<'_> {
    /// Turn `findings` (drained) into issues. `derived`: reached by
    /// decoding, joining or reading binary bytes, so a secret already
    /// reported in this file is not reported again.
    fn add(
        &mut self,
        scanner: &SecretScanner,
        findings: &mut Vec<Finding>,
        at: At,
        how: &str,
        derived: bool,
    ) {
        for f in findings.drain(..) {
            if !self.seen.insert(f.secret.clone()) && derived {
                continue;
            }
            let c = &scanner.rules[f.rule];
            let place = at.describe(f.start);
            if at.allowed {
                // Allowed, but never silently: an agent could mark its own
                // leak. The trace is info, so it does not fail.
                self.issues.push(
                    Issue::new(
                        "secrets/allowed-by-marker",
                        Severity::Info,
                        format!(
                            "possible {}{place}{how} ({}) allowed by an inline `{ALLOW_MARKER}` marker; confirm it is not a real secret",
                            c.rule.description,
                            redact(&f.secret)
                        ),
                    )
                    .at(self.path, at.line),
                );
                continue;
            }
            if self.reported >= MAX_FINDINGS_PER_FILE {
                self.suppressed += 1;
                continue;
            }
            self.reported += 1;
            self.issues.push(
                Issue::new(
                    format!("secrets/{}", c.rule.id),
                    c.severity,
                    format!(
                        "possible {}{place}{how} ({}); remove it, rotate it, and load it from the environment",
                        c.rule.description,
                        redact(&f.secret)
                    ),
                )
                .confidence(c.confidence)
                .at(self.path, at.line),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_compiles_and_has_keywords() {
        let s = SecretScanner::new(&SecretsOptions::default()).unwrap();
        assert_eq!(s.rules.len(), RULES.len());
        for r in RULES {
            assert!(!r.keywords.is_empty(), "{}", r.id);
            assert!(r.regex.contains("?P<secret>"), "{}", r.id);
        }
    }

    #[test]
    fn entropy_and_redaction() {
        assert_eq!(shannon_entropy(""), 0.0);
        assert_eq!(shannon_entropy("aaaa"), 0.0);
        assert!((shannon_entropy("ab") - 1.0).abs() < 1e-9);
        assert_eq!(redact("abcdefghij"), "abcd…");
        assert_eq!(redact("abc"), "a…");
        assert_eq!(redact(""), "…");
        assert_eq!(redact("ééééééééé"), "éééé…");
    }

    #[test]
    fn placeholders() {
        for p in [
            "xxxxxxxxxxxx",
            "<your-key>",
            "${API_KEY}",
            "changeme123",
            "aaaaaaaaaaaa",
        ] {
            assert!(is_placeholder(p), "{p}");
        }
        assert!(!is_placeholder("q8Zr4Tm1Lx9Vb2Nc"));
    }

    #[test]
    fn bad_glob_is_named() {
        let e = SecretScanner::new(&SecretsOptions {
            allow_paths: vec!["a/[".into()],
            max_file_bytes: None,
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.contains("a/["), "{e}");
    }
}
