//! The Java half of the mutated-expectation canaries (see `mutate.rs`):
//! the JUnit 4 and 5 assertions of a `@Test` method, for JUnit `results:`
//! runs whose tests are Java.
//!
//! Eligible: an assertion statement directly in the test's body (not in a
//! loop, a branch, a lambda or a block), before any `return` in the body,
//! in a test that is not disabled, does not expect an exception and is not
//! a factory or a template:
//!
//! - `assertEquals(a, b)` with exactly two arguments, one a literal:
//!   the literal changed (`4` → `3`, `"a"` → `"a~"`, `true` → `false`);
//! - otherwise `assertEquals` ↔ `assertNotEquals`, `assertTrue` ↔
//!   `assertFalse`, `assertNull` ↔ `assertNotNull`, `assertSame` ↔
//!   `assertNotSame` — every overload has its opposite in JUnit 4.11+ and
//!   JUnit 5.
//!
//! Only calls that certainly reach JUnit's assertions are changed, so the
//! changed file still compiles: an unqualified call needs a static import
//! from `org.junit.Assert` or `org.junit.jupiter.api.Assertions` (its
//! opposite is called through the class's full name when the import names
//! only the original), a qualified one the class `Assert` or `Assertions`
//! of a file that imports JUnit; a file that declares a method of one of
//! these names is left alone.

use super::jvm;
use super::lex::{Source, Syntax};
use super::mutate_parts::{arguments, literal_edit, statements, Candidate, Edit, Eligible, Lang};

/// JUnit's assertions and their opposites, both ways.
const OPPOSITES: &[(&str, &str)] = &[
    ("assertEquals", "assertNotEquals"),
    ("assertTrue", "assertFalse"),
    ("assertNull", "assertNotNull"),
    ("assertSame", "assertNotSame"),
];

/// The classes whose static assertions are changed.
const CLASSES: &[&str] = &["org.junit.Assert", "org.junit.jupiter.api.Assertions"];

/// The picked Java tests that are not disabled, with their eligible
/// assertions.
pub(super) fn eligible(text: &str, pick: &dyn Fn(&str) -> bool) -> Vec<Eligible> {
    let src = Source::new(text, Syntax::Jvm);
    let imports = Imports::of(&src);
    if imports.class.is_none() || declares_assertion(&src) {
        return Vec::new();
    }
    jvm::scan(text)
        .tests
        .into_iter()
        .filter(|t| t.markers.is_empty() && pick(&t.name))
        .filter_map(|t| {
            let (start, end) = t.body?;
            Some(Eligible {
                candidates: assertions(&src, start, end, &imports),
                test: t.name,
            })
        })
        .collect()
}

/// What the file imports of JUnit's assertions.
struct Imports {
    /// The assertion class it names (`org.junit.Assert` or
    /// `org.junit.jupiter.api.Assertions`), in any import.
    class: Option<&'static str>,
    /// Statically imported with `.*`.
    wildcard: bool,
    /// Statically imported one by one.
    names: Vec<String>,
}

impl Imports {
    fn of(src: &Source) -> Imports {
        let mut out = Imports {
            class: None,
            wildcard: false,
            names: Vec::new(),
        };
        let code = src.code_str(0, src.len());
        for statement in code.split(';') {
            let words: Vec<&str> = statement.split_whitespace().collect();
            let (is_static, path) = match words.as_slice() {
                ["import", "static", path] => (true, *path),
                ["import", path] => (false, *path),
                _ => continue,
            };
            let Some(class) = CLASSES.iter().find(|c| {
                path == **c || path.strip_prefix(**c).is_some_and(|r| r.starts_with('.'))
            }) else {
                if !is_static && (path == "org.junit.*" || path == "org.junit.jupiter.api.*") {
                    out.class = out.class.or(CLASSES
                        .iter()
                        .find(|c| {
                            c.rsplit_once('.')
                                .is_some_and(|(p, _)| format!("{p}.*") == path)
                        })
                        .copied());
                }
                continue;
            };
            out.class = Some(class);
            match path.strip_prefix(*class).and_then(|r| r.strip_prefix('.')) {
                Some("*") if is_static => out.wildcard = true,
                Some(name) if is_static => out.names.push(name.to_string()),
                _ => {}
            }
        }
        out
    }

