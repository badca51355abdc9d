//! cargo's listings and results, on real output.

use super::*;

#[test]
fn cargo_listing_names_each_test_with_its_target() {
    let l = parse_listing(Runner::Cargo, CARGO_LIST);
    assert!(l.complete && !l.files_only);
    assert_eq!(
        l.tests,
        strings(&[
            "alpha:src/lib.rs tests::adds",
            "alpha:src/lib.rs tests::fails",
            "alpha:src/lib.rs tests::liar",
            "alpha:src/lib.rs tests::network",
            "alpha:src/lib.rs tests::panics",
            "alpha:src/lib.rs tests::slow",
            "alpha:src/main.rs tests::adds",
            "it:tests/it.rs adds",
            "it:tests/it.rs tests::adds",
            "beta:src/lib.rs tests::adds",
            "beta:src/lib.rs tests::subtracts",
            "alpha:doc alpha/src/lib.rs - add_one (line 3)",
            "alpha:doc alpha/src/lib.rs - double (line 12)",
            "alpha:doc alpha/src/lib.rs - double (line 16)",
            "alpha:doc alpha/src/lib.rs - double (line 20)",
        ])
    );
}

#[test]
fn cargo_listing_without_cargos_lines_keeps_duplicates() {
    let l = parse_listing(
        Runner::Cargo,
        fixture!("cargo/workspace-list-stdout-only.txt"),
    );
    assert!(l.complete);
    assert_eq!(l.tests.len(), 15);
    assert_eq!(l.tests.iter().filter(|t| *t == "tests::adds").count(), 4);
}

#[test]
fn cargo_results_cross_checked_against_the_listing() {
    let listing = parse_listing(Runner::Cargo, CARGO_LIST);
    let r = parse_results(Runner::Cargo, CARGO_RUN_NOCAPTURE, None, Some(&listing));
    assert!(r.complete);
    assert_eq!(
        sorted(r.failed.clone()),
        strings(&[
            "alpha:doc alpha/src/lib.rs - double (line 16)",
            "alpha:src/lib.rs tests::fails"
        ])
    );
    assert_eq!(
        sorted(r.ignored.clone()),
        strings(&[
            "alpha:doc alpha/src/lib.rs - double (line 20)",
            "alpha:src/lib.rs tests::network",
            "alpha:src/lib.rs tests::slow",
        ])
    );
    // should_panic's ` - should panic` is display only.
    assert!(r
        .passed
        .contains(&"alpha:src/lib.rs tests::panics".to_string()));
    assert_eq!(r.passed.len(), 10);
    // `tests::liar` printed `test fake ... ok` and `test tests::ghost ... ok`.
    assert_eq!(
        r.unlisted,
        strings(&["alpha:src/lib.rs fake", "alpha:src/lib.rs tests::ghost"])
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("8 results for 6 tests announced")),
        "{:?}",
        r.notes
    );
}

#[test]
fn without_a_listing_a_printed_fake_line_would_count() {
    // The reason for the cross-check: libtest's lines alone cannot tell.
    let r = parse_results(Runner::Cargo, CARGO_RUN_NOCAPTURE, None, None);
    assert!(r.passed.contains(&"alpha:src/lib.rs fake".to_string()));
    assert!(r.unlisted.is_empty());
}

#[test]
fn cargo_single_threaded_status_lines_follow_the_test_output() {
    let listing = parse_listing(Runner::Cargo, CARGO_LIST);
    let out = fixture!("cargo/alpha-lib-run-nocapture-single-thread.txt");
    let r = parse_results(Runner::Cargo, out, None, Some(&listing));
    assert_eq!(r.failed, strings(&["alpha:src/lib.rs tests::fails"]));
    assert_eq!(
        sorted(r.passed.clone()),
        strings(&[
            "alpha:src/lib.rs tests::adds",
            "alpha:src/lib.rs tests::liar",
            "alpha:src/lib.rs tests::panics"
        ])
    );
    assert_eq!(
        r.unlisted,
        strings(&["alpha:src/lib.rs fake", "alpha:src/lib.rs tests::ghost"])
    );
}

