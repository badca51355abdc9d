//! Unit tests for `reads_source.rs`.

use super::super::testing::check_one;
use super::*;

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

const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 { a - b }\n";
const LIB_TESTED: &str = "pub fn add(a: i32, b: i32) -> i32 { a - b }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() { assert_eq!(add(2, 2), 4); }\n}\n";

/// `(name, path, base, new)`: each must give exactly one finding.
const FLAGGED: &[(&str, &str, &str, &str)] = &[
        (
            "include_str of the code",
            "tests/it.rs",
            "",
            "#[test]\nfn t() {\n    let s = include_str!(\"../src/lib.rs\");\n    assert!(s.contains(\"a + b\"));\n}\n",
        ),
        (
            "include_str split with comments",
            "tests/it.rs",
            "",
            "#[test]\nfn t() {\n    let s = include_str! /* the code */ (\n        // here\n        \"../src/lib.rs\"\n    );\n    assert!(s.contains(\"+\"));\n}\n",
        ),
        (
            "include_str aliased",
            "tests/it.rs",
            "",
            "use std::include_str as inc;\n#[test]\nfn t() { assert!(inc!(\"../src/lib.rs\").contains(\"+\")); }\n",
        ),
        (
            "include_bytes built with concat",
            "tests/it.rs",
            "",
            "#[test]\nfn t() { let b = include_bytes!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/data.json\")); assert!(!b.is_empty()); }\n",
        ),
        (
            "file!() in a test",
            "tests/it.rs",
            "",
            "#[test]\nfn t() { let me = file!(); assert!(me.ends_with(\"it.rs\")); }\n",
        ),
        (
            "read_to_string of src with the manifest dir",
            "tests/it.rs",
            "",
            "#[test]\nfn t() {\n    let s = std::fs::read_to_string(\n        concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/src/lib.rs\"),\n    ).unwrap();\n    assert!(s.contains(\"+\"));\n}\n",
        ),
        (
            "path through a let",
            "tests/it.rs",
            "",
            "#[test]\nfn t() {\n    let p = std::path::Path::new(env!(\"CARGO_MANIFEST_DIR\")).join(\"src\");\n    let s = std::fs::read_to_string(p).unwrap();\n    assert!(s.contains(\"+\"));\n}\n",
        ),
        (
            "aliased read",
            "tests/it.rs",
            "",
            "use std::fs::read_to_string as slurp;\n#[test]\nfn t() { assert!(slurp(\"src/lib.rs\").unwrap().contains(\"+\")); }\n",
        ),
        (
            "File::open in a test module of src",
            "src/lib.rs",
            LIB_TESTED,
            "pub fn add(a: i32, b: i32) -> i32 { a - b }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() { assert_eq!(add(2, 2), 4); }\n    #[test]\n    fn spelled() {\n        let mut s = String::new();\n        std::io::Read::read_to_string(&mut std::fs::File::open(file!()).unwrap(), &mut s).unwrap();\n    }\n}\n",
        ),
        (
            "include_str in a new #[test] fn outside a module",
            "src/lib.rs",
            LIB,
            "pub fn add(a: i32, b: i32) -> i32 { a - b }\n#[test]\nfn t() { assert!(include_str!(\"lib.rs\").contains(\"a + b\")); }\n",
        ),
        (
            "getsource",
            "tests/test_calc.py",
            "import calc\n",
            "import calc\nimport inspect\n\ndef test_add():\n    assert 'a + b' in inspect.getsource(calc.add)\n",
        ),
        (
            "getsource aliased",
            "tests/test_calc.py",
            "",
            "from inspect import getsource as g\nimport calc\n\ndef test_add():\n    assert '+' in g(calc.add)\n",
        ),
        (
            "getsource assigned",
            "tests/test_calc.py",
            "",
            "import inspect as ins\nsrc_of = ins.getsource\n\ndef test_add():\n    assert '+' in src_of(calc.add)\n",
        ),
        (
            "getsource split with comments",
            "tests/test_calc.py",
            "",
            "import inspect\n\ndef test_add():\n    text = (inspect  # the module\n        .getsource)(\n        calc.add,  # the function\n    )\n    assert '+' in text\n",
        ),
        (
            "linecache",
            "tests/test_calc.py",
            "",
            "import linecache\n\ndef test_add():\n    assert '+' in linecache.getline(calc.__file__, 2)\n",
        ),
        (
            "code object",
            "tests/test_calc.py",
            "",
            "def test_add():\n    assert 2 in calc.add.__code__.co_consts\n",
        ),
        (
            "dis",
            "tests/test_calc.py",
            "",
            "import dis\n\ndef test_add():\n    dis.dis(calc.add)\n",
        ),
        (
            "open a module's file",
            "tests/test_calc.py",
            "",
            "def test_add():\n    with open(calc.__file__) as f:\n        assert '+' in f.read()\n",
        ),
        (
            "read_text of a .py path",
            "tests/test_calc.py",
            "",
            "from pathlib import Path\n\ndef test_add():\n    text = (Path(__file__).parent.parent\n            / 'calc.py').read_text()\n    assert '+' in text\n",
        ),
        (
            "a .py path through a variable",
            "tests/test_calc.py",
            "",
            "from pathlib import Path\nSRC = Path(__file__).parent.parent / 'calc.py'\n\ndef test_add():\n    assert '+' in SRC.read_text()\n",
        ),
        (
            "importlib.resources",
            "tests/test_calc.py",
            "",
            "import importlib.resources\n\ndef test_add():\n    assert '+' in importlib.resources.files('calc').joinpath('core.py').read_text()\n",
        ),
        (
            "ast.parse of a read file",
            "tests/test_calc.py",
            "",
            "import ast\n\ndef test_add(path):\n    tree = ast.parse(open(path).read())\n",
        ),
        (
            "loader get_source",
            "tests/test_calc.py",
            "",
            "def test_add():\n    assert '+' in calc.__loader__.get_source('calc')\n",
        ),
    ];

