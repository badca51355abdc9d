//! The JavaScript half of the mutated-expectation canaries (see
//! `mutate.rs`): the `expect` chains of jest and vitest and node's
//! `assert`, for jest and vitest runs.
//!
//! Eligible: an assertion statement directly in the test's body (not in a
//! loop, a branch, a callback or a block), before any `return` in the
//! body, in a test that is not skipped, pending, a to-do or expected to
//! fail (on the test or a group around it) and whose name the runner
//! prints as written (plain string titles, no `.each`: a mutated test is
//! then known by name even where the results leave it out):
//!
//! - `expect(x).toBe(LIT)`, `.toEqual(LIT)`, `.toStrictEqual(LIT)` (also
//!   after `.resolves`/`.rejects`): the literal changed (`4` → `3`, `"a"`
//!   → `"a~"`, `true` → `false`, `null` → `0`);
//! - any other `expect(…)` chain ending in a matcher (`.toX(…)`), with
//!   only `.not`, `.resolves` or `.rejects` between: `.not` added before
//!   the matcher, or taken away where it is — a matcher under `.not`
//!   passes exactly when it would fail;
//! - node's `assert.strictEqual(a, b)` and its kin with a literal operand:
//!   the literal changed; otherwise `X` ↔ `notX` (`equal`, `strictEqual`,
//!   `deepEqual`, `deepStrictEqual`, `match`); `assert(c)` and
//!   `assert.ok(c)` become `assert(!(c))` — only in a file that imports
//!   node's `assert` and declares no `assert` of its own.
//!
//! A file that declares its own `expect` is left alone (its matchers may
//! have no `.not`). JavaScript ends a statement at a line's end as well as
//! at `;`: an assertion counts as a statement when it starts a line (or
//! follows `;`, `{` or `}`) and nothing but `;`, a line's end or the
//! body's end follows it.

use super::js;
use super::lex::{is_ident_byte, Source, Syntax};
use super::mutate_parts::{
    arguments, first_word, insert, literal_edit, statements, Candidate, Edit, Eligible, Lang,
};

/// Matchers whose one literal argument is the expected value.
const EQUALITY: &[&str] = &["toBe", "toEqual", "toStrictEqual"];

/// Words allowed between `expect(…)` and its matcher.
const MODIFIERS: &[&str] = &["not", "resolves", "rejects"];

/// node's `assert` functions and their opposites, both ways.
const OPPOSITES: &[(&str, &str)] = &[
    ("equal", "notEqual"),
    ("strictEqual", "notStrictEqual"),
    ("deepEqual", "notDeepEqual"),
    ("deepStrictEqual", "notDeepStrictEqual"),
    ("match", "doesNotMatch"),
];

/// The modules a real `expect` is imported from.
const FRAMEWORKS: &[&str] = &["@jest/globals", "vitest"];

/// The module names node's `assert` is imported by.
const ASSERT_MODULES: &[&str] = &[
    "assert",
    "node:assert",
    "assert/strict",
    "node:assert/strict",
];

/// The picked JavaScript tests that run, with their eligible assertions.
pub(super) fn eligible(text: &str, pick: &dyn Fn(&str) -> bool) -> Vec<Eligible> {
    let src = Source::new(text, Syntax::Js);
    if declares(&src, "expect", FRAMEWORKS) {
        return Vec::new();
    }
    let node_assert = imports_node_assert(&src) && !declares(&src, "assert", ASSERT_MODULES);
    let tests = js::scan(text).tests;
    // `.only` anywhere in the file: only the focused tests run.
    let focused = tests.iter().any(|t| t.focus.is_some());
    tests
        .into_iter()
        .filter(|t| {
            t.named_literally
                && t.markers.is_empty()
                && t.early_return.is_none()
                && (!focused || t.focus.is_some())
                && pick(&t.name)
        })
        .filter_map(|t| {
            let (start, end) = t.body?;
            Some(Eligible {
                candidates: assertions(&src, start, end, node_assert),
                test: t.name,
            })
        })
        .collect()
}

