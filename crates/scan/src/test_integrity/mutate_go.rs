//! The Go half of the mutated-expectation canaries (see `mutate.rs`): the
//! checks of a `func TestXxx(t *testing.T)`.
//!
//! Eligible: a statement directly in the test's body (not in a loop, a
//! branch, a closure or a `t.Run`), before any `return` in the body, in a
//! test without `t.Skip` and whose file's build constraints hold:
//!
//! - `if [init;] cond { … t.Error(…) … }` with no `else`, where a
//!   `t.Error`/`Errorf`/`Fatal`/`Fatalf`/`Fail`/`FailNow` on the test's
//!   `t` is directly in the block, becomes `if [init;] !(cond) {`: where
//!   the check passed, it now reports a failure;
//! - a testify `assert.X(t, …)` / `require.X(t, …)` in a file that imports
//!   testify becomes its opposite (`Equal` ↔ `NotEqual`, `True` ↔ `False`,
//!   `Nil` ↔ `NotNil`, `NoError` ↔ `Error`, …).
//!
//! A failed check may end the test (`t.Fatal`), so its subtests after it
//! have no result: the canary run judges a mutated test's subtests not at
//! all.

use super::go::{self, FAILS};
use super::lex::{Source, Syntax};
use super::mutate_parts::{first_word, insert, top_level, trimmed, Candidate, Edit, Eligible};

/// testify's assertions and their opposites, both ways.
const OPPOSITES: &[(&str, &str)] = &[
    ("Equal", "NotEqual"),
    ("EqualValues", "NotEqualValues"),
    ("True", "False"),
    ("Nil", "NotNil"),
    ("NoError", "Error"),
    ("Empty", "NotEmpty"),
    ("Zero", "NotZero"),
    ("Contains", "NotContains"),
    ("Same", "NotSame"),
    ("Subset", "NotSubset"),
    ("Regexp", "NotRegexp"),
];

/// The picked Go tests without skips, with their eligible checks.
pub(super) fn eligible(text: &str, pick: &dyn Fn(&str) -> bool) -> Vec<Eligible> {
    let src = Source::new(text, Syntax::Go);
    let testify = text.contains("\"github.com/stretchr/testify/");
    go::scan(text)
        .tests
        .into_iter()
        .filter(|t| t.markers.is_empty() && pick(&t.name))
        .filter_map(|t| {
            let (start, end) = t.body?;
            let param = test_param(&src, start);
            Some(Eligible {
                candidates: checks(&src, start, end, &param, testify),
                test: t.name,
            })
        })
        .collect()
}

/// The name of the test's `*testing.T` parameter: the first word of the
/// parameter list before the body that opens at `start`.
fn test_param(src: &Source, start: usize) -> String {
    let head = src.code_str(src.line_start(start.saturating_sub(1)), start);
    head.rsplit_once('(')
        .map(|(_, p)| p)
        .and_then(|p| {
            p.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .find(|w| !w.is_empty())
        })
        .unwrap_or("t")
        .to_string()
}

/// Whether the statement ending before `i` lets a newline end it (Go's
/// automatic semicolon: after a word, a literal, `)`, `]`, `}`, `++`, `--`).
fn newline_ends(src: &Source, i: usize, from: usize) -> bool {
    match src.prev_sig(i) {
        Some(p) if p >= from => {
            let c = src.at(p);
            c.is_ascii_alphanumeric()
                || matches!(c, b'_' | b')' | b']' | b'}' | b'"' | b'\'' | b'`')
                || src.inside_string(p)
                || src.string_at(p).is_some()
                || ((c == b'+' || c == b'-') && p > 0 && src.at(p - 1) == c)
        }
        _ => true,
    }
}

