//! What a matched value is, judged as a whole: a placeholder (`xxxx`,
//! `<your-key>`, `${VAR}`, EXAMPLE, `test-key-12345678`), code
//! (`settings.KEY`, `proc_macro2::TokenStream`, `CONSTANT_NAME`), a UUID, a
//! path, a digest, a version — and whether a name says "secret", read as
//! the whole words of the identifier (`SERVICE_ACCOUNT_TOKEN` is a token,
//! `TokenStream` and `credentialId` are not). Pure functions of text.

use std::collections::HashMap;

use crate::config::secrets::ValueFilter;

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

/// Is the entropy of `value` at least `min`? For short values the bar is
/// lowered to 80% of the most a string of that length can have.
pub fn entropy_ok(value: &str, min: Option<f64>) -> bool {
    let Some(min) = min else { return true };
    let n = value.chars().count().max(1) as f64;
    let bar = min.min(n.log2() * 0.8);
    shannon_entropy(value) >= bar
}

/// Is `value` dropped by one of `filters`? `quoted`: the value was written
/// inside quotes (a string literal is never code).
pub fn dropped(filters: &[ValueFilter], value: &str, quoted: bool) -> bool {
    filters.iter().any(|f| match f {
        ValueFilter::Placeholder => is_placeholder(value),
        ValueFilter::Uuid => is_uuid(value),
        ValueFilter::Identifier => !quoted && is_code(value),
        ValueFilter::Path => is_path(value),
        ValueFilter::Digest => is_digest(value),
        ValueFilter::LettersOnly => letters_only(value),
        ValueFilter::OneCase => one_case(value),
        ValueFilter::Version => is_version(value),
    })
}

/// Text that marks a value as a template, a reference or an example,
/// wherever it occurs (compared lower-cased).
const PLACEHOLDER_MARKS: &[&str] = &[
    "${",
    "{{",
    "%(",
    "<%",
    "#{",
    "process.env",
    "os.environ",
    "getenv",
    "env!",
    "env(",
    "secrets.",
    "vault:",
    "…",
    "...",
    "****",
    "xxxx",
    "####",
    "example",
    "placeholder",
    "redacted",
    "changeme",
    "change_me",
    "change-me",
    "replaceme",
    "replace_me",
    "notreal",
    "not_real",
    "not-real",
    "lorem",
    "ipsum",
    "dummy",
    "foobar",
    "fixme",
    "your_",
    "your-",
    "yourkey",
    "yourtoken",
    "yoursecret",
    "yourpassword",
    "insert_",
    "insert-",
    "qwerty",
    "asdfgh",
];

/// Words that say a value was written to show the shape of a secret:
/// a value made only of these (and short or sequential numbers) is a
/// placeholder. "test" is one only among others: `FLWSECK_TEST-<hex>`
/// is a real key. No single letters: hex is made of them.
const FILLER_WORDS: &[&str] = &[
    "test",
    "testing",
    "tests",
    "demo",
    "dev",
    "develop",
    "sample",
    "samples",
    "key",
    "keys",
    "api",
    "apikey",
    "token",
    "tokens",
    "secret",
    "secrets",
    "password",
    "passwd",
    "pass",
    "pwd",
    "passw",
    "ord",
    "my",
    "your",
    "yours",
    "here",
    "value",
    "values",
    "string",
    "str",
    "abc",
    "abcd",
    "xyz",
    "foo",
    "bar",
    "baz",
    "qux",
    "access",
    "auth",
    "user",
    "username",
    "admin",
    "root",
    "local",
    "localhost",
    "default",
    "none",
    "null",
    "nil",
    "true",
    "false",
    "invalid",
    "mock",
    "stub",
    "tmp",
    "temp",
    "fake",
    "sk",
    "pk",
    "rk",
    "live",
    "prod",
    "production",
    "staging",
    "stage",
    "bot",
    "app",
    "client",
    "id",
    "private",
    "public",
    "new",
    "old",
    "some",
    "the",
    "an",
    "for",
    "to",
    "of",
    "and",
    "or",
    "is",
    "not",
    "real",
    "put",
    "set",
    "get",
    "use",
    "change",
    "me",
    "please",
    "goes",
    "go",
    "in",
    "service",
    "account",
    "db",
    "database",
    "hunter",
    "letmein",
    "welcome",
    "super",
    "master",
    "bearer",
    "xx",
    "xxx",
];