    /// How to call `name` unqualified: as it is when imported, through the
    /// class otherwise; None when the file's calls may not be JUnit's.
    fn call(&self, name: &str) -> Option<String> {
        let class = self.class?;
        if self.wildcard || self.names.iter().any(|n| n == name) {
            Some(name.to_string())
        } else {
            Some(format!("{class}.{name}"))
        }
    }

    /// Whether an unqualified `name` is JUnit's.
    fn imports(&self, name: &str) -> bool {
        self.class.is_some() && (self.wildcard || self.names.iter().any(|n| n == name))
    }
}

/// Whether the file declares a method named like a JUnit assertion (its
/// own helper would be called instead, and may have no opposite).
fn declares_assertion(src: &Source) -> bool {
    let names = OPPOSITES.iter().flat_map(|(a, b)| [*a, *b]);
    let code = src.code_str(0, src.len());
    names.into_iter().any(|n| {
        code.match_indices(n).any(|(at, _)| {
            let before = code[..at].trim_end();
            let after = code[at + n.len()..].trim_start();
            let typed =
                before.ends_with("void") || before.ends_with("boolean") || before.ends_with('>');
            typed && after.starts_with('(')
        })
    })
}

/// The assertion statements directly in the body `start..end`, before any
/// `return` in it, that can be mutated.
fn assertions(src: &Source, start: usize, end: usize, imports: &Imports) -> Vec<Candidate> {
    statements(src, (start, end), false, |at, stop| {
        statement_at(src, at, stop, imports)
    })
}

