//! The change's code with its new behaviour taken out, to judge the
//! change's new tests that do not build on the base's code. Such a test
//! "fails at the base" only because the names it uses are not there, which
//! a test that asserts nothing (`let _ = triple;`) does as well as one
//! that checks `triple(2) == 6`. So it is run once more, on the change's
//! code with every function the change adds or rewrites stubbed out: the
//! function returns at once a zero value (Rust: `Default::default()` for
//! return types known to have one, else a panic; Python: `None`; Go: the
//! zero values of its results). A test that still passes there does not
//! check what the new code does.
//!
//! A function is the change's when its text (whitespace aside) is not
//! among the base's functions of the same file. Test code is never
//! stubbed: test files, Rust `#[cfg(test)]` modules, Python `test*`
//! functions. The function's body stays behind the early return
//! (`if true { return … }`), so the copy builds as the change does; `const
//! fn`s (whose return would have to be const) are left alone.
//!
//! Pure text work on the light lexer; the pipeline lays the result.

use super::base_tests::{is_test_path, rust_test_modules};
use super::lex::{Source, Syntax};
use std::collections::HashSet;

/// A stubbed function that cannot return a zero value panics as any
/// `panic!()` does — no words of rascal's a test could look for in the
/// panic's message and fail on (a test reading the stub's source text is
/// `test-integrity/reads-source`).
const PANIC: &str = "::core::panic!()";

