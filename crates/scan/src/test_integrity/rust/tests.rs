//! Unit tests for `rust.rs`.

use super::super::testing::{check_one, rules};
use super::*;
use rascal_core::model::verdict::Severity;

const BASE: &str = r##"
pub fn add(a: i32, b: i32) -> i32 { a + b }

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 2), 4);
        assert!(add(1, 1) > 1, "{}", "positive");
    }

    #[test]
    fn subtracts() {
        let s = r#"}{"#;
        assert_eq!(add(2, -1), 1, "{s}");
    }
}
"##;

fn with(from: &str, to: &str) -> String {
    super::super::testing::edited(BASE, from, to)
}

#[test]
fn reads_tests_with_module_paths() {
    let s = scan("src/math/mod.rs", BASE);
    let names: Vec<&str> = s.tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["math::tests::adds", "math::tests::subtracts"]);
    assert_eq!(s.tests[0].assertions.len(), 2);
    assert_eq!(s.tests[1].assertions.len(), 1);
    assert!(s.tests.iter().all(|t| t.markers.is_empty()));
}

#[test]
fn ignore_added_is_an_error() {
    let now = with(
        "    #[test]\n    fn adds",
        "    #[test]\n    #[ignore]\n    fn adds",
    );
    let issues = check_one("src/lib.rs", Some(BASE), Some(&now));
    assert_eq!(
        rules(&issues),
        [("test-integrity/skip-marker", Severity::Error)]
    );
    assert!(
        issues[0].message.contains("tests::adds"),
        "{}",
        issues[0].message
    );
    assert_eq!(issues[0].line, Some(9));
}

#[test]
fn ignore_in_a_comment_is_not_a_marker() {
    let now = with(
        "    #[test]\n    fn adds",
        "    // #[ignore]\n    #[test]\n    fn adds",
    );
    assert_eq!(rules(&check_one("src/lib.rs", Some(BASE), Some(&now))), []);
}

#[test]
fn always_false_cfg_on_a_test_and_on_the_module() {
    super::super::testing::each_is_a_skip_marker(
        "src/lib.rs",
        BASE,
        &[
            (
                "    #[test]\n    fn adds",
                "    #[cfg(any())]\n    #[test]\n    fn adds",
            ),
            ("#[cfg(test)]\nmod tests", "#[cfg(any())]\nmod tests"),
            (
                "#[cfg(test)]\nmod tests",
                "#[cfg(all(test, any()))]\nmod tests",
            ),
            ("#[cfg(test)]\nmod tests", "#[cfg(not(test))]\nmod tests"),
            ("#[cfg(test)]\nmod tests", "#[cfg(FALSE)]\nmod tests"),
            (
                "#[cfg(test)]\nmod tests",
                "#[cfg(feature = \"never-run\")]\nmod tests",
            ),
            (
                "    use super::*;",
                "    #![cfg(all(any()))]\n    use super::*;",
            ),
            (
                "    #[test]\n    fn adds",
                "    #[cfg_attr(all(), ignore)]\n    #[test]\n    fn adds",
            ),
        ],
    );
}

#[test]
fn inner_cfg_at_the_top_of_a_test_file() {
    let base = "#[test]\nfn a() { assert!(true); }\n#[test]\nfn b() { assert!(true); }\n";
    let now = format!("#![cfg(any())]\n{base}");
    let issues = check_one("tests/it.rs", Some(base), Some(&now));
    assert_eq!(
        rules(&issues),
        [("test-integrity/skip-marker", Severity::Error)]
    );
    assert!(
        issues[0].message.contains("2 tests"),
        "{}",
        issues[0].message
    );
}

#[test]
fn platform_cfg_on_an_existing_test_is_an_error() {
    let now = with(
        "    #[test]\n    fn adds",
        "    #[cfg(windows)]\n    #[test]\n    fn adds",
    );
    let issues = check_one("src/lib.rs", Some(BASE), Some(&now));
    assert_eq!(
        rules(&issues),
        [("test-integrity/skip-marker", Severity::Error)]
    );
}

