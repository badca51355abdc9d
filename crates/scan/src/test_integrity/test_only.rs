//! `test-integrity/test-only-behaviour` (error): code under test (not a
//! test file, not `conftest.py`, not inside a Rust `#[cfg(test)]` test
//! module or `#[test]` function) that the change makes branch on being
//! tested, so what the tests run is not what ships. Read from the lexer's
//! tokens, statement by statement (layout and comments do not matter), and
//! compared with the base across the change's files: only statements the
//! base had fewer of count.
//!
//! Flagged:
//! - Rust: `cfg(…)`, `cfg!(…)` or `cfg_attr(…)` naming `test` or
//!   `debug_assertions` — except the `#[cfg(test)]` of a module holding
//!   tests (or named for them), of `mod x;` and of a private `use`, and a
//!   `cfg_attr` that only adds `derive`/lint/`doc` attributes; string
//!   literals starting `RUST_TEST`, `RASCAL_`, `PYTEST`, `--test-threads`,
//!   `--nocapture`; `thread::current().name()`; `env::args()`/`args_os()`
//!   with a literal naming `test`, `deps` or `bench` close after it;
//!   `current_exe()`.
//! - Python: `sys.modules` looked up with a runner's name, or with any
//!   key but the module's own (`sys.modules[__name__]`) or one literal
//!   used whole — a key built at run time (`"py" + "test"`, a variable)
//!   names the runner as well as a literal does; the literals above (`PYTEST_CURRENT_TEST`, `RASCAL_…`
//!   in `os.environ`/`os.getenv` or anywhere); `sys.argv` with a literal
//!   naming a runner or `test`; `threading.current_thread().name`;
//!   `sys._getframe`, `sys.gettrace`, `inspect.stack`/`currentframe`/
//!   `getouterframes`/`trace`, `traceback.extract_stack`/`walk_stack`,
//!   `f_back`; `__main__.__file__`.
//!
//! Names are resolved through imports and plain aliases (`import sys as
//! s`, `from sys import modules as m`, `use std::thread::current as cur`).
//!
//! Misses: a name or literal built at run time (`"PYTEST" + "_X"` is
//! caught by its first part, `getattr(sys, "mod" + "ules")` is not; a
//! `sys.modules` key is caught however it is built), a
//! runner seen through the process's own files (`/proc/self/cmdline`), a
//! `#[cfg(test)]` module that holds tests and is also reached from shipped
//! code through another `cfg` (that `cfg` is reported), build scripts and
//! features (`--features test-mode` is runner config), and languages other
//! than Rust and Python. Legitimate uses are reported too: a `current_exe`
//! to find installed files, `cfg(debug_assertions)` checks, a test-only
//! helper method under `#[cfg(test)]`, the project's own `RASCAL_*`
//! settings in rascal itself (allow them).

use super::lex::Syntax;
use super::reads_source::{self as rs, Code, Hit, Side, SpanKind, Spans};
use super::{FileVersions, Finding};

pub const RULE_TEST_ONLY: &str = "test-integrity/test-only-behaviour";

/// Python calls that look at the call stack or the tracer.
const PY_FRAMES: &[&str] = &[
    "sys._getframe",
    "sys.gettrace",
    "sys._current_frames",
    "inspect.stack",
    "inspect.currentframe",
    "inspect.getouterframes",
    "inspect.trace",
    "traceback.extract_stack",
    "traceback.walk_stack",
];
/// Attributes a `cfg_attr` may add only under test without changing what
/// the code does.
const HARMLESS_ATTRS: &[&str] = &["derive", "allow", "expect", "warn", "deny", "doc"];
/// Tokens after `env::args()` searched for a test binary's name.
const ARGS_WINDOW: usize = 48;

pub(super) fn check(files: &[FileVersions], out: &mut Vec<Finding>) {
    rs::report(
        files,
        RULE_TEST_ONLY,
        &scan,
        &|what, path, line| {
            format!(
                "non-test code branches on being tested ({what}, {path}:{line}): the tested code is not the code you ship"
            )
        },
        out,
    );
}

