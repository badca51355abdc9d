//! `rascal doctor` asks each check's toolchain `--version` in the sandbox
//! the check runs in (issue 50): a toolchain that works in your shell but
//! not in the sandbox — here a stand-in `cargo` that, like rustup's proxy,
//! needs a folder under your home that the sandbox does not show — is a
//! problem doctor names, with the variables that are not set, and exit 1;
//! one the sandbox sees passes with its version; the project's own script
//! is never run.

use crate::common::{bwrap, stderr, stdout, TestRepo};

/// A stand-in toolchain in its own folder: `cargo --version` works only
/// where `$HOME/.toolchain/ok` is visible.
fn stand_in(bin: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let cargo = bin.join("cargo");
    std::fs::write(
        &cargo,
        "#!/bin/sh\ntest -f \"$HOME/.toolchain/ok\" || { echo 'error: rustup could not choose a version of cargo to run' >&2; exit 1; }\necho 'cargo 9.9.9 (stand-in)'\n",
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn doctor(t: &TestRepo, bin: &std::path::Path, home: &std::path::Path) -> std::process::Output {
    std::process::Command::new(crate::common::bin())
        .arg("doctor")
        .current_dir(t.path())
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
        )
        .env("HOME", home)
        .env_remove("RUSTUP_HOME")
        .env_remove("CARGO_HOME")
        .output()
        .unwrap()
}

#[test]
fn doctor_runs_each_checks_toolchain_in_the_sandbox_and_names_what_is_missing() {
    if !bwrap() {
        return;
    }
    let bin = tempfile::tempdir().unwrap();
    stand_in(bin.path());
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".toolchain")).unwrap();
    std::fs::write(home.path().join(".toolchain/ok"), "").unwrap();
    let t = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            "agents:\n  a: { runtime: scripted, scenario: nothing }\n",
        ),
        (
            ".rascal/guardrails.yaml",
            "guardrails:\n  - { name: build, command: \"cargo build --offline\" }\n  - { name: tests, command: \"python3 -m unittest\" }\n  - { name: own, command: \"./scripts/check.sh\" }\n",
        ),
    ]);
    // In your shell the stand-in works…
    let shell = std::process::Command::new(bin.path().join("cargo"))
        .arg("--version")
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert!(shell.status.success());
    // …in the sandbox it does not: doctor says so, and what is not set.
    let o = doctor(&t, bin.path(), home.path());
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    let line = out
        .lines()
        .find(|l| l.starts_with("✗ checks: guardrail `build`"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("`cargo --version` fails in the sandbox its check runs in")
            && line.contains("rustup could not choose a version")
            && line.contains("not set here: CARGO_HOME, RUSTUP_HOME"),
        "{line}"
    );
    // Positive control: python3 is in the system folders the sandbox shows.
    assert!(
        out.lines().any(|l| l
            .starts_with("✓ checks: guardrail `tests` runs `python3` in the sandbox: Python 3")),
        "{out}"
    );
    // The project's own script is never run.
    assert!(!out.contains("guardrail `own`"), "{out}");
}
