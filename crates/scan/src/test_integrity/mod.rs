//! Test integrity: does a candidate change make the tests pass by weakening
//! them? A pure comparison of each changed test file and runner setting at
//! the base and now, for Rust, Python, Go, JavaScript/TypeScript and (skip
//! markers only) Java/Kotlin. No I/O: the pipeline hands in file contents.
//!
//! What it reports, with these rules:
//! - `test-integrity/removed-test` (error): a test at the base is gone now —
//!   its function deleted or no longer marked as a test, its file deleted or
//!   renamed to a path the runner does not collect, a Rust `mod x;` holding
//!   tests no longer declared. Tests are matched across files by name, so a
//!   test moved to another changed file is not a removal.
//! - `test-integrity/skip-marker`: a skip added to a test (`#[ignore]`,
//!   an always-false `cfg` on it, its module or file, `@pytest.mark.skip`,
//!   `t.Skip()`, `it.skip`, `@Disabled`, …): an error on a test that existed
//!   at the base, a warning on a new one; platform-dependent conditions
//!   (`#[cfg(windows)]`, `//go:build linux`) are errors on an existing
//!   test too (the test may no longer run here) and info on a new one. A focus marker (`it.only`, `fit`) is an error when the file had
//!   tests at the base, as it skips the file's other tests.
//! - `test-integrity/assertions-removed` (error): a test has fewer
//!   assertions than at the base. Counting cannot tell assertions moved
//!   into a helper from assertions deleted; an allow entry settles it.
//! - `test-integrity/early-return` (error; warning on a new test): the first
//!   statement of a test body is `return`.
//! - `test-integrity/expected-changed` (warning, for a human): an assertion
//!   kept its shape but a literal in it changed (`assert_eq!(f(), 4)` →
//!   `assert_eq!(f(), 5)`). A Rust test that gained `#[should_panic]` is
//!   an error: it now passes when the code panics.
//! - `test-integrity/runner-config` (error): a change to what decides how
//!   tests run (see `runner.rs`).
//! - `test-integrity/not-checked` (warning): a file too large to read here.
//! - Backstop rules for what running the tests cannot see (code that runs
//!   before `main`, test code that ends the process, forged result lines,
//!   redefined assertions, shadowed functions): see `backstop.rs`.
//! - `test-integrity/reads-source` (error): test code the change adds that
//!   reads the code's source text (`include_str!("../src/lib.rs")`,
//!   `inspect.getsource`, `open(mod.__file__)`) instead of running it: see
//!   `reads_source.rs`.
//! - `test-integrity/test-only-behaviour` (error): code under test the
//!   change makes branch on being tested (`cfg!(test)`, `#[cfg(not(test))]`,
//!   `"pytest" in sys.modules`, `PYTEST_CURRENT_TEST`): see `test_only.rs`.
//!
//! `allow_test_changes` entries are path globs (gitignore-like, as in
//! permissions) or test names (full or last segment, or a glob over the full
//! name). A finding on an allowed path, or whose tests are all allowed, is
//! kept but downgraded to info, so the allowance leaves a trace.
//!
//! With a test ledger (the runner's own listing at the base and now), a name
//! listed at the base and missing now is a removed test, and one ignored now
//! but not at the base a skip — unless the static comparison already said so
//! for a test of that name, or the listing shows it moved (same last
//! segment under a new path).
//!
//! Reading is lexical (comments and strings blanked, brackets paired), not
//! parsing: see each language file for what it recognises and misses.

mod backstop;
mod base_tests;
mod doctests;
mod go;
mod js;
mod jvm;
mod lex;
mod mutate;
mod mutate_go;
mod mutate_java;
mod mutate_js;
mod mutate_parts;
mod mutate_python;
mod own_words;
mod python;
mod reads_source;
mod runner;
mod rust;
mod stub;
mod test_data;
mod test_only;

pub use base_tests::{in_rust_test_module, is_data, is_test_path, with_base_test_modules};
pub use doctests::{unplaced, with_base_doctests};
pub use mutate::{mutate, Mutant, Mutated, JS_EXTENSIONS};
pub use own_words::{code_of, only_theirs, test_words, Corpus};
pub use stub::without_new_code;
pub use test_data::{test_only_items, with_base_items, Words};
pub use test_only::RULE_TEST_ONLY;

use crate::config::permissions::{build_glob, GlobPattern};
use crate::model::verdict::{Issue, Severity};
use lex::{Source, Syntax, Tok};
use std::collections::{BTreeMap, HashMap, HashSet};

pub const RULE_REMOVED: &str = "test-integrity/removed-test";
pub const RULE_SKIP: &str = "test-integrity/skip-marker";
pub const RULE_ASSERTIONS: &str = "test-integrity/assertions-removed";
pub const RULE_EARLY_RETURN: &str = "test-integrity/early-return";
pub const RULE_EXPECTED: &str = "test-integrity/expected-changed";
pub const RULE_RUNNER: &str = "test-integrity/runner-config";
pub const RULE_NOT_CHECKED: &str = "test-integrity/not-checked";
pub const RULE_TEST_DATA: &str = "test-integrity/test-data-changed";

/// Files larger than this are not read (reported as not checked).
pub const MAX_FILE_BYTES: usize = 2 * 1024 * 1024;

/// Blocks nested deeper than this are not looked into.
const MAX_DEPTH: usize = 64;

/// One changed file with its whole text at the base and now (None = absent;
/// binary files are not given).
#[derive(Debug, Clone, Copy)]
pub struct FileVersions<'a> {
    pub path: &'a str,
    /// The path at the base when the file was renamed.
    pub old_path: Option<&'a str>,
    pub base: Option<&'a str>,
    pub new: Option<&'a str>,
}

/// What the test runs listed (from the runner's own listing), when known.
#[derive(Debug, Clone, Copy, Default)]
pub struct LedgerView<'a> {
    pub at_base: &'a [String],
    pub now: &'a [String],
    pub ignored_now: &'a [String],
    /// Names listed as ignored at the base (empty when unknown).
    pub ignored_at_base: &'a [String],
}

#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub files: &'a [FileVersions<'a>],
    /// The commands of the test guardrails (e.g. "cargo test", "sh
    /// scripts/test.sh", "make test"): a script or Makefile they name is
    /// runner config.
    pub test_commands: &'a [String],
    /// `allow_test_changes`: path globs or test names the task allows to
    /// change; findings on them are downgraded to info.
    pub allow: &'a [String],
    pub ledger: Option<LedgerView<'a>>,
    /// The words of the crate's Rust files at the base, when known: what
    /// finds the items only tests use (`test_data.rs`).
    pub crate_words: Option<&'a Words>,
}

/// Is this path one the analysis needs contents of (test code, build
/// scripts, runner config)? Ask for both the old and the new path of a
/// rename: a test file renamed away is still a test file at the base.
pub fn relevant(path: &str, test_commands: &[String]) -> bool {
    test_syntax(path).is_some()
        || backstop::reads(path)
        || runner::is_config(path, &runner::CommandFiles::new(test_commands))
}