fn scan(path: &str, text: &str, side: Side, files: &[FileVersions]) -> Vec<Hit> {
    let Some(syntax) = rs::syntax_of(path) else {
        return Vec::new();
    };
    if rs::test_file(path, files, side) {
        return Vec::new();
    }
    let c = Code::new(text, syntax);
    let spans = if syntax == Syntax::Rust {
        rs::rust_spans(&c)
    } else {
        Spans {
            spans: Vec::new(),
            file_test: false,
        }
    };
    if spans.file_test {
        return Vec::new();
    }
    let tests = [
        SpanKind::TestFn,
        SpanKind::TestModule,
        SpanKind::CfgTestDecl,
    ];
    let flags = |a: usize, b: usize| match syntax {
        Syntax::Rust => rust_flags(&c, a, b),
        _ => python_flags(&c, a, b),
    };
    let key = |a: usize, b: usize| match test_data_header(&c, a, b, &spans) {
        Some(end) => c.key(a, end),
        None => c.key(a, b),
    };
    rs::hits_keyed(&c, &flags, &|at| !spans.within(at, &tests), &key)
}

/// For a `static` or `const` in `a..b` that nothing outside test code
/// names (test data under `#[cfg(test)]`, say: a table of cases), where
/// its header ends (its `=`): a changed value is test data changing, not a
/// new switch on being tested, so the statement is the base's if its
/// header is. None for anything else — a name shipped code also uses may
/// be a `cfg(not(test))` twin's, and then its value is behaviour.
fn test_data_header(c: &Code, a: usize, b: usize, spans: &Spans) -> Option<usize> {
    let mut k = a;
    while k < b {
        if c.is(k, "#") && c.is(k + 1, "[") {
            k = c.close_of(k + 1)? + 1;
            continue;
        }
        match c.word(k) {
            Some("pub" | "crate") => k += 1,
            Some("static" | "const") => break,
            _ if c.is(k, "(") => k = c.close_of(k)? + 1,
            _ => return None,
        }
    }
    let name_at = if c.word(k + 1) == Some("mut") {
        k + 2
    } else {
        k + 1
    };
    let name = c.word(name_at)?;
    let eq = (name_at..b).find(|&e| c.is(e, "="))?;
    let tests = [SpanKind::TestFn, SpanKind::TestModule];
    let used_elsewhere = (0..c.toks.len()).any(|t| {
        (t < a || t >= b) && c.word(t) == Some(name) && !spans.within(c.toks[t].at, &tests)
    });
    (!used_elsewhere).then_some(eq)
}

/// A literal only a test run sets or passes.
fn test_literal(l: &str) -> bool {
    l.starts_with("PYTEST")
        || l.starts_with("RASCAL_")
        || l == "RASCAL"
        || l.starts_with("RUST_TEST")
        || l.starts_with("--test-threads")
        || l.starts_with("--nocapture")
}

/// Whether tokens `a..b` (a `cfg` predicate) name a test build.
fn names_test(c: &Code, a: usize, b: usize) -> bool {
    c.has_word(a, b.min(a + rs::MAX_SCAN), &["test", "debug_assertions"])
}

/// The top-level comma-separated parts of the group opened at `open`.
fn parts(c: &Code, open: usize, close: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let (mut start, mut k) = (open + 1, open + 1);
    while k < close {
        if c.is(k, "(") || c.is(k, "[") || c.is(k, "{") {
            k = c.close_of(k).map_or(close, |e| e + 1);
        } else if c.is(k, ",") {
            out.push((start, k));
            start = k + 1;
            k += 1;
        } else {
            k += 1;
        }
    }
    if start < close {
        out.push((start, close));
    }
    out
}

