//! Backstop rules, cheap and lexical, for what running the tests cannot
//! see: the code under test runs in the runner's own process, so code that
//! runs before `main`, ends the process early, prints a runner's result
//! lines, or quietly redefines what a test calls can make a run look like
//! a pass.
//!
//! Each rule reads the TOKENS of a file (comments and whitespace are not
//! tokens, a string literal is one), the whole file at the base and now, so
//! a construct split over lines, with comments between its tokens, or
//! reached through an alias (`use std::process::exit as quit;`,
//! `import os as o`, `from os import _exit as e`, `e = os._exit`) reads the
//! same as its plain form. A construct is reported when the change made it
//! more frequent than at the base (keyed by what it resolves to, not by
//! its spelling), at its occurrences on the lines the change added:
//!
//! - `test-integrity/runs-before-tests` (error): code that runs before
//!   `main` (or after it): Rust `#[link_section = …]` naming a constructor
//!   or destructor section (`.init_array*`, `.preinit_array`, `.ctors*`,
//!   `__DATA,__mod_init_func`, `.CRT$XC*`/`XI*`/`XL*`, `.fini_array*`,
//!   `.dtors*`, `__mod_term_func`, `.CRT$XT*`) — also inside `unsafe(…)` or
//!   `cfg_attr(…)`, built with `concat!`, or given by a macro variable or
//!   any other non-literal — the same sections in `global_asm!`/`asm!`,
//!   `#[ctor]`/`#[dtor]` under any path or `use` alias; C
//!   `__attribute__((constructor))`/`destructor`, `[[gnu::constructor]]`,
//!   `#pragma init`, and any C string naming such a section.
//! - `test-integrity/ends-the-run` (error): code that ends the process
//!   itself, so the tests after it never report and the exit status is its
//!   choice: in Rust test code, `process::exit`/`process::abort`,
//!   `libc::_exit`/`exit`/`abort` (through `use` and `extern crate`
//!   aliases and globs); in a Go test, `os.Exit`/`syscall.Exit` (any import
//!   name) other than `os.Exit(m.Run())`; in Python anywhere, `os._exit`,
//!   `os.abort`, `os.exec*`, `os.kill`/`killpg` of its own process,
//!   `signal.signal`/`raise_signal`/`pthread_kill`, `atexit.register`,
//!   and `getattr`/`__dict__`/`vars` on `os`, `sys`, `atexit` or `signal`
//!   with a computed or concatenated name; in a Python test file also
//!   `sys.exit` and the `exit`/`quit` builtins.
//! - `test-integrity/forged-results` (error): a string a runner prints as a
//!   result (`test result: ok`, `... ok` at a line's end, `--- PASS:`),
//!   also assembled from pieces: adjacent literals, `+`, `concat!`,
//!   `stringify!`, and literals filling a format string's placeholders.
//! - `test-integrity/assertion-redefined` (error): a Rust macro named like
//!   a standard assertion or test macro (`assert`, `assert_eq`,
//!   `assert_ne`, `debug_assert*`, `assert_matches`, `panic`,
//!   `unreachable`, `todo`, `unimplemented`, `matches`) by `macro_rules!`
//!   (raw names too), `macro`, `#[proc_macro] fn`, or a `use … as` rename.
//! - `test-integrity/shadowed` (error): a function in a Rust test module
//!   with the name of a function of the code under test in the same file:
//!   the tests call the copy, not the code.
//! - `test-integrity/patches-runner` (error): Python that reaches into the
//!   test runner from inside its process. In code under test (not a test
//!   file): importing `pytest`, `_pytest`, `pluggy` or `unittest` (its
//!   `mock` aside), importing a module by a computed name (`__import__`,
//!   `importlib.import_module`), and `sys.modules` used other than by a
//!   literal key or `__name__`. Anywhere: setting or deleting an attribute
//!   of the runner, `TestCase` or `builtins`/`__builtins__` (assignment,
//!   `setattr`, `object.__setattr__`, `mock.patch`/`monkeypatch.setattr`
//!   on a runner path), `setattr` with a computed name on anything but a
//!   plain local name, a runner module in `sys.modules`, the runner reached
//!   by `getattr` with a computed name or `__dict__`, `gc.get_objects`/
//!   `get_referrers`/`get_referents`, the runner's internals
//!   (`TestReport`, `pluginmanager`, `config.hook`, `ihook`, `TestResult`,
//!   `TextTestResult`, `addFailure`, `addSuccess`, …; not in a
//!   `conftest.py`, which is runner configuration anyway), `ctypes` that
//!   loads the process's own C library or `pythonapi` or calls an exit,
//!   and `faulthandler`'s private crash functions. Importing the runner in
//!   a test file is normal and not reported.
//!
//! A Rust `extern crate x as std;` (or `core`, `alloc`, `test`, or
//! `extern crate self as std`), `use x as std;` or `mod std` is a
//! `test-integrity/runner-config` error: the `std::` paths the tests and
//! assertions name resolve to it.

