//! Where a test of the agreement matrix is written: given the files its
//! author's change touched and the runner's name for the test
//! (`tests::adds_large`, `tests.test_calc.TestAdd.test_zero`,
//! `tests/test_calc.py::test_zero`, `TestAdd/zero`), the file, the line
//! and the test's own lines (its attributes or decorators, then its body),
//! for the compare view's `Enter`. Pure: the shell reads the files.

/// A test's source as found in its author's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestSource {
    pub path: String,
    /// 1-based line of the test's first shown line.
    pub line: usize,
    pub lines: Vec<String>,
}

/// At most this many lines of a test are shown.
pub const MAX_LINES: usize = 200;

/// The function name a runner's test name ends in: the last `::` or `.`
/// segment (a parameterised case's `[…]` dropped); for Go the top test
/// of `TestX/sub`; for unittest's `test_x (module.Class.test_x)` the word
/// before the parenthesis.
pub fn function_name(name: &str) -> &str {
    let name = name.trim();
    let name = name.split(" (").next().unwrap_or(name);
    let name = name.split('[').next().unwrap_or(name);
    let last = name.rsplit("::").next().unwrap_or(name);
    let last = last.rsplit('.').next().unwrap_or(last);
    last.split('/').next().unwrap_or(last)
}

/// How a language opens a function named `f` on a (trimmed) line.
fn opens(path: &str, line: &str, f: &str) -> bool {
    let after = |kw: &str| {
        line.split(kw)
            .nth(1)
            .is_some_and(|rest| rest.starts_with(f) && !word(rest[f.len()..].chars().next()))
    };
    if path.ends_with(".rs") {
        after("fn ")
    } else if path.ends_with(".py") {
        after("def ")
    } else if path.ends_with(".go") {
        after("func ")
    } else {
        // Other runners name tests by their description: a line quoting it.
        line.contains(&format!("'{f}'")) || line.contains(&format!("\"{f}\""))
    }
}

fn word(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// The test named `name` in `files` (path, text): test files first, then
/// the first file that defines it.
pub fn find(files: &[(String, String)], name: &str) -> Option<TestSource> {
    let f = function_name(name);
    if f.is_empty() {
        return None;
    }
    let testish = |p: &str| p.contains("test");
    let mut order: Vec<&(String, String)> = files.iter().collect();
    order.sort_by_key(|(p, _)| !testish(p));
    for (path, text) in order {
        let lines: Vec<&str> = text.lines().collect();
        if let Some(at) = lines.iter().position(|l| opens(path, l.trim_start(), f)) {
            return Some(extract(path, &lines, at));
        }
    }
    None
}

/// The test that opens at line index `at`: the attribute, decorator or
/// comment lines right above it, then its body (to the brace that closes
/// it, or while lines are indented deeper than its `def`).
fn extract(path: &str, lines: &[&str], at: usize) -> TestSource {
    let mut first = at;
    while first > 0 {
        let above = lines[first - 1].trim_start();
        if above.starts_with("#[") || above.starts_with('@') || above.starts_with("//") {
            first -= 1;
        } else {
            break;
        }
    }
    let end = if path.ends_with(".py") {
        indented_end(lines, at)
    } else {
        braced_end(lines, at)
    };
    let last = end.min(first + MAX_LINES - 1);
    TestSource {
        path: path.to_string(),
        line: first + 1,
        lines: lines[first..=last].iter().map(|l| l.to_string()).collect(),
    }
}

/// The index of the line that closes the block opened at `at`.
fn braced_end(lines: &[&str], at: usize) -> usize {
    let mut depth = 0i64;
    let mut opened = false;
    for (i, l) in lines.iter().enumerate().skip(at) {
        for c in l.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if opened && depth <= 0 {
            return i;
        }
    }
    lines.len() - 1
}

/// The last line of a Python `def` at `at`: lines after it while they are
/// blank or indented deeper (trailing blanks dropped).
fn indented_end(lines: &[&str], at: usize) -> usize {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let own = indent(lines[at]);
    let mut end = at;
    for (i, l) in lines.iter().enumerate().skip(at + 1) {
        if l.trim().is_empty() {
            continue;
        }
        if indent(l) <= own {
            break;
        }
        end = i;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(p: &str, t: &str) -> (String, String) {
        (p.into(), t.into())
    }

    #[test]
    fn runner_names_end_in_the_function() {
        assert_eq!(function_name("tests::adds_large"), "adds_large");
        assert_eq!(function_name("a::b::tests::z"), "z");
        assert_eq!(
            function_name("tests.test_calc.TestAdd.test_zero"),
            "test_zero"
        );
        assert_eq!(
            function_name("test_zero (tests.test_calc.TestAdd.test_zero)"),
            "test_zero"
        );
        assert_eq!(
            function_name("tests/test_calc.py::test_zero[1-2]"),
            "test_zero"
        );
        assert_eq!(function_name("TestAdd/zero"), "TestAdd");
    }

    #[test]
    fn a_rust_test_comes_with_its_attribute_and_whole_body() {
        let src = "pub fn add() {}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds_large() {\n        let x = { 1 };\n        assert_eq!(add(x), 2);\n    }\n\n    #[test]\n    fn adds_large_too() {}\n}\n";
        let found = find(&[file("src/lib.rs", src)], "tests::adds_large").unwrap();
        assert_eq!(found.path, "src/lib.rs");
        assert_eq!(found.line, 7);
        assert_eq!(
            found.lines,
            vec![
                "    #[test]",
                "    fn adds_large() {",
                "        let x = { 1 };",
                "        assert_eq!(add(x), 2);",
                "    }"
            ]
        );
    }

    #[test]
    fn a_python_test_ends_where_its_indentation_does_and_test_files_come_first() {
        let code = "def test_zero():\n    pass\n";
        let test = "import unittest\n\nclass TestAdd(unittest.TestCase):\n    @unittest.expectedFailure\n    def test_zero(self):\n        x = 1\n\n        self.assertEqual(x, 1)\n\n    def test_other(self):\n        pass\n";
        let found = find(
            &[file("calc.py", code), file("tests/test_calc.py", test)],
            "test_zero (tests.test_calc.TestAdd.test_zero)",
        )
        .unwrap();
        assert_eq!(found.path, "tests/test_calc.py");
        assert_eq!(found.line, 4);
        assert_eq!(found.lines.len(), 5, "{:?}", found.lines);
        assert_eq!(found.lines[4], "        self.assertEqual(x, 1)");
    }

    #[test]
    fn a_go_test_and_a_missing_one() {
        let src = "package calc\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 1) != 2 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n";
        let found = find(&[file("calc_test.go", src)], "TestAdd/one").unwrap();
        assert_eq!(found.line, 3);
        assert_eq!(found.lines.last().unwrap(), "}");
        assert_eq!(found.lines.len(), 5);
        assert!(find(&[file("calc_test.go", src)], "TestAddMore").is_none());
        assert!(find(&[file("calc_test.go", src)], "TestAd").is_none());
    }
}
