//! Fixed run states for snapshot tests and the render benchmark: the same
//! events every time, with injected times (no wall clock). A test fixture,
//! not part of the shipped library: compiled for this crate's unit tests
//! and, with the `fixture` feature, for the integration tests and the TUI
//! benchmark (the root crate's dev-dependency turns it on).
#![allow(dead_code)]

use crate::app::{App, RunMeta};
use crate::theme::Theme;
use crate::update::update;
use crate::Action;
use rascal_core::model::event::{CandidateInfo, RunEvent};
use rascal_core::model::log::Stream;
use rascal_core::model::verdict::{Issue, Layer, Report, Severity, Verdict};

pub const T0: i64 = 1_800_000_000_000;

pub const DIFF: &str = "diff --git a/src/lib.rs b/src/lib.rs\nindex 1..2 100644\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -3,6 +3,14 @@\n /// Greets someone by name.\n pub fn greet(name: &str) -> String {\n-    format!(\"Hello, {name}!\")\n+    format!(\"Hello, {name}!!\")\n }\n+\n+/// Greets someone loudly.\n+pub fn shout(name: &str) -> String {\n+    dbg!(greet(name).to_uppercase())\n+}\n \n #[cfg(test)]\n mod tests {\n@@ -14,4 +22,9 @@ mod tests {\n         assert_eq!(greet(\"Ada\"), \"Hello, Ada!\");\n     }\n+\n+    #[test]\n+    fn shouts() {\n+        assert_eq!(shout(\"Ada\"), \"HELLO, ADA!!\");\n+    }\n }\ndiff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,4 @@\n # greeter\n \n The sample project of `rascal demo`.\n+Now it can shout.\n";

/// What the compare screen loads for A = careful, B = hasty: the diff from
/// hasty's tree to careful's, so `+` lines are only in careful and `−`
/// lines only in hasty (its `dbg!`, its extra `!`, its README line).
pub const COMPARE_CAREFUL_HASTY: &str = "diff --git a/src/lib.rs b/src/lib.rs\nindex 2..3 100644\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -3,11 +3,11 @@\n /// Greets someone by name.\n pub fn greet(name: &str) -> String {\n-    format!(\"Hello, {name}!!\")\n+    format!(\"Hello, {name}!\")\n }\n \n /// Greets someone loudly.\n pub fn shout(name: &str) -> String {\n-    dbg!(greet(name).to_uppercase())\n+    greet(name).to_uppercase()\n }\n \n #[cfg(test)]\n@@ -25,6 +25,6 @@ mod tests {\n     #[test]\n     fn shouts() {\n-        assert_eq!(shout(\"Ada\"), \"HELLO, ADA!!\");\n+        assert_eq!(shout(\"Ada\"), \"HELLO, ADA!\");\n     }\n }\ndiff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1,4 +1,3 @@\n # greeter\n \n The sample project of `rascal demo`.\n-Now it can shout.\n";

fn report(layer: Layer, check: &str, issues: Vec<Issue>, ms: u64, output: &str) -> Report {
    let mut r = Report::new(layer, check);
    r.issues = issues;
    r.duration_ms = ms;
    r.output = output.into();
    r.finish()
}

/// The events of a run of `n` candidates (at least 3 interesting ones),
/// stopped part-way when `finished` is false.
pub fn events(n: usize, finished: bool) -> Vec<(RunEvent, i64)> {
    let ids = candidate_ids(n);
    let mut ev = vec![(run_started(&ids), T0)];
    for (i, id) in ids.iter().enumerate() {
        agent_started_and_logged(&mut ev, i, id);
    }
    for (i, id) in ids.iter().enumerate() {
        checks_and_verdict(&mut ev, i, id, finished);
    }
    for (i, id) in ids.iter().enumerate().take(2) {
        ev.push((usage(i, id), T0 + 4_000));
    }
    if finished {
        ev.push((
            RunEvent::Ranked {
                ranking: Box::new(ranking(&ids)),
            },
            T0 + 11_000,
        ));
        ev.push((
            RunEvent::RunFinished {
                verdict: Verdict::Pass,
                exit_code: 0,
            },
            T0 + 12_000,
        ));
    }
    ev
}

/// `n` candidate ids: the names in turn, suffixed `-2`, `-3`, … once they
/// run out.
fn candidate_ids(n: usize) -> Vec<String> {
    let names = [
        "careful", "hasty", "sneaky", "eager", "lazy", "clever", "plain", "quick",
    ];
    (0..n)
        .map(|i| {
            let base = names[i % names.len()];
            if i < names.len() {
                base.to_string()
            } else {
                format!("{base}-{}", i / names.len() + 1)
            }
        })
        .collect()
}

/// The run's first event: the task and every candidate's worktree.
fn run_started(ids: &[String]) -> RunEvent {
    RunEvent::RunStarted {
        run: "r-20270115-1a2b".into(),
        repo: "/tmp/greeter".into(),
        base: "86486adf0123456789abcdef0123456789abcdef".into(),
        instruction: "Add a `shout(name)` function to src/lib.rs that returns the greeting in upper case, with a test.".into(),
        launcher: "process".into(),
        candidates: ids
            .iter()
            .map(|id| CandidateInfo {
                id: id.clone(),
                agent: id.clone(),
                runtime: "scripted".into(),
                worktree: format!("/tmp/greeter/.git/rascal/worktrees/r/{id}"),
                unsandboxed: false,
            })
            .collect(),
    }
}

