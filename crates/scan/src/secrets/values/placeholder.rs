//! Placeholders: template and reference syntax, example words, repeated
//! characters, sequences, and values made of filler words and small numbers
//! (`test-key-12345678`).

use super::words;

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
