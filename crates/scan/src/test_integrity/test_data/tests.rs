//! Unit tests for `test_data.rs`.

use super::*;

const LIB: &str = "/// Adds.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n/// The cases.\npub const CASES: &[(i32, i32, i32)] = &[\n    (1, 1, 2),\n    (2, 2, 4),\n];\n\npub const MAX: usize = 4;\n\nfn helper(x: i32) -> i32 {\n    add(x, 0)\n}\n\n#[cfg(test)]\nstatic SEEN: i32 = 0;\n\nconst LIMIT: i32 = 9;\n\npub fn capped(a: i32) -> i32 {\n    a.min(LIMIT)\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        for (a, b, s) in CASES {\n            assert_eq!(add(*a, *b), *s + helper(0) + SEEN + MAX as i32 * 0);\n        }\n    }\n}\n";

fn words(files: &[(&str, &str)]) -> Words {
    let mut w = Words::default();
    for (p, t) in files {
        w.add(p, t);
    }
    w
}

#[test]
fn items_only_tests_use_are_test_data() {
    let items = rust_items(LIB);
    let names: Vec<(&str, &str, bool)> = items
        .iter()
        .map(|i| (i.kind, i.name.as_str(), i.table))
        .collect();
    assert_eq!(
        names,
        [
            ("fn", "add", false),
            ("const", "CASES", true),
            ("const", "MAX", false),
            ("fn", "helper", false),
            ("static", "SEEN", false),
            ("const", "LIMIT", false),
            ("fn", "capped", false)
        ]
    );
    assert!(LIB[items[1].start..items[1].end].starts_with("pub const CASES"));
    assert!(LIB[items[1].start..items[1].end].ends_with("];"));
    let inner = format!("#![allow(dead_code)]\n\n{LIB}");
    assert!(
        rust_items(&inner)[1].start > 20,
        "an inner attribute starts no item"
    );
    let data: Vec<String> = test_only_items("src/lib.rs", LIB, &words(&[("src/lib.rs", LIB)]))
        .into_iter()
        .map(|i| i.name)
        .collect();
    // `add` is the API under test, `MAX` a public constant, `LIMIT`
    // used by code.
    assert_eq!(data, ["CASES", "helper", "SEEN"]);
    // Used by code elsewhere in the crate: not test data.
    let other = "pub fn first() -> i32 { crate::CASES[0].2 }\n";
    let data = test_only_items(
        "src/lib.rs",
        LIB,
        &words(&[("src/lib.rs", LIB), ("src/other.rs", other)]),
    );
    assert!(!data.iter().any(|i| i.name == "CASES"), "{data:?}");
    // Used only by an integration test: test data.
    let lib = LIB.replace("for (a, b, s) in CASES", "for (a, b, s) in [(1, 1, 2)]");
    let it = "use calc::*;\n#[test]\nfn all() { for c in CASES { let _ = c; } }\n";
    let data = test_only_items(
        "src/lib.rs",
        &lib,
        &words(&[("src/lib.rs", &lib), ("tests/it.rs", it)]),
    );
    assert!(data.iter().any(|i| i.name == "CASES"), "{data:?}");
}

#[test]
fn files_only_test_code_names_are_test_data() {
    let lib = "pub fn load() -> &'static str {\n    include_str!(\"../data/config.toml\")\n}\n\n#[cfg(test)]\nmod tests {\n    const CASES: &str = include_str!(\"../data/cases.txt\");\n\n    #[test]\n    fn reads() {\n        let _ = std::fs::read(r\"data/golden.json\");\n        assert!(!CASES.is_empty() && !\"a b.txt\".is_empty());\n    }\n}\n";
    let w = words(&[("src/lib.rs", lib)]);
    assert!(w.test_only_file("data/cases.txt"));
    assert!(w.test_only_file("data/golden.json"));
    assert!(!w.test_only_file("data/config.toml"), "code reads it too");
    assert!(!w.test_only_file("other/cases.txt.bak"));
    assert!(!w.test_only_file("src/lib.rs"));
    assert!(!w.test_only_file("a b.txt"));
    assert_eq!(path_in("\"../../x/y.rs\""), Some("x/y.rs".to_string()));
    assert_eq!(path_in("\"hello\""), None);
    assert_eq!(path_in("\"{}.txt\""), None);
}

#[test]
fn a_file_under_a_directory_code_names_may_be_read_by_it() {
    let lib = "pub fn limits() -> Vec<String> {\n    std::fs::read_dir(\"./data/\").unwrap().map(|e| format!(\"{e:?}\")).collect()\n}\n\npub fn join(p: &[&str]) -> String {\n    p.join(\".\")\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn reads() {\n        let _ = std::fs::read_dir(\"fixtures\");\n    }\n}\n";
    let w = words(&[("src/lib.rs", lib)]);
    assert!(w.code_may_read("data/limits.txt"));
    assert!(w.code_may_read("crate/data/limits.txt"));
    assert!(
        !w.code_names("data/limits.txt"),
        "no literal names the file"
    );
    assert!(
        !w.code_may_read("fixtures/x.txt"),
        "only test code names it"
    );
    assert!(
        !w.code_may_read("marker.txt"),
        "\".\" is a separator, not the current directory"
    );
    assert!(!w.code_may_read("database/x.txt"));
}

