//! `rascal demo` is paced for a person to watch, and only the demo: its
//! scripted agents play their watchable scenarios (read back from the
//! scenario files the run wrote, never timed), `--fast` and a user's
//! `rascal run` of the same scenarios play them without pauses.

use crate::common;
use common::{code, stderr, stdout};
use rascal_exec::agents::scripted::{builtin_at, Step, Tempo};
use std::path::{Path, PathBuf};

/// The scenario a candidate of `run` played (its `scenario.json`).
fn played(repo: &Path, run: &str, candidate: &str) -> Vec<Step> {
    let repo = git2::Repository::open(repo).unwrap();
    let file = rascal_exec::git::workspace::files_dir(&repo)
        .join("runs")
        .join(run)
        .join(candidate)
        .join("scenario.json");
    serde_json::from_slice(&std::fs::read(&file).unwrap_or_else(|e| panic!("{file:?}: {e}")))
        .unwrap()
}

/// The sample repository `demo --keep` kept, from its output.
pub(crate) fn kept_of(out: &str) -> PathBuf {
    out.lines()
        .find_map(|l| l.strip_prefix("kept the sample repository at "))
        .expect("kept path")
        .into()
}

/// Remove a kept sample repository and the run files it has outside it.
pub(crate) fn forget(kept: &Path) {
    if let Ok(repo) = git2::Repository::open(kept) {
        let _ = std::fs::remove_dir_all(rascal_exec::git::workspace::files_dir(&repo));
    }
    let _ = std::fs::remove_dir_all(kept);
}

pub(crate) fn run_id(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("rascal run "))
        .and_then(|l| l.split_whitespace().next())
        .expect("run id in output")
        .to_string()
}

const DEMO: &[(&str, &str)] = &[
    ("careful", "demo-fix-on-feedback"),
    ("hasty", "demo-broken"),
    ("sneaky", "demo-denied"),
    ("lazy", "demo-lazy"),
];

#[test]
fn the_demo_plays_its_agents_at_a_watchable_pace_and_fast_does_not() {
    for (flags, tempo) in [(&[][..], Tempo::Watchable), (&["--fast"][..], Tempo::Fast)] {
        let mut args = vec!["demo", "--headless", "--keep"];
        args.extend_from_slice(flags);
        let o = std::process::Command::new(common::bin())
            .args(&args)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let out = stdout(&o);
        assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
        assert!(out.contains("pick: careful"), "{out}");
        let kept = kept_of(&out);
        let run = run_id(&out);
        for (candidate, scenario) in DEMO {
            assert_eq!(
                played(&kept, &run, candidate),
                builtin_at(scenario, tempo).unwrap(),
                "{candidate} with {flags:?}"
            );
        }
        forget(&kept);
    }
}

#[test]
fn a_users_run_of_the_demo_scenarios_is_not_paced() {
    let dir = tempfile::tempdir().unwrap();
    rascal::cli::demo::create_sample(dir.path()).unwrap();
    let o = common::rascal_in(
        dir.path(),
        &["run", "--spec", "shout", "--agent", "lazy", "--headless"],
    );
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "lazy fails: {out}{}", stderr(&o));
    assert_eq!(
        played(dir.path(), &run_id(&out), "lazy"),
        builtin_at("demo-lazy", Tempo::Fast).unwrap()
    );
    assert_ne!(
        builtin_at("demo-lazy", Tempo::Fast),
        builtin_at("demo-lazy", Tempo::Watchable),
        "the test could tell them apart"
    );
}

/// `rascal demo --contested` headless, as CI would run it: exit 4
/// (CONTESTED), no pick, and the question with the probe's calls and each
/// candidate's output; answered with `rascal select`, the pick is made.
#[test]
fn the_contested_demo_ends_contested_with_the_probes_question() {
    let o = std::process::Command::new(common::bin())
        .args(["demo", "--contested", "--headless", "--fast", "--keep"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let out = stdout(&o);
    assert_eq!(code(&o), 4, "{out}{}", stderr(&o));
    for want in [
        "pick: none — the discriminator `prober` found 2 inputs where ascii, careful differ",
        "question — which is right? The discriminator's probe gives them different outputs:",
        "  shout(\"Straße\"): ascii → \"HELLO, STRAßE!\" · careful → \"HELLO, STRASSE!\"",
        "run verdict CONTESTED (exit 4)",
    ] {
        assert!(out.contains(want), "{want}\n{out}");
    }
    let kept = kept_of(&out);
    let run = run_id(&out);
    let select = std::process::Command::new(common::bin())
        .args(["select", &run, "careful"])
        .current_dir(&kept)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(code(&select), 0, "{}{}", stdout(&select), stderr(&select));
    forget(&kept);
}
