//! After finalize, the other candidates' changes still read (issue 31,
//! item 2): finalize removes their workspaces, but each verified change
//! tree was kept first, so the diff view, the compare view and `y` copy
//! (the TUI's `changes` functions) read the same text after as before.

use crate::common;
use common::tmux::Tmux;
use common::{code, stderr, stdout, TestRepo};
use rascal_engine::changes::{compare_text, diff_text, Change};

/// Three candidates, three different changes to `src/lib.rs` (and one a
/// new file), every one passing.
const AGENTS: &str = r#"agents:
  careful:
    runtime: scripted
    steps:
      - { do: write, path: src/lib.rs, content: "pub fn answer() -> u32 {\n    42\n}\n" }
  hasty:
    runtime: scripted
    steps:
      - { do: write, path: src/lib.rs, content: "pub fn answer() -> u32 { 41 + 1 }\n" }
      - { do: write, path: src/notes.txt, content: "hasty was here\n" }
  sneaky:
    runtime: scripted
    steps:
      - { do: write, path: src/lib.rs, content: "pub fn answer() -> u32 {\n    6 * 7\n}\n" }
strategy: { mode: compare, agents: [careful, hasty, sneaky] }
"#;

const IDS: [&str; 3] = ["careful", "hasty", "sneaky"];

fn repo() -> TestRepo {
    let t = TestRepo::new(&[
        (".rascal/config.yaml", AGENTS),
        (
            "src/lib.rs",
            "pub fn answer() -> u32 {\n    todo!()\n}\n\npub fn other() {}\n",
        ),
    ]);
    let mut cfg = t.repo.config().unwrap();
    cfg.set_str("user.name", "Tess Ter").unwrap();
    cfg.set_str("user.email", "tess@example.invalid").unwrap();
    t
}

/// Each candidate's change as the TUI finds it, from `rascal show --json`.
fn changes(t: &TestRepo, run: &str) -> (String, Vec<Change>) {
    let o = t.rascal(&["show", run, "--json"]);
    let doc: serde_json::Value =
        serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    let changes = IDS
        .iter()
        .map(|id| {
            let c = doc["candidates"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["id"] == *id)
                .unwrap_or_else(|| panic!("no {id}: {doc:#}"));
            Change {
                worktree: c["worktree"].as_str().unwrap().into(),
                tree: c["tree"].as_str().map(String::from),
            }
        })
        .collect();
    (doc["base"].as_str().unwrap().to_string(), changes)
}

/// Every candidate's diff text and every ordered pair's compare text.
fn views(t: &TestRepo, run: &str) -> (Vec<String>, Vec<String>) {
    let (base, ch) = changes(t, run);
    let diffs = ch
        .iter()
        .map(|c| diff_text(t.path(), run, &base, c).unwrap_or_else(|e| format!("error: {e}")))
        .collect();
    let mut pairs = Vec::new();
    for a in 0..ch.len() {
        for b in 0..ch.len() {
            if a != b {
                pairs.push(
                    compare_text(t.path(), run, &base, &ch[a], &ch[b])
                        .unwrap_or_else(|e| format!("error: {e}")),
                );
            }
        }
    }
    (diffs, pairs)
}

/// Run the three agents; the run's id.
fn run_three(t: &TestRepo) -> String {
    let o = t.rascal(&["run", "make answer return 42", "--headless"]);
    stdout(&o)
        .lines()
        .find_map(|l| l.strip_prefix("replay: rascal show "))
        .unwrap_or_else(|| panic!("no replay line: {}{}", stdout(&o), stderr(&o)))
        .to_string()
}

/// The home screen's `D` removes a finished run's workspaces and keeps
/// each change first: every diff and compare text reads the same after.
/// Once `rascal gc` removed the run's files too, the views say so instead
/// of `changed nothing` or `identical`.
#[test]
fn the_home_screens_d_keeps_every_change_and_gc_makes_the_views_say_they_are_gone() {
    let t = repo();
    let run = run_three(&t);
    let (_, ch) = changes(&t, &run);
    let before = views(&t, &run);
    assert!(before.0.iter().all(|d| d.contains("+")), "{before:#?}");
    let bin = env!("CARGO_BIN_EXE_rascal");
    let tmux = Tmux::start(
        "home-d",
        120,
        30,
        "",
        &format!("cd {} && {bin}", t.path().display()),
    );
    tmux.wait_for("home", &["1 run", &run]);
    tmux.keys(&["D"]);
    tmux.wait_for("asked", &["remove"]);
    tmux.keys(&["y"]);
    tmux.wait_for("removed", &[&format!("removed {run}'s workspaces")]);
    tmux.keys(&["q"]);
    for c in &ch {
        assert!(!c.worktree.exists(), "{} was removed", c.worktree.display());
    }
    assert_eq!(
        views(&t, &run),
        before,
        "every change reads the same after D"
    );

    let o = t.rascal(&["gc", "--run", &run]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let (diffs, pairs) = views(&t, &run);
    for d in diffs.iter().chain(&pairs) {
        assert!(
            d.starts_with("error: ")
                && d.contains("can no longer be read")
                && d.contains("rascal gc"),
            "{d}"
        );
    }
}

#[test]
fn the_other_candidates_changes_read_the_same_after_finalize() {
    let t = repo();
    let run = run_three(&t);
    let (_, ch) = changes(&t, &run);
    assert!(ch.iter().all(|c| c.tree.is_some()), "{ch:?}");

    let (diffs, pairs) = views(&t, &run);
    // Three different changes: each diff has its own lines, no two are
    // identical.
    assert!(diffs[0].contains("+    42"), "{}", diffs[0]);
    assert!(
        diffs[1].contains("+pub fn answer() -> u32 { 41 + 1 }"),
        "{}",
        diffs[1]
    );
    assert!(diffs[1].contains("+hasty was here"), "{}", diffs[1]);
    assert!(diffs[2].contains("+    6 * 7"), "{}", diffs[2]);
    assert!(pairs.iter().all(|p| !p.is_empty()), "{pairs:#?}");

    let o = t.rascal(&["select", &run, "careful"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = t.rascal(&["finalize", &run]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("removed the workspaces of hasty, sneaky"),
        "{}",
        stdout(&o)
    );
    for c in &ch[1..] {
        assert!(!c.worktree.exists(), "{} was removed", c.worktree.display());
    }

    let (after_diffs, after_pairs) = views(&t, &run);
    for (i, id) in IDS.iter().enumerate() {
        assert_eq!(after_diffs[i], diffs[i], "{id}'s diff after finalize");
    }
    assert_eq!(after_pairs, pairs, "the compare texts after finalize");

    // In the TUI: hasty's diff view shows its change, not `changed nothing`.
    let bin = env!("CARGO_BIN_EXE_rascal");
    let tmux = Tmux::start(
        "kept",
        120,
        40,
        "",
        &format!("cd {} && {bin} attach {run}", t.path().display()),
    );
    tmux.wait_for("the run's record", &["finished", "1 careful", "2 hasty"]);
    tmux.keys(&["2", "d"]);
    let s = tmux.wait_for("hasty's diff", &["hasty · src/lib.rs", "41 + 1"]);
    assert!(!s.contains("changed nothing"), "{s}");
    assert!(s.contains("src/notes.txt"), "{s}");
}
