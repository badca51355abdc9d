//! Backstop rules, cheap and lexical, for what running the tests cannot
//! see: the code under test runs in the runner's own process, so code that
//! runs before `main`, ends the process early, prints a runner's result
//! lines, or quietly redefines what a test calls can make a run look like
//! a pass. Each rule reads the lines a change adds (comments skipped):
//!
//! - `test-integrity/runs-before-tests` (error): a constructor that runs
//!   before `main` (Rust `#[link_section = ".init_array"]`, `#[ctor]`;
//!   C `__attribute__((constructor))`).
//! - `test-integrity/ends-the-run` (error): test code that ends the process
//!   itself (`std::process::exit` in a Rust test, `os.Exit` in a Go test,
//!   `os._exit` or an `atexit` hook in Python), so the tests after it never
//!   report and the exit status is the test's choice.
//! - `test-integrity/forged-results` (error): a string a runner prints as a
//!   result (`test result: ok`, `... ok`, `--- PASS:`), written by the code.
//! - `test-integrity/assertion-redefined` (error): a macro named like a
//!   standard assertion (`macro_rules! assert_eq`).
//! - `test-integrity/shadowed` (error): a function in a Rust test module
//!   with the name of a function of the code under test in the same file:
//!   the tests call the copy, not the code.
//! - `test-integrity/patches-runner` (error): Python that reaches into the
//!   test runner from inside its process — code under test (not a test
//!   file) importing `pytest`, `_pytest` or `unittest`; any code setting an
//!   attribute of them or of `TestCase` (`unittest.TestCase.assertEqual =
//!   …`, `setattr(TestCase, …)`), replacing them in `sys.modules`, or
//!   ending the process through `ctypes`. Running the tests cannot see
//!   this: the runner it patches is the one reporting.

use super::{FileVersions, Finding};
use crate::model::verdict::{Issue, Severity};
use std::collections::{HashMap, HashSet};

pub const RULE_RUNS_BEFORE: &str = "test-integrity/runs-before-tests";
pub const RULE_ENDS_RUN: &str = "test-integrity/ends-the-run";
pub const RULE_FORGED: &str = "test-integrity/forged-results";
pub const RULE_ASSERT_MACRO: &str = "test-integrity/assertion-redefined";
pub const RULE_SHADOWED: &str = "test-integrity/shadowed";
pub const RULE_PATCHES_RUNNER: &str = "test-integrity/patches-runner";

/// Why the added Python line `squeezed` (whitespace taken out) reaches
/// into the test runner, if it does (`in_tests`: it is in a test file).
fn patches_runner(squeezed: &str, in_tests: bool) -> Option<&'static str> {
    const RUNNERS: [&str; 3] = ["pytest", "_pytest", "unittest"];
    let imports = RUNNERS.iter().any(|r| {
        squeezed.starts_with(&format!("import{r}"))
            || squeezed.starts_with(&format!("from{r}"))
            || squeezed.contains(&format!("__import__(\"{r}"))
            || squeezed.contains(&format!("__import__('{r}"))
    });
    if imports
        && !in_tests
        && !squeezed.starts_with("fromunittestimportmock")
        && !squeezed.starts_with("fromunittest.mock")
        && !squeezed.starts_with("importunittest.mock")
    {
        return Some("the code under test imports the test runner");
    }
    let target = |t: &str| {
        RUNNERS.iter().any(|r| t.starts_with(&format!("{r}."))) || t.starts_with("TestCase.")
    };
    // An assignment: an `=` outside brackets (not a keyword argument, not
    // a comparison).
    let mut depth = 0i32;
    let eq = squeezed.char_indices().find(|&(_, c)| {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        c == '=' && depth == 0
    });
    if let Some((at, _)) = eq {
        let (lhs, rhs) = (&squeezed[..at], &squeezed[at + 1..]);
        let assigns = !rhs.starts_with('=') && !lhs.ends_with(['!', '<', '>', '=']);
        if assigns && lhs.split(',').any(target) {
            return Some("it sets an attribute of the test runner");
        }
    }
    if let Some(args) = squeezed.split_once("setattr(").map(|(_, a)| a) {
        if target(args)
            || RUNNERS
                .iter()
                .chain(&["TestCase"])
                .any(|r| args.starts_with(&format!("{r},")))
        {
            return Some("it sets an attribute of the test runner");
        }
    }
    if squeezed.contains("sys.modules[")
        && RUNNERS
            .iter()
            .any(|r| squeezed.contains(&format!("[\"{r}")) || squeezed.contains(&format!("['{r}")))
    {
        return Some("it replaces the test runner in `sys.modules`");
    }
    if squeezed.contains("ctypes") && squeezed.contains("exit") {
        return Some("it ends the process through `ctypes`");
    }
    None
}

