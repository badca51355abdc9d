//! The parts of a mutated-expectation canary shared by Rust
//! (`mutate.rs`), Python, Go, Java and JavaScript (`mutate_*.rs`): what an edit and an
//! eligible assertion are, how a statement's spans are read, and how a
//! literal is changed so that the assertion must fail.

use super::lex::{is_ident_byte, Source};

/// The language whose literals are changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lang {
    Rust,
    Python,
    Java,
    Js,
}

/// A replacement of `start..end` of the text (empty for an insertion).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Edit {
    pub start: usize,
    pub end: usize,
    pub with: String,
}

/// `with` inserted at `at`.
pub(super) fn insert(at: usize, with: &str) -> Edit {
    Edit {
        start: at,
        end: at,
        with: with.to_string(),
    }
}

/// One eligible assertion and how to make it fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Candidate {
    pub line: u32,
    pub edits: Vec<Edit>,
    pub how: String,
}

/// A picked test and its eligible assertions, in order.
pub(super) struct Eligible {
    pub test: String,
    pub candidates: Vec<Candidate>,
}

// ---------------------------------------------------------------------------
// Reading spans, shared with Python.

/// Whether the byte at `i` is code or inside a literal (not blank, not in a
/// comment).
pub(super) fn significant(src: &Source, i: usize) -> bool {
    let Some(&t) = src.text.as_bytes().get(i) else {
        return false;
    };
    !t.is_ascii_whitespace()
        && (!src.at(i).is_ascii_whitespace() || src.string_at(i).is_some() || src.inside_string(i))
}

/// `a..b` without the blanks and comments around it; None when nothing is
/// left.
pub(super) fn trimmed(src: &Source, a: usize, b: usize) -> Option<(usize, usize)> {
    let b = b.min(src.len());
    let start = (a..b).find(|&i| significant(src, i))?;
    let last = (start..b).rev().find(|&i| significant(src, i))?;
    Some((start, last + 1))
}

/// The first offset in `a..b` where `byte` is code outside any bracket.
pub(super) fn top_level(src: &Source, a: usize, b: usize, byte: u8) -> Option<usize> {
    let mut i = a;
    while i < b {
        match src.at(i) {
            c if c == byte => return Some(i),
            b'(' | b'[' | b'{' => i = src.close(i) + 1,
            _ => i += 1,
        }
    }
    None
}

/// The comma-separated arguments of the call whose `(` is at `open`, as
/// spans (unlike [`Source::args`], a last one that is only a literal is
/// kept).
pub(super) fn arguments(src: &Source, open: usize) -> Vec<(usize, usize)> {
    let close = src.close(open);
    let mut out = Vec::new();
    let mut from = open + 1;
    while let Some(comma) = top_level(src, from, close, b',') {
        out.push((from, comma));
        from = comma + 1;
    }
    if trimmed(src, from, close).is_some() {
        out.push((from, close));
    }
    out
}

/// Where the word `word` first occurs as code in `a..b`, at any depth.
pub(super) fn first_word(src: &Source, a: usize, b: usize, word: &str) -> Option<usize> {
    let mut i = a;
    while i < b {
        let starts = i == 0 || !is_ident_byte(src.at(i - 1));
        match src.word(i) {
            Some((w, e)) if starts => {
                if w == word {
                    return Some(i);
                }
                i = e;
            }
            _ => i += 1,
        }
    }
    None
}

/// What a statement found at an offset is: its mutation (None when it is
/// an assertion that cannot be mutated) and where it ends; None when no
/// assertion starts there.
pub(super) type Found = Option<(Option<Candidate>, usize)>;

