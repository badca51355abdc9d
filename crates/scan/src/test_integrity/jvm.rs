//! Java and Kotlin tests as the test-integrity check reads them (JUnit 4
//! and 5): methods annotated `@Test`, `@ParameterizedTest`,
//! `@RepeatedTest`, `@TestFactory` or `@TestTemplate` in files under
//! `src/test/` or named `*Test`, `*Tests`, `*IT`, `*Spec`; `@Disabled…` and
//! `@Ignore` on them or their class; assertions (`assert…(`, `fail(`,
//! `verify(`, with an AssertJ chain); a leading `return`. Not seen: Kotest
//! and Spock specs, JUnit `Assumptions`, tests excluded by build tags in
//! Gradle or Maven files.

use super::lex::{Source, Syntax};
use super::{assertion, Marker, Scan, TestCase, MAX_DEPTH};
use rascal_core::model::verdict::Severity;

const TEST_ANNOTATIONS: &[&str] = &[
    "Test",
    "ParameterizedTest",
    "RepeatedTest",
    "TestFactory",
    "TestTemplate",
];

pub(super) fn scan(text: &str) -> Scan {
    let src = Source::new(text, Syntax::Jvm);
    let mut out = Scan::default();
    block(&src, 0, src.len(), &[], &[], 0, &mut out);
    out
}

/// An annotation: its simple name and line.
struct Annotation<'a> {
    name: &'a str,
    line: u32,
    text: &'a str,
}

fn block(
    src: &Source,
    start: usize,
    end: usize,
    classes: &[String],
    inherited: &[Marker],
    depth: usize,
    out: &mut Scan,
) {
    let mut pending: Vec<Annotation> = Vec::new();
    let mut class: Option<String> = None;
    let mut annotations_end = start;
    let mut i = start;
    while i < end {
        match src.at(i) {
            b'@' => {
                // `@org.junit.Test(expected = X.class)`: the last segment.
                let mut k = i + 1;
                let mut name = "";
                while let Some((w, e)) = src.word(k) {
                    name = w;
                    k = e;
                    if src.at(k) == b'.' {
                        k += 1;
                    } else {
                        break;
                    }
                }
                let args = src.skip_ws(k);
                if src.at(args) == b'(' {
                    k = src.close(args) + 1;
                }
                pending.push(Annotation {
                    name,
                    line: src.line(i),
                    text: src.slice(i, k),
                });
                i = k.max(i + 1);
                annotations_end = i;
            }
            b'{' => {
                let close = src.close(i);
                let is_test = pending.iter().any(|a| TEST_ANNOTATIONS.contains(&a.name));
                let mut markers = inherited.to_vec();
                markers.extend(disabled(&pending));
                match (&class, is_test) {
                    (_, true) => {
                        if let Some(name) = method_name(src, annotations_end, i) {
                            let mut full = classes.to_vec();
                            full.push(name.clone());
                            let line = pending.first().map_or(src.line(i), |a| a.line);
                            let mut case = TestCase {
                                name: full.join("."),
                                leaf: name,
                                line,
                                markers,
                                ..TestCase::default()
                            };
                            // The body, for the mutated canaries: not for a
                            // test that expects an exception or whose body
                            // makes the tests (a factory, a template).
                            let plain = !pending.iter().any(|a| {
                                matches!(a.name, "TestFactory" | "TestTemplate")
                                    || (a.name == "Test" && a.text.contains("expected"))
                            });
                            case.body = plain.then_some((i + 1, close));
                            read_body(src, i + 1, close, &mut case);
                            out.tests.push(case);
                        }
                    }
                    (Some(c), false) if depth < MAX_DEPTH => {
                        let mut inner = classes.to_vec();
                        inner.push(c.clone());
                        block(src, i + 1, close, &inner, &markers, depth + 1, out);
                    }
                    _ => {}
                }
                pending.clear();
                class = None;
                i = close + 1;
            }
            b'(' | b'[' => i = src.close(i) + 1,
            b';' | b'}' => {
                pending.clear();
                class = None;
                i += 1;
            }
            _ => match src.word(i) {
                Some((w, e)) => {
                    if matches!(w, "class" | "object" | "interface") {
                        class = src.word(src.skip_ws(e)).map(|(n, _)| n.to_string());
                    }
                    i = e;
                }
                None => i += 1,
            },
        }
    }
}

fn disabled(annotations: &[Annotation]) -> Vec<Marker> {
    annotations
        .iter()
        .filter(|a| a.name.starts_with("Disabled") || a.name == "Ignore")
        .map(|a| Marker::new(format!("@{}", a.name), a.text, a.line, Severity::Error))
        .collect()
}

