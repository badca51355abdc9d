use super::*;

#[test]
fn runner_names_are_matched_to_a_files_test() {
    let cargo = Naming::Known(Runner::Cargo);
    for (name, path, inner, is) in [
        (
            "calc:src/lib.rs tests::adds",
            "src/lib.rs",
            "tests::adds",
            true,
        ),
        (
            "calc:src/lib.rs tests::adds",
            "src/lib.rs",
            "tests::add",
            false,
        ),
        ("it:tests/it.rs adds", "tests/it.rs", "adds", true),
        ("it:tests/it.rs adds", "tests/other.rs", "adds", false),
        ("it:tests/it.rs adds", "src/lib.rs", "adds", false),
        (
            "a:src/lib.rs m::tests::x",
            "crates/a/src/m.rs",
            "m::tests::x",
            true,
        ),
        ("a:tests/it.rs x", "crates/a/tests/it.rs", "x", true),
    ] {
        assert_eq!(names_test(cargo, name, path, inner), is, "{name} {path}");
    }
    let jest = Naming::Known(Runner::Jest);
    for (name, path, inner, is) in [
        ("sum.test.js > adds", "sum.test.js", "adds", true),
        (
            "sum.test.js > sum > adds",
            "web/sum.test.js",
            "sum > adds",
            true,
        ),
        ("sum.test.js > sum > adds", "web/sum.test.js", "adds", false),
        ("sum.test.js > adds", "other.test.js", "adds", false),
        ("a/sum.test.js > adds", "sum.test.js", "adds", false),
    ] {
        assert_eq!(names_test(jest, name, path, inner), is, "{name} {path}");
    }
}

#[test]
fn python_names_are_matched_to_a_files_test() {
    let py = Naming::Known(Runner::Pytest);
    assert!(names_test(
        py,
        "tests/test_c.py::TestA::test_b",
        "tests/test_c.py",
        "TestA::test_b"
    ));
    assert!(names_test(
        py,
        "test_c.py::test_b[1-2]",
        "app/test_c.py",
        "test_b"
    ));
    assert!(!names_test(py, "test_c.py::test_bb", "test_c.py", "test_b"));
    // A parameter's id may hold brackets of its own.
    assert!(names_test(
        py,
        "test_c.py::test_b[a[0]]",
        "test_c.py",
        "test_b"
    ));
    assert!(!names_test(
        py,
        "test_c.py::test_b[a]x",
        "test_c.py",
        "test_b"
    ));
    let ut = Naming::Known(Runner::Unittest);
    assert!(names_test(
        ut,
        "tests.test_c.TestA.test_b",
        "tests/test_c.py",
        "TestA::test_b"
    ));
    assert!(names_test(
        ut,
        "test_c.TestA.test_b",
        "tests/test_c.py",
        "TestA::test_b"
    ));
    assert!(!names_test(
        ut,
        "test_d.TestA.test_b",
        "tests/test_c.py",
        "TestA::test_b"
    ));
}

#[test]
fn junit_names_are_matched_to_a_files_test() {
    let j = Naming::Junit;
    assert!(names_test(
        j,
        "tests.test_c.TestA::test_b",
        "tests/test_c.py",
        "TestA::test_b"
    ));
    assert!(!names_test(
        j,
        "tests.test_d.TestA::test_b",
        "tests/test_c.py",
        "TestA::test_b"
    ));
    assert!(names_test(
        j,
        "calc::tests::adds",
        "src/lib.rs",
        "tests::adds"
    ));
    assert!(!names_test(
        j,
        "calc::tests::adds_more",
        "src/lib.rs",
        "tests::adds"
    ));
    // Only a Java name carries its parameter types.
    assert!(!names_test(
        j,
        "tests.test_c.TestA::test_b(x)",
        "tests/test_c.py",
        "TestA::test_b"
    ));
}

#[test]
fn junit_java_names_are_matched_to_a_files_test() {
    let j = Naming::Junit;
    // Java under JUnit 5: parameter types, parameters, nested classes.
    let java = "src/test/java/calc/CalcTest.java";
    for (name, inner, want) in [
        ("calc.CalcTest::adds()", "CalcTest.adds", true),
        ("calc.CalcTest::adds", "CalcTest.adds", true),
        ("calc.CalcTest::pos(int)[2]", "CalcTest.pos", true),
        ("calc.CalcTest$Inner::zero()", "CalcTest.Inner.zero", true),
        ("calc.CalcTest::sums(int[])", "CalcTest.sums", true),
        ("calc.CalcTest::sums(int[])[1]", "CalcTest.sums", true),
        ("calc.CalcTest::addsMore()", "CalcTest.adds", false),
        ("calc.OtherTest::adds()", "CalcTest.adds", false),
    ] {
        assert_eq!(names_test(j, name, java, inner), want, "{name}");
    }
}