/// The checks directly in the body `start..end`, before any `return` in it.
fn checks(src: &Source, start: usize, end: usize, t: &str, testify: bool) -> Vec<Candidate> {
    let stop = first_word(src, start, end, "return").unwrap_or(end);
    let mut out = Vec::new();
    let mut statement = true;
    let mut i = start;
    while i < stop {
        let c = src.at(i);
        if c == b'\n' {
            statement = statement || newline_ends(src, i, start);
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        (i, statement) = match c {
            b'{' => (src.close(i) + 1, false),
            b'(' | b'[' => (src.close(i) + 1, false),
            b';' => (i + 1, true),
            _ => match src.word(i) {
                Some(("if", e)) if statement => match if_check(src, i, e, stop, t) {
                    Some((candidate, after)) => {
                        out.extend(candidate);
                        (after, false)
                    }
                    None => (e, false),
                },
                Some((w @ ("assert" | "require"), e)) if statement && testify => {
                    if let Some(candidate) = testify_check(src, i, w, e, t) {
                        out.push(candidate);
                    }
                    (e, false)
                }
                Some((_, e)) => (e, false),
                None => (i + 1, false),
            },
        };
    }
    out
}

/// An `if` at `at` (the word ends at `e`): its mutation when its block
/// reports a failure on `t` directly and it has no `else`, and where the
/// statement ends.
fn if_check(
    src: &Source,
    at: usize,
    e: usize,
    stop: usize,
    t: &str,
) -> Option<(Option<Candidate>, usize)> {
    let brace = top_level(src, e, stop, b'{')?;
    let close = src.close(brace);
    if close >= stop {
        return None;
    }
    let after = src.skip_ws(close + 1);
    let has_else = src.word(after).is_some_and(|(w, _)| w == "else");
    let from = top_level(src, e, brace, b';').map_or(e, |s| s + 1);
    let candidate = (!has_else && fails_directly(src, brace, close, t))
        .then(|| trimmed(src, from, brace))
        .flatten()
        .map(|(a, b)| Candidate {
            line: src.line(at),
            edits: vec![insert(a, "!("), insert(b, ")")],
            how: "condition negated".into(),
        });
    Some((candidate, close + 1))
}

/// Whether the block `brace..close` calls `t.Error` (or another way to
/// fail) outside any bracket of its own.
fn fails_directly(src: &Source, brace: usize, close: usize, t: &str) -> bool {
    let mut i = brace + 1;
    while i < close {
        match src.at(i) {
            b'{' | b'(' | b'[' => i = src.close(i) + 1,
            b'.' => {
                let receiver = src.word_before(i);
                let call = src
                    .word(i + 1)
                    .filter(|(w, e)| FAILS.contains(w) && src.at(src.skip_space(*e)) == b'(');
                if receiver == t && call.is_some() {
                    return true;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    false
}

/// A testify call `assert.X(t, …)` at `at` (the package word `w` ends at
/// `e`): X made its opposite.
fn testify_check(src: &Source, at: usize, w: &str, e: usize, t: &str) -> Option<Candidate> {
    if src.at(e) != b'.' {
        return None;
    }
    let (name, name_end) = src.word(e + 1)?;
    let open = src.skip_space(name_end);
    if src.at(open) != b'(' {
        return None;
    }
    let first = src.args(open).first().copied()?;
    if src.code_str(first.0, first.1).trim() != t {
        return None;
    }
    let other = OPPOSITES.iter().find_map(|&(a, b)| {
        if a == name {
            Some(b)
        } else if b == name {
            Some(a)
        } else {
            None
        }
    })?;
    Some(Candidate {
        line: src.line(at),
        edits: vec![Edit {
            start: e + 1,
            end: name_end,
            with: other.to_string(),
        }],
        how: format!("`{w}.{name}` made `{w}.{other}`"),
    })
}

#[cfg(test)]
mod tests {
    use super::super::mutate::tests::{all, each_body};

    fn go_test(body: &str) -> String {
        format!("package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {{\n\tgot := Add(2, 2)\n\t{body}\n}}\n")
    }

    #[test]
    fn a_check_directly_in_the_body_is_negated() {
        each_body(
            "calc_test.go",
            &go_test,
            &[
                (
                    "if got != 4 {\n\t\tt.Fatalf(\"got %d\", got)\n\t}",
                    Some("if !(got != 4) {\n\t\tt.Fatalf(\"got %d\", got)\n\t}"),
                ),
                (
                    "if v := Add(1, 1); v != 2 {\n\t\tt.Error(v)\n\t}",
                    Some("if v := Add(1, 1); !(v != 2) {\n\t\tt.Error(v)\n\t}"),
                ),
                (
                    "if got != 4 || got < 0 { t.Errorf(\"x\") }",
                    Some("if !(got != 4 || got < 0) { t.Errorf(\"x\") }"),
                ),
                (
                    "if err := check(); err != nil {\n\t\tt.Log(\"x\")\n\t\tt.FailNow()\n\t}",
                    Some("if err := check(); !(err != nil) {\n\t\tt.Log(\"x\")\n\t\tt.FailNow()\n\t}"),
                ),
                // A block that only logs, or fails only in a branch of its own.
                ("if got != 4 {\n\t\tt.Log(got)\n\t}", None),
                ("if got != 4 {\n\t\tif got > 9 { t.Fatal() }\n\t}", None),
                // An `else`: the test may have passed through either branch.
                ("if got != 4 {\n\t\tt.Fatal()\n\t} else {\n\t\tt.Log()\n\t}", None),
                // In a loop, a closure, a subtest: not certain to run.
                ("for i := 0; i < 1; i++ {\n\t\tif got != 4 { t.Fatal() }\n\t}", None),
                ("t.Run(\"x\", func(t *testing.T) {\n\t\tif got != 4 { t.Fatal() }\n\t})", None),
                ("func() {\n\t\tif got != 4 { t.Fatal() }\n\t}()", None),
                // After a return that may have ended the test.
                ("if got == 0 { return }\n\tif got != 4 { t.Fatal() }", None),
                // Another `t`'s failure is not this test's.
                ("if got != 4 { other.Fatal() }", None),
            ],
        );
    }

    #[test]
    fn testify_calls_become_their_opposite_only_where_testify_is_imported() {
        let wrap = |body: &str| {
            format!("package calc\n\nimport (\n\t\"testing\"\n\n\t\"github.com/stretchr/testify/assert\"\n\t\"github.com/stretchr/testify/require\"\n)\n\nfunc TestAdd(t *testing.T) {{\n\t{body}\n}}\n")
        };
        each_body(
            "calc_test.go",
            &wrap,
            &[
                (
                    "assert.Equal(t, 4, Add(2, 2))",
                    Some("assert.NotEqual(t, 4, Add(2, 2))"),
                ),
                (
                    "require.NoError(t, check())",
                    Some("require.Error(t, check())"),
                ),
                (
                    "assert.False(t, Add(2, 2) == 5)",
                    Some("assert.True(t, Add(2, 2) == 5)"),
                ),
                // Not on the test's `t`, or with no known opposite.
                ("assert.Equal(other, 4, Add(2, 2))", None),
                ("assert.Panics(t, func() { Add(1, 1) })", None),
            ],
        );
        let own = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tassert.Equal(t, 4, Add(2, 2))\n}\n";
        assert!(
            all("calc_test.go", own, 0).is_none(),
            "an `assert` package of the project's own may have no NotEqual"
        );
    }

    #[test]
    fn skipped_tests_helpers_and_other_files_are_left() {
        let skipped = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tt.Skip(\"later\")\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal()\n\t}\n}\n";
        assert!(all("calc_test.go", skipped, 0).is_none());
        let helper = "package calc\n\nimport \"testing\"\n\nfunc check(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal()\n\t}\n}\n";
        assert!(all("calc_test.go", helper, 0).is_none(), "not a test");
        let two = "package calc\n\nimport \"testing\"\n\nfunc TestA(tt *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\ttt.Fatal()\n\t}\n}\n\nfunc TestB(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Error()\n\t}\n}\n";
        let m = all("calc_test.go", two, 0).unwrap();
        let names: Vec<&str> = m.mutants.iter().map(|x| x.test.as_str()).collect();
        assert_eq!(names, ["TestA", "TestB"]);
        assert_eq!(m.mutants[0].line, 6);
        assert!(
            m.text.contains("if !(Add(2, 2) != 4) {") && m.text.contains("if !(Add(1, 2) != 3) {"),
            "{}",
            m.text
        );
        assert!(
            all(
                "calc.go",
                "package calc\n\nfunc TestA(t *testing.T) {\n\tif 1 != 1 { t.Fatal() }\n}\n",
                0
            )
            .is_none(),
            "not a _test.go file"
        );
    }
}
