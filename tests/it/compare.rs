//! Compare-N, decisions, finalize and reports, end to end with the real
//! binary on real repositories.

use crate::common;
use common::{code, stderr, stdout, TestRepo};
use std::process::Command;

const AGENTS: &str = r#"agents:
  good:
    runtime: scripted
    steps:
      - { do: write, path: src/b.rs, content: "pub fn b() -> u32 {\n    41 + 1\n}\n" }
  broken:
    runtime: scripted
    steps:
      - { do: write, path: src/b.rs, content: "pub fn b() -> u32 {\n    41 + 1 // TODO tidy\n}\n" }
  outlier:
    runtime: scripted
    steps:
      - { do: write, path: src/b.rs, content: "pub fn b() -> u32 { compute() }\n" }
      - { do: write, path: src/compute.rs, content: "pub fn compute() -> u32 {\n    let mut x = 0;\n    for _ in 0..42 {\n        x += 1;\n    }\n    x\n}\n" }
      - { do: write, path: $RASCAL_ARTIFACTS_DIR/commit_message.txt, content: "feat(b): compute b\n\nLonger body.\n" }
strategy: { mode: compare, agents: [good, broken, outlier] }
"#;

const GUARDRAILS: &str = "guardrails:\n  - { name: no-todo, patterns: ['TODO'] }\n  - { name: has-b, command: \"test -f src/b.rs\", timeout: 10s }\n";

fn repo() -> TestRepo {
    let t = TestRepo::new(&[
        (".rascal/config.yaml", AGENTS),
        (".rascal/guardrails.yaml", GUARDRAILS),
        ("src/a.rs", "pub fn a() {}\n"),
    ]);
    let mut cfg = t.repo.config().unwrap();
    cfg.set_str("user.name", "Tess Ter").unwrap();
    cfg.set_str("user.email", "tess@example.invalid").unwrap();
    t
}

fn json(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}{}", stdout(o), stderr(o)))
}

