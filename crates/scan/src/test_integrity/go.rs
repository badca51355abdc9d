//! Go tests as the test-integrity check reads them: top-level
//! `func TestXxx(t *testing.T)` in `_test.go` files, the file's build
//! constraints (`//go:build ignore`, `// +build ignore`: a tag nobody sets
//! compiles the file out; a platform tag is a warning), `t.Skip(`,
//! `t.SkipNow(`, `t.Skipf(` in the body, and assertions: `t.Error*`,
//! `t.Fatal*`, `t.Fail*` on the test's `*testing.T` (or `t`/`tb`), testify
//! `assert.`/`require.` calls, gomega `Expect(`, `.Assert(`, and any other
//! call given the test's `t` (a helper such as `checkEqual(t, got, 4)`
//! reports failures for it). For an expected value, a `t.Errorf` is read
//! together with the condition of the `if` around it (`if got != 4 {
//! t.Errorf(…) }`), without its format strings. Subtests (`t.Run`) are part
//! of their parent test. Not seen: what a helper does with `t` (one that
//! no longer fails still counts), `Example`/`Fuzz`/`Benchmark` functions,
//! and `TestMain` changes (a `TestMain` that never calls `m.Run()` skips
//! everything).

use super::lex::{Source, Syntax};
use super::{assertion, Marker, Scan, TestCase, Truth};
use rascal_core::model::verdict::Severity;

pub(super) fn scan(text: &str) -> Scan {
    let src = Source::new(text, Syntax::Go);
    let file_markers = build_constraints(text);
    let mut out = Scan::default();
    let mut i = 0;
    while i < src.len() {
        match src.at(i) {
            b'{' | b'(' | b'[' => i = src.close(i) + 1,
            _ => match src.word(i) {
                Some(("func", e)) => i = function(&src, i, e, &file_markers, &mut out),
                Some((_, e)) => i = e,
                None => i += 1,
            },
        }
    }
    out
}

/// A top-level function starting at `at` (the word `func` ends at `e`).
fn function(src: &Source, at: usize, e: usize, file: &[Marker], out: &mut Scan) -> usize {
    let k = src.skip_ws(e);
    if src.at(k) == b'(' {
        // A method: not a test.
        return src.close(k) + 1;
    }
    let Some((name, name_end)) = src.word(k) else {
        return e;
    };
    let open = src.skip_ws(name_end);
    if src.at(open) != b'(' {
        return name_end;
    }
    let params_end = src.close(open);
    let mut b = params_end + 1;
    let body = loop {
        match src.at(b) {
            0 if b >= src.len() => break None,
            b'{' => break Some((b, src.close(b))),
            b'(' | b'[' => b = src.close(b) + 1,
            b'\n' | b';' | b'}' => break None,
            _ => b += 1,
        }
    };
    let params = src.code_str(open + 1, params_end);
    let test_name = name
        .strip_prefix("Test")
        .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_lowercase()));
    if test_name && params.contains("testing.T") {
        let param = params
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .find(|w| !w.is_empty())
            .unwrap_or("t");
        let mut case = TestCase {
            name: name.to_string(),
            leaf: name.to_string(),
            line: src.line(at),
            markers: file.to_vec(),
            body: body.map(|(o, c)| (o + 1, c)),
            ..TestCase::default()
        };
        if let Some((o, c)) = body {
            read_body(src, o, c, param, &mut case);
        }
        out.tests.push(case);
    }
    match body {
        Some((_, c)) => c + 1,
        None => b,
    }
}

pub(super) const FAILS: &[&str] = &["Error", "Errorf", "Fatal", "Fatalf", "Fail", "FailNow"];
const SKIPS: &[&str] = &["Skip", "SkipNow", "Skipf"];