#[test]
fn go_names_are_matched_to_a_files_test() {
    let go = Naming::Go {
        module: "example.com/calc",
        root: "",
    };
    assert!(names_test(
        go,
        "example.com/calc.TestAdd",
        "calc_test.go",
        "TestAdd"
    ));
    assert!(!names_test(
        go,
        "example.com/calc/sub.TestAdd",
        "calc_test.go",
        "TestAdd"
    ));
    assert!(names_test(
        go,
        "example.com/calc/sub.TestAdd",
        "sub/a_test.go",
        "TestAdd"
    ));
    assert!(!names_test(
        go,
        "example.com/calc.TestAdd",
        "sub/a_test.go",
        "TestAdd"
    ));
    assert!(!names_test(
        go,
        "example.com/calc.TestAddMore",
        "calc_test.go",
        "TestAdd"
    ));
    let nested = Naming::Go {
        module: "m",
        root: "svc",
    };
    assert!(names_test(nested, "m/x.TestA", "svc/x/x_test.go", "TestA"));
    assert!(!names_test(nested, "m/x.TestA", "x/x_test.go", "TestA"));
    assert_eq!(
        go_module("// c\nmodule example.com/calc // x\n\ngo 1.19\n"),
        Some("example.com/calc")
    );
    assert_eq!(go_module("module \"a/b\"\n"), Some("a/b"));
    assert_eq!(go_module("modules x\n"), None);
}

