//! Whether a name says "secret", read as the whole words of the
//! identifier (`SERVICE_ACCOUNT_TOKEN` is a token, `TokenStream` and
//! `credentialId` are not).

use super::words;

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
