//! The checks of a rule that looks past its regex: a URL password that is
//! not a development default, a private key with a body, a JWT that decodes
//! and is not the documentation's sample.

use super::placeholder::is_placeholder;

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