/// Candidate `i`'s agent starting and writing its log lines (colours, a
/// NUL byte and a screen clear among them).
fn agent_started_and_logged(ev: &mut Vec<(RunEvent, i64)>, i: usize, id: &str) {
    let c = |e| (e, T0 + 100 + i as i64);
    ev.push(c(RunEvent::CandidateStarted {
        candidate: id.to_string(),
        command: "rascal __scripted-agent scenario.json".into(),
    }));
    for (k, text) in [
        "reading src/lib.rs",
        "\u{1b}[32mplan:\u{1b}[0m add `shout` next to `greet`, with a test",
        "▸ Edit src/lib.rs",
        "a NUL byte \0 and a screen clear \u{1b}[2J stay visible",
    ]
    .iter()
    .enumerate()
    {
        ev.push(c(RunEvent::Log {
            candidate: id.to_string(),
            stream: if k == 3 {
                Stream::Stderr
            } else {
                Stream::Stdout
            },
            text: text.to_string(),
            display: None,
        }));
    }
}

/// Candidate `i`'s reports and verdict: every third passes, the next fails
/// its build, the next touches a denied path. In an unfinished run every
/// other candidate is still in its guardrails.
fn checks_and_verdict(ev: &mut Vec<(RunEvent, i64)>, i: usize, id: &str, finished: bool) {
    let at = T0 + 5_000 + 1000 * i as i64;
    let kind = i % 3;
    let landed = |r: Report, at: i64| {
        (
            RunEvent::ReportLanded {
                candidate: id.to_string(),
                report: Box::new(r),
            },
            at,
        )
    };
    ev.push(landed(
        report(Layer::Agent, "agent", vec![], 2300, "done"),
        at,
    ));
    if !finished && i % 2 == 1 {
        ev.push((
            RunEvent::LayerStarted {
                candidate: id.to_string(),
                layer: Layer::Guardrails,
            },
            at,
        ));
        return;
    }
    for r in guardrail_reports(kind == 1) {
        ev.push(landed(r, at + 10));
    }
    if kind != 1 {
        let perm = if kind == 2 {
            vec![Issue::new(
                "permissions/denied-path",
                Severity::Error,
                "changed path `.github/workflows/ci.yml` matches denied pattern `.github/**`",
            )
            .at(".github/workflows/ci.yml", None)]
        } else {
            vec![]
        };
        ev.push(landed(
            report(Layer::Permissions, "permissions", perm, 2, ""),
            at + 20,
        ));
    }
    let (verdict, reason) = verdict_of(kind);
    ev.push((
        RunEvent::CandidateFinished {
            candidate: id.to_string(),
            verdict,
            reason,
            files: 1 + kind,
            lines: 10 + kind as u64 * 5,
            tree: None,
            cancelled: false,
        },
        at + 30,
    ));
}

/// The guardrail reports of a candidate: all passing, or (`broken`) a
/// banned pattern, a failed build and the tests skipped.
fn guardrail_reports(broken: bool) -> Vec<Report> {
    if broken {
        vec![
            report(Layer::Guardrails, "secrets", vec![], 23, ""),
            report(
                Layer::Guardrails,
                "banned-patterns",
                vec![Issue::new(
                    "guardrails/banned-patterns",
                    Severity::Error,
                    "banned pattern `dbg!\\(` matched: dbg!(greet(name).to_uppercase())",
                )
                .at("src/lib.rs", Some(10))],
                1,
                "",
            ),
            report(
                Layer::Guardrails,
                "build",
                vec![Issue::new(
                    "guardrails/build",
                    Severity::Error,
                    "`cargo build --offline --quiet` exited with code 101",
                )],
                360,
                "error[E0308]: mismatched types\n --> src/lib.rs:11:5\n   |\n11 |     loud.len()\n   |     ^^^^^^^^^^ expected `String`, found `usize`",
            )
            .input("command", "cargo build --offline --quiet"),
            Report::skipped(Layer::Guardrails, "tests", "skipped: build failed"),
        ]
    } else {
        vec![
            report(Layer::Guardrails, "secrets", vec![], 23, ""),
            report(Layer::Guardrails, "build", vec![], 2100, "Finished dev"),
            report(
                Layer::Guardrails,
                "tests",
                vec![],
                3400,
                "test result: ok. 2 passed",
            ),
        ]
    }
}

/// The verdict and reason of a candidate of the given kind (pass, failed
/// build, denied path).
fn verdict_of(kind: usize) -> (Verdict, Option<String>) {
    match kind {
        0 => (Verdict::Pass, None),
        1 => (
            Verdict::Fail,
            Some(
                "guardrails build: `cargo build --offline --quiet` exited with code 101"
                    .to_string(),
            ),
        ),
        _ => (
            Verdict::Fail,
            Some(
                "permissions: changed path `.github/workflows/ci.yml` matches denied pattern"
                    .to_string(),
            ),
        ),
    }
}

