//! The TUI's command-line edges: an unknown theme is a clear error (exit 2)
//! listing the shipped ones, even when the run would be headless; without a
//! terminal, `demo` and `attach` stay headless.

use std::process::Command;

fn rascal() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rascal"))
}

#[test]
fn unknown_theme_is_an_error_listing_the_available_ones() {
    let out = rascal()
        .args(["demo", "--headless", "--fast", "--theme", "solarized"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown theme `solarized`"), "{err}");
    assert!(err.contains("dark, light, high-contrast"), "{err}");
}

#[test]
fn attach_without_a_terminal_prints_the_run_and_names_a_missing_one() {
    let dir = tempfile::tempdir().unwrap();
    rascal::cli::demo::create_sample(dir.path()).unwrap();
    let out = rascal()
        .args(["-C", dir.path().to_str().unwrap(), "attach", "r-nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no run `r-nope`"));
}

#[test]
fn demo_without_keep_prints_no_replay_command_that_could_not_work() {
    let out = rascal()
        .args(["demo", "--headless", "--fast"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    // The sample repository is gone at the end: `rascal show` could not work.
    assert!(!text.contains("replay:"), "{text}");
    // The four agents ran; `lazy` failed on test integrity.
    assert!(
        text.contains("[lazy   ] ✗ guardrails/test-integrity"),
        "{text}"
    );
    assert!(text.contains("pick: careful"), "{text}");
}
