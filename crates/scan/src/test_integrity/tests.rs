//! Unit tests for the test-integrity check as a whole (`mod.rs`).

use super::testing::rules;
use super::*;

const LIB: &str = "pub fn f() -> u8 { 1 }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn one() {\n        assert_eq!(super::f(), 1);\n    }\n}\n";
const LIB_WITHOUT: &str = "pub fn f() -> u8 { 1 }\n";
const MOVED: &str = "#[test]\nfn one() {\n    assert_eq!(demo::f(), 1);\n}\n";

fn run(files: &[FileVersions], allow: &[&str], ledger: Option<LedgerView>) -> Vec<Issue> {
    let allow: Vec<String> = allow.iter().map(|s| s.to_string()).collect();
    check(&Input {
        files,
        test_commands: &[],
        allow: &allow,
        ledger,
        crate_words: None,
    })
}

fn fv<'a>(path: &'a str, base: Option<&'a str>, new: Option<&'a str>) -> FileVersions<'a> {
    FileVersions {
        path,
        old_path: None,
        base,
        new,
    }
}

#[test]
fn a_test_moved_to_another_file_is_not_removed() {
    let files = [
        fv("src/lib.rs", Some(LIB), Some(LIB_WITHOUT)),
        fv("tests/one.rs", None, Some(MOVED)),
    ];
    assert_eq!(rules(&run(&files, &[], None)), []);
    // Without the file it moved to, it is a removal.
    let issues = run(&files[..1], &[], None);
    assert_eq!(rules(&issues), [(RULE_REMOVED, Severity::Error)]);
}

#[test]
fn a_moved_test_is_still_compared() {
    let weakened = MOVED.replace("    assert_eq!(demo::f(), 1);\n", "");
    let files = [
        fv("src/lib.rs", Some(LIB), Some(LIB_WITHOUT)),
        fv("tests/one.rs", None, Some(&weakened)),
    ];
    assert_eq!(
        rules(&run(&files, &[], None)),
        [(RULE_ASSERTIONS, Severity::Error)]
    );
}

#[test]
fn a_deleted_test_file_is_one_finding() {
    let files = [fv("tests/one.rs", Some(MOVED), None)];
    let issues = run(&files, &[], None);
    assert_eq!(rules(&issues), [(RULE_REMOVED, Severity::Error)]);
    assert!(
        issues[0].message.contains("deleted"),
        "{}",
        issues[0].message
    );
}

#[test]
fn allowed_paths_and_names_are_info() {
    let renamed = LIB.replace("fn one()", "fn first()");
    let files = [fv("src/lib.rs", Some(LIB), Some(&renamed))];
    assert_eq!(
        rules(&run(&files, &[], None)),
        [(RULE_REMOVED, Severity::Error)]
    );
    for allow in ["one", "tests::one", "tests::*", "src/lib.rs", "src/*.rs"] {
        let issues = run(&files, &[allow], None);
        assert_eq!(rules(&issues), [(RULE_REMOVED, Severity::Info)], "{allow}");
        assert!(issues[0].message.contains("allowed by"), "{allow}");
    }
    assert_eq!(
        rules(&run(&files, &["two", "tests/*"], None)),
        [(RULE_REMOVED, Severity::Error)]
    );
}

