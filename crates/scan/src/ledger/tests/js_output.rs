//! jest's listings and results on real output; vitest's on hand-written
//! output.

use super::*;

const JEST_ROOT: &str = "/tmp/fx/jestp";

#[test]
fn jest_lists_files_only() {
    for out in [
        fixture!("jest/list-tests.txt"),
        fixture!("jest/list-tests-json.txt"),
    ] {
        let l = parse_listing(Runner::Jest, out).relative_to(JEST_ROOT);
        assert!(l.files_only && l.complete);
        assert_eq!(l.tests, strings(&["src/math.test.js", "src/other.test.js"]));
    }
}

#[test]
fn jest_results_by_file_describe_and_title() {
    let listing =
        parse_listing(Runner::Jest, fixture!("jest/list-tests.txt")).relative_to(JEST_ROOT);
    let r = parse_results(
        Runner::Jest,
        "",
        Some(fixture!("jest/results.json")),
        Some(&listing),
    );
    assert!(r.complete);
    // Named as the relative listing names the files, though jest wrote absolute paths.
    assert_eq!(r.failed, strings(&["src/math.test.js > math > fails"]));
    assert_eq!(
        sorted(r.ignored.clone()),
        strings(&[
            "src/math.test.js > math > later",
            "src/math.test.js > math > skipped one"
        ])
    );
    assert_eq!(
        sorted(r.passed.clone()),
        strings(&[
            "src/math.test.js > math > adds",
            "src/math.test.js > math > nested > deep",
            "src/math.test.js > top level",
            "src/other.test.js > adds",
            "src/other.test.js > param 1",
            "src/other.test.js > param 2",
        ])
    );
    let l = ledger(Runner::Jest, &listing, &listing, &r);
    assert!(l.files_only);
    assert!(l.not_run.is_empty());
    assert_eq!(l.ran, 7);
}

#[test]
fn jest_a_result_for_an_unlisted_file_is_unlisted() {
    let listing = Listing {
        tests: strings(&["src/other.test.js"]),
        complete: true,
        files_only: true,
    };
    let r = parse_results(
        Runner::Jest,
        "",
        Some(fixture!("jest/results.json")),
        Some(&listing),
    );
    assert_eq!(r.passed.len(), 3);
    assert_eq!(r.unlisted.len(), 6);
    assert!(r
        .unlisted
        .iter()
        .all(|n| n.starts_with("/tmp/fx/jestp/src/math.test.js > ")));
}

#[test]
fn jest_a_suite_that_does_not_load_is_broken() {
    let r = parse_results(
        Runner::Jest,
        "",
        Some(fixture!("jest/results-suite-error.json")),
        None,
    )
    .relative_to("/tmp/fx/jestbad/");
    assert_eq!(r.broken, strings(&["src/broken.test.js"]));
    assert_eq!(r.failed, strings(&["src/math.test.js > math > fails"]));
}

#[test]
fn vitest_lists_tests_and_reports_them_alike() {
    let listing = parse_listing(Runner::Vitest, fixture!("vitest/synthetic-list.txt"));
    assert!(listing.complete && !listing.files_only);
    assert_eq!(listing.tests.len(), 5);
    let r = parse_results(
        Runner::Vitest,
        "",
        Some(fixture!("vitest/synthetic-results.json")),
        Some(&listing),
    );
    assert_eq!(r.failed, strings(&["src/basic.test.ts > math > fails"]));
    // vitest's listing leaves skipped tests out: they stay ignored, not unlisted.
    assert_eq!(
        sorted(r.ignored.clone()),
        strings(&[
            "/tmp/fx/vitestp/src/basic.test.ts > math > later",
            "/tmp/fx/vitestp/src/basic.test.ts > math > skipped one"
        ])
    );
    assert_eq!(r.passed.len(), 4);
    assert!(r.unlisted.is_empty());
    assert_eq!(r.broken, strings(&["/tmp/fx/vitestp/src/broken.test.ts"]));
    let ws = parse_listing(
        Runner::Vitest,
        fixture!("vitest/synthetic-list-workspace.txt"),
    );
    assert_eq!(
        ws.tests,
        strings(&[
            "src/basic.test.ts > math > adds",
            "src/basic.test.ts > math > adds"
        ])
    );
}

#[test]
fn js_results_json_that_is_not_there_or_not_json() {
    for text in [
        "",
        "{",
        "[]",
        "{\"testResults\": 3}",
        "{\"testResults\": [{\"assertionResults\": [{}]}]}",
    ] {
        let r = parse_results(Runner::Jest, "", Some(text), None);
        assert!(r.passed.is_empty() && r.failed.is_empty(), "{text}");
    }
    assert!(!parse_results(Runner::Vitest, "", Some("{"), None).complete);
}