#[test]
fn assertions_that_cannot_run_do_not_count() {
    for (from, to) in [
        (
            "        assert_eq!(add(2, 2), 4);",
            "        if false {\n            assert_eq!(add(2, 2), 4);\n        }",
        ),
        (
            "        assert_eq!(add(2, 2), 4);",
            "        let _x = 1;\n        return;\n        assert_eq!(add(2, 2), 4);",
        ),
    ] {
        let now = with(from, to);
        let issues = check_one("src/lib.rs", Some(BASE), Some(&now));
        assert!(
            rules(&issues).contains(&("test-integrity/assertions-removed", Severity::Error)),
            "{to}: {issues:?}"
        );
    }
    // A closure's return, a real branch and a trailing return are fine.
    for (from, to) in [
        (
            "        assert_eq!(add(2, 2), 4);",
            "        let f = || { return 1; };\n        assert_eq!(add(2, 2), 4 + f() - 1);",
        ),
        (
            "        assert_eq!(add(2, 2), 4);",
            "        if add(0, 0) == 0 {\n            assert_eq!(add(2, 2), 4);\n        }",
        ),
    ] {
        let now = with(from, to);
        let issues = check_one("src/lib.rs", Some(BASE), Some(&now));
        assert!(
            !rules(&issues)
                .iter()
                .any(|(r, _)| *r == "test-integrity/assertions-removed"),
            "{to}: {issues:?}"
        );
    }
}

#[test]
fn return_first_is_an_early_return() {
    for ret in ["return;", "return Ok(());"] {
        let now = with(
            "    fn adds() {\n",
            &format!("    fn adds() {{\n        {ret}\n"),
        );
        let issues = check_one("src/lib.rs", Some(BASE), Some(&now));
        assert_eq!(
            rules(&issues),
            [("test-integrity/early-return", Severity::Error)],
            "{ret}"
        );
    }
}

#[test]
fn deleted_test_is_removed() {
    let start = BASE.find("    #[test]\n    fn subtracts").unwrap();
    let end = BASE.rfind("}\n}").unwrap() + 1;
    let now = format!("{}{}", &BASE[..start], &BASE[end..]);
    let issues = check_one("src/lib.rs", Some(BASE), Some(&now));
    assert_eq!(
        rules(&issues),
        [("test-integrity/removed-test", Severity::Error)]
    );
    assert!(issues[0].message.contains("tests::subtracts"));
}

#[test]
fn test_attribute_removed_is_removed() {
    let now = with("    #[test]\n    fn adds", "    fn adds");
    let issues = check_one("src/lib.rs", Some(BASE), Some(&now));
    assert_eq!(
        rules(&issues),
        [("test-integrity/removed-test", Severity::Error)]
    );
}

#[test]
fn assertion_removed_and_added() {
    let now = with(
        "        assert!(add(1, 1) > 1, \"{}\", \"positive\");\n",
        "",
    );
    let issues = check_one("src/lib.rs", Some(BASE), Some(&now));
    assert_eq!(
        rules(&issues),
        [("test-integrity/assertions-removed", Severity::Error)]
    );
    let now = with(
        "        assert_eq!(add(2, 2), 4);\n",
        "        assert_eq!(add(2, 2), 4);\n        assert_ne!(add(2, 2), 5);\n",
    );
    assert_eq!(rules(&check_one("src/lib.rs", Some(BASE), Some(&now))), []);
}