/// Whether this rule set reads `path` (source files that can run in a test
/// process).
pub(super) fn reads(path: &str) -> bool {
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    matches!(
        ext,
        "rs" | "py" | "go" | "c" | "cc" | "cpp" | "cxx" | "h" | "hpp"
    )
}

/// The lines `new` adds to `base` (1-based line numbers in `new`), by
/// content: a line moved is not added.
fn added_lines<'a>(base: Option<&str>, new: &'a str) -> Vec<(u32, &'a str)> {
    let mut left: HashMap<&str, usize> = HashMap::new();
    for l in base.unwrap_or("").lines() {
        *left.entry(l.trim()).or_default() += 1;
    }
    let mut out = Vec::new();
    for (i, l) in new.lines().enumerate() {
        let t = l.trim();
        match left.get_mut(t) {
            Some(n) if *n > 0 => *n -= 1,
            _ => out.push((i as u32 + 1, t)),
        }
    }
    out
}

/// The findings for one changed file.
pub(super) fn check(f: &FileVersions, out: &mut Vec<Finding>) {
    let Some(new) = f.new else {
        return;
    };
    if !reads(f.path) || new.len() > super::MAX_FILE_BYTES {
        return;
    }
    let ext = f.path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    let is_test_file = super::is_test_path(f.path);
    let mut push = |rule: &str, line: u32, msg: String| {
        out.push(Finding::file(
            Issue::new(rule, Severity::Error, msg).at(f.path, Some(line)),
            &[f.path],
        ));
    };
    let test_spans = if ext == "rs" {
        super::base_tests::rust_test_modules(new)
    } else {
        Vec::new()
    };
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(new.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let in_test_module = |line: u32| {
        let at = line_starts.get(line as usize - 1).copied().unwrap_or(0);
        test_spans.iter().any(|(a, b)| *a <= at && at < *b)
    };
    for (line, text) in added_lines(f.base, new) {
        if text.starts_with("//") || text.starts_with('#') && ext == "py" {
            continue;
        }
        let squeezed: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let before_main = squeezed.contains("link_section")
            && ["init_array", "ctors", "CRT$X"]
                .iter()
                .any(|s| squeezed.contains(s))
            || squeezed.starts_with("#[ctor")
            || squeezed.contains("ctor::ctor")
            || squeezed.contains("__attribute__((constructor");
        if before_main {
            push(
                RULE_RUNS_BEFORE,
                line,
                format!("code that runs before `main` was added (`{}`): it can print or decide a test run's results", super::short(text)),
            );
        }
        let in_tests = is_test_file || (ext == "rs" && in_test_module(line));
        let ends = match ext {
            "rs" => {
                in_tests
                    && (squeezed.contains("process::exit(") || squeezed.contains("libc::_exit("))
            }
            "go" => is_test_file && squeezed.contains("os.Exit("),
            "py" => {
                squeezed.contains("os._exit(") || (in_tests && squeezed.contains("atexit.register"))
            }
            _ => false,
        };
        if ends {
            push(
                RULE_ENDS_RUN,
                line,
                format!("test code ends the process itself (`{}`): the tests after it never report, and the exit status is its choice", super::short(text)),
            );
        }
        if ext == "py" {
            if let Some(why) = patches_runner(&squeezed, is_test_file) {
                push(
                    RULE_PATCHES_RUNNER,
                    line,
                    format!(
                        "{why} (`{}`): the runner reports what the code in its process lets it",
                        super::short(text)
                    ),
                );
            }
        }
        let forged = ["test result: ok", "... ok\"", "... ok\\n", "--- PASS:"]
            .iter()
            .any(|s| text.contains(s));
        if forged {
            push(
                RULE_FORGED,
                line,
                format!("the code writes a test runner's result line (`{}`): results are read from the runner, not from the code", super::short(text)),
            );
        }
        if ext == "rs" {
            if let Some(rest) = squeezed.strip_prefix("macro_rules!") {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if name.starts_with("assert") || name.starts_with("debug_assert") || name == "panic"
                {
                    push(
                        RULE_ASSERT_MACRO,
                        line,
                        format!("a macro named `{name}!` was defined: it replaces the standard assertion in the code that sees it"),
                    );
                }
            }
        }
    }
    if ext == "rs" {
        shadowed(f, new, &test_spans, out);
    }
}

/// `fn name` items in `text[a..b]` (lexically: `fn` followed by a name).
fn fn_names(text: &str) -> Vec<(usize, String)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for (i, _) in text.match_indices("fn ") {
        let boundary = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if !boundary {
            continue;
        }
        let name: String = text[i + 3..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.push((i, name));
        }
    }
    out
}