/// Whether `path` decides how a check runs (toolchain selection, runner
/// configuration, a script or Makefile a command names, a module that
/// shadows the runner): every check copy takes it from the base commit.
/// Manifests (`Cargo.toml`, `package.json`, …) are not: their test settings
/// are compared instead.
pub fn decides_checks(path: &str, commands: &[String]) -> bool {
    runner::decides_checks(path, &runner::CommandFiles::new(commands))
}

/// The findings for one candidate change.
pub fn check(input: &Input) -> Vec<Issue> {
    let named = runner::CommandFiles::new(input.test_commands);
    let mut out: Vec<Finding> = Vec::new();
    for f in input.files {
        runner::check(f, &named, &mut out);
        backstop::check(f, &mut out);
    }
    reads_source::check(input.files, &mut out);
    test_only::check(input.files, &mut out);
    unplaced_examples(input.files, &mut out);
    if let Some(words) = input.crate_words {
        test_data_findings(input.files, words, &mut out);
    }
    let sides = read_tests(input.files, &mut out);
    compare(input.files, &sides, &mut out);
    if let Some(ledger) = &input.ledger {
        ledger_findings(ledger, &mut out);
    }
    let allow = Allow::new(input.allow);
    let mut issues: Vec<Issue> = out.into_iter().map(|f| allow.apply(f)).collect();
    issues.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    issues
}

/// `test-integrity/removed-test` for the doc examples of a Rust item the
/// change no longer has where the base had it (see [`doctests::unplaced`]).
fn unplaced_examples(files: &[FileVersions], out: &mut Vec<Finding>) {
    for f in files {
        let (Some(base), Some(now)) = (f.base, f.new) else {
            continue;
        };
        if !f.path.ends_with(".rs") || base.len() > MAX_FILE_BYTES || now.len() > MAX_FILE_BYTES {
            continue;
        }
        for item in unplaced(base, now) {
            let mut issue = Issue::new(
                RULE_REMOVED,
                Severity::Error,
                format!(
                    "the doc examples of `{item}` ({}) at the base have no place in the change: the item is gone or renamed, or defined where rascal cannot read it (inside a macro call), so the base's examples cannot run against it",
                    f.path
                ),
            );
            issue.path = Some(f.path.to_string());
            out.push(Finding::file(issue, &[f.path]));
        }
    }
}

/// `test-integrity/test-data-changed`: an item of a Rust or Python source
/// file that only test code uses (a table of cases, a helper) changed or
/// removed, or a file only test code reads.
fn test_data_findings(files: &[FileVersions], words: &Words, out: &mut Vec<Finding>) {
    // The words of the code (not the tests) the change's files have now:
    // code that now names an item only tests used at the base can read or
    // change what the tests check it against (skip the cases it fails,
    // truncate the table at import, pop a row when called).
    // Counted against the same files at the base: a name the code had
    // there as often (a `#[cfg(test)]` item's own definition, a top-level
    // `#[test]` function, which the word count does not tell from code) is
    // not a new use.
    let mut now_words = Words::default();
    let mut base_words = Words::default();
    for f in files {
        if is_test_path(f.path) {
            continue;
        }
        if let Some(n) = f.new.filter(|n| n.len() <= MAX_FILE_BYTES) {
            now_words.add(f.path, n);
        }
        if let Some(b) = f.base.filter(|b| b.len() <= MAX_FILE_BYTES) {
            base_words.add(f.path, b);
        }
    }
    for f in files {
        let Some(base) = f.base else { continue };
        if words.test_only_file(f.path) && f.new != Some(base) && !is_test_path(f.path) {
            // Lines removed is cases removed: an error; lines changed is
            // for a human, as an edited expected value is (the base-tests
            // run judges it by execution with the base's file).
            let (what, severity) = match f.new {
                None => ("removes", Severity::Error),
                Some(n) if n.lines().count() < base.lines().count() => {
                    ("removes lines of", Severity::Error)
                }
                Some(_) => ("changes", Severity::Warning),
            };
            let mut issue = Issue::new(
                RULE_TEST_DATA,
                severity,
                format!(
                    "the change {what} `{}`, a file only test code reads (or whose examples run as doctests): test data is part of the tests, and changing it weakens them like an edited assertion — the base's tests run with the base's version (`allow_test_changes` names data the task may change)",
                    f.path
                ),
            );
            issue.path = Some(f.path.to_string());
            out.push(Finding::file(issue, &[f.path]));
            continue;
        }
        if test_data::syntax_of(f.path).is_none() || is_test_path(f.path) {
            continue;
        }
        let items = test_only_items(f.path, base, words);
        let now = f.new.unwrap_or("");
        for it in &items {
            // More uses in the code than the base's code had: its own
            // definition is in both; a second one (`CASES = CASES[:2]`) or
            // a new reference is new.
            let count = |w: &Words| w.code.get(&it.name).copied().unwrap_or(0);
            if count(&now_words) > count(&base_words) {
                out.push(data_finding(
                    f.path,
                    it,
                    Severity::Error,
                    format!(
                        "code under test now names `{}` ({}:{}), which only test code used at the base: the code can read or change what the tests check it against",
                        it.name, f.path, it.line
                    ),
                ));
            }
        }
        for (it, gone) in test_data::changed(f.path, base, now, &items) {
            // Cases removed (the item, or rows of its table) are an error;
            // an item changed otherwise is for a human, as an edited
            // expected value is (the base-tests run judges it by execution
            // with the base's version).
            let (what, severity) = if gone {
                ("removes", Severity::Error)
            } else if test_data::shrinks(f.path, base, now, it) {
                ("removes cases from", Severity::Error)
            } else {
                ("changes", Severity::Warning)
            };
            out.push(data_finding(
                f.path,
                it,
                severity,
                format!(
                    "the change {what} `{}` ({}:{}), which only test code uses: test data is part of the tests, and changing it weakens them like an edited assertion — the base's tests run with the base's version",
                    it.name, f.path, it.line
                ),
            ));
        }
    }
}

/// A `test-integrity/test-data-changed` finding on item `it` of `path`
/// (an allowance naming the item or the path turns it into information).
fn data_finding(path: &str, it: &test_data::Item, severity: Severity, why: String) -> Finding {
    let mut issue = Issue::new(
        RULE_TEST_DATA,
        severity,
        format!("{why} (`allow_test_changes` names data the task may change)"),
    );
    issue.path = Some(path.to_string());
    issue.line = Some(it.line);
    let mut finding = Finding::file(issue, &[path]);
    finding.tests.push((it.name.clone(), it.name.clone()));
    finding
}

// ---------------------------------------------------------------------------
// What the language scanners produce.

/// Three-valued truth of a compile-time condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Truth {
    True,
    False,
    Unknown,
}

impl Truth {
    pub fn not(self) -> Truth {
        match self {
            Truth::True => Truth::False,
            Truth::False => Truth::True,
            Truth::Unknown => Truth::Unknown,
        }
    }

    /// `any(…)`: false only when every part is (and when there is none).
    pub fn any(parts: impl IntoIterator<Item = Truth>) -> Truth {
        let mut out = Truth::False;
        for p in parts {
            match p {
                Truth::True => return Truth::True,
                Truth::Unknown => out = Truth::Unknown,
                Truth::False => {}
            }
        }
        out
    }