use super::{FileVersions, Finding};
use forged::forged;
use go_and_c::{c, go};
use python::python;
use rascal_core::model::verdict::{Issue, Severity};
use rust::rust;
use std::collections::{HashMap, HashSet};
use stream::Stream;

mod forged;
mod go_and_c;
mod python;
mod python_chain;
mod rust;
mod stream;

pub const RULE_RUNS_BEFORE: &str = "test-integrity/runs-before-tests";
pub const RULE_ENDS_RUN: &str = "test-integrity/ends-the-run";
pub const RULE_FORGED: &str = "test-integrity/forged-results";
pub const RULE_ASSERT_MACRO: &str = "test-integrity/assertion-redefined";
pub const RULE_SHADOWED: &str = "test-integrity/shadowed";
pub const RULE_PATCHES_RUNNER: &str = "test-integrity/patches-runner";

/// Standard assertion and test macros (sorted).
const ASSERT_NAMES: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_matches",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_matches",
    "debug_assert_ne",
    "matches",
    "panic",
    "todo",
    "unimplemented",
    "unreachable",
];

/// Crate names whose stand-in changes what `std::…` paths mean.
const STD_NAMES: &[&str] = &["alloc", "core", "std", "test"];

/// Nesting deeper than this is not looked into (use trees, getattr chains).
const MAX_NEST: usize = 16;