/// Whether the file binds `name` to something of its own: `function
/// name`, `class name`, `const`/`let`/`var name` or a destructured `{ name
/// }` whose source is not one of the `real` modules (`require('vitest')`,
/// `from "node:assert"`, named within the statement).
fn declares(src: &Source, name: &str, real: &[&str]) -> bool {
    let from_real = |at: usize| {
        let rest = window(src, at, 120);
        let rest = rest.split(['\n', ';']).next().unwrap_or(rest);
        real.iter()
            .any(|m| rest.contains(&format!("'{m}'")) || rest.contains(&format!("\"{m}\"")))
    };
    let mut i = 0;
    while let Some(at) = first_word(src, i, src.len(), name) {
        i = at + name.len();
        let Some(before) = src.prev_sig(at) else {
            continue;
        };
        let after = src.skip_ws(at + name.len());
        let declared = match word_ending_at(src, before) {
            Some("function" | "class") => true,
            Some("const" | "let" | "var") => !from_real(after),
            _ => {
                let in_braces = matches!(src.at(before), b'{' | b',')
                    && matches!(src.at(after), b'}' | b',' | b':');
                let close = top_level_byte(src, after, b'}').filter(|_| in_braces);
                close.is_some_and(|close| {
                    let next = src.skip_ws(close + 1);
                    let destructured = src.at(next) == b'=' || window(src, next, 4) == "from";
                    destructured && !from_real(close)
                })
            }
        };
        if declared {
            return true;
        }
    }
    false
}

/// Up to `n` bytes of the text from `at`, cut at a character's edge.
fn window<'a>(src: &Source<'a>, at: usize, n: usize) -> &'a str {
    let mut b = (at + n).min(src.text.len());
    while b > at && !src.text.is_char_boundary(b) {
        b -= 1;
    }
    src.slice(at, b)
}

/// The word whose last byte is at `end`, if any.
fn word_ending_at<'a>(src: &Source<'a>, end: usize) -> Option<&'a str> {
    if !is_ident_byte(src.at(end)) {
        return None;
    }
    let mut s = end;
    while s > 0 && is_ident_byte(src.at(s - 1)) {
        s -= 1;
    }
    src.word(s).map(|(w, _)| w)
}

/// The first `byte` at or after `from` that is code, skipping brackets.
fn top_level_byte(src: &Source, from: usize, byte: u8) -> Option<usize> {
    let mut i = from;
    while i < src.len() {
        match src.at(i) {
            c if c == byte => return Some(i),
            b'(' | b'[' | b'{' => i = src.close(i) + 1,
            _ => i += 1,
        }
    }
    None
}

/// Whether a string literal of the file names node's `assert` module.
fn imports_node_assert(src: &Source) -> bool {
    let mut i = 0;
    while i < src.len() {
        if let Some((s, e)) = src.string_at(i) {
            let inner = src.slice(s, e).get(1..e - s - 1).unwrap_or("");
            if ASSERT_MODULES.contains(&inner) {
                return true;
            }
            i = e;
        } else {
            i += 1;
        }
    }
    false
}

/// The assertion statements directly in the body `start..end`, before any
/// `return` in it, that can be mutated.
fn assertions(src: &Source, start: usize, end: usize, node_assert: bool) -> Vec<Candidate> {
    statements(src, (start, end), true, |at, stop| {
        statement_at(src, at, stop, end, node_assert)
    })
}

/// One `.word` or `.word(…)` of a chain: where its dot and word are, and
/// its call's `(` if it is called.
struct Link<'a> {
    dot: usize,
    word: &'a str,
    word_end: usize,
    open: Option<usize>,
}

/// The `.word(…)` links after `from`, and where the chain ends.
fn links<'a>(src: &Source<'a>, from: usize) -> (Vec<Link<'a>>, usize) {
    let mut out = Vec::new();
    let mut end = from;
    for _ in 0..8 {
        let dot = src.skip_ws(end);
        if src.at(dot) != b'.' {
            break;
        }
        let w = src.skip_ws(dot + 1);
        let Some((word, word_end)) = src.word(w) else {
            break;
        };
        let paren = src.skip_ws(word_end);
        let open = (src.at(paren) == b'(').then_some(paren);
        end = open.map_or(word_end, |o| src.close(o) + 1);
        out.push(Link {
            dot,
            word,
            word_end,
            open,
        });
    }
    (out, end)
}