fn planned(names: &[&str]) -> Planned {
    Planned {
        path: "src/lib.rs".into(),
        mutant: Mutant {
            test: "tests::adds".into(),
            line: 9,
            how: "expected `4` made `3`".into(),
        },
        names: names.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn a_mutant_that_passes_or_an_unchanged_test_that_fails_voids_the_results() {
    let p = vec![planned(&["c:src/lib.rs tests::adds"])];
    let passed: Vec<String> = ["c:src/lib.rs tests::adds", "c:src/lib.rs tests::negates"]
        .map(String::from)
        .to_vec();
    let honest = |n: &str| {
        if n.ends_with("adds") {
            Outcome::Failed
        } else {
            Outcome::Passed
        }
    };
    assert!(verdict(&p, &passed, &honest, false).is_empty());
    let v = verdict(&p, &passed, &|_| Outcome::Passed, true);
    assert_eq!(v.len(), 2, "{v:?}");
    assert!(v[0].message.contains("a mutated copy of `c:src/lib.rs tests::adds` passed (expected `4` made `3`, src/lib.rs:9)"), "{}", v[0].message);
    assert!(v.iter().all(|i| i.rule == RULE_FORGED));
    let v = verdict(&p, &passed, &|_| Outcome::Failed, false);
    assert_eq!(v.len(), 1);
    assert!(
        v[0].message
            .contains("1 test passed in the base-tests run but did not pass"),
        "{}",
        v[0].message
    );
    let v = verdict(
        &p,
        &passed,
        &|n| {
            if n.ends_with("adds") {
                Outcome::NoResult
            } else {
                Outcome::Passed
            }
        },
        false,
    );
    assert!(v[0].message.contains("has no result"), "{}", v[0].message);
}

#[test]
fn about_half_are_drawn_and_at_least_one() {
    let names: Vec<String> = (0..200).map(|i| format!("t{i}")).collect();
    let n = names
        .iter()
        .filter(|t| drawn("ab12cd34ef560000", t))
        .count();
    assert!((60..140).contains(&n), "{n}");
    let m = names
        .iter()
        .filter(|t| drawn("0000000000000001", t))
        .count();
    assert_ne!(n, m);
    let text = "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 2), 4);\n    }\n}\n";
    let files = vec![("src/lib.rs".to_string(), text.to_string())];
    let passed = vec!["c:src/lib.rs tests::adds".to_string()];
    for nonce in ["0000000000000001", "0000000000000002", "00000000000000ff"] {
        let rounds = plan(Naming::Known(Runner::Cargo), &files, &passed, None, nonce);
        assert_eq!(rounds.len(), 1, "{nonce}");
        let p = &rounds[0];
        assert_eq!(p.len(), 1, "{nonce}");
        let t = mutated(p, "src/lib.rs", text, nonce).unwrap();
        assert_ne!(t, text);
        assert_eq!(t.lines().count(), text.lines().count());
    }
    // Not among the tests that passed: not mutated.
    assert!(plan(Naming::Known(Runner::Cargo), &files, &[], None, "01").is_empty());
}

/// jest lists only files: a mutated test of a file that passed is
/// named from file and title whatever the results named, so results
/// that leave it out (or call it something else) cannot spare it.
#[test]
fn a_files_only_runners_mutants_are_named_from_file_and_title() {
    let text = "const { add } = require('./sum');\n\ndescribe('add', () => {\n  test('adds', () => {\n    expect(add(2, 2)).toBe(4);\n  });\n});\n\ntest.each([[1, 1]])('row %i', (a, b) => {\n  expect(add(a, 0)).toBe(b);\n});\n";
    let files = vec![("web/sum.test.js".to_string(), text.to_string())];
    let forged_names = vec!["sum.test.js > works".to_string()];
    let passed_files = vec!["sum.test.js".to_string()];
    let rounds = plan(
        Naming::Known(Runner::Jest),
        &files,
        &forged_names,
        Some(&passed_files),
        "0123456789abcdef",
    );
    let names: Vec<&String> = rounds.iter().flatten().flat_map(|p| &p.names).collect();
    assert_eq!(names, vec!["sum.test.js > add > adds"], "{rounds:?}");
    // A file that did not pass gets none, though another file passed.
    assert!(plan(Naming::Known(Runner::Jest), &files, &[], Some(&[]), "01").is_empty());
    let other = vec!["other.test.js".to_string()];
    assert!(plan(Naming::Known(Runner::Jest), &files, &[], Some(&other), "01").is_empty());
}

#[test]
fn every_test_that_can_be_mutated_is_mutated_in_exactly_one_round() {
    let mut text = String::from("pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n");
    let mut passed = Vec::new();
    for i in 0..12 {
        text.push_str(&format!(
            "\n    #[test]\n    fn adds_{i}() {{\n        assert_eq!(add({i}, 1), {});\n    }}\n",
            i + 1
        ));
        passed.push(format!("c:src/lib.rs tests::adds_{i}"));
    }
    text.push_str("}\n");
    let files = vec![("src/lib.rs".to_string(), text.clone())];
    let mut splits = std::collections::HashSet::new();
    for nonce in ["00000000000000a1", "00000000000000b2", "00000000000000c3"] {
        let rounds = plan(Naming::Known(Runner::Cargo), &files, &passed, None, nonce);
        assert_eq!(rounds.len(), 2, "{nonce}");
        let mut seen: Vec<&str> = rounds
            .iter()
            .flatten()
            .map(|p| p.mutant.test.as_str())
            .collect();
        seen.sort_unstable();
        let before = seen.len();
        seen.dedup();
        assert_eq!(before, seen.len(), "a test in both rounds: {nonce}");
        assert_eq!(seen.len(), 12, "{nonce}: {seen:?}");
        let first: Vec<String> = rounds[0].iter().map(|p| p.mutant.test.clone()).collect();
        splits.insert(first);
    }
    assert!(splits.len() > 1, "the split does not depend on the run");
    let rounds = plan(
        Naming::Known(Runner::Cargo),
        &files,
        &passed,
        None,
        "00000000000000d4",
    );
    assert_eq!(failed_as_they_must(&rounds, &[]), 12);
    let forged = verdict(&rounds[0], &[], &|_| Outcome::Passed, false);
    assert!(!forged.is_empty());
    assert_eq!(failed_as_they_must(&rounds, &forged), 0);
}

#[test]
fn a_round_lays_every_file_mutated_or_whole() {
    let text = "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 2), 4);\n    }\n}\n";
    let files = vec![
        ("src/lib.rs".to_string(), text.to_string()),
        ("src/other.rs".to_string(), "pub fn x() {}\n".to_string()),
    ];
    let passed = vec!["c:src/lib.rs tests::adds".to_string()];
    let nonce = "00000000000000a1";
    let rounds = plan(Naming::Known(Runner::Cargo), &files, &passed, None, nonce);
    let laid: Vec<(&str, String)> = round(&rounds[0], &files, nonce).collect();
    assert_eq!(laid.len(), 2);
    assert_ne!(laid[0].1, text, "the planned test is mutated");
    assert_eq!(laid[1].1, "pub fn x() {}\n", "the other file is laid whole");
    assert_eq!(round(&[], &files, nonce).next().unwrap().1, text);
    assert_eq!(failed_as_they_must(&rounds, &[]), 1);
}

/// The mutator's choice of assertion follows the run's mark, so code under
/// test cannot know which one changed.
#[test]
fn the_seed_is_the_marks_first_sixteen_hex_digits() {
    assert_eq!(seed("00000000000000ff"), 255);
    assert_eq!(seed("00000000000000ff99"), 255);
    assert_eq!(seed("0a"), 10);
    assert_eq!(seed("not hex"), 0x5eed);
}

/// A lone test that can be mutated is mutated, whatever the draw: when
/// none is drawn, one of the rest is taken into the first round.
#[test]
fn a_lone_test_is_mutated_in_the_first_round_whatever_the_draw() {
    let text = "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 2), 4);\n    }\n}\n";
    let files = vec![("src/lib.rs".to_string(), text.to_string())];
    let passed = vec!["c:src/lib.rs tests::adds".to_string()];
    for i in 2..40u64 {
        let nonce = format!("{i:016x}");
        let rounds = plan(Naming::Known(Runner::Cargo), &files, &passed, None, &nonce);
        assert_eq!(rounds.len(), 1, "{nonce}");
        assert_eq!(rounds[0].len(), 1, "{nonce}");
        assert_eq!(rounds[0][0].names, passed, "{nonce}");
    }
}
