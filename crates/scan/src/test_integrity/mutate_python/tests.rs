//! Unit tests for `mutate_python.rs`.

use super::super::mutate::tests::{all, assert_shape, each_body};

fn pytest(body: &str) -> String {
    format!("import pytest\n\n\ndef test_x():\n    x = 4\n    {body}\n")
}

fn unittest(body: &str) -> String {
    format!("import unittest\n\n\nclass TestA(unittest.TestCase):\n    def test_b(self):\n        {body}\n")
}

/// Table-driven tests: a loop over rows written there (or assigned
/// once) and a unittest `subTest` run every row's assertions.
#[test]
fn assertions_over_rows_that_certainly_exist_change_too() {
    each_body(
            "tests/test_x.py",
            &pytest,
            &[
                (
                    "for a, want in [(1, 2), (2, 4)]:\n        assert add(a, a) == want",
                    Some("for a, want in [(1, 2), (2, 4)]:\n        assert not (add(a, a) == want)"),
                ),
                // No rows, a row passed over, a name nobody assigned.
                ("for a in []:\n        assert add(a, a) == 2 * a", None),
                (
                    "for a in [1, 2]:\n        if a > 1:\n            continue\n        assert add(a, a) == 2",
                    None,
                ),
                ("for a in cases:\n        assert add(a, a) == 2 * a", None),
            ],
        );
    each_body(
            "tests/test_x.py",
            &unittest,
            &[
                (
                    "for a in (1, 2):\n            with self.subTest(a=a):\n                self.assertEqual(add(a, 0), a)",
                    Some("for a in (1, 2):\n            with self.subTest(a=a):\n                self.assertNotEqual(add(a, 0), a)"),
                ),
                (
                    "with self.assertRaises(ValueError):\n            self.assertEqual(add(1, 1), 2)",
                    None,
                ),
            ],
        );
    let named = "CASES = [(1, 2), (2, 4)]\n\n\ndef test_x():\n    for a, want in CASES:\n        assert add(a, a) == want\n";
    let m = all("tests/test_x.py", named, 0).unwrap();
    assert!(
        m.text.contains("        assert not (add(a, a) == want)\n"),
        "{}",
        m.text
    );
    let twice = format!("{named}\nCASES = []\n");
    assert!(
        all("tests/test_x.py", &twice, 0).is_none(),
        "assigned twice"
    );
}

#[test]
fn pytest_literals_change() {
    each_body(
        "tests/test_x.py",
        &pytest,
        &[
            ("assert add(2, 2) == 4", Some("assert add(2, 2) == 3")),
            ("assert 4 == add(2, 2)", Some("assert 3 == add(2, 2)")),
            ("assert name == \"x\"", Some("assert name == \"x~\"")),
            ("assert name == 'x'", Some("assert name == 'x~'")),
            ("assert x == -5", Some("assert x == -4")),
            ("assert x == 1_000", Some("assert x == 999")),
            ("assert x == 1.5", Some("assert x == 2.5")),
            ("assert x == True", Some("assert x == False")),
            ("assert x == None", Some("assert x == 0")),
            ("assert x == 4, \"msg\"", Some("assert x == 3, \"msg\"")),
            ("assert x == 4  # was 5", Some("assert x == 3  # was 5")),
            ("x = 1; assert x == 1", Some("x = 1; assert x == 0")),
            (
                "assert (\n        add(2, 2)\n        == 4\n    )",
                Some("assert (\n        add(2, 2)\n        == 3\n    )"),
            ),
            (
                "def helper():\n        return 1\n    assert helper() == 1",
                Some("def helper():\n        return 1\n    assert helper() == 0"),
            ),
        ],
    );
}

#[test]
fn pytest_other_conditions_are_negated() {
    each_body(
        "tests/test_x.py",
        &pytest,
        &[
            ("assert f(x)", Some("assert not (f(x))")),
            ("assert f(x), \"msg\"", Some("assert not (f(x)), \"msg\"")),
            ("assert a != b", Some("assert not (a != b)")),
            ("assert a == b == 4", Some("assert not (a == b == 4)")),
            ("assert x == 4 and y", Some("assert not (x == 4 and y)")),
            ("assert x is None", Some("assert not (x is None)")),
            ("assert x == b\"a\"", Some("assert not (x == b\"a\")")),
            ("assert x == f\"a\"", Some("assert not (x == f\"a\")")),
            ("assert x == '''a'''", Some("assert not (x == '''a''')")),
            ("assert x == 0x1F", Some("assert not (x == 0x1F)")),
            ("assert(x)", Some("assert not ((x))")),
            ("assert f(x)  # note", Some("assert not (f(x))  # note")),
            (
                "assert (\n        f(x)\n    ), 'm'",
                Some("assert not ((\n        f(x)\n    )), 'm'"),
            ),
            (
                "# assert x == 1\n    s = 'assert x == 1'\n    assert y",
                Some("# assert x == 1\n    s = 'assert x == 1'\n    assert not (y)"),
            ),
        ],
    );
}

