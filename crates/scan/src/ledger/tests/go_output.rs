//! Go's listings and results, on real output.

use super::*;

#[test]
fn go_listing_qualifies_names_with_the_package_that_follows() {
    let l = parse_listing(Runner::Go, GO_LIST);
    assert!(l.complete);
    assert_eq!(
        l.tests,
        strings(&[
            "example.com/m/a.TestAdd",
            "example.com/m/a.TestTable",
            "example.com/m/a.TestSkipped",
            "example.com/m/a.TestLiar",
            "example.com/m/a.BenchmarkAdd",
            "example.com/m/a.ExampleAdd",
            "example.com/m/b.TestAdd",
            "example.com/m/b.TestOther",
        ])
    );
    let broken = parse_listing(Runner::Go, fixture!("go/list-build-failed.txt"));
    assert!(!broken.complete);
    assert_eq!(broken.tests.len(), 8);
}

#[test]
fn go_results_with_subtests_and_a_forged_pass() {
    let listing = parse_listing(Runner::Go, GO_LIST);
    let r = parse_results(Runner::Go, fixture!("go/run.jsonl"), None, Some(&listing));
    assert!(r.complete);
    assert_eq!(
        sorted(r.failed.clone()),
        strings(&[
            "example.com/m/a.TestTable",
            "example.com/m/a.TestTable/wrong"
        ])
    );
    assert_eq!(r.ignored, strings(&["example.com/m/a.TestSkipped"]));
    for name in [
        "example.com/m/a.TestTable/one_plus_one",
        "example.com/m/b.TestOther/nested/deeper",
        "example.com/m/a.ExampleAdd",
    ] {
        assert!(r.passed.contains(&name.to_string()), "{name}");
    }
    // `fmt.Println("--- PASS: TestFake (0.00s)")` makes test2json report a pass.
    assert_eq!(r.unlisted, strings(&["example.com/m/a.TestFake"]));
    assert!(!r
        .passed
        .iter()
        .any(|n| n.contains("Forged") || n.contains("Fake")));

    let l = ledger(Runner::Go, &listing, &listing, &r);
    assert_eq!(l.not_run, strings(&["example.com/m/a.BenchmarkAdd"]));
    assert_eq!(l.ran, 10);

    let without = parse_results(Runner::Go, fixture!("go/run.jsonl"), None, None);
    assert!(without.notes.is_empty(), "{:?}", without.notes);
    assert!(without
        .passed
        .contains(&"example.com/m/a.TestFake".to_string()));
}

#[test]
fn go_build_failure_is_broken() {
    let r = parse_results(
        Runner::Go,
        fixture!("go/run-build-failed.jsonl"),
        None,
        None,
    );
    assert_eq!(r.broken, strings(&["example.com/m/d"]));
    // Newer Go reports the failure as an event of its own.
    let newer = r#"{"ImportPath":"example.com/m/d [example.com/m/d.test]","Action":"build-fail"}
{"Action":"start","Package":"example.com/m/d"}
{"Action":"fail","Package":"example.com/m/d","Elapsed":0,"FailedBuild":"example.com/m/d [example.com/m/d.test]"}"#;
    let r = parse_results(Runner::Go, newer, None, None);
    assert_eq!(r.broken, strings(&["example.com/m/d"]));
}

#[test]
fn go_a_package_that_stops_early_is_incomplete() {
    let out = r#"{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"panic: test timed out\n"}"#;
    let r = parse_results(Runner::Go, out, None, None);
    assert!(!r.complete);
    assert!(r.notes.iter().any(|n| n.starts_with("p: no final")));
}

#[test]
fn go_top_level_names() {
    assert_eq!(
        go::top_level("example.com/m/a.TestTable/wrong"),
        "example.com/m/a.TestTable"
    );
    assert_eq!(
        go::top_level("gopkg.in/yaml.v3.TestX/v1.2/x"),
        "gopkg.in/yaml.v3.TestX"
    );
    assert_eq!(go::top_level("p.TestA"), "p.TestA");
    assert_eq!(go::top_level("garbage"), "garbage");
}
