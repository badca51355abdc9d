//! Plan, then execute, end to end through the real binary (headless `rascal
//! run --plan`, process launcher): a scripted planner proposes three
//! criteria; `--approve` accepts them as proposed and the journal says so
//! (who, when, "accepted as proposed"); the candidates see them (the
//! command agent in `$RASCAL_CRITERIA_FILE`); the planned `test` criterion
//! is met only by a test the change wrote that fails at the base — one
//! candidate meets it, one does not, and a planned test criterion the
//! base's own test would meet is not met by it. Without `--approve` the
//! proposal is printed and the run needs a human (exit 3); a plan that
//! does not parse is retried once.

use crate::common::{bwrap, code, stderr, stdout, TestRepo};
use crate::test_integrity::{candidate, rust_repo, CARGO_TEST};

/// The plan the scripted planner proposes: a new test, a grep, and an
/// optional test the base already has (which a plan's new test never is).
const PLAN: &str = r#"{"nonce": "{nonce}", "criteria": [{"description": "triple is tested", "type": "test", "check": "triples"}, {"description": "triple is public", "type": "grep", "check": "pub fn triple"}, {"description": "negation is tested", "type": "test", "check": "negates", "required": false}], "constraints": [{"type": "no-new-deps"}]}"#;

/// A scripted planner saying `steps` (a YAML flow sequence).
fn planner(steps: &str) -> String {
    format!("  planner:\n    runtime: scripted\n    provider: other-lab\n    steps: {steps}\n")
}

/// A `say` step printing `text` (single-quoted YAML).
fn say(text: &str) -> String {
    format!("{{ do: say, text: '{text}' }}")
}

/// The proving author: fixes `add`, adds `triple` and a test of it that
/// cannot pass on the base (no `triple` there), and keeps a copy of the
/// criteria it was shown.
const PROVING: &str = r#"sed -i 's/a - b/a + b/' src/lib.rs && cat >> src/lib.rs <<'EOF'

pub fn triple(a: i32) -> i32 {
    3 * a
}

#[cfg(test)]
mod triple_tests {
    use super::*;

    #[test]
    fn triples() {
        assert_eq!(triple(2), 6);
    }
}
EOF
cp "$RASCAL_CRITERIA_FILE" criteria-seen.json"#;

/// The untested author: the same code, no test.
const UNTESTED: &str = r#"sed -i 's/a - b/a + b/' src/lib.rs && cat >> src/lib.rs <<'EOF'

pub fn triple(a: i32) -> i32 {
    3 * a
}
EOF"#;

/// The calculator crate with the two authors and `planner_steps`.
fn repo(planner_steps: &str) -> TestRepo {
    let t = rust_repo(&[("proving", PROVING), ("untested", UNTESTED)], CARGO_TEST);
    let mut config = std::fs::read_to_string(t.path().join(".rascal/config.yaml")).unwrap();
    config.push_str(&planner(planner_steps));
    t.write(".rascal/config.yaml", &config);
    t.write(
        ".rascal/verification.yaml",
        "plan: { agent: planner, timeout: 60s }\ncriteria:\n  test_command: \"cargo test --offline --quiet {check}\"\n",
    );
    t.commit_all("planner");
    t
}

const TASK: &str = "Add triple(a) returning 3 * a";

/// The run id in a headless run's output.
fn run_id(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("replay: rascal show "))
        .unwrap_or_else(|| panic!("no run id: {out}"))
        .trim()
        .to_string()
}

fn report<'a>(c: &'a serde_json::Value, check: &str) -> &'a serde_json::Value {
    c["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["layer"] == "criteria" && r["check"] == check)
        .unwrap_or_else(|| panic!("no criterion `{check}`: {c}"))
}

