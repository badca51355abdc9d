//! End to end: the real binary in tmux (200×50) runs `rascal demo`; keys
//! are sent like a user would and each step is checked on the captured
//! pane. Steps poll the pane against a deadline, never sleep fixed times.

use std::process::Command;

use crate::common;
use common::tmux::Tmux;

/// `rascal demo --keep --fast` in a fresh tmux server (200×50).
fn start_demo(name: &str) -> Tmux {
    start_demo_sized(name, 200, 50)
}

/// [`start_demo`] in a terminal `w`×`h`.
fn start_demo_sized(name: &str, w: u16, h: u16) -> Tmux {
    let bin = env!("CARGO_BIN_EXE_rascal");
    Tmux::start(
        name,
        w,
        h,
        "",
        &format!("{bin} demo --keep --fast; echo RASCAL-EXIT=$?"),
    )
}

/// `rascal demo --contested --keep --fast` in a fresh tmux server.
fn start_contested_demo(name: &str) -> Tmux {
    let bin = env!("CARGO_BIN_EXE_rascal");
    Tmux::start(
        name,
        200,
        50,
        "",
        &format!("{bin} demo --contested --keep --fast; echo RASCAL-EXIT=$?"),
    )
}

/// The run id and the kept repository, from the screen after quitting.
fn run_and_repo(s: &str) -> (String, String) {
    let run = s
        .split("replay: rascal show ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("run id")
        .to_string();
    let repo = s
        .split("kept the sample repository at ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("kept repository path")
        .to_string();
    (run, repo)
}

#[test]
fn demo_in_tmux_focus_detail_diff_compare_override_quit() {
    let bin = env!("CARGO_BIN_EXE_rascal");
    let t = start_demo("tour");

    // The dashboard: three columns, every verdict landed.
    let s = t.wait_for(
        "run finishes",
        &["finished PASS (exit 0)", "1 careful", "2 hasty", "3 sneaky"],
    );
    assert!(s.contains("✓agent ✓guard ✓perm"), "{s}");
    assert!(s.contains("✗guard"), "{s}");
    assert!(s.contains("✗perm"), "{s}");

    // Focus hasty, select its guardrails layer, open the layer detail.
    t.keys(&["2", "l", "Enter"]);
    let s = t.wait_for(
        "layer detail",
        &["hasty · ✗ guardrails", "build", "layer detail"],
    );
    assert!(s.contains("fail"), "{s}");

    // The diff view of hasty against the base.
    t.back_to_dashboard();
    t.keys(&["d"]);
    t.wait_for(
        "diff view",
        &["hasty · src/lib.rs", "unified", "pub fn shout"],
    );
    t.keys(&["s"]);
    t.wait_for("side by side", &["side by side"]);

    // The compare view.
    t.back_to_dashboard();
    t.keys(&["c"]);
    t.wait_for(
        "compare view",
        &["scoreboard · A = hasty", "ranking", "− only in B = "],
    );

    // Override hasty's failed guardrails with a reason.
    t.back_to_dashboard();
    t.keys(&["o"]);
    t.wait_for("override dialog", &["Override", "Reason (required)"]);
    t.type_text("flaky offline build");
    t.keys(&["Enter"]);
    // The checks its failure skipped never ran: still FAIL, and it says so.
    let s = t.wait_for(
        "override recorded",
        &[
            "recorded: override hasty",
            "still FAIL:",
            "skipped not accepted",
        ],
    );
    assert!(!s.contains("Reason (required)"), "dialog closed:\n{s}");
    assert!(s.contains("✗guard"), "{s}");

    // `o` again (on the skipped `tests` guardrail), with skipped: accepts
    // every check that never ran in the same step.
    t.keys(&["o"]);
    t.wait_for("override skipped", &["with skipped: also accept", "(Tab)"]);
    t.type_text("the offline build skips them");
    t.keys(&["Tab"]);
    t.wait_for("with skipped on", &["[x] with skipped"]);
    t.keys(&["Enter"]);
    t.wait_for("now passes", &["⊘guard", "PASS ⊘ (was FAIL)", "now PASS"]);
    // Compare says so too (issue 53: its scoreboard and ranking said FAIL).
    t.keys(&["c"]);
    let s = t.wait_for(
        "compare after the override",
        &[
            "scoreboard · A = hasty",
            "PASS ⊘ (was FAIL)",
            "a human overrode",
        ],
    );
    eprintln!("compare after the override:\n{s}");
    // Escalate the pick: compare no longer offers it as the pick.
    t.back_to_dashboard();
    t.keys(&["1", "!"]);
    t.wait_for("escalate dialog", &["Escalate careful", "Note (required)"]);
    t.type_text("unsure of the API");
    t.keys(&["Enter"]);
    t.wait_for("escalated", &["recorded: escalate careful"]);
    t.keys(&["c"]);
    let s = t.wait_for(
        "compare after the escalation",
        &[
            "comparator's pick: careful — not taken: it was escalated",
            "ESCALATED",
        ],
    );
    eprintln!("compare after the escalation:\n{s}");
    t.back_to_dashboard();

    // Quit: the run is over, so no question; the terminal is restored.
    t.keys(&["q"]);
    let s = t.wait_for("quit", &["RASCAL-EXIT=0", "replay: rascal show r-"]);
    assert!(!s.contains("scoreboard"), "{s}");

    // The override is a decision in the run's record, with its reason.
    let (run, repo) = run_and_repo(&s);
    let show = Command::new(bin)
        .args(["-C", &repo, "show", &run, "--json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&show.stdout).expect("show --json");
    let hasty = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "hasty")
        .unwrap();
    let d = &hasty["decisions"][0];
    assert_eq!(d["kind"], "override", "{doc:#}");
    assert_eq!(d["layer"], "guardrails");
    assert_eq!(d["reason"], "flaky offline build");
    let _ = std::fs::remove_dir_all(&repo);
}

#[test]
fn demo_in_tmux_select_then_finalize_commits_the_candidates_tree() {
    let t = start_demo("finalize");
    t.wait_for("run finishes", &["finished PASS (exit 0)", "1 careful"]);

    // Select careful (it passed: no question beyond the optional reason).
    t.keys(&["1", "Space"]);
    t.wait_for(
        "select dialog",
        &["Select careful as the winner", "Reason (optional)"],
    );
    t.type_text("smallest passing change");
    t.keys(&["Enter"]);
    t.wait_for("selected", &["selected careful · not finalized (F)"]);

    // F: the branch, the commit title and the PR body, before anything.
    t.keys(&["F"]);
    let s = t.wait_for(
        "finalize dialog",
        &[
            "Finalize careful",
            "branch   rascal/",
            "commit   ",
            "PR body  ",
        ],
    );
    assert!(
        s.contains("Verified by rascal run"),
        "the PR body preview:\n{s}"
    );
    t.keys(&["j", "j"]);
    t.wait_for("scrolled", &["from line 3"]);
    t.keys(&["Enter"]);
    let s = t.wait_for(
        "finalized",
        &[
            "selected careful · finalized on rascal/",
            "finalized: committed ",
        ],
    );
    assert!(!s.contains("Finalize careful"), "dialog closed:\n{s}");
    let branch = s
        .split("finalized on ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("branch")
        .to_string();

    t.keys(&["q"]);
    let s = t.wait_for("quit", &["RASCAL-EXIT=0", "replay: rascal show r-"]);
    let (run, repo) = run_and_repo(&s);

    // The branch holds exactly careful's verified tree, on the base.
    let doc = show_json(&repo, &run);
    let careful = crate::test_integrity::candidate(&doc, "careful");
    let git = git2::Repository::open(&repo).unwrap();
    let commit = git
        .find_reference(&format!("refs/heads/{branch}"))
        .unwrap_or_else(|e| panic!("branch {branch}: {e}"))
        .peel_to_commit()
        .unwrap();
    assert_eq!(
        commit.tree_id().to_string(),
        careful["tree"].as_str().unwrap()
    );
    assert_eq!(
        commit.parent_id(0).unwrap().to_string(),
        doc["base"].as_str().unwrap()
    );
    // And the run's record says so.
    assert_eq!(doc["selected"], "careful");
    assert_eq!(doc["finalized"]["branch"], branch.as_str());
    assert_eq!(doc["finalized"]["commit"], commit.id().to_string());
    let _ = std::fs::remove_dir_all(&repo);
}

#[test]
fn help_at_80x24_status_bar_ends_with_help_overlay_scrolls_to_the_legend() {
    let t = start_demo_sized("help", 80, 24);
    let s = t.wait_for("run finishes", &["finished PASS (exit 0)"]);
    // The status bar is cut to the width by priority, never before `? help`.
    let bar = s.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
    // (A key and its description are two cells: ` ? ` then ` help `.)
    assert!(
        bar.trim_end().ends_with(" ?  help"),
        "the status bar ends with `? help`: {bar:?}\n{s}"
    );
    assert!(bar.contains(" q  quit "), "{bar:?}");

    // `?` opens the overlay; at 80×24 it does not fit, so it scrolls.
    t.keys(&["?"]);
    let s = t.wait_for("help opens", &["keys · Esc, ? or q closes", "↓ more"]);
    assert!(s.contains("everywhere"), "{s}");
    assert!(!s.contains("marks"), "the legend is below the fold:\n{s}");
    t.keys(&[
        "j", "PageDown", "PageDown", "PageDown", "PageDown", "PageDown",
    ]);
    let s = t.wait_for(
        "help scrolled to the legend",
        &["legend", "marks", "✓ pass", "states", "↑ back up"],
    );
    assert!(s.contains("– off/skipped"), "{s}");

    // Esc closes it; the dashboard is back.
    t.keys(&["Escape"]);
    let s = t.wait_gone("help closes", &["keys · Esc, ? or q closes"]);
    assert!(s.contains("1 careful"), "{s}");

    t.keys(&["q"]);
    let s = t.wait_for("quit", &["RASCAL-EXIT=0"]);
    let (_, repo) = run_and_repo(&s);
    // Only the demo's own directory, whatever the narrow screen did to the line.
    if repo.contains("/rascal-demo-") {
        let _ = std::fs::remove_dir_all(&repo);
    }
}

/// Hasty's column, row by row: the demo's grid puts it second in the first
/// row at 80×24 and at 120×40, between the 4th and 5th `│` of a row.
fn hasty_rows(screen: &str) -> Vec<String> {
    screen
        .lines()
        .map(|l| l.split('│').nth(3).unwrap_or("").trim().to_string())
        .collect()
}

/// What hasty's column says of why it stands where it stands: the rows
/// between its layer strip and the rule above its log, joined.
fn hasty_standing(screen: &str) -> String {
    let rows = hasty_rows(screen);
    let strip = rows
        .iter()
        .position(|r| r.contains("guard") && r.contains("agent"))
        .unwrap_or_else(|| panic!("no layer strip in hasty's column:\n{screen}"));
    rows[strip + 1..]
        .iter()
        .take_while(|r| !r.starts_with('─'))
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ")
}

fn words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Issue 31, item 6: at 80×24 and 120×40 the failing check's whole
/// message is on screen (wrapped in its column, never ended in `…`); at
/// 80×24 the header keeps its wall clock and the status bar its `Tab`.
#[test]
fn the_failing_checks_whole_message_shows_at_80x24_and_120x40() {
    for (w, h) in [(80, 24), (120, 40)] {
        let t = start_demo_sized(&format!("whole{w}"), w, h);
        let s = t.wait_for("run finishes", &["finished PASS (exit 0)"]);
        let standing = hasty_standing(&s);
        let header = s.lines().next().unwrap_or("");
        let bar = s.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
        t.keys(&["q"]);
        let end = t.wait_for("quit", &["RASCAL-EXIT=0"]);
        let (run, repo) = run_and_repo(&end);
        let reason = crate::test_integrity::candidate(&show_json(&repo, &run), "hasty")["reason"]
            .as_str()
            .expect("hasty's reason")
            .to_string();
        assert!(reason.starts_with("guardrails build: "), "{reason}");
        assert!(
            reason.chars().count() > 38,
            "longer than its column: {reason}"
        );
        // Wrapped at spaces, so its words in order, none cut.
        assert_eq!(words(&standing), words(&reason), "{w}×{h}:\n{s}");
        assert!(!standing.contains('…'), "{w}×{h}: {standing}");
        assert!(
            header.contains(" · wall ")
                && header.trim_end().ends_with(|c: char| c.is_ascii_digit()),
            "{w}×{h}: the wall clock is whole: {header:?}"
        );
        for k in [" Tab  next", " F  finalize", " c  compare"] {
            assert!(bar.contains(k), "{w}×{h}: {k} in {bar:?}");
        }
        if repo.contains("/rascal-demo-") {
            let _ = std::fs::remove_dir_all(&repo);
        }
    }
}

/// Run `run` as `rascal show RUN --json` gives it.
fn show_json(repo: &str, run: &str) -> serde_json::Value {
    serde_json::from_slice(
        &Command::new(env!("CARGO_BIN_EXE_rascal"))
            .args(["-C", repo, "show", run, "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .expect("show --json")
}

/// The keys of the demo tour as README.md and docs/guide.md write them:
/// the backticked words of the paragraph that starts with `start`, up to
/// `and \`q\``, outside parentheses (those say what a key does, or what
/// else one could press), that are keys (one character, or a key's name).
fn tour_keys(doc: &str, start: &str) -> Vec<String> {
    let from = doc
        .find(start)
        .unwrap_or_else(|| panic!("no tour ({start})"));
    let rest = &doc[from..];
    let end = rest.find("and `q`").expect("the tour ends with `q`") + "and `q`".len();
    let key = |w: &str| w.chars().count() == 1 || ["Enter", "Esc", "Space", "Tab"].contains(&w);
    let (mut depth, mut in_tick, mut word, mut out) = (0usize, false, String::new(), Vec::new());
    for ch in rest[..end].chars() {
        match ch {
            '`' if in_tick => {
                if depth == 0 && key(&word) {
                    out.push(std::mem::take(&mut word));
                }
                word.clear();
                in_tick = false;
            }
            '`' => in_tick = true,
            c if in_tick => word.push(c),
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    out
}

/// What the tour is, key by key — and what `play` sends.
const TOUR: &[&str] = &[
    "2", "l", "Enter", "Esc", "d", "Esc", "c", "Esc", "o", "Enter", "1", "Space", "Enter", "F",
    "Enter", "q",
];

#[test]
fn the_readme_and_guide_tours_are_the_keys_a_user_types_and_they_work() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let guide = std::fs::read_to_string(format!("{root}/docs/guide.md")).unwrap();
    assert_eq!(tour_keys(&readme, "Try, once the run has finished:"), TOUR);
    assert_eq!(
        tour_keys(&guide, "and, once the run has\nfinished, try:"),
        TOUR
    );

    // Played as written, each key reaches the screen the tour names.
    let t = start_demo("readme-tour");
    t.wait_for("run finishes", &["finished PASS (exit 0)", "1 careful"]);
    t.keys(&["2", "l", "Enter"]);
    t.wait_for("layer detail", &["hasty · ✗ guardrails", "layer detail"]);
    t.back_to_dashboard();
    t.keys(&["d"]);
    t.wait_for("diff", &["hasty · src/lib.rs", "unified"]);
    t.back_to_dashboard();
    t.keys(&["c"]);
    t.wait_for(
        "compare with the pick",
        &["scoreboard · A = hasty · B = careful"],
    );
    t.back_to_dashboard();
    t.keys(&["o"]);
    t.wait_for("override", &["Reason (required)"]);
    t.type_text("flaky offline build");
    t.keys(&["Enter"]);
    t.wait_for("overridden", &["recorded: override hasty"]);
    t.keys(&["1", "Space"]);
    t.wait_for(
        "select",
        &["Select careful as the winner", "Reason (optional)"],
    );
    t.keys(&["Enter"]);
    t.wait_for("selected", &["selected careful · not finalized (F)"]);
    t.keys(&["F"]);
    t.wait_for("finalize preview", &["Finalize careful", "PR body  "]);
    t.keys(&["Enter"]);
    t.wait_for("finalized", &["finalized: committed "]);
    t.keys(&["q"]);
    let s = t.wait_for("quit", &["RASCAL-EXIT=0", "replay: rascal show r-"]);
    let (_, repo) = run_and_repo(&s);
    let _ = std::fs::remove_dir_all(&repo);
}

/// The contested demo as a new user meets it: two candidates pass
/// everything, the scripted discriminator's probe finds inputs where their
/// `shout` differs, and the run ends CONTESTED (exit 4), not PASS. `a`
/// puts the question — the probe's calls and each candidate's output — and
/// one digit answers it: the answer is the selection, journaled with the
/// example as its reason, and F commits that candidate. `0` says neither
/// is right: a retry whose feedback is the example.
#[test]
fn the_contested_demo_asks_the_probes_question_and_one_key_answers_it() {
    let t = start_contested_demo("contested");
    let s = t.wait_for(
        "run finishes contested",
        &["finished CONTESTED (exit 4)", "1 careful", "2 ascii"],
    );
    assert!(!s.contains("finished PASS"), "{s}");
    // The layer detail of careful's guardrails: its test run, step by step.
    t.keys(&["1", "l", "Enter", "j", "j", "j", "j", "j", "j"]);
    t.wait_for(
        "the test run's steps",
        &["careful · ✓ guardrails", "time: own run ", "canaries "],
    );
    t.back_to_dashboard();
    t.keys(&["a"]);
    let s = t.wait_for(
        "the question",
        &[
            "The discriminator's probe gives them different outputs",
            "who is right here? 1 ascii · 2 careful",
        ],
    );
    assert!(
        s.contains("shout(\"Straße\"): ascii → \"HELLO, STRAßE!\" · careful → \"HELLO, STRASSE!\""),
        "{s}"
    );
    // `0`: neither is right — a retry with the example as its feedback,
    // for the user to finish; Esc leaves it unsent.
    t.keys(&["0"]);
    t.wait_for(
        "neither: the retry dialog",
        &[
            "Neither candidate is right here:",
            "shout(\"Zoë\"): ascii",
            "What is right:",
        ],
    );
    // Esc and `a` in one write would read as Alt-a: wait for the close.
    t.keys(&["Escape"]);
    t.wait_gone("the retry closed", &["Neither candidate is right here:"]);
    t.keys(&["a"]);
    t.wait_for(
        "the question again",
        &["who is right here? 1 ascii · 2 careful"],
    );
    t.keys(&["2"]);
    t.wait_for("answered", &["selected careful · not finalized (F)"]);
    t.keys(&["F"]);
    t.wait_for("finalize dialog", &["Finalize careful", "branch   rascal/"]);
    t.keys(&["Enter"]);
    t.wait_for("finalized", &["selected careful · finalized on rascal/"]);
    t.keys(&["q"]);
    let s = t.wait_for("quit", &["RASCAL-EXIT=", "replay: rascal show r-"]);
    let (run, repo) = run_and_repo(&s);
    let doc = show_json(&repo, &run);
    assert_eq!(doc["selected"], "careful", "{doc}");
    let careful = crate::test_integrity::candidate(&doc, "careful");
    let reason = careful["decisions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["kind"] == "select")
        .map(|d| d["reason"].to_string())
        .unwrap_or_default();
    assert!(
        reason.contains("careful is right here") && reason.contains("Straße"),
        "the answer's reason quotes the example: {careful}"
    );
    assert_eq!(doc["state"], "contested");
    assert_eq!(doc["finalized"]["candidate"], "careful");
    let _ = std::fs::remove_dir_all(&repo);
}
