//! Budgets and the `notify:` command, end to end: the real binary on real
//! repositories, scripted agents that report their spending as Claude Code
//! does (a stream-json `result` line with `usage` and `total_cost_usd`),
//! read through the same parser as a real agent's.

use crate::common;
use common::{code, stderr, stdout, TestRepo};

/// A scripted agent that writes `file`, reports `usd` dollars and `tokens`
/// output tokens, then (with `linger`) keeps running for a minute.
fn spender(name: &str, budget: &str, file: &str, usd: f64, tokens: u64, linger: bool) -> String {
    format!(
        "  {name}:\n    runtime: scripted\n{budget}    steps:\n      - {{ do: write, path: {file}, content: \"fn {name}() {{}}\\n\" }}\n      - {{ do: usage, input_tokens: 100, output_tokens: {tokens}, usd: {usd} }}\n{}",
        if linger {
            "      - { do: say, text: still spending }\n      - { do: sleep, ms: 60000 }\n"
        } else {
            ""
        }
    )
}

fn repo(config: &str) -> TestRepo {
    TestRepo::new(&[
        (".rascal/config.yaml", config),
        ("src/lib.rs", "pub fn a() {}\n"),
    ])
}

fn json_run(t: &TestRepo, agents: &[&str]) -> (i32, serde_json::Value) {
    let mut args = vec!["run", "add things", "--json"];
    for a in agents {
        args.extend(["--agent", a]);
    }
    let o = t.rascal(&args);
    let doc = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), stderr(&o)));
    (code(&o), doc)
}

fn candidate<'a>(doc: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {doc}"))
}

#[test]
fn an_agent_over_its_dollars_is_cancelled_with_the_reason_and_one_under_passes() {
    let config = format!(
        "agents:\n{}{}",
        spender(
            "careless",
            "    budget: { usd: 0.50 }\n",
            "src/b.rs",
            0.52,
            10,
            true
        ),
        spender(
            "thrifty",
            "    budget: { usd: 0.50 }\n",
            "src/c.rs",
            0.10,
            10,
            false
        ),
    );
    let t = repo(&config);
    let (c, doc) = json_run(&t, &["careless", "thrifty"]);
    assert_eq!(c, 0, "thrifty passed: {doc}");
    let reason = "budget: $0.52 spent of $0.50 (agent careless)";
    let careless = candidate(&doc, "careless");
    assert_eq!(careless["state"], "cancelled", "{careless}");
    assert_eq!(careless["verdict"], "fail", "never PASS: {careless}");
    assert_eq!(careless["reason"], reason);
    assert_eq!(careless["over_budget"], reason);
    assert_eq!(careless["spent"]["cost_usd"], 0.52);
    // Its agent was stopped, not left to finish: nothing of it was judged.
    let agent = careless["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "agent")
        .unwrap();
    assert_eq!(agent["errored"], format!("stopped: {reason}"), "{agent}");
    let thrifty = candidate(&doc, "thrifty");
    assert_eq!(thrifty["state"], "pass", "{thrifty}");
    assert!(thrifty.get("over_budget").is_none());
    assert_eq!(
        thrifty["usage"]["cost_usd"], 0.1,
        "parsed as claude's result"
    );

    // `show`, `list` and the report say it too, read from the store.
    let id = doc["run"].as_str().unwrap();
    let shown = stdout(&t.rascal(&["show", id]));
    assert!(
        shown.contains(&format!("[careless] ⊘ stopped: {reason}")),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("careless CANCELLED — {reason}")),
        "the state line: {shown}"
    );
    let shown_json: serde_json::Value =
        serde_json::from_str(&stdout(&t.rascal(&["show", id, "--json"]))).unwrap();
    assert_eq!(shown_json, doc);
    let list = stdout(&t.rascal(&["list"]));
    assert!(list.contains("[stopped by budget: careless]"), "{list}");
    let listed: serde_json::Value =
        serde_json::from_str(&stdout(&t.rascal(&["list", "--json"]))).unwrap();
    assert_eq!(listed[0]["over_budget"]["careless"], reason);
    let md = stdout(&t.rascal(&["report", id, "--format", "md"]));
    assert!(
        // `$` escaped in Markdown: two of them would make GitHub math.
        md.contains(&format!(
            "- **careless** was stopped (CANCELLED): {}",
            reason.replace('$', "\\$")
        )),
        "{md}"
    );
}