fn read_body(src: &Source, open: usize, close: usize, param: &str, case: &mut TestCase) {
    let first = src.skip_ws(open + 1);
    if src.word(first).is_some_and(|(w, _)| w == "return") {
        case.early_return = Some(src.line(first));
    }
    // Open blocks, each with the condition of its `if`, if it is one.
    let mut blocks: Vec<Option<(usize, usize)>> = Vec::new();
    let testing_t = |r: &str| r == param || r == "t" || r == "tb";
    let mut i = open + 1;
    while i < close {
        match src.at(i) {
            b'{' => {
                blocks.push(if_condition(src, i));
                i += 1;
                continue;
            }
            b'}' => {
                blocks.pop();
                i += 1;
                continue;
            }
            _ => {}
        }
        let Some((w, e)) = src.word(i) else {
            i += 1;
            continue;
        };
        let paren = e;
        let dotted = i > 0 && src.at(i - 1) == b'.';
        let receiver = if dotted { src.word_before(i - 1) } else { "" };
        if src.at(paren) == b'(' {
            if dotted && testing_t(receiver) && FAILS.contains(&w) {
                let mut parts: Vec<(usize, usize)> =
                    blocks.last().copied().flatten().into_iter().collect();
                parts.extend(src.args(paren));
                case.assertions.push(assertion(src, i, w, &parts, true));
            } else if dotted && testing_t(receiver) && SKIPS.contains(&w) {
                let start = i - receiver.len() - 1;
                case.markers.push(Marker::new(
                    "t.Skip",
                    src.slice(start, src.close(paren) + 1),
                    src.line(i),
                    Severity::Error,
                ));
            } else if dotted && (matches!(receiver, "assert" | "require") || w == "Assert") {
                case.assertions
                    .push(assertion(src, i, w, &src.args(paren), false));
            } else if !(dotted && testing_t(receiver)) && passes_t(src, paren, param) {
                // A helper given the test's `t` (`checkEqual(t, got, 4)`,
                // `expectSuccess(out, err, t)`) reports failures for it.
                case.assertions
                    .push(assertion(src, i, w, &src.args(paren), false));
            } else if !dotted && w == "Expect" {
                let end = src.chain_end(src.close(paren));
                case.assertions
                    .push(assertion(src, i, w, &[(paren, end)], false));
            }
        }
        i = e;
    }
}

/// Whether the call whose arguments open at `paren` passes the test's `t`.
fn passes_t(src: &Source, paren: usize, param: &str) -> bool {
    src.args(paren).iter().any(|&(a, b)| {
        b - a <= 16 && {
            let arg = src.code_str(a, b).trim();
            arg == param || arg == "t"
        }
    })
}

/// The condition of an `if` whose block opens at `brace`, as a span.
fn if_condition(src: &Source, brace: usize) -> Option<(usize, usize)> {
    // A window, so that a line of many braces stays linear.
    let line = src.line_start(brace).max(brace.saturating_sub(256));
    let head = src.code_str(line, brace);
    let at = head
        .match_indices("if ")
        .filter(|(k, _)| *k == 0 || !head.as_bytes()[k - 1].is_ascii_alphanumeric())
        .last()?
        .0;
    Some((line + at + 3, brace))
}

/// The markers of a file's build constraints (the comment lines before
/// `package`).
fn build_constraints(text: &str) -> Vec<Marker> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.starts_with("package ") || t == "package" {
            break;
        }
        let line_no = u32::try_from(n + 1).unwrap_or(u32::MAX);
        let truth = if let Some(expr) = t.strip_prefix("//go:build") {
            go_build(expr)
        } else if let Some(expr) = t.strip_prefix("// +build") {
            plus_build(expr)
        } else {
            continue;
        };
        let severity = match truth {
            Truth::False => Severity::Error,
            Truth::Unknown => Severity::Warning,
            Truth::True => continue,
        };
        let key: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
        let marker = Marker::new(key, t, line_no, severity);
        out.push(if truth == Truth::Unknown {
            marker.conditional()
        } else {
            marker
        });
    }
    out
}

fn tag(word: &str) -> Truth {
    if super::never_set(word) {
        Truth::False
    } else {
        Truth::Unknown
    }
}

