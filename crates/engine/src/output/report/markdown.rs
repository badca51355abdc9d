//! The PR body: the task, the agent's own summary quoted as text, one
//! checklist per layer with pass/fail marks and reasons, overrides shown as
//! "overridden by WHO: REASON" (never erased), the comparator's ranking and
//! the decisions; the journal's chain head when the summary was read from
//! the store, so a later edit of the record shows against it. Every piece
//! of text rascal did not write passes the output policy (`text::inert`):
//! the agent's summary is a fenced block nothing inside can close, every
//! other string is escaped inline, and the last line is the digest of all
//! above it.

use rascal_core::model::decision::DecisionKind;
use rascal_core::model::ranking::Ranking;
use rascal_core::model::summary::{CandidateSummary, ChainHead, RunSummary};
use rascal_core::model::verdict::{Layer, Report, Status};
use rascal_core::text::cut;
use rascal_core::text::inert::{markdown_inline, markdown_lines, markdown_quote, markdown_seal};
use std::fmt::Write;

/// Untrusted text inside a Markdown line: one line, no live HTML, comment,
/// image, link, mention or table pipe.
fn cell(s: &str) -> String {
    markdown_inline(s)
}

/// The most lines of the agent's `pr_body.md` quoted.
const AGENT_SUMMARY_LINES: usize = 60;

fn report_line(r: &Report, c: &CandidateSummary) -> String {
    let over = c.decisions.iter().find(|d| d.overrides(r));
    let dur = rascal_exec::exec::runner::human(std::time::Duration::from_millis(r.duration_ms));
    let reason = r
        .errored
        .clone()
        .map(|e| format!("could not verify: {e}"))
        .or_else(|| {
            r.issues.first().map(|i| {
                let loc = i
                    .location_to_print()
                    .map(|l| format!("{l}: "))
                    .unwrap_or_default();
                format!("{loc}{}", i.message)
            })
        })
        .unwrap_or_default();
    let more = if r.issues.len() > 1 {
        format!(" (+{} more)", r.issues.len() - 1)
    } else {
        String::new()
    };
    match (r.status, over) {
        (Status::Fail | Status::Warn, Some(d)) => format!(
            "- [x] {} — {} → overridden by {}: {}",
            cell(&r.check),
            if r.status == Status::Fail {
                "FAIL"
            } else {
                "WARN"
            },
            cell(&d.who),
            cell(&d.reason)
        ),
        (Status::Pass, _) => format!(
            "- [x] {} — pass ({dur}){}",
            cell(&r.check),
            cell(&test_evidence(r))
        ),
        (Status::Warn, None) => format!(
            "- [x] {} — warning: {}{more}",
            cell(&r.check),
            cell(&cut(&reason, 300))
        ),
        (Status::Fail, None) => format!(
            "- [ ] {} ← FAILED: {}{more}{}",
            cell(&r.check),
            cell(&cut(&reason, 300)),
            first_error(r)
        ),
        (Status::Skipped, Some(d)) => format!(
            "- [x] {} — skipped (never ran) → overridden by {}: {}",
            cell(&r.check),
            cell(&d.who),
            cell(&d.reason)
        ),
        (Status::Skipped, None) => format!(
            "- [ ] {} — skipped{}",
            cell(&r.check),
            if r.output.is_empty() {
                String::new()
            } else {
                format!(" ({})", cell(&r.output))
            }
        ),
    }
}

/// A test run's evidence: its ledger and how the base's own tests fared
/// on the change (empty for other checks).
fn test_evidence(r: &Report) -> String {
    let Some(l) = &r.ledger else {
        return String::new();
    };
    let mut s = format!(" — {}", l.summary());
    if let Some(b) = &l.base_tests {
        s.push_str(&format!(" · {}", b.summary()));
        if let Some(release) = b.release_summary() {
            s.push_str(&format!(" · {release}"));
        }
    }
    if let Some(n) = &l.new_tests {
        s.push_str(&format!(" · {}", n.summary()));
    }
    s
}