/// Whether the statement that ended at `after` really ends there: `;`, a
/// line's end, a `}` or the body's end follow.
fn ends_statement(src: &Source, after: usize, end: usize) -> Option<usize> {
    let raw = src.text.as_bytes();
    let mut k = after;
    while k < end && src.at(k).is_ascii_whitespace() {
        if raw.get(k) == Some(&b'\n') {
            return Some(after);
        }
        k += 1;
    }
    match src.at(k) {
        b';' => Some(k + 1),
        b'}' => Some(k),
        _ if k >= end => Some(k),
        _ => None,
    }
}

/// A statement at `at` that is an assertion (`[await] expect(…)….toX(…)`,
/// `assert…(…)`): its mutation (None when it cannot be mutated) and
/// where it ends. None when no assertion starts there.
fn statement_at(
    src: &Source,
    at: usize,
    stop: usize,
    end: usize,
    node_assert: bool,
) -> Option<(Option<Candidate>, usize)> {
    let (mut word, mut word_end) = src.word(at)?;
    let mut head = at;
    if word == "await" {
        head = src.skip_ws(word_end);
        (word, word_end) = src.word(head)?;
    }
    let line = src.line(head);
    match word {
        "expect" => {
            let open = src.skip_ws(word_end);
            if src.at(open) != b'(' {
                return None;
            }
            let (chain, chain_end) = links(src, src.close(open) + 1);
            let after = ends_statement(src, chain_end, end)?;
            if chain_end > stop {
                return None;
            }
            Some((expect_mutation(src, &chain, line), after))
        }
        "assert" if node_assert => {
            let (chain, chain_end) = links(src, word_end);
            let open = match chain.as_slice() {
                [] => {
                    let open = src.skip_ws(word_end);
                    (src.at(open) == b'(').then_some(open)?
                }
                [only] => only.open?,
                _ => return None,
            };
            let close_end = chain.first().map_or(src.close(open) + 1, |_| chain_end);
            let after = ends_statement(src, close_end, end)?;
            if close_end > stop {
                return None;
            }
            Some((assert_mutation(src, chain.first(), open, line), after))
        }
        _ => None,
    }
}

/// How an `expect` chain is made to fail: its expected literal changed, or
/// `.not` added or taken away.
fn expect_mutation(src: &Source, chain: &[Link], line: u32) -> Option<Candidate> {
    let (matcher, between) = chain.split_last()?;
    let open = matcher.open?;
    let plain = matcher.word.starts_with("to") && matcher.word.len() > 2;
    if !plain
        || between
            .iter()
            .any(|l| l.open.is_some() || !MODIFIERS.contains(&l.word))
    {
        return None;
    }
    let negated = between.iter().find(|l| l.word == "not");
    let args = arguments(src, open);
    if negated.is_none() && EQUALITY.contains(&matcher.word) && args.len() == 1 {
        if let Some((edit, how)) = literal_edit(src, Lang::Js, args[0]) {
            return Some(Candidate {
                line,
                edits: vec![edit],
                how,
            });
        }
    }
    let (edit, how) = match negated {
        Some(not) => (
            Edit {
                start: not.dot,
                end: not.word_end,
                with: String::new(),
            },
            format!("`.not.{}` made `.{}`", matcher.word, matcher.word),
        ),
        None => (
            insert(matcher.dot, ".not"),
            format!("`.{}` made `.not.{}`", matcher.word, matcher.word),
        ),
    };
    Some(Candidate {
        line,
        edits: vec![edit],
        how,
    })
}