#[test]
fn each_way_of_reading_source_is_one_finding() {
    for (name, path, base, new) in FLAGGED {
        let base = (!base.is_empty()).then_some(*base);
        let issues = found(path, base, new);
        assert_eq!(issues.len(), 1, "{name}: {issues:?}");
        let i = &issues[0];
        assert_eq!(i.rule, RULE_READS_SOURCE, "{name}");
        assert_eq!(i.severity, Severity::Error, "{name}");
        assert!(
            i.message.contains("reads the source text") && i.message.contains(&format!("{path}:")),
            "{name}: {}",
            i.message
        );
        // Present at the base already: not the change's.
        assert!(found(path, Some(new), new).is_empty(), "{name}: unchanged");
    }
}

#[test]
fn honest_tests_are_clean() {
    let cases: &[(&str, &str, Option<&str>, &str)] = &[
            (
                "a fix with a test module",
                "src/lib.rs",
                Some(LIB),
                "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() { assert_eq!(add(2, 2), 4); }\n}\n",
            ),
            (
                "a data fixture included",
                "tests/it.rs",
                None,
                "#[test]\nfn t() { let cases = include_str!(\"data/cases.json\"); assert!(!cases.is_empty()); }\n",
            ),
            (
                "a data fixture read at run time",
                "tests/it.rs",
                None,
                "#[test]\nfn t() {\n    let p = std::path::Path::new(env!(\"CARGO_MANIFEST_DIR\")).join(\"tests/data/in.txt\");\n    let s = std::fs::read_to_string(p).unwrap();\n    assert_eq!(demo::add(1, 2), s.trim().parse().unwrap());\n}\n",
            ),
            (
                "a source file read by the code, not its tests",
                "src/lib.rs",
                Some(LIB),
                "pub fn add(a: i32, b: i32) -> i32 { a + b }\npub const SELF: &str = include_str!(\"lib.rs\");\n",
            ),
            (
                "only in a comment or a string",
                "tests/it.rs",
                None,
                "// include_str!(\"../src/lib.rs\")\n#[test]\nfn t() { let s = \"include_str!(\\\"../src/lib.rs\\\")\"; assert!(!s.is_empty()); }\n",
            ),
            (
                "a pytest test reading a JSON fixture",
                "tests/test_calc.py",
                None,
                "import json, os\nfrom pathlib import Path\nimport calc\nHERE = Path(__file__).parent\n\ndef test_add():\n    cases = json.loads((HERE / 'fixtures' / 'cases.json').read_text())\n    with open(os.path.join(os.path.dirname(__file__), 'data.json')) as f:\n        more = json.load(f)\n    for a, b, want in cases + more:\n        assert calc.add(a, b) == want\n",
            ),
            (
                "a test that calls the function",
                "tests/test_calc.py",
                None,
                "import inspect\nimport calc\n\ndef test_add():\n    assert calc.add(2, 2) == 4\n    assert inspect.isfunction(calc.add)\n",
            ),
            (
                "code under test may read itself",
                "calc.py",
                None,
                "import inspect\n\ndef describe(f):\n    return inspect.getsource(f)\n",
            ),
        ];
    for (name, path, base, new) in cases {
        let issues = found(path, *base, new);
        assert!(issues.is_empty(), "{name}: {issues:?}");
    }
}

#[test]
fn only_what_the_change_adds_counts() {
    let one = "import inspect\n\ndef test_a():\n    assert '+' in inspect.getsource(calc.add)\n";
    let two = format!("{one}\ndef test_b():\n    assert '+' in inspect.getsource(calc.add)\n");
    let issues = found("tests/test_calc.py", Some(one), &two);
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!(issues[0].line, Some(7));
    // Moved to another file of the change: not new.
    let mut out = Vec::new();
    check(
        &[
            FileVersions {
                path: "tests/test_calc.py",
                old_path: None,
                base: Some(one),
                new: Some("import calc\n"),
            },
            FileVersions {
                path: "tests/test_more.py",
                old_path: None,
                base: None,
                new: Some(one),
            },
        ],
        &mut out,
    );
    assert!(out.is_empty());
}

#[test]
fn through_check_with_the_other_rules() {
    let now = format!(
            "{LIB}#[cfg(test)]\nmod tests {{\n    #[test]\n    fn spelled() {{ assert!(include_str!(\"lib.rs\").contains(\"a + b\")); }}\n}}\n"
        );
    let issues = check_one("src/lib.rs", Some(LIB), Some(&now));
    let ours: Vec<_> = issues
        .iter()
        .filter(|i| i.rule == RULE_READS_SOURCE)
        .collect();
    assert_eq!(ours.len(), 1, "{issues:?}");
    assert_eq!(ours[0].line, Some(5));
}
