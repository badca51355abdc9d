//! What a matched value is, judged as a whole: a placeholder (`xxxx`,
//! `<your-key>`, `${VAR}`, EXAMPLE, `test-key-12345678`), code
//! (`settings.KEY`, `proc_macro2::TokenStream`, `CONSTANT_NAME`), a UUID, a
//! path, a digest, a version — and whether a name says "secret", read as
//! the whole words of the identifier (`SERVICE_ACCOUNT_TOKEN` is a token,
//! `TokenStream` and `credentialId` are not). Pure functions of text.

use std::collections::HashMap;

use rascal_core::config::secrets::ValueFilter;

mod checks;
mod code;
mod names;
mod placeholder;
#[cfg(test)]
mod tests;

pub use checks::{jwt_ok, key_body_follows, url_password_ok};
pub use code::{in_code_position, is_code};
pub use names::name_says_secret;
pub use placeholder::is_placeholder;

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