#[test]
fn the_run_budget_stops_the_candidate_whose_spending_passes_it() {
    // Each spends $0.60 of the run's $1.00: whichever reports second
    // passes it and is stopped; the first is done.
    let config = format!(
        "budget: {{ usd: 1.00 }}\nagents:\n{}{}",
        spender("one", "", "src/b.rs", 0.60, 10, false),
        spender("two", "", "src/c.rs", 0.60, 10, false),
    );
    let t = repo(&config);
    let (c, doc) = json_run(&t, &["one", "two"]);
    assert_eq!(c, 0, "{doc}");
    let states: Vec<(&str, &str)> = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap(), c["state"].as_str().unwrap()))
        .collect();
    let stopped: Vec<&serde_json::Value> = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["state"] == "cancelled")
        .collect();
    assert_eq!(stopped.len(), 1, "exactly the later spender: {states:?}");
    assert_eq!(
        stopped[0]["over_budget"],
        "budget: $1.20 spent of $1.00 (the run)"
    );
    assert!(states.contains(&("one", "pass")) || states.contains(&("two", "pass")));
}

#[test]
fn a_candidate_that_would_start_with_the_runs_budget_spent_never_starts() {
    // One at a time: the first spends exactly the run's 110 tokens (100 in,
    // 10 out); the second finds nothing left.
    let config = format!(
        "budget: {{ tokens: 110 }}\nstrategy: {{ max_parallel: 1 }}\nagents:\n{}{}",
        spender("one", "", "src/b.rs", 0.01, 10, false),
        spender("two", "", "src/c.rs", 0.01, 10, false),
    );
    let t = repo(&config);
    let (c, doc) = json_run(&t, &["one", "two"]);
    assert_eq!(c, 0, "{doc}");
    let cands = doc["candidates"].as_array().unwrap();
    let passed: Vec<_> = cands.iter().filter(|c| c["state"] == "pass").collect();
    let stopped: Vec<_> = cands.iter().filter(|c| c["state"] == "cancelled").collect();
    assert_eq!((passed.len(), stopped.len()), (1, 1), "{doc}");
    let why = "budget: 110 tokens spent of 110 (the run); no budget left for attempt 1";
    assert_eq!(stopped[0]["reason"], why);
    let agent = &stopped[0]["reports"][0];
    assert_eq!(agent["errored"], format!("not started: {why}"), "{agent}");
    assert!(stopped[0].get("usage").is_none(), "its agent never ran");
}

#[test]
fn the_retry_loop_stops_when_the_next_attempt_would_start_with_the_budget_spent() {
    // The reviewer sends attempt 1 back; attempt 1 spent the whole $0.50.
    let config = "agents:\n  author:\n    runtime: scripted\n    budget: { usd: 0.50 }\n    steps:\n      - { do: write, path: src/b.rs, content: \"fn b() {}\\n\" }\n      - { do: usage, input_tokens: 10, output_tokens: 10, usd: 0.50 }\n  reviewer: { runtime: scripted, scenario: review-request-once, provider: other-lab }\n";
    let t = TestRepo::new(&[
        (".rascal/config.yaml", config),
        (
            ".rascal/verification.yaml",
            "review:\n  reviewers: [reviewer]\n  on_request_changes: retry\n  max_retries: 2\n  timeout: 30s\n",
        ),
        ("src/lib.rs", "pub fn a() {}\n"),
    ]);
    let (c, doc) = json_run(&t, &["author"]);
    assert_eq!(c, 1, "{doc}");
    let a = candidate(&doc, "author");
    assert_eq!(a["state"], "cancelled", "{a}");
    assert_eq!(a["attempt"], 1, "attempt 2 never started: {a}");
    assert_eq!(
        a["reason"],
        "budget: $0.50 spent of $0.50 (agent author); no budget left for attempt 2"
    );
    // Attempt 1's reports stand, with the reviewer's request.
    let review = a["reports"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["layer"] == "review" && r["status"] == "fail");
    assert!(review, "{a}");
}

#[test]
fn tokens_count_input_plus_output_against_the_agents_limit() {
    let config = format!(
        "agents:\n{}",
        spender(
            "wordy",
            "    budget: { tokens: 1000 }\n",
            "src/b.rs",
            0.01,
            950,
            true
        ),
    );
    let t = repo(&config);
    let (c, doc) = json_run(&t, &["wordy"]);
    assert_eq!(c, 1, "{doc}");
    let w = candidate(&doc, "wordy");
    assert_eq!(w["state"], "cancelled");
    assert_eq!(
        w["reason"],
        "budget: 1,050 tokens spent of 1,000 (agent wordy)"
    );
}