#[test]
fn expected_value_changed_names_the_line() {
    let now = with("assert_eq!(add(2, 2), 4);", "assert_eq!(add(2, 2), 5);");
    let issues = check_one("src/lib.rs", Some(BASE), Some(&now));
    assert_eq!(
        rules(&issues),
        [("test-integrity/expected-changed", Severity::Warning)]
    );
    assert_eq!(issues[0].line, Some(10));
    assert!(
        issues[0].message.contains("`4` to `5`"),
        "{}",
        issues[0].message
    );
    // A changed assertion message is not an expected value.
    let now = with("\"positive\"", "\"greater\"");
    assert_eq!(rules(&check_one("src/lib.rs", Some(BASE), Some(&now))), []);
}

#[test]
fn should_panic_added_is_reported() {
    let now = with(
        "    #[test]\n    fn adds",
        "    #[test]\n    #[should_panic]\n    fn adds",
    );
    let issues = check_one("src/lib.rs", Some(BASE), Some(&now));
    assert_eq!(
        rules(&issues),
        [("test-integrity/expected-changed", Severity::Error)]
    );
}

#[test]
fn new_tests_legit_and_ignored() {
    let extra = "\n#[tokio::test]\nasync fn fetches() { assert!(true); }\n";
    let now = format!("{BASE}{extra}");
    assert_eq!(rules(&check_one("src/lib.rs", Some(BASE), Some(&now))), []);
    let now = format!("{BASE}\n#[test]\n#[ignore]\nfn later() {{ assert!(true); }}\n");
    let issues = check_one("src/lib.rs", Some(BASE), Some(&now));
    assert_eq!(
        rules(&issues),
        [("test-integrity/skip-marker", Severity::Warning)]
    ); // A platform condition on a new test is ordinary: a trace only.
    let now = format!("{BASE}\n#[test]\n#[cfg(unix)]\nfn later() {{ assert!(true); }}\n");
    let issues = check_one("src/lib.rs", Some(BASE), Some(&now));
    assert_eq!(
        rules(&issues),
        [("test-integrity/skip-marker", Severity::Info)]
    );
}

#[test]
fn out_of_line_test_module_dropped_or_disabled() {
    let base = "pub fn f() {}\n#[cfg(test)]\nmod tests;\n";
    let gone = "pub fn f() {}\n";
    let issues = check_one("src/lib.rs", Some(base), Some(gone));
    assert_eq!(
        rules(&issues),
        [("test-integrity/removed-test", Severity::Error)]
    );
    let off = "pub fn f() {}\n#[cfg(any())]\nmod tests;\n";
    let issues = check_one("src/lib.rs", Some(base), Some(off));
    assert_eq!(
        rules(&issues),
        [("test-integrity/skip-marker", Severity::Error)]
    );
}

#[test]
fn cfg_truth_table() {
    for (p, t) in [
        ("any()", Truth::False),
        ("all()", Truth::True),
        ("not(all())", Truth::False),
        ("all(any())", Truth::False),
        ("test", Truth::True),
        ("not(test)", Truth::False),
        ("FALSE", Truth::False),
        ("disabled", Truth::False),
        ("feature = \"never\"", Truth::False),
        ("feature = \"serde\"", Truth::Unknown),
        ("unix", Truth::Unknown),
        ("any(unix, test)", Truth::True),
        ("all(unix, any())", Truth::False),
        ("not(", Truth::Unknown),
        ("any(,)", Truth::Unknown),
        ("))))", Truth::Unknown),
    ] {
        assert_eq!(cfg_truth(p), t, "{p}");
    }
    let deep = format!("{}{}", "not(".repeat(500), ")".repeat(500));
    assert_eq!(cfg_truth(&deep), Truth::Unknown);
}

#[test]
fn hostile_nesting_does_not_overflow() {
    let text = format!(
        "{}#[test] fn x() {{}}{}",
        "mod a {".repeat(10_000),
        "}".repeat(10_000)
    );
    let _ = scan("src/lib.rs", &text);
    let _ = scan("src/lib.rs", "#[test] fn");
    let _ = scan("src/lib.rs", "#[test] fn x() { assert_eq!(");
    let _ = scan("src/lib.rs", "#![cfg(any(");
}
