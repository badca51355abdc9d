//! A runner's listing and results as a check copy gives them: names
//! without the copy's directory, an empty listing that exited 0 is a
//! complete listing of nothing, results read from the results file.

use super::*;
use rascal_exec::exec::runner::Exit;

/// A run with `code` that printed `text` and wrote `file` (its results
/// file); the canary's tests use it too.
pub(crate) fn whole(code: i32, text: &str, file: Option<&str>) -> Whole {
    Whole {
        outcome: Outcome {
            exit: Exit {
                code: Some(code),
                ..Exit::default()
            },
            tail: String::new(),
            rewritten: Vec::new(),
        },
        text: text.to_string(),
        files: vec![file.map(|f| f.as_bytes().to_vec())],
    }
}

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn names_lose_the_copy_they_ran_in() {
    let copy = "/home/u/.rascal-artifacts/run/checks/check-3f2a";
    let given = names(&[
        &format!("{copy}/web/src/a.test.js > adds"),
        &format!("{copy}/other/b.test.js > b"),
        "/workspace/web/c.test.js > c",
        "tests::adds",
    ]);
    assert_eq!(
        strip_copies(&given, Some("web/")),
        [
            "src/a.test.js > adds",
            "other/b.test.js > b",
            "c.test.js > c",
            "tests::adds"
        ]
    );
    assert_eq!(
        strip_copies(&given, None),
        [
            "web/src/a.test.js > adds",
            "other/b.test.js > b",
            "web/c.test.js > c",
            "tests::adds"
        ]
    );
}

#[test]
fn an_empty_listing_is_complete_only_when_it_exited_0_without_an_error() {
    let l = |code: i32, text: &str| listing(Runner::Cargo, &whole(code, text, None), None);
    let nothing = l(0, "");
    assert!(nothing.complete && nothing.tests.is_empty(), "{nothing:?}");
    assert!(l(0, "warning: unused\n").complete);
    assert!(!l(101, "").complete, "exited non-zero");
    assert!(!l(101, "warning: unused\n").complete, "exited non-zero");
    assert!(!l(0, "  error: could not compile `x`\n").complete);
    let two = l(
        0,
        "tests::adds: test\ntests::subs: test\n\n2 tests, 0 benchmarks\n",
    );
    assert!(two.complete, "{two:?}");
    assert_eq!(two.tests, ["tests::adds", "tests::subs"]);
    // A complete listing stays complete whatever the exit code.
    assert!(l(1, "tests::adds: test\n").complete);
    // jest lists absolute files: as every copy shares them.
    let copy = "/r/checks/check-1";
    let files = format!("[\"{copy}/web/src/a.test.js\"]");
    let jest = listing(Runner::Jest, &whole(0, &files, None), Some("web"));
    assert_eq!(jest.tests, ["src/a.test.js"]);
    assert!(jest.files_only);
}

#[test]
fn results_come_from_the_output_or_the_results_file() {
    let listed = listing(
        Runner::Cargo,
        &whole(0, "a: test\nb: test\nc: test\n", None),
        None,
    );
    let out = "running 3 tests\ntest a ... ok\ntest b ... FAILED\ntest c ... ignored\n\ntest result: FAILED. 1 passed; 1 failed; 1 ignored\n";
    let r = results(Runner::Cargo, &whole(101, out, None), &listed, None);
    assert_eq!(
        (r.passed, r.failed, r.ignored),
        (names(&["a"]), names(&["b"]), names(&["c"]))
    );
    // pytest: the results file, its names without the copy.
    let listed = Listing {
        tests: names(&["tests/test_a.py::test_a", "tests/test_a.py::test_b"]),
        complete: true,
        files_only: false,
    };
    let xml = r#"<testsuites><testsuite tests="2"><testcase classname="tests.test_a" name="test_a" file="tests/test_a.py"/><testcase classname="tests.test_a" name="test_b" file="tests/test_a.py"><failure message="no"/></testcase></testsuite></testsuites>"#;
    let r = results(
        Runner::Pytest,
        &whole(1, "1 passed", Some(xml)),
        &listed,
        None,
    );
    assert_eq!(r.passed, ["tests/test_a.py::test_a"]);
    assert_eq!(r.failed, ["tests/test_a.py::test_b"]);
}

/// A runner that names tests by absolute path (a doctest's file, jest's
/// test file) gives the copy's directory in every result: each of passed,
/// failed and ignored is named as every copy shares it.
#[test]
fn results_lose_the_copy_they_ran_in() {
    let copy = "/r/checks/check-1";
    let raw: Vec<String> = ["a", "b", "c"]
        .iter()
        .enumerate()
        .map(|(i, f)| format!("{copy}/src/lib.rs - {f} (line {})", i + 1))
        .collect();
    let against = Listing {
        tests: raw.clone(),
        complete: true,
        files_only: false,
    };
    let out = format!(
        "running 3 tests\ntest {} ... ok\ntest {} ... FAILED\ntest {} ... ignored\n\ntest result: FAILED. 1 passed; 1 failed; 1 ignored\n",
        raw[0], raw[1], raw[2]
    );
    let r = results(Runner::Cargo, &whole(101, &out, None), &against, None);
    assert_eq!(r.passed, ["src/lib.rs - a (line 1)"]);
    assert_eq!(r.failed, ["src/lib.rs - b (line 2)"]);
    assert_eq!(r.ignored, ["src/lib.rs - c (line 3)"]);
}
