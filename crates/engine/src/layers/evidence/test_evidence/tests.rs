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
