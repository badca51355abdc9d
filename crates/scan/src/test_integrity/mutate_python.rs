//! The Python half of the mutated-expectation canaries (see `mutate.rs`):
//! pytest `assert` statements and unittest `self.assert*` calls.
//!
//! Eligible: a simple statement at the test body's own indentation (not in
//! an `if`, `while`, `try` or nested function), before any `return` in the
//! body outside nested functions, in a test without a skip or xfail marker
//! (on it, its class or module, or `pytest.skip(…)` in it) — or at the own
//! indentation of a loop over rows that certainly exist (`for a, want in
//! [(1, 2), …]:`, or over a name assigned such a literal once in the file)
//! or of a `with self.subTest(…):`, when nothing in that block may leave it
//! early (`continue`, `break`, `return`, `raise`, a skip).
//!
//! - `assert a == LIT` / `assert LIT == a` (one `==`, nothing else at the
//!   top level of the condition; outer parentheses looked through), and
//!   `self.assertEqual(a, LIT)` (either argument) change the literal;
//! - any other `assert e[, msg]` becomes `assert not (e)[, msg]`;
//! - unittest assertions become their opposite (`assertTrue` →
//!   `assertFalse`, `assertIn` → `assertNotIn`, `assertListEqual` →
//!   `assertNotEqual`, …) when their only keyword argument is `msg`.
//!   `assertRaises*`, `assertCountEqual` and `assertSequenceEqual` (it
//!   accepts a list equal to a tuple, which `!=` does not) are left.

use super::lex::{Source, Syntax};
use super::mutate_parts::{
    arguments, first_word, insert, literal_edit, top_level, trimmed, Candidate, Edit, Eligible,
    Lang,
};
use super::python::{self, logical_lines};

/// The picked Python tests without skip markers, with their eligible
/// assertions.
pub(super) fn eligible(text: &str, pick: &dyn Fn(&str) -> bool) -> Vec<Eligible> {
    let src = Source::new(text, Syntax::Python);
    let statements = Statements::new(&src);
    python::scan(text)
        .tests
        .into_iter()
        .filter(|t| t.markers.is_empty() && pick(&t.name))
        .filter_map(|t| {
            let (start, end) = t.body?;
            Some(Eligible {
                candidates: statements.assertions(start, end),
                test: t.name,
            })
        })
        .collect()
}

/// Words that open a compound statement: what follows on the line is in it.
const COMPOUND: &[&str] = &[
    "if", "elif", "else", "for", "while", "with", "try", "except", "finally", "def", "class",
    "async", "match", "case",
];

/// A file's logical lines, as `(start, end, indent)`.
struct Statements<'s, 'a> {
    src: &'s Source<'a>,
    lines: Vec<(usize, usize, usize)>,
}

impl<'s, 'a> Statements<'s, 'a> {
    fn new(src: &'s Source<'a>) -> Self {
        let lines = logical_lines(src)
            .into_iter()
            .map(|l| (l.start, l.end, l.indent))
            .collect();
        Statements { src, lines }
    }

    /// The lines of the body `start..end`: the rest of the `def` line when
    /// the body is written there, else the lines after it.
    fn body(&self, start: usize, end: usize) -> Vec<(usize, usize, usize)> {
        let k = self.lines.partition_point(|l| l.0 < start);
        if let Some(&(_, def_end, _)) = k.checked_sub(1).and_then(|d| self.lines.get(d)) {
            if let Some((a, _)) = trimmed(self.src, start, def_end) {
                return vec![(a, def_end, 0)];
            }
        }
        self.lines[k..]
            .iter()
            .take_while(|l| l.0 < end)
            .copied()
            .collect()
    }

    /// The eligible assertions of the body `start..end`, in order.
    fn assertions(&self, start: usize, end: usize) -> Vec<Candidate> {
        let lines = self.body(start, end);
        let Some(&(_, _, indent)) = lines.first() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        self.block(&lines, indent, &mut out);
        out
    }

