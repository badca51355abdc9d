//! Unit tests for `test_only.rs`.

use super::super::testing::check_one;
use super::*;
use rascal_core::model::verdict::{Issue, Severity};

fn found(path: &str, base: Option<&str>, new: &str) -> Vec<Issue> {
    let mut out = Vec::new();
    check(
        &[FileVersions {
            path,
            old_path: None,
            base,
            new: Some(new),
        }],
        &mut out,
    );
    out.into_iter().map(|f| f.issue).collect()
}

const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n";
const CALC: &str = "import os\nimport sys\n\n\ndef add(a, b):\n    return a - b\n";

/// `(name, path, text added to the base)`: each must give exactly one
/// finding.
const FLAGGED: &[(&str, &str, &str)] = &[
        (
            "cfg(test) and cfg(not(test)) twins",
            "src/lib.rs",
            "#[cfg(test)]\npub fn mul(a: i32) -> i32 { a * 2 }\n",
        ),
        (
            "cfg(not(test)) split over lines with comments",
            "src/lib.rs",
            "#[cfg(\n    // only when shipped\n    not(\n        test\n    )\n)]\npub fn mul(a: i32) -> i32 { a * 3 }\n",
        ),
        (
            "cfg!(test) in a body",
            "src/lib.rs",
            "pub fn mul(a: i32) -> i32 {\n    if cfg!(test) { return 4; }\n    a * 3\n}\n",
        ),
        (
            "cfg! debug_assertions with a comment",
            "src/lib.rs",
            "pub fn mul(a: i32) -> i32 {\n    if cfg! ( /* dev */ debug_assertions ) { 4 } else { a }\n}\n",
        ),
        (
            "cfg_attr(test, …) changing code",
            "src/lib.rs",
            "#[cfg_attr(test, path = \"fake.rs\")]\nmod imp;\n",
        ),
        (
            "cfg(any(test, …)) on a function",
            "src/lib.rs",
            "#[cfg(any(test, feature = \"x\"))]\npub fn helper() -> i32 { 4 }\n",
        ),
        (
            "cfg(test) module without tests",
            "src/lib.rs",
            "#[cfg(test)]\nmod imp {\n    pub fn add(a: i32, b: i32) -> i32 { a + b }\n}\n",
        ),
        (
            "RUST_TEST_THREADS",
            "src/lib.rs",
            "pub fn t() -> bool { std::env::var(\"RUST_TEST_THREADS\").is_ok() }\n",
        ),
        (
            "RASCAL_ setting",
            "src/lib.rs",
            "pub fn t() -> bool { std::env::var_os(\"RASCAL_RUN\").is_some() }\n",
        ),
        (
            "thread name",
            "src/lib.rs",
            "pub fn t() -> bool { std::thread::current().name().is_some_and(|n| n != \"main\") }\n",
        ),
        (
            "thread name split over lines",
            "src/lib.rs",
            "pub fn t() -> bool {\n    std::thread::current() // the runner names it\n        .name()\n        .is_some()\n}\n",
        ),
        (
            "thread name through an alias",
            "src/lib.rs",
            "use std::thread::current as cur;\npub fn t() -> bool { cur().name().is_some() }\n",
        ),
        (
            "args for a test binary",
            "src/lib.rs",
            "pub fn t() -> bool {\n    std::env::args()\n        .next()\n        .is_some_and(|a| a.contains(\"/deps/\"))\n}\n",
        ),
        (
            "--nocapture",
            "src/lib.rs",
            "pub fn t(a: &str) -> bool { a == \"--nocapture\" }\n",
        ),
        (
            "current_exe",
            "src/lib.rs",
            "pub fn t() -> bool { std::env::current_exe().is_ok() }\n",
        ),
        (
            "pytest in sys.modules",
            "calc.py",
            "\ndef mul(a):\n    if \"pytest\" in sys.modules:\n        return 4\n    return a * 3\n",
        ),
        (
            "sys.modules.get split over lines",
            "calc.py",
            "\ndef mul(a):\n    if sys.modules.get(\n        # the runner\n        'pytest'\n    ):\n        return 4\n    return a\n",
        ),
        (
            "a sys.modules key built at run time",
            "calc.py",
            "import sys\n\ndef mul(a):\n    return 4 if 'py' + 'test' in sys.modules else a\n",
        ),
        (
            "a sys.modules key reversed",
            "calc.py",
            "import sys\n\ndef mul(a):\n    return 4 if sys.modules.get('tsetyp'[::-1]) else a\n",
        ),
        (
            "sys aliased",
            "calc.py",
            "import sys as _s\n\ndef mul(a):\n    return 4 if 'unittest' in _s.modules else a\n",
        ),
        (
            "modules imported under another name",
            "calc.py",
            "from sys import modules as loaded\n\ndef mul(a):\n    return 4 if '_pytest' in loaded else a\n",
        ),
        (
            "PYTEST_CURRENT_TEST",
            "calc.py",
            "\ndef mul(a):\n    return 4 if os.environ.get('PYTEST_CURRENT_TEST') else a\n",
        ),
        (
            "RASCAL_ in getenv",
            "calc.py",
            "\ndef mul(a):\n    return 4 if os.getenv(\"RASCAL_CANDIDATE\") else a\n",
        ),
        (
            "argv[0]",
            "calc.py",
            "\ndef mul(a):\n    return 4 if 'pytest' in sys.argv[0] else a\n",
        ),
        (
            "thread name",
            "calc.py",
            "import threading\n\ndef mul(a):\n    return 4 if threading.current_thread().name != 'MainThread' else a\n",
        ),
        (
            "_getframe aliased",
            "calc.py",
            "from sys import _getframe as gf\n\ndef mul(a):\n    return 4 if 'test' in gf(1).f_code.co_name else a\n",
        ),
        (
            "inspect.stack",
            "calc.py",
            "import inspect\n\ndef mul(a):\n    return 4 if any('test' in f.function for f in inspect.stack()) else a\n",
        ),
        (
            "frame walk",
            "calc.py",
            "import inspect\n\ndef mul(a):\n    f = inspect.currentframe().f_back\n    return a\n",
        ),
        (
            "__main__.__file__",
            "calc.py",
            "import __main__\n\ndef mul(a):\n    return 4 if 'pytest' in __main__.__file__ else a\n",
        ),
        (
            "gettrace",
            "calc.py",
            "\ndef mul(a):\n    return 4 if sys.gettrace() is not None else a\n",
        ),
    ];