#[test]
fn ledger_removed_ignored_and_moved() {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let (base, now, ign, none) = (
        s(&["a::x", "a::y", "a::z", "m::moved"]),
        s(&["a::x", "n::moved"]),
        s(&["a::y", "a::new"]),
        s(&[]),
    );
    let ledger = LedgerView {
        at_base: &base,
        now: &now,
        ignored_now: &ign,
        ignored_at_base: &none,
    };
    let issues = run(&[], &[], Some(ledger));
    let got: Vec<(&str, Severity, &str)> = issues
        .iter()
        .map(|i| {
            (
                i.rule.as_str(),
                i.severity,
                i.message.split('`').nth(1).unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (RULE_REMOVED, Severity::Error, "a::z"),
            (RULE_SKIP, Severity::Error, "a::y"),
            (RULE_SKIP, Severity::Warning, "a::new"),
        ]
    );
    // Already reported by reading the files: not twice.
    let renamed = LIB.replace("fn one()", "fn first()");
    let files = [fv("src/lib.rs", Some(LIB), Some(&renamed))];
    let (base, now) = (s(&["tests::one"]), s(&["tests::first"]));
    let ledger = LedgerView {
        at_base: &base,
        now: &now,
        ignored_now: &none,
        ignored_at_base: &none,
    };
    assert_eq!(rules(&run(&files, &[], Some(ledger))).len(), 1);
}

#[test]
fn a_doc_test_whose_line_moved_is_not_removed_and_one_dropped_is() {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let none = s(&[]);
    let base = s(&[
        "src/lib.rs - add (line 9)",
        "src/lib.rs - add (line 15)",
        "src/lib.rs - (line 3)",
    ]);
    let moved = s(&[
        "src/lib.rs - add (line 12)",
        "src/lib.rs - add (line 18)",
        "src/lib.rs - (line 4)",
    ]);
    let ledger = LedgerView {
        at_base: &base,
        now: &moved,
        ignored_now: &none,
        ignored_at_base: &none,
    };
    assert!(run(&[], &[], Some(ledger)).is_empty());
    let dropped = s(&["src/lib.rs - add (line 12)", "src/lib.rs - (line 4)"]);
    let ledger = LedgerView {
        at_base: &base,
        now: &dropped,
        ignored_now: &none,
        ignored_at_base: &none,
    };
    assert_eq!(
        rules(&run(&[], &[], Some(ledger))),
        [(RULE_REMOVED, Severity::Error)]
    );
}

#[test]
fn code_that_now_reaches_test_data_is_an_error() {
    let calc =
        "CASES = [\n    (1, 1, 2),\n    (10, 1, 11),\n]\n\n\ndef add(a, b):\n    return a + b\n";
    let test = "from calc import CASES, add\n\n\ndef test_add():\n    for a, b, s in CASES:\n        assert add(a, b) == s\n";
    let mut words = Words::default();
    words.add("calc.py", calc);
    words.add("test_calc.py", test);
    let found = |now: &str| super::testing::data_findings("calc.py", calc, now, &words);
    // A fix that leaves the data alone: nothing.
    assert!(found(&calc.replace("a + b", "b + a")).is_empty());
    // Truncated at import, popped when called, special-cased: each is
    // code reaching the data.
    for now in [
        format!("{calc}CASES = CASES[:1]\n"),
        format!("{calc}CASES.pop()\n"),
        calc.replace(
            "    return a + b",
            "    if (a, b, 11) in CASES:\n        return 11\n    return a - b",
        ),
    ] {
        let f = found(&now);
        assert!(
            f.iter()
                .any(|m| m.starts_with("code under test now names `CASES`")),
            "{now}: {f:?}"
        );
    }
}

/// Pathological texts in every language: no panic, no stack overflow,
/// and (watched by hand, not timed here) no quadratic blow-up.
#[test]
fn hostile_inputs() {
    const N: usize = 20_000;
    let texts = [
        "{".repeat(N),
        "}".repeat(N),
        "(".repeat(N),
        "\"".repeat(N),
        "'".repeat(N),
        "r#".repeat(N),
        "/*".repeat(N),
        "`${".repeat(N),
        "#[cfg_attr(all(), ".repeat(N),
        "mod a {".repeat(N),
        format!("#[test]\nfn t() {{ {} }}", "assert!(".repeat(N)),
        format!("#[test]\nfn t() {{ {} }}", "assert!(\"x\"".repeat(N)),
        format!("it('x', () => {{ {} }})", "expect(".repeat(N)),
        "describe('x', () => {".repeat(N),
        format!("it('x', () => {{}}{})", "{}".repeat(N)),
        format!("def test_x():\n    {}", "assert (".repeat(N)),
        (0..400)
            .map(|d| format!("{}class TestA:\n", " ".repeat(d)))
            .collect(),
        format!("func TestX(t *testing.T) {{\n{}\n}}", "if x {".repeat(N)),
        format!("func TestX(t *testing.T) {{\n{}\n}}", "t.Errorf(".repeat(N)),
        "@Test ".repeat(N),
        "class A { ".repeat(N),
        format!("x{}", "\u{e9}'".repeat(N)),
    ];
    let paths = [
        "src/lib.rs",
        "tests/test_x.py",
        "x_test.go",
        "a.test.ts",
        "src/test/java/ATest.java",
    ];
    for text in &texts {
        let mut half = text.len() / 2;
        while !text.is_char_boundary(half) {
            half -= 1;
        }
        for path in paths {
            let files = [fv(path, Some(text.as_str()), Some(&text[..half]))];
            let _ = run(&files, &[], None);
        }
    }
}

#[test]
fn relevant_paths() {
    let cmds = vec!["sh scripts/test.sh".to_string()];
    for p in [
        "src/lib.rs",
        "tests/test_x.py",
        "pkg/x_test.go",
        "web/a.test.tsx",
        "build.rs",
        "Cargo.toml",
        "scripts/test.sh",
        "conftest.py",
        "src/helpers.py",
        "pkg/x.go",
    ] {
        assert!(relevant(p, &cmds), "{p}");
    }
    for p in ["README.md", "web/a.tsx", "scripts/other.sh"] {
        assert!(!relevant(p, &cmds), "{p}");
    }
}
