//! Code rather than a literal: a path of identifiers, a snake-, constant-
//! or CamelCase name, and a value in the place of a type or an expression
//! in a source file.

use super::words;

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