    /// The eligible assertions of a block whose statements are at
    /// `indent`, into `out`: its simple statements, and those of a loop
    /// over rows that certainly exist or of a `subTest` in it (every row
    /// runs them; a failed subtest fails the test), when nothing in that
    /// block may leave it early. False once a `return` was met (what
    /// follows may not have run).
    fn block(
        &self,
        lines: &[(usize, usize, usize)],
        indent: usize,
        out: &mut Vec<Candidate>,
    ) -> bool {
        let src = self.src;
        // Indentations of nested `def`/`class` headers still open.
        let mut nested: Vec<usize> = Vec::new();
        for (i, &(a, b, at)) in lines.iter().enumerate() {
            while nested.last().is_some_and(|&d| d >= at) {
                nested.pop();
            }
            if !nested.is_empty() {
                continue;
            }
            let word = first_words(src, a);
            if matches!(word, Some("def" | "class")) {
                nested.push(at);
                continue;
            }
            if first_word(src, a, b, "return").is_some() {
                return false;
            }
            if at != indent {
                continue;
            }
            if matches!(word, Some("for" | "with")) {
                let inner: Vec<(usize, usize, usize)> = lines[i + 1..]
                    .iter()
                    .take_while(|l| l.2 > at)
                    .copied()
                    .collect();
                let runs = match word {
                    Some("for") => self.over_rows(a, b),
                    _ => subtest(src, a, b),
                };
                let leaves = inner
                    .iter()
                    .any(|&(x, y, _)| LEAVES.iter().any(|w| first_word(src, x, y, w).is_some()));
                if let (true, false, Some(&(_, _, own))) = (runs, leaves, inner.first()) {
                    if !self.block(&inner, own, out) {
                        return false;
                    }
                }
                continue;
            }
            if word.is_some_and(|w| COMPOUND.contains(&w)) {
                continue;
            }
            out.extend(
                segments(src, a, b)
                    .into_iter()
                    .filter_map(|(s, e)| statement(src, s, e)),
            );
        }
        true
    }

    /// Whether the `for` header `a..b` loops over rows that certainly
    /// exist: a list or tuple literal with something in it, written there
    /// or assigned once in the file (`CASES = [(1, 2), …]`, read as
    /// `CASES`, `self.CASES` or `cls.CASES`).
    fn over_rows(&self, a: usize, b: usize) -> bool {
        let src = self.src;
        let Some(colon) = top_level(src, a, b, b':').filter(|&c| trimmed(src, c + 1, b).is_none())
        else {
            return false;
        };
        let Some(at_in) = first_word(src, a, colon, "in") else {
            return false;
        };
        let Some((s, e)) = trimmed(src, at_in + 2, colon) else {
            return false;
        };
        if rows_at(src, s, e) {
            return true;
        }
        let name = src.slice(s, e);
        let name = name
            .strip_prefix("self.")
            .or_else(|| name.strip_prefix("cls."))
            .unwrap_or(name);
        if !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') || name.is_empty() {
            return false;
        }
        let assigned: Vec<(usize, usize)> = self
            .lines
            .iter()
            .filter_map(|&(x, y, _)| {
                let (_, we) = src.word(x).filter(|(w, _)| *w == name)?;
                let eq = src.skip_ws(we);
                let op = src.code_str(eq, eq + 2);
                (op.starts_with('=') && op != "==").then_some((eq + 1, y))
            })
            .collect();
        match assigned.as_slice() {
            [(from, to)] => trimmed(src, *from, *to).is_some_and(|(s, e)| rows_at(src, s, e)),
            _ => false,
        }
    }
}

/// Words that may end a loop's or a subtest's body before an assertion in
/// it ran, or skip it.
const LEAVES: &[&str] = &[
    "continue", "break", "return", "raise", "skip", "skipTest", "SkipTest", "xfail",
];

/// Whether `s..e` is exactly one list or tuple literal with something in it.
fn rows_at(src: &Source, s: usize, e: usize) -> bool {
    matches!(src.at(s), b'[' | b'(')
        && src.close(s) + 1 == e
        && trimmed(src, s + 1, e - 1).is_some()
}

/// Whether the `with` header `a..b` opens a subtest (`self.subTest(…)`,
/// pytest-subtests' `subtests.test(…)`), whose body certainly runs.
fn subtest(src: &Source, a: usize, b: usize) -> bool {
    let header = src.code_str(a, b);
    let rest = header
        .trim_start()
        .strip_prefix("with")
        .unwrap_or("")
        .trim_start();
    (rest.starts_with("self.subTest(") || rest.starts_with("subtests.test("))
        && top_level(src, a, b, b',').is_none()
}

/// The statement's first word, or the second after `async`.
fn first_words<'a>(src: &Source<'a>, a: usize) -> Option<&'a str> {
    let (w, e) = src.word(a)?;
    if w == "async" {
        return src.word(src.skip_ws(e)).map(|(w, _)| w);
    }
    Some(w)
}

/// The simple statements of the logical line `a..b` (split at `;`).
fn segments(src: &Source, a: usize, b: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = a;
    while let Some(semi) = top_level(src, from, b, b';') {
        out.extend(trimmed(src, from, semi));
        from = semi + 1;
    }
    out.extend(trimmed(src, from, b));
    out
}

/// The mutation of the simple statement `a..b`, when it is an assertion.
fn statement(src: &Source, a: usize, b: usize) -> Option<Candidate> {
    let (w, e) = src.word(a)?;
    match w {
        "assert" => assert_statement(src, a, e, b),
        "self" => unittest_call(src, a, e, b),
        _ => None,
    }
}