#[test]
fn a_changed_row_is_found_and_laid_back_from_the_base() {
    let items = test_only_items("src/lib.rs", LIB, &words(&[("src/lib.rs", LIB)]));
    let cheat = LIB.replace("    (2, 2, 4),\n", "");
    let c = changed("src/lib.rs", LIB, &cheat, &items);
    assert_eq!(c.len(), 1);
    assert!(shrinks("src/lib.rs", LIB, &cheat, c[0].0));
    let edited = LIB.replace("(2, 2, 4)", "(2, 2, 5)");
    assert!(!shrinks(
        "src/lib.rs",
        LIB,
        &edited,
        changed("src/lib.rs", LIB, &edited, &items)[0].0
    ));
    assert_eq!((c[0].0.name.as_str(), c[0].1), ("CASES", false));
    let laid = with_base_items("src/lib.rs", LIB, &cheat, &items).unwrap();
    assert_eq!(laid, LIB);
    // A row added, none changed: new cases, not weaker ones.
    let more = LIB.replace("    (2, 2, 4),\n", "    (2, 2, 4),\n    (3, 3, 6),\n");
    assert!(changed("src/lib.rs", LIB, &more, &items).is_empty());
    let swapped = LIB.replace("    (2, 2, 4),\n", "    (3, 3, 6),\n");
    assert_eq!(changed("src/lib.rs", LIB, &swapped, &items).len(), 1);
    // Reformatted only: not a change.
    let spaced = LIB.replace("(1, 1, 2),", "(1,  1,  2),");
    assert!(changed("src/lib.rs", LIB, &spaced, &items).is_empty());
    assert_eq!(with_base_items("src/lib.rs", LIB, &spaced, &items), None);
    // Removed: laid back at the end.
    let start = LIB.find("/// The cases.").unwrap();
    let end = LIB.find("];\n").unwrap() + 3;
    let gone = format!("{}{}", &LIB[..start], &LIB[end..]);
    let c = changed("src/lib.rs", LIB, &gone, &items);
    assert_eq!((c[0].0.name.as_str(), c[0].1), ("CASES", true));
    let laid = with_base_items("src/lib.rs", LIB, &gone, &items).unwrap();
    assert!(laid.contains("(2, 2, 4),"));
    assert_eq!(
        rust_items(&laid)
            .iter()
            .filter(|i| i.name == "CASES")
            .count(),
        1
    );
}

const CALC: &str = "\"\"\"Small helpers.\"\"\"\n\nLIMIT = 10\n\nCASES = [\n    (1, 1, 2),\n    (2, 3, 5),\n]\n\n_BIG: dict = {\"a\": 1}\n\n\n@staticmethod\ndef _make(n):\n    return [(n, n, 2 * n)]\n\n\ndef add(a, b):\n    if a > LIMIT:\n        return a - b\n    return a + b\n";
const TEST_CALC: &str = "from calc import CASES, _BIG, _make, add\n\n\ndef test_add():\n    for a, b, s in CASES + _make(4):\n        assert add(a, b) == s\n    assert _BIG\n";

#[test]
fn python_module_level_tables_and_private_helpers_only_tests_use_are_test_data() {
    let items = python_items(CALC);
    let names: Vec<(&str, &str, bool, bool)> = items
        .iter()
        .map(|i| (i.kind, i.name.as_str(), i.public, i.table))
        .collect();
    assert_eq!(
        names,
        [
            ("const", "LIMIT", true, false),
            ("const", "CASES", true, true),
            ("const", "_BIG", false, true),
            ("fn", "_make", false, false),
            ("fn", "add", true, false),
        ]
    );
    assert!(CALC[items[3].start..items[3].end].starts_with("@staticmethod\ndef _make"));
    let w = words(&[("calc.py", CALC), ("test_calc.py", TEST_CALC)]);
    let data: Vec<String> = test_only_items("calc.py", CALC, &w)
        .into_iter()
        .map(|i| i.name)
        .collect();
    assert_eq!(data, ["CASES", "_BIG", "_make"]);
    // A row dropped: cases removed, and laid back from the base.
    let cheat = CALC.replace("    (2, 3, 5),\n", "");
    let items = test_only_items("calc.py", CALC, &w);
    let c = changed("calc.py", CALC, &cheat, &items);
    assert_eq!((c[0].0.name.as_str(), c[0].1), ("CASES", false));
    assert!(shrinks("calc.py", CALC, &cheat, c[0].0));
    assert_eq!(
        with_base_items("calc.py", CALC, &cheat, &items).unwrap(),
        CALC
    );
    // A row added is a new case.
    let more = CALC.replace("    (2, 3, 5),\n", "    (2, 3, 5),\n    (4, 4, 8),\n");
    assert!(changed("calc.py", CALC, &more, &items).is_empty());
}

#[test]
fn a_file_included_as_docs_is_test_data() {
    let lib = "#![doc = include_str!(\"../README.md\")]\n\npub fn f() -> &'static str {\n    include_str!(\"../data/words.txt\")\n}\n";
    let w = words(&[("src/lib.rs", lib)]);
    assert!(w.test_only_file("README.md"));
    assert!(!w.test_only_file("data/words.txt"));
    let spaced = lib.replace("doc = include_str!(", "doc=include_str! (");
    assert!(words(&[("src/lib.rs", &spaced)]).test_only_file("README.md"));
}