#[test]
fn each_way_of_branching_on_tests_is_one_finding() {
    for (name, path, added) in FLAGGED {
        let base = if path.ends_with(".rs") { LIB } else { CALC };
        let new = format!("{base}{added}");
        let issues = found(path, Some(base), &new);
        assert_eq!(issues.len(), 1, "{name}: {issues:?}");
        let i = &issues[0];
        assert_eq!(
            (i.rule.as_str(), i.severity),
            (RULE_TEST_ONLY, Severity::Error),
            "{name}"
        );
        assert!(
            i.message.contains("branches on being tested")
                && i.message.contains(&format!("{path}:")),
            "{name}: {}",
            i.message
        );
        // At the base already: not the change's.
        assert!(
            found(path, Some(&new), &new).is_empty(),
            "{name}: unchanged"
        );
        // In a test file: tests may look at their runner.
        let test_path = if path.ends_with(".rs") {
            "tests/it.rs"
        } else {
            "tests/test_calc.py"
        };
        assert!(found(test_path, None, &new).is_empty(), "{name}: in tests");
    }
}

#[test]
fn ordinary_code_is_clean() {
    let cases: &[(&str, &str, &str)] = &[
            (
                "an honest fix with a test module",
                "src/lib.rs",
                "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 2), 4);\n        assert!(cfg!(test));\n        let _ = std::env::var(\"RUST_TEST_THREADS\");\n    }\n}\n",
            ),
            (
                "test module declarations, test-only imports, derives",
                "src/lib.rs",
                "#[cfg(test)]\nuse std::collections::HashMap;\n#[cfg_attr(test, derive(Debug, PartialEq))]\npub struct P(i32);\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n#[cfg(test)]\nmod tests;\n#[cfg(test)]\nmod test_support {\n    pub fn two() -> i32 { 2 }\n}\n",
            ),
            (
                "a CLI reading its arguments",
                "src/main.rs",
                "fn main() {\n    let args: Vec<String> = std::env::args().collect();\n    println!(\"{}\", args.len());\n}\n",
            ),
            (
                "words in comments and ordinary strings",
                "src/lib.rs",
                "// cfg!(test) would be wrong here; so would RASCAL_RUN\npub fn add(a: i32, b: i32) -> i32 {\n    let _ = \"see cfg(test)\";\n    a + b\n}\n",
            ),
            (
                "a main guard, logging, HOME",
                "calc.py",
                "import logging\nimport os\nimport sys\n\nlog = logging.getLogger(__name__)\nlogging.basicConfig(level=logging.INFO)\n\n\ndef add(a, b):\n    return a + b\n\n\ndef home():\n    return os.environ.get(\"HOME\")\n\n\nif __name__ == \"__main__\":\n    print(add(int(sys.argv[1]), int(sys.argv[2])))\n",
            ),
            (
                "a conftest may look at its runner",
                "conftest.py",
                "import os\nimport sys\n\ndef pytest_configure(config):\n    os.environ['PYTEST_X'] = '1'\n    assert 'pytest' in sys.modules\n",
            ),
            (
                "unittest.mock in code",
                "calc.py",
                "import sys\nsys.modules.setdefault('calc_cache', None)\n",
            ),
            (
                "the module's own entry",
                "calc.py",
                "import sys\n\nthis = sys.modules[__name__]\n",
            ),
        ];
    for (name, path, new) in cases {
        let base = if path.ends_with(".rs") { LIB } else { CALC };
        let issues = found(path, Some(base), new);
        assert!(issues.is_empty(), "{name}: {issues:?}");
    }
}