/// `now` (the change's version of `path`; `base` the base's, None when
/// the change adds the file) with the change's functions stubbed out, or
/// None when the file is not Rust, Python or Go source, is a test file,
/// or has no function of the change's.
pub fn without_new_code(path: &str, base: Option<&str>, now: &str) -> Option<String> {
    if is_test_path(path) {
        return None;
    }
    let ext = path.rsplit_once('.').map(|(_, e)| e)?;
    let (syntax, find): (Syntax, fn(&Source<'_>) -> Vec<Func>) = match ext {
        "rs" => (Syntax::Rust, rust_functions),
        "py" => (Syntax::Python, python_functions),
        "go" => (Syntax::Go, go_functions),
        _ => return None,
    };
    let at_base: HashSet<String> = base
        .map(|b| {
            let src = Source::new(b, syntax);
            find(&src)
                .iter()
                .map(|f| squeezed(&b[f.start..f.end]))
                .collect()
        })
        .unwrap_or_default();
    let src = Source::new(now, syntax);
    let mut inserts: Vec<(usize, String)> = find(&src)
        .into_iter()
        .filter(|f| !at_base.contains(&squeezed(&now[f.start..f.end])))
        .filter_map(|f| f.stub.map(|s| (f.insert_at, s)))
        .collect();
    if inserts.is_empty() {
        return None;
    }
    inserts.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
    let mut out = now.to_string();
    for (at, text) in inserts {
        out.insert_str(at, &text);
    }
    Some(out)
}

/// One function: its whole text (`start..end`), where the stub goes, and
/// the stub (None: it is left alone).
struct Func {
    start: usize,
    end: usize,
    insert_at: usize,
    stub: Option<String>,
}

/// A text with its whitespace runs taken out, for comparing functions
/// across a reformat.
fn squeezed(s: &str) -> String {
    s.split_whitespace().collect()
}

fn starts_ident(w: &str) -> bool {
    w.bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && !w.contains('$')
}

// ---- Rust ----

/// The functions with a body outside `#[cfg(test)]` modules and macro
/// definitions; a function inside another is part of it.
fn rust_functions(src: &Source<'_>) -> Vec<Func> {
    let tests = rust_test_modules(src.text);
    let types = rust_types(src.code_str(0, src.len()));
    let mut out = Vec::new();
    let mut i = 0;
    while i < src.len() {
        if let Some(&(_, end)) = tests.iter().find(|(a, _)| *a == i) {
            i = end;
            continue;
        }
        let c = src.at(i);
        if !super::lex::is_ident_byte(c) {
            i += 1;
            continue;
        }
        let Some((word, e)) = src.word(i) else {
            i += 1;
            continue;
        };
        if word == "macro_rules" {
            // Skip to the end of its body.
            let mut k = e;
            while k < src.len() && !matches!(src.at(k), b'{' | b'(' | b'[') {
                k += 1;
            }
            i = src.close(k) + 1;
            continue;
        }
        if word != "fn" {
            i = e;
            continue;
        }
        match rust_function(src, i, e, &types) {
            Some(f) => {
                i = f.end;
                out.push(f);
            }
            None => i = e,
        }
    }
    out
}

/// The Rust function whose `fn` keyword is at `at..e`, if it has a body
/// (`types`: what its file says of its types).
fn rust_function(src: &Source<'_>, at: usize, e: usize, types: &Types) -> Option<Func> {
    let n = src.skip_ws(e);
    let (name, mut k) = src.word(n)?;
    if !starts_ident(name) {
        return None;
    }
    // Generics (`<F: Fn(u8) -> u8>`), then the parameters.
    let mut angle = 0i32;
    while k < src.len() {
        match src.at(k) {
            b'<' => angle += 1,
            b'>' if src.at(k.wrapping_sub(1)) != b'-' => angle -= 1,
            b'(' if angle <= 0 => break,
            b'(' | b'[' => k = src.close(k),
            b'{' | b';' => return None,
            _ => {}
        }
        k += 1;
    }
    let params_end = src.close(k);
    // The return type and where clause, to the body.
    let mut j = params_end + 1;
    let mut angle = 0i32;
    while j < src.len() {
        match src.at(j) {
            b'<' => angle += 1,
            b'>' if src.at(j - 1) != b'-' => angle -= 1,
            b'(' | b'[' => j = src.close(j),
            b';' if angle <= 0 => return None,
            b'{' if angle <= 0 => break,
            _ => {}
        }
        j += 1;
    }
    if j >= src.len() {
        return None;
    }
    let body_end = src.close(j);
    let head = src.code_str(src.line_start(at), at);
    let is_const = head.split_whitespace().any(|w| w == "const");
    let sig = src.code_str(params_end + 1, j);
    let before_where = sig
        .split_whitespace()
        .take_while(|w| *w != "where")
        .collect::<Vec<_>>()
        .join(" ");
    let ret = before_where
        .split_once("->")
        .map(|(_, r)| r.trim().to_string());
    // After the body's inner attributes (`#![allow(…)]`).
    let mut insert_at = j + 1;
    loop {
        let s = src.skip_ws(insert_at);
        if src.at(s) == b'#' && src.at(src.skip_ws(s + 1)) == b'!' {
            let open = src.skip_ws(src.skip_ws(s + 1) + 1);
            if src.at(open) != b'[' {
                break;
            }
            insert_at = src.close(open) + 1;
        } else {
            break;
        }
    }
    let stub = (!is_const).then(|| match ret.as_deref() {
        None | Some("()") => " if true { return; } ".to_string(),
        Some(r) => match zero_value(r, types) {
            Some(v) => format!(" if true {{ return {v}; }} "),
            None => format!(" if true {{ {PANIC}; }} "),
        },
    });
    Some(Func {
        start: at,
        end: (body_end + 1).min(src.len()),
        insert_at,
        stub,
    })
}

/// What a Rust file says of its types: those it gives a `Default`
/// (`#[derive(…Default…)]` or `impl Default for`), and its `type` aliases.
#[derive(Default)]
struct Types {
    defaults: HashSet<String>,
    aliases: std::collections::HashMap<String, String>,
}

/// The [`Types`] of a Rust file's blanked code.
fn rust_types(code: &str) -> Types {
    use regex::Regex;
    use std::sync::OnceLock;
    static RES: OnceLock<[Regex; 3]> = OnceLock::new();
    let [derived, implemented, alias] = RES.get_or_init(|| {
        [
            Regex::new(r"#\[derive\(([^\]]*)\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum)\s+(\w+)").unwrap(),
            Regex::new(r"impl(?:\s*<[^>]*>)?\s+(?:[\w:]+::)?Default\s+for\s+(\w+)").unwrap(),
            Regex::new(r"\btype\s+(\w+)\s*=\s*([^;]+);").unwrap(),
        ]
    });
    let mut t = Types::default();
    for c in derived.captures_iter(code) {
        if c[1]
            .split(',')
            .any(|d| d.trim().rsplit("::").next() == Some("Default"))
        {
            t.defaults.insert(c[2].to_string());
        }
    }
    for c in implemented.captures_iter(code) {
        t.defaults.insert(c[1].to_string());
    }
    for c in alias.captures_iter(code) {
        t.aliases.insert(c[1].to_string(), c[2].trim().to_string());
    }
    t
}

/// What a stubbed Rust function returning `t` returns at once, if a value
/// is known: `Default::default()`, or `Ok` of it for a `Result` whose `Ok`
/// type has one.
fn zero_value(t: &str, types: &Types) -> Option<&'static str> {
    if has_default(t, types, 0) {
        return Some("::core::default::Default::default()");
    }
    let t: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
    let (head, args) = t.split_once('<')?;
    let last = head.rsplit("::").next().unwrap_or(head).trim();
    let ok = top_level_split(args.strip_suffix('>')?, true);
    (last == "Result" && ok.first().is_some_and(|o| has_default(o, types, 0)))
        .then_some("::core::result::Result::Ok(::core::default::Default::default())")
}