/// The first error of a failed command check, fenced and indented under
/// its checklist item (empty when there is none).
fn first_error(r: &Report) -> String {
    crate::layers::diagnostics::fenced_first_error(r, 12)
        .map(|b| b.lines().map(|l| format!("\n  {l}")).collect::<String>())
        .unwrap_or_default()
}

const SECTIONS: &[(Layer, &str)] = &[
    (Layer::Agent, "Agent"),
    (Layer::Guardrails, "Guardrails"),
    (Layer::Permissions, "Permissions"),
    (Layer::Criteria, "Acceptance criteria"),
    (Layer::Review, "Review"),
];

/// The PR body for the run's selected candidate (or its best-ranked one).
/// `agent_body`: the agent's own `pr_body.md`, quoted as text under "Agent's
/// summary", before rascal's own sections; `note`: one more line of
/// rascal's (finalize's rebase note). Sealed with the digest of every line.
pub fn pr_body(s: &RunSummary, agent_body: Option<&str>, note: Option<&str>) -> String {
    let mut out = String::new();
    let title = s.instruction.lines().next().unwrap_or("");
    let _ = writeln!(out, "## {}\n", cell(title));
    let _ = writeln!(out, "{}\n", markdown_lines(s.instruction.trim()));
    let chosen = s
        .selected
        .clone()
        .or_else(|| s.ranking.as_ref().and_then(|r| r.pick.clone()))
        .or_else(|| s.candidates.first().map(|c| c.id.clone()));
    let cand = chosen
        .as_ref()
        .and_then(|id| s.candidates.iter().find(|c| &c.id == id));
    let _ = writeln!(
        out,
        "Verified by rascal run `{}` on base `{}`{}.\n",
        s.run,
        &s.base[..s.base.len().min(12)],
        cand.map(candidate_verdict).unwrap_or_default()
    );
    if let Some(c) = cand.filter(|c| !c.combined_from.is_empty()) {
        let from: Vec<String> = c
            .combined_from
            .iter()
            .map(|f| format!("**{}**", cell(f)))
            .collect();
        let _ = writeln!(
            out,
            "Candidate **{}** was written by the combining agent {} from candidates {} (best first), in a fresh workspace from the base, and verified like the others.\n",
            cell(&c.id),
            cell(&c.agent),
            from.join(", ")
        );
        provenance_lines(&mut out, c);
    }
    if let Some(note) = s.worktree.config_note(&s.base) {
        let _ = writeln!(
            out,
            "**Note: {}** — the checks below were set by the working tree's `.rascal/`, not by the base commit's.\n",
            cell(&note)
        );
    }
    if let Some(tree) = cand.and_then(|c| c.tree.as_deref()) {
        let _ = writeln!(
            out,
            "The verified change is tree `{tree}` (every check's receipt names it; this commit holds exactly it).\n"
        );
    }
    journal_line(&mut out, s);
    if let (Some(c), Some(body)) = (cand, agent_body) {
        let _ = writeln!(
            out,
            "### Agent's summary\n\nWritten by agent {} (not by rascal), quoted as text:\n",
            cell(&c.agent)
        );
        let _ = writeln!(out, "{}", markdown_quote(body, AGENT_SUMMARY_LINES));
    }
    if let Some(c) = cand {
        layer_sections(&mut out, c);
    }
    if let Some(r) = &s.ranking {
        comparison_lines(&mut out, r);
    }
    declaration_lines(&mut out, s);
    budget_lines(&mut out, s);
    decision_lines(&mut out, s);
    if let Some(n) = note {
        let _ = writeln!(out, "> **Note:** {}\n", cell(n));
    }
    markdown_seal(&out)
}

/// The most new lines of a combined change listed in the PR body.
const NEW_CODE_LINES: usize = 40;