/// A statement at `at` that is a call of a JUnit assertion (`name(…);`,
/// `Assertions.name(…);`, `org.junit.Assert.name(…);`): its mutation and
/// where it ends.
fn statement_at(
    src: &Source,
    at: usize,
    stop: usize,
    imports: &Imports,
) -> Option<(Option<Candidate>, usize)> {
    // The dotted name: its words, and where its last one starts.
    let mut words = Vec::new();
    let mut k = at;
    let mut last;
    loop {
        let (w, e) = src.word(k)?;
        words.push(w);
        last = k;
        let dot = src.skip_ws(e);
        if src.at(dot) == b'.' {
            k = src.skip_ws(dot + 1);
        } else {
            k = dot;
            break;
        }
    }
    let open = k;
    if src.at(open) != b'(' {
        return None;
    }
    let close = src.close(open);
    let semi = src.skip_ws(close + 1);
    if close >= stop || src.at(semi) != b';' {
        return None;
    }
    let (name, qualifier) = words.split_last()?;
    let (_, other) = OPPOSITES
        .iter()
        .flat_map(|&(a, b)| [(a, b), (b, a)])
        .find(|(a, _)| a == name)?;
    let junit = match qualifier.join(".").as_str() {
        "" => imports.imports(name),
        q => {
            imports.class.is_some()
                && CLASSES
                    .iter()
                    .any(|c| *c == q || c.rsplit('.').next() == Some(q))
        }
    };
    if !junit {
        return Some((None, semi + 1));
    }
    let line = src.line(at);
    let args = arguments(src, open);
    if *name == "assertEquals" && args.len() == 2 {
        if let Some((edit, how)) = [args[0], args[1]]
            .into_iter()
            .find_map(|arg| literal_edit(src, Lang::Java, arg))
        {
            let c = Candidate {
                line,
                edits: vec![edit],
                how,
            };
            return Some((Some(c), semi + 1));
        }
    }
    let with = if qualifier.is_empty() {
        imports.call(other)?
    } else {
        other.to_string()
    };
    let edit = Edit {
        start: last,
        end: last + name.len(),
        with,
    };
    let how = format!("`{name}` made `{other}`");
    Some((
        Some(Candidate {
            line,
            edits: vec![edit],
            how,
        }),
        semi + 1,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::mutate::tests::{all, assert_shape};

    const JUPITER: &str = r#"package calc;

import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.*;

class CalcTest {
    @Test
    void adds() {
        assertEquals(4, Calc.add(2, 2));
    }

    @Test
    void named() {
        assertEquals("four", Calc.name(4), "the name");
    }

    @Test
    void positive() {
        assertTrue(Calc.add(1, 1) > 0);
    }

    @Test
    @Disabled
    void later() {
        assertEquals(4, Calc.add(2, 2));
    }

    @Test
    void looped() {
        for (int i = 0; i < 3; i++) {
            assertEquals(i, Calc.add(i, 0));
        }
    }

    @Test
    void throwing() {
        assertThrows(ArithmeticException.class, () -> Calc.div(1, 0));
    }

    @Test
    void early() {
        if (true) return;
        assertEquals(4, Calc.add(2, 2));
    }
}
"#;

    #[test]
    fn a_jupiter_test_gets_its_literal_or_its_opposite() {
        let m = all("src/test/java/calc/CalcTest.java", JUPITER, 3).unwrap();
        assert_shape(JUPITER, &m, 1);
        let tests: Vec<&str> = m.mutants.iter().map(|m| m.test.as_str()).collect();
        assert_eq!(
            tests,
            ["CalcTest.adds", "CalcTest.named", "CalcTest.positive"]
        );
        assert!(
            m.text.contains("assertEquals(3, Calc.add(2, 2));"),
            "{}",
            m.text
        );
        // Three arguments: which is the message is not read, so the
        // assertion itself is turned round.
        assert!(
            m.text
                .contains("assertNotEquals(\"four\", Calc.name(4), \"the name\");"),
            "{}",
            m.text
        );
        assert!(
            m.text.contains("assertFalse(Calc.add(1, 1) > 0);"),
            "{}",
            m.text
        );
        // Disabled, in a loop, not JUnit's assertEquals, after a return:
        // left alone.
        assert!(m.text.contains("assertEquals(i, Calc.add(i, 0));"));
        assert!(m.text.contains("assertThrows(ArithmeticException.class"));
    }

    #[test]
    fn an_opposite_not_imported_is_called_through_its_class() {
        let text = "import org.junit.Test;\nimport static org.junit.Assert.assertTrue;\n\npublic class T {\n    @Test\n    public void t() {\n        assertTrue(1 < 2);\n    }\n\n    @Test(expected = IllegalStateException.class)\n    public void throwsIt() {\n        assertTrue(Calc.check());\n    }\n}\n";
        let m = all("src/test/java/T.java", text, 1).unwrap();
        assert_eq!(m.mutants.len(), 1, "{}", m.text);
        assert!(
            m.text
                .contains("        org.junit.Assert.assertFalse(1 < 2);\n"),
            "{}",
            m.text
        );
        assert_eq!(m.text.lines().count(), text.lines().count());
    }

    #[test]
    fn qualified_calls_and_files_that_are_not_plainly_junit() {
        let qualified = "import org.junit.jupiter.api.Assertions;\nimport org.junit.jupiter.api.Test;\n\nclass T {\n    @Test\n    void t() {\n        Assertions.assertNull(Calc.find(\"x\"));\n    }\n}\n";
        let m = all("T.java", qualified, 1).unwrap();
        assert!(m
            .text
            .contains("Assertions.assertNotNull(Calc.find(\"x\"));"));
        for text in [
            // JUnit 3: assertEquals is TestCase's, with no opposite.
            "import junit.framework.TestCase;\n\npublic class T extends TestCase {\n    public void testT() {\n        assertEquals(4, 2 + 2);\n    }\n}\n",
            // The file's own helper.
            "import org.junit.jupiter.api.Test;\nimport static org.junit.jupiter.api.Assertions.*;\n\nclass T {\n    static void assertTrue(boolean b) {}\n\n    @Test\n    void t() {\n        assertTrue(1 < 2);\n    }\n}\n",
            // AssertJ: not an assertion this changes.
            "import org.junit.jupiter.api.Test;\nimport static org.assertj.core.api.Assertions.assertThat;\n\nclass T {\n    @Test\n    void t() {\n        assertThat(2 + 2).isEqualTo(4);\n    }\n}\n",
        ] {
            assert_eq!(all("T.java", text, 1), None, "{text}");
        }
    }
}
