//! JavaScript/TypeScript tests as the test-integrity check reads them
//! (jest, vitest, mocha, jasmine): `it(…)`, `test(…)`, `specify(…)` inside
//! `describe`/`context`/`suite` groups, in `*.test.*`, `*.spec.*`, `*.cy.*`
//! files and under `__tests__/`, `test/` or `tests/`. A test is named by its
//! group titles and its own (`group > title`); a title that is not a string
//! literal is named by its source text.
//!
//! Markers: `.skip`, `x`-prefixed forms (`xit`, `xtest`, `xdescribe`),
//! `.todo`, `.failing`, vitest `.skipIf(…)`/`.runIf(…)`, a test without a
//! callback (mocha's pending test), on the test or a group around it.
//! Focus: `.only` and `fit`/`fdescribe`, which skip every other test in the
//! file. `.each(…)`, `.concurrent` and the like are seen through.
//! Assertions: `expect(…)` with its matcher chain, `assert(…)`,
//! `assert.x(…)`. Not seen: tests registered in loops or helpers,
//! `expect.assertions(n)` changes, chai `.should` chains, and a
//! `return` inside a callback that is not the test's own.

use super::lex::{Source, Syntax};
use super::{assertion, Marker, Scan, TestCase};
use rascal_core::model::verdict::Severity;

const GROUPS: &[&str] = &[
    "describe",
    "context",
    "suite",
    "xdescribe",
    "xcontext",
    "fdescribe",
];
const TESTS: &[&str] = &["it", "test", "specify", "xit", "xtest", "xspecify", "fit"];
/// Modifiers that take their own arguments before the test's.
const CALLED: &[&str] = &["each", "skipIf", "runIf", "if", "for"];

struct Group {
    title: String,
    literal: bool,
    /// The `{` of its callback's body.
    body_open: Option<usize>,
    /// Registered whenever the file runs (not under an `if`, a loop or
    /// a function).
    unconditional: bool,
    end: usize,
    markers: Vec<Marker>,
    focus: Option<Marker>,
}

pub(super) fn scan(text: &str) -> Scan {
    let src = Source::new(text, Syntax::Js);
    let mut out = Scan::default();
    let mut groups: Vec<Group> = Vec::new();
    let mut i = 0;
    while i < src.len() {
        let Some((base, e)) = src.word(i) else {
            i += 1;
            continue;
        };
        let after_dot = i > 0 && src.at(i - 1) == b'.';
        let group = GROUPS.contains(&base);
        if after_dot || !(group || TESTS.contains(&base)) {
            i = e;
            continue;
        }
        let Some(call) = read_call(&src, i, base, e) else {
            i = e;
            continue;
        };
        while groups.last().is_some_and(|g| g.end <= i) {
            groups.pop();
        }
        let unconditional = groups.iter().all(|g| g.unconditional)
            && registered_where_it_runs(&src, i, groups.last().and_then(|g| g.body_open));
        if group {
            if groups.len() < super::MAX_DEPTH {
                groups.push(Group {
                    title: call.title.clone(),
                    literal: call.literal,
                    body_open: call
                        .body
                        .map(|(a, _)| a.saturating_sub(1))
                        .filter(|&o| src.at(o) == b'{'),
                    unconditional,
                    end: call.close,
                    markers: call.markers,
                    focus: call.focus,
                });
            }
            i = call.open + 1;
            continue;
        }
        let mut name: Vec<&str> = groups.iter().map(|g| g.title.as_str()).collect();
        name.push(&call.title);
        let mut case = TestCase {
            name: name.join(" > "),
            leaf: call.title.clone(),
            named_literally: unconditional && call.literal && groups.iter().all(|g| g.literal),
            line: src.line(i),
            markers: groups
                .iter()
                .flat_map(|g| g.markers.iter().cloned())
                .collect(),
            focus: call
                .focus
                .clone()
                .or_else(|| groups.iter().rev().find_map(|g| g.focus.clone())),
            ..TestCase::default()
        };
        case.markers.extend(call.markers);
        match call.body {
            Some((a, b)) => {
                case.body = Some((a, b));
                read_body(&src, a, b, &mut case);
            }
            None => case.markers.push(Marker::new(
                "pending",
                &format!("{} without a callback", call.path),
                src.line(i),
                Severity::Error,
            )),
        }
        out.tests.push(case);
        i = call.close + 1;
    }
    out
}

/// Whether the call at `at` is a statement of the file's top level (or,
/// in a group, of the group's body whose `{` is at `body`): not under an
/// `if`, a loop, a callback or a function of its own, so it is registered
/// whenever the file runs.
fn registered_where_it_runs(src: &Source, at: usize, body: Option<usize>) -> bool {
    let mut innermost = None;
    let mut k = 0;
    while k < at {
        if src.at(k) == b'{' && src.close(k) > at {
            innermost = Some(k);
        }
        k += 1;
    }
    let first_statement = match src.prev_sig(at) {
        None => true,
        Some(p) => matches!(src.at(p), b';' | b'{' | b'}'),
    };
    innermost == body && first_statement
}