/// How a node `assert` call is made to fail: a literal operand of an
/// equality changed, the function turned into its opposite, or the
/// condition of `assert(c)`/`assert.ok(c)` negated.
fn assert_mutation(src: &Source, link: Option<&Link>, open: usize, line: u32) -> Option<Candidate> {
    let args = arguments(src, open);
    let name = link.map_or("ok", |l| l.word);
    if name == "ok" {
        let &(a, b) = args.first()?;
        let (a, b) = super::mutate_parts::trimmed(src, a, b)?;
        return Some(Candidate {
            line,
            edits: vec![insert(a, "!("), insert(b, ")")],
            how: "condition negated".into(),
        });
    }
    let link = link?;
    let (_, other) = OPPOSITES
        .iter()
        .flat_map(|&(a, b)| [(a, b), (b, a)])
        .find(|(a, _)| *a == name)?;
    let equality = !name.starts_with("not") && name != "match";
    if equality && args.len() >= 2 {
        if let Some((edit, how)) = [args[1], args[0]]
            .into_iter()
            .find_map(|arg| literal_edit(src, Lang::Js, arg))
        {
            return Some(Candidate {
                line,
                edits: vec![edit],
                how,
            });
        }
    }
    if args.len() < 2 {
        return None;
    }
    let start = link.word_end - link.word.len();
    Some(Candidate {
        line,
        edits: vec![Edit {
            start,
            end: link.word_end,
            with: other.to_string(),
        }],
        how: format!("`assert.{name}` made `assert.{other}`"),
    })
}

#[cfg(test)]
mod tests {
    use super::super::mutate::mutate;

    fn mutated(text: &str) -> Option<(String, Vec<String>)> {
        let m = mutate("src/sum.test.js", text, &|_| true, 1)?;
        Some((
            m.text,
            m.mutants
                .iter()
                .map(|m| format!("{}: {}", m.test, m.how))
                .collect(),
        ))
    }

    #[test]
    fn jest_expectations_are_changed_so_they_must_fail() {
        let cases: &[(&str, &str)] = &[
            ("expect(add(2, 2)).toBe(4);", "expect(add(2, 2)).toBe(3);"),
            (
                "expect(add(2, 2)).toEqual('ab')",
                "expect(add(2, 2)).toEqual('ab~')",
            ),
            ("expect(ok()).toBe(true)", "expect(ok()).toBe(false)"),
            ("expect(f()).toBe(null)", "expect(f()).toBe(0)"),
            (
                "expect(list).toContain(3);",
                "expect(list).not.toContain(3);",
            ),
            (
                "expect(list).not.toContain(3);",
                "expect(list).toContain(3);",
            ),
            ("expect(x).toBeTruthy()", "expect(x).not.toBeTruthy()"),
            ("expect(x).toBe(y);", "expect(x).not.toBe(y);"),
            (
                "await expect(p).resolves.toBe(2);",
                "await expect(p).resolves.toBe(1);",
            ),
            (
                "await expect(p).rejects.toThrow('x');",
                "await expect(p).rejects.not.toThrow('x');",
            ),
            (
                "expect(add(1, 1))\n    .toBe(2);",
                "expect(add(1, 1))\n    .toBe(1);",
            ),
            ("expect(x).not.toBe(4);", "expect(x).toBe(4);"),
        ];
        for (from, to) in cases {
            let text = format!(
                "const {{ add }} = require('./sum');\n\ntest('adds', () => {{\n  {from}\n}});\n"
            );
            let want = format!(
                "const {{ add }} = require('./sum');\n\ntest('adds', () => {{\n  {to}\n}});\n"
            );
            let got = mutated(&text).map(|m| m.0);
            assert_eq!(got.as_deref(), Some(want.as_str()), "{from}");
        }
    }

    #[test]
    fn node_assertions_are_changed_so_they_must_fail() {
        let cases: &[(&str, &str)] = &[
            (
                "assert.strictEqual(add(2, 2), 4);",
                "assert.strictEqual(add(2, 2), 3);",
            ),
            (
                "assert.equal(add(2, 2), x)",
                "assert.notEqual(add(2, 2), x)",
            ),
            (
                "assert.deepStrictEqual(f(), [1])",
                "assert.notDeepStrictEqual(f(), [1])",
            ),
            ("assert(add(1, 1) > 1)", "assert(!(add(1, 1) > 1))"),
            ("assert.ok(x, 'msg');", "assert.ok(!(x), 'msg');"),
        ];
        for (from, to) in cases {
            let text = format!("const assert = require('node:assert');\n\nit('adds', function () {{\n  {from}\n}});\n");
            let want = format!("const assert = require('node:assert');\n\nit('adds', function () {{\n  {to}\n}});\n");
            let got = mutated(&text).map(|m| m.0);
            assert_eq!(got.as_deref(), Some(want.as_str()), "{from}");
        }
    }

