use super::*;

#[test]
fn normalisation() {
    let ok = |p: &str| match normalize(p) {
        Norm::Ok(n) => Some(n.into_owned()),
        Norm::Escape(_) => None,
    };
    assert_eq!(ok("./a//b/./c").as_deref(), Some("a/b/c"));
    assert_eq!(ok("a/../b").as_deref(), Some("b"));
    assert_eq!(ok("../a"), None);
    assert_eq!(ok("a/../../b"), None);
    assert_eq!(ok("/etc/passwd"), None);
    assert_eq!(ok("."), None);
}

#[test]
fn symlink_chains_are_resolved_to_their_end() {
    let links: Links = [
        ("d/e/up", ".."),
        ("a", "b"),
        ("b", "c"),
        ("c", "d"),
        ("loop1", "loop2"),
        ("loop2", "loop1"),
        ("abs", "/etc"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    let r = |link: &str, t: &str| resolve_chain(link, t, &links);
    assert_eq!(r("x", "src/lib.rs"), Ok("src/lib.rs".into()));
    assert_eq!(r("x", "a"), Ok("d".into()), "a -> b -> c -> d");
    assert_eq!(r("d/e/up", ".."), Ok("d".into()));
    // Lexically `d`; through the link `up` (= d) it leaves the tree.
    assert!(r("x", "d/e/up/../..").is_err());
    assert!(r("x", "d/e/up/..").is_ok_and(|p| p.is_empty()));
    assert!(r("x", "loop1").unwrap_err().contains("never resolves"));
    assert!(r("x", "abs/passwd").unwrap_err().contains("outside"));
    assert!(r("x", "../y").is_err());
}

#[test]
fn module_boundaries() {
    assert!(module_matches("os/exec", "os/exec", false));
    assert!(module_matches(
        "std::process::Command",
        "std::process",
        false
    ));
    assert!(module_matches("subprocess.run", "subprocess", false));
    assert!(!module_matches("os/executil", "os/exec", false));
    assert!(!module_matches("unsafety", "unsafe", false));
    // What an import reaches: below it, not beside it.
    assert!(
        !module_matches("os", "os/exec", false),
        "Go packages are not nested"
    );
    assert!(module_matches("std", "std::process", true));
    assert!(module_matches("std::process", "std::process::exit", true));
    assert!(
        module_matches("os.*", "os.system", false),
        "a glob reaches below"
    );
    assert!(module_matches("std::*", "std", false));
    assert!(!module_matches("std::processing", "std::process", true));
    assert!(!module_matches("std::io", "std::process", true));
    assert!(!module_matches("st", "std::process", true));
}
