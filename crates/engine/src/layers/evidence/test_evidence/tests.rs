use super::base_tests::filters_subtests;

#[test]
fn a_run_filter_with_a_slash_selects_subtests() {
    for (command, want) in [
        ("go test ./...", false),
        ("go test -run TestAdd ./...", false),
        ("go test -run 'TestAdd/one' ./...", true),
        ("go test -run=TestAdd/one ./...", true),
        ("go test --run TestAdd/ ./...", true),
        ("go test -count=1 run/x", false),
    ] {
        assert_eq!(filters_subtests(command), want, "{command}");
    }
}

#[test]
fn a_run_that_exited_0_fails_on_what_its_results_deny() {
    use super::{results_issues, RULE_FAILED, RULE_INCOMPLETE, RULE_NOT_RUN, RULE_UNLISTED};
    use rascal_core::model::verdict::Severity;
    use rascal_scan::ledger::{Judged, Listing, Results};
    let rules = |listing: &Listing, results: &Results, judged: &Judged| -> Vec<String> {
        let issues = results_issues("cargo test", listing, results, judged);
        assert!(issues.iter().all(|i| i.severity == Severity::Error));
        issues.into_iter().map(|i| i.rule).collect()
    };
    let listing = Listing {
        tests: vec!["a".into(), "b".into()],
        complete: true,
        files_only: false,
    };
    let results = Results {
        passed: vec!["a".into(), "b".into()],
        complete: true,
        ..Results::default()
    };
    let clean = Judged {
        listed: 2,
        passed: 2,
        ..Judged::default()
    };
    assert!(rules(&listing, &results, &clean).is_empty(), "all passed");
    let failed = Judged {
        failed: vec!["b".into()],
        ..clean.clone()
    };
    assert_eq!(rules(&listing, &results, &failed), [RULE_FAILED]);
    let not_run = Judged {
        not_run: vec!["b".into()],
        ..clean.clone()
    };
    assert_eq!(rules(&listing, &results, &not_run), [RULE_NOT_RUN]);
    // A listing of files cannot say which names had no result.
    let files = Listing {
        files_only: true,
        ..listing.clone()
    };
    assert!(rules(&files, &results, &not_run).is_empty());
    let partial = Listing {
        complete: false,
        ..listing.clone()
    };
    assert_eq!(rules(&partial, &results, &not_run), [RULE_INCOMPLETE]);
    let unlisted = Results {
        unlisted: vec!["fake".into()],
        ..results.clone()
    };
    assert_eq!(rules(&listing, &unlisted, &clean), [RULE_UNLISTED]);
    let cut = Results {
        complete: false,
        ..results.clone()
    };
    assert_eq!(rules(&listing, &cut, &clean), [RULE_INCOMPLETE]);
}

/// The release-profile runs are the guardrail's command in `--release`,
/// every target, never the test-profile run again (which would hide code
/// right only under test). Kills the mutant that kept the plain run.
#[test]
fn the_shipped_runs_are_the_command_in_release() {
    use super::TestRuns;
    let g: rascal_core::config::Guardrail = rascal_core::config::parse(
        "guardrails.yaml",
        "{ name: tests, command: 'cargo test -q' }",
    )
    .unwrap();
    let rec = rascal_scan::ledger::recognise("cargo test -q", None).unwrap();
    let cancel = tokio_util::sync::CancellationToken::new();
    let runs = TestRuns::new(&g, &rec, &cancel).unwrap();
    let shipped = runs.shipped().expect("cargo test ships in --release");
    assert_ne!(
        shipped.run,
        runs.every_target().run,
        "the release run is its own"
    );
    assert!(shipped.run.0.contains("--release"), "{:?}", shipped.run);
    assert!(!runs.run.0.contains("--release"), "{:?}", runs.run);
    let named: rascal_core::config::Guardrail = rascal_core::config::parse(
        "guardrails.yaml",
        "{ name: tests, command: 'cargo test -q', release_profile: false }",
    )
    .unwrap();
    assert!(TestRuns::new(&named, &rec, &cancel)
        .unwrap()
        .shipped()
        .is_none());
}
