//! Python tests as the test-integrity check reads them (pytest and
//! unittest): `def test*` at module level or in a test class (`class Test*`
//! or one whose bases name `TestCase`, nested test classes included), in
//! files named `test*.py` or `*_test.py`. A name defined twice keeps the
//! last definition, as Python does.
//!
//! Markers: skip/skipif/xfail/skipIf/skipUnless/expectedFailure in a
//! decorator (`@pytest.mark.skip`, `@unittest.skip(…)`, `@skip`, and
//! `pytest.param(…, marks=pytest.mark.skip)` inside one), on the test or its
//! classes; `pytestmark = …skip…` in the module or a class; a module-level
//! `pytest.skip(…)`; and in the body `pytest.skip(`, `pytest.xfail(`,
//! `self.skipTest(`, `raise SkipTest` (`pytest.importorskip(` is a warning).
//! Assertions: the `assert` statement, any call of a name starting with
//! `assert` (`self.assertEqual`, `mock.assert_called_once`,
//! `np.testing.assert_allclose`), and `.raises(`, `.warns(`, `.fail(`.
//! Not seen: markers applied through `conftest.py` hooks or a variable
//! (`skip = pytest.mark.skip; @skip` is seen only by its name `skip`),
//! assertions in helper functions, tests in files collected by custom
//! `python_files` settings.

use super::lex::{Source, Syntax};
use super::{assertion, Marker, Scan, TestCase};
use rascal_core::model::verdict::Severity;
use std::collections::HashMap;

/// A logical line: its first code byte, its end, its indentation.
pub(super) struct Line {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) indent: usize,
}