/// Whether this rule set reads `path` (source files that can run in a test
/// process).
pub(super) fn reads(path: &str) -> bool {
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    matches!(
        ext,
        "rs" | "py" | "go" | "c" | "cc" | "cpp" | "cxx" | "h" | "hpp"
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Rust,
    Python,
    Go,
    C,
}

fn lang(path: &str) -> Option<Lang> {
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    Some(match ext {
        "rs" => Lang::Rust,
        "py" => Lang::Python,
        "go" => Lang::Go,
        "c" | "cc" | "cpp" | "cxx" | "h" | "hpp" => Lang::C,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------
// What each rule finds.

/// One occurrence of a construct a rule reports.
struct Hit {
    rule: &'static str,
    /// What it is, independent of spelling and place (with its context
    /// where that matters): occurrences are counted by it.
    key: String,
    /// Byte span in the file.
    s: usize,
    e: usize,
    msg: String,
}

/// Where a file stands: its path, whether it is a test file, and (Rust) the
/// spans of its test modules.
struct Ctx<'p> {
    path: &'p str,
    test_file: bool,
    test_spans: Vec<(usize, usize)>,
}

impl Ctx<'_> {
    fn in_tests(&self, offset: usize) -> bool {
        self.test_file
            || self
                .test_spans
                .iter()
                .any(|(a, b)| *a <= offset && offset < *b)
    }
}

struct Hits<'s, 'a> {
    st: &'s Stream<'a>,
    out: Vec<Hit>,
}

impl Hits<'_, '_> {
    /// A hit over tokens `a..b`; `msg` gets the construct's text.
    fn push(
        &mut self,
        rule: &'static str,
        key: String,
        a: usize,
        b: usize,
        msg: impl Fn(&str) -> String,
    ) {
        let b = b.min(self.st.len());
        let (Some(first), Some(last)) = (self.st.t.get(a), self.st.t.get(b.max(a + 1) - 1)) else {
            return;
        };
        // Shown: at most a few hundred bytes of it.
        let text = self.st.src.text;
        let mut cut = last.e.min(first.s + 320).min(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let shown = super::short(self.st.src.slice(first.s, cut));
        self.out.push(Hit {
            rule,
            key: format!("{rule}|{key}"),
            s: first.s,
            e: last.e,
            msg: msg(&shown),
        });
    }
}

/// The hits in one version of a file (`test_spans`: its Rust test
/// modules).
fn hits(path: &str, text: &str, test_spans: Vec<(usize, usize)>) -> Vec<Hit> {
    let Some(lang) = lang(path) else {
        return Vec::new();
    };
    let st = Stream::new(text, lang);
    let ctx = Ctx {
        path,
        test_file: super::is_test_path(path),
        test_spans,
    };
    let mut h = Hits {
        st: &st,
        out: Vec::new(),
    };
    match lang {
        Lang::Rust => rust(&mut h, &ctx),
        Lang::Python => python(&mut h, &ctx),
        Lang::Go => go(&mut h, &ctx),
        Lang::C => c(&mut h),
    }
    forged(&mut h);
    h.out
}

fn before_msg(runs_before: bool) -> impl Fn(&str) -> String {
    move |t| {
        let when = if runs_before { "before" } else { "after" };
        format!("code that runs {when} `main` was added (`{t}`): it can print or decide a test run's results")
    }
}

fn ends_msg(why: &'static str) -> impl Fn(&str) -> String {
    move |t| {
        format!("{why} (`{t}`): the tests after it never report, and the exit status is its choice")
    }
}

fn patch_msg(why: &'static str) -> impl Fn(&str) -> String {
    move |t| format!("{why} (`{t}`): the runner reports what the code in its process lets it")
}

// ---------------------------------------------------------------------------
// Reporting.

/// The lines `new` adds to `base` (1-based line numbers in `new`), by
/// content: a line moved is not added.
fn added_lines(base: Option<&str>, new: &str) -> Vec<u32> {
    let mut left: HashMap<&str, usize> = HashMap::new();
    for l in base.unwrap_or("").lines() {
        *left.entry(l.trim()).or_default() += 1;
    }
    let mut out = Vec::new();
    for (i, l) in new.lines().enumerate() {
        match left.get_mut(l.trim()) {
            Some(n) if *n > 0 => *n -= 1,
            _ => out.push(u32::try_from(i + 1).unwrap_or(u32::MAX)),
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
    let old_path = f.old_path.unwrap_or(f.path);
    let base = f
        .base
        .filter(|b| b.len() <= super::MAX_FILE_BYTES && reads(old_path));
    let spans = |path: &str, text: &str| {
        if lang(path) == Some(Lang::Rust) {
            super::base_tests::rust_test_modules(text)
        } else {
            Vec::new()
        }
    };
    let new_spans = spans(f.path, new);
    let base_spans = base.map(|b| spans(old_path, b)).unwrap_or_default();
    let now = hits(f.path, new, new_spans.clone());
    let base_hits = base
        .map(|b| hits(old_path, b, base_spans.clone()))
        .unwrap_or_default();
    let mut at_base: HashMap<&str, usize> = HashMap::new();
    for h in &base_hits {
        *at_base.entry(h.key.as_str()).or_default() += 1;
    }
    let added = added_lines(f.base, new);
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(new.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let line = |offset: usize| {
        u32::try_from(line_starts.partition_point(|&s| s <= offset)).unwrap_or(u32::MAX)
    };
    let touches = |h: &Hit| {
        let (a, b) = (line(h.s), line(h.e.saturating_sub(1).max(h.s)));
        let k = added.partition_point(|&l| l < a);
        added.get(k).is_some_and(|&l| l <= b)
    };
    let mut order: Vec<&str> = Vec::new();
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, h) in now.iter().enumerate() {
        let g = groups.entry(h.key.as_str()).or_default();
        if g.is_empty() {
            order.push(h.key.as_str());
        }
        g.push(k);
    }
    let mut chosen: Vec<usize> = Vec::new();
    for key in order {
        let idx = &groups[key];
        let excess = idx
            .len()
            .saturating_sub(at_base.get(key).copied().unwrap_or(0));
        if excess == 0 {
            continue;
        }
        let mut pick: Vec<usize> = idx
            .iter()
            .copied()
            .filter(|&k| touches(&now[k]))
            .take(excess)
            .collect();
        for &k in idx.iter().rev() {
            if pick.len() >= excess {
                break;
            }
            if !pick.contains(&k) {
                pick.push(k);
            }
        }
        chosen.extend(pick);
    }
    chosen.sort_by_key(|&k| now[k].s);
    let mut seen: HashSet<(&str, u32)> = HashSet::new();
    for k in chosen {
        let h = &now[k];
        let at = line(h.s);
        if seen.insert((h.rule, at)) {
            out.push(Finding::file(
                Issue::new(h.rule, Severity::Error, h.msg.clone()).at(f.path, Some(at)),
                &[f.path],
            ));
        }
    }
    if lang(f.path) == Some(Lang::Rust) {
        shadowed(
            f,
            new,
            &new_spans,
            base.map(|b| (b, base_spans.as_slice())),
            out,
        );
    }
}

/// `fn name` items (offset of `fn`, name), read from tokens.
fn fn_names(text: &str) -> Vec<(usize, String)> {
    let st = Stream::new(text, Lang::Rust);
    (0..st.len())
        .filter(|&i| st.is(i, "fn"))
        .filter_map(|i| st.word(i + 1).map(|w| (st.t[i].s, w.to_string())))
        .collect()
}

/// Functions of a Rust test module named like code of the same file (not
/// so at the base).
fn shadowed(
    f: &FileVersions,
    new: &str,
    spans: &[(usize, usize)],
    base: Option<(&str, &[(usize, usize)])>,
    out: &mut Vec<Finding>,
) {
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
    let at_base: HashSet<String> = base
        .map(|(b, spans)| {
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
mod tests;