/// Functions of a Rust test module named like code of the same file (not
/// so at the base).
fn shadowed(f: &FileVersions, new: &str, spans: &[(usize, usize)], out: &mut Vec<Finding>) {
    if spans.is_empty() {
        return;
    }
    let inside = |i: usize| spans.iter().any(|(a, b)| *a <= i && i < *b);
    let all = fn_names(new);
    let code: HashSet<&str> = all
        .iter()
        .filter(|(i, _)| !inside(*i))
        .map(|(_, n)| n.as_str())
        .collect();
    let at_base: HashSet<String> = f
        .base
        .map(|b| {
            let spans = super::base_tests::rust_test_modules(b);
            fn_names(b)
                .into_iter()
                .filter(|(i, _)| spans.iter().any(|(a, z)| a <= i && i < z))
                .map(|(_, n)| n)
                .collect()
        })
        .unwrap_or_default();
    for (i, name) in all.iter().filter(|(i, _)| inside(*i)) {
        if code.contains(name.as_str()) && !at_base.contains(name) && name != "main" {
            let line = new[..*i].matches('\n').count() as u32 + 1;
            out.push(Finding::file(
                Issue::new(
                    RULE_SHADOWED,
                    Severity::Error,
                    format!("the test module defines its own `{name}`, shadowing the code under test's `{name}`: its tests check the copy"),
                )
                .at(f.path, Some(line)),
                &[f.path],
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(path: &str, base: Option<&str>, new: &str) -> Vec<String> {
        let mut out = Vec::new();
        check(
            &FileVersions {
                path,
                old_path: None,
                base,
                new: Some(new),
            },
            &mut out,
        );
        out.into_iter().map(|f| f.issue.rule).collect()
    }

    const BASE: &str = "pub fn add(a: i32, b: i32) -> i32 { a - b }\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() { assert_eq!(add(2, 2), 4); }\n}\n";

    #[test]
    fn each_trick_is_found_by_its_rule() {
        let cases: &[(&str, &str, &str, &str)] = &[
            (
                "init-array",
                "src/lib.rs",
                "#[used]\n#[link_section = \".init_array\"]\nstatic I: extern \"C\" fn() = f;\n",
                RULE_RUNS_BEFORE,
            ),
            (
                "ctor",
                "src/lib.rs",
                "#[ctor::ctor]\nfn f() {}\n",
                RULE_RUNS_BEFORE,
            ),
            (
                "c-constructor",
                "native/x.c",
                "__attribute__((constructor)) static void f(void) {}\n",
                RULE_RUNS_BEFORE,
            ),
            (
                "exit-in-test",
                "src/lib.rs",
                "#[cfg(test)]\nmod more {\n    #[test]\n    fn z() { std::process::exit(0) }\n}\n",
                RULE_ENDS_RUN,
            ),
            (
                "py-exit",
                "tests/test_x.py",
                "import atexit, os\natexit.register(lambda: os._exit(0))\n",
                RULE_ENDS_RUN,
            ),
            (
                "go-exit",
                "x_test.go",
                "func TestMain(m *testing.M) { m.Run(); os.Exit(0) }\n",
                RULE_ENDS_RUN,
            ),
            (
                "forged",
                "src/lib.rs",
                "fn f() { println!(\"test tests::adds ... ok\"); }\n",
                RULE_FORGED,
            ),
            (
                "macro",
                "src/lib.rs",
                "#[cfg(test)]\nmod t {\n    macro_rules! assert_eq { ($($t:tt)*) => {} }\n}\n",
                RULE_ASSERT_MACRO,
            ),
            (
                "py-import-runner",
                "calc.py",
                "import unittest\n",
                RULE_PATCHES_RUNNER,
            ),
            (
                "py-from-pytest",
                "calc.py",
                "from _pytest import runner\n",
                RULE_PATCHES_RUNNER,
            ),
            (
                "py-setattr",
                "tests/test_x.py",
                "setattr(unittest.TestCase, 'assertEqual', lambda *a: None)\n",
                RULE_PATCHES_RUNNER,
            ),
            (
                "py-assign",
                "test_x.py",
                "unittest.TestCase.assertEqual = lambda *a, **k: None\n",
                RULE_PATCHES_RUNNER,
            ),
            (
                "py-ctypes-exit",
                "calc.py",
                "ctypes.CDLL(None)._exit(0)\n",
                RULE_PATCHES_RUNNER,
            ),
            (
                "py-sys-modules",
                "calc.py",
                "sys.modules['pytest'] = fake\n",
                RULE_PATCHES_RUNNER,
            ),
        ];
        for (name, path, added, rule) in cases {
            let new = format!("{BASE}{added}");
            let found = rules(path, Some(BASE), &new);
            assert!(
                found.iter().any(|r| r == rule),
                "{name}: want {rule}, got {found:?}"
            );
            assert!(
                rules(path, Some(&new), &new).is_empty(),
                "{name}: unchanged is clean"
            );
        }
    }

    #[test]
    fn a_test_module_copy_of_the_code_under_test_is_shadowing() {
        let new = BASE.replace(
            "    use super::*;\n",
            "    use super::*;\n    fn add(a: i32, b: i32) -> i32 { a + b }\n",
        );
        assert_eq!(rules("src/lib.rs", Some(BASE), &new), vec![RULE_SHADOWED]);
        // A helper with a name of its own is fine.
        let helper = BASE.replace(
            "    use super::*;\n",
            "    use super::*;\n    fn two() -> i32 { 2 }\n",
        );
        assert!(rules("src/lib.rs", Some(BASE), &helper).is_empty());
    }

    #[test]
    fn ordinary_changes_are_clean() {
        let new = BASE.replace("a - b", "a + b").replace(
            "fn adds() { assert_eq!(add(2, 2), 4); }",
            "fn adds() { assert_eq!(add(2, 2), 4); }\n    #[test]\n    fn adds_more() { assert_eq!(add(1, 2), 3); }",
        );
        assert!(rules("src/lib.rs", Some(BASE), &new).is_empty());
        let py = "import os\n\ndef test_x():\n    assert os.getcwd()\n";
        assert!(rules("tests/test_x.py", None, py).is_empty());
        // Tests import their runner and use its assertions; code may mock.
        let tests = "import unittest\nimport pytest\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        self.assertEqual(1, 1)\n        assert type(self) != unittest.TestCase\n";
        assert!(rules("tests/test_x.py", None, tests).is_empty());
        let code = "from unittest import mock\nimport sys\nsys.modules['calc_cache'] = None\n";
        let skip = "import pytest\npytest.skip(\"later\", allow_module_level=True)\n";
        assert!(!rules("tests/test_x.py", None, skip)
            .iter()
            .any(|r| r == RULE_PATCHES_RUNNER));
        assert!(rules("calc.py", None, code).is_empty());
    }
}