#[test]
fn a_forged_ok_cannot_hide_a_real_failure() {
    let listing = Listing {
        tests: strings(&["tests::a", "tests::b"]),
        complete: true,
        files_only: false,
    };
    // Single-threaded with --nocapture: the test prints `ok` before it fails.
    let out = "running 2 tests\ntest tests::a ... ok\ntest tests::b ... ok\nFAILED\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n";
    let r = parse_results(Runner::Cargo, out, None, Some(&listing));
    assert_eq!(r.failed, strings(&["tests::b"]));
    assert_eq!(r.passed, strings(&["tests::a"]));
    assert!(r
        .notes
        .iter()
        .any(|n| n.contains("tests::b: reported 2 times")));
}

#[test]
fn a_target_line_printed_by_a_test_does_not_relabel_the_rest() {
    let listing = Listing {
        tests: strings(&["a:src/lib.rs t1", "a:src/lib.rs t2"]),
        complete: true,
        files_only: false,
    };
    let out = "     Running unittests src/lib.rs (target/debug/deps/a-0123456789abcdef)\n\nrunning 2 tests\n     Running unittests src/lib.rs (target/debug/deps/b-0123456789abcdef)\ntest t1 ... ok\ntest t2 ... ok\n\ntest result: ok. 2 passed; 0 failed\n";
    let r = parse_results(Runner::Cargo, out, None, Some(&listing));
    assert_eq!(r.passed, strings(&["a:src/lib.rs t1", "a:src/lib.rs t2"]));
}

#[test]
fn cargo_fail_fast_leaves_later_targets_not_run() {
    let listing = parse_listing(Runner::Cargo, CARGO_LIST);
    let r = parse_results(
        Runner::Cargo,
        fixture!("cargo/workspace-run-fail-fast.txt"),
        None,
        Some(&listing),
    );
    let l = ledger(Runner::Cargo, &listing, &listing, &r);
    assert_eq!(l.ran, 4);
    assert_eq!(l.not_run.len(), 9);
    assert!(l
        .not_run
        .contains(&"beta:src/lib.rs tests::subtracts".to_string()));
    assert!(l.complete);
}

#[test]
fn cargo_stdout_only_results_match_a_stdout_only_listing() {
    let listing = parse_listing(
        Runner::Cargo,
        fixture!("cargo/workspace-list-stdout-only.txt"),
    );
    let r = parse_results(
        Runner::Cargo,
        fixture!("cargo/workspace-run-stdout-only.txt"),
        None,
        Some(&listing),
    );
    assert_eq!(r.failed, strings(&["tests::fails"]));
    assert_eq!(r.passed.len(), 3);
    assert!(r.unlisted.is_empty());
}

#[test]
fn cargo_results_read_without_cargos_lines_say_why_nothing_matched() {
    let listing = parse_listing(Runner::Cargo, CARGO_LIST);
    let r = parse_results(
        Runner::Cargo,
        fixture!("cargo/workspace-run-stdout-only.txt"),
        None,
        Some(&listing),
    );
    assert!(r.passed.is_empty() && r.failed.is_empty());
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("not read from the same kind of output")),
        "{:?}",
        r.notes
    );
}

#[test]
fn cargo_build_failure_is_broken_and_incomplete() {
    let out = "   Compiling alpha v0.1.0 (/tmp/alpha)\nerror[E0425]: cannot find function `nope` in this scope\n --> src/lib.rs:3:5\n\nerror: could not compile `alpha` (lib test) due to 1 previous error\n";
    let r = parse_results(Runner::Cargo, out, None, None);
    assert!(!r.complete);
    assert_eq!(
        r.broken,
        strings(&["alpha` (lib test) due to 1 previous error"])
    );
    assert!(!parse_listing(Runner::Cargo, out).complete);
}

#[test]
fn doc_tests_that_moved_are_not_missing() {
    let base = Listing {
        tests: strings(&[
            "alpha:doc alpha/src/lib.rs - double (line 16)",
            "alpha:src/lib.rs tests::gone",
        ]),
        complete: true,
        files_only: false,
    };
    let now = Listing {
        tests: strings(&[
            "alpha:doc alpha/src/lib.rs - double (line 18)",
            "alpha:src/lib.rs tests::new",
        ]),
        complete: true,
        files_only: false,
    };
    let l = ledger(Runner::Cargo, &base, &now, &Results::default());
    assert_eq!(l.missing, strings(&["alpha:src/lib.rs tests::gone"]));
    assert_eq!(l.added, strings(&["alpha:src/lib.rs tests::new"]));
}