struct Call {
    path: String,
    title: String,
    /// The title is a plain string literal the runner prints as written
    /// (and the call is not `.each`, whose rows are named from it).
    literal: bool,
    open: usize,
    close: usize,
    /// The callback's body: inside its braces, or an arrow's expression.
    body: Option<(usize, usize)>,
    markers: Vec<Marker>,
    focus: Option<Marker>,
}

/// A call of a test or group function starting at `at` (its first word
/// `base` ends at `e`), or None when this is not one.
fn read_call(src: &Source, at: usize, base: &str, e: usize) -> Option<Call> {
    let mut path = base.to_string();
    let mut modifiers: Vec<&str> = Vec::new();
    let mut k = e;
    loop {
        let j = src.skip_ws(k);
        match src.at(j) {
            b'.' => {
                let (m, me) = src.word(src.skip_ws(j + 1))?;
                path.push('.');
                path.push_str(m);
                modifiers.push(m);
                k = me;
                let next = src.skip_space(k);
                if CALLED.contains(&m) {
                    if src.at(next) == b'(' {
                        k = src.close(next) + 1;
                    } else if let Some((_, se)) = src.string_at(next) {
                        // `it.each`table``
                        k = se;
                    }
                }
            }
            b'(' => {
                k = j;
                break;
            }
            _ => return None,
        }
        if modifiers.len() > 8 {
            return None;
        }
    }
    let open = k;
    let close = src.close(open);
    let args = src.args(open);
    let mut literal = false;
    let title = match args.first() {
        Some(&(a, b)) => {
            let a = src.skip_space(a);
            match src.string_at(a) {
                Some((s, e)) => {
                    let lit = src.slice(s, e);
                    let inner = lit.get(1..e - s - 1).unwrap_or("").to_string();
                    let quoted = lit.starts_with(['"', '\'']);
                    let after = src.skip_space(e);
                    literal = quoted
                        && (after >= b || matches!(src.at(after), b','))
                        && !inner.contains(['\\', '%', '$'])
                        && !modifiers.contains(&"each");
                    inner
                }
                None => super::short(src.slice(a, b)),
            }
        }
        None => String::new(),
    };
    let body = args.get(1..).and_then(|rest| callback(src, rest));
    let line = src.line(at);
    let shown = format!("{path}(…)");
    let mut markers = Vec::new();
    let mut focus = None;
    let skip = |key: &str| Marker::new(key, &shown, line, Severity::Error);
    if base.starts_with('x') {
        markers.push(skip("skip"));
    }
    if base.starts_with('f') {
        focus = Some(skip("only"));
    }
    for m in &modifiers {
        match *m {
            "skip" | "todo" | "failing" => markers.push(skip(m)),
            "skipIf" | "runIf" => markers.push(skip(m).conditional()),
            "only" => focus = Some(skip("only")),
            _ => {}
        }
    }
    Some(Call {
        path,
        title,
        literal,
        open,
        close,
        body,
        markers,
        focus,
    })
}

/// The body of the first function among `args`: `() => { … }`,
/// `function () { … }`, or an arrow's expression.
fn callback(src: &Source, args: &[(usize, usize)]) -> Option<(usize, usize)> {
    for &(a, b) in args {
        let mut i = a;
        let mut function_word = false;
        while i < b {
            match src.at(i) {
                b'(' | b'[' => i = src.close(i) + 1,
                b'{' => {
                    let prev = src.prev_sig(i).map(|p| src.at(p));
                    let arrow = prev == Some(b'>');
                    let function = prev == Some(b')') && function_word;
                    if arrow || function {
                        return Some((i + 1, src.close(i)));
                    }
                    i = src.close(i) + 1;
                }
                b'=' if src.at(i + 1) == b'>' => {
                    let s = src.skip_ws(i + 2);
                    if src.at(s) != b'{' {
                        return Some((s, b));
                    }
                    i += 2;
                }
                c if super::lex::is_ident_byte(c) => match src.word(i) {
                    Some((w, e)) => {
                        function_word |= w == "function";
                        i = e;
                    }
                    None => i += 1,
                },
                _ => i += 1,
            }
        }
    }
    None
}