/// Whether the Rust type `t` surely has a `Default`: std's types that do
/// (whatever their parameters), tuples of such, and the file's own types
/// that derive or implement it (through its aliases).
fn has_default(t: &str, types: &Types, depth: usize) -> bool {
    if depth > 4 {
        return false;
    }
    let t: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
    let t = t.trim();
    if let Some(r) = t.strip_prefix('&') {
        // `&str`, `&'a str`, `&[T]`.
        let r = r.trim_start();
        let r = match r.strip_prefix('\'') {
            Some(l) => l.split_once(' ').map(|(_, x)| x).unwrap_or(""),
            None => r,
        };
        return r == "str" || r.starts_with('[');
    }
    if let Some(inner) = t.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        return top_level_split(inner, true)
            .iter()
            .all(|e| has_default(e, types, depth + 1));
    }
    let head = t.split('<').next().unwrap_or(t);
    let last = head.rsplit("::").next().unwrap_or(head).trim();
    if types.defaults.contains(last) {
        return true;
    }
    if let Some(target) = types.aliases.get(last) {
        return has_default(target, types, depth + 1);
    }
    matches!(
        last,
        "i8" | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
            | "u8"
            | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "f32"
            | "f64"
            | "bool"
            | "char"
            | "String"
            | "Vec"
            | "Option"
            | "HashMap"
            | "HashSet"
            | "BTreeMap"
            | "BTreeSet"
            | "VecDeque"
            | "PathBuf"
            | "Duration"
    )
}

// ---- Python ----

/// The lines of `src`: (start offset, end offset without the newline).
fn lines(src: &Source<'_>) -> Vec<(usize, usize)> {
    let starts = src.line_starts();
    starts
        .iter()
        .enumerate()
        .map(|(k, &s)| {
            let e = starts.get(k + 1).map_or(src.len(), |n| n - 1);
            (s, e.max(s))
        })
        .collect()
}

fn indent(code: &str) -> usize {
    code.len() - code.trim_start().len()
}

/// The `def`s outside test functions; a `def` inside another is part of
/// it.
fn python_functions(src: &Source<'_>) -> Vec<Func> {
    let ls = lines(src);
    let mut out = Vec::new();
    let mut k = 0;
    while k < ls.len() {
        let (s, e) = ls[k];
        let code = src.code_str(s, e);
        let t = code.trim_start();
        let def = t
            .strip_prefix("async ")
            .map(str::trim_start)
            .unwrap_or(t)
            .strip_prefix("def ");
        let Some(rest) = def else {
            k += 1;
            continue;
        };
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let ind = indent(code);
        let Some(open) = (s..e).find(|&i| src.at(i) == b'(') else {
            k += 1;
            continue;
        };
        // The colon that ends the signature, past the parameters and any
        // annotation's brackets.
        let mut j = src.close(open) + 1;
        while j < src.len() && src.at(j) != b':' {
            if matches!(src.at(j), b'(' | b'[') {
                j = src.close(j);
            }
            j += 1;
        }
        let colon_line = ls.partition_point(|&(ls_s, _)| ls_s <= j).saturating_sub(1);
        // The body: the rest of the colon's line, or the lines below it
        // indented deeper than the `def` (blank lines inside).
        let mut last = colon_line;
        let mut first_body: Option<usize> = None;
        for (m, &(bs, be)) in ls.iter().enumerate().skip(colon_line + 1) {
            let text = src.slice(bs, be);
            if text.trim().is_empty() {
                continue;
            }
            if indent(text) <= ind {
                // A line inside a string (blank in code) is still the body.
                if !src.code_str(bs, be).trim().is_empty() {
                    break;
                }
                last = m;
                continue;
            }
            last = m;
            if first_body.is_none() && !text.trim_start().starts_with('#') {
                first_body = Some(m);
            }
        }
        let after_colon = src.code_str(j + 1, ls[colon_line].1);
        let end = ls[last].1;
        let (insert_at, stub) = if !after_colon.trim().is_empty() {
            (j + 1, " return None;".to_string())
        } else if let Some(m) = first_body {
            let (bs, be) = ls[m];
            let pad = &src.slice(bs, be)[..indent(src.slice(bs, be))];
            (bs, format!("{pad}return None\n"))
        } else {
            k = last + 1;
            continue;
        };
        let testish = name.starts_with("test");
        out.push(Func {
            start: s,
            end,
            insert_at,
            stub: (!testish).then_some(stub),
        });
        k = last + 1;
    }
    out
}