#[test]
fn an_approved_plan_is_journalled_shown_to_the_candidates_and_met_only_by_a_new_test() {
    if !bwrap() {
        return;
    }
    let t = repo(&format!("[{}]", say(PLAN)));
    let o = t.rascal(&[
        "run",
        TASK,
        "--plan",
        "--approve",
        "--agent",
        "proving,untested",
        "--headless",
    ]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(code(&o), 0, "{out}");
    assert!(
        out.contains("plan proposed by planner: 3 acceptance criteria, 1 constraint"),
        "{out}"
    );
    assert!(out.contains("plan approved by "), "{out}");
    assert!(out.contains("accepted as proposed (--approve)"), "{out}");
    let id = run_id(&out);

    let doc: serde_json::Value =
        serde_json::from_slice(&t.rascal(&["show", &id, "--json"]).stdout).unwrap();
    // The proposal, the approval (who, when, what) and the approved task.
    assert_eq!(doc["plan"]["agent"], "planner", "{doc}");
    assert_eq!(doc["plan"]["criteria"].as_array().unwrap().len(), 3);
    let approval = doc["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["kind"] == "approve_plan")
        .unwrap_or_else(|| panic!("no approval: {doc}"));
    assert_eq!(approval["reason"], "accepted as proposed (--approve)");
    assert!(approval["who"].as_str().is_some_and(|w| !w.is_empty()));
    assert!(approval["at_ms"].as_i64().unwrap() > 0);
    assert_eq!(approval["criteria"].as_array().unwrap().len(), 3);
    assert!(approval.get("changes").is_none(), "{approval}");
    assert_eq!(doc["task"]["plan"], true, "{doc}");
    assert_eq!(doc["task"]["acceptance_criteria"][0]["new_test"], true);

    // proving wrote the test the plan asked for: it fails at the base.
    let p = candidate(&doc, "proving");
    let tested = report(p, "triple is tested");
    assert_eq!(tested["status"], "pass", "{tested}");
    assert!(
        tested["output"]
            .as_str()
            .unwrap()
            .contains("fail on the base's code and pass here"),
        "{tested}"
    );
    assert_eq!(report(p, "triple is public")["status"], "pass");
    // The base's own `negates` never meets a planned test criterion.
    let negates = report(p, "negation is tested");
    assert_ne!(negates["status"], "pass", "{negates}");
    assert_eq!(
        negates["issues"][0]["rule"], "criteria/test-not-new",
        "{negates}"
    );
    assert_eq!(p["verdict"], "warn", "{p}");
    // untested did not write it.
    let u = candidate(&doc, "untested");
    assert_eq!(report(u, "triple is tested")["status"], "fail");
    assert_eq!(report(u, "triple is public")["status"], "pass");
    assert_eq!(u["verdict"], "fail", "{u}");

    // The command agent was given the approved criteria in its file.
    let seen = std::fs::read_to_string(
        std::path::Path::new(p["worktree"].as_str().unwrap()).join("criteria-seen.json"),
    )
    .unwrap();
    let seen: serde_json::Value = serde_json::from_str(&seen).unwrap();
    assert_eq!(seen["acceptance_criteria"][0]["check"], "triples", "{seen}");
    // The approved task is a spec in the run's files, not in the repository.
    let spec = t
        .files()
        .join("runs")
        .join(&id)
        .join(".rascal/specs/add-triple-a-returning-3-a.yaml");
    let spec = std::fs::read_to_string(&spec).unwrap_or_else(|e| panic!("{spec:?}: {e}"));
    assert!(
        spec.contains("triples") && spec.contains("plan: true"),
        "{spec}"
    );
    assert!(!t.path().join(".rascal/specs").exists());

    // `show` says who approved which criteria.
    let shown = stdout(&t.rascal(&["show", &id]));
    assert!(shown.contains("plan approved by "), "{shown}");
    assert!(
        shown.contains("- triple is tested (test: `triples`, a new test)"),
        "{shown}"
    );
}

#[test]
fn a_headless_plan_without_approve_prints_the_proposal_and_needs_a_human() {
    let t = repo(&format!("[{}]", say(PLAN)));
    let o = t.rascal(&[
        "run",
        TASK,
        "--plan",
        "--agent",
        "proving,untested",
        "--headless",
    ]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(code(&o), 3, "{out}");
    assert!(out.contains("plan proposed by planner"), "{out}");
    assert!(
        out.contains("- triple is tested (test: `triples`, a new test)"),
        "{out}"
    );
    assert!(
        out.contains("- negation is tested [optional] (test: `negates`"),
        "{out}"
    );
    assert!(out.contains("--plan --approve"), "{out}");
    // No candidate ran, and none is said to be waiting in a queue.
    assert!(!out.contains("started:"), "{out}");
    assert!(
        out.contains("proving NOT STARTED (the plan was not approved)"),
        "{out}"
    );
    assert!(!out.contains("QUEUED"), "{out}");
}

#[test]
fn an_unparseable_plan_is_retried_once_then_a_human_is_asked() {
    // The first answer is garbled, the retry's is good.
    let t = repo(&format!(
        "[{{ do: when, attempt: 1, then: [{}], otherwise: [{}] }}]",
        say("I think {\"criteria\": oops"),
        say(PLAN)
    ));
    let o = t.rascal(&[
        "run",
        TASK,
        "--plan",
        "--approve",
        "--agent",
        "untested",
        "--headless",
    ]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert!(
        out.contains("plan proposed by planner: 3 acceptance criteria"),
        "{out}"
    );
    let id = run_id(&out);
    let plan = t.files().join("runs").join(&id).join("plan");
    assert!(plan.join("try-1/output.log").exists());
    assert!(plan.join("try-2/output.log").exists());

    // Garbled twice: no plan, a human decides (exit 3), even with --approve.
    let t = repo(&format!("[{}]", say("no plan today")));
    let o = t.rascal(&[
        "run",
        TASK,
        "--plan",
        "--approve",
        "--agent",
        "untested",
        "--headless",
    ]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(code(&o), 3, "{out}");
    assert!(out.contains("plan by planner: no usable proposal"), "{out}");
    assert!(out.contains("again on the retry"), "{out}");
    assert!(!out.contains("started:"), "{out}");
}

/// `--approve` on a run that is not planned is a mistake said at once
/// (exit 2, nothing recorded), not silently ignored.
#[test]
fn approve_without_a_plan_is_refused() {
    let t = repo(&format!("[{}]", say(PLAN)));
    let o = t.rascal(&[
        "run",
        TASK,
        "--approve",
        "--agent",
        "untested",
        "--headless",
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("this run is not planned"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&t.rascal(&["list"])).contains("no runs yet"));
}

#[test]
fn a_plan_without_a_planner_is_refused_before_anything_runs() {
    let t = repo(&format!("[{}]", say(PLAN)));
    t.write(".rascal/verification.yaml", "");
    t.commit_all("no planner");
    let o = t.rascal(&["run", TASK, "--plan", "--agent", "untested", "--headless"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("names no planner"), "{}", stderr(&o));
    assert!(stderr(&o).contains("plan: { agent: NAME"), "{}", stderr(&o));
}

#[test]
fn in_the_tui_the_human_edits_one_criterion_drops_one_and_enter_starts_the_candidates() {
    let t = repo(&format!("[{}]", say(PLAN)));
    let bin = env!("CARGO_BIN_EXE_rascal");
    let tmux = crate::common::tmux::Tmux::start(
        "plan",
        120,
        30,
        "",
        &format!(
            "cd {} && {bin} run \"{TASK}\" --plan --agent untested",
            t.path().display()
        ),
    );
    let screen = tmux.wait_for(
        "the plan screen",
        &[
            "plan by planner",
            "[x] 1. triple is tested",
            "[x] 3. negation is tested",
        ],
    );
    eprintln!("the plan screen:\n{screen}");
    // Issue 53: at 120 columns the bar shows every plan key (in brief),
    // every row's checkbox is in the focused row's column, and the
    // header's clock runs while the plan waits.
    for k in [
        " Space  keep/drop ",
        " e  edit ",
        " c  check ",
        " o  optional ",
        " a  add ",
        " w  save ",
        " Enter  approve ",
    ] {
        assert!(screen.contains(k), "{k} in:\n{screen}");
    }
    let columns: Vec<usize> = screen
        .lines()
        .filter_map(|l| l.find("[x] ").map(|at| l[..at].chars().count()))
        .collect();
    assert!(
        columns.len() >= 3 && columns.windows(2).all(|w| w[0] == w[1]),
        "{columns:?}\n{screen}"
    );
    let wall = |screen: &str| {
        screen
            .split(" wall ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .map(str::to_string)
    };
    let first = wall(&screen).unwrap_or_else(|| panic!("no wall clock:\n{screen}"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while wall(&tmux.capture()).as_deref() == Some(first.as_str()) {
        assert!(
            std::time::Instant::now() < deadline,
            "the wall clock stood at {first}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // No candidate starts before the approval.
    assert!(!screen.contains("started"), "{screen}");

    // Edit the first criterion's description.
    tmux.keys(&["e"]);
    tmux.wait_for("the text field", &["description: triple is tested█"]);
    for _ in 0.."is tested".len() {
        tmux.keys(&["BSpace"]);
    }
    tmux.type_text("has a unit test");
    tmux.wait_for("the edit", &["description: triple has a unit test█"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("the edited row", &["[x] 1. triple has a unit test"]);
    // Drop the second.
    tmux.keys(&["j", "Space"]);
    let screen = tmux.wait_for("the dropped row", &["[ ] 2. triple is public"]);
    eprintln!("after the edit and the drop:\n{screen}");
    // `w` saves the kept criteria as a spec in the repository (uncommitted).
    tmux.keys(&["w"]);
    tmux.wait_for(
        "the saved spec",
        &["saved .rascal/specs/add-triple-a-returning-3-a.yaml"],
    );
    let saved = std::fs::read_to_string(
        t.path()
            .join(".rascal/specs/add-triple-a-returning-3-a.yaml"),
    )
    .unwrap();
    assert!(
        saved.contains("triple has a unit test") && !saved.contains("triple is public"),
        "{saved}"
    );
    tmux.keys(&["Enter"]);
    tmux.wait_for("the run", &["finished"]);

    let run = std::fs::read_dir(t.files().join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name()
        .into_string()
        .unwrap();
    let doc: serde_json::Value =
        serde_json::from_slice(&t.rascal(&["show", &run, "--json"]).stdout).unwrap();
    let approval = doc["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["kind"] == "approve_plan")
        .unwrap_or_else(|| panic!("no approval: {doc}"));
    assert_eq!(approval["reason"], "approved with changes", "{approval}");
    assert!(approval["who"].as_str().is_some_and(|w| !w.is_empty()));
    let names: Vec<&str> = approval["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["description"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["triple has a unit test", "negation is tested"]);
    let changes: Vec<&str> = approval["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(
        changes,
        [
            "edited `triple is tested` → `triple has a unit test` (test: `triples`)",
            "dropped `triple is public`"
        ]
    );
    // The candidate was checked against the approved criteria only.
    let u = candidate(&doc, "untested");
    let checks: Vec<&str> = u["reports"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["layer"] == "criteria")
        .map(|r| r["check"].as_str().unwrap())
        .collect();
    assert!(checks.contains(&"triple has a unit test"), "{checks:?}");
    assert!(!checks.contains(&"triple is public"), "{checks:?}");
    let shown = stdout(&t.rascal(&["show", &run]));
    eprintln!("rascal show:\n{shown}");
    assert!(shown.contains("plan approved by "), "{shown}");
    assert!(
        shown.contains("changed: edited `triple is tested`"),
        "{shown}"
    );
}

#[test]
fn a_spec_that_says_plan_is_planned_and_keeps_its_own_criteria() {
    let t = repo(&format!("[{}]", say(PLAN)));
    t.write(
        ".rascal/specs/triple.yaml",
        "instruction: Add triple(a) returning 3 * a\nplan: true\nacceptance_criteria:\n  - { description: lib exists, type: file-exists, check: src/lib.rs }\n",
    );
    t.commit_all("spec");
    let o = t.rascal(&[
        "run",
        "--spec",
        "triple",
        "--approve",
        // The spec's own `lib exists` is met by the unchanged base.
        "--allow-vacuous",
        "--agent",
        "untested",
        "--headless",
    ]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert!(
        out.contains("plan proposed by planner: 3 acceptance criteria"),
        "{out}"
    );
    assert!(
        out.contains("  vacuous: lib exists — `src/lib.rs` exists at the base already"),
        "{out}"
    );
    let id = run_id(&out);
    let doc: serde_json::Value =
        serde_json::from_slice(&t.rascal(&["show", &id, "--json"]).stdout).unwrap();
    let names: Vec<&str> = doc["task"]["acceptance_criteria"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["description"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "lib exists",
            "triple is tested",
            "triple is public",
            "negation is tested"
        ]
    );
    // The planner was told the spec's own criterion.
    let prompt = std::fs::read_to_string(
        t.files()
            .join("runs")
            .join(&id)
            .join("plan/try-1/instruction.md"),
    )
    .unwrap();
    assert!(
        prompt.contains("lib exists (file-exists: `src/lib.rs`)"),
        "{prompt}"
    );
    assert!(
        prompt.contains("read-only copy of the base commit"),
        "{prompt}"
    );
}

#[test]
fn the_planner_reads_the_base_in_its_sandbox_and_cannot_write_it() {
    if !bwrap() {
        return;
    }
    // A command planner: finds the copy of the base its prompt names, reads
    // a file of it, tries to write into it, and says what it found.
    let script = r#"p=$(grep -o '/[^ ]*/plan/base' "$RASCAL_INSTRUCTION_FILE" | head -1)
test -f "$p/src/lib.rs" || { echo "no base at $p"; exit 1; }
if touch "$p/planted" 2>/dev/null; then w=writable; else w=read-only; fi
printf '{"nonce": "%s", "criteria": [{"description": "base is %s", "type": "grep", "check": "triple"}]}\n' "$RASCAL_REVIEW_NONCE" "$w""#;
    let t = repo(&format!("[{}]", say(PLAN)));
    let mut config = std::fs::read_to_string(t.path().join(".rascal/config.yaml")).unwrap();
    config.push_str(&format!(
        "  looker: {{ runtime: command, command: [\"sh\", \"-c\", {}] }}\n",
        serde_json::to_string(script).unwrap()
    ));
    t.write(".rascal/config.yaml", &config);
    t.write(
        ".rascal/verification.yaml",
        "plan: { agent: looker, timeout: 60s }\n",
    );
    t.commit_all("a looking planner");
    let o = t.rascal(&["run", TASK, "--plan", "--agent", "untested", "--headless"]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(code(&o), 3, "{out}");
    assert!(
        out.contains("- base is read-only (grep: `triple`)"),
        "{out}"
    );
    let id = run_id(&out);
    // Nothing was planted in the copy, nor in the repository.
    assert!(!t.path().join("planted").exists());
    assert!(!t
        .files()
        .join("runs")
        .join(&id)
        .join("plan/base/planted")
        .exists());
}

/// A plan whose criteria the unchanged base already meets (`command:
/// true`, a grep that matches what is there): issue 47, item 6.
const VACUOUS_PLAN: &str = r#"{"nonce": "{nonce}", "criteria": [{"description": "it builds", "type": "command", "check": "true"}, {"description": "there is code", "type": "grep", "check": "fn "}, {"description": "triple is public", "type": "grep", "check": "pub fn triple"}]}"#;

/// Every criterion also runs on the unchanged base; those that pass there
/// are vacuous: `--approve` refuses them (exit 3, naming each and why,
/// before any candidate starts) unless `--allow-vacuous`, and the run says
/// which they are — never evidence.
#[test]
fn vacuous_criteria_are_named_refused_by_approve_and_allowed_only_on_request() {
    if !bwrap() {
        return;
    }
    let t = repo(&format!("[{}]", say(VACUOUS_PLAN)));
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "run",
            TASK,
            "--plan",
            "--approve",
            "--agent",
            "proving,untested",
            "--headless",
        ];
        a.extend_from_slice(extra);
        a
    };
    let o = t.rascal(&args(&[]));
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(code(&o), 3, "{out}");
    assert!(
        out.contains("--approve refused: 2 criteria are vacuous"),
        "{out}"
    );
    assert!(
        out.contains("`it builds` (`true` passes on the unchanged base"),
        "{out}"
    );
    assert!(
        out.contains("`there is code` (`fn ` matches at the base already (src/lib.rs:1)"),
        "{out}"
    );
    assert!(out.contains("--approve --allow-vacuous"), "{out}");
    assert!(!out.contains("started:"), "no candidate ran: {out}");
    let id = run_id(&out);
    let doc: serde_json::Value =
        serde_json::from_slice(&t.rascal(&["show", &id, "--json"]).stdout).unwrap();
    let vacuous: Vec<&str> = doc["vacuous"]
        .as_array()
        .unwrap_or_else(|| panic!("{doc}"))
        .iter()
        .map(|v| v["criterion"].as_str().unwrap())
        .collect();
    assert_eq!(vacuous, vec!["it builds", "there is code"], "{doc}");

    // Asked for, they are accepted, and still named.
    let o = t.rascal(&args(&["--allow-vacuous"]));
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert_ne!(code(&o), 3, "{out}");
    assert!(out.contains("plan approved by "), "{out}");
    assert!(
        out.contains("criteria on the base: 2 of 3 vacuous"),
        "{out}"
    );
    assert!(out.contains("  vacuous: it builds — "), "{out}");
    // --allow-vacuous means nothing without --approve.
    let o = t.rascal(&["run", TASK, "--allow-vacuous", "--headless"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}