    /// `all(…)`: true only when every part is (and when there is none).
    pub fn all(parts: impl IntoIterator<Item = Truth>) -> Truth {
        let mut out = Truth::True;
        for p in parts {
            match p {
                Truth::False => return Truth::False,
                Truth::Unknown => out = Truth::Unknown,
                Truth::True => {}
            }
        }
        out
    }
}

/// Words that name a condition nobody sets (`cfg(FALSE)`, feature
/// `"never-run"`, build tag `ignore`).
const NEVER_SET: &[&str] = &[
    "false",
    "never",
    "disabled",
    "disable",
    "off",
    "none",
    "nope",
    "nonexistent",
    "skip",
    "skipped",
    "ignore",
    "ignored",
    "broken",
    "todo",
    "fixme",
];

/// Whether a cfg name, feature or build tag is one nobody sets: one of
/// [`NEVER_SET`] whole or as its first `-`/`_` part, any case.
fn never_set(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let first = lower.split(['-', '_']).next().unwrap_or("");
    NEVER_SET.contains(&lower.as_str()) || NEVER_SET.contains(&first)
}

/// Something that stops a test from running: a skip, an always-false
/// condition, an expected failure.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Marker {
    /// What is compared between the base and now (normalized).
    pub key: String,
    /// What is shown.
    pub text: String,
    pub line: u32,
    /// On a test that existed at the base.
    pub severity: Severity,
    /// It applies only under a condition that may hold where the tests run
    /// (`skipif(…)`, `cfg(windows)`), so the test may still run.
    pub conditional: bool,
}

impl Marker {
    pub fn new(key: impl Into<String>, text: &str, line: u32, severity: Severity) -> Self {
        Marker {
            key: key.into(),
            text: short(text),
            line,
            severity,
            conditional: false,
        }
    }

    /// The same marker, applying only under a condition.
    pub fn conditional(mut self) -> Self {
        self.conditional = true;
        self
    }
}

/// One assertion: its shape with literals blanked, and the literals.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Assertion {
    pub line: u32,
    pub shape: String,
    pub literals: Vec<String>,
}

/// One test as a scanner sees it.
#[derive(Debug, Clone, Default)]
struct TestCase {
    /// Qualified within the file (`tests::adds`, `TestA::test_b`,
    /// `group > title`); for Rust under `src/`, with the module path of the
    /// file, as the runner names it.
    pub name: String,
    /// The last part of the name.
    pub leaf: String,
    pub line: u32,
    /// Markers in effect, its own and those of its module, class, group or
    /// file.
    pub markers: Vec<Marker>,
    /// `it.only`, `fit`, `describe.only` on it or a group around it.
    pub focus: Option<Marker>,
    pub assertions: Vec<Assertion>,
    /// The line of a `return` that is the body's first statement.
    pub early_return: Option<u32>,
    /// Rust `#[should_panic]`.
    pub expects_panic: bool,
    /// The body's offsets (Rust, Java, JavaScript: inside its braces, or a
    /// JavaScript arrow's expression; Python: from after the `def` line's
    /// `:` to the end of its last line), when read.
    pub body: Option<(usize, usize)>,
    /// JavaScript: the test is registered whenever its file runs (not
    /// under an `if`, a loop or a function) and its name is what the
    /// runner prints, to the letter — its title and every group's are
    /// plain string literals (no template, escape or `.each` placeholder).
    pub named_literally: bool,
}

/// A Rust `mod name;` declaration: its tests are in another file.
#[derive(Debug, Clone, Default)]
struct ModuleDecl {
    pub name: String,
    pub line: u32,
    /// Declared under `#[cfg(test)]` or named like a test module.
    pub test_like: bool,
    pub markers: Vec<Marker>,
}

/// What a scanner found in one file.
#[derive(Debug, Clone, Default)]
struct Scan {
    pub tests: Vec<TestCase>,
    pub modules: Vec<ModuleDecl>,
}

/// Build an assertion from the bracketed parts of it that are compared;
/// `drop_strings` leaves out string literals (format messages).
fn assertion(
    src: &Source,
    at: usize,
    head: &str,
    parts: &[(usize, usize)],
    drop_strings: bool,
) -> Assertion {
    let mut toks: Vec<Tok> = Vec::new();
    for (i, &(a, b)) in parts.iter().enumerate() {
        if i > 0 {
            toks.push(Tok {
                lit: false,
                text: ",".into(),
            });
        }
        src.tokens(a, b, &mut toks);
    }
    if drop_strings {
        toks.retain(|t| !(t.lit && t.text.contains(['"', '\'', '`'])));
    }
    let mut shape = head.to_string();
    let mut literals = Vec::new();
    for t in toks {
        shape.push(' ');
        if t.lit {
            shape.push('#');
            literals.push(t.text);
        } else {
            shape.push_str(&t.text);
        }
    }
    Assertion {
        line: src.line(at),
        shape,
        literals,
    }
}

/// Source text as shown in a message: one line, no control characters,
/// at most 80 columns.
fn short(text: &str) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    crate::text::ellipsis(&crate::text::sanitize(&one), 80)
}

/// Which scanner reads `path`, if it can hold tests the runner collects.
fn test_syntax(path: &str) -> Option<Syntax> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.')?.1;
    let in_dir = |d: &str| path.split('/').rev().skip(1).any(|c| c == d);
    match ext {
        "rs" => Some(Syntax::Rust),
        "py" => (name.starts_with("test") || name.ends_with("_test.py")).then_some(Syntax::Python),
        "go" => name.ends_with("_test.go").then_some(Syntax::Go),
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => (name.contains(".test.")
            || name.contains(".spec.")
            || name.contains(".cy.")
            || in_dir("__tests__")
            || in_dir("test")
            || in_dir("tests"))
        .then_some(Syntax::Js),
        "java" | "kt" | "kts" => {
            let stem = name.split('.').next().unwrap_or("");
            let named = ["Test", "Tests", "IT", "Spec"]
                .iter()
                .any(|s| stem.ends_with(s));
            (named || path.contains("src/test/")).then_some(Syntax::Jvm)
        }
        _ => None,
    }
}

fn scan(syntax: Syntax, path: &str, text: &str) -> Scan {
    match syntax {
        Syntax::Rust => rust::scan(path, text),
        Syntax::Python => python::scan(text),
        Syntax::Go => go::scan(text),
        Syntax::Js => js::scan(text),
        Syntax::Jvm => jvm::scan(text),
    }
}

// ---------------------------------------------------------------------------
// Comparing the base and now.

/// An issue and what the allow list is matched against.
struct Finding {
    pub issue: Issue,
    /// Full and last-segment names of the tests it is about.
    pub tests: Vec<(String, String)>,
    pub paths: Vec<String>,
}

impl Finding {
    pub fn file(issue: Issue, paths: &[&str]) -> Self {
        Finding {
            issue,
            tests: Vec::new(),
            paths: paths.iter().map(|p| p.to_string()).collect(),
        }
    }
}

