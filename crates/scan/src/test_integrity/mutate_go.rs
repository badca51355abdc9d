//! The Go half of the mutated-expectation canaries (see `mutate.rs`): the
//! checks of a `func TestXxx(t *testing.T)`.
//!
//! Eligible: a statement directly in the test's body (not in a branch or
//! a closure), before any `return` in the body, in a test without `t.Skip`
//! and whose file's build constraints hold — or directly in the body of a
//! table-driven loop (`for _, tc := range tests {` over a composite literal
//! with rows, with no `continue`, `break`, `goto`, `return` or skip in it)
//! or of a `t.Run` subtest's function, which certainly run:
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
                Some(("for", e)) if statement => match table_loop(src, e, stop, t, testify) {
                    Some((found, after)) => {
                        out.extend(found);
                        (after, false)
                    }
                    None => (e, false),
                },
                Some((w, e)) if statement && w == t => match subtest(src, e, stop, testify) {
                    Some((found, after)) => {
                        out.extend(found);
                        (after, false)
                    }
                    None => (e, false),
                },
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

/// Words that may end a loop's or a subtest's body before a check in it
/// ran, or skip it.
const LEAVES: &[&str] = &[
    "continue", "break", "goto", "return", "Skip", "SkipNow", "Skipf",
];

/// Whether the block `a..b` has a word that may leave it early.
fn may_leave(src: &Source, a: usize, b: usize) -> bool {
    LEAVES.iter().any(|w| first_word(src, a, b, w).is_some())
}

/// A table-driven loop whose `for` ends at `e`: `for [k, v :=] range
/// TABLE {`, where TABLE is a composite literal with rows, written there or
/// assigned once in the file (`tests := []struct{…}{{…}, …}`), and whose
/// body has no `continue`, `break`, `goto`, `return` or skip: every row
/// runs the body, so a check negated there fails the test. Its checks
/// (and those of `t.Run` subtests directly in it) and where it ends.
fn table_loop(
    src: &Source,
    e: usize,
    stop: usize,
    t: &str,
    testify: bool,
) -> Option<(Vec<Candidate>, usize)> {
    let range = first_word(src, e, stop, "range")?;
    let table = src.skip_ws(range + "range".len());
    let (rows, brace) = match src.word(table) {
        Some((name, end)) if !matches!(name, "map" | "struct") => {
            (table_has_rows(src, name), src.skip_ws(end))
        }
        _ => {
            let (rows, end) = literal(src, table, stop)?;
            (rows, src.skip_ws(end))
        }
    };
    let header_ok =
        top_level(src, e, range, b';').is_none() && top_level(src, e, range, b'{').is_none();
    if src.at(brace) != b'{' || !header_ok {
        return None;
    }
    let close = src.close(brace);
    if close >= stop {
        return None;
    }
    let found = if rows && !may_leave(src, brace, close) {
        checks(src, brace + 1, close, t, testify)
    } else {
        Vec::new()
    };
    Some((found, close + 1))
}

/// A subtest `t.Run(name, func(t *testing.T) { … })` whose receiver word
/// ends at `e`: the checks of its function's body on its own `t` (a failed
/// subtest fails the test), none when the body may leave early or skip.
fn subtest(src: &Source, e: usize, stop: usize, testify: bool) -> Option<(Vec<Candidate>, usize)> {
    if src.at(e) != b'.' || src.word(e + 1).map(|(w, _)| w) != Some("Run") {
        return None;
    }
    let open = src.skip_ws(e + 1 + "Run".len());
    if src.at(open) != b'(' {
        return None;
    }
    let close = src.close(open);
    if close >= stop {
        return None;
    }
    let args = src.args(open);
    let (fa, fb) = *args.get(1).filter(|_| args.len() == 2)?;
    let func = src.skip_ws(fa);
    if src.word(func).map(|(w, _)| w) != Some("func") {
        return None;
    }
    let params = src.skip_ws(func + "func".len());
    if src.at(params) != b'(' {
        return None;
    }
    let param = src
        .word(src.skip_ws(params + 1))
        .map(|(w, _)| w.to_string())?;
    let body = top_level(src, src.close(params) + 1, fb, b'{')?;
    let end = src.close(body);
    let found = if may_leave(src, body, end) {
        Vec::new()
    } else {
        checks(src, body + 1, end, &param, testify)
    };
    Some((found, close + 1))
}