#[test]
fn comparator_picks_the_passing_consensus_candidate_and_explains_why() {
    let t = repo();
    let o = t.rascal(&["run", "make b return 42", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let doc = json(&o);
    let ranking = &doc["ranking"];
    let order: Vec<&str> = ranking["positions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["candidate"].as_str().unwrap())
        .collect();
    assert_eq!(order, vec!["good", "outlier", "broken"], "{ranking:#}");
    assert_eq!(ranking["pick"], "good");
    let reason = ranking["positions"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("all layers pass"), "{reason}");
    // Only passing candidates vote: `broken` (which resembles `good`) has no
    // consensus score and does not lift `good`; between the two passing
    // ones the smaller change wins.
    assert_eq!(ranking["positions"][2]["consensus"], 0.0, "{ranking:#}");
    assert_eq!(
        ranking["positions"][0]["consensus"], ranking["positions"][1]["consensus"],
        "{ranking:#}"
    );
    assert!(reason.contains("1 file, 3 lines"), "{reason}");
    // The 3×3 matrix is symmetric with ones on the diagonal.
    let m = ranking["matrix"].as_array().unwrap();
    assert_eq!(m.len(), 3);
    for (i, row) in m.iter().enumerate() {
        assert_eq!(row[i], 1.0);
        for (j, v) in row.as_array().unwrap().iter().enumerate() {
            assert_eq!(*v, m[j][i]);
        }
    }
    // Nothing selected without --auto or a human.
    assert!(doc.get("selected").is_none());
}

#[test]
fn auto_selects_and_finalizes_exactly_the_change_and_pushes_to_a_bare_remote() {
    let t = repo();
    let bare = tempfile::tempdir().unwrap();
    git2::Repository::init_bare(bare.path()).unwrap();
    let remote = bare.path().to_str().unwrap();
    let o = t.rascal(&[
        "run",
        "make b return 42",
        "--auto",
        "--push",
        remote,
        "--quiet",
    ]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(out.contains("[good] selected by rascal --auto"), "{out}");
    let branch_line = out
        .lines()
        .find(|l| l.starts_with("committed "))
        .expect(&out);
    let branch = branch_line
        .split("on branch ")
        .nth(1)
        .unwrap()
        .trim()
        .to_string();
    assert!(branch.starts_with("rascal/make-b-return-42-r-"), "{branch}");

    // The branch holds exactly the selected change on top of the base.
    let commit = t
        .repo
        .find_reference(&format!("refs/heads/{branch}"))
        .unwrap()
        .peel_to_commit()
        .unwrap();
    assert_eq!(commit.parent_id(0).unwrap(), t.head());
    let diff = t
        .repo
        .diff_tree_to_tree(
            Some(&commit.parent(0).unwrap().tree().unwrap()),
            Some(&commit.tree().unwrap()),
            None,
        )
        .unwrap();
    let paths: Vec<String> = diff
        .deltas()
        .map(|d| d.new_file().path().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(paths, vec!["src/b.rs"]);
    let blob = commit
        .tree()
        .unwrap()
        .get_path(std::path::Path::new("src/b.rs"))
        .unwrap();
    let content = t.repo.find_blob(blob.id()).unwrap().content().to_vec();
    assert_eq!(content, b"pub fn b() -> u32 {\n    41 + 1\n}\n");
    // Generated message (the agent wrote no commit_message.txt).
    assert!(commit
        .message()
        .unwrap()
        .starts_with("rascal: make b return 42"));

    // And the bare remote has the branch at the same commit.
    let remote_repo = git2::Repository::open_bare(bare.path()).unwrap();
    let pushed = remote_repo
        .find_reference(&format!("refs/heads/{branch}"))
        .unwrap()
        .target()
        .unwrap();
    assert_eq!(pushed, commit.id());
}

/// `rascal finalize RUN`, which must succeed; its output and the commit.
fn finalize<'r>(t: &'r TestRepo, id: &str) -> (std::process::Output, git2::Commit<'r>) {
    let o = t.rascal(&["finalize", id]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let branch = stdout(&o)
        .lines()
        .next()
        .unwrap()
        .split("on branch ")
        .nth(1)
        .unwrap()
        .to_string();
    let commit = t
        .repo
        .find_reference(&format!("refs/heads/{branch}"))
        .unwrap()
        .peel_to_commit()
        .unwrap();
    (o, commit)
}

/// Override `broken`'s failed `no-todo` guardrail with a reason.
fn override_todo(t: &TestRepo, id: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "override",
        id,
        "broken",
        "--layer",
        "guardrails",
        "--check",
        "no-todo",
        "--reason",
        "TODO is tracked in #12",
    ];
    args.extend_from_slice(extra);
    t.rascal(&args)
}

fn run_id(t: &TestRepo) -> String {
    let o = t.rascal(&["run", "make b return 42", "--json"]);
    json(&o)["run"].as_str().unwrap().to_string()
}

#[test]
fn a_human_override_changes_the_selection_and_shows_in_the_pr_body() {
    let t = repo();
    let id = run_id(&t);
    // An override needs a reason and a failed check.
    let o = t.rascal(&[
        "override",
        &id,
        "broken",
        "--layer",
        "guardrails",
        "--check",
        "no-todo",
        "--reason",
        " ",
    ]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("needs a reason"), "{}", stderr(&o));
    let o = t.rascal(&[
        "override",
        &id,
        "broken",
        "--layer",
        "guardrails",
        "--check",
        "no-such-check",
        "--reason",
        "x",
    ]);
    assert_eq!(code(&o), 2, "nothing by that name to override");
    let o = override_todo(&t, &id, &[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // The checks skipped after that failure never ran: still FAIL.
    let shown = json(&t.rascal(&["show", &id, "--json"]));
    let broken = shown["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "broken")
        .unwrap();
    assert_eq!(
        broken["effective_verdict"], "fail",
        "skipped checks are not verified"
    );
    // Accepting them too, explicitly, makes it pass.
    let o = override_todo(&t, &id, &["--with-skipped"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).contains(
            "FAIL → overridden by Tess Ter <tess@example.invalid>: TODO is tracked in #12"
        ),
        "{}",
        stdout(&o)
    );
    let o = t.rascal(&["select", &id, "broken", "--reason", "keeps the comment"]);
    assert_eq!(code(&o), 0);

    let shown = json(&t.rascal(&["show", &id, "--json"]));
    assert_eq!(shown["selected"], "broken");
    let broken = shown["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "broken")
        .unwrap();
    assert_eq!(broken["verdict"], "fail", "the original verdict is kept");
    assert_eq!(broken["effective_verdict"], "pass");

    let md = stdout(&t.rascal(&["report", &id, "--format", "md"]));
    assert!(md.contains("candidate **broken**"), "{md}");
    // Markdown: the `<…>` of the address as entities (no raw HTML).
    assert!(md.contains("- [x] no-todo — FAIL → overridden by Tess Ter &lt;tess@example.invalid&gt;: TODO is tracked in #&#8203;12"), "{md}");
    assert!(
        md.contains("### Guardrails") && md.contains("### Permissions"),
        "{md}"
    );
    assert!(md.contains("| 1 | good | PASS |"), "ranking table: {md}");
    assert!(md.contains("selected by Tess Ter"), "{md}");

    // Finalize commits broken's change, with its TODO.
    let (o, commit) = finalize(&t, &id);
    let blob = commit
        .tree()
        .unwrap()
        .get_path(std::path::Path::new("src/b.rs"))
        .unwrap();
    let text = String::from_utf8(t.repo.find_blob(blob.id()).unwrap().content().to_vec()).unwrap();
    assert!(text.contains("TODO"));
    let body_path = stdout(&o)
        .lines()
        .find_map(|l| l.strip_prefix("PR body: "))
        .unwrap()
        .to_string();
    let body = std::fs::read_to_string(body_path).unwrap();
    assert!(body.contains("overridden by Tess Ter"));
}

#[test]
fn agent_commit_message_with_conventional_title_is_used_and_artifacts_are_not_committed() {
    let t = repo();
    let id = run_id(&t);
    assert_eq!(code(&t.rascal(&["select", &id, "outlier"])), 0);
    let (_, commit) = finalize(&t, &id);
    assert!(
        commit
            .message()
            .unwrap()
            .starts_with("feat(b): compute b\n"),
        "{:?}",
        commit.message()
    );
    let tree = commit.tree().unwrap();
    assert!(tree
        .get_path(std::path::Path::new("commit_message.txt"))
        .is_err());
    assert!(tree
        .get_path(std::path::Path::new("src/compute.rs"))
        .is_ok());
}

#[test]
fn pr_is_opened_with_gh_when_installed() {
    let t = repo();
    let id = run_id(&t);
    assert_eq!(code(&t.rascal(&["select", &id, "good"])), 0);
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("gh-args.txt");
    let gh = bin.path().join("gh");
    std::fs::write(
        &gh,
        format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\n", log.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    let o = Command::new(common::bin())
        .args(["finalize", &id, "--pr"])
        .current_dir(t.path())
        .env("PATH", path)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("opened a pull request with gh"));
    let args: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(&args[..3], &["pr", "create", "--head"]);
    assert!(args[3].starts_with("rascal/make-b-return-42-"));
    assert!(args.contains(&"--body-file".to_string()));
    // Without --pr (or without gh) the command is printed instead.
    let o = t.rascal(&["finalize", &id]);
    assert!(
        stdout(&o).contains("open the pull request with:\n  gh pr create --head"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn sarif_and_json_reports_are_structurally_valid() {
    let t = repo();
    let id = run_id(&t);
    let sarif = json(&t.rascal(&["report", &id, "--format", "sarif"]));
    assert_eq!(sarif["version"], "2.1.0");
    assert!(sarif["$schema"].as_str().unwrap().contains("sarif-2.1.0"));
    let run = &sarif["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "rascal");
    let rule_ids: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let results = run["results"].as_array().unwrap();
    assert!(!results.is_empty());
    let mut located = 0;
    for r in results {
        let rule = r["ruleId"].as_str().unwrap();
        assert!(rule_ids.contains(&rule), "{rule} declared in driver.rules");
        assert!(["error", "warning", "note"].contains(&r["level"].as_str().unwrap()));
        assert!(r["message"]["text"].is_string());
        if let Some(locs) = r.get("locations") {
            let pl = &locs[0]["physicalLocation"];
            assert!(pl["artifactLocation"]["uri"].is_string());
            if let Some(line) = pl["region"]["startLine"].as_u64() {
                assert!(line >= 1);
            }
            located += 1;
        }
    }
    let todo = results
        .iter()
        .find(|r| r["ruleId"] == "guardrails/no-todo")
        .expect("the TODO finding");
    assert_eq!(todo["level"], "error");
    assert_eq!(
        todo["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "src/b.rs"
    );
    assert_eq!(
        todo["locations"][0]["physicalLocation"]["region"]["startLine"],
        2
    );
    assert!(located >= 1);

    let doc = json(&t.rascal(&["report", &id, "--format", "json"]));
    assert_eq!(doc["run"], id);
    assert_eq!(doc["candidates"].as_array().unwrap().len(), 3);
}

#[test]
fn n_candidates_of_one_agent_and_a_crash_does_not_stop_the_others() {
    let t = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            "agents:\n  good: { runtime: scripted, steps: [{ do: write, path: x.txt, content: \"x\\n\" }] }\n  crash: { runtime: command, command: [\"sh\", \"-c\", \"kill -9 $$\"] }\n",
        ),
        ("a.txt", "a\n"),
    ]);
    let o = t.rascal(&["run", "x", "--agent", "good,crash", "--n", "2", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let doc = json(&o);
    let ids: Vec<&str> = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["good", "good-2", "crash", "crash-2"]);
    for c in doc["candidates"].as_array().unwrap() {
        let expect = if c["agent"] == "good" { "pass" } else { "fail" };
        assert_eq!(c["verdict"], expect, "{c}");
    }
    let crash = &doc["candidates"][2]["reports"][0];
    assert!(
        crash["errored"].as_str().unwrap().contains("signal 9"),
        "{crash}"
    );
}

#[test]
fn on_no_pass_escalate_exits_3() {
    let t = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            "agents:\n  lazy: { runtime: scripted, scenario: nothing }\nstrategy: { agents: [lazy], on_no_pass: escalate }\n",
        ),
        ("a.txt", "a\n"),
    ]);
    let o = t.rascal(&["run", "x", "--headless"]);
    assert_eq!(code(&o), 3, "{}", stdout(&o));
    let id = stdout(&o)
        .lines()
        .find_map(|l| l.strip_prefix("replay: rascal show "))
        .unwrap()
        .to_string();
    assert!(
        stdout(&t.rascal(&["list"])).contains("ESCALATED"),
        "list says so"
    );
    let o = t.rascal(&["escalate", &id, "--note", "needs a human"]);
    assert_eq!(code(&o), 3);
    assert!(stdout(&o).contains("escalated by"));
}

fn judged_repo(judge_says: &str) -> TestRepo {
    judged_repo_with(judge_says, "judge: judge\n")
}

fn judged_repo_with(judge_says: &str, verification: &str) -> TestRepo {
    let agents = format!(
        r#"agents:
  first:
    runtime: scripted
    steps: [{{ do: write, path: src/b.rs, content: "pub fn b() -> u32 {{ 42 }}\n" }}]
  second:
    runtime: scripted
    steps: [{{ do: write, path: src/b.rs, content: "pub fn b() -> u32 {{ 42 }}\n" }}]
  judge:
    runtime: scripted
    steps: [{{ do: say, text: '{judge_says}' }}]
strategy: {{ agents: [first, second] }}
"#
    );
    TestRepo::new(&[
        (".rascal/config.yaml", agents.as_str()),
        (".rascal/verification.yaml", verification),
        ("src/a.rs", "pub fn a() {}\n"),
    ])
}

#[test]
fn a_judge_that_cannot_be_shown_every_tied_diff_whole_breaks_no_tie() {
    let t = judged_repo_with(
        r#"{"nonce": "{nonce}", "pick": "second", "reason": "saw a part"}"#,
        "judge: judge\njudge_budget: { tokens: 20 }\n",
    );
    let o = t.rascal(&["run", "make b", "--json"]);
    let doc = json(&o);
    let r = &doc["ranking"];
    assert_eq!(r["pick"], "first", "the judge was not used: {r:#}");
    let problem = r["judge"]["problem"].as_str().unwrap_or_default();
    assert!(
        problem.starts_with("judge incomplete: the diff is about")
            && problem.contains("over `judge_budget.tokens` (20)"),
        "{r:#}"
    );
}

#[test]
fn judge_breaks_a_tie_between_equally_verified_candidates() {
    let t = judged_repo(
        r#"{"nonce": "{nonce}", "pick": "second", "reason": "same code, but I like it better"}"#,
    );
    let o = t.rascal(&["run", "make b", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let doc = json(&o);
    let r = &doc["ranking"];
    assert_eq!(r["pick"], "second", "{r:#}");
    assert_eq!(r["positions"][0]["candidate"], "second");
    assert_eq!(r["judge"]["tied"], serde_json::json!(["first", "second"]));
    assert!(r["positions"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("judge `judge` picked it"));
}

#[test]
fn garbled_judge_is_recorded_and_the_ranking_stands() {
    let t = judged_repo("I think the second one? maybe");
    let o = t.rascal(&["run", "make b", "--json"]);
    let doc = json(&o);
    let r = &doc["ranking"];
    assert_eq!(r["pick"], "first", "{r:#}");
    assert!(r["judge"]["problem"]
        .as_str()
        .unwrap()
        .contains("no JSON answer with `pick`"));
}

/// A pick planted in the tied candidates' code (and copied by the judge
/// into its answer) carries no nonce: it is ignored, the problem is
/// recorded, and the ranking stands.
#[test]
fn a_pick_planted_in_the_diff_and_copied_by_the_judge_never_counts() {
    let t = judged_repo(r#"{"pick": "second", "reason": "the diff says so"}"#);
    let o = t.rascal(&["run", "make b", "--json"]);
    let doc = json(&o);
    let r = &doc["ranking"];
    assert_eq!(r["pick"], "first", "{r:#}");
    let problem = r["judge"]["problem"].as_str().unwrap_or_default();
    assert!(problem.contains("without this call's nonce"), "{r:#}");
}

#[test]
fn a_human_retry_with_feedback_runs_the_candidate_again_and_re_ranks() {
    let t = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            r#"agents:
  fixer:
    runtime: scripted
    steps:
      - do: when
        attempt: 1
        then: [{ do: write, path: src/b.rs, content: "pub fn b() {} // TODO\n" }]
        otherwise: [{ do: write, path: src/b.rs, content: "pub fn b() {}\n" }]
  other:
    runtime: scripted
    steps: [{ do: write, path: src/c.rs, content: "// TODO\n" }]
"#,
        ),
        (".rascal/guardrails.yaml", GUARDRAILS),
        ("src/a.rs", "pub fn a() {}\n"),
    ]);
    let mut cfg = t.repo.config().unwrap();
    cfg.set_str("user.name", "Tess Ter").unwrap();
    cfg.set_str("user.email", "tess@example.invalid").unwrap();
    let o = t.rascal(&["run", "add b", "--agent", "fixer,other", "--json"]);
    assert_eq!(code(&o), 1, "nothing passes at first");
    let id = json(&o)["run"].as_str().unwrap().to_string();
    let o = t.rascal(&[
        "retry",
        &id,
        "fixer",
        "--feedback",
        "remove the TODO",
        "--json",
    ]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let doc = json(&t.rascal(&["show", &id, "--json"]));
    let fixer = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "fixer")
        .unwrap();
    assert_eq!(fixer["verdict"], "pass", "{fixer:#}");
    assert_eq!(fixer["attempt"], 2);
    assert_eq!(fixer["attempts"][0]["feedback"], "remove the TODO");
    let retry = &fixer["decisions"][0];
    assert_eq!(retry["kind"], "retry");
    assert_eq!(retry["who"], "Tess Ter <tess@example.invalid>");
    assert_eq!(doc["ranking"]["pick"], "fixer");
    assert_eq!(doc["verdict"], "pass");
    assert_eq!(
        doc["candidates"].as_array().unwrap().len(),
        2,
        "the other candidate stays"
    );
    // Feedback is required.
    let o = t.rascal(&["retry", &id, "other", "--feedback", "  "]);
    assert_eq!(code(&o), 2);
}

#[test]
fn finalize_commits_only_what_was_verified() {
    let t = repo();
    let id = run_id(&t);
    // A failed candidate cannot be finalized without overrides (even
    // when a human insisted on selecting it).
    let o = t.rascal(&[
        "select",
        &id,
        "broken",
        "--force",
        "--reason",
        "see what happens",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = t.rascal(&["finalize", &id]);
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).contains("did not pass verification"),
        "{}",
        stderr(&o)
    );
    // The workspace changed after verification (say, a stray process wrote
    // a workflow): finalize commits the verified tree, which lacks it.
    assert_eq!(code(&t.rascal(&["select", &id, "good"])), 0);
    let shown = json(&t.rascal(&["show", &id, "--json"]));
    let good = shown["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "good")
        .unwrap()
        .clone();
    let wt = good["worktree"].as_str().unwrap().to_string();
    let verified_tree = good["tree"].as_str().expect("tree in --json").to_string();
    std::fs::create_dir_all(format!("{wt}/.github/workflows")).unwrap();
    std::fs::write(format!("{wt}/.github/workflows/x.yml"), "on: push\n").unwrap();
    // And an artifact that is a symlink to a host file is not read.
    let artifacts = t
        .files()
        .join("runs")
        .join(&id)
        .join("good")
        .join("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", artifacts.join("pr_body.md")).unwrap();
    let (o, commit) = finalize(&t, &id);
    assert_eq!(commit.tree_id().to_string(), verified_tree);
    assert!(commit
        .tree()
        .unwrap()
        .get_path(std::path::Path::new(".github"))
        .is_err());

    let body_path = stdout(&o)
        .lines()
        .find_map(|l| l.strip_prefix("PR body: "))
        .unwrap()
        .to_string();
    let body = std::fs::read_to_string(body_path).unwrap();
    assert!(
        !body.contains("Agent's summary"),
        "a symlinked artifact was followed"
    );
}

/// The run's verified tree of candidate `id`, from `show --json`.
fn verified_tree(t: &TestRepo, run: &str, id: &str) -> String {
    let shown = json(&t.rascal(&["show", run, "--json"]));
    shown["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap()["tree"]
        .as_str()
        .unwrap()
        .to_string()
}

fn branch_tip(t: &TestRepo, branch: &str) -> git2::Oid {
    t.repo
        .find_reference(&format!("refs/heads/{branch}"))
        .unwrap()
        .peel_to_commit()
        .unwrap()
        .id()
}

fn file_at(t: &TestRepo, commit: git2::Oid, path: &str) -> String {
    let tree = t.repo.find_commit(commit).unwrap().tree().unwrap();
    let id = tree.get_path(std::path::Path::new(path)).unwrap().id();
    String::from_utf8(t.repo.find_blob(id).unwrap().content().to_vec()).unwrap()
}

/// A run whose `good` candidate is selected; its id and base commit.
fn selected_run(t: &TestRepo) -> (String, git2::Oid) {
    let base = t.head();
    let id = run_id(t);
    assert_eq!(code(&t.rascal(&["select", &id, "good"])), 0);
    (id, base)
}

#[test]
fn finalize_refuses_a_branch_with_a_commit_it_did_not_make_and_new_branch_picks_a_fresh_one() {
    let t = repo();
    let (id, base) = selected_run(&t);
    let (_, mine) = finalize(&t, &id);
    let branch = format!("rascal/make-b-return-42-{id}");
    assert_eq!(branch_tip(&t, &branch), mine.id());
    // A human commits on the branch.
    let sig = git2::Signature::now("Hu Man", "hu@example.invalid").unwrap();
    let mut tb = t.repo.treebuilder(Some(&mine.tree().unwrap())).unwrap();
    tb.insert("NOTES.md", t.repo.blob(b"by hand\n").unwrap(), 0o100644)
        .unwrap();
    let tree = t.repo.find_tree(tb.write().unwrap()).unwrap();
    let theirs = t
        .repo
        .commit(
            Some(&format!("refs/heads/{branch}")),
            &sig,
            &sig,
            "docs: notes written by hand",
            &tree,
            &[&mine],
        )
        .unwrap();

    let o = t.rascal(&["finalize", &id]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{}{err}", stdout(&o));
    let short = &theirs.to_string()[..12];
    assert!(
        err.contains(&format!("{short} docs: notes written by hand")),
        "names the foreign commit: {err}"
    );
    assert!(
        !err.contains(&mine.id().to_string()[..12]),
        "finalize's own commit is not foreign: {err}"
    );
    assert!(err.contains("--new-branch"), "{err}");
    assert_eq!(branch_tip(&t, &branch), theirs, "the branch is unchanged");

    // --new-branch: a fresh name, the verified change on the run's base.
    let o = t.rascal(&["finalize", &id, "--new-branch"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let fresh = format!("{branch}-2");
    assert!(
        stdout(&o).contains(&format!("on branch {fresh}\n")),
        "{}",
        stdout(&o)
    );
    let commit = t.repo.find_commit(branch_tip(&t, &fresh)).unwrap();
    assert_eq!(commit.parent_id(0).unwrap(), base);
    assert_eq!(commit.tree_id().to_string(), verified_tree(&t, &id, "good"));
    assert_eq!(branch_tip(&t, &branch), theirs, "still unchanged");
}

#[test]
fn finalize_refuses_a_branch_a_human_created_under_its_name() {
    let t = repo();
    let (id, base) = selected_run(&t);
    let branch = format!("rascal/make-b-return-42-{id}");
    t.repo
        .branch(&branch, &t.repo.find_commit(base).unwrap(), false)
        .unwrap();
    let o = t.rascal(&["finalize", &id]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(
        stderr(&o).contains(&format!("{} initial", &base.to_string()[..12])),
        "{}",
        stderr(&o)
    );
    assert_eq!(branch_tip(&t, &branch), base);
}

#[test]
fn re_running_finalize_on_its_own_branch_keeps_the_same_commit() {
    let t = repo();
    let (id, _) = selected_run(&t);
    let (_, first) = finalize(&t, &id);
    // A second later a new commit would get another id.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let o = t.rascal(&["finalize", &id]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let branch = format!("rascal/make-b-return-42-{id}");
    assert_eq!(branch_tip(&t, &branch), first.id());
    assert!(
        stdout(&o).contains("already holds this run's commit"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn finalize_rebases_the_verified_change_onto_a_moved_base_and_says_so() {
    let t = repo();
    let (id, base) = selected_run(&t);
    // The base branch moves on: an unrelated file.
    t.write("src/a.rs", "pub fn a() -> u8 { 1 }\n");
    let tip = t.commit_all("a returns 1");
    let o = t.rascal(&["finalize", &id]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    let branch = format!("rascal/make-b-return-42-{id}");
    let commit = t.repo.find_commit(branch_tip(&t, &branch)).unwrap();
    assert_eq!(commit.parent_id(0).unwrap(), tip, "on the new tip");
    assert_ne!(tip, base);
    assert_eq!(
        file_at(&t, commit.id(), "src/a.rs"),
        "pub fn a() -> u8 { 1 }\n"
    );
    assert_eq!(
        file_at(&t, commit.id(), "src/b.rs"),
        "pub fn b() -> u32 {\n    41 + 1\n}\n"
    );
    let verified = verified_tree(&t, &id, "good");
    assert_ne!(commit.tree_id().to_string(), verified);
    assert!(out.contains("the base moved"), "{out}");
    assert!(out.contains("1 new commit since the run's base"), "{out}");
    assert!(out.contains("rebased onto"), "{out}");
    assert!(
        out.contains(&format!(
            "not byte-identical to the verified tree {}",
            &verified[..12]
        )),
        "{out}"
    );
    assert!(commit
        .message()
        .unwrap()
        .contains(&format!("Rascal-Verified-Tree: {verified}")));
    let body_path = out
        .lines()
        .find_map(|l| l.strip_prefix("PR body: "))
        .unwrap()
        .to_string();
    assert!(std::fs::read_to_string(body_path)
        .unwrap()
        .contains("not byte-identical"));
}

#[test]
fn finalize_refuses_a_moved_base_that_conflicts_and_no_rebase_commits_on_the_run_base() {
    let t = repo();
    let (id, base) = selected_run(&t);
    // The base branch gets its own src/b.rs.
    t.write("src/b.rs", "pub fn b() -> u32 { 7 }\n");
    let tip = t.commit_all("b returns 7");
    let o = t.rascal(&["finalize", &id]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{}{err}", stdout(&o));
    assert!(err.contains("conflicts"), "{err}");
    assert!(err.contains("    src/b.rs"), "names the file: {err}");
    assert!(err.contains("--no-rebase"), "{err}");
    let branch = format!("rascal/make-b-return-42-{id}");
    assert!(
        t.repo
            .find_reference(&format!("refs/heads/{branch}"))
            .is_err(),
        "nothing committed"
    );

    let o = t.rascal(&["finalize", &id, "--no-rebase"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    let commit = t.repo.find_commit(branch_tip(&t, &branch)).unwrap();
    assert_eq!(commit.parent_id(0).unwrap(), base, "on the run's base");
    assert_ne!(base, tip);
    assert_eq!(commit.tree_id().to_string(), verified_tree(&t, &id, "good"));
    assert!(out.contains("--no-rebase"), "{out}");
}

#[test]
fn finalize_never_force_pushes_over_a_commit_it_did_not_make_on_the_remote() {
    let t = repo();
    let (id, _) = selected_run(&t);
    let bare = tempfile::tempdir().unwrap();
    let remote_repo = git2::Repository::init_bare(bare.path()).unwrap();
    let remote = bare.path().to_str().unwrap();
    let o = t.rascal(&["finalize", &id, "--push", remote]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let branch = format!("rascal/make-b-return-42-{id}");
    let refname = format!("refs/heads/{branch}");
    let mine = branch_tip(&t, &branch);
    // Pushing finalize's own commit again is fine.
    let o = t.rascal(&["finalize", &id, "--push", remote]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // Someone adds a commit to the remote's branch.
    let sig = git2::Signature::now("Hu Man", "hu@example.invalid").unwrap();
    let parent = remote_repo.find_commit(mine).unwrap();
    let theirs = remote_repo
        .commit(
            Some(&refname),
            &sig,
            &sig,
            "review fix",
            &parent.tree().unwrap(),
            &[&parent],
        )
        .unwrap();
    let o = t.rascal(&["finalize", &id, "--push", remote]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{}{err}", stdout(&o));
    assert!(err.contains(&theirs.to_string()[..12]), "{err}");
    assert!(err.contains("did not make"), "{err}");
    let now = remote_repo
        .find_reference(&refname)
        .unwrap()
        .target()
        .unwrap();
    assert_eq!(now, theirs, "the remote's branch is unchanged");
}

#[test]
fn select_refuses_a_failed_candidate_unless_forced_with_a_reason() {
    let t = repo();
    let id = run_id(&t);
    // `broken` FAILed its no-todo guardrail: refused, exit 2, with a hint.
    for args in [
        vec!["select", &id, "broken"],
        vec!["select", &id, "broken", "--reason", "I like it"],
        vec!["select", &id, "broken", "--force"],
        vec!["select", &id, "broken", "--force", "--reason", "  "],
    ] {
        let o = t.rascal(&args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stdout(&o));
        let err = stderr(&o);
        assert!(
            err.contains("candidate `broken` is FAIL")
                && err.contains("--with-skipped")
                && err.contains("--force --reason"),
            "{args:?}: {err}"
        );
    }
    let shown = json(&t.rascal(&["show", &id, "--json"]));
    assert!(shown.get("selected").is_none(), "nothing was recorded");
    // Forced, with a reason: recorded, reason and all.
    let o = t.rascal(&[
        "select",
        &id,
        "broken",
        "--force",
        "--reason",
        "the TODO is tracked",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let shown = json(&t.rascal(&["show", &id, "--json"]));
    assert_eq!(shown["selected"], "broken");
    // A candidate that passed needs neither.
    assert_eq!(code(&t.rascal(&["select", &id, "good"])), 0);
}

#[test]
fn escalate_needs_a_note_and_the_candidate_shows_escalated_with_it() {
    let t = repo();
    let id = run_id(&t);
    for args in [
        vec!["escalate", &id, "broken"],
        vec!["escalate", &id, "broken", "--note", "   "],
    ] {
        let o = t.rascal(&args);
        assert_eq!(code(&o), 2, "{args:?}");
        assert!(stderr(&o).contains("--note"), "{}", stderr(&o));
    }
    let o = t.rascal(&["escalate", &id, "broken", "--note", "is the TODO ok?"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let shown = json(&t.rascal(&["show", &id, "--json"]));
    let broken = shown["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "broken")
        .unwrap();
    assert_eq!(broken["state"], "escalated");
    assert_eq!(broken["escalated"]["reason"], "is the TODO ok?");
    let text = stdout(&t.rascal(&["show", &id]));
    assert!(
        text.contains("broken ESCALATED (is the TODO ok?)"),
        "{text}"
    );
}

#[test]
fn finalize_is_recorded_and_list_and_show_say_so() {
    let t = repo();
    let id = run_id(&t);
    assert_eq!(code(&t.rascal(&["select", &id, "good"])), 0);
    let (o, commit) = finalize(&t, &id);
    let branch = stdout(&o)
        .lines()
        .next()
        .unwrap()
        .split("on branch ")
        .nth(1)
        .unwrap()
        .to_string();
    let shown = json(&t.rascal(&["show", &id, "--json"]));
    assert_eq!(shown["finalized"]["branch"], branch.as_str());
    assert_eq!(shown["finalized"]["candidate"], "good");
    assert_eq!(shown["finalized"]["commit"], commit.id().to_string());
    assert_eq!(shown["state"], "pass");
    let text = stdout(&t.rascal(&["show", &id]));
    assert!(
        text.contains(&format!("selected: good · finalized on {branch}")),
        "{text}"
    );
    let list = stdout(&t.rascal(&["list"]));
    assert!(list.contains(&format!("[finalized on {branch}]")), "{list}");
    let rows: serde_json::Value = json(&t.rascal(&["list", "--json"]));
    assert_eq!(rows[0]["state"], "pass");
    assert_eq!(rows[0]["finalized"], branch.as_str());
}

/// Issue 53: after the pick was escalated, `show` ended on the ranking's
/// `finalize it with rascal finalize …` hint, which finalize then refused.
/// `show` now ends with what finalize would do as the run stands.
#[test]
fn show_ends_with_what_finalize_would_do_after_the_pick_was_escalated() {
    let t = repo();
    let id = run_id(&t);
    let doc: serde_json::Value =
        serde_json::from_str(&stdout(&t.rascal(&["show", &id, "--json"]))).unwrap();
    let pick = doc["ranking"]["pick"].as_str().expect("a pick").to_string();
    let shown = stdout(&t.rascal(&["show", &id]));
    let last = shown.lines().last().unwrap_or_default();
    assert_eq!(
        last,
        format!("next: `rascal finalize {id}` commits the pick, {pick}"),
        "{shown}"
    );
    let o = t.rascal(&["escalate", &id, &pick, "--note", "the API may change"]);
    assert_eq!(code(&o), 3, "{}{}", stdout(&o), stderr(&o));
    let shown = stdout(&t.rascal(&["show", &id]));
    let next = shown
        .lines()
        .skip_while(|l| !l.starts_with("next: "))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        next.starts_with(&format!(
            "next: finalize needs a human's choice — run {id}'s pick `{pick}` is contested: it was escalated to a human (the API may change)"
        )),
        "{shown}"
    );
    assert!(next.contains(&format!("rascal select {id}")), "{next}");
    // And finalize says the same.
    let o = t.rascal(&["finalize", &id]);
    assert_ne!(code(&o), 0, "{}", stdout(&o));
    assert!(
        stderr(&o).contains("is contested: it was escalated to a human (the API may change)"),
        "{}",
        stderr(&o)
    );
}
