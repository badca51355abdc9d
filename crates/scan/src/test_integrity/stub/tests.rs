//! Unit tests for `stub.rs`.

use super::*;

#[test]
fn a_rust_functions_new_body_returns_a_zero_value_or_panics_and_tests_stay() {
    let base = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
    let now = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn triple(a: i32) -> i32 {\n    3 * a\n}\n\npub fn name<'a>(s: &'a str) -> &'a str { s }\n\npub fn parse(s: &str) -> Result<u8, String> { s.parse().map_err(|_| s.to_string()) }\n\npub fn log(x: u8) { println!(\"{x}\"); }\n\npub fn boxed() -> Box<dyn Fn()> { Box::new(|| ()) }\n\npub const fn k() -> u8 { 3 }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    fn helper() -> i32 { 1 }\n    #[test]\n    fn triples() { assert_eq!(triple(2), 6); }\n}\n";
    let out = without_new_code("src/lib.rs", Some(base), now).unwrap();
    assert!(
        out.starts_with("pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"),
        "{out}"
    );
    assert!(out.contains("pub fn triple(a: i32) -> i32 { if true { return ::core::default::Default::default(); } \n    3 * a\n}"), "{out}");
    assert!(
        out.contains("-> &'a str { if true { return ::core::default::Default::default(); }  s }"),
        "{out}"
    );
    assert!(
            out.contains("-> Result<u8, String> { if true { return ::core::result::Result::Ok(::core::default::Default::default()); }"),
            "{out}"
        );
    assert!(
        out.contains("-> Box<dyn Fn()> { if true { ::core::panic!("),
        "{out}"
    );
    assert!(
        out.contains("pub fn log(x: u8) { if true { return; }  println!"),
        "{out}"
    );
    assert!(out.contains("pub const fn k() -> u8 { 3 }"), "{out}");
    assert!(out.contains("fn helper() -> i32 { 1 }"), "{out}");
    assert!(
        out.contains("fn triples() { assert_eq!(triple(2), 6); }"),
        "{out}"
    );
}

#[test]
fn unchanged_functions_trait_declarations_and_macros_are_left_alone() {
    let base = "fn a() -> u8 { 1 }\n";
    let now = "fn a()   ->  u8 {\n    1\n}\ntrait T { fn t(&self) -> u8; }\nmacro_rules! m { () => { fn made() {} } }\nfn gen<F: Fn(u8) -> u8>(f: F) -> u8 where F: Copy {\n    #![allow(unused)]\n    f(1)\n}\n";
    let out = without_new_code("src/lib.rs", Some(base), now).unwrap();
    assert!(out.starts_with("fn a()   ->  u8 {\n    1\n}\n"), "{out}");
    assert!(out.contains("fn t(&self) -> u8; }"), "{out}");
    assert!(out.contains("fn made() {}"), "{out}");
    assert!(
        out.contains(
            "#![allow(unused)] if true { return ::core::default::Default::default(); } \n    f(1)"
        ),
        "{out}"
    );
    assert_eq!(without_new_code("src/lib.rs", Some(now), now), None);
    assert_eq!(without_new_code("tests/it.rs", None, now), None);
    assert_eq!(without_new_code("README.md", None, "fn x() {}"), None);
}

#[test]
fn a_python_def_returns_none_first_and_test_functions_stay() {
    let base = "def add(a, b):\n    return a + b\n";
    let now = "def add(a, b):\n    return a + b\n\n\ndef triple(a):\n    \"\"\"Three times.\"\"\"\n\n    return 3 * a\n\n\nclass Calc:\n    def twice(self, a: int) -> int:\n        def inner():\n            return 1\n        return 2 * a\n\n\ndef one(): return 1\n\n\ndef test_here():\n    assert triple(1) == 3\n";
    let out = without_new_code("calc.py", Some(base), now).unwrap();
    assert!(
        out.starts_with("def add(a, b):\n    return a + b\n"),
        "{out}"
    );
    assert!(
        out.contains("def triple(a):\n    return None\n    \"\"\"Three times.\"\"\""),
        "{out}"
    );
    assert!(
        out.contains("-> int:\n        return None\n        def inner():\n            return 1\n"),
        "{out}"
    );
    assert!(out.contains("def one(): return None; return 1"), "{out}");
    assert!(
        out.contains("def test_here():\n    assert triple(1) == 3"),
        "{out}"
    );
    assert_eq!(without_new_code("test_calc.py", None, now), None);
}

#[test]
fn a_go_func_returns_its_zero_values() {
    let base = "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n";
    let now = "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\nfunc Triple(a int) int {\n\treturn 3 * a\n}\n\nfunc Split(s string) (string, error) {\n\treturn s, nil\n}\n\nfunc Named(s string) (n int, err error) {\n\treturn 1, nil\n}\n\nfunc (c *Calc) Reset() {\n\tc.n = 0\n}\n\nfunc Any() interface{} {\n\treturn 1\n}\n";
    let out = without_new_code("calc.go", Some(base), now).unwrap();
    assert!(
        out.contains("func Add(a, b int) int {\n\treturn a + b"),
        "{out}"
    );
    assert!(
        out.contains("func Triple(a int) int { if true { return *new(int) }; \n"),
        "{out}"
    );
    assert!(
        out.contains("(string, error) { if true { return *new(string), *new(error) }; "),
        "{out}"
    );
    assert!(
        out.contains("(n int, err error) { if true { return }; "),
        "{out}"
    );
    assert!(out.contains("Reset() { if true { return }; "), "{out}");
    assert!(
        out.contains("interface{} { if true { return *new(interface{}) }; "),
        "{out}"
    );
    assert_eq!(without_new_code("calc_test.go", None, now), None);
}

#[test]
fn defaults_are_known_only_for_std_types_that_have_them() {
    for t in [
        "i32",
        "String",
        "Vec<Foo>",
        "Option<&'a T>",
        "&str",
        "&'a str",
        "&[u8]",
        "std::collections::HashMap<K, V>",
        "bool",
    ] {
        assert!(has_default(t, &Types::default(), 0), "{t}");
    }
    for t in [
        "Self",
        "T",
        "Result<u8, E>",
        "impl Iterator<Item = u8>",
        "&T",
        "Box<dyn Fn()>",
        "(u8, Box<dyn Fn()>)",
    ] {
        assert!(!has_default(t, &Types::default(), 0), "{t}");
    }
    // The file's own types and aliases, tuples, and `Result`'s `Ok`.
    let types = rust_types(
            "pub type Num = i32;\ntype Pair = (Num, Config);\n#[derive(Debug, Clone, Default)]\npub struct Config { a: u8 }\nstruct Plain;\nimpl Default for Plain { fn default() -> Self { Plain } }\n#[derive(Debug)]\nstruct NoDefault;\n",
        );
    for t in ["Num", "Pair", "Config", "Plain", "(u8, u8)", "()"] {
        assert!(has_default(t, &types, 0), "{t}");
    }
    assert!(!has_default("NoDefault", &types, 0));
    assert_eq!(
        zero_value("Result<Num, String>", &types),
        Some("::core::result::Result::Ok(::core::default::Default::default())")
    );
    assert_eq!(zero_value("Result<NoDefault, String>", &types), None);
    assert_eq!(zero_value("Self", &types), None);
}