pub(super) fn logical_lines(src: &Source) -> Vec<Line> {
    let starts = src.line_starts();
    let mut out: Vec<Line> = Vec::new();
    let mut depth = 0usize;
    let mut backslash = false;
    for (li, &s) in starts.iter().enumerate() {
        let e = starts
            .get(li + 1)
            .map(|n| n.saturating_sub(1))
            .unwrap_or(src.len());
        let continuation = depth > 0 || backslash || src.inside_string(s);
        let mut last = 0u8;
        for i in s..e {
            let c = src.at(i);
            match c {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
            if !c.is_ascii_whitespace() {
                last = c;
            }
        }
        backslash = last == b'\\';
        if continuation {
            if let Some(l) = out.last_mut() {
                l.end = e;
            }
            continue;
        }
        let first = src.skip_ws(s);
        if first >= e {
            continue;
        }
        let indent = (s..first).fold(0, |w, i| {
            if src.at(i) == b'\t' {
                (w / 8 + 1) * 8
            } else {
                w + 1
            }
        });
        out.push(Line {
            start: first,
            end: e,
            indent,
        });
    }
    out
}

/// Decorator or marker words that skip a test or expect it to fail.
const SKIP_WORDS: &[&str] = &[
    "skip",
    "skipif",
    "skipIf",
    "skipUnless",
    "xfail",
    "expectedFailure",
];

/// The skip markers in `a..b` (a decorator or a `pytestmark` statement).
fn span_markers(src: &Source, a: usize, b: usize, out: &mut Vec<Marker>) {
    let text = src.slice(a, b);
    let mut i = a;
    while i < b {
        let Some((w, e)) = src.word(i) else {
            i += 1;
            continue;
        };
        let attached = i > 0 && matches!(src.at(i - 1), b'.' | b'@');
        if attached && SKIP_WORDS.contains(&w) {
            let marker = Marker::new(
                format!("@{}", w.to_ascii_lowercase()),
                text.trim(),
                src.line(i),
                Severity::Error,
            );
            let call = src.at(src.skip_ws(e)) == b'(';
            // `skipif(cond, …)`, `skipUnless(cond, …)`, `xfail(cond, …)`:
            // a condition decides. `skip("why")` and `xfail(reason=…)` do not.
            let conditional = matches!(w, "skipif" | "skipIf" | "skipUnless")
                || (w == "xfail" && call && {
                    let args = src.args(src.skip_ws(e));
                    args.first().is_some_and(|&(a, b)| {
                        src.string_at(src.skip_space(a)).is_none()
                            && !keyword_arg(src.code_str(a, b))
                    })
                });
            out.push(if conditional {
                marker.conditional()
            } else {
                marker
            });
        }
        i = e;
    }
}

/// Whether an argument is `name=value` (not a comparison).
fn keyword_arg(arg: &str) -> bool {
    let arg = arg.trim_start();
    let name_end = arg
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(arg.len());
    let rest = arg[name_end..].trim_start();
    name_end > 0 && rest.starts_with('=') && !rest.starts_with("==")
}

struct Class {
    indent: usize,
    id: usize,
    test: bool,
    name: String,
}

pub(super) fn scan(text: &str) -> Scan {
    let src = Source::new(text, Syntax::Python);
    let lines = logical_lines(&src);
    let mut classes: Vec<Class> = Vec::new();
    // Markers of the module (id 0) and of each class.
    let mut scope_markers: Vec<Vec<Marker>> = vec![Vec::new()];
    let mut tests: Vec<(TestCase, Vec<usize>)> = Vec::new();
    let mut decorators: Vec<(usize, usize)> = Vec::new();
    let mut idx = 0;
    while idx < lines.len() {
        let l = &lines[idx];
        while classes.last().is_some_and(|c| c.indent >= l.indent) {
            classes.pop();
        }
        let in_tests = classes.iter().all(|c| c.test);
        let scope = classes.last().map_or(0, |c| c.id);
        if src.at(l.start) == b'@' {
            decorators.push((l.start, l.end));
            idx += 1;
            continue;
        }
        let Some((mut word, mut e)) = src.word(l.start) else {
            decorators.clear();
            idx += 1;
            continue;
        };
        if word == "async" {
            if let Some((w, e2)) = src.word(src.skip_ws(e)) {
                (word, e) = (w, e2);
            }
        }
        match word {
            "class" => {
                let Some((name, name_end)) = src.word(src.skip_ws(e)) else {
                    idx += 1;
                    continue;
                };
                let test = in_tests && is_test_class(&src, name, name_end);
                let mut markers = Vec::new();
                for &(a, b) in &decorators {
                    span_markers(&src, a, b, &mut markers);
                }
                let id = scope_markers.len();
                scope_markers.push(markers);
                classes.push(Class {
                    indent: l.indent,
                    id,
                    test,
                    name: name.to_string(),
                });
                idx += 1;
            }
            "def" => {
                let body_end = lines[idx + 1..]
                    .iter()
                    .position(|m| m.indent <= l.indent)
                    .map_or(lines.len(), |p| idx + 1 + p);
                if in_tests {
                    tests.extend(test_def(
                        &src,
                        &lines,
                        (idx, body_end),
                        e,
                        &classes,
                        &decorators,
                    ));
                }
                idx = body_end;
            }
            "pytestmark" => {
                span_markers(&src, l.start, l.end, &mut scope_markers[scope]);
                idx += 1;
            }
            "pytest" if classes.is_empty() => {
                // A module-level `pytest.skip("…", allow_module_level=True)`.
                let rest = src.code_str(e, l.end).trim_start();
                if rest.starts_with(".skip") && !rest.starts_with(".skipif") {
                    scope_markers[0].push(Marker::new(
                        "pytest.skip(",
                        src.slice(l.start, l.end).trim(),
                        src.line(l.start),
                        Severity::Error,
                    ));
                }
                idx += 1;
            }
            _ => idx += 1,
        }
        decorators.clear();
    }
    with_scope_markers(tests, &scope_markers)
}

/// Whether the class `name` (its name ending at `name_end`) holds tests:
/// named `Test…`, or a `TestCase`.
fn is_test_class(src: &Source, name: &str, name_end: usize) -> bool {
    let open = src.skip_ws(name_end);
    let bases = if src.at(open) == b'(' {
        // The bases, as far as a name can be told from them.
        src.code_str(open, src.close(open).min(open + 1024))
    } else {
        ""
    };
    name.starts_with("Test") || bases.contains("TestCase")
}

/// The test a `def` on logical line `idx` defines (its block runs to
/// `body_end`; `e`: the end of `def`), with the classes it is defined in;
/// None when its name is not a test's.
fn test_def(
    src: &Source,
    lines: &[Line],
    (idx, body_end): (usize, usize),
    e: usize,
    classes: &[Class],
    decorators: &[(usize, usize)],
) -> Option<(TestCase, Vec<usize>)> {
    let l = &lines[idx];
    let (name, name_end) = src.word(src.skip_ws(e))?;
    if !name.starts_with("test") {
        return None;
    }
    let mut case = TestCase {
        name: classes
            .iter()
            .map(|c| c.name.as_str())
            .chain([name])
            .collect::<Vec<_>>()
            .join("::"),
        leaf: name.to_string(),
        line: src.line(l.start),
        ..TestCase::default()
    };
    for &(a, b) in decorators {
        span_markers(src, a, b, &mut case.markers);
    }
    body(src, lines, idx, body_end, name_end, &mut case);
    let chain = classes.iter().map(|c| c.id).collect();
    Some((case, chain))
}

/// The tests found, each with its module's and classes' markers (`chain`:
/// the classes it is defined in); a later definition of a name replaces
/// the earlier one.
fn with_scope_markers(tests: Vec<(TestCase, Vec<usize>)>, scope_markers: &[Vec<Marker>]) -> Scan {
    // Module and class markers apply wherever in the scope they are written.
    let mut out = Scan::default();
    let mut last: HashMap<String, usize> = HashMap::new();
    for (mut case, chain) in tests {
        let mut markers = scope_markers[0].clone();
        for id in chain {
            markers.extend(scope_markers[id].iter().cloned());
        }
        markers.append(&mut case.markers);
        case.markers = markers;
        // A later definition of the same name replaces the earlier one.
        match last.get(&case.name) {
            Some(&i) => out.tests[i] = case,
            None => {
                last.insert(case.name.clone(), out.tests.len());
                out.tests.push(case);
            }
        }
    }
    out
}

/// Read the body of the test defined on logical line `idx` (its block runs
/// to `body_end`); `name_end` is where the function's name ends.
fn body(
    src: &Source,
    lines: &[Line],
    idx: usize,
    body_end: usize,
    name_end: usize,
    case: &mut TestCase,
) {
    let def = &lines[idx];
    let open = src.skip_ws(name_end);
    let after_params = if src.at(open) == b'(' {
        src.close(open) + 1
    } else {
        name_end
    };
    let colon = (after_params..def.end)
        .find(|&i| src.at(i) == b':')
        .unwrap_or(def.end);
    let start = colon + 1;
    let end = if body_end > idx + 1 {
        lines[body_end - 1].end
    } else {
        def.end
    };
    case.body = Some((start, end));
    case.early_return = early_return(src, lines, (idx, body_end), start);
    body_checks(src, lines, (start, end), case);
}

/// The line of a `return` that is the first statement of the body (after a
/// docstring) of the `def` on logical line `idx`, its block running to
/// `body_end` and its body starting at `start`.
fn early_return(
    src: &Source,
    lines: &[Line],
    (idx, body_end): (usize, usize),
    start: usize,
) -> Option<u32> {
    let def = &lines[idx];
    let inline = src.skip_ws(start);
    let mut firsts: Vec<(usize, usize)> = Vec::new();
    if inline < def.end {
        firsts.push((inline, def.end));
    }
    firsts.extend(lines[idx + 1..body_end].iter().map(|l| (l.start, l.end)));
    let mut first = firsts.first().copied();
    if let Some((a, b)) = first {
        if src.string_at(a).is_some() && src.code_str(a, b).trim().is_empty() {
            first = firsts.get(1).copied();
        }
    }
    let (a, _) = first?;
    src.word(a)
        .is_some_and(|(w, _)| w == "return")
        .then(|| src.line(a))
}

/// The assertions and skips in a test's body, `start..end`.
fn body_checks(src: &Source, lines: &[Line], (start, end): (usize, usize), case: &mut TestCase) {
    let line_end = |i: usize| -> usize {
        let k = lines.partition_point(|l| l.start <= i);
        lines.get(k.wrapping_sub(1)).map_or(end, |l| l.end)
    };
    let mut i = start;
    while i < end {
        let Some((w, e)) = src.word(i) else {
            i += 1;
            continue;
        };
        let dotted = i > 0 && src.at(i - 1) == b'.';
        let receiver = if dotted { src.word_before(i - 1) } else { "" };
        let call = src.at(src.skip_ws(e)) == b'(';
        let paren = src.skip_ws(e);
        if w == "assert" && !dotted {
            // The statement, without its message.
            let stop = line_end(i);
            let mut k = e;
            while k < stop && src.at(k) != b',' {
                if matches!(src.at(k), b'(' | b'[' | b'{') {
                    k = src.close(k);
                }
                k += 1;
            }
            case.assertions
                .push(assertion(src, i, "assert", &[(e, k.min(stop))], false));
        } else if call
            && (w.starts_with("assert") || (dotted && matches!(w, "raises" | "warns" | "fail")))
        {
            case.assertions
                .push(assertion(src, i, w, &src.args(paren), false));
        } else if call && dotted && receiver == "pytest" && matches!(w, "skip" | "xfail") {
            case.markers.push(Marker::new(
                format!("pytest.{w}("),
                src.slice(i.saturating_sub(7), src.close(paren) + 1),
                src.line(i),
                Severity::Error,
            ));
        } else if call && dotted && w == "skipTest" {
            case.markers.push(Marker::new(
                "skipTest(",
                src.slice(i, src.close(paren) + 1),
                src.line(i),
                Severity::Error,
            ));
        } else if w == "SkipTest" {
            case.markers.push(Marker::new(
                "SkipTest",
                src.slice(i, line_end(i)),
                src.line(i),
                Severity::Error,
            ));
        } else if call && dotted && w == "importorskip" {
            case.markers.push(
                Marker::new(
                    "importorskip(",
                    src.slice(i, src.close(paren) + 1),
                    src.line(i),
                    Severity::Warning,
                )
                .conditional(),
            );
        }
        i = e;
    }
}

#[cfg(test)]
mod tests;
