//! `rascal show RUN --timings` (issue 52): where a run's time went, read
//! back from the journal of a real run (the demo, headless): each
//! candidate's checks with their durations, the test guardrail's evidence
//! split into steps that account for its time, and the critical path.

use crate::common::{self, code, stderr, stdout};
use std::process::Command;

#[test]
fn show_timings_splits_the_test_run_into_its_steps_and_names_the_critical_path() {
    let o = Command::new(common::bin())
        .args(["demo", "--headless", "--fast", "--keep"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    let kept = crate::demo::kept_of(&out);
    let kept = kept.to_string_lossy().to_string();
    let run = crate::demo::run_id(&out);
    let show = |extra: &[&str]| {
        let o = Command::new(common::bin())
            .args(["-C", &kept, "show", &run, "--timings"])
            .args(extra)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
        stdout(&o)
    };
    let doc: serde_json::Value = serde_json::from_str(&show(&["--json"])).unwrap();
    let careful = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["candidate"] == "careful")
        .unwrap_or_else(|| panic!("{doc}"));
    assert_eq!(careful["attempt"], 2, "{careful}");
    let tests = careful["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["check"] == "tests")
        .unwrap_or_else(|| panic!("{careful}"));
    let steps: Vec<(&str, u64)> = tests["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("{tests}"))
        .iter()
        .map(|s| (s["step"].as_str().unwrap(), s["ms"].as_u64().unwrap()))
        .collect();
    let names: Vec<&str> = steps.iter().map(|(n, _)| *n).collect();
    for want in [
        "own run",
        "listing",
        "base tests",
        "canaries",
        "release profile",
    ] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    // The steps are parts of the check: together no longer than it.
    let sum: u64 = steps.iter().map(|(_, ms)| ms).sum();
    assert!(sum <= tests["ms"].as_u64().unwrap(), "{sum} > {tests}");
    // hasty's build failed: what it skipped is counted, not timed.
    let hasty = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["candidate"] == "hasty")
        .unwrap();
    assert!(hasty["skipped"].as_u64().unwrap() > 0, "{hasty}");
    assert!(
        !hasty["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["check"] == "tests"),
        "{hasty}"
    );
    // The last verdict is the critical path.
    let last = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .max_by_key(|c| c["verdict_at_ms"].as_i64().unwrap_or(0))
        .unwrap();
    assert_eq!(doc["critical"], last["candidate"], "{doc}");

    let text = show(&[]);
    assert!(text.starts_with("timings (wall "), "{text}");
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("tests")
            && l.contains("own run")
            && l.contains("canaries")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "critical path: {}'s verdict landed last",
            last["candidate"].as_str().unwrap()
        )),
        "{text}"
    );
    crate::demo::forget(std::path::Path::new(&kept));
}
