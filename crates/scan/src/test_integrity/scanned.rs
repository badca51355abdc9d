//! What the language scanners produce: test cases with their markers and
//! assertions, module declarations, and which scanner reads a path.

use super::lex::Source;
use super::lex::Syntax;
use super::lex::Tok;
use super::short;
use rascal_core::model::verdict::Severity;

/// Three-valued truth of a compile-time condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Truth {
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
pub(super) const NEVER_SET: &[&str] = &[
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
pub(super) fn never_set(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let first = lower.split(['-', '_']).next().unwrap_or("");
    NEVER_SET.contains(&lower.as_str()) || NEVER_SET.contains(&first)
}

/// Something that stops a test from running: a skip, an always-false
/// condition, an expected failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Marker {
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
pub(super) struct Assertion {
    pub line: u32,
    pub shape: String,
    pub literals: Vec<String>,
}

/// One test as a scanner sees it.
#[derive(Debug, Clone, Default)]
pub(super) struct TestCase {
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
pub(super) struct ModuleDecl {
    pub name: String,
    pub line: u32,
    /// Declared under `#[cfg(test)]` or named like a test module.
    pub test_like: bool,
    pub markers: Vec<Marker>,
}

/// What a scanner found in one file.
#[derive(Debug, Clone, Default)]
pub(super) struct Scan {
    pub tests: Vec<TestCase>,
    pub modules: Vec<ModuleDecl>,
}

/// Build an assertion from the bracketed parts of it that are compared;
/// `drop_strings` leaves out string literals (format messages).
pub(super) fn assertion(
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

/// Which scanner reads `path`, if it can hold tests the runner collects.
pub(super) fn test_syntax(path: &str) -> Option<Syntax> {
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

pub(super) fn scan(syntax: Syntax, path: &str, text: &str) -> Scan {
    match syntax {
        Syntax::Rust => super::rust::scan(path, text),
        Syntax::Python => super::python::scan(text),
        Syntax::Go => super::go::scan(text),
        Syntax::Js => super::js::scan(text),
        Syntax::Jvm => super::jvm::scan(text),
    }
}