/// `// +build a,b !c`: spaces are or, commas and.
fn plus_build(expr: &str) -> Truth {
    Truth::any(expr.split_whitespace().map(|opt| {
        Truth::all(opt.split(',').map(|t| match t.strip_prefix('!') {
            Some(t) => tag(t).not(),
            None => tag(t),
        }))
    }))
}

/// `//go:build (a && !b) || c`.
fn go_build(expr: &str) -> Truth {
    let mut toks: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut chars = expr.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' || c == '.' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            toks.push(std::mem::take(&mut word));
        }
        match c {
            '!' | '(' | ')' => toks.push(c.to_string()),
            '&' | '|' if chars.peek() == Some(&c) => {
                chars.next();
                toks.push(format!("{c}{c}"));
            }
            c if c.is_whitespace() => {}
            _ => return Truth::Unknown,
        }
    }
    if !word.is_empty() {
        toks.push(word);
    }
    let mut p = 0;
    let t = or(&toks, &mut p, 0);
    if p == toks.len() {
        t
    } else {
        Truth::Unknown
    }
}

fn or(t: &[String], p: &mut usize, depth: usize) -> Truth {
    let mut parts = vec![and(t, p, depth)];
    while t.get(*p).is_some_and(|s| s == "||") {
        *p += 1;
        parts.push(and(t, p, depth));
    }
    Truth::any(parts)
}

fn and(t: &[String], p: &mut usize, depth: usize) -> Truth {
    let mut parts = vec![unary(t, p, depth)];
    while t.get(*p).is_some_and(|s| s == "&&") {
        *p += 1;
        parts.push(unary(t, p, depth));
    }
    Truth::all(parts)
}