/// Where a combined candidate's lines came from, and every line of new
/// code (in no candidate it was combined from) by file and line.
fn provenance_lines(out: &mut String, c: &CandidateSummary) {
    use crate::layers::provenance::{PROVENANCE, RULE_NEW_CODE};
    let Some(r) = c
        .reports
        .iter()
        .find(|r| r.layer == Layer::Agent && r.check == PROVENANCE)
    else {
        return;
    };
    let new: Vec<_> = r
        .issues
        .iter()
        .filter(|i| i.rule == RULE_NEW_CODE)
        .collect();
    if new.is_empty() {
        let _ = writeln!(out, "Provenance: {}.\n", cell(&r.output));
        return;
    }
    let _ = writeln!(
        out,
        "**Provenance: {} of new code in no candidate it was combined from** — the combining agent wrote it; a human chose this candidate ({}):\n",
        rascal_core::text::plural(new.len() as u64, "line"),
        cell(&r.output)
    );
    for i in new.iter().take(NEW_CODE_LINES) {
        let _ = writeln!(
            out,
            "- `{}` {}",
            cell(&i.location_to_print().unwrap_or_default()).replace('`', "'"),
            cell(&i.message)
        );
    }
    if new.len() > NEW_CODE_LINES {
        let _ = writeln!(
            out,
            "- … {} more (`rascal show`)",
            new.len() - NEW_CODE_LINES
        );
    }
    out.push('\n');
}

/// The chosen candidate on the "Verified by" line: its agent, runtime,
/// sandbox and verdict (after overrides when they changed it).
fn candidate_verdict(c: &CandidateSummary) -> String {
    format!(
        " · candidate **{}** (agent {}, {}{}) · verdict **{}**{}",
        cell(&c.id),
        cell(&c.agent),
        c.runtime,
        if c.unsandboxed {
            ", **UNSANDBOXED**: the agent ran without a sandbox"
        } else {
            ""
        },
        c.verdict.map(|v| v.label()).unwrap_or("unfinished"),
        match (c.verdict, c.effective_verdict) {
            (Some(a), Some(b)) if a != b => format!(" → **{}** after overrides", b.label()),
            _ => String::new(),
        }
    )
}

/// The journal's length and chain head, with the `rascal verify` command
/// that checks it (nothing when the summary was not read from the store).
fn journal_line(out: &mut String, s: &RunSummary) {
    match &s.journal {
        Some(ChainHead {
            events,
            head: Some(h),
        }) => {
            let _ = writeln!(
                out,
                "Journal: {events} events, chain head `{h}` (check with `rascal verify {} --expect {h}`).\n",
                s.run
            );
        }
        Some(ChainHead { events, head: None }) => {
            let _ = writeln!(
                out,
                "Journal: {events} events, unchained (recorded by an older rascal; its record cannot be checked).\n"
            );
        }
        None => {}
    }
}

/// The change size, then one checklist per layer of the candidate's reports.
fn layer_sections(out: &mut String, c: &CandidateSummary) {
    let _ = writeln!(
        out,
        "{} changed.\n",
        rascal_core::text::change_size(c.files_changed as u64, c.lines_changed)
    );
    for (layer, name) in SECTIONS {
        let reports: Vec<&Report> = c.reports.iter().filter(|r| r.layer == *layer).collect();
        let _ = writeln!(out, "### {name}\n");
        if reports.is_empty() {
            let _ = writeln!(out, "_not configured for this repository_\n");
            continue;
        }
        for r in reports {
            let _ = writeln!(out, "{}", report_line(r, c));
        }
        let _ = writeln!(out);
    }
}

/// `### Declared impossible`: the candidates whose agents said the task
/// cannot be done, each with its reason's first line (nothing when none
/// did).
fn declaration_lines(out: &mut String, s: &RunSummary) {
    let declared: Vec<(&str, &str)> = s.declarations().collect();
    if declared.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "### Declared impossible\n\n{} of {} declared the task impossible instead of changing it (their changes were not judged):\n",
        declared.len(),
        rascal_core::text::plural(s.candidates.len() as u64, "candidate")
    );
    for (id, reason) in declared {
        let _ = writeln!(
            out,
            "- **{}**: {}",
            cell(id),
            cell(&cut(
                rascal_core::model::impossible::first_line(reason),
                300
            ))
        );
    }
    let _ = writeln!(out);
}

