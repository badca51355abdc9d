//! Unit tests of `yaml`.

use super::*;
use std::collections::BTreeMap;

#[derive(Debug, serde::Deserialize)]
#[allow(dead_code)]
struct Doc {
    #[serde(default)]
    agents: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    list: Vec<String>,
}

#[test]
fn a_plain_file_parses() {
    let d: Doc = from_str("f", "agents:\n  a: [x, y]\nlist: [1, '2']\n").unwrap();
    assert_eq!(d.agents["a"], ["x", "y"]);
    assert_eq!(d.list, ["1", "2"]);
}

#[test]
fn a_repeated_big_anchor_is_refused_with_its_location() {
    let big = "x".repeat(600 * 1024);
    let refs = vec!["*a"; 40].join(", ");
    let text = format!("agents:\n  a: [&a {big}]\nlist: [{refs}]\n");
    let e = from_str::<Doc>("f.yaml", &text).unwrap_err();
    assert!(e.message.contains("aliases"), "{e}");
    assert!(e.message.contains("list["), "names the path: {e}");
    assert_eq!(e.line, Some(2), "points at the anchored value: {e}");
}

#[test]
fn a_billion_laughs_is_refused() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let p = i - 1;
        text.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    let e = from_str::<BTreeMap<String, serde_yaml::Value>>("f", &text).unwrap_err();
    assert!(
        e.message.contains("aliases") || e.message.contains("repetition"),
        "{e}"
    );
}

#[test]
fn an_oversized_file_is_refused_unread() {
    let text = format!("list:\n{}", "  - xxxxxxx\n".repeat(100_000));
    let e = from_str::<Doc>("f", &text).unwrap_err();
    assert!(e.message.contains("at most 1048576 bytes"), "{e}");
    assert!(e.line.is_some());
}

#[test]
fn duplicate_keys_name_both_lines() {
    let e = from_str::<Doc>("f", "agents:\n  a: [x]\n  b: [y]\n  a: [z]\n").unwrap_err();
    assert_eq!(e.line, Some(4), "{e}");
    assert!(
        e.message
            .contains("duplicate key `a` in `agents`: at line 2 and at line 4"),
        "{e}"
    );
    let e = from_str::<Doc>("f", "list: []\nagents: {}\nlist: []\n").unwrap_err();
    assert!(e.message.contains("at line 1 and at line 3"), "{e}");
    // Flow style: the columns differ, the line is the same.
    let e = from_str::<Doc>("f", "agents: {a: [], a: []}\n").unwrap_err();
    assert!(e.message.contains("at line 1 and at line 1"), "{e}");
    assert_eq!(e.column, Some(17), "{e}");
    // The same key in two mappings is no duplicate.
    from_str::<Doc>("f", "agents:\n  a: [x]\n  b: [x]\n").unwrap();
}

#[test]
fn nodes_are_located_by_path() {
    let text = "list:\n  - one\n  - two\nagents:\n  a:\n    - x\n";
    assert_eq!(
        locate(text, &[Seg::key("list"), Seg::Index(1)]),
        Some((3, 5))
    );
    assert_eq!(
        locate(text, &[Seg::key("agents"), Seg::key("a"), Seg::Index(0)]),
        Some((6, 7))
    );
    assert_eq!(locate_key(text, &[Seg::key("agents")], "a"), Some((5, 3)));
    assert_eq!(locate(text, &[Seg::key("nope")]), None);
}

#[test]
fn deep_nesting_is_refused_quickly() {
    // libyaml takes minutes over this one (quadratic in the depth).
    let text = format!("list: {}{}\n", "[".repeat(300_000), "]".repeat(300_000));
    let start = std::time::Instant::now();
    let e = from_str::<Doc>("f", &text).unwrap_err();
    assert!(e.message.contains("too many `[`"), "{e}");
    assert_eq!(e.line, Some(1));
    assert!(start.elapsed().as_secs() < 5, "{:?}", start.elapsed());
    let e =
        from_str::<serde_yaml::Value>("f", &format!("list: {}\n", "[".repeat(3000))).unwrap_err();
    assert!(e.message.contains("recursion limit"), "{e}");
    let ok = format!("{}x{}", "[".repeat(120), "]".repeat(120));
    from_str::<serde_yaml::Value>("f", &ok).unwrap();
}