fn read_body(src: &Source, a: usize, b: usize, case: &mut TestCase) {
    let first = src.skip_ws(a);
    if src.word(first).is_some_and(|(w, _)| w == "return") {
        let after = src.skip_ws(first + "return".len());
        // `return;` or a bare `return` before the closing brace; `return
        // promise` still runs the promise.
        if matches!(src.at(after), b';' | b'}') || after >= b {
            case.early_return = Some(src.line(first));
        }
    }
    let mut i = a;
    while i < b {
        let Some((w, e)) = src.word(i) else {
            i += 1;
            continue;
        };
        let dotted = i > 0 && src.at(i - 1) == b'.';
        if !dotted && (w == "expect" || w == "assert") {
            let next = src.skip_ws(e);
            if src.at(next) == b'(' {
                let end = src.chain_end(src.close(next));
                case.assertions
                    .push(assertion(src, i, w, &[(next, end)], false));
            } else if w == "assert" && src.at(next) == b'.' {
                let end = src.chain_end(e.saturating_sub(1));
                case.assertions
                    .push(assertion(src, i, w, &[(e, end)], false));
            }
        }
        i = e;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{check_one, each_edit_gives, rules};
    use super::*;

    const BASE: &str = r#"import { add } from "../src/add";

describe("add", () => {
  it("adds two numbers", () => {
    expect(add(2, 2)).toBe(4);
    expect(add(1, 1)).not.toBe(3);
  });

  test("handles {braces} in titles", function () {
    assert.strictEqual(add(0, 0), 0);
  });
});

test(`top level ${1}`, async () => expect(add(1, 0)).toBe(1));
"#;

    fn with(from: &str, to: &str) -> String {
        super::super::testing::edited(BASE, from, to)
    }

    #[test]
    fn reads_tests_in_groups() {
        let s = scan(BASE);
        let names: Vec<(&str, usize)> = s
            .tests
            .iter()
            .map(|t| (t.name.as_str(), t.assertions.len()))
            .collect();
        assert_eq!(
            names,
            [
                ("add > adds two numbers", 2),
                ("add > handles {braces} in titles", 1),
                ("top level ${1}", 1)
            ]
        );
    }

    #[test]
    fn skip_forms_are_errors() {
        super::super::testing::each_is_a_skip_marker(
            "test/add.test.ts",
            BASE,
            &[
                ("it(\"adds", "it.skip(\"adds"),
                ("it(\"adds", "xit(\"adds"),
                ("test(\"handles", "test.skip(\"handles"),
                ("test(\"handles", "xtest(\"handles"),
                ("describe(\"add\"", "describe.skip(\"add\""),
                ("describe(\"add\"", "xdescribe(\"add\""),
                ("test(\"handles", "test.todo(\"handles"),
            ],
        );
    }

    #[test]
    fn only_hides_the_other_tests() {
        for (from, to) in [
            ("it(\"adds", "it.only(\"adds"),
            ("it(\"adds", "fit(\"adds"),
            ("describe(\"add\"", "describe.only(\"add\""),
            ("describe(\"add\"", "fdescribe(\"add\""),
        ] {
            let now = with(from, to);
            let issues = check_one("src/add.spec.js", Some(BASE), Some(&now));
            assert_eq!(
                rules(&issues),
                [("test-integrity/skip-marker", Severity::Error)],
                "{to}"
            );
            assert!(
                issues[0].message.contains("only the focused"),
                "{}",
                issues[0].message
            );
        }
    }

    #[test]
    fn skip_in_a_title_or_comment_is_not_a_marker() {
        let now = with(
            "  it(\"adds two numbers\"",
            "  // it.skip(\"x\", () => {})\n  it(\"adds two numbers\"",
        );
        assert_eq!(
            rules(&check_one("test/add.test.ts", Some(BASE), Some(&now))),
            []
        );
    }

    #[test]
    fn early_return_removed_assertion_changed_value() {
        each_edit_gives(
            "test/add.test.ts",
            BASE,
            &[
                (
                    "    expect(add(2, 2)).toBe(4);\n",
                    "    return;\n    expect(add(2, 2)).toBe(4);\n",
                    &[("test-integrity/early-return", Severity::Error)],
                ),
                (
                    "    expect(add(1, 1)).not.toBe(3);\n",
                    "",
                    &[("test-integrity/assertions-removed", Severity::Error)],
                ),
                (
                    ".toBe(4)",
                    ".toBe(5)",
                    &[("test-integrity/expected-changed", Severity::Warning)],
                ),
            ],
        );
        // The changed value is placed on its line.
        let now = with(".toBe(4)", ".toBe(5)");
        let issues = check_one("test/add.test.ts", Some(BASE), Some(&now));
        assert_eq!(issues[0].line, Some(5));
    }

    #[test]
    fn deleted_test_and_new_test() {
        let now = with("    assert.strictEqual(add(0, 0), 0);\n", "").replace(
            "  test(\"handles {braces} in titles\", function () {\n  });\n",
            "",
        );
        let issues = check_one("test/add.test.ts", Some(BASE), Some(&now));
        assert_eq!(
            rules(&issues),
            [("test-integrity/removed-test", Severity::Error)]
        );
        let now = format!("{BASE}it(\"subtracts\", () => {{ expect(1).toBe(1); }});\n");
        assert_eq!(
            rules(&check_one("test/add.test.ts", Some(BASE), Some(&now))),
            []
        );
    }

    #[test]
    fn each_and_pending() {
        let s = scan(
            "it.each([[1, 2]])(\"adds %i\", (a, b) => { expect(a).toBe(b); });\nit(\"later\");\n",
        );
        assert_eq!(s.tests.len(), 2);
        assert_eq!(s.tests[0].assertions.len(), 1);
        assert!(s.tests[0].markers.is_empty());
        assert_eq!(s.tests[1].markers[0].key, "pending");
    }

    #[test]
    fn hostile_text_does_not_panic() {
        for t in [
            "it(",
            "it.",
            "describe(\"x\", () => {",
            "it(`",
            "it(\"\")",
            "it.each`",
        ] {
            let _ = scan(t);
        }
    }
}