/// One test found on one side, with where.
struct Found<'a> {
    file: usize,
    path: &'a str,
    syntax: Syntax,
    case: TestCase,
}

#[derive(Default)]
struct Sides<'a> {
    base: Vec<Found<'a>>,
    now: Vec<Found<'a>>,
    base_modules: BTreeMap<usize, Vec<ModuleDecl>>,
    now_modules: BTreeMap<usize, Vec<ModuleDecl>>,
}

fn read_tests<'a>(files: &'a [FileVersions<'a>], out: &mut Vec<Finding>) -> Sides<'a> {
    let mut sides = Sides::default();
    for (idx, f) in files.iter().enumerate() {
        let old_path = f.old_path.unwrap_or(f.path);
        let base_syntax = test_syntax(old_path).filter(|_| f.base.is_some());
        let now_syntax = test_syntax(f.path).filter(|_| f.new.is_some());
        if base_syntax.is_none() && now_syntax.is_none() {
            continue;
        }
        let large = |t: Option<&str>| t.is_some_and(|t| t.len() > MAX_FILE_BYTES);
        if large(f.base) || large(f.new) {
            let msg = format!(
                "larger than {} MiB: its tests were not compared",
                MAX_FILE_BYTES >> 20
            );
            out.push(Finding::file(
                Issue::new(RULE_NOT_CHECKED, Severity::Warning, msg).at(f.path, None),
                &[f.path, old_path],
            ));
            continue;
        }
        if let (Some(sx), Some(text)) = (base_syntax, f.base) {
            let s = scan(sx, old_path, text);
            sides.base_modules.insert(idx, s.modules);
            sides.base.extend(s.tests.into_iter().map(|case| Found {
                file: idx,
                path: old_path,
                syntax: sx,
                case,
            }));
        }
        if let (Some(sx), Some(text)) = (now_syntax, f.new) {
            let s = scan(sx, f.path, text);
            sides.now_modules.insert(idx, s.modules);
            sides.now.extend(s.tests.into_iter().map(|case| Found {
                file: idx,
                path: f.path,
                syntax: sx,
                case,
            }));
        }
    }
    sides
}

/// For each base test, the now test it became (same file and name; else
/// same name anywhere; else same last segment anywhere), each now test
/// taken once.
fn pair(sides: &Sides) -> Vec<Option<usize>> {
    fn index<'s, K: std::hash::Hash + Eq>(
        now: &'s [Found],
        key: impl Fn(&'s Found) -> K,
    ) -> HashMap<K, Vec<usize>> {
        let mut m: HashMap<K, Vec<usize>> = HashMap::new();
        for (i, f) in now.iter().enumerate().rev() {
            m.entry(key(f)).or_default().push(i);
        }
        m
    }
    fn take<K: std::hash::Hash + Eq>(
        m: &mut HashMap<K, Vec<usize>>,
        k: &K,
        claimed: &mut [bool],
    ) -> Option<usize> {
        let v = m.get_mut(k)?;
        while let Some(i) = v.pop() {
            if !claimed[i] {
                claimed[i] = true;
                return Some(i);
            }
        }
        None
    }
    let mut claimed = vec![false; sides.now.len()];
    let mut matched: Vec<Option<usize>> = vec![None; sides.base.len()];
    let mut same_file = index(&sides.now, |f| (f.file, f.case.name.as_str()));
    for (b, m) in sides.base.iter().zip(matched.iter_mut()) {
        *m = take(
            &mut same_file,
            &(b.file, b.case.name.as_str()),
            &mut claimed,
        );
    }
    let mut by_name = index(&sides.now, |f| (f.syntax, f.case.name.as_str()));
    for (b, m) in sides.base.iter().zip(matched.iter_mut()) {
        if m.is_none() {
            *m = take(
                &mut by_name,
                &(b.syntax, b.case.name.as_str()),
                &mut claimed,
            );
        }
    }
    let mut by_leaf = index(&sides.now, |f| (f.syntax, f.case.leaf.as_str()));
    for (b, m) in sides.base.iter().zip(matched.iter_mut()) {
        if m.is_none() {
            *m = take(
                &mut by_leaf,
                &(b.syntax, b.case.leaf.as_str()),
                &mut claimed,
            );
        }
    }
    matched
}

fn names(cases: &[&TestCase]) -> String {
    const SHOWN: usize = 5;
    let mut s: Vec<String> = cases
        .iter()
        .take(SHOWN)
        .map(|c| format!("`{}`", short(&c.name)))
        .collect();
    if cases.len() > SHOWN {
        s.push(format!("and {} more", cases.len() - SHOWN));
    }
    s.join(", ")
}

fn test_names(cases: &[&TestCase]) -> Vec<(String, String)> {
    cases
        .iter()
        .map(|c| (c.name.clone(), c.leaf.clone()))
        .collect()
}

/// A marker added to some tests, gathered so one marker on a module or
/// file is one finding.
#[derive(Default)]
struct Added<'a> {
    existing: Vec<&'a TestCase>,
    new: Vec<&'a TestCase>,
    text: String,
    focus: bool,
    conditional: bool,
    new_severity: Option<Severity>,
}

fn compare(files: &[FileVersions], sides: &Sides, out: &mut Vec<Finding>) {
    let matched = pair(sides);
    let mut now_is_old = vec![false; sides.now.len()];
    for n in matched.iter().flatten() {
        now_is_old[*n] = true;
    }

    removed(files, sides, &matched, out);
    modules(files, sides, out);

    // Markers, gathered by (path, line, key).
    let mut added: BTreeMap<(&str, u32, String), Added> = BTreeMap::new();
    for (b, n) in matched.iter().enumerate() {
        let Some(n) = *n else { continue };
        let (base, now) = (&sides.base[b], &sides.now[n]);
        let mut left: HashMap<&str, usize> = HashMap::new();
        for m in &base.case.markers {
            *left.entry(m.key.as_str()).or_default() += 1;
        }
        for m in &now.case.markers {
            match left.get_mut(m.key.as_str()) {
                Some(c) if *c > 0 => *c -= 1,
                _ => {
                    let a = added.entry((now.path, m.line, m.key.clone())).or_default();
                    a.existing.push(&now.case);
                    a.text.clone_from(&m.text);
                    a.conditional = m.conditional;
                }
            }
        }
        if let (Some(f), None) = (&now.case.focus, &base.case.focus) {
            let a = added.entry((now.path, f.line, f.key.clone())).or_default();
            a.existing.push(&now.case);
            a.focus = true;
            a.text.clone_from(&f.text);
        }
        body_changes(&base.case, now, out);
    }
    let files_with_old_tests: HashSet<usize> = sides.base.iter().map(|f| f.file).collect();
    for (n, now) in sides.now.iter().enumerate() {
        if now_is_old[n] {
            continue;
        }
        for m in &now.case.markers {
            let a = added.entry((now.path, m.line, m.key.clone())).or_default();
            a.new.push(&now.case);
            a.text.clone_from(&m.text);
            a.conditional = m.conditional;
            // A platform condition on a new test is ordinary.
            let new_severity = if m.severity < Severity::Error {
                Severity::Info
            } else {
                Severity::Warning
            };
            a.new_severity = a.new_severity.max(Some(new_severity));
        }
        if let Some(f) = &now.case.focus {
            let a = added.entry((now.path, f.line, f.key.clone())).or_default();
            a.new.push(&now.case);
            a.focus = true;
            a.text.clone_from(&f.text);
        }
        if let Some(line) = now.case.early_return {
            let msg = format!(
                "new test `{}` returns before it checks anything",
                short(&now.case.name)
            );
            out.push(Finding {
                issue: Issue::new(RULE_EARLY_RETURN, Severity::Warning, msg)
                    .at(now.path, Some(line)),
                tests: test_names(&[&now.case]),
                paths: vec![now.path.to_string()],
            });
        }
    }
    let path_file: HashMap<&str, usize> = sides.now.iter().map(|f| (f.path, f.file)).collect();
    for ((path, line, _), a) in added {
        let all: Vec<&TestCase> = a.existing.iter().chain(a.new.iter()).copied().collect();
        let hides_old = a.focus
            && path_file
                .get(path)
                .is_some_and(|f| files_with_old_tests.contains(f));
        let (severity, msg) = marker_message(&a, hides_old);
        out.push(Finding {
            issue: Issue::new(RULE_SKIP, severity, msg).at(path, Some(line)),
            tests: test_names(&all),
            paths: vec![path.to_string()],
        });
    }
}