/// `### Comparison`: the ranking's table and the judge's pick (nothing
/// when a single candidate ran).
fn comparison_lines(out: &mut String, r: &Ranking) {
    if r.positions.len() > 1 {
        let _ = writeln!(out, "### Comparison of {} candidates\n", r.positions.len());
        let _ = writeln!(
            out,
            "| # | candidate | verdict | consensus | lines | files | why |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|");
        for p in &r.positions {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                p.position,
                cell(&p.candidate),
                p.verdict.label(),
                p.consensus_text(),
                p.lines,
                p.files,
                cell(&p.reason)
            );
        }
        if let Some(a) = &r.agreement {
            let _ = writeln!(
                out,
                "\nAgreement — each candidate's code (rows) on the tests the others wrote that fail at the base (columns; ✓ passed, ✗ failed, – not applicable):\n\n```text"
            );
            for l in a.render() {
                let _ = writeln!(out, "{}", l.replace("```", "` ` `"));
            }
            let _ = writeln!(out, "```");
        }
        if let (Some(p), false) = (&r.pick, r.unseparated.is_empty()) {
            let _ = writeln!(
                out,
                "\nNo test separates {} from {}: their code differs, and it ranks first — it is not shown better.",
                cell(p),
                cell(&r.unseparated.join(", "))
            );
        }
        if let Some(p) = &r.probes {
            let _ = writeln!(out, "\n{}.", cell(&crate::output::printer::probes_line(p)));
        }
        if let Some(why) = &r.contested {
            let _ = writeln!(out, "\nNo pick: {}", cell(why));
            let q = r.question(6);
            if !q.is_empty() {
                let _ = writeln!(out, "\nWhat separates them (tests, then probed calls):\n");
                for l in q {
                    let _ = writeln!(out, "- {}", cell(&l));
                }
            }
        }
        if let Some(j) = &r.judge {
            let _ = writeln!(
                out,
                "\nJudge `{}` (advisory, ties only): {}",
                cell(&j.agent),
                match (&j.pick, &j.problem) {
                    (_, Some(p)) => format!("not used — {}", cell(p)),
                    (Some(p), None) => format!("picked **{}**: {}", cell(p), cell(&j.reason)),
                    (None, None) => "no pick".into(),
                }
            );
        }
        let _ = writeln!(out);
    }
}

/// `### Decisions`: the run's and every candidate's, one line each.
fn decision_lines(out: &mut String, s: &RunSummary) {
    let decisions: Vec<_> = s
        .decisions
        .iter()
        .chain(s.candidates.iter().flat_map(|c| c.decisions.iter()))
        .collect();
    if !decisions.is_empty() {
        let _ = writeln!(out, "### Decisions\n");
        for d in decisions {
            let line = crate::output::printer::decision_line(d);
            let _ = writeln!(out, "- {}", cell(&line));
            if let DecisionKind::Retry { .. } = d.kind {
                continue;
            }
        }
        let _ = writeln!(out);
    }
}

/// `### Budgets`: the candidates a budget stopped, and the budgets that
/// could not be enforced (nothing when neither happened).
fn budget_lines(out: &mut String, s: &RunSummary) {
    let mut lines = Vec::new();
    for c in &s.candidates {
        if let Some(why) = &c.over_budget {
            lines.push(format!(
                "- **{}** was stopped (CANCELLED): {}",
                cell(&c.id),
                cell(why)
            ));
        }
        if let Some(w) = &c.budget_warning {
            lines.push(format!("- warning: {}", cell(w)));
        }
    }
    if !lines.is_empty() {
        let _ = writeln!(out, "### Budgets\n\n{}\n", lines.join("\n"));
    }
}

#[cfg(test)]
mod tests;
