//! The forged-results rule: printed text shaped like a test runner's result
//! lines.

use super::stream::lit_value;
use super::{Hits, RULE_FORGED};

/// The spans of format placeholders in `s`: `{…}` (not `{{`) and printf's
/// `%…x`.
pub(super) fn placeholders(s: &str) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' if b.get(i + 1) == Some(&b'{') => i += 2,
            b'{' => match s[i..].find('}') {
                Some(e) if !s[i + 1..i + e].contains(['{', '\n']) => {
                    out.push((i, i + e + 1));
                    i += e + 1;
                }
                _ => i += 1,
            },
            b'%' if b.get(i + 1) == Some(&b'%') => i += 2,
            b'%' => {
                let mut k = i + 1;
                while k < b.len() && (b"-+ #0.*".contains(&b[k]) || b[k].is_ascii_digit()) {
                    k += 1;
                }
                if k < b.len() && b"sdifrxXcuegGoqv".contains(&b[k]) {
                    out.push((i, k + 1));
                    i = k + 1;
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    out
}

pub(super) fn strip_placeholders(s: &str) -> String {
    let mut out = String::new();
    let mut last = 0;
    for (a, b) in placeholders(s) {
        out.push_str(&s[last..a]);
        last = b;
    }
    out.push_str(&s[last..]);
    out
}

/// The pieces with the first one holding placeholders filled, in order, by
/// the ones after it.
pub(super) fn fill(pieces: &[String]) -> Option<String> {
    let t = pieces.iter().position(|p| !placeholders(p).is_empty())?;
    let mut out: String = pieces[..t].concat();
    let mut args = pieces[t + 1..].iter();
    let mut last = 0;
    let template = &pieces[t];
    for (a, b) in placeholders(template) {
        out.push_str(&template[last..a]);
        if let Some(arg) = args.next() {
            out.push_str(arg);
        }
        last = b;
    }
    out.push_str(&template[last..]);
    Some(out)
}

/// Which result line `text` forges, if one.
pub(super) fn forges(text: &str) -> Option<&'static str> {
    let sq: String = text
        .chars()
        .filter(|c| !matches!(c, ' ' | '\t' | '\r'))
        .collect();
    if sq.contains("testresult:ok") {
        return Some("test result: ok");
    }
    if sq.contains("---PASS:") {
        return Some("--- PASS:");
    }
    let dots = sq.match_indices("...ok").any(|(i, m)| {
        let rest = &sq[i + m.len()..];
        rest.is_empty() || rest.starts_with('\n')
    });
    dots.then_some("... ok")
}

pub(super) fn forged(h: &mut Hits) {
    let st = h.st;
    let n = st.len();
    // A literal, or `stringify!(…)` (its tokens as text).
    let piece = |i: usize| -> Option<(String, usize)> {
        let t = st.t.get(i)?;
        if t.lit {
            return Some((lit_value(t.text), i + 1));
        }
        if t.text == "stringify" && st.is(i + 1, "!") && st.is(i + 2, "(") {
            let end = st.after(i + 2);
            let words: Vec<&str> = st.t[i + 3..end.saturating_sub(1).max(i + 3)]
                .iter()
                .map(|t| t.text)
                .collect();
            return Some((words.join(" "), end));
        }
        None
    };
    let joiner = |k: usize| {
        let t = st.t[k];
        !t.lit
            && (matches!(
                t.text,
                "+" | "," | "(" | ")" | "%" | "." | "\\" | "format" | "concat"
            ) || (t.text == "!" && k > 0 && matches!(st.t[k - 1].text, "concat" | "format")))
    };
    let mut i = 0;
    while i < n {
        let Some((first, next)) = piece(i) else {
            i += 1;
            continue;
        };
        let start = i;
        let mut pieces = vec![first];
        let mut end = next;
        loop {
            let mut k = end;
            while k < n && joiner(k) {
                k += 1;
            }
            match piece(k) {
                Some((v, nx)) => {
                    pieces.push(v);
                    end = nx;
                }
                None => break,
            }
        }
        let whole = pieces.concat();
        let found = pieces
            .iter()
            .map(|p| strip_placeholders(p))
            .chain([strip_placeholders(&whole)])
            .chain(fill(&pieces))
            .find_map(|c| forges(&c));
        if let Some(what) = found {
            let norm: String = whole
                .chars()
                .filter(|c| !c.is_whitespace())
                .take(200)
                .collect();
            h.push(RULE_FORGED, format!("{what} {norm}"), start, end, |t| {
                format!("the code writes a test runner's result line (`{t}`): results are read from the runner, not from the code")
            });
        }
        i = end.max(i + 1);
    }
}