/// An added marker's severity and message: a focus that skips the file's
/// other tests (an error when the base had tests there: `hides_old`), a
/// skip or condition on tests the base had, or on new tests.
fn marker_message(a: &Added<'_>, hides_old: bool) -> (Severity, String) {
    if a.focus {
        let severity = if hides_old {
            Severity::Error
        } else {
            Severity::Warning
        };
        (
            severity,
            format!(
                "`{}` added: only the focused tests run, the other tests of this file are skipped",
                a.text
            ),
        )
    } else if !a.existing.is_empty() {
        // A tamper finding on a test the base had is an error, a
        // platform condition included: the test may no longer run here.
        let severity = Severity::Error;
        let (one, many) = if a.conditional {
            (
                "now runs only when a condition allows",
                "now run only when a condition allows",
            )
        } else {
            ("no longer runs", "no longer run")
        };
        let subject = if a.existing.len() == 1 {
            format!("test {} {one}", names(&a.existing))
        } else {
            format!(
                "{} tests that existed at the base {many}: {}",
                a.existing.len(),
                names(&a.existing)
            )
        };
        (severity, format!("`{}` added: {subject}", a.text))
    } else {
        let subject = if a.new.len() == 1 {
            format!("new test {}", names(&a.new))
        } else {
            format!("{} new tests", a.new.len())
        };
        let how = if a.conditional {
            "runs only when a condition allows"
        } else {
            "never runs"
        };
        let how = if a.new.len() == 1 {
            how.to_string()
        } else {
            how.replacen("runs", "run", 1)
        };
        (
            a.new_severity.unwrap_or(Severity::Warning),
            format!("{subject} {how}: `{}`", a.text),
        )
    }
}

fn removed(
    files: &[FileVersions],
    sides: &Sides,
    matched: &[Option<usize>],
    out: &mut Vec<Finding>,
) {
    // Whole files first: one finding per file deleted or renamed away.
    let mut by_file: BTreeMap<usize, Vec<&TestCase>> = BTreeMap::new();
    for (b, m) in matched.iter().enumerate() {
        if m.is_some() {
            continue;
        }
        let base = &sides.base[b];
        let f = &files[base.file];
        let collected_now = f.new.is_some() && test_syntax(f.path) == Some(base.syntax);
        if !collected_now {
            by_file.entry(base.file).or_default().push(&base.case);
            continue;
        }
        let msg = format!(
            "test `{}` existed at the base (line {}) and is gone: deleted, renamed, or no longer marked as a test",
            short(&base.case.name),
            base.case.line
        );
        out.push(Finding {
            issue: Issue::new(RULE_REMOVED, Severity::Error, msg).at(f.path, None),
            tests: test_names(&[&base.case]),
            paths: vec![f.path.to_string(), base.path.to_string()],
        });
    }
    for (idx, cases) in by_file {
        let f = &files[idx];
        let old_path = f.old_path.unwrap_or(f.path);
        let what = if f.new.is_none() {
            format!("`{}` deleted", short(old_path))
        } else {
            format!(
                "`{}` renamed to `{}`, which the test runner does not collect",
                short(old_path),
                short(f.path)
            )
        };
        let count = if cases.len() == 1 {
            "1 test".to_string()
        } else {
            format!("{} tests", cases.len())
        };
        let msg = format!("{what}: {count} of the base gone: {}", names(&cases));
        out.push(Finding {
            issue: Issue::new(RULE_REMOVED, Severity::Error, msg).at(old_path, None),
            tests: test_names(&cases),
            paths: vec![old_path.to_string(), f.path.to_string()],
        });
    }
}

/// Rust `mod tests;` declarations that stopped declaring, or gained a
/// condition that is never true.
fn modules(files: &[FileVersions], sides: &Sides, out: &mut Vec<Finding>) {
    for (idx, base_mods) in &sides.base_modules {
        let f = &files[*idx];
        let now_mods = sides.now_modules.get(idx);
        for b in base_mods.iter().filter(|m| m.test_like) {
            let now = now_mods.and_then(|v| v.iter().find(|m| m.name == b.name));
            let inlined = || {
                let prefix = format!("{}::", b.name);
                sides
                    .now
                    .iter()
                    .any(|t| t.file == *idx && t.case.name.starts_with(&prefix))
            };
            match now {
                None if !inlined() => {
                    let msg = format!(
                        "module `{}` (its tests are in another file) was declared at the base (line {}) and is not now: its tests no longer build",
                        short(&b.name),
                        b.line
                    );
                    out.push(Finding {
                        issue: Issue::new(RULE_REMOVED, Severity::Error, msg).at(f.path, None),
                        tests: vec![(b.name.clone(), b.name.clone())],
                        paths: vec![f.path.to_string()],
                    });
                }
                Some(n) => {
                    for m in n
                        .markers
                        .iter()
                        .filter(|m| !b.markers.iter().any(|k| k.key == m.key))
                    {
                        let msg = format!(
                            "`{}` added on module `{}` (its tests are in another file): they no longer run",
                            m.text,
                            short(&n.name)
                        );
                        out.push(Finding {
                            issue: Issue::new(RULE_SKIP, m.severity, msg).at(f.path, Some(m.line)),
                            tests: vec![(n.name.clone(), n.name.clone())],
                            paths: vec![f.path.to_string()],
                        });
                    }
                }
                None => {}
            }
        }
    }
}