/// Is `value` a placeholder rather than a secret? Judged on the whole
/// value: template and reference syntax, example words, one repeated
/// character, few distinct characters, sequences (`123456`, `abcdef`),
/// or nothing but filler words and small numbers (`test-key-12345678`).
pub fn is_placeholder(value: &str) -> bool {
    let lower = value.to_lowercase();
    if PLACEHOLDER_MARKS.iter().any(|w| lower.contains(w)) {
        return true;
    }
    if value.starts_with(['$', '%', '<', '{', '[', '(']) {
        return true;
    }
    let chars: Vec<char> = value.chars().collect();
    let n = chars.len();
    // One character repeated over a good part of it.
    let mut run = 1usize;
    let mut longest = usize::from(n > 0);
    for w in chars.windows(2) {
        run = if w[0] == w[1] { run + 1 } else { 1 };
        longest = longest.max(run);
    }
    if longest >= 5 && longest * 4 >= n {
        return true;
    }
    let mut distinct = chars.clone();
    distinct.sort_unstable();
    distinct.dedup();
    if n >= 8 && distinct.len() < 6 {
        return true;
    }
    if has_sequence(&lower, 6) {
        return true;
    }
    let words = words(value);
    !words.is_empty()
        && words.iter().all(|w| {
            FILLER_WORDS.contains(&w.as_str())
                || (w.bytes().all(|b| b.is_ascii_digit()) && (w.len() <= 4 || has_sequence(w, 4)))
        })
}

/// A run of `len` characters each one after the previous (`123456`,
/// `abcdef`) or before it (`987654`).
fn has_sequence(s: &str, len: usize) -> bool {
    let b = s.as_bytes();
    let mut up = 1;
    let mut down = 1;
    for w in b.windows(2) {
        let alnum = w[0].is_ascii_alphanumeric() && w[1].is_ascii_alphanumeric();
        up = if alnum && w[1] == w[0].wrapping_add(1) {
            up + 1
        } else {
            1
        };
        down = if alnum && w[1].wrapping_add(1) == w[0] {
            down + 1
        } else {
            1
        };
        if up >= len || down >= len {
            return true;
        }
    }
    false
}