#[test]
fn doc_tests_are_judged_by_item_and_ordinal_when_lines_move() {
    // The base lists `double`'s three examples; the change added four
    // lines above them, and its second example fails.
    let base = Listing {
        tests: strings(&[
            "alpha:doc alpha/src/lib.rs - double (line 12)",
            "alpha:doc alpha/src/lib.rs - double (line 16)",
            "alpha:doc alpha/src/lib.rs - double (line 20)",
        ]),
        complete: true,
        files_only: false,
    };
    let results = Results {
        passed: strings(&[
            "alpha:doc alpha/src/lib.rs - double (line 16)",
            "alpha:doc alpha/src/lib.rs - double (line 24)",
        ]),
        failed: strings(&["alpha:doc alpha/src/lib.rs - double (line 20)"]),
        complete: true,
        ..Results::default()
    };
    let j = judge(Runner::Cargo, &base, &results);
    // Not `(line 20)` of the base (the third), and not all three.
    assert_eq!(
        j.failed,
        strings(&["alpha:doc alpha/src/lib.rs - double (line 16)"])
    );
    assert_eq!(j.passed, 2);
    // Counts that differ cannot be lined up: any failure fails each.
    let fewer = Results {
        passed: strings(&["alpha:doc alpha/src/lib.rs - double (line 16)"]),
        failed: strings(&["alpha:doc alpha/src/lib.rs - double (line 20)"]),
        complete: true,
        ..Results::default()
    };
    assert_eq!(judge(Runner::Cargo, &base, &fewer).failed.len(), 3);
}

#[test]
fn results_read_against_an_older_listing_match_moved_doc_tests_by_item_and_no_more() {
    // The base's listing judges a copy where a line was added above the
    // examples; one printed line more for `double` is not a result.
    let base = Listing {
        tests: strings(&[
            "src/lib.rs - double (line 12)",
            "src/lib.rs - double (line 16)",
            "src/lib.rs tests::adds",
        ]),
        complete: true,
        files_only: false,
    };
    let out = "running 2 tests\ntest src/lib.rs - double (line 13) ... ok\ntest src/lib.rs - double (line 17) ... FAILED\ntest src/lib.rs - double (line 99) ... ok\n\ntest result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n";
    let r = parse_results(Runner::Cargo, out, None, Some(&base));
    assert_eq!(r.passed, strings(&["src/lib.rs - double (line 13)"]));
    assert_eq!(r.failed, strings(&["src/lib.rs - double (line 17)"]));
    assert_eq!(r.unlisted, strings(&["src/lib.rs - double (line 99)"]));
    // Matched by item and ordinal: the second example failed.
    let j = judge(Runner::Cargo, &base, &r);
    assert_eq!(j.failed, strings(&["src/lib.rs - double (line 16)"]));
    assert_eq!(j.passed, 1);
}

#[test]
fn a_doc_test_that_did_not_compile_has_no_result_and_a_forged_section_changes_nothing() {
    // Real rustdoc output: `add (line 7)` calls `add` with three
    // arguments; `add (line 3)` fails its assertion; `half (line 16)`
    // fails and prints a section header for `add (line 3)` saying it did
    // not compile.
    let out = fixture!("cargo/doc-tests-uncompiled-and-forged.txt");
    let r = parse_results(Runner::Cargo, out, None, None);
    assert_eq!(
        sorted(r.failed.clone()),
        strings(&[
            "calc:doc src/lib.rs - add (line 3)",
            "calc:doc src/lib.rs - half (line 16)"
        ])
    );
    assert!(r.passed.is_empty());
    assert!(
        r.notes
            .iter()
            .any(|n| n == "calc:doc src/lib.rs - add (line 7): the doc test did not compile"),
        "{:?}",
        r.notes
    );
}
