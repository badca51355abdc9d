//! Rust test code within a file: `#[test]` functions, `#[cfg(test)]` modules
//! and declarations, as spans (shared with `test_only.rs`).

use super::code::Code;
use super::MAX_SCAN;

/// What a span of Rust test code is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in super::super) enum SpanKind {
    /// A `#[test]`-like function.
    TestFn,
    /// A `#[cfg(test)]` module holding tests (or named for them).
    TestModule,
    /// `#[cfg(test)] mod x;` or a private `#[cfg(test)] use …;`.
    CfgTestDecl,
    /// Any other item under a `cfg` that holds in test builds.
    CfgTestOther,
}

/// The Rust test code of a file: byte spans (attributes included) and
/// whether an inner `#![cfg(test)]` makes the whole file test code.
pub(in super::super) struct Spans {
    pub spans: Vec<(usize, usize, SpanKind)>,
    pub file_test: bool,
}

impl Spans {
    pub fn within(&self, at: usize, kinds: &[SpanKind]) -> bool {
        self.file_test
            || self
                .spans
                .iter()
                .any(|&(a, b, k)| a <= at && at < b && kinds.contains(&k))
    }
}

pub(super) const TEST_ATTRS: &[&str] = &[
    "test",
    "rstest",
    "test_case",
    "test_matrix",
    "wasm_bindgen_test",
    "quickcheck",
];

/// Whether the `cfg` predicate in the parentheses opened at `open` holds
/// in test builds: it names `test` outside any `not(…)`.
pub(in super::super) fn cfg_test_positive(c: &Code, open: usize) -> bool {
    let Some(close) = c.close_of(open) else {
        return false;
    };
    let mut nots: Vec<usize> = Vec::new();
    for k in open + 1..close.min(open + MAX_SCAN) {
        while nots.last().is_some_and(|&e| k > e) {
            nots.pop();
        }
        if c.word(k) == Some("not") && c.is(k + 1, "(") {
            if let Some(e) = c.close_of(k + 1) {
                nots.push(e);
            }
        }
        if c.word(k) == Some("test") && nots.is_empty() {
            return true;
        }
    }
    false
}

/// Whether the attribute in tokens `a..b` marks a test function.
pub(super) fn is_test_attr(c: &Code, a: usize, b: usize) -> bool {
    let mut last = None;
    let mut k = a;
    while k < b {
        match c.word(k) {
            Some(w) => last = Some(w),
            None if c.is(k, ":") => {}
            None => break,
        }
        k += 1;
    }
    last.is_some_and(|w| TEST_ATTRS.contains(&w))
}

pub(in super::super) fn rust_spans(c: &Code) -> Spans {
    let n = c.toks.len();
    let mut spans = Vec::new();
    let mut modules: Vec<(usize, usize, bool, bool)> = Vec::new();
    let mut file_test = false;
    let mut depth = 0i64;
    let mut i = 0;
    while i < n {
        if c.is(i, "{") {
            depth += 1;
        } else if c.is(i, "}") {
            depth -= 1;
        }
        if !c.is(i, "#") {
            i += 1;
            continue;
        }
        if c.is(i + 1, "!") && c.is(i + 2, "[") {
            let Some(close) = c.close_of(i + 2) else {
                i += 1;
                continue;
            };
            if depth == 0 && c.is(i + 3, "cfg") && c.is(i + 4, "(") && cfg_test_positive(c, i + 4) {
                file_test = true;
            }
            i = close + 1;
            continue;
        }
        let start = i;
        let Attrs {
            end: j,
            test_attr,
            cfg_test,
            cfg_other,
        } = outer_attributes(c, i);
        if j == i {
            i += 1;
            continue;
        }
        // A module under any other `cfg` that holds tests is test code
        // too: whether its tests still run is the skip-marker rule's.
        let other_mod = cfg_other && !cfg_test && !test_attr && {
            let k = if c.is(j, "pub") { j + 1 } else { j };
            c.is(k, "mod") && c.is(k + 2, "{")
        };
        if (test_attr || cfg_test || other_mod) && j < n {
            let mut k = j;
            let public = c.is(k, "pub");
            if public {
                k += 1;
                if c.is(k, "(") {
                    k = c.close_of(k).map_or(n, |e| e + 1);
                }
            }
            let kw = c.word(k);
            let name = if kw == Some("mod") {
                c.word(k + 1)
            } else {
                None
            };
            let (end, body) = item_end(c, k, j);
            let last = &c.toks[end];
            let span = (c.toks[start].at, last.at + last.text.len());
            if test_attr {
                spans.push((span.0, span.1, SpanKind::TestFn));
            } else if kw == Some("mod") && body {
                let named = cfg_test && name.is_some_and(|m| m.contains("test"));
                modules.push((span.0, span.1, named, other_mod));
            } else if kw == Some("mod") || (kw == Some("use") && !public) {
                spans.push((span.0, span.1, SpanKind::CfgTestDecl));
            } else {
                spans.push((span.0, span.1, SpanKind::CfgTestOther));
            }
        }
        i = j;
    }
    push_modules(&mut spans, modules);
    Spans { spans, file_test }
}