    #[test]
    fn only_what_certainly_ran_and_is_an_assertion_is_changed() {
        let left_alone: &[&str] = &[
            // In a loop, a branch, a callback.
            "for (const a of [1]) { expect(a).toBe(1); }",
            "if (x) {\n    expect(a).toBe(1);\n  }",
            "[1].forEach((a) => expect(a).toBe(1));",
            // After a return.
            "return;\n  expect(a).toBe(1);",
            // Part of a larger expression.
            "const y = expect(a).toBe(1);",
            "f(expect(a).toBe(1));",
            // Not a matcher chain.
            "expect.assertions(1);",
            "expect(a);",
            "expect(a).toBe(1).then(done);",
            // node's assert not imported.
            "assert.strictEqual(a, 1);",
        ];
        for body in left_alone {
            let text = format!("test('t', () => {{\n  {body}\n}});\n");
            assert_eq!(mutated(&text), None, "{body}");
        }
    }

    #[test]
    fn names_groups_and_markers_are_read_from_the_test() {
        let text = "describe('sum', () => {\n  it('adds', () => {\n    expect(add(1, 1)).toBe(2);\n  });\n  it.skip('later', () => {\n    expect(add(1, 1)).toBe(2);\n  });\n  it.todo('someday');\n});\ntest('arrow', () => expect(add(1, 1)).toBe(2));\n";
        let (_, how) = mutated(text).expect("mutants");
        assert_eq!(
            how,
            vec![
                "sum > adds: expected `2` made `1`".to_string(),
                "arrow: expected `2` made `1`".to_string()
            ]
        );
    }

    #[test]
    fn only_focused_tests_run_where_one_is_and_each_rows_are_not_named_literally() {
        let only = "test.only('a', () => {\n  expect(f()).toBe(1);\n});\ntest('b', () => {\n  expect(f()).toBe(1);\n});\n";
        let (_, how) = mutated(only).expect("mutants");
        assert_eq!(how, vec!["a: expected `1` made `0`".to_string()]);
        for text in [
            "test.each([[1]])('row %i', (a) => {\n  expect(a).toBe(1);\n});\n",
            "describe.each([[1]])('of %i', (a) => {\n  test('t', () => {\n    expect(a).toBe(1);\n  });\n});\n",
            "test(`t ${x}`, () => {\n  expect(a).toBe(1);\n});\n",
            "test(name, () => {\n  expect(a).toBe(1);\n});\n",
            "test('it\\'s', () => {\n  expect(a).toBe(1);\n});\n",
            "if (process.env.CI) {\n  test('t', () => {\n    expect(a).toBe(1);\n  });\n}\n",
            "if (ok) test('t', () => {\n  expect(a).toBe(1);\n});\n",
            "describe('g', () => {\n  for (const x of xs) {\n    test('t', () => {\n      expect(a).toBe(1);\n    });\n  }\n});\n",
            "function later() {\n  test('t', () => {\n    expect(a).toBe(1);\n  });\n}\n",
        ] {
            assert_eq!(mutated(text), None, "{text}");
        }
    }

    #[test]
    fn a_file_with_its_own_expect_or_assert_is_left_alone() {
        let own = "function expect(v) { return { toBe() {} }; }\ntest('t', () => {\n  expect(1).toBe(2);\n});\n";
        assert_eq!(mutated(own), None);
        let imported = "const { expect, test } = require('@jest/globals');\ntest('t', () => {\n  expect(1).toBe(1);\n});\n";
        assert!(mutated(imported).is_some());
        let other = "const { expect } = require('./my-expect');\ntest('t', () => {\n  expect(1).toBe(1);\n});\n";
        assert_eq!(mutated(other), None);
        let own_assert = "const assert = require('assert');\nfunction assert2() {}\nconst { ok: assert3 } = {};\ntest('t', () => {\n  assert.strictEqual(a, 1);\n});\n";
        assert!(mutated(own_assert).is_some());
    }
}