/// Assertions, early returns and expected values of a test that exists on
/// both sides.
fn body_changes(base: &TestCase, now: &Found, out: &mut Vec<Finding>) {
    let case = &now.case;
    let finding = |rule: &str, severity: Severity, line: u32, msg: String| Finding {
        issue: Issue::new(rule, severity, msg).at(now.path, Some(line)),
        tests: test_names(&[case]),
        paths: vec![now.path.to_string()],
    };
    let name = short(&case.name);
    if let (Some(line), None) = (case.early_return, base.early_return) {
        let msg = format!("test `{name}` now returns before it checks anything");
        out.push(finding(RULE_EARLY_RETURN, Severity::Error, line, msg));
    }
    let (was, is) = (base.assertions.len(), case.assertions.len());
    if is < was {
        let msg = format!("test `{name}` has {is} assertion(s), down from {was} at the base");
        out.push(finding(RULE_ASSERTIONS, Severity::Error, case.line, msg));
    } else if is == was {
        const MAX_PER_TEST: usize = 5;
        let changed = base
            .assertions
            .iter()
            .zip(&case.assertions)
            .filter(|(b, n)| b.shape == n.shape && b.literals != n.literals)
            .take(MAX_PER_TEST);
        for (b, n) in changed {
            let (old, new) = b
                .literals
                .iter()
                .zip(&n.literals)
                .find(|(o, n)| o != n)
                .map(|(o, n)| (short(o), short(n)))
                .unwrap_or_default();
            let msg = format!(
                "test `{name}`: an expected value changed from `{old}` to `{new}`; check that the test, not the code, was wrong"
            );
            out.push(finding(RULE_EXPECTED, Severity::Warning, n.line, msg));
        }
    }
    if case.expects_panic && !base.expects_panic {
        let msg =
            format!("test `{name}` gained `#[should_panic]`: it now passes when the code panics");
        out.push(finding(RULE_EXPECTED, Severity::Error, case.line, msg));
    }
}

// ---------------------------------------------------------------------------
// The runner's listing.

/// The last segment of a listed test name: `a::b::c` → `c`,
/// `tests/t.py::TestA::test_b[1]` → `test_b`, `group > title` → `title`.
fn ledger_leaf(name: &str) -> &str {
    let name = match name.find('[') {
        Some(i) if name.ends_with(']') => &name[..i],
        _ => name,
    };
    let name = name.rsplit("::").next().unwrap_or(name);
    let name = name.rsplit(" > ").next().unwrap_or(name);
    if name.contains(' ') {
        name
    } else {
        name.rsplit('.').next().unwrap_or(name)
    }
}

fn ledger_findings(ledger: &LedgerView, out: &mut Vec<Finding>) {
    let reported = |rule: &str| -> HashSet<String> {
        out.iter()
            .filter(|f| f.issue.rule == rule)
            .flat_map(|f| f.tests.iter().map(|(_, leaf)| leaf.clone()))
            .collect()
    };
    let removed_static = reported(RULE_REMOVED);
    let skipped_static = reported(RULE_SKIP);
    let set = |v: &[String]| -> HashSet<String> { v.iter().cloned().collect() };
    let (base, now, ignored_now, ignored_base) = (
        set(ledger.at_base),
        set(ledger.now),
        set(ledger.ignored_now),
        set(ledger.ignored_at_base),
    );
    // Names new in the listing, by last segment: a test that moved.
    let mut new_leaves: HashMap<&str, usize> = HashMap::new();
    for n in ledger.now.iter().chain(ledger.ignored_now) {
        if !base.contains(n) {
            *new_leaves.entry(ledger_leaf(n)).or_default() += 1;
        }
    }
    // Doc tests new in the listing, by item: cargo names them by line,
    // and an example whose line moved is not gone.
    let mut new_items: HashMap<String, usize> = HashMap::new();
    for n in ledger.now.iter().chain(ledger.ignored_now) {
        let item = crate::ledger::comparable(n);
        if !base.contains(n) && &item != n {
            *new_items.entry(item).or_default() += 1;
        }
    }
    let mut seen = HashSet::new();
    for name in ledger.at_base {
        if now.contains(name) || ignored_now.contains(name) || !seen.insert(name) {
            continue;
        }
        let moved = new_items
            .get_mut(&crate::ledger::comparable(name))
            .filter(|c| **c > 0);
        if let Some(c) = moved {
            *c -= 1;
            continue;
        }
        let leaf = ledger_leaf(name);
        if removed_static.contains(leaf) {
            continue;
        }
        if let Some(c) = new_leaves.get_mut(leaf).filter(|c| **c > 0) {
            *c -= 1;
            continue;
        }
        let item = crate::ledger::comparable(name);
        let msg = if &item != name {
            format!(
                "the doc example `{}` at the base is gone: the example was deleted, or its item renamed or removed (examples are matched by item, never by line)",
                short(name)
            )
        } else {
            format!(
                "the test runner listed `{}` at the base and does not list it now",
                short(name)
            )
        };
        out.push(Finding {
            issue: Issue::new(RULE_REMOVED, Severity::Error, msg),
            tests: vec![(name.clone(), leaf.to_string())],
            paths: Vec::new(),
        });
    }
    for name in ledger.ignored_now {
        if ignored_base.contains(name) || skipped_static.contains(ledger_leaf(name)) {
            continue;
        }
        let (severity, msg) = if base.contains(name) {
            (
                Severity::Error,
                format!(
                    "the test runner now lists `{}` as ignored; it ran at the base",
                    short(name)
                ),
            )
        } else {
            (
                Severity::Warning,
                format!(
                    "the test runner lists new test `{}` as ignored",
                    short(name)
                ),
            )
        };
        out.push(Finding {
            issue: Issue::new(RULE_SKIP, severity, msg),
            tests: vec![(name.clone(), ledger_leaf(name).to_string())],
            paths: Vec::new(),
        });
    }
}

// ---------------------------------------------------------------------------
// allow_test_changes.

struct Allow<'a> {
    entries: &'a [String],
    paths: Vec<(usize, globset::GlobMatcher)>,
    names: Vec<(usize, globset::GlobMatcher)>,
}

impl<'a> Allow<'a> {
    fn new(entries: &'a [String]) -> Self {
        let mut paths = Vec::new();
        let mut names = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            if let Ok(p) = GlobPattern::try_from(e.as_str()) {
                for g in p.expanded() {
                    if let Ok(g) = build_glob(&g) {
                        paths.push((i, g.compile_matcher()));
                    }
                }
            }
            if let Ok(g) = globset::Glob::new(e) {
                names.push((i, g.compile_matcher()));
            }
        }
        Allow {
            entries,
            paths,
            names,
        }
    }

    /// The entry that allows a finding, if one does.
    fn allows(&self, f: &Finding) -> Option<&'a str> {
        let path = f.paths.iter().find_map(|p| {
            let p = p.trim_start_matches("./");
            self.paths
                .iter()
                .find(|(_, g)| g.is_match(p))
                .map(|(i, _)| *i)
        });
        if let Some(i) = path {
            return Some(&self.entries[i]);
        }
        let mut entry = None;
        for (name, leaf) in &f.tests {
            let hit = self
                .entries
                .iter()
                .position(|e| e == name || e == leaf)
                .or_else(|| {
                    self.names
                        .iter()
                        .find(|(_, g)| g.is_match(name.as_str()))
                        .map(|(i, _)| *i)
                });
            match hit {
                Some(i) => entry = entry.or(Some(i)),
                None => return None,
            }
        }
        entry.map(|i| self.entries[i].as_str())
    }

    fn apply(&self, f: Finding) -> Issue {
        let mut issue = f.issue.clone();
        if let Some(entry) = self.allows(&f) {
            issue.severity = Severity::Info;
            issue.message = format!(
                "{} (allowed by allow_test_changes `{}`)",
                issue.message,
                short(entry)
            );
        }
        issue
    }
}