/// The assertion statements directly in the body `start..end` of a brace
/// language (Java, JavaScript), before any `return` in it: `found(at,
/// stop)` reads the statement a word at `at` starts. Nested blocks,
/// parentheses and brackets are stepped over, so only what certainly runs
/// is seen. With `line_ends`, a line's end also ends a statement unless
/// what came before asks for more (JavaScript's automatic semicolons).
pub(super) fn statements(
    src: &Source,
    (start, end): (usize, usize),
    line_ends: bool,
    mut found: impl FnMut(usize, usize) -> Found,
) -> Vec<Candidate> {
    let stop = first_word(src, start, end, "return").unwrap_or(end);
    let raw = src.text.as_bytes();
    let mut out = Vec::new();
    let mut statement = true;
    let mut i = start;
    while i < stop {
        let c = src.at(i);
        if c.is_ascii_whitespace() {
            if line_ends && raw.get(i) == Some(&b'\n') {
                let prev = src.prev_sig(i).filter(|&p| p >= start).map(|p| src.at(p));
                statement |= !matches!(
                    prev,
                    Some(b'=' | b'+' | b'-' | b'*' | b'/' | b'%' | b'&' | b'|' | b'^' | b'!')
                        | Some(b'<' | b'>' | b'?' | b':' | b',' | b'.')
                );
            }
            i += 1;
            continue;
        }
        (i, statement) = match c {
            b'{' => (src.close(i) + 1, true),
            b'}' | b';' => (i + 1, true),
            b'(' | b'[' => (src.close(i) + 1, false),
            _ => match src.word(i) {
                Some((_, e)) if statement && !(i > 0 && src.at(i - 1) == b'.') => {
                    match found(i, stop) {
                        Some((candidate, after)) => {
                            out.extend(candidate);
                            (after, true)
                        }
                        None => (e, false),
                    }
                }
                Some((_, e)) => (e, false),
                None => (i + 1, false),
            },
        };
    }
    out
}

// ---------------------------------------------------------------------------
// Literals.

/// The operand `a..b` changed to a different literal of the same type, when
/// it is a literal (`&` before it in Rust, `-` before a number): the edit
/// and what it did.
pub(super) fn literal_edit(
    src: &Source,
    lang: Lang,
    (a, b): (usize, usize),
) -> Option<(Edit, String)> {
    let (mut s, e) = trimmed(src, a, b)?;
    if lang == Lang::Rust && src.text.as_bytes()[s] == b'&' {
        s = trimmed(src, s + 1, e)?.0;
    }
    let old = src.slice(s, e);
    let (from, new) = if src.string_at(s) == Some((s, e)) {
        (s, string_change(lang, old)?)
    } else if let Some(w) = word_change(lang, old) {
        (s, w.to_string())
    } else if let Some(rest) = old.strip_prefix('-') {
        let digits = e - rest.trim_start().len();
        (digits, number_change(lang, src.slice(digits, e))?)
    } else {
        (s, number_change(lang, old)?)
    };
    let shown = format!("{}{new}", src.slice(s, from));
    let how = format!(
        "expected `{}` made `{}`",
        super::short(old),
        super::short(&shown)
    );
    let edit = Edit {
        start: from,
        end: e,
        with: new,
    };
    Some((edit, how))
}

/// A string (or Rust char) literal changed: `"abc"` → `"abc~"`, `'a'` →
/// `'b'`. None for raw, byte, prefixed and triple-quoted strings and
/// escaped chars.
fn string_change(lang: Lang, lit: &str) -> Option<String> {
    let q = *lit.as_bytes().first()?;
    let closed = lit.len() >= 2 && lit.ends_with(q as char) && {
        let body = &lit.as_bytes()[..lit.len() - 1];
        body.iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 0
    };
    if !closed {
        return None;
    }
    let inner = &lit[1..lit.len() - 1];
    match (lang, q) {
        (Lang::Rust | Lang::Java, b'"') if !lit.starts_with("\"\"\"") => {
            Some(format!("\"{inner}~\""))
        }
        (Lang::Rust | Lang::Java, b'\'') => {
            let mut chars = inner.chars();
            let c = chars
                .next()
                .filter(|&c| c != '\\' && chars.next().is_none())?;
            Some(format!("'{}'", other_letter(c)))
        }
        (Lang::Js, b'"' | b'\'') => Some(format!("{}{inner}~{}", q as char, q as char)),
        (Lang::Python, b'"' | b'\'') if !lit.starts_with(&(q as char).to_string().repeat(3)) => {
            Some(format!("{}{inner}~{}", q as char, q as char))
        }
        _ => None,
    }
}

/// The next ASCII letter (`z` → `a`), or `a` for anything else.
fn other_letter(c: char) -> char {
    match c {
        'z' => 'a',
        'Z' => 'A',
        c if c.is_ascii_alphabetic() => char::from(c as u8 + 1),
        _ => 'a',
    }
}