/// What the outer attributes starting at a `#` say about the item they
/// are on.
struct Attrs {
    /// The token after them.
    end: usize,
    test_attr: bool,
    /// A `cfg` that holds under test.
    cfg_test: bool,
    /// Another `cfg`.
    cfg_other: bool,
}

fn outer_attributes(c: &Code, i: usize) -> Attrs {
    let (mut test_attr, mut cfg_test, mut cfg_other) = (false, false, false);
    let mut j = i;
    while c.is(j, "#") && c.is(j + 1, "[") {
        let Some(close) = c.close_of(j + 1) else {
            break;
        };
        test_attr |= is_test_attr(c, j + 2, close);
        let cfg = c.is(j + 2, "cfg") && c.is(j + 3, "(");
        cfg_test |= cfg && cfg_test_positive(c, j + 3);
        cfg_other |= cfg && !cfg_test_positive(c, j + 3);
        j = close + 1;
    }
    Attrs {
        end: j,
        test_attr,
        cfg_test,
        cfg_other,
    }
}

/// The last token of the item whose keyword is at `k` (its `;` or closing
/// brace, not looked for past a limit nor ending before `j`), and whether
/// it has a body.
fn item_end(c: &Code, k: usize, j: usize) -> (usize, bool) {
    let n = c.toks.len();
    let mut e = k;
    let limit = (k + 4 * MAX_SCAN).min(n);
    loop {
        if e >= limit {
            return (limit.saturating_sub(1).max(j), false);
        }
        if c.is(e, ";") {
            return (e, false);
        }
        if c.is(e, "{") {
            return (c.close_of(e).unwrap_or(n - 1), true);
        }
        if c.is(e, "(") || c.is(e, "[") {
            e = c.close_of(e).map_or(n, |x| x + 1);
        } else {
            e += 1;
        }
    }
}

/// The spans of the modules under a `cfg` (start, end, named like tests
/// under `cfg(test)`, under another `cfg`): test modules when named so or
/// holding a test function, other `cfg(test)` code otherwise.
fn push_modules(
    spans: &mut Vec<(usize, usize, SpanKind)>,
    modules: Vec<(usize, usize, bool, bool)>,
) {
    let mut fns: Vec<usize> = spans
        .iter()
        .filter(|s| s.2 == SpanKind::TestFn)
        .map(|s| s.0)
        .collect();
    fns.sort_unstable();
    for (a, b, named, other_cfg) in modules {
        let k = fns.partition_point(|&s| s <= a);
        let holds_tests = fns.get(k).is_some_and(|&s| s < b);
        let kind = if named || holds_tests {
            SpanKind::TestModule
        } else if other_cfg {
            continue;
        } else {
            SpanKind::CfgTestOther
        };
        spans.push((a, b, kind));
    }
}