/// The words of an identifier or value, lower-cased: split on every
/// non-alphanumeric character, where lower case turns to upper case
/// (`apiKey`), where an acronym ends (`APIKey`: `api`, `key`) and between
/// letters and digits (`fts3`: `fts`, `3`).
pub fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = s.chars().collect();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        // The character before, as written (the word is lower-cased).
        let prev = i
            .checked_sub(1)
            .map(|j| chars[j])
            .filter(|_| !cur.is_empty());
        if let Some(p) = prev {
            let next = chars.get(i + 1).copied();
            let boundary = (p.is_lowercase() && c.is_uppercase())
                || (p.is_alphabetic() != c.is_alphabetic())
                || (p.is_uppercase() && c.is_uppercase() && next.is_some_and(|n| n.is_lowercase()));
            if boundary {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Does a word look random (a token's body) rather than written (a name)?
/// At least 10 characters with the character kind (upper, lower, digit)
/// changing at a third of its places or more (`TokenStream` changes at 3
/// of 11, a random base62 string at about two thirds).
fn looks_random(word: &str) -> bool {
    let kind = |c: char| {
        if c.is_ascii_digit() {
            0
        } else if c.is_uppercase() {
            1
        } else {
            2
        }
    };
    let chars: Vec<char> = word.chars().collect();
    if chars.len() < 10 {
        return false;
    }
    let changes = chars
        .windows(2)
        .filter(|w| kind(w[0]) != kind(w[1]))
        .count();
    changes * 3 >= chars.len()
}

/// Is an unquoted value code rather than a literal: a path of identifiers
/// (`settings.DB_PASSWORD`, `proc_macro2::TokenStream`, `crate::__u32`,
/// `self.token`), a snake- or constant-case name (`token_value2`,
/// `DEFAULT_PASSWORD`) or a CamelCase type name (`AccessTokenProvider2`)?
/// A part that looks random (`dop_v1_3f9a…`) makes it a literal.
pub fn is_code(v: &str) -> bool {
    let v = v.trim_end_matches(['?', '!', ')', '(']);
    let ident = |s: &str| {
        !s.is_empty()
            && s.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let segments: Vec<&str> = v
        .trim_start_matches("::")
        .split("::")
        .flat_map(|s| s.split("->"))
        .flat_map(|s| s.split('.'))
        .collect();
    if !segments.iter().all(|s| ident(s)) {
        return false;
    }
    if segments.iter().flat_map(|s| s.split('_')).any(looks_random) {
        return false;
    }
    if segments.len() > 1 {
        return true;
    }
    let s = segments[0];
    if s.contains('_') {
        let upper = s
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        let lower = s
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        return upper || lower;
    }
    // CamelCase: two or more humps, digits only at the end.
    let body = s.trim_end_matches(|c: char| c.is_ascii_digit());
    let humps = s.chars().filter(|c| c.is_ascii_uppercase()).count();
    body.chars().all(|c| c.is_ascii_alphabetic())
        && s.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && humps >= 2
        && !s
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// Files in languages whose string literals are always quoted: there an
/// unquoted value is code (a type, a variable, an expression).
const CODE_EXTENSIONS: &[&str] = &[
    "rs", "ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs", "go", "java", "kt", "kts", "scala",
    "swift", "cs", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "m", "mm", "py", "pyi", "rb", "php",
    "dart", "zig", "vala",
];

/// Is an unquoted value, in a source file of a language whose strings
/// are quoted, in the place of a type or an expression: an identifier or a
/// path of them (`PULONG64`, `MI_UserCredentials_0`, `&p256::KEY_OPS`,
/// `super::Foundation::`, `:Aes128Gcm` after a `::`) outside any string
/// literal and any comment, followed by what follows a type or an
/// argument (`,` `;` `)` `>` `{` `}` `=` `]`; a path also by the end of the
/// line)? `before`/`after`: the line around the value. A value inside a
/// string (`"…;Password=…;"`) or a comment (`// password: …`) is not:
/// there it is text, and may well be a secret.
pub fn in_code_position(value: &str, before: &str, after: &str, path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let code_file = name
        .rsplit_once('.')
        .is_some_and(|(_, ext)| CODE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()));
    if !code_file || in_text(before) {
        return false;
    }
    let v = value
        .trim_start_matches(['&', '*', ':'])
        .trim_end_matches([':', '?', '!']);
    let path_like = v.contains("::") || value.starts_with(':') || value.ends_with("::");
    let follows = after.trim_start();
    let closes = follows.starts_with([',', ';', ')', '>', '{', '}', '=', ']']);
    if !(closes || (path_like && follows.is_empty()) || value.ends_with("::")) {
        return false;
    }
    let segments: Vec<&str> = v.split("::").flat_map(|s| s.split('.')).collect();
    let idents = !v.is_empty()
        && segments.iter().all(|s| {
            s.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
    // A lone name must read as words (`X509CertificateTemplateFlag`, not
    // `Xk29fLq0Zr8T`): the line may be inside a string or comment begun on
    // an earlier line, where a random one is a secret.
    idents && (path_like || segments.len() > 1 || value.starts_with(['&', '*']) || wordy(v))
}

/// Are most letters of `name` in words of three letters or more
/// (`MI_UserCredentials_0`, `PULONG64`), as in a name written by a person?
fn wordy(name: &str) -> bool {
    let ws = words(name);
    let alpha = |w: &&String| w.chars().all(char::is_alphabetic);
    let letters: usize = ws.iter().filter(alpha).map(|w| w.chars().count()).sum();
    let in_words: usize = ws
        .iter()
        .filter(alpha)
        .map(|w| w.chars().count())
        .filter(|&n| n >= 3)
        .sum();
    letters > 0 && in_words * 10 >= letters * 7
}

/// Does the code `before` end inside a string literal or a comment?
/// Single quotes count as string quotes too (Python, JS, PHP): where they
/// are a Rust lifetime or char, the value counts as text and is reported.
fn in_text(before: &str) -> bool {
    let trimmed = before.trim_start();
    if trimmed.starts_with("*") || (trimmed.starts_with('#') && !trimmed.starts_with("#[")) {
        return true;
    }
    let b = before.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        match (quote, b[i]) {
            (Some(_), b'\\') => i += 1,
            (Some(q), c) if c == q => quote = None,
            (None, b'"' | b'`' | b'\'') => quote = Some(b[i]),
            (None, b'/') if matches!(b.get(i + 1), Some(b'/' | b'*')) => return true,
            _ => {}
        }
        i += 1;
    }
    quote.is_some()
}

pub fn is_uuid(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// A URL or a file path (`/run/secrets/db`, `./key.pem`) — not base64
/// that happens to start with `/`.
fn is_path(v: &str) -> bool {
    ["http://", "https://", "file:", "./", "../", "~/"]
        .iter()
        .any(|p| v.starts_with(p))
        || (v.starts_with('/') && v[1..].contains('/'))
}

fn is_digest(v: &str) -> bool {
    v.split_once(':').is_some_and(|(p, _)| {
        matches!(
            p.to_ascii_lowercase().as_str(),
            "sha1" | "sha256" | "sha384" | "sha512" | "md5" | "file" | "env"
        )
    })
}

/// Letters and symbols only, unless long and very random.
fn letters_only(v: &str) -> bool {
    let digits = v.chars().any(|c| c.is_ascii_digit());
    let random = v.chars().count() >= 24 && shannon_entropy(v) >= 4.2;
    !digits && !random
}

/// No mix of upper- and lower-case letters.
fn one_case(v: &str) -> bool {
    !(v.chars().any(|c| c.is_ascii_uppercase()) && v.chars().any(|c| c.is_ascii_lowercase()))
}

/// A version or a package coordinate: `1.2.3`, `jjwt-jackson-0.11.2`,
/// `v2.0.1-beta`.
fn is_version(v: &str) -> bool {
    let b = v.as_bytes();
    // Find `<digits>.<digits>` starting at a boundary.
    (0..b.len()).any(|i| {
        let at_boundary = i == 0 || matches!(b[i - 1], b'-' | b'_' | b'.' | b'@' | b':' | b'v');
        if !at_boundary || !b[i].is_ascii_digit() {
            return false;
        }
        let mut j = i;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j + 1 >= b.len() || b[j] != b'.' || !b[j + 1].is_ascii_digit() {
            return false;
        }
        // The rest is more numbers and at most a short suffix.
        let rest = &v[j..];
        rest.len() <= 24
            && rest
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
    })
}

/// Words that make a name hold a secret (`SERVICE_ACCOUNT_TOKEN`,
/// `dbPassword`, `client_secret`).
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwords",
    "passwd",
    "pwd",
    "secret",
    "secrets",
    "token",
    "tokens",
    "credential",
    "credentials",
    "apikey",
    "apikeys",
    "accesskey",
    "authkey",
    "privatekey",
    "secretkey",
];

/// Pairs of words that do the same (`api_key`, `AccessKey`).
const SECRET_PAIRS: &[(&str, &str)] = &[
    ("api", "key"),
    ("access", "key"),
    ("auth", "key"),
    ("private", "key"),
    ("secret", "key"),
];

/// What a glued word (`authtoken`, `dbpassword`) may not start with: these
/// name something that is not a secret (`jsonwebtoken` is a library).
const GLUED_NOT_SECRET: &[&str] = &[
    "jsonweb",
    "csrf",
    "xsrf",
    "public",
    "pub",
    "next",
    "page",
    "sync",
    "cancel",
    "cancellation",
    "continuation",
    "lexer",
    "parse",
    "parser",
    "sub",
    "word",
    "punct",
    "stream",
    "cursor",
];

/// Words that, after the last secret word, name something else about it
/// (`password_hash`, `token_count`, `secretName`, `TokenStream`).
const NOT_SECRET_HEADS: &[&str] = &[
    "hash",
    "hashed",
    "hashes",
    "sha",
    "md",
    "digest",
    "checksum",
    "integrity",
    "fingerprint",
    "url",
    "uri",
    "urls",
    "endpoint",
    "path",
    "file",
    "filename",
    "dir",
    "directory",
    "name",
    "names",
    "type",
    "types",
    "kind",
    "length",
    "len",
    "count",
    "size",
    "limit",
    "max",
    "min",
    "prefix",
    "suffix",
    "header",
    "headers",
    "field",
    "fields",
    "param",
    "params",
    "policy",
    "expiry",
    "expires",
    "expiration",
    "expire",
    "expired",
    "ttl",
    "timeout",
    "format",
    "mode",
    "regex",
    "pattern",
    "label",
    "title",
    "hint",
    "placeholder",
    "env",
    "var",
    "variable",
    "id",
    "ids",
    "manager",
    "store",
    "provider",
    "stream",
    "streams",
    "tokenizer",
    "validator",
    "strength",
    "rule",
    "rules",
    "column",
    "version",
    "enabled",
    "enable",
    "disabled",
    "required",
    "input",
    "prompt",
    "message",
    "error",
    "description",
    "doc",
    "docs",
    "help",
    "text",
    "event",
    "events",
    "generator",
    "factory",
    "builder",
    "handler",
    "callback",
    "request",
    "response",
    "class",
    "index",
    "idx",
    "ref",
    "source",
    "location",
    "audience",
    "issuer",
    "scope",
    "scopes",
    "lifetime",
    "age",
    "reset",
    "tree",
    "trees",
    "set",
    "list",
    "map",
    "iter",
    "iterator",
    "parser",
    "lexer",
    "span",
    "spans",
];

/// Words that, anywhere in a name, say its value is not a real secret
/// (`publicToken`, `csrf_token`, `nextPageToken`, `fakePassword`).
const NOT_SECRET_MODIFIERS: &[&str] = &[
    "public",
    "pub",
    "csrf",
    "xsrf",
    "next",
    "page",
    "continuation",
    "pagination",
    "cursor",
    "sync",
    "cancellation",
    "resume",
    "fake",
    "dummy",
    "mock",
    "example",
    "sample",
    "invalid",
    "wrong",
    "bad",
    "non",
    "placeholder",
    "nonce",
    "test",
];

/// Words that end a name's head: what follows says what the thing is
/// for or about (`keyVaultToStoreSecrets` is a vault, `pathToPrivateKey`
/// a path, `tokenForCi` still a token). Not `in`, `on`, `by`: they make
/// verbs (`SIGN_IN_TOKEN` is a token).
const PREPOSITIONS: &[&str] = &["to", "for", "from", "of", "with", "into", "via", "about"];

/// Does the name `key` say its value is a secret? True when one of the
/// words of its head (the words before a preposition) is a secret word (or
/// a known pair of words, or a word glued from another word and a secret
/// word), no word of the head after the last such word names something
/// else about it, and no word of the name says the value is not real.
pub fn name_says_secret(key: &str) -> bool {
    // The name proper: a key's last dotted part carries the meaning
    // (`spring.datasource.password`), but dots join words too.
    let all = words(key);
    let head = all
        .iter()
        .skip(1)
        .position(|w| PREPOSITIONS.contains(&w.as_str()))
        .map_or(all.len(), |p| p + 1);
    let words = &all[..head];
    let mut last = None;
    for (i, w) in words.iter().enumerate() {
        let glued = SECRET_WORDS.iter().any(|s| {
            w.len() > s.len()
                && w.ends_with(s)
                && !GLUED_NOT_SECRET.contains(&&w[..w.len() - s.len()])
        });
        let pair = i > 0
            && SECRET_PAIRS
                .iter()
                .any(|(a, b)| words[i - 1] == *a && w == b);
        if SECRET_WORDS.contains(&w.as_str()) || glued || pair {
            last = Some(i);
        }
    }
    let Some(last) = last else {
        return false;
    };
    if words[last + 1..]
        .iter()
        .any(|w| NOT_SECRET_HEADS.contains(&w.as_str()))
    {
        return false;
    }
    !all.iter()
        .any(|w| NOT_SECRET_MODIFIERS.contains(&w.as_str()))
}

/// Passwords in URLs that are local-development defaults or the stock
/// examples of documentation (RFC 7617's Aladdin says "open sesame"),
/// not leaks.
const DEV_URL_PASSWORDS: &[&str] = &[
    "password",
    "pass",
    "passwd",
    "secret",
    "postgres",
    "mysql",
    "root",
    "admin",
    "guest",
    "user",
    "test",
    "example",
    "changeme",
    "redis",
    "mongo",
    "rabbitmq",
    "dev",
    "local",
    "opensesame",
    "open%20sesame",
];

/// Is the password of a URL worth reporting? Not a local default, not a
/// placeholder, and not for a host of the domains reserved for examples
/// (RFC 2606: `example.com`, `*.example`, …).
pub fn url_password_ok(user: &str, pass: &str, host: &str) -> bool {
    let lower = pass.to_ascii_lowercase();
    if pass == user || DEV_URL_PASSWORDS.contains(&lower.as_str()) {
        return false;
    }
    let host = host
        .split([':', '/'])
        .next()
        .unwrap_or("")
        .trim_end_matches('.')
        .to_ascii_lowercase();
    let example = ["example.com", "example.org", "example.net"]
        .iter()
        .any(|d| host == *d || host.ends_with(&format!(".{d}")))
        || [".example", ".test", ".invalid"]
            .iter()
            .any(|t| host.ends_with(t));
    if example {
        return false;
    }
    if pass.starts_with('$') || pass.starts_with('%') || pass.contains("{{") {
        return false;
    }
    !is_placeholder(pass)
}

/// Does key material follow a private key's header (`rest`: the text after
/// it on its line; `next`: the following lines)? The body may come after
/// armor headers (`Version: GnuPG`) and the blank line gpg writes, or after
/// `\n` inside a string.
pub fn key_body_follows(rest: &str, next: &[&str]) -> bool {
    let base64ish = |s: &str| {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '='))
            .count()
            >= 32
    };
    let header = |s: &str| {
        [
            "Proc-Type:",
            "DEK-Info:",
            "Version:",
            "Comment:",
            "Hash:",
            "Charset:",
        ]
        .iter()
        .any(|h| s.starts_with(h))
    };
    // In a string: `-----BEGIN … KEY-----\nMIIE…` (headers and blank
    // lines as `\n` too).
    for piece in rest.split("\\n").skip(1) {
        let p = piece.trim().trim_start_matches("\\r");
        if p.is_empty() || header(p) {
            continue;
        }
        return base64ish(p);
    }
    if base64ish(rest.trim()) || header(rest.trim()) {
        return true;
    }
    for line in next.iter().take(8) {
        let l = line.trim().trim_start_matches(['"', '\'']);
        if l.is_empty() || header(l) {
            continue;
        }
        return base64ish(l);
    }
    false
}

/// Does `token` (`header.payload.signature`) decode like a JSON Web Token
/// that is not the well-known sample of the JWT documentation?
pub fn jwt_ok(token: &str) -> bool {
    use base64::Engine;
    let mut parts = token.split('.');
    let (Some(head), Some(payload)) = (parts.next(), parts.next()) else {
        return false;
    };
    let decode = |s: &str| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(s.trim_end_matches('='))
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
    };
    let Some(head) = decode(head) else {
        return false;
    };
    let head_ok = head.trim_start().starts_with('{')
        && ["\"alg\"", "\"typ\"", "\"kid\"", "\"enc\""]
            .iter()
            .any(|k| head.contains(k));
    let Some(body) = decode(payload) else {
        return false;
    };
    head_ok
        && body.trim_start().starts_with('{')
        && !body.contains("\"John Doe\"")
        && !body.contains("\"1234567890\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_of_identifiers() {
        assert_eq!(
            words("SERVICE_ACCOUNT_TOKEN"),
            ["service", "account", "token"]
        );
        assert_eq!(words("APIKey"), ["api", "key"]);
        assert_eq!(words("credentialId"), ["credential", "id"]);
        assert_eq!(words("TokenStream2"), ["token", "stream", "2"]);
        assert_eq!(words("fts3-tokenizer"), ["fts", "3", "tokenizer"]);
    }

    #[test]
    fn names() {
        for secret in [
            "SERVICE_ACCOUNT_TOKEN",
            "SHOPIFY_SHARED_SECRET",
            "HASHICORP_TOKEN",
            "TYPEFORM_TOKEN",
            "SETTLEMINT_TOKEN",
            "jfrog_identity_token",
            "dbPassword",
            "authtoken",
            "api_key",
            "ApiKey",
            "client_secret",
            "token_store_password",
            "spring.datasource.password",
            "tokenForCi",
            "GITHUB_TOKEN_FOR_DEPLOY",
            "password_of_admin",
            "SIGN_IN_TOKEN",
        ] {
            assert!(name_says_secret(secret), "{secret}");
        }
        for not in [
            "TokenStream",
            "TokenStream2",
            "credentialId",
            "password_hash",
            "token_count",
            "secretName",
            "io.jsonwebtoken",
            "csrf-token",
            "publicToken",
            "nonMatchingToken",
            "SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER",
            "tokenizer",
            "token_type",
            "keyVaultToStoreSecrets",
            "PATH_TO_PRIVATE_KEY",
            "key_for_password_manager",
        ] {
            assert!(!name_says_secret(not), "{not}");
        }
    }

    #[test]
    fn placeholders_are_judged_whole() {
        for p in [
            "xxxxxxxxxxxx",
            "<your-key>",
            "${API_KEY}",
            "changeme123",
            "aaaaaaaaaaaa",
            "test-key-12345678",
            "dummy-password-123",
            "my_api_key_2024",
            "AKIAIOSFODNN7EXAMPLE",
            "abcdef123456",
        ] {
            assert!(is_placeholder(p), "{p}");
        }
        for real in [
            "q8Zr4Tm1Lx9Vb2Nc",
            "FLWSECK_TEST-9f3a6c1d2e4b5a7c8d9e0f1a2b3c4d5e-X",
            "test_9f3K2mQ7xLp4Rz8",
        ] {
            assert!(!is_placeholder(real), "{real}");
        }
    }

    #[test]
    fn code_is_not_a_value() {
        for code in [
            "proc_macro2::TokenStream",
            "crate::__u32",
            "ffi::SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER",
            "settings.DB_PASSWORD",
            "token_value2",
            "DEFAULT_PASSWORD",
            "AccessTokenProvider2",
            "var.db_password",
        ] {
            assert!(is_code(code), "{code}");
        }
        for literal in [
            "dop_v1_3f9a6c1d2e4b5a7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c",
            "Summer2024Rocks",
            "q8Zr4Tm1Lx9Vb2Nc",
            "dp.pt.q8Zr4Tm1Lx9Vb2Ncq8Zr4Tm1Lx9Vb2Nc",
        ] {
            assert!(!is_code(literal), "{literal}");
        }
    }

    #[test]
    fn types_and_arguments_in_code_are_not_values() {
        for (v, before, after, path) in [
            ("PULONG64", "    Token: ", ",", "src/um/iphlpapi.rs"),
            (
                "MI_UserCredentials_0",
                "    pub credentials: ",
                ",",
                "src/wmi.rs",
            ),
            (
                "X509CertificateTemplatePrivateKeyFlag",
                "pub const PrivateKeyExportable: ",
                " = 16i32;",
                "src/certs.rs",
            ),
            (
                "&p256::PRIVATE_KEY_OPS",
                "    private_key_ops: ",
                ",",
                "src/signing.rs",
            ),
            (
                ":Aes128Gcm",
                "16 => ConnectionTrafficSecrets:",
                " { key, iv },",
                "src/tls12.rs",
            ),
            (
                "super::super::Foundation::",
                "fn f(clienttoken : ",
                " HANDLE)",
                "src/mod.rs",
            ),
            ("authTokenValue", "  login(password: ", ")", "web/app.ts"),
        ] {
            assert!(
                in_code_position(v, before, after, path),
                "{before}{v}{after}"
            );
        }
        for (v, before, after, path) in [
            // Not a language whose strings are quoted.
            ("Xk29fLq0Zr8Tq4W", "password: ", "", "config.yaml"),
            ("Xk29fLq0Zr8Tq4W", "DB_PASSWORD=", "", ".env"),
            // Inside a string literal.
            (
                "Xk29fLq0Zr8Tq4W",
                "let c = \"Server=db;Password=",
                ";\";",
                "src/db.rs",
            ),
            (
                "Xk29fLq0Zr8Tq4W",
                "let c = \"a \\\" b;Password=",
                ";\";",
                "src/db.rs",
            ),
            ("Xk29fLq0Zr8Tq4W", "const u = `token=", "`;", "src/a.ts"),
            (
                "Xk29fLq0Zr8Tq4W",
                "c = 'Server=db;Password=",
                ";'",
                "app/db.py",
            ),
            // Followed by more words: prose, not a type.
            (
                "Xk29fLq0Zr8Tq4W",
                "let p = 1; // the password: ",
                ",",
                "src/lib.rs",
            ),
            (
                "Xk29fLq0Zr8Tq4W",
                "    # password: ",
                ",",
                "app/settings.py",
            ),
            ("Xk29fLq0Zr8Tq4W", "let token: ", " for", "src/lib.rs"),
            ("Xk29fLq0Zr8Tq4W", "let token: ", "", "src/lib.rs"),
            // A random name: maybe in a string begun on an earlier line.
            ("Xk29fLq0Zr8Tq4W", "password: ", ",", "app/settings.py"),
            ("aB3xYzQ9mNpL2kR8sT1v", "    token: ", ",", "src/lib.rs"),
            // Not an identifier.
            ("Xk29f+Lq0Zr8/Tq4W==", "token: ", ",", "src/lib.rs"),
        ] {
            assert!(
                !in_code_position(v, before, after, path),
                "{before}{v}{after} {path}"
            );
        }
    }

    #[test]
    fn versions() {
        assert!(is_version("jjwt-jackson-0.11.2"));
        assert!(is_version("1.2.3"));
        assert!(is_version("v2.0.1-beta"));
        assert!(!is_version("q8Zr4Tm1Lx9Vb2Nc"));
    }
}
