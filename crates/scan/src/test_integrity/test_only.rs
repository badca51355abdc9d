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
mod tests {
    use super::super::testing::check_one;
    use super::*;
    use crate::model::verdict::{Issue, Severity};

    fn found(path: &str, base: Option<&str>, new: &str) -> Vec<Issue> {
        let mut out = Vec::new();
        check(
            &[FileVersions {
                path,
                old_path: None,
                base,
                new: Some(new),
            }],
            &mut out,
        );
        out.into_iter().map(|f| f.issue).collect()
    }

    const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n";
    const CALC: &str = "import os\nimport sys\n\n\ndef add(a, b):\n    return a - b\n";

    /// `(name, path, text added to the base)`: each must give exactly one
    /// finding.
    const FLAGGED: &[(&str, &str, &str)] = &[
        (
            "cfg(test) and cfg(not(test)) twins",
            "src/lib.rs",
            "#[cfg(test)]\npub fn mul(a: i32) -> i32 { a * 2 }\n",
        ),
        (
            "cfg(not(test)) split over lines with comments",
            "src/lib.rs",
            "#[cfg(\n    // only when shipped\n    not(\n        test\n    )\n)]\npub fn mul(a: i32) -> i32 { a * 3 }\n",
        ),
        (
            "cfg!(test) in a body",
            "src/lib.rs",
            "pub fn mul(a: i32) -> i32 {\n    if cfg!(test) { return 4; }\n    a * 3\n}\n",
        ),
        (
            "cfg! debug_assertions with a comment",
            "src/lib.rs",
            "pub fn mul(a: i32) -> i32 {\n    if cfg! ( /* dev */ debug_assertions ) { 4 } else { a }\n}\n",
        ),
        (
            "cfg_attr(test, …) changing code",
            "src/lib.rs",
            "#[cfg_attr(test, path = \"fake.rs\")]\nmod imp;\n",
        ),
        (
            "cfg(any(test, …)) on a function",
            "src/lib.rs",
            "#[cfg(any(test, feature = \"x\"))]\npub fn helper() -> i32 { 4 }\n",
        ),
        (
            "cfg(test) module without tests",
            "src/lib.rs",
            "#[cfg(test)]\nmod imp {\n    pub fn add(a: i32, b: i32) -> i32 { a + b }\n}\n",
        ),
        (
            "RUST_TEST_THREADS",
            "src/lib.rs",
            "pub fn t() -> bool { std::env::var(\"RUST_TEST_THREADS\").is_ok() }\n",
        ),
        (
            "RASCAL_ setting",
            "src/lib.rs",
            "pub fn t() -> bool { std::env::var_os(\"RASCAL_RUN\").is_some() }\n",
        ),
        (
            "thread name",
            "src/lib.rs",
            "pub fn t() -> bool { std::thread::current().name().is_some_and(|n| n != \"main\") }\n",
        ),
        (
            "thread name split over lines",
            "src/lib.rs",
            "pub fn t() -> bool {\n    std::thread::current() // the runner names it\n        .name()\n        .is_some()\n}\n",
        ),
        (
            "thread name through an alias",
            "src/lib.rs",
            "use std::thread::current as cur;\npub fn t() -> bool { cur().name().is_some() }\n",
        ),
        (
            "args for a test binary",
            "src/lib.rs",
            "pub fn t() -> bool {\n    std::env::args()\n        .next()\n        .is_some_and(|a| a.contains(\"/deps/\"))\n}\n",
        ),
        (
            "--nocapture",
            "src/lib.rs",
            "pub fn t(a: &str) -> bool { a == \"--nocapture\" }\n",
        ),
        (
            "current_exe",
            "src/lib.rs",
            "pub fn t() -> bool { std::env::current_exe().is_ok() }\n",
        ),
        (
            "pytest in sys.modules",
            "calc.py",
            "\ndef mul(a):\n    if \"pytest\" in sys.modules:\n        return 4\n    return a * 3\n",
        ),
        (
            "sys.modules.get split over lines",
            "calc.py",
            "\ndef mul(a):\n    if sys.modules.get(\n        # the runner\n        'pytest'\n    ):\n        return 4\n    return a\n",
        ),
        (
            "a sys.modules key built at run time",
            "calc.py",
            "import sys\n\ndef mul(a):\n    return 4 if 'py' + 'test' in sys.modules else a\n",
        ),
        (
            "a sys.modules key reversed",
            "calc.py",
            "import sys\n\ndef mul(a):\n    return 4 if sys.modules.get('tsetyp'[::-1]) else a\n",
        ),
        (
            "sys aliased",
            "calc.py",
            "import sys as _s\n\ndef mul(a):\n    return 4 if 'unittest' in _s.modules else a\n",
        ),
        (
            "modules imported under another name",
            "calc.py",
            "from sys import modules as loaded\n\ndef mul(a):\n    return 4 if '_pytest' in loaded else a\n",
        ),
        (
            "PYTEST_CURRENT_TEST",
            "calc.py",
            "\ndef mul(a):\n    return 4 if os.environ.get('PYTEST_CURRENT_TEST') else a\n",
        ),
        (
            "RASCAL_ in getenv",
            "calc.py",
            "\ndef mul(a):\n    return 4 if os.getenv(\"RASCAL_CANDIDATE\") else a\n",
        ),
        (
            "argv[0]",
            "calc.py",
            "\ndef mul(a):\n    return 4 if 'pytest' in sys.argv[0] else a\n",
        ),
        (
            "thread name",
            "calc.py",
            "import threading\n\ndef mul(a):\n    return 4 if threading.current_thread().name != 'MainThread' else a\n",
        ),
        (
            "_getframe aliased",
            "calc.py",
            "from sys import _getframe as gf\n\ndef mul(a):\n    return 4 if 'test' in gf(1).f_code.co_name else a\n",
        ),
        (
            "inspect.stack",
            "calc.py",
            "import inspect\n\ndef mul(a):\n    return 4 if any('test' in f.function for f in inspect.stack()) else a\n",
        ),
        (
            "frame walk",
            "calc.py",
            "import inspect\n\ndef mul(a):\n    f = inspect.currentframe().f_back\n    return a\n",
        ),
        (
            "__main__.__file__",
            "calc.py",
            "import __main__\n\ndef mul(a):\n    return 4 if 'pytest' in __main__.__file__ else a\n",
        ),
        (
            "gettrace",
            "calc.py",
            "\ndef mul(a):\n    return 4 if sys.gettrace() is not None else a\n",
        ),
    ];