#[test]
fn pytest_assertions_that_may_not_have_run_are_left() {
    each_body(
        "tests/test_x.py",
        &pytest,
        &[
            ("if x:\n        assert x == 4", None),
            ("for i in y:\n        assert i", None),
            ("with open(p) as f:\n        assert f", None),
            ("try:\n        assert x\n    except E:\n        pass", None),
            ("if x: assert x", None),
            ("return\n    assert x", None),
            ("if x:\n        return\n    assert y", None),
            ("def f(): assert x", None),
            ("# assert x == 1", None),
            ("s = \"assert x\"", None),
            ("mock.assert_called_once()", None),
            ("assert_x(y)", None),
        ],
    );
}

#[test]
fn pytest_markers_classes_and_inline_bodies() {
    for marker in [
        "@pytest.mark.xfail",
        "@pytest.mark.skip(reason='x')",
        "@pytest.mark.skipif(WIN, reason='x')",
        "@unittest.skip('x')",
        "@unittest.expectedFailure",
    ] {
        let text = format!("{marker}\ndef test_x():\n    assert x == 1\n");
        assert_eq!(all("tests/test_x.py", &text, 0), None, "{marker}");
    }
    let text = "def test_x():\n    pytest.skip('later')\n    assert x == 1\n";
    assert_eq!(all("tests/test_x.py", text, 0), None);
    let text =
        "class TestA:\n    def test_b(self):\n        assert x\n\n\ndef test_c(): assert y == 2\n";
    let m = all("tests/test_x.py", text, 0).unwrap();
    let got: Vec<(&str, u32)> = m
        .mutants
        .iter()
        .map(|m| (m.test.as_str(), m.line))
        .collect();
    assert_eq!(got, [("TestA::test_b", 3), ("test_c", 6)]);
    let want = text
        .replace("assert x\n", "assert not (x)\n")
        .replace("y == 2", "y == 1");
    assert_eq!(m.text, want);
    assert_shape(text, &m, 1);
    let one = super::super::mutate("t.py", text, &|n| n == "test_c", 0).unwrap();
    assert_eq!(one.mutants.len(), 1);
}

#[test]
fn unittest_assertions() {
    each_body(
        "tests/test_x.py",
        &unittest,
        &[
            (
                "self.assertEqual(add(2, 2), 4)",
                Some("self.assertEqual(add(2, 2), 3)"),
            ),
            (
                "self.assertEqual(4, add(2, 2))",
                Some("self.assertEqual(3, add(2, 2))"),
            ),
            ("self.assertEqual(x, None)", Some("self.assertEqual(x, 0)")),
            (
                "self.assertEqual(a, b, msg='m')",
                Some("self.assertNotEqual(a, b, msg='m')"),
            ),
            ("self.assertEquals(a, b)", Some("self.assertNotEqual(a, b)")),
            ("self.assertTrue(x)", Some("self.assertFalse(x)")),
            ("self.assertIn(a, b)", Some("self.assertNotIn(a, b)")),
            ("self.assertIsNone(x)", Some("self.assertIsNotNone(x)")),
            (
                "self.assertListEqual(a, b)",
                Some("self.assertNotEqual(a, b)"),
            ),
            (
                "self.assertNotRegex(s, r'x')",
                Some("self.assertRegex(s, r'x')"),
            ),
            (
                "self.assertAlmostEqual(\n            f(), g(),\n        )",
                Some("self.assertNotAlmostEqual(\n            f(), g(),\n        )"),
            ),
            ("self.assertRaises(E, f)", None),
            ("with self.assertRaises(E):\n            f()", None),
            ("self.assertCountEqual(a, b)", None),
            ("self.assertSequenceEqual(a, b)", None),
            ("self.assertEqual(first=a, second=4)", None),
            ("self.assertEqual(*pair)", None),
            ("self.assertTrue(x).y", None),
            ("other.assertTrue(x)", None),
        ],
    );
}

#[test]
fn hostile_text_does_not_panic() {
    for t in [
        "def test_x():\n    assert",
        "def test_x():\n    assert (",
        "def test_x():\n    assert x == '",
        "def test_x():\n    self.assertEqual(",
        "def test_x():\n    assert x ==",
        "def test_x():\n    assert ()",
        "def test_x(): assert",
    ] {
        let _ = all("tests/test_x.py", t, 0);
    }
}