#[test]
fn a_retry_that_would_start_with_the_budget_spent_is_refused() {
    // Exactly at its limit: not over (it passes), but nothing is left.
    let config = format!(
        "agents:\n{}",
        spender(
            "exact",
            "    budget: { usd: 0.50 }\n",
            "src/b.rs",
            0.50,
            10,
            false
        ),
    );
    let t = repo(&config);
    let (c, doc) = json_run(&t, &["exact"]);
    assert_eq!(c, 0, "{doc}");
    assert_eq!(candidate(&doc, "exact")["state"], "pass");
    let id = doc["run"].as_str().unwrap();
    let o = t.rascal(&["retry", id, "exact", "--feedback", "one more"]);
    assert_eq!(code(&o), 2, "{}{}", stdout(&o), stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("retry of `exact` refused: budget: $0.50 spent of $0.50 (agent exact); no budget left for attempt 2"),
        "{err}"
    );
    assert!(
        err.contains("hint: budgets are set in .rascal/config.yaml"),
        "{err}"
    );
    // Nothing was recorded: the run still stands as it was.
    let shown: serde_json::Value =
        serde_json::from_str(&stdout(&t.rascal(&["show", id, "--json"]))).unwrap();
    assert_eq!(shown, doc);
}

#[test]
fn a_budget_an_agent_cannot_report_against_is_said_once() {
    let config = "budget: { usd: 1.00 }\nagents:\n  local:\n    runtime: command\n    command: [sh, -c, \"echo fn b ... > src/b.rs\"]\n    budget: { tokens: 500 }\n";
    let t = repo(config);
    let o = t.rascal(&["run", "add b", "--agent", "local", "--n", "2", "--headless"]);
    let out = stdout(&o);
    let warning = "warning: budget: agent local reports no usage (tokens or cost), so its budget and the run's cannot be enforced for it";
    assert_eq!(out.matches(warning).count(), 1, "once per agent: {out}");
    let id = out
        .lines()
        .find_map(|l| l.strip_prefix("rascal run "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap();
    let doc: serde_json::Value =
        serde_json::from_str(&stdout(&t.rascal(&["show", id, "--json"]))).unwrap();
    let warned: Vec<&serde_json::Value> = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c.get("budget_warning"))
        .collect();
    assert_eq!(warned.len(), 1, "{doc}");
    assert!(warned[0]
        .as_str()
        .unwrap()
        .starts_with("budget: agent local"));
}

#[test]
fn the_notify_command_runs_with_the_runs_variables_when_a_headless_run_ends() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("notified");
    let config = format!(
        "notify:\n  command: [sh, -c, 'printf \"%s|%s|%s|%s\" \"$RASCAL_RUN\" \"$RASCAL_EVENT\" \"$RASCAL_MESSAGE\" \"$(pwd)\" > {}']\nagents:\n{}",
        seen.display(),
        spender("fine", "", "src/b.rs", 0.01, 10, false)
    );
    let t = repo(&config);
    let (c, doc) = json_run(&t, &["fine"]);
    assert_eq!(c, 0, "{doc}");
    let id = doc["run"].as_str().unwrap();
    let got = std::fs::read_to_string(&seen).expect("the notify command ran");
    let here = t.path().canonicalize().unwrap();
    assert_eq!(
        got,
        format!(
            "{id}|finished|run {id} finished (fine PASS) — awaiting your decision|{}",
            here.display()
        )
    );

    // A failing command is a warning; the run's exit code stands.
    let t = repo(&format!(
        "notify: {{ command: [/no/such/notifier, --now] }}\nagents:\n{}",
        spender("fine", "", "src/b.rs", 0.01, 10, false)
    ));
    let o = t.rascal(&["run", "add b", "--agent", "fine", "--headless"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "rascal: warning: the notify command failed: `/no/such/notifier` could not be started"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_wrong_budget_is_a_config_error_with_its_line() {
    let t = repo("agents:\n  a:\n    runtime: scripted\n    scenario: nothing\n    budget:\n      usd: -0.5\n");
    let o = t.rascal(&["run", "x", "--agent", "a", "--headless"]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains(".rascal/config.yaml (at base commit ")
            && err.contains("):6:12: `agents.a.budget.usd` is -0.5: a budget must be more than $0"),
        "{err}"
    );
    assert!(err.contains("hint: write the dollars"), "{err}");
}
