//! Python dotted expressions (`a.b(c)[d].e`) followed through imports,
//! aliases, `getattr` and `__import__`, for the Python backstop rules.

use super::stream::{is_word, Stream};
use super::MAX_NEST;
use std::collections::HashMap;

/// A dotted expression: `a.b(c)[d].e`, its head resolved through imports
/// and aliases, `getattr`/`vars`/`__import__`/`importlib.import_module`
/// followed.
#[derive(Debug, Clone, Default)]
pub(super) struct Chain {
    /// The token after it.
    pub(super) end: usize,
    /// Names; `()` for a call, `[k]` for a subscript (`[?]` computed),
    /// `?` for a name computed at run time.
    pub(super) segs: Vec<String>,
    /// The head is a module (bound by an import, or imported by name).
    pub(super) imported: bool,
    /// A `getattr` with a computed or concatenated name, or an import by a
    /// computed name, is on the way.
    pub(super) dynamic: bool,
    /// The `(` of the first call right after the leading names.
    pub(super) first_call: Option<usize>,
    /// Imports by name on the way: the module when literal, and whether it
    /// was assembled from pieces.
    pub(super) imports: Vec<(Option<String>, bool)>,
}

impl Chain {
    /// The leading names, dotted.
    pub(super) fn names(&self) -> String {
        self.segs
            .iter()
            .take_while(|s| is_word(s))
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(".")
    }
    pub(super) fn root(&self) -> &str {
        self.segs.first().map_or("", String::as_str)
    }
    pub(super) fn seg(&self, i: usize) -> &str {
        self.segs.get(i).map_or("", String::as_str)
    }
    pub(super) fn has(&self, n: &str) -> bool {
        self.segs.iter().any(|s| s == n)
    }
    pub(super) fn is_runner(&self) -> bool {
        match self.root() {
            "pytest" | "_pytest" | "pluggy" | "TestCase" => true,
            "unittest" => self.seg(1) != "mock",
            "py" => self.imported,
            _ => false,
        }
    }
    pub(super) fn is_builtins(&self) -> bool {
        matches!(self.root(), "builtins" | "__builtins__")
    }
}

/// Whether a module name is the runner's (`unittest.mock` is not).
pub(super) fn runner_module(m: &str) -> bool {
    let root = m.split('.').next().unwrap_or("");
    match root {
        "pytest" | "_pytest" | "pluggy" => true,
        "unittest" => m != "unittest.mock" && !m.starts_with("unittest.mock."),
        _ => false,
    }
}

/// `posix` and `nt` are `os` by another name.
pub(super) fn canonical(mut segs: Vec<String>) -> Vec<String> {
    if let Some(r) = segs.first_mut() {
        if r == "posix" || r == "nt" {
            *r = "os".into();
        }
    }
    segs
}

pub(super) fn dotted(s: &str) -> Vec<String> {
    s.split('.').map(String::from).collect()
}

#[derive(Default)]
pub(super) struct PyEnv {
    /// Name → (path, bound to a module or a module's member).
    pub(super) alias: HashMap<String, (Vec<String>, bool)>,
}

/// The dotted name at `i` and the token after it.
pub(super) fn py_dotted(st: &Stream, i: usize) -> (String, usize) {
    let mut out = String::new();
    let mut k = i;
    while let Some(w) = st.word(k) {
        out.push_str(w);
        if st.is(k + 1, ".") && st.word(k + 2).is_some() {
            out.push('.');
            k += 2;
        } else {
            k += 1;
            break;
        }
    }
    (out, k)
}

pub(super) fn py_chain(st: &Stream, i: usize, env: &PyEnv, depth: usize) -> Option<Chain> {
    let w = st.word(i)?;
    let mut c = Chain::default();
    match env.alias.get(w) {
        Some((p, imported)) => {
            c.segs = p.clone();
            c.imported = *imported;
        }
        None => c.segs = vec![w.to_string()],
    }
    c.segs = canonical(c.segs);
    let mut k = i + 1;
    loop {
        if st.is(k, ".") {
            if let Some(n) = st.word(k + 1) {
                c.segs.push(n.to_string());
                k += 2;
                continue;
            }
        }
        if st.is(k, "(") {
            call_step(st, k, env, depth, &mut c);
            k = st.after(k);
            continue;
        }
        if st.is(k, "[") {
            let end = st.close[k];
            let key = match st.lit_eval(k + 1, end) {
                Some((v, _)) => v,
                None if end == k + 2 && st.word(k + 1) == Some("__name__") => "__name__".into(),
                None => "?".into(),
            };
            c.segs.push(format!("[{key}]"));
            k = st.after(k);
            continue;
        }
        break;
    }
    c.end = k;
    Some(c)
}