#[test]
fn through_check_with_the_other_rules() {
    let now =
        "pub fn add(a: i32, b: i32) -> i32 {\n    if cfg!(test) { return 4; }\n    a - b\n}\n";
    let issues = check_one("src/lib.rs", Some(LIB), Some(now));
    let ours: Vec<_> = issues.iter().filter(|i| i.rule == RULE_TEST_ONLY).collect();
    assert_eq!(ours.len(), 1, "{issues:?}");
    assert_eq!(ours[0].line, Some(2));
    // A test-only twin, its body moved to the test module: still found.
    let twin = "#[cfg(not(test))]\npub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n#[cfg(test)]\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
    let issues = check_one("src/lib.rs", Some(LIB), Some(twin));
    let lines: Vec<_> = issues
        .iter()
        .filter(|i| i.rule == RULE_TEST_ONLY)
        .map(|i| i.line)
        .collect();
    assert_eq!(lines, [Some(1), Some(5)], "{issues:?}");
}

#[test]
fn a_test_only_table_that_gains_a_row_is_data_and_a_twin_is_not() {
    let count = |base: &str, now: &str| {
        check_one("src/lib.rs", Some(base), Some(now))
            .iter()
            .filter(|i| i.rule == RULE_TEST_ONLY)
            .count()
    };
    let table = "pub fn up(s: &str) -> String {\n    s.to_uppercase()\n}\n\n#[cfg(test)]\nstatic CASES: &[(&str, &str)] = &[\n    (\"a\", \"A\"),\n];\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn ups() {\n        for (a, b) in super::CASES {\n            assert_eq!(super::up(a), *b);\n        }\n    }\n}\n";
    let more = table.replace(
        "    (\"a\", \"A\"),\n",
        "    (\"a\", \"A\"),\n    (\"b\", \"B\"),\n",
    );
    assert_eq!(count(table, &more), 0);
    // A new test-only table is still a new `cfg(test)` item.
    let without = table.replace("#[cfg(test)]\nstatic CASES", "static CASES");
    assert_eq!(count(&without, table), 1);
    // A value shipped code reads through a `cfg(not(test))` twin:
    // changing the tested one is behaviour.
    let twin = "#[cfg(not(test))]\nconst LIMIT: usize = 10;\n#[cfg(test)]\nconst LIMIT: usize = 10;\n\npub fn limit() -> usize {\n    LIMIT\n}\n";
    let changed = twin.replace(
        "#[cfg(test)]\nconst LIMIT: usize = 10;",
        "#[cfg(test)]\nconst LIMIT: usize = 99;",
    );
    assert_eq!(count(twin, &changed), 1);
}