/// Whether `name` is assigned exactly once in the file, to a composite
/// literal with rows (`name := []T{{…}}`, `var name = map[K]V{…}`).
fn table_has_rows(src: &Source, name: &str) -> bool {
    let mut assigned = Vec::new();
    let mut i = 0;
    while i < src.len() {
        match src.word(i) {
            Some((w, e)) => {
                let field = i > 0 && src.at(i - 1) == b'.';
                if w == name && !field {
                    let next = src.skip_ws(e);
                    let op = src.code_str(next, next + 2);
                    let declared = src.word_before(src.prev_sig(i).map_or(0, |p| p + 1)) == "var";
                    if op == ":="
                        || (op.starts_with('=') && op != "==")
                        || op.starts_with(',')
                        || declared
                    {
                        assigned.push(next);
                    }
                }
                i = e;
            }
            None => i += 1,
        }
    }
    match assigned.as_slice() {
        [at] => {
            let op = src.code_str(*at, at + 2);
            let value = if op == ":=" {
                at + 2
            } else if op.starts_with('=') {
                at + 1
            } else {
                return false;
            };
            literal(src, src.skip_ws(value), src.len()).is_some_and(|(rows, _)| rows)
        }
        _ => false,
    }
}

/// A composite literal starting at `i` (its type, then `{…}`): whether it
/// has anything in it, and where it ends. None when this is not one (a
/// call, a variable).
fn literal(src: &Source, mut i: usize, stop: usize) -> Option<(bool, usize)> {
    let mut type_body = false;
    while i < stop {
        match src.at(i) {
            b'[' => {
                i = src.close(i) + 1;
                type_body = false;
            }
            b'{' if type_body => {
                i = src.close(i) + 1;
                type_body = false;
            }
            b'{' => {
                let close = src.close(i);
                return Some((trimmed(src, i + 1, close).is_some(), close + 1));
            }
            b'*' | b'.' => i += 1,
            c if c.is_ascii_whitespace() => i += 1,
            _ => {
                let (w, e) = src.word(i)?;
                if src.at(src.skip_ws(e)) == b'(' {
                    return None;
                }
                type_body = matches!(w, "struct" | "interface");
                i = e;
            }
        }
    }
    None
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
                // A counted loop, a closure: not certain to run.
                ("for i := 0; i < 1; i++ {\n\t\tif got != 4 { t.Fatal() }\n\t}", None),
                ("func() {\n\t\tif got != 4 { t.Fatal() }\n\t}()", None),
                // A subtest runs its function, and fails the test with it.
                (
                    "t.Run(\"x\", func(st *testing.T) {\n\t\tif got != 4 { st.Fatal() }\n\t})",
                    Some("t.Run(\"x\", func(st *testing.T) {\n\t\tif !(got != 4) { st.Fatal() }\n\t})"),
                ),
                (
                    "t.Run(\"x\", func(t *testing.T) {\n\t\tif testing.Short() { t.Skip() }\n\t\tif got != 4 { t.Fatal() }\n\t})",
                    None,
                ),
                // A table-driven loop over rows written there.
                (
                    "for _, c := range []struct{ a, want int }{{2, 4}} {\n\t\tif Add(c.a, c.a) != c.want { t.Errorf(\"x\") }\n\t}",
                    Some("for _, c := range []struct{ a, want int }{{2, 4}} {\n\t\tif !(Add(c.a, c.a) != c.want) { t.Errorf(\"x\") }\n\t}"),
                ),
                // No rows, or a row may be passed over.
                ("for _, c := range []int{} {\n\t\tif Add(c, c) != 2*c { t.Error() }\n\t}", None),
                ("for _, c := range []int{1} {\n\t\tif c > 9 { continue }\n\t\tif Add(c, c) != 2*c { t.Error() }\n\t}", None),
                // After a return that may have ended the test.
                ("if got == 0 { return }\n\tif got != 4 { t.Fatal() }", None),
                // Another `t`'s failure is not this test's.
                ("if got != 4 { other.Fatal() }", None),
            ],
        );
    }

    /// The usual table-driven test: a table assigned once, a loop over it,
    /// a subtest per row whose check uses the subtest's `t`.
    #[test]
    fn a_table_driven_tests_check_is_negated_in_its_subtest() {
        let table = |rows: &str, extra: &str| {
            format!("package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {{\n\ttests := map[string]struct {{\n\t\ta, b, want int\n\t}}{{{rows}}}\n{extra}\tfor name, tc := range tests {{\n\t\tt.Run(name, func(t *testing.T) {{\n\t\t\tif got := Add(tc.a, tc.b); got != tc.want {{\n\t\t\t\tt.Errorf(\"got %d\", got)\n\t\t\t}}\n\t\t}})\n\t}}\n}}\n")
        };
        let text = table("\n\t\t\"two\": {1, 1, 2},\n\t", "");
        let m = all("calc_test.go", &text, 0).unwrap();
        assert_eq!(m.mutants.len(), 1, "{}", m.text);
        assert_eq!(m.mutants[0].test, "TestAdd");
        assert!(
            m.text
                .contains("if got := Add(tc.a, tc.b); !(got != tc.want) {"),
            "{}",
            m.text
        );
        // An empty table, or one assigned again: not certain to have rows.
        for text in [
            table("", ""),
            table("\"two\": {1, 1, 2}", "\ttests = nil\n"),
        ] {
            assert!(all("calc_test.go", &text, 0).is_none(), "{text}");
        }
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