#[cfg(test)]
mod testing {
    use super::*;

    pub fn check_files(files: &[FileVersions]) -> Vec<Issue> {
        check(&Input {
            files,
            test_commands: &[],
            allow: &[],
            ledger: None,
            crate_words: None,
        })
    }

    /// The `test-data-changed` messages of a change of one file from
    /// `base` to `now`, with the crate's words at the base.
    pub fn data_findings(path: &str, base: &str, now: &str, words: &Words) -> Vec<String> {
        let files = [FileVersions {
            path,
            old_path: None,
            base: Some(base),
            new: Some(now),
        }];
        check(&Input {
            files: &files,
            test_commands: &[],
            allow: &[],
            ledger: None,
            crate_words: Some(words),
        })
        .into_iter()
        .filter(|i| i.rule == RULE_TEST_DATA)
        .map(|i| i.message)
        .collect()
    }

    pub fn check_one(path: &str, base: Option<&str>, new: Option<&str>) -> Vec<Issue> {
        check_files(&[FileVersions {
            path,
            old_path: None,
            base,
            new,
        }])
    }

    /// `base` with the first `from` replaced by `to` (which must be there).
    pub fn edited(base: &str, from: &str, to: &str) -> String {
        assert!(base.contains(from), "fixture lacks {from:?}");
        base.replacen(from, to, 1)
    }

    /// Each edit of `base` at `path` gives only required skip-marker errors.
    pub fn each_is_a_skip_marker(path: &str, base: &str, edits: &[(&str, &str)]) {
        for (from, to) in edits {
            let now = edited(base, from, to);
            let issues = check_one(path, Some(base), Some(&now));
            assert!(!issues.is_empty(), "{to}");
            assert!(
                issues
                    .iter()
                    .all(|i| i.rule == RULE_SKIP && i.severity == Severity::Error),
                "{to}: {issues:?}"
            );
        }
    }

    /// One edit of a language's test file and the rules it must give:
    /// `(from, to, rules)` (none for a harmless edit).
    pub type Edit<'a> = (&'a str, &'a str, &'a [(&'a str, Severity)]);

    /// Each edit of `base` at `path` gives exactly its rules: the cases
    /// every language shares (an early return, an assertion removed, an
    /// expected value changed) written once, as a table per language.
    pub fn each_edit_gives(path: &str, base: &str, edits: &[Edit]) {
        for (from, to, want) in edits {
            let now = edited(base, from, to);
            let issues = check_one(path, Some(base), Some(&now));
            assert_eq!(rules(&issues), *want, "{from:?} → {to:?}");
        }
    }

    pub fn rules(issues: &[Issue]) -> Vec<(&str, Severity)> {
        issues
            .iter()
            .map(|i| (i.rule.as_str(), i.severity))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::rules;
    use super::*;

    const LIB: &str = "pub fn f() -> u8 { 1 }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn one() {\n        assert_eq!(super::f(), 1);\n    }\n}\n";
    const LIB_WITHOUT: &str = "pub fn f() -> u8 { 1 }\n";
    const MOVED: &str = "#[test]\nfn one() {\n    assert_eq!(demo::f(), 1);\n}\n";

    fn run(files: &[FileVersions], allow: &[&str], ledger: Option<LedgerView>) -> Vec<Issue> {
        let allow: Vec<String> = allow.iter().map(|s| s.to_string()).collect();
        check(&Input {
            files,
            test_commands: &[],
            allow: &allow,
            ledger,
            crate_words: None,
        })
    }

    fn fv<'a>(path: &'a str, base: Option<&'a str>, new: Option<&'a str>) -> FileVersions<'a> {
        FileVersions {
            path,
            old_path: None,
            base,
            new,
        }
    }

    #[test]
    fn a_test_moved_to_another_file_is_not_removed() {
        let files = [
            fv("src/lib.rs", Some(LIB), Some(LIB_WITHOUT)),
            fv("tests/one.rs", None, Some(MOVED)),
        ];
        assert_eq!(rules(&run(&files, &[], None)), []);
        // Without the file it moved to, it is a removal.
        let issues = run(&files[..1], &[], None);
        assert_eq!(rules(&issues), [(RULE_REMOVED, Severity::Error)]);
    }

    #[test]
    fn a_moved_test_is_still_compared() {
        let weakened = MOVED.replace("    assert_eq!(demo::f(), 1);\n", "");
        let files = [
            fv("src/lib.rs", Some(LIB), Some(LIB_WITHOUT)),
            fv("tests/one.rs", None, Some(&weakened)),
        ];
        assert_eq!(
            rules(&run(&files, &[], None)),
            [(RULE_ASSERTIONS, Severity::Error)]
        );
    }

    #[test]
    fn a_deleted_test_file_is_one_finding() {
        let files = [fv("tests/one.rs", Some(MOVED), None)];
        let issues = run(&files, &[], None);
        assert_eq!(rules(&issues), [(RULE_REMOVED, Severity::Error)]);
        assert!(
            issues[0].message.contains("deleted"),
            "{}",
            issues[0].message
        );
    }

    #[test]
    fn allowed_paths_and_names_are_info() {
        let renamed = LIB.replace("fn one()", "fn first()");
        let files = [fv("src/lib.rs", Some(LIB), Some(&renamed))];
        assert_eq!(
            rules(&run(&files, &[], None)),
            [(RULE_REMOVED, Severity::Error)]
        );
        for allow in ["one", "tests::one", "tests::*", "src/lib.rs", "src/*.rs"] {
            let issues = run(&files, &[allow], None);
            assert_eq!(rules(&issues), [(RULE_REMOVED, Severity::Info)], "{allow}");
            assert!(issues[0].message.contains("allowed by"), "{allow}");
        }
        assert_eq!(
            rules(&run(&files, &["two", "tests/*"], None)),
            [(RULE_REMOVED, Severity::Error)]
        );
    }

    #[test]
    fn ledger_removed_ignored_and_moved() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let (base, now, ign, none) = (
            s(&["a::x", "a::y", "a::z", "m::moved"]),
            s(&["a::x", "n::moved"]),
            s(&["a::y", "a::new"]),
            s(&[]),
        );
        let ledger = LedgerView {
            at_base: &base,
            now: &now,
            ignored_now: &ign,
            ignored_at_base: &none,
        };
        let issues = run(&[], &[], Some(ledger));
        let got: Vec<(&str, Severity, &str)> = issues
            .iter()
            .map(|i| {
                (
                    i.rule.as_str(),
                    i.severity,
                    i.message.split('`').nth(1).unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (RULE_REMOVED, Severity::Error, "a::z"),
                (RULE_SKIP, Severity::Error, "a::y"),
                (RULE_SKIP, Severity::Warning, "a::new"),
            ]
        );
        // Already reported by reading the files: not twice.
        let renamed = LIB.replace("fn one()", "fn first()");
        let files = [fv("src/lib.rs", Some(LIB), Some(&renamed))];
        let (base, now) = (s(&["tests::one"]), s(&["tests::first"]));
        let ledger = LedgerView {
            at_base: &base,
            now: &now,
            ignored_now: &none,
            ignored_at_base: &none,
        };
        assert_eq!(rules(&run(&files, &[], Some(ledger))).len(), 1);
    }

    #[test]
    fn a_doc_test_whose_line_moved_is_not_removed_and_one_dropped_is() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let none = s(&[]);
        let base = s(&[
            "src/lib.rs - add (line 9)",
            "src/lib.rs - add (line 15)",
            "src/lib.rs - (line 3)",
        ]);
        let moved = s(&[
            "src/lib.rs - add (line 12)",
            "src/lib.rs - add (line 18)",
            "src/lib.rs - (line 4)",
        ]);
        let ledger = LedgerView {
            at_base: &base,
            now: &moved,
            ignored_now: &none,
            ignored_at_base: &none,
        };
        assert!(run(&[], &[], Some(ledger)).is_empty());
        let dropped = s(&["src/lib.rs - add (line 12)", "src/lib.rs - (line 4)"]);
        let ledger = LedgerView {
            at_base: &base,
            now: &dropped,
            ignored_now: &none,
            ignored_at_base: &none,
        };
        assert_eq!(
            rules(&run(&[], &[], Some(ledger))),
            [(RULE_REMOVED, Severity::Error)]
        );
    }