fn unary(t: &[String], p: &mut usize, depth: usize) -> Truth {
    if depth > super::MAX_DEPTH {
        *p = t.len() + 1;
        return Truth::Unknown;
    }
    let Some(tok) = t.get(*p) else {
        return Truth::Unknown;
    };
    *p += 1;
    match tok.as_str() {
        "!" => unary(t, p, depth + 1).not(),
        "(" => {
            let v = or(t, p, depth + 1);
            if t.get(*p).is_some_and(|s| s == ")") {
                *p += 1;
                v
            } else {
                *p = t.len() + 1;
                Truth::Unknown
            }
        }
        ")" | "&&" | "||" => {
            *p = t.len() + 1;
            Truth::Unknown
        }
        w => tag(w),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{check_one, each_edit_gives, rules};
    use super::*;

    const BASE: &str = "package calc

import \"testing\"

func TestAdd(t *testing.T) {
\tif got := Add(2, 2); got != 4 {
\t\tt.Errorf(\"Add(2, 2) = %d, want 4\", got)
\t}
}

func TestSub(t *testing.T) {
\trequire.Equal(t, 1, Sub(2, 1))
\tassert.Equal(t, 0, Sub(1, 1))
}

func helper(t *testing.T) {
\tt.Fatal(\"no\")
}
";

    fn with(from: &str, to: &str) -> String {
        super::super::testing::edited(BASE, from, to)
    }

    #[test]
    fn reads_tests_and_assertions() {
        let s = scan(BASE);
        let names: Vec<(&str, usize)> = s
            .tests
            .iter()
            .map(|t| (t.name.as_str(), t.assertions.len()))
            .collect();
        assert_eq!(names, [("TestAdd", 1), ("TestSub", 2)]);
    }

    #[test]
    fn skip_added_is_an_error() {
        for skip in ["t.Skip()", "t.SkipNow()", "t.Skipf(\"%s\", \"x\")"] {
            let now = with(
                "func TestSub(t *testing.T) {\n",
                &format!("func TestSub(t *testing.T) {{\n\t{skip}\n"),
            );
            let issues = check_one("calc_test.go", Some(BASE), Some(&now));
            assert_eq!(
                rules(&issues),
                [("test-integrity/skip-marker", Severity::Error)],
                "{skip}"
            );
            assert_eq!(issues[0].line, Some(12));
        }
    }

    #[test]
    fn skip_in_a_string_is_not_a_marker() {
        let now = with("want 4\"", "want 4 // t.Skip()\"");
        assert_eq!(
            rules(&check_one("calc_test.go", Some(BASE), Some(&now))),
            []
        );
    }

    #[test]
    fn deleted_test_func_is_removed() {
        let start = BASE.find("func TestSub").unwrap();
        let end = BASE.find("func helper").unwrap();
        let now = format!("{}{}", &BASE[..start], &BASE[end..]);
        let issues = check_one("calc_test.go", Some(BASE), Some(&now));
        assert_eq!(
            rules(&issues),
            [("test-integrity/removed-test", Severity::Error)]
        );
        assert!(issues[0].message.contains("TestSub"));
    }

    #[test]
    fn renamed_away_from_test_is_removed() {
        let now = with("func TestSub(", "func testSub(");
        let issues = check_one("calc_test.go", Some(BASE), Some(&now));
        assert_eq!(
            rules(&issues),
            [("test-integrity/removed-test", Severity::Error)]
        );
    }

    #[test]
    fn build_tag_ignore_compiles_the_file_out() {
        for tag in [
            "//go:build ignore\n\n",
            "// +build ignore\n\n",
            "//go:build !linux && never\n\n",
        ] {
            let now = format!("{tag}{BASE}");
            let issues = check_one("calc_test.go", Some(BASE), Some(&now));
            assert_eq!(
                rules(&issues),
                [("test-integrity/skip-marker", Severity::Error)],
                "{tag}"
            );
        }
        let now = format!("//go:build windows\n\n{BASE}");
        let issues = check_one("calc_test.go", Some(BASE), Some(&now));
        assert_eq!(
            rules(&issues),
            [("test-integrity/skip-marker", Severity::Error)]
        );
    }

    #[test]
    fn early_return_removed_assertion_changed_value() {
        each_edit_gives(
            "calc_test.go",
            BASE,
            &[
                (
                    "func TestSub(t *testing.T) {\n",
                    "func TestSub(t *testing.T) {\n\treturn\n",
                    &[("test-integrity/early-return", Severity::Error)],
                ),
                (
                    "\tassert.Equal(t, 0, Sub(1, 1))\n",
                    "",
                    &[("test-integrity/assertions-removed", Severity::Error)],
                ),
                // The expected value in the if condition.
                (
                    "got != 4",
                    "got != 5",
                    &[("test-integrity/expected-changed", Severity::Warning)],
                ),
                // The format string is a message, not an expected value.
                ("want 4", "want four", &[]),
            ],
        );
    }

    #[test]
    fn a_helper_given_t_is_an_assertion() {
        let now = with(
            "\tassert.Equal(t, 0, Sub(1, 1))\n",
            "\tcheckEqual(t, 0, Sub(1, 1))\n",
        );
        assert_eq!(
            rules(&check_one("calc_test.go", Some(BASE), Some(&now))),
            []
        );
        let now = with(
            "\tassert.Equal(t, 0, Sub(1, 1))\n",
            "\texpectZero(Sub(1, 1), t)\n",
        );
        assert_eq!(
            rules(&check_one("calc_test.go", Some(BASE), Some(&now))),
            []
        );
        let now = with("\tassert.Equal(t, 0, Sub(1, 1))\n", "\tlog(0, Sub(1, 1))\n");
        let issues = check_one("calc_test.go", Some(BASE), Some(&now));
        assert_eq!(
            rules(&issues),
            [("test-integrity/assertions-removed", Severity::Error)]
        );
    }

    #[test]
    fn build_expressions() {
        for (e, t) in [
            (" ignore", Truth::False),
            (" !ignore", Truth::True),
            (" linux || ignore", Truth::Unknown),
            (" (ignore", Truth::Unknown),
            (" &&", Truth::Unknown),
            (" )(", Truth::Unknown),
        ] {
            assert_eq!(go_build(e), t, "{e}");
        }
        assert_eq!(plus_build(" linux,ignore"), Truth::False);
        let deep = format!("{}x", "!".repeat(10_000));
        assert_eq!(go_build(&deep), Truth::Unknown);
    }
}