fn rust_flags(c: &Code, a: usize, b: usize) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for k in a..b {
        let t = c.toks[k];
        if let Some(l) = t.content() {
            if test_literal(l) {
                out.push((k, rs::shown(t.text)));
            }
            continue;
        }
        let Some(w) = t.word() else { continue };
        let r = c.resolve(w);
        let called = c.is(k + 1, "(");
        match r {
            "cfg" | "cfg_attr" => {
                let open = if called {
                    k + 1
                } else if r == "cfg" && c.is(k + 1, "!") && c.is(k + 2, "(") {
                    k + 2
                } else {
                    continue;
                };
                let close = c.close_of(open).unwrap_or(b).min(b);
                let ps = parts(c, open, close);
                let Some(&(pa, pb)) = ps.first() else {
                    continue;
                };
                let harmless = r == "cfg_attr"
                    && ps.len() > 1
                    && ps[1..]
                        .iter()
                        .all(|&(x, _)| c.word(x).is_some_and(|w| HARMLESS_ATTRS.contains(&w)));
                let pred_end = if r == "cfg" { close } else { pb };
                if names_test(c, pa, pred_end) && !harmless {
                    let end = (close + 1).min(c.toks.len());
                    out.push((k, rs::shown(c.text(k, end))));
                }
            }
            "current"
                if called
                    && c.is(k + 2, ")")
                    && c.is(k + 3, ".")
                    && c.word(k + 4) == Some("name") =>
            {
                let path = c.is_before(k, 1, ":") && c.is_before(k, 2, ":");
                let via_thread = path && k >= 3 && c.word(k - 3) == Some("thread");
                let bare = !path && !c.is_before(k, 1, ".");
                if via_thread || bare {
                    out.push((k, "`thread::current().name()`".into()));
                }
            }
            "args" | "args_os" if called => {
                let path = c.is_before(k, 1, ":") && c.is_before(k, 2, ":");
                let via_env = path && k >= 3 && c.word(k - 3) == Some("env");
                let bare = !path && !c.is_before(k, 1, ".") && c.imported.contains(w);
                let names_binary = c
                    .literals(k, (k + ARGS_WINDOW).min(c.toks.len()))
                    .map(str::to_ascii_lowercase)
                    .any(|l| ["test", "deps", "bench"].iter().any(|s| l.contains(s)));
                if (via_env || bare) && names_binary {
                    out.push((k, format!("`env::{r}()` inspected for a test binary")));
                }
            }
            "current_exe" if called && !c.is_before(k, 1, "fn") => {
                out.push((k, "`current_exe()`".into()));
            }
            _ => {}
        }
    }
    out
}

fn python_flags(c: &Code, a: usize, b: usize) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let lits: Vec<&str> = c.literals(a, b).collect();
    let runner_module = lits.iter().any(|l| {
        ["pytest", "_pytest", "unittest"]
            .iter()
            .any(|r| *l == *r || l.strip_prefix(r).is_some_and(|x| x.starts_with('.')))
    });
    let runner_name = lits.iter().any(|l| {
        let l = l.to_ascii_lowercase();
        ["pytest", "py.test", "unittest", "nose", "test"]
            .iter()
            .any(|r| l.contains(r))
    });
    for k in a..b {
        let t = c.toks[k];
        if let Some(l) = t.content() {
            if test_literal(l) {
                out.push((k, rs::shown(t.text)));
            }
            continue;
        }
        let Some(w) = t.word() else { continue };
        if w == "f_back" {
            out.push((k, "`f_back`, a frame walk".into()));
        }
        if w == "__file__" && lits.contains(&"__main__") {
            out.push((k, "`__main__.__file__`".into()));
        }
        let Some((r, end)) = c.chain(k) else { continue };
        let under = |p: &str| r == p || r.strip_prefix(p).is_some_and(|x| x.starts_with('.'));
        if under("sys.modules") && runner_module {
            out.push((k, "`sys.modules` looked up for the test runner".into()));
        } else if under("sys.modules") && !own_module(c, a, b) {
            // The key may be built at run time (`"py" + "test"`): any
            // lookup but the module's own is a way to see the runner.
            out.push((k, "`sys.modules` looked up (which modules are loaded tells a test run from a real one)".into()));
        } else if under("sys.argv") && runner_name {
            out.push((k, "`sys.argv` compared to a test runner".into()));
        } else if matches!(
            r.as_str(),
            "threading.current_thread" | "threading.currentThread"
        ) {
            let after = c.close_of(end).filter(|_| c.is(end, "("));
            let named = after.is_some_and(|e| {
                c.is(e + 1, ".") && matches!(c.word(e + 2), Some("name" | "getName"))
            });
            if named {
                out.push((k, "the current thread's name".into()));
            }
        } else if PY_FRAMES.contains(&r.as_str()) {
            out.push((k, format!("`{r}`")));
        } else if r == "__main__.__file__" {
            out.push((k, "`__main__.__file__`".into()));
        }
    }
    out
}

/// Whether the statement `a..b` looks up in `sys.modules` only a key it
/// names as it is: the module's own (`sys.modules[__name__]`, no string
/// in the statement), or one string literal (not a runner's name) used
/// whole — followed by `]`, `)`, `,` or `in`, so not joined, sliced or
/// formatted into another name.
fn own_module(c: &Code, a: usize, b: usize) -> bool {
    let literals: Vec<usize> = (a..b).filter(|&k| c.toks[k].content().is_some()).collect();
    match literals.as_slice() {
        [] => (a..b).any(|k| c.word(k) == Some("__name__")),
        [k] => {
            let next = k + 1;
            next < b
                && (c.is(next, "]")
                    || c.is(next, ")")
                    || c.is(next, ",")
                    || c.word(next) == Some("in"))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests;
