//! pytest's listings and results, on real output.

use super::*;

#[test]
fn pytest_collect_only_gives_node_ids() {
    let l = parse_listing(Runner::Pytest, PY_COLLECT);
    assert!(l.complete && !l.files_only);
    assert_eq!(l.tests.len(), 14);
    assert!(l
        .tests
        .contains(&"tests/unit/test_math.py::test_param[a b]".to_string()));
    assert!(l
        .tests
        .contains(&"tests/unit/test_math.py::TestGroup::TestInner::test_deep".to_string()));
    let broken = parse_listing(Runner::Pytest, fixture!("pytest/collect-error.txt"));
    assert!(!broken.complete);
    assert_eq!(broken.tests.len(), 15);
}

#[test]
fn pytest_listing_ignores_warning_summaries_and_reads_qq() {
    let out = "tests/test_a.py::test_one\n\n=== warnings summary ===\ntests/test_a.py::test_one\n  /x.py:1: DeprecationWarning: old\n\n1 test collected in 0.01s\n";
    let l = parse_listing(Runner::Pytest, out);
    assert_eq!(l.tests, strings(&["tests/test_a.py::test_one"]));
    assert!(l.complete);
    let qq = parse_listing(
        Runner::Pytest,
        "tests/test_a.py: 3\ntests/test_b.py: 1\n\n4 tests collected in 0.01s\n",
    );
    assert!(qq.files_only);
    assert_eq!(qq.tests, strings(&["tests/test_a.py", "tests/test_b.py"]));
    assert!(parse_listing(Runner::Pytest, "no tests collected in 0.01s\n").complete);
}

fn expect_pytest_outcomes(r: &Results) {
    assert_eq!(
        sorted(r.failed.clone()),
        strings(&[
            "tests/unit/test_math.py::test_fails",
            "tests/unit/test_math.py::test_setup_error"
        ])
    );
    assert_eq!(
        sorted(r.ignored.clone()),
        strings(&[
            "tests/unit/test_math.py::test_skipped",
            "tests/unit/test_math.py::test_xfail"
        ])
    );
    assert_eq!(r.passed.len(), 10);
    for id in [
        "tests/test_top.py::test_adds",
        "tests/unit/test_math.py::test_param[a b]",
        "tests/unit/test_math.py::TestGroup::test_pair[3-4]",
        "tests/unit/test_math.py::TestGroup::TestInner::test_deep",
    ] {
        assert!(r.passed.contains(&id.to_string()), "{id}: {:?}", r.passed);
    }
    assert!(r.unlisted.is_empty(), "{:?}", r.unlisted);
}

#[test]
fn pytest_junit_cases_become_node_ids() {
    let listing = parse_listing(Runner::Pytest, PY_COLLECT);
    let xunit1 = fixture!("pytest/junit-xunit1.xml");
    let xunit2 = fixture!("pytest/junit-xunit2.xml");
    // Through the listing, through xunit1's `file`, and by convention alone.
    for (xml, listing) in [
        (xunit1, Some(&listing)),
        (xunit2, Some(&listing)),
        (xunit1, None),
        (xunit2, None),
    ] {
        let r = parse_results(Runner::Pytest, "", Some(xml), listing);
        assert!(r.complete);
        expect_pytest_outcomes(&r);
    }
}

#[test]
fn pytest_collection_errors_are_broken_files() {
    let listing = parse_listing(Runner::Pytest, fixture!("pytest/collect-error.txt"));
    let xml = fixture!("pytest/junit-collection-error-continued.xml");
    let r = parse_results(Runner::Pytest, "", Some(xml), Some(&listing));
    assert_eq!(r.broken, strings(&["tests/test_bad.py"]));
    assert!(r
        .failed
        .contains(&"tests/test_teardown.py::test_passes_then_teardown_fails".to_string()));
    let xml = fixture!("pytest/junit-collection-error-interrupted.xml");
    let r = parse_results(Runner::Pytest, "", Some(xml), Some(&listing));
    assert_eq!(r.broken, strings(&["tests/test_bad.py"]));
    assert!(r.passed.is_empty() && r.failed.is_empty());
    let l = ledger(Runner::Pytest, &listing, &listing, &r);
    assert_eq!(l.not_run.len(), 15);
    assert!(!l.complete);
}

#[test]
fn pytest_a_case_the_listing_lacks_is_unlisted() {
    let listing = parse_listing(Runner::Pytest, PY_COLLECT);
    let xml = r#"<testsuites><testsuite tests="2"><testcase classname="tests.test_top" name="test_adds" file="tests/test_top.py"/><testcase classname="tests.test_top" name="test_invented" file="tests/test_top.py"/></testsuite></testsuites>"#;
    let r = parse_results(Runner::Pytest, "", Some(xml), Some(&listing));
    assert_eq!(r.passed, strings(&["tests/test_top.py::test_adds"]));
    assert_eq!(r.unlisted, strings(&["tests/test_top.py::test_invented"]));
}

#[test]
fn pytest_without_its_file_reads_nothing_and_says_so() {
    let r = parse_results(Runner::Pytest, "1 passed", None, None);
    assert!(!r.complete);
    assert!(r.passed.is_empty());
    assert!(!r.notes.is_empty());
    let r = parse_results(
        Runner::Pytest,
        "",
        Some("<testsuites><testcase name="),
        None,
    );
    assert!(!r.complete);
}