/// The call `(…)` at `k` on the chain `c`: an import by name and a
/// `getattr`/`vars` are followed; any other call is appended as `()`.
fn call_step(st: &Stream, k: usize, env: &PyEnv, depth: usize, c: &mut Chain) {
    let names = c.names();
    let all_names = c.segs.iter().all(|s| is_word(s));
    let args = || st.args(k);
    let arg = |n: usize| args().get(n).and_then(|&(a, b)| st.lit_eval(a, b));
    if all_names
        && matches!(
            names.as_str(),
            "__import__"
                | "builtins.__import__"
                | "importlib.import_module"
                | "importlib.__import__"
        )
    {
        let v = arg(0);
        c.imports.push((
            v.as_ref().map(|v| v.0.clone()),
            v.as_ref().is_some_and(|v| v.1 > 1),
        ));
        match v {
            Some((m, pieces)) => {
                let m = if names.ends_with("__import__") {
                    m.split('.').next().unwrap_or("").to_string()
                } else {
                    m
                };
                c.segs = canonical(dotted(&m));
                c.imported = true;
                c.dynamic |= pieces > 1;
            }
            None => {
                c.segs = vec!["?".into()];
                c.dynamic = true;
            }
        }
    } else if all_names
        && matches!(
            names.as_str(),
            "getattr" | "builtins.getattr" | "vars" | "builtins.vars"
        )
    {
        let target = args().first().and_then(|&(a, b)| {
            if depth >= MAX_NEST {
                return None;
            }
            py_chain(st, a, env, depth + 1).filter(|t| t.end == b)
        });
        match target {
            Some(t) => {
                c.segs = t.segs;
                c.imported = t.imported;
                c.dynamic |= t.dynamic;
                c.imports.extend(t.imports);
            }
            None => c.segs = vec!["?expr".into()],
        }
        if names.ends_with("vars") {
            c.segs.push("__dict__".into());
        } else {
            match arg(1) {
                Some((n, pieces)) => {
                    c.segs.push(n);
                    c.dynamic |= pieces > 1;
                }
                None => {
                    c.segs.push("?".into());
                    c.dynamic = true;
                }
            }
        }
    } else {
        if c.first_call.is_none() && all_names {
            c.first_call = Some(k);
        }
        c.segs.push("()".into());
    }
}

/// Whether the chain from `head` to `end` is assigned to or deleted.
pub(super) fn py_target(st: &Stream, head: usize, end: usize) -> bool {
    if head > 0 && st.word(head - 1) == Some("del") {
        return true;
    }
    let single_eq = |k: usize| st.is(k, "=") && !st.is(k + 1, "=");
    if single_eq(end) {
        return true;
    }
    let op = |k: usize| st.t.get(k).filter(|t| !t.lit).map_or("", |t| t.text);
    if matches!(op(end), "+" | "-" | "*" | "/" | "%" | "&" | "|" | "^" | "@") && st.is(end + 1, "=")
    {
        return true;
    }
    if matches!(op(end), "*" | "/" | ">" | "<") && op(end + 1) == op(end) && st.is(end + 2, "=") {
        return true;
    }
    // `a, unittest.TestCase.x = …`: a tuple target at statement level.
    if st.is(end, ",") && st.depth[head] == 0 {
        let mut k = end;
        let stop = (end + 64).min(st.len());
        while k < stop && !st.starts[k] {
            if matches!(
                st.word(k),
                Some("in" | "lambda" | "for" | "if" | "return" | "yield")
            ) {
                return false;
            }
            if single_eq(k) && !matches!(op(k - 1), "=" | "!" | "<" | ">" | ":") {
                return true;
            }
            k = st.after(k);
        }
    }
    false
}
