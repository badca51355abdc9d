//! Evaluating a Rust `cfg` predicate (`test`, `not(…)`, `all(…)`, `any(…)`,
//! platform keys) as it stands in a test build.

use super::super::Truth;
use super::super::MAX_DEPTH;

#[derive(Debug, PartialEq)]
enum CfgTok {
    Ident(String),
    Str(String),
    Open,
    Close,
    Comma,
    Eq,
    Other,
}

fn cfg_tokens(s: &str) -> Vec<CfgTok> {
    let mut out = Vec::new();
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '(' => out.push(CfgTok::Open),
            ')' => out.push(CfgTok::Close),
            ',' => out.push(CfgTok::Comma),
            '=' => out.push(CfgTok::Eq),
            '"' => {
                let mut v = String::new();
                let mut escaped = false;
                for (_, c) in chars.by_ref() {
                    match c {
                        _ if escaped => {
                            v.push(c);
                            escaped = false;
                        }
                        '\\' => escaped = true,
                        '"' => break,
                        _ => v.push(c),
                    }
                }
                out.push(CfgTok::Str(v));
            }
            c if c.is_alphanumeric() || c == '_' => {
                let mut end = i + c.len_utf8();
                while let Some(&(j, d)) = chars.peek() {
                    if d.is_alphanumeric() || d == '_' {
                        end = j + d.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push(CfgTok::Ident(s[i..end].to_string()));
            }
            _ => out.push(CfgTok::Other),
        }
    }
    out
}

/// The truth of a `cfg` predicate in a test build.
pub(super) fn cfg_truth(pred: &str) -> Truth {
    let toks = cfg_tokens(pred);
    let mut p = 0;
    let t = cfg_pred(&toks, &mut p, 0);
    if p == toks.len() {
        t
    } else {
        Truth::Unknown
    }
}

fn cfg_pred(toks: &[CfgTok], p: &mut usize, depth: usize) -> Truth {
    let Some(tok) = toks.get(*p) else {
        return Truth::Unknown;
    };
    *p += 1;
    let CfgTok::Ident(name) = tok else {
        return Truth::Unknown;
    };
    match toks.get(*p) {
        Some(CfgTok::Open) if matches!(name.as_str(), "any" | "all" | "not") => {
            *p += 1;
            if depth > MAX_DEPTH {
                *p = toks.len();
                return Truth::Unknown;
            }
            let mut parts = Vec::new();
            loop {
                if toks.get(*p) == Some(&CfgTok::Close) {
                    *p += 1;
                    break;
                }
                parts.push(cfg_pred(toks, p, depth + 1));
                match toks.get(*p) {
                    Some(CfgTok::Comma) => *p += 1,
                    Some(CfgTok::Close) => {
                        *p += 1;
                        break;
                    }
                    _ => {
                        *p = toks.len();
                        return Truth::Unknown;
                    }
                }
            }
            match name.as_str() {
                "any" => Truth::any(parts),
                "all" => Truth::all(parts),
                _ if parts.len() == 1 => parts[0].not(),
                _ => Truth::Unknown,
            }
        }
        Some(CfgTok::Eq) => {
            *p += 1;
            match toks.get(*p) {
                Some(CfgTok::Str(v)) => {
                    *p += 1;
                    if name == "feature" && super::super::never_set(v) {
                        Truth::False
                    } else {
                        Truth::Unknown
                    }
                }
                _ => Truth::Unknown,
            }
        }
        _ if name == "test" => Truth::True,
        _ if super::super::never_set(name) => Truth::False,
        _ => Truth::Unknown,
    }
}
