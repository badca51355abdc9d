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

use allow::Allow;
use compare::{compare, read_tests, Finding};
use ledger::ledger_findings;
use rascal_core::model::verdict::{Issue, Severity};
use scanned::{assertion, never_set, test_syntax, Marker, ModuleDecl, Scan, TestCase, Truth};
use test_data_findings::test_data_findings;

mod allow;
mod compare;
mod ledger;
mod scanned;
mod test_data_findings;

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

/// Source text as shown in a message: one line, no control characters,
/// at most 80 columns.
fn short(text: &str) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    rascal_core::text::ellipsis(&rascal_core::text::sanitize(&one), 80)
}

#[cfg(test)]
mod testing;

#[cfg(test)]
mod test_only_items_in_code_files;
#[cfg(test)]
mod tests;
