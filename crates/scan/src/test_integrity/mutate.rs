//! Mutated-expectation canaries: a copy of a test file in which chosen
//! tests have one assertion changed so that the test must fail when the code
//! under test is correct (`assert_eq!(f(), 4)` → `assert_eq!(f(), 3)`,
//! `assert x` → `assert not (x)`). Each mutated test keeps its name, file
//! and shape, so code under test cannot tell it from the real one; a mutated
//! copy of a test that passed for real and is reported passing means the
//! results were forged, or the value under test compares equal to anything.
//!
//! Only what certainly ran is changed: an assertion statement directly in
//! the test's body (not in a loop, branch, closure or block), before any
//! `return` in the body. Tests that expect a panic, are ignored, skipped or
//! expected to fail are left alone, and so is any assertion whose change
//! might not compile. Every line keeps its number: edits replace text within
//! one statement and never add or remove a line. Python is in
//! `mutate_python.rs`, Go in `mutate_go.rs`, Java in `mutate_java.rs`,
//! JavaScript in `mutate_js.rs`, the parts they share in
//! `mutate_parts.rs`; this file has the entry point and Rust.
//!
//! Rust: `assert_eq!(a, LIT)` (or `LIT` first) changes the literal;
//! otherwise `assert_eq!` ↔ `assert_ne!`, and `assert!(c, …)` becomes
//! `assert!(!(c), …)`. `debug_assert*` and other macros are not touched.

use super::lex::{Source, Syntax};
use super::mutate_parts::{
    arguments, first_word, insert, literal_edit, trimmed, Candidate, Edit, Eligible, Lang,
};
use super::{mutate_go, mutate_java, mutate_js, mutate_python, rust, TestCase};

/// One test whose assertion was mutated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mutant {
    /// The test's name qualified within its file, as the scanners name it:
    /// Rust `tests::adds` (with the module path of a file under `src/`),
    /// Python `test_b` or `TestA::test_b`.
    pub test: String,
    /// 1-based line of the mutated assertion.
    pub line: u32,
    /// What changed, for a human: "expected `4` made `3`", "`assert_eq!`
    /// made `assert_ne!`", "condition negated".
    pub how: String,
}

/// A test file with mutated assertions, and which they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mutated {
    /// The whole file, mutated; same lines as the original.
    pub text: String,
    /// The tests mutated, in file order.
    pub mutants: Vec<Mutant>,
}

/// Mutate one assertion of each picked test of the file at `path` (`.rs`
/// Rust, `.py` Python, `_test.go` Go, `.java` Java, `.js`/`.ts` and kin
/// JavaScript; anything else gives None). `pick(name)` says whether
/// the test named `name` (as [`Mutant::test`]) is to be mutated; `seed`
/// chooses which of a test's eligible assertions is. None when nothing could
/// be mutated.
pub fn mutate(path: &str, text: &str, pick: &dyn Fn(&str) -> bool, seed: u64) -> Option<Mutated> {
    let eligible = match language(path)? {
        Kind::Rust => rust_eligible(path, text, pick),
        Kind::Python => mutate_python::eligible(text, pick),
        Kind::Go => mutate_go::eligible(text, pick),
        Kind::Java => mutate_java::eligible(text, pick),
        Kind::Js => mutate_js::eligible(text, pick),
    };
    let chosen = eligible.into_iter().filter_map(|e| {
        let i = choose(seed, &e.test, e.candidates.len())?;
        let c = e.candidates.into_iter().nth(i)?;
        let mutant = Mutant {
            test: e.test,
            line: c.line,
            how: c.how,
        };
        Some((mutant, c.edits))
    });
    apply(text, chosen)
}

/// The languages whose tests are mutated.
enum Kind {
    Rust,
    Python,
    Go,
    Java,
    Js,
}

/// The file endings of JavaScript and TypeScript tests.
pub const JS_EXTENSIONS: &[&str] = &[".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"];

fn language(path: &str) -> Option<Kind> {
    if path.ends_with(".rs") {
        Some(Kind::Rust)
    } else if path.ends_with(".py") {
        Some(Kind::Python)
    } else if path.ends_with("_test.go") {
        Some(Kind::Go)
    } else if path.ends_with(".java") {
        Some(Kind::Java)
    } else if JS_EXTENSIONS.iter().any(|e| path.ends_with(e)) {
        Some(Kind::Js)
    } else {
        None
    }
}