/// The token usage candidate `i` reports.
fn usage(i: usize, id: &str) -> RunEvent {
    RunEvent::Usage {
        candidate: id.to_string(),
        usage: rascal_core::model::usage::Usage {
            input_tokens: 12_000 + 1000 * i as u64,
            output_tokens: 3_400,
            cached_tokens: 0,
            cost_usd: Some(0.21 + i as f64 / 10.0),
        },
    }
}

/// The ranking of a finished run: the first (up to) three candidates in
/// order, the first one picked. As the comparator does, a candidate's
/// consensus is its mean likeness in the matrix to the *other passing*
/// candidates (1.0 with none, and then no reason gives a figure); the
/// first is the only one passing here.
fn ranking(ids: &[String]) -> rascal_engine::layers::Ranking {
    use rascal_engine::layers::{Ranked, Ranking};
    let k = ids.len().min(3);
    let reasons = [
        "PASS; 3 layers passed",
        "FAIL: guardrails build",
        "FAIL: permissions denied path",
    ];
    let order = [0usize, 1, 2];
    let matrix: Vec<Vec<f64>> = (0..k)
        .map(|a| {
            (0..k)
                .map(|b| {
                    if a == b {
                        1.0
                    } else {
                        0.5 + (a + b) as f64 / 20.0
                    }
                })
                .collect()
        })
        .collect();
    Ranking {
        positions: order[..k]
            .iter()
            .enumerate()
            .map(|(p, &i)| Ranked {
                position: p + 1,
                candidate: ids[i].clone(),
                verdict: if i == 0 { Verdict::Pass } else { Verdict::Fail },
                layers_passed: 3 - i,
                criteria_met: 0,
                consensus: if i == 0 { 1.0 } else { 0.0 },
                lines: 10 + 5 * i as u64,
                files: 1 + i,
                reason: reasons[i].into(),
                usage: None,
                agreement: None,
            })
            .collect(),
        ids: ids[..k].to_vec(),
        matrix,
        pick: Some(ids[0].clone()),
        judge: None,
        agreement: None,
        contested: None,
        unseparated: Vec::new(),
        probes: None,
    }
}

/// An app with the given events folded in and a fixed clock.
pub fn app(n: usize, finished: bool, no_color: bool) -> App {
    app_themed(
        n,
        finished,
        Theme::named("dark", no_color).expect("dark theme"),
    )
}

/// [`app`] drawn with `theme`.
pub fn app_themed(n: usize, finished: bool, theme: Theme) -> App {
    let meta = RunMeta {
        strategy: "compare".into(),
        layers_on: vec![Layer::Agent, Layer::Guardrails, Layer::Permissions],
        detachable: false,
        attached: false,
        combine: false,
    };
    let mut app = App::new(meta, theme, "Ada Lovelace <ada@example.com>".into());
    for (ev, at) in events(n, finished) {
        update(&mut app, Action::Run(Box::new(ev), at));
    }
    update(&mut app, Action::Tick(T0 + 15_000));
    app
}

/// `app` drawn on a `w`×`h` test terminal, as text (one line per row).
pub fn drawn(app: &App, w: u16, h: u16) -> String {
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
    t.draw(|f| crate::draw::draw(f, app)).unwrap();
    let buf = t.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every figure a fixture's ranking reason gives is the candidate's
    /// mean likeness in the matrix to the other passing candidates, as the
    /// comparator computes it; with none passing beside it, no figure at
    /// all (the compare screens once said "closest to the others (0.62)"
    /// of a lone passer whose row read 0.55 and 0.60).
    #[test]
    fn the_ranking_reasons_agree_with_the_matrix() {
        for n in 1..=5 {
            let ranking = ranking(&candidate_ids(n));
            for p in &ranking.positions {
                let i = ranking
                    .ids
                    .iter()
                    .position(|id| *id == p.candidate)
                    .unwrap();
                let others: Vec<f64> = ranking
                    .positions
                    .iter()
                    .filter(|o| o.candidate != p.candidate && o.verdict != Verdict::Fail)
                    .map(|o| {
                        let j = ranking
                            .ids
                            .iter()
                            .position(|id| *id == o.candidate)
                            .unwrap();
                        ranking.matrix[i][j]
                    })
                    .collect();
                let figures: Vec<&str> = p
                    .reason
                    .split(|c: char| !(c.is_ascii_digit() || c == '.'))
                    .filter(|w| w.len() == 4 && w.as_bytes()[1] == b'.')
                    .collect();
                if others.is_empty() || p.verdict == Verdict::Fail {
                    assert!(figures.is_empty(), "{}: {:?}", p.reason, ranking.matrix);
                } else {
                    let mean = others.iter().sum::<f64>() / others.len() as f64;
                    assert_eq!(figures, [format!("{mean:.2}")], "{}", p.reason);
                }
            }
        }
    }
}
