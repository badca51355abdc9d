//! Where a canary is planted and what it adds: [`plan`], [`may_hold`],
//! [`go_file_fits`], [`Canary::appended_to`]. A canary that is not planted,
//! or is planted where the runner does not look, leaves the results
//! unchecked: it proves nothing and says nothing.

use super::*;

fn listing(tests: &[&str], files_only: bool) -> Listing {
    Listing {
        tests: tests.iter().map(|s| s.to_string()).collect(),
        complete: true,
        files_only,
    }
}

fn words(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The paths `runner` plants its canaries in, every file existing.
fn paths(runner: Runner, at_base: &Listing, args: &[String]) -> Vec<String> {
    plan(runner, at_base, None, "ab12", &|_| true, &[], args)
        .into_iter()
        .map(|c| c.path)
        .collect()
}

#[test]
fn a_canary_starts_on_a_line_of_its_own() {
    let c = Canary {
        nonce: "ab1200".into(),
        path: "test_x.py".into(),
        text: "\n\ndef test_ab1200():\n    assert 0 == 1\n".into(),
    };
    assert_eq!(c.appended_to("x = 1"), format!("x = 1\n{}", c.text));
    assert_eq!(c.appended_to("x = 1\n"), format!("x = 1\n{}", c.text));
    assert_eq!(c.appended_to(""), c.text);
}

#[test]
fn a_go_file_fits_when_it_imports_testing_by_name_and_has_a_test() {
    assert!(go_file_fits(
        "package calc\n\nimport (\n\t\"testing\"\n)\n\nfunc TestA(t *testing.T) {}\n"
    ));
    // Benchmarks only: `testing` is imported, but no `*testing.T)`.
    assert!(!go_file_fits(
        "package calc\n\nimport \"testing\"\n\nfunc BenchmarkA(b *testing.B) {}\n"
    ));
    // `testing` under another name: `testing.T` would not compile there,
    // though the file mentions it.
    assert!(!go_file_fits(
        "package calc\n\nimport tst \"testing\"\n\n// like TestA(t *testing.T)\nfunc TestA(t *tst.T) {}\n"
    ));
}

#[test]
fn cargo_canaries_may_go_in_crate_roots_and_test_targets_only() {
    for (path, holds) in [
        ("src/main.rs", true),
        ("tests/it.rs", true),
        ("crates/a/src/lib.rs", true),
        ("src/bin/tool.rs", false),
        ("tests/common/mod.rs", false),
        ("third_party/x/src/lib.rs", false),
        ("tests/it.py", false),
    ] {
        assert_eq!(may_hold(Runner::Cargo, path), holds, "{path}");
    }
    assert!(!may_hold(Runner::Go, "vendor/x/x_test.go"));
    assert!(!may_hold(Runner::Unittest, "tests/test_x.py"));
}

#[test]
fn unittest_finds_its_top_directory_in_every_spelling() {
    let at_base = listing(&["test_calc.TestAdd.test_adds"], false);
    for (a, path) in [
        (words(&["discover", "-stests"]), "tests/test_calc.py"),
        (
            words(&["discover", "--start-directory=tests"]),
            "tests/test_calc.py",
        ),
        (
            words(&["discover", "-k", "fast", "tests"]),
            "tests/test_calc.py",
        ),
        (words(&["discover", "-s", "."]), "test_calc.py"),
        (
            words(&["discover", "-s", "tests", "-t", "src/"]),
            "src/test_calc.py",
        ),
        (
            words(&["discover", "-s", "tests", "--top-level-directory=src"]),
            "src/test_calc.py",
        ),
        (words(&["-t", "src", "test_calc"]), "src/test_calc.py"),
    ] {
        assert_eq!(paths(Runner::Unittest, &at_base, &a), [path], "{a:?}");
    }
}

#[test]
fn a_canary_goes_only_where_a_runners_test_names_point() {
    // A unittest name without module, class and method names no file.
    let short = listing(&["test_calc.test_adds"], false);
    assert!(paths(Runner::Unittest, &short, &[]).is_empty());
    assert!(paths(Runner::Unittest, &listing(&[], false), &[]).is_empty());
    // pytest: only doctests (dotted last parts) — no test function to
    // name the canary after.
    let doctests = listing(&["calc.py::calc.add"], false);
    assert!(paths(Runner::Pytest, &doctests, &[]).is_empty());
    // A listing of files only: the first file, a `test_` function.
    let files = listing(&["tests/test_a.py", "tests/test_b.py"], true);
    let cs = plan(
        Runner::Pytest,
        &files,
        Some("py"),
        "ab12",
        &|_| true,
        &[],
        &[],
    );
    assert_eq!(cs.len(), 1);
    assert_eq!(cs[0].path, "py/tests/test_a.py");
    assert!(cs[0].text.contains("def test_ab1200():"), "{}", cs[0].text);
    assert!(paths(Runner::Pytest, &listing(&[], true), &[]).is_empty());
    assert!(paths(Runner::Vitest, &listing(&["a.test.ts"], true), &[]).is_empty());
}