// ---- Go ----

/// The `func` declarations with a body (a function literal is part of
/// the declaration it is in).
fn go_functions(src: &Source<'_>) -> Vec<Func> {
    let ls = lines(src);
    let mut out = Vec::new();
    let mut k = 0;
    while k < ls.len() {
        let (s, e) = ls[k];
        if !src.code_str(s, e).starts_with("func") || !matches!(src.at(s + 4), b' ' | b'(') {
            k += 1;
            continue;
        }
        let mut i = src.skip_ws(s + 4);
        if src.at(i) == b'(' {
            i = src.skip_ws(src.close(i) + 1); // the receiver
        }
        let Some((name, mut j)) = src.word(i) else {
            k += 1;
            continue;
        };
        if !starts_ident(name) {
            k += 1;
            continue;
        }
        j = src.skip_ws(j);
        if src.at(j) == b'[' {
            j = src.skip_ws(src.close(j) + 1); // type parameters
        }
        if src.at(j) != b'(' {
            k += 1;
            continue;
        }
        let params_end = src.close(j);
        // The results, to the body's brace (a brace of `interface{}` or
        // `struct{…}` in a result type is part of the type).
        let mut b = params_end + 1;
        while b < src.len() {
            match src.at(b) {
                b'(' | b'[' => b = src.close(b),
                b'{' => {
                    let w = src.word_before(src.prev_sig(b).map_or(b, |p| p + 1));
                    if w == "interface" || w == "struct" {
                        b = src.close(b);
                    } else {
                        break;
                    }
                }
                b'\n' => break,
                _ => {}
            }
            b += 1;
        }
        if src.at(b) != b'{' {
            k += 1;
            continue;
        }
        let body_end = src.close(b);
        let results = src.slice(params_end + 1, b).trim().to_string();
        out.push(Func {
            start: s,
            end: (body_end + 1).min(src.len()),
            insert_at: b + 1,
            stub: Some(format!(" if true {{ {} }}; ", go_return(&results))),
        });
        let end_line = ls.partition_point(|&(ls_s, _)| ls_s <= body_end);
        k = end_line.max(k + 1);
    }
    out
}

/// A `return` of the zero values of Go results `results` (the text
/// between the parameters and the body).
fn go_return(results: &str) -> String {
    if results.is_empty() {
        return "return".into();
    }
    let Some(list) = results.strip_prefix('(').and_then(|r| r.strip_suffix(')')) else {
        return format!("return *new({results})");
    };
    let parts = top_level_split(list, false);
    let type_words = ["chan", "func", "map", "struct", "interface"];
    let named = parts.iter().any(|p| {
        let mut w = p.split_whitespace();
        match (w.next(), w.next()) {
            (Some(first), Some(_)) => {
                starts_ident(first) && !type_words.iter().any(|t| first.starts_with(t))
            }
            _ => false,
        }
    });
    if named {
        return "return".into();
    }
    let zeros: Vec<String> = parts
        .iter()
        .map(|t| format!("*new({})", t.trim()))
        .collect();
    format!("return {}", zeros.join(", "))
}

/// `list` split at its commas outside brackets (and, for Rust types,
/// outside `<…>`).
fn top_level_split(list: &str, angles: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in list.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            '<' if angles => depth += 1,
            '>' if angles && !cur.ends_with('-') => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests;