fn word_change(lang: Lang, word: &str) -> Option<&'static str> {
    match (lang, word) {
        (Lang::Rust | Lang::Java | Lang::Js, "true") => Some("false"),
        (Lang::Rust | Lang::Java | Lang::Js, "false") => Some("true"),
        (Lang::Js, "null" | "undefined") => Some("0"),
        (Lang::Python, "True") => Some("False"),
        (Lang::Python, "False") => Some("True"),
        (Lang::Python, "None") => Some("0"),
        _ => None,
    }
}

/// Rust integer suffixes kept on a changed integer.
const INT_SUFFIXES: &[&str] = &[
    "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
];

/// Floats whose integer part is below this change exactly in `f32` too.
const FLOAT_LIMIT: u64 = 1 << 22;

/// A decimal number's magnitude changed: an integer `n` to `n - 1` (0 to
/// 1; as the magnitude of a negative number, so it stays in range), a float
/// `1.5` to `2.5`. None for hex, octal, binary, exponents, float suffixes
/// and anything that is not a number.
fn number_change(lang: Lang, lit: &str) -> Option<String> {
    if !lit.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let radix =
        lit.len() > 1 && lit.as_bytes()[0] == b'0' && b"xXoObB".contains(&lit.as_bytes()[1]);
    let split = lit
        .find(|c: char| !(c.is_ascii_digit() || c == '_' || c == '.'))
        .unwrap_or(lit.len());
    let (body, suffix) = lit.split_at(split);
    let suffix_ok = suffix.is_empty()
        || (lang == Lang::Rust && INT_SUFFIXES.contains(&suffix))
        || (lang == Lang::Java && matches!(suffix, "L" | "l") && !body.contains('.'));
    if radix || !suffix_ok {
        return None;
    }
    let value = |digits: &str| -> Option<u128> {
        let d: String = digits.chars().filter(|&c| c != '_').collect();
        (!d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()))
            .then(|| d.parse().ok())
            .flatten()
    };
    match body.split_once('.') {
        Some((int, frac)) if suffix.is_empty() => {
            let n = value(int).filter(|&n| n < u128::from(FLOAT_LIMIT))?;
            let frac_ok = frac.bytes().all(|c| c.is_ascii_digit() || c == b'_');
            frac_ok.then(|| format!("{}.{frac}", n + 1))
        }
        Some(_) => None,
        None => {
            let n = value(body)?;
            Some(format!("{}{suffix}", if n == 0 { 1 } else { n - 1 }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_strings_and_words() {
        for (lang, lit, want) in [
            (Lang::Rust, "10", Some("9")),
            (Lang::Rust, "5u8", Some("4u8")),
            (Lang::Rust, "5f64", None),
            (Lang::Rust, "5e2", None),
            (Lang::Rust, "0b1", None),
            (Lang::Rust, "1.", Some("2.")),
            (Lang::Rust, "1..2", None),
            (Lang::Rust, "8388607.5", None),
            (Lang::Python, "5u8", None),
            (Lang::Python, "3j", None),
            (Lang::Python, "0o7", None),
            (Lang::Python, "1_0.0_1", Some("11.0_1")),
            (Lang::Java, "5L", Some("4L")),
            (Lang::Java, "1.5", Some("2.5")),
            (Lang::Java, "1.5f", None),
            (Lang::Java, "1.5L", None),
            (Lang::Java, "5u8", None),
        ] {
            assert_eq!(number_change(lang, lit).as_deref(), want, "{lit}");
        }
        for (lang, lit, want) in [
            (Lang::Rust, "\"a\"", Some("\"a~\"")),
            (Lang::Rust, "\"a\\\"", None),
            (Lang::Rust, "'é'", Some("'a'")),
            (Lang::Python, "'a'", Some("'a~'")),
            (Lang::Python, "''", Some("'~'")),
            (Lang::Python, "'''a'''", None),
            (Lang::Python, "\"\"\"a\"\"\"", None),
            (Lang::Java, "\"a\"", Some("\"a~\"")),
            (Lang::Java, "'a'", Some("'b'")),
            (Lang::Java, "'\\n'", None),
        ] {
            assert_eq!(string_change(lang, lit).as_deref(), want, "{lit}");
        }
        assert_eq!(word_change(Lang::Python, "None"), Some("0"));
        assert_eq!(word_change(Lang::Rust, "None"), None);
    }
}
