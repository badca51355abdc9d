//! Unit tests of `scripted`.

use super::*;

#[test]
fn every_builtin_name_has_a_scenario() {
    for name in BUILTIN_NAMES {
        assert!(builtin(name).is_some(), "no scenario for `{name}`");
    }
    assert!(builtin("no-such-scenario").is_none());
}

/// The milliseconds a scenario sleeps on `attempt`.
fn slept(steps: &[Step], attempt: u32) -> u64 {
    steps
        .iter()
        .map(|s| match s {
            Step::Sleep { ms } => *ms,
            Step::When {
                attempt: a,
                then,
                otherwise,
            } => slept(if *a == attempt { then } else { otherwise }, attempt),
            _ => 0,
        })
        .sum()
}

fn has_empty_beat(steps: &[Step]) -> bool {
    steps.iter().any(|s| match s {
        Step::Sleep { ms: 0 } => true,
        Step::When {
            then, otherwise, ..
        } => has_empty_beat(then) || has_empty_beat(otherwise),
        _ => false,
    })
}

#[test]
fn fast_scenarios_carry_no_beats_and_watchable_ones_only_add_pauses() {
    for name in BUILTIN_NAMES {
        let fast = builtin(name).unwrap();
        let watchable = builtin_at(name, Tempo::Watchable).unwrap();
        assert!(!has_empty_beat(&fast), "{name}");
        // The same steps apart from the pauses.
        let not_sleep = |s: &&Step| !matches!(s, Step::Sleep { .. });
        let strip = |v: &[Step]| -> Vec<Step> { v.iter().filter(not_sleep).cloned().collect() };
        assert_eq!(strip(&fast).len(), strip(&watchable).len(), "{name}");
        for attempt in [1, 2] {
            assert!(
                slept(&watchable, attempt) >= slept(&fast, attempt),
                "{name}"
            );
        }
    }
}

#[test]
fn the_demos_authors_take_their_time_each_at_its_own_pace() {
    let authors = [
        "demo-fix-on-feedback",
        "demo-broken",
        "demo-denied",
        "demo-lazy",
    ];
    let mut paces: Vec<u64> = authors
        .iter()
        .map(|n| {
            let fast = slept(&builtin(n).unwrap(), 1);
            let watchable = slept(&builtin_at(n, Tempo::Watchable).unwrap(), 1);
            assert!(watchable >= fast + 1500, "{n}: {fast} → {watchable}");
            watchable
        })
        .collect();
    paces.sort();
    paces.dedup();
    assert_eq!(paces.len(), authors.len(), "staggered: {paces:?}");
    // The reviewer thinks a moment before its verdict.
    let review = builtin_at("review-request-once", Tempo::Watchable).unwrap();
    assert!(slept(&review, 1) >= 1000);
    assert_eq!(slept(&builtin("review-request-once").unwrap(), 1), 0);
}

#[test]
fn the_invocation_writes_the_scenario_at_the_runs_tempo() {
    let dir = tempfile::tempdir().unwrap();
    let mut agent =
        rascal_core::config::AgentConfig::new(rascal_core::config::RuntimeKind::Scripted);
    agent.scenario = Some("demo-lazy".into());
    for tempo in [Tempo::Fast, Tempo::Watchable] {
        let ctx = crate::agents::LaunchContext {
            run: "r-1",
            candidate: "lazy",
            run_dir: dir.path(),
            rascal_exe: Path::new("/bin/rascal"),
            sandboxed: true,
            attempt: 1,
            artifacts: None,
            inputs: None,
            tempo,
            criteria: None,
        };
        crate::agents::invocation("lazy", &agent, "task", &ctx).unwrap();
        let written: Vec<Step> =
            serde_json::from_slice(&std::fs::read(dir.path().join("scenario.json")).unwrap())
                .unwrap();
        assert_eq!(written, builtin_at("demo-lazy", tempo).unwrap());
    }
}

#[test]
fn first_run_appends_one_line_to_its_note_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let steps = builtin(FIRST_RUN).unwrap();
    assert_eq!(play(&steps, dir.path()), 0);
    assert_eq!(play(&steps, dir.path()), 0);
    let note = std::fs::read_to_string(dir.path().join(FIRST_RUN_NOTE)).unwrap();
    assert_eq!(note.lines().count(), 2, "each run is a change: {note}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "docs/ only"
    );
}
