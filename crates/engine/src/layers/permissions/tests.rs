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

#[test]
fn a_change_over_its_size_limits_fails_where_it_crosses_them() {
    let policy = |files: Option<u64>, lines: Option<u64>| {
        Permissions::compile(&PermissionsConfig {
            max_files_changed: files,
            max_lines_changed: lines,
            ..PermissionsConfig::default()
        })
        .expect("compile")
    };
    let set = |files: Vec<FileChange>| ChangeSet {
        base: "0".repeat(40),
        tree: String::new(),
        files,
    };
    let file =
        |path: &str, lines: &[&str]| FileChange::new(path, Operation::Modify).with_lines(lines);
    let found = |p: &Permissions, cs: &ChangeSet| -> Vec<(String, Severity, Option<String>)> {
        p.check(cs)
            .into_iter()
            .map(|i| (i.rule, i.severity, i.path))
            .collect()
    };
    let at = |rule: &str, path: &str| {
        vec![(
            format!("permissions/{rule}"),
            Severity::Error,
            Some(path.to_string()),
        )]
    };
    let three = set(vec![file("a", &[]), file("b", &[]), file("c", &[])]);
    assert_eq!(found(&policy(Some(2), None), &three), at("max-files", "c"));
    assert!(
        found(&policy(Some(3), None), &three).is_empty(),
        "at the limit"
    );
    // a: 2 added + 1 removed (3, at the limit), b: 4, c: 6.
    let mut a = file("a", &["1", "2"]);
    a.removed = 1;
    let lines = set(vec![a, file("b", &["3"]), file("c", &["4", "5"])]);
    assert_eq!(found(&policy(None, Some(3)), &lines), at("max-lines", "b"));
    let msg = &policy(None, Some(3)).check(&lines)[0].message;
    assert!(msg.starts_with("6 lines changed"), "{msg}");
    assert!(
        found(&policy(None, Some(6)), &lines).is_empty(),
        "at the limit"
    );
}

/// The links a chain may pass through are the change's symlinks that are
/// still there: not a deleted one, not a file (the mutation check's
/// survivors in `links_of`).
#[test]
fn only_the_changes_remaining_symlinks_are_links() {
    let file = |path: &str, op: &str, kind: &str, target: Option<&str>| -> FileChange {
        serde_json::from_value(serde_json::json!({
            "path": path, "op": op, "new_kind": kind, "symlink_target": target,
            "binary": false, "untracked": false, "added": 0, "removed": 0, "size": 0,
        }))
        .unwrap()
    };
    let changes = ChangeSet {
        files: vec![
            file("./kept", "create", "symlink", Some("src")),
            file("gone", "delete", "symlink", Some("/etc")),
            file("plain", "modify", "file", Some("ignored")),
        ],
        ..ChangeSet::default()
    };
    let links = links_of(&changes);
    assert_eq!(
        links.into_iter().collect::<Vec<_>>(),
        [("kept".to_string(), "src".to_string())]
    );
}

/// rascal's own folders are protected, and git's directory known, whatever
/// the case of their first component; a path that only starts alike is
/// neither (the mutation check's survivors in `is_protected`,
/// `is_git_dir`, `first_segment`).
#[test]
fn protection_reads_the_first_component_in_any_case() {
    for path in [
        ".rascal/config.yaml",
        ".RASCAL/guardrails.yaml",
        ".rascal-artifacts/x",
        ".Rascal-Artifacts/y",
    ] {
        assert!(is_protected(path), "{path}");
    }
    for path in [
        "src/.rascal/x",
        ".rascally/x",
        ".github/workflows/ci.yml",
        ".git/config",
    ] {
        assert!(!is_protected(path), "{path}");
    }
    assert!(is_git_dir(".git/hooks/pre-commit"));
    assert!(is_git_dir(".GIT/config"));
    assert!(!is_git_dir(".github/workflows/ci.yml"));
    assert!(!is_git_dir("docs/.git"));
    assert_eq!(first_segment("a/b/c"), "a");
    assert_eq!(first_segment("file"), "file");
}

/// Path names that hide what they are, a chain that reaches outside
/// through a link to an absolute or home path, `.` inside a target, and
/// a glob's literal first component (the mutation check's survivors in
/// `suspicious`, `is_invisible`, `resolve_chain`, `literal_first`).
#[test]
fn hidden_names_chains_and_glob_roots() {
    assert_eq!(suspicious("src/lib.rs"), None);
    for (path, why) in [
        ("a\0b", "NUL"),
        ("a\\b", "backslash"),
        ("a\u{7}b", "control"),
        ("a\u{200B}b", "invisible"),
        ("a\u{FEFF}b", "invisible"),
    ] {
        assert!(
            suspicious(path).is_some_and(|s| s.contains(why)),
            "{path:?}"
        );
    }
    let links: Links = [("home", "~/x"), ("win", "\\\\server\\share"), ("root", "/")]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let r = |t: &str| resolve_chain("x", t, &links);
    for through in ["home/y", "win/y", "root/etc"] {
        assert!(
            r(through).is_err_and(|e| e.contains("outside")),
            "{through}"
        );
    }
    assert_eq!(r("./src/./lib.rs"), Ok("src/lib.rs".into()));
    assert_eq!(literal_first("secrets/**"), Some("secrets"));
    assert_eq!(literal_first("/.github/"), Some(".github"));
    assert_eq!(literal_first("./docs/*.md"), Some("docs"));
    for glob in ["**/x", "*.md", "{a,b}/c", ".", "..", ""] {
        assert_eq!(literal_first(glob), None, "{glob}");
    }
}

/// A chain of links resolves up to the kernel's limit and not past it;
/// a climb out of the tree says whether a chain took it there (the
/// mutation check's survivors in `resolve_chain`).
#[test]
fn chains_end_at_the_link_limit() {
    let chain = |n: usize| -> Links {
        (0..n)
            .map(|i| {
                let next = if i + 1 == n {
                    "end".to_string()
                } else {
                    format!("l{}", i + 1)
                };
                (format!("l{i}"), next)
            })
            .collect()
    };
    assert_eq!(resolve_chain("x", "l0", &chain(39)), Ok("end".into()));
    assert!(resolve_chain("x", "l0", &chain(40))
        .unwrap_err()
        .contains("never resolves"));
    let links: Links = [("d/e/up".to_string(), "..".to_string())].into();
    let through = resolve_chain("x", "d/e/up/../..", &links).unwrap_err();
    assert!(through.contains("a chain of 2 links"), "{through}");
    let direct = resolve_chain("x", "../y", &links).unwrap_err();
    assert_eq!(direct, "outside the repository");
}