/// `assert cond[, msg]` (the word ending at `e`).
fn assert_statement(src: &Source, at: usize, e: usize, b: usize) -> Option<Candidate> {
    let comma = top_level(src, e, b, b',').unwrap_or(b);
    let (ca, cb) = trimmed(src, e, comma)?;
    let line = src.line(at);
    if let Some((edit, how)) = equality(src, ca, cb).and_then(|(l, r)| {
        [r, l]
            .into_iter()
            .find_map(|op| literal_edit(src, Lang::Python, op))
    }) {
        return Some(Candidate {
            line,
            edits: vec![edit],
            how,
        });
    }
    let spaced = src.text.as_bytes()[ca - 1].is_ascii_whitespace();
    let open = if spaced { "not (" } else { " not (" };
    Some(Candidate {
        line,
        edits: vec![insert(ca, open), insert(cb, ")")],
        how: "condition negated".into(),
    })
}

/// Words that make a condition more than one comparison.
const NOT_SIMPLE: &[&str] = &["and", "or", "not", "in", "is", "if", "else", "lambda"];

/// The two operands of a condition that is a single `==` comparison (outer
/// parentheses looked through).
fn equality(
    src: &Source,
    mut ca: usize,
    mut cb: usize,
) -> Option<((usize, usize), (usize, usize))> {
    while src.at(ca) == b'('
        && src.close(ca) + 1 == cb
        && top_level(src, ca + 1, cb - 1, b',').is_none()
    {
        (ca, cb) = trimmed(src, ca + 1, cb - 1)?;
    }
    let mut eq = None;
    let mut i = ca;
    while i < cb {
        match src.at(i) {
            b'(' | b'[' | b'{' => i = src.close(i) + 1,
            b'=' if src.at(i + 1) == b'=' && eq.is_none() => {
                eq = Some(i);
                i += 2;
            }
            b'=' | b'!' | b'<' | b'>' | b':' => return None,
            _ => match src.word(i) {
                Some((w, _)) if NOT_SIMPLE.contains(&w) => return None,
                Some((_, e)) => i = e,
                None => i += 1,
            },
        }
    }
    let eq = eq?;
    Some(((ca, eq), (eq + 2, cb)))
}

/// The unittest assertion with the opposite outcome; None for those left.
fn opposite(name: &str) -> Option<&'static str> {
    Some(match name {
        "assertEqual"
        | "assertEquals"
        | "assertListEqual"
        | "assertDictEqual"
        | "assertTupleEqual"
        | "assertSetEqual"
        | "assertMultiLineEqual" => "assertNotEqual",
        "assertNotEqual" | "assertNotEquals" => "assertEqual",
        "assertTrue" => "assertFalse",
        "assertFalse" => "assertTrue",
        "assertIn" => "assertNotIn",
        "assertNotIn" => "assertIn",
        "assertIs" => "assertIsNot",
        "assertIsNot" => "assertIs",
        "assertIsNone" => "assertIsNotNone",
        "assertIsNotNone" => "assertIsNone",
        "assertIsInstance" => "assertNotIsInstance",
        "assertNotIsInstance" => "assertIsInstance",
        "assertAlmostEqual" => "assertNotAlmostEqual",
        "assertNotAlmostEqual" => "assertAlmostEqual",
        "assertRegex" => "assertNotRegex",
        "assertNotRegex" => "assertRegex",
        _ => return None,
    })
}

/// The keyword of a `name=value` argument (not a comparison).
fn keyword(arg: &str) -> Option<&str> {
    let arg = arg.trim_start();
    let end = arg
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(arg.len());
    let rest = arg[end..].trim_start();
    (end > 0 && rest.starts_with('=') && !rest.starts_with("==")).then(|| &arg[..end])
}

/// `self.assertX(…)` as the whole statement (`self` ending at `e`).
fn unittest_call(src: &Source, at: usize, e: usize, b: usize) -> Option<Candidate> {
    if src.at(e) != b'.' {
        return None;
    }
    let (name, name_end) = src.word(e + 1)?;
    let open = src.skip_ws(name_end);
    if src.at(open) != b'(' || src.close(open) + 1 != b {
        return None;
    }
    let args = arguments(src, open);
    let mut positional = 0;
    for &(a, z) in &args {
        let code = src.code_str(a, z).trim_start();
        match keyword(code) {
            _ if code.starts_with('*') => return None,
            Some("msg") => {}
            Some(_) => return None,
            None => positional += 1,
        }
    }
    let line = src.line(at);
    if matches!(name, "assertEqual" | "assertEquals") && positional >= 2 {
        if let Some((edit, how)) = [args[1], args[0]]
            .into_iter()
            .find_map(|op| literal_edit(src, Lang::Python, op))
        {
            return Some(Candidate {
                line,
                edits: vec![edit],
                how,
            });
        }
    }
    let new = opposite(name)?;
    let edit = Edit {
        start: e + 1,
        end: name_end,
        with: new.into(),
    };
    Some(Candidate {
        line,
        edits: vec![edit],
        how: format!("`{name}` made `{new}`"),
    })
}

#[cfg(test)]
mod tests;