/// Which of `n` assertions of `test` to mutate: FNV-1a of the seed and the
/// name, mixed (splitmix64's finalizer) so that small moduli spread.
fn choose(seed: u64, test: &str, n: usize) -> Option<usize> {
    let n = u64::try_from(n).ok().filter(|&n| n > 0)?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in seed.to_le_bytes().iter().chain(test.as_bytes()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    usize::try_from(h % n).ok()
}

/// The text with each mutant's edits applied (a mutant whose edits would
/// overlap another's is dropped); None when there is none.
fn apply(text: &str, chosen: impl Iterator<Item = (Mutant, Vec<Edit>)>) -> Option<Mutated> {
    let mut mutants = Vec::new();
    let mut edits: Vec<Edit> = Vec::new();
    for (mutant, mut own) in chosen {
        own.sort_by_key(|e| (e.start, e.end));
        let clashes = own.iter().any(|e| {
            edits
                .iter()
                .any(|d| e.start < d.end.max(d.start + 1) && d.start < e.end.max(e.start + 1))
        });
        let valid = own
            .iter()
            .all(|e| e.start <= e.end && text.get(e.start..e.end).is_some());
        if !clashes && valid && !own.is_empty() {
            edits.extend(own);
            mutants.push(mutant);
        }
    }
    if mutants.is_empty() {
        return None;
    }
    edits.sort_by_key(|e| (e.start, e.end));
    mutants.sort_by_key(|m| m.line);
    let mut out = String::with_capacity(text.len() + 16 * edits.len());
    let mut at = 0;
    for e in &edits {
        out.push_str(&text[at..e.start]);
        out.push_str(&e.with);
        at = e.end;
    }
    out.push_str(&text[at..]);
    Some(Mutated { text: out, mutants })
}

// ---------------------------------------------------------------------------
// Rust.

/// The picked Rust tests that can be reasoned about, with their eligible
/// assertions.
fn rust_eligible(path: &str, text: &str, pick: &dyn Fn(&str) -> bool) -> Vec<Eligible> {
    let src = Source::new(text, Syntax::Rust);
    rust::scan(path, text)
        .tests
        .into_iter()
        .filter(|t| rust_reasoned(t) && pick(&t.name))
        .filter_map(|t| {
            let (start, end) = t.body?;
            Some(Eligible {
                candidates: rust_assertions(&src, start, end),
                test: t.name,
            })
        })
        .collect()
}

/// Not `#[should_panic]`, not ignored (even conditionally), not under an
/// always-false `cfg`, not a `macro_rules!` template.
fn rust_reasoned(t: &TestCase) -> bool {
    !t.expects_panic
        && !t.name.contains('$')
        && t.markers
            .iter()
            .all(|m| m.conditional && m.key != "#[ignore]")
}

/// The assertion statements directly in the body `start..end`, before any
/// `return` in it (at any depth: one in a branch may have ended the test),
/// that can be mutated.
fn rust_assertions(src: &Source, start: usize, end: usize) -> Vec<Candidate> {
    let stop = first_word(src, start, end, "return").unwrap_or(end);
    let mut out = Vec::new();
    let mut statement = true;
    let mut i = start;
    while i < stop {
        let c = src.at(i);
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        (i, statement) = match c {
            b'{' => (src.close(i) + 1, true),
            b'(' | b'[' => (src.close(i) + 1, false),
            b';' => (i + 1, true),
            _ => match src.word(i) {
                Some((w, e)) => match statement.then(|| rust_statement(src, i, w, e, end)) {
                    Some(Some((candidate, after))) => {
                        out.extend(candidate.filter(|_| after <= stop));
                        (after, false)
                    }
                    _ => (e, false),
                },
                None => (i + 1, false),
            },
        };
    }
    out
}

/// An `assert!`, `assert_eq!` or `assert_ne!` statement starting with the
/// word `w` at `at` (ending at `e`), ended by `;` or the body's end: its
/// mutation, if it has one, and where it ends.
fn rust_statement(
    src: &Source,
    at: usize,
    w: &str,
    e: usize,
    end: usize,
) -> Option<(Option<Candidate>, usize)> {
    if !matches!(w, "assert" | "assert_eq" | "assert_ne") || src.at(e) != b'!' {
        return None;
    }
    let open = src.skip_ws(e + 1);
    if src.at(open) != b'(' {
        return None;
    }
    let close = src.close(open);
    let next = src.skip_ws(close + 1);
    if close >= end || !(src.at(next) == b';' || next >= end) {
        return None;
    }
    Some((rust_mutation(src, at, w, open), close + 1))
}

/// How to make the assertion fail: a literal changed, `assert_eq!` ↔
/// `assert_ne!`, or the condition negated. None when its arguments do not
/// read as expected (a message that is not a string literal: a comma of a
/// generic `f::<A, B>()` split them).
fn rust_mutation(src: &Source, at: usize, w: &str, open: usize) -> Option<Candidate> {
    let args = arguments(src, open);
    let compared = if w == "assert" { 1 } else { 2 };
    let message_ok = args
        .get(compared)
        .is_none_or(|&(a, b)| trimmed(src, a, b).is_some_and(|(s, _)| src.string_at(s).is_some()));
    if args.len() < compared || !message_ok {
        return None;
    }
    let line = src.line(at);
    let candidate = |edits: Vec<Edit>, how: String| Some(Candidate { line, edits, how });
    if w == "assert" {
        let (a, b) = trimmed(src, args[0].0, args[0].1)?;
        return candidate(
            vec![insert(a, "!("), insert(b, ")")],
            "condition negated".into(),
        );
    }
    if w == "assert_eq" {
        if let Some((edit, how)) = [args[1], args[0]]
            .into_iter()
            .find_map(|arg| literal_edit(src, Lang::Rust, arg))
        {
            return candidate(vec![edit], how);
        }
    }
    let other = if w == "assert_eq" {
        "assert_ne"
    } else {
        "assert_eq"
    };
    let edit = Edit {
        start: at,
        end: at + w.len(),
        with: other.into(),
    };
    candidate(vec![edit], format!("`{w}!` made `{other}!`"))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Every test of `text` at `path` mutated, with `seed`.
    pub fn all(path: &str, text: &str, seed: u64) -> Option<Mutated> {
        mutate(path, text, &|_| true, seed)
    }

    /// The mutated text keeps every line, and differs from `text` only on
    /// lines of the mutants' statements (`span` lines from each).
    pub fn assert_shape(text: &str, m: &Mutated, span: usize) {
        assert_eq!(text.lines().count(), m.text.lines().count(), "{}", m.text);
        assert_eq!(text.ends_with('\n'), m.text.ends_with('\n'));
        for (n, (a, b)) in text.lines().zip(m.text.lines()).enumerate() {
            let n = u32::try_from(n + 1).unwrap();
            let near = m
                .mutants
                .iter()
                .any(|x| (x.line..x.line + span as u32).contains(&n));
            assert!(a == b || near, "line {n} changed: {a:?} → {b:?}");
        }
    }

    /// Each `(body, expected)`: the body of a one-test file mutated gives
    /// `expected` (None: left alone), with its shape kept.
    pub fn each_body(path: &str, wrap: &dyn Fn(&str) -> String, cases: &[(&str, Option<&str>)]) {
        for (body, want) in cases {
            let text = wrap(body);
            let got = all(path, &text, 0);
            match (want, &got) {
                (None, None) => {}
                (Some(want), Some(m)) => {
                    assert_eq!(m.text, wrap(want), "{body}");
                    assert_eq!(m.mutants.len(), 1, "{body}");
                    assert_shape(&text, m, body.lines().count());
                }
                _ => panic!("{body}: want {want:?}, got {got:?}"),
            }
        }
    }

    fn rust_test(body: &str) -> String {
        format!("use super::*;\n\n#[test]\nfn t() {{\n    let x = 4;\n    {body}\n}}\n")
    }

    #[test]
    fn rust_literals_change_to_another_of_the_same_type() {
        each_body(
            "tests/t.rs",
            &rust_test,
            &[
                (
                    "assert_eq!(add(2, 2), 4);",
                    Some("assert_eq!(add(2, 2), 3);"),
                ),
                (
                    "assert_eq!(4, add(2, 2));",
                    Some("assert_eq!(3, add(2, 2));"),
                ),
                ("assert_eq!(x, -5);", Some("assert_eq!(x, -4);")),
                ("assert_eq!(x, 0);", Some("assert_eq!(x, 1);")),
                ("assert_eq!(x, -0);", Some("assert_eq!(x, -1);")),
                ("assert_eq!(n, 0usize);", Some("assert_eq!(n, 1usize);")),
                ("assert_eq!(n, 1_000_u32);", Some("assert_eq!(n, 999u32);")),
                ("assert_eq!(s, \"abc\");", Some("assert_eq!(s, \"abc~\");")),
                ("assert_eq!(s, &\"\");", Some("assert_eq!(s, &\"~\");")),
                (
                    "assert_eq!(s, \"a\\\\\");",
                    Some("assert_eq!(s, \"a\\\\~\");"),
                ),
                ("assert_eq!(b, true);", Some("assert_eq!(b, false);")),
                ("assert_eq!(b, false);", Some("assert_eq!(b, true);")),
                ("assert_eq!(f, 1.5);", Some("assert_eq!(f, 2.5);")),
                ("assert_eq!(f, -0.25);", Some("assert_eq!(f, -1.25);")),
                ("assert_eq!(c, 'a');", Some("assert_eq!(c, 'b');")),
                ("assert_eq!(c, 'Z');", Some("assert_eq!(c, 'A');")),
                ("assert_eq!(c, '1');", Some("assert_eq!(c, 'a');")),
                (
                    "assert_eq!(v.len(), 2, \"len {}\", 2);",
                    Some("assert_eq!(v.len(), 1, \"len {}\", 2);"),
                ),
                (
                    "assert_eq!(\n        add(2, 2),\n        4,\n    );",
                    Some("assert_eq!(\n        add(2, 2),\n        3,\n    );"),
                ),
            ],
        );
    }

    #[test]
    fn rust_without_a_literal_is_inverted() {
        each_body(
            "tests/t.rs",
            &rust_test,
            &[
                ("assert_eq!(f(), g());", Some("assert_ne!(f(), g());")),
                ("assert_ne!(x, 5);", Some("assert_eq!(x, 5);")),
                ("assert_eq!(x, 0x10);", Some("assert_ne!(x, 0x10);")),
                ("assert_eq!(f, 1e3);", Some("assert_ne!(f, 1e3);")),
                ("assert_eq!(f, 1.5f32);", Some("assert_ne!(f, 1.5f32);")),
                ("assert_eq!(c, '\\n');", Some("assert_ne!(c, '\\n');")),
                ("assert_eq!(s, r\"abc\");", Some("assert_ne!(s, r\"abc\");")),
                ("assert_eq!(b, b'a');", Some("assert_ne!(b, b'a');")),
                ("assert_eq!(x, 4 + 1);", Some("assert_ne!(x, 4 + 1);")),
                ("assert_eq!(x, i8::MIN);", Some("assert_ne!(x, i8::MIN);")),
                (
                    "assert_eq!(x, 99999999999999999999999999999999999999999);",
                    Some("assert_ne!(x, 99999999999999999999999999999999999999999);"),
                ),
                (
                    "assert!(x > 3, \"msg {}\", x);",
                    Some("assert!(!(x > 3), \"msg {}\", x);"),
                ),
                ("assert!(ok)", Some("assert!(!(ok))")),
                (
                    "assert!(v.contains(&1) /* why */, \"m\");",
                    Some("assert!(!(v.contains(&1)) /* why */, \"m\");"),
                ),
                (
                    "assert!(\n        a ||\n        b\n    );",
                    Some("assert!(\n        !(a ||\n        b)\n    );"),
                ),
                (
                    "// assert_eq!(1, 1)\n    let s = \"assert!(x)\"; assert!(ok);",
                    Some("// assert_eq!(1, 1)\n    let s = \"assert!(x)\"; assert!(!(ok));"),
                ),
            ],
        );
    }

    #[test]
    fn rust_assertions_that_may_not_have_run_or_might_not_compile_are_left() {
        each_body(
            "tests/t.rs",
            &rust_test,
            &[
                ("for i in 0..3 {\n        assert_eq!(i, 1);\n    }", None),
                ("if x > 0 {\n        assert!(x > 0);\n    }", None),
                ("{\n        assert!(x > 0);\n    }", None),
                ("let f = |x: i32| assert!(x > 0);", None),
                ("let f = || { assert!(x > 0) };", None),
                ("return;\n    assert!(x > 0);", None),
                (
                    "if x > 0 {\n        return;\n    }\n    assert!(x > 0);",
                    None,
                ),
                ("debug_assert!(x > 0);", None),
                ("debug_assert_eq!(x, 4);", None),
                ("assert_matches!(x, Some(_));", None),
                ("std::assert!(x > 0);", None),
                ("assert!(f::<A, B>());", None),
                ("assert_eq!(f::<A, B>(), 4);", None),
                ("assert!(x > 0) || true;", None),
                ("assert![x > 0];", None),
                ("// assert_eq!(1, 1)", None),
                ("let s = \"assert!(x > 0);\";", None),
            ],
        );
        // Before a return: eligible; after: not.
        let text = rust_test("assert!(a);\n    return;\n    assert!(b);");
        for seed in 0..16 {
            let m = all("tests/t.rs", &text, seed).unwrap();
            assert_eq!(m.mutants[0].line, 6, "{seed}");
        }
    }

    const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 2), 4);\n    }\n\n    #[test]\n    #[should_panic]\n    fn panics() {\n        assert_eq!(add(2, 2), 5);\n    }\n\n    #[test]\n    #[ignore]\n    fn later() {\n        assert_eq!(add(2, 2), 4);\n    }\n\n    #[test]\n    #[cfg_attr(windows, ignore)]\n    fn unix_only() {\n        assert_eq!(add(2, 2), 4);\n    }\n\n    #[test]\n    fn subtracts() {\n        assert!(add(2, -1) == 1);\n    }\n}\n";

    #[test]
    fn rust_names_pick_and_skipped_tests() {
        let m = all("src/foo.rs", LIB, 7).unwrap();
        let names: Vec<(&str, u32, &str)> = m
            .mutants
            .iter()
            .map(|m| (m.test.as_str(), m.line, m.how.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("foo::tests::adds", 11, "expected `4` made `3`"),
                ("foo::tests::subtracts", 34, "condition negated"),
            ]
        );
        let want = LIB
            .replacen("assert_eq!(add(2, 2), 4)", "assert_eq!(add(2, 2), 3)", 1)
            .replace("assert!(add(2, -1) == 1)", "assert!(!(add(2, -1) == 1))");
        assert_eq!(m.text, want);
        assert_shape(LIB, &m, 1);
        let one = mutate("src/foo.rs", LIB, &|n| n == "foo::tests::subtracts", 7).unwrap();
        assert_eq!(one.mutants.len(), 1);
        assert!(one.text.contains("assert_eq!(add(2, 2), 4)"));
        assert_eq!(mutate("src/foo.rs", LIB, &|_| false, 7), None);
        assert_eq!(
            mutate("src/lib.rs", LIB, &|n| n.starts_with("foo"), 7),
            None
        );
        // Only `.rs` and `.py` files.
        assert_eq!(all("src/foo.go", LIB, 7), None);
    }

    #[test]
    fn seeds_choose_among_the_assertions_deterministically() {
        let text = rust_test("assert!(a);\n    assert_eq!(f(), g());\n    assert_eq!(h(), 2);");
        let lines: std::collections::BTreeSet<u32> = (0..32)
            .map(|seed| {
                let m = all("tests/t.rs", &text, seed).unwrap();
                assert_eq!(Some(&m), all("tests/t.rs", &text, seed).as_ref());
                assert_shape(&text, &m, 1);
                m.mutants[0].line
            })
            .collect();
        assert_eq!(lines.into_iter().collect::<Vec<_>>(), [6, 7, 8]);
    }

    #[test]
    fn hostile_text_does_not_panic() {
        for t in [
            "#[test] fn t() { assert_eq!(",
            "#[test] fn t() { assert!(x, ",
            "#[test] fn t() { assert_eq!(x, \"",
            "#[test] fn t() { assert_eq!(x, 'é",
            "#[test] fn t() { assert_eq!(x, -",
            "#[test] fn t() { assert!() }",
            "#[test] fn t() { assert_eq!(x) }",
        ] {
            let _ = all("tests/t.rs", t, 0);
        }
    }
}
