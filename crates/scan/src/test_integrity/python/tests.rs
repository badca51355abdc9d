//! Unit tests for `python.rs`.

use super::super::testing::{check_one, each_edit_gives, rules};
use super::*;

const BASE: &str = r#"import pytest


def helper():
    return 1


def test_adds():
    """Adds."""
    assert 1 + 1 == 2, "math"
    assert helper() == 1


class TestGroup:
    def test_one(self):
        x = (1,
    2)
        assert x == (1, 2)

    def not_a_test(self):
        return 0


async def test_async():
    assert True
"#;

fn with(from: &str, to: &str) -> String {
    super::super::testing::edited(BASE, from, to)
}

#[test]
fn reads_tests_in_modules_and_classes() {
    let s = scan(BASE);
    let names: Vec<(&str, usize)> = s
        .tests
        .iter()
        .map(|t| (t.name.as_str(), t.assertions.len()))
        .collect();
    assert_eq!(
        names,
        [
            ("test_adds", 2),
            ("TestGroup::test_one", 1),
            ("test_async", 1)
        ]
    );
}

#[test]
fn deleted_test_is_removed() {
    let now = with("async def test_async():\n    assert True\n", "");
    let issues = check_one("tests/test_math.py", Some(BASE), Some(&now));
    assert_eq!(
        rules(&issues),
        [("test-integrity/removed-test", Severity::Error)]
    );
    assert!(issues[0].message.contains("test_async"));
}

#[test]
fn skip_decorators_and_calls() {
    super::super::testing::each_is_a_skip_marker(
        "tests/test_math.py",
        BASE,
        &[
            (
                "def test_adds",
                "@pytest.mark.skip(reason=\"later\")\ndef test_adds",
            ),
            (
                "def test_adds",
                "@pytest.mark.skipif(True, reason=\"x\")\ndef test_adds",
            ),
            ("def test_adds", "@pytest.mark.xfail\ndef test_adds"),
            ("class TestGroup", "@unittest.skip(\"x\")\nclass TestGroup"),
            (
                "    def test_one",
                "    @unittest.skipIf(True, \"x\")\n    def test_one",
            ),
            (
                "    \"\"\"Adds.\"\"\"\n",
                "    \"\"\"Adds.\"\"\"\n    pytest.skip(\"flaky\")\n",
            ),
            (
                "def helper",
                "pytestmark = pytest.mark.skip\n\n\ndef helper",
            ),
            (
                "def helper",
                "pytest.skip(\"x\", allow_module_level=True)\n\n\ndef helper",
            ),
        ],
    );
}

#[test]
fn conditional_skips_say_so_and_are_info_on_new_platform_tests() {
    let now = with(
        "def test_adds",
        "@pytest.mark.skipif(WIN, reason=\"posix\")\ndef test_adds",
    );
    let issues = check_one("tests/test_math.py", Some(BASE), Some(&now));
    assert_eq!(
        rules(&issues),
        [("test-integrity/skip-marker", Severity::Error)]
    );
    assert!(
        issues[0].message.contains("only when a condition allows"),
        "{}",
        issues[0].message
    );
    let now = with(
        "def test_adds",
        "@pytest.mark.xfail(reason=\"bug\")\ndef test_adds",
    );
    let issues = check_one("tests/test_math.py", Some(BASE), Some(&now));
    assert!(
        issues[0].message.contains("no longer runs"),
        "{}",
        issues[0].message
    );
    assert!(keyword_arg(" reason = 'x'") && !keyword_arg("x == 1") && !keyword_arg("'a=b'"));
}

#[test]
fn skip_text_in_a_comment_or_string_is_not_a_marker() {
    let now = with(
            "def test_adds",
            "# @pytest.mark.skip\n@pytest.mark.parametrize(\"why\", [\"mark.skip\"])  # .skip\ndef test_adds",
        );
    assert_eq!(
        rules(&check_one("tests/test_math.py", Some(BASE), Some(&now))),
        []
    );
}

#[test]
fn early_return_removed_assertion_changed_value() {
    each_edit_gives(
        "tests/test_math.py",
        BASE,
        &[
            // After the docstring.
            (
                "    \"\"\"Adds.\"\"\"\n",
                "    \"\"\"Adds.\"\"\"\n    return\n",
                &[("test-integrity/early-return", Severity::Error)],
            ),
            (
                "    assert helper() == 1\n",
                "",
                &[("test-integrity/assertions-removed", Severity::Error)],
            ),
            (
                "assert 1 + 1 == 2",
                "assert 1 + 1 == 3",
                &[("test-integrity/expected-changed", Severity::Warning)],
            ),
            ("\"math\"", "\"arithmetic\"", &[]),
        ],
    );
}

#[test]
fn a_later_definition_shadows_the_test() {
    let now = format!("{BASE}\n\ndef test_adds():\n    pass\n");
    let issues = check_one("tests/test_math.py", Some(BASE), Some(&now));
    assert_eq!(
        rules(&issues),
        [("test-integrity/assertions-removed", Severity::Error)]
    );
}

#[test]
fn renamed_to_a_file_pytest_does_not_collect() {
    let issues = super::super::testing::check_files(&[super::super::FileVersions {
        path: "tests/math_cases.py",
        old_path: Some("tests/test_math.py"),
        base: Some(BASE),
        new: Some(BASE),
    }]);
    assert_eq!(
        rules(&issues),
        [("test-integrity/removed-test", Severity::Error)]
    );
    assert!(
        issues[0].message.contains("3 tests"),
        "{}",
        issues[0].message
    );
}

#[test]
fn hostile_text_does_not_panic() {
    for t in [
        "def",
        "def test_x(",
        "class",
        "@",
        "\tdef test_x():\n\t\treturn",
        "'''",
        "x = (\n",
    ] {
        let _ = scan(t);
    }
}