    #[test]
    fn code_that_now_reaches_test_data_is_an_error() {
        let calc = "CASES = [\n    (1, 1, 2),\n    (10, 1, 11),\n]\n\n\ndef add(a, b):\n    return a + b\n";
        let test = "from calc import CASES, add\n\n\ndef test_add():\n    for a, b, s in CASES:\n        assert add(a, b) == s\n";
        let mut words = Words::default();
        words.add("calc.py", calc);
        words.add("test_calc.py", test);
        let found = |now: &str| super::testing::data_findings("calc.py", calc, now, &words);
        // A fix that leaves the data alone: nothing.
        assert!(found(&calc.replace("a + b", "b + a")).is_empty());
        // Truncated at import, popped when called, special-cased: each is
        // code reaching the data.
        for now in [
            format!("{calc}CASES = CASES[:1]\n"),
            format!("{calc}CASES.pop()\n"),
            calc.replace(
                "    return a + b",
                "    if (a, b, 11) in CASES:\n        return 11\n    return a - b",
            ),
        ] {
            let f = found(&now);
            assert!(
                f.iter()
                    .any(|m| m.starts_with("code under test now names `CASES`")),
                "{now}: {f:?}"
            );
        }
    }

    /// Pathological texts in every language: no panic, no stack overflow,
    /// and (watched by hand, not timed here) no quadratic blow-up.
    #[test]
    fn hostile_inputs() {
        const N: usize = 20_000;
        let texts = [
            "{".repeat(N),
            "}".repeat(N),
            "(".repeat(N),
            "\"".repeat(N),
            "'".repeat(N),
            "r#".repeat(N),
            "/*".repeat(N),
            "`${".repeat(N),
            "#[cfg_attr(all(), ".repeat(N),
            "mod a {".repeat(N),
            format!("#[test]\nfn t() {{ {} }}", "assert!(".repeat(N)),
            format!("#[test]\nfn t() {{ {} }}", "assert!(\"x\"".repeat(N)),
            format!("it('x', () => {{ {} }})", "expect(".repeat(N)),
            "describe('x', () => {".repeat(N),
            format!("it('x', () => {{}}{})", "{}".repeat(N)),
            format!("def test_x():\n    {}", "assert (".repeat(N)),
            (0..400)
                .map(|d| format!("{}class TestA:\n", " ".repeat(d)))
                .collect(),
            format!("func TestX(t *testing.T) {{\n{}\n}}", "if x {".repeat(N)),
            format!("func TestX(t *testing.T) {{\n{}\n}}", "t.Errorf(".repeat(N)),
            "@Test ".repeat(N),
            "class A { ".repeat(N),
            format!("x{}", "\u{e9}'".repeat(N)),
        ];
        let paths = [
            "src/lib.rs",
            "tests/test_x.py",
            "x_test.go",
            "a.test.ts",
            "src/test/java/ATest.java",
        ];
        for text in &texts {
            let mut half = text.len() / 2;
            while !text.is_char_boundary(half) {
                half -= 1;
            }
            for path in paths {
                let files = [fv(path, Some(text.as_str()), Some(&text[..half]))];
                let _ = run(&files, &[], None);
            }
        }
    }

    #[test]
    fn relevant_paths() {
        let cmds = vec!["sh scripts/test.sh".to_string()];
        for p in [
            "src/lib.rs",
            "tests/test_x.py",
            "pkg/x_test.go",
            "web/a.test.tsx",
            "build.rs",
            "Cargo.toml",
            "scripts/test.sh",
            "conftest.py",
            "src/helpers.py",
            "pkg/x.go",
        ] {
            assert!(relevant(p, &cmds), "{p}");
        }
        for p in ["README.md", "web/a.tsx", "scripts/other.sh"] {
            assert!(!relevant(p, &cmds), "{p}");
        }
    }
}
#[cfg(test)]
mod test_only_items_in_code_files {
    use super::*;

    /// shlex's layout (found by the real-crate benchmark): a `#[cfg(test)]`
    /// const and a top-level `#[test]` function that reads it, in a source
    /// file. A fix elsewhere in the file must not read as "code now names"
    /// the const — the word count takes both for code, at the base too —
    /// while a new reference from the code must.
    #[test]
    fn a_cfg_test_item_read_by_a_top_level_test_is_no_new_use() {
        let base = "pub fn split(s: &[u8]) -> Vec<u8> {\n    s.to_vec()\n}\n\n#[cfg(test)]\nconst INVALID_UTF8: &[u8] = b\"\\xa1\";\n\n#[test]\nfn test_invalid_utf8() {\n    assert!(core::str::from_utf8(INVALID_UTF8).is_err());\n}\n";
        let mut words = Words::default();
        words.add("src/bytes.rs", base);
        let found = |now: &str| super::testing::data_findings("src/bytes.rs", base, now, &words);
        let fix = base.replace(
            "s.to_vec()",
            "s.iter().filter(|&&c| c != b'\\n').copied().collect()",
        );
        assert!(found(&fix).is_empty(), "{:?}", found(&fix));
        let reads = base.replace(
            "s.to_vec()",
            "if s == INVALID_UTF8 { Vec::new() } else { s.to_vec() }",
        );
        assert!(
            found(&reads)
                .iter()
                .any(|m| m.starts_with("code under test now names `INVALID_UTF8`")),
            "{:?}",
            found(&reads)
        );
    }
}