/// The name of the method whose body opens at `brace`, declared after
/// `from`: the word before its last parameter list (Java `void name(…)`,
/// Kotlin ``fun `a name`(…)``).
fn method_name(src: &Source, from: usize, brace: usize) -> Option<String> {
    let mut i = from;
    let mut params = None;
    while i < brace {
        if src.at(i) == b'(' {
            params = Some(i);
            i = src.close(i) + 1;
        } else {
            i += 1;
        }
    }
    let p = params?;
    let bytes = src.text.as_bytes();
    let q = (from..p).rev().find(|&k| !bytes[k].is_ascii_whitespace())?;
    if bytes[q] == b'`' {
        // A quoted name: find where its literal starts (names are short).
        let s = (q.saturating_sub(1024)..q)
            .rev()
            .find(|&k| src.string_at(k).is_some())?;
        return Some(src.slice(s + 1, q).to_string()).filter(|n| !n.is_empty());
    }
    Some(src.word_before(q + 1).to_string()).filter(|n| !n.is_empty())
}

fn read_body(src: &Source, a: usize, b: usize, case: &mut TestCase) {
    let first = src.skip_ws(a);
    if src.word(first).is_some_and(|(w, _)| w == "return") {
        case.early_return = Some(src.line(first));
    }
    let mut i = a;
    while i < b {
        let Some((w, e)) = src.word(i) else {
            i += 1;
            continue;
        };
        let paren = src.skip_ws(e);
        if (w.starts_with("assert") || w == "fail" || w == "verify") && src.at(paren) == b'(' {
            let end = src.chain_end(src.close(paren));
            case.assertions
                .push(assertion(src, i, w, &[(paren, end)], false));
        }
        i = e;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{check_one, rules};
    use super::*;

    const JAVA: &str = r#"package calc;

import org.junit.jupiter.api.Test;

class CalcTest {
    @Test
    void adds() {
        assertEquals(4, Calc.add(2, 2));
    }

    @Test
    @DisplayName("subtracts (twice)")
    void subtracts() {
        assertThat(Calc.sub(2, 1)).isEqualTo(1);
    }
}
"#;

    const KOTLIN: &str = "class CalcTest {\n    @Test\n    fun `adds two`() {\n        assertEquals(4, add(2, 2))\n    }\n}\n";

    #[test]
    fn reads_java_and_kotlin_tests() {
        let s = scan(JAVA);
        let names: Vec<(&str, usize)> = s
            .tests
            .iter()
            .map(|t| (t.name.as_str(), t.assertions.len()))
            .collect();
        assert_eq!(names, [("CalcTest.adds", 1), ("CalcTest.subtracts", 1)]);
        let s = scan(KOTLIN);
        assert_eq!(s.tests[0].name, "CalcTest.adds two");
    }

    #[test]
    fn disabled_and_ignore_are_errors() {
        for (from, to) in [
            (
                "    @Test\n    void adds",
                "    @Test\n    @Disabled(\"flaky\")\n    void adds",
            ),
            ("class CalcTest", "@Disabled\nclass CalcTest"),
            (
                "    @Test\n    void adds",
                "    @Ignore\n    @Test\n    void adds",
            ),
        ] {
            let now = JAVA.replacen(from, to, 1);
            assert_ne!(now, JAVA);
            let issues = check_one("src/test/java/calc/CalcTest.java", Some(JAVA), Some(&now));
            assert!(!issues.is_empty(), "{to}");
            assert!(
                issues.iter().all(
                    |i| i.rule == "test-integrity/skip-marker" && i.severity == Severity::Error
                ),
                "{to}: {issues:?}"
            );
        }
    }

    #[test]
    fn deleted_and_weakened() {
        let now = JAVA.replacen("        assertEquals(4, Calc.add(2, 2));\n", "", 1);
        let issues = check_one("src/test/java/calc/CalcTest.java", Some(JAVA), Some(&now));
        assert_eq!(
            rules(&issues),
            [("test-integrity/assertions-removed", Severity::Error)]
        );
        let now = JAVA.replacen("    @Test\n    void adds", "    void adds", 1);
        let issues = check_one("src/test/java/calc/CalcTest.java", Some(JAVA), Some(&now));
        assert_eq!(
            rules(&issues),
            [("test-integrity/removed-test", Severity::Error)]
        );
    }

    #[test]
    fn hostile_text_does_not_panic() {
        for t in [
            "@",
            "@Test",
            "@Test {",
            "@Test fun `x",
            "class {",
            "@Test void x(",
        ] {
            let _ = scan(t);
        }
    }
}