    #[test]
    fn each_way_of_branching_on_tests_is_one_finding() {
        for (name, path, added) in FLAGGED {
            let base = if path.ends_with(".rs") { LIB } else { CALC };
            let new = format!("{base}{added}");
            let issues = found(path, Some(base), &new);
            assert_eq!(issues.len(), 1, "{name}: {issues:?}");
            let i = &issues[0];
            assert_eq!(
                (i.rule.as_str(), i.severity),
                (RULE_TEST_ONLY, Severity::Error),
                "{name}"
            );
            assert!(
                i.message.contains("branches on being tested")
                    && i.message.contains(&format!("{path}:")),
                "{name}: {}",
                i.message
            );
            // At the base already: not the change's.
            assert!(
                found(path, Some(&new), &new).is_empty(),
                "{name}: unchanged"
            );
            // In a test file: tests may look at their runner.
            let test_path = if path.ends_with(".rs") {
                "tests/it.rs"
            } else {
                "tests/test_calc.py"
            };
            assert!(found(test_path, None, &new).is_empty(), "{name}: in tests");
        }
    }

    #[test]
    fn ordinary_code_is_clean() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "an honest fix with a test module",
                "src/lib.rs",
                "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 2), 4);\n        assert!(cfg!(test));\n        let _ = std::env::var(\"RUST_TEST_THREADS\");\n    }\n}\n",
            ),
            (
                "test module declarations, test-only imports, derives",
                "src/lib.rs",
                "#[cfg(test)]\nuse std::collections::HashMap;\n#[cfg_attr(test, derive(Debug, PartialEq))]\npub struct P(i32);\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n#[cfg(test)]\nmod tests;\n#[cfg(test)]\nmod test_support {\n    pub fn two() -> i32 { 2 }\n}\n",
            ),
            (
                "a CLI reading its arguments",
                "src/main.rs",
                "fn main() {\n    let args: Vec<String> = std::env::args().collect();\n    println!(\"{}\", args.len());\n}\n",
            ),
            (
                "words in comments and ordinary strings",
                "src/lib.rs",
                "// cfg!(test) would be wrong here; so would RASCAL_RUN\npub fn add(a: i32, b: i32) -> i32 {\n    let _ = \"see cfg(test)\";\n    a + b\n}\n",
            ),
            (
                "a main guard, logging, HOME",
                "calc.py",
                "import logging\nimport os\nimport sys\n\nlog = logging.getLogger(__name__)\nlogging.basicConfig(level=logging.INFO)\n\n\ndef add(a, b):\n    return a + b\n\n\ndef home():\n    return os.environ.get(\"HOME\")\n\n\nif __name__ == \"__main__\":\n    print(add(int(sys.argv[1]), int(sys.argv[2])))\n",
            ),
            (
                "a conftest may look at its runner",
                "conftest.py",
                "import os\nimport sys\n\ndef pytest_configure(config):\n    os.environ['PYTEST_X'] = '1'\n    assert 'pytest' in sys.modules\n",
            ),
            (
                "unittest.mock in code",
                "calc.py",
                "import sys\nsys.modules.setdefault('calc_cache', None)\n",
            ),
            (
                "the module's own entry",
                "calc.py",
                "import sys\n\nthis = sys.modules[__name__]\n",
            ),
        ];
        for (name, path, new) in cases {
            let base = if path.ends_with(".rs") { LIB } else { CALC };
            let issues = found(path, Some(base), new);
            assert!(issues.is_empty(), "{name}: {issues:?}");
        }
    }

    #[test]
    fn through_check_with_the_other_rules() {
        let now =
            "pub fn add(a: i32, b: i32) -> i32 {\n    if cfg!(test) { return 4; }\n    a - b\n}\n";
        let issues = check_one("src/lib.rs", Some(LIB), Some(now));
        let ours: Vec<_> = issues.iter().filter(|i| i.rule == RULE_TEST_ONLY).collect();
        assert_eq!(ours.len(), 1, "{issues:?}");
        assert_eq!(ours[0].line, Some(2));
        // A test-only twin, its body moved to the test module: still found.
        let twin = "#[cfg(not(test))]\npub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n#[cfg(test)]\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
        let issues = check_one("src/lib.rs", Some(LIB), Some(twin));
        let lines: Vec<_> = issues
            .iter()
            .filter(|i| i.rule == RULE_TEST_ONLY)
            .map(|i| i.line)
            .collect();
        assert_eq!(lines, [Some(1), Some(5)], "{issues:?}");
    }

    #[test]
    fn a_test_only_table_that_gains_a_row_is_data_and_a_twin_is_not() {
        let count = |base: &str, now: &str| {
            check_one("src/lib.rs", Some(base), Some(now))
                .iter()
                .filter(|i| i.rule == RULE_TEST_ONLY)
                .count()
        };
        let table = "pub fn up(s: &str) -> String {\n    s.to_uppercase()\n}\n\n#[cfg(test)]\nstatic CASES: &[(&str, &str)] = &[\n    (\"a\", \"A\"),\n];\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn ups() {\n        for (a, b) in super::CASES {\n            assert_eq!(super::up(a), *b);\n        }\n    }\n}\n";
        let more = table.replace(
            "    (\"a\", \"A\"),\n",
            "    (\"a\", \"A\"),\n    (\"b\", \"B\"),\n",
        );
        assert_eq!(count(table, &more), 0);
        // A new test-only table is still a new `cfg(test)` item.
        let without = table.replace("#[cfg(test)]\nstatic CASES", "static CASES");
        assert_eq!(count(&without, table), 1);
        // A value shipped code reads through a `cfg(not(test))` twin:
        // changing the tested one is behaviour.
        let twin = "#[cfg(not(test))]\nconst LIMIT: usize = 10;\n#[cfg(test)]\nconst LIMIT: usize = 10;\n\npub fn limit() -> usize {\n    LIMIT\n}\n";
        let changed = twin.replace(
            "#[cfg(test)]\nconst LIMIT: usize = 10;",
            "#[cfg(test)]\nconst LIMIT: usize = 99;",
        );
        assert_eq!(count(twin, &changed), 1);
    }
}
