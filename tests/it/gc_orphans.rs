//! `rascal gc --orphans` (issue 31, item 9): the files of a repository that
//! no longer exists (a demo's sample repository, gone with its temp
//! directory) are listed first by `--dry-run` and removed by `gc`; those of
//! a repository that exists stay. The real binary with a private
//! `XDG_STATE_HOME`.

use crate::common;
use common::{code, stderr, stdout, TestRepo};
use std::path::{Path, PathBuf};
use std::process::Command;

const AGENTS: &str = "agents:\n  quick: { runtime: scripted, steps: [{ do: write, path: b.txt, content: \"b\\n\" }] }\nstrategy: { agents: [quick] }\n";

fn rascal(dir: &Path, state: &Path, args: &[&str]) -> std::process::Output {
    Command::new(common::bin())
        .args(args)
        .current_dir(dir)
        .env("XDG_STATE_HOME", state)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// The files directory (under `state`) that names `repo` as its owner.
fn files_of(state: &Path, repo: &Path) -> PathBuf {
    let git = repo.join(".git").canonicalize().unwrap();
    std::fs::read_dir(state.join("rascal"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|d| {
            std::fs::read_to_string(d.join("repository"))
                .is_ok_and(|t| Path::new(t.trim()) == git.as_path())
        })
        .unwrap_or_else(|| panic!("no files directory names {}", git.display()))
}

#[test]
fn gc_orphans_removes_the_files_of_repositories_that_are_gone() {
    let state = tempfile::tempdir().unwrap();
    let gone = TestRepo::new(&[(".rascal/config.yaml", AGENTS), ("a.txt", "a\n")]);
    let kept = TestRepo::new(&[(".rascal/config.yaml", AGENTS), ("a.txt", "a\n")]);
    for t in [&gone, &kept] {
        let o = rascal(t.path(), state.path(), &["run", "add b", "--headless"]);
        assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    }
    let orphan = files_of(state.path(), gone.path());
    let own = files_of(state.path(), kept.path());
    let TestRepo { dir, .. } = gone;
    dir.close().unwrap();

    // Listed first, nothing removed.
    let o = rascal(kept.path(), state.path(), &["gc", "--orphans", "--dry-run"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    let first = out.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("orphan ")
            && first.contains(&orphan.display().to_string())
            && first.contains("would free"),
        "{out}"
    );
    assert!(!out.contains(&own.display().to_string()), "{out}");
    assert!(orphan.exists() && own.exists());

    // Outside any repository it does only that.
    let elsewhere = tempfile::tempdir().unwrap();
    let o = rascal(elsewhere.path(), state.path(), &["gc", "--orphans"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).starts_with("orphan "), "{}", stdout(&o));
    assert!(!orphan.exists(), "the orphan was not removed");
    assert!(own.exists(), "a living repository's files were removed");
    let o = rascal(kept.path(), state.path(), &["gc", "--orphans", "--dry-run"]);
    assert!(stdout(&o).starts_with("orphans: none"), "{}", stdout(&o));
}
