//! Plan, then execute: what the planning agent is asked, and its answer
//! read strictly. The answer is held to the same nonce-bound JSON contract
//! as a reviewer's verdict (`agents::ask::signed_answers`): one top-level
//! object carrying this call's nonce, with `criteria` in rascal's spec
//! schema (docs/configuration.md, "Plan, then execute"). The planner is
//! an agent: its answer is untrusted, so it is bounded and every criterion
//! is validated as a spec's would be. `parse_plan` is a pure function over
//! the bytes.

use crate::Error;
use rascal_core::config::spec::{Constraint, Criterion, CriterionKind, Task};
use serde_json::Value;

/// The most criteria one plan may propose.
pub const MAX_CRITERIA: usize = 20;
/// The most constraints one plan may propose.
pub const MAX_CONSTRAINTS: usize = 10;
/// The longest description (a one-line intent), in characters.
pub const MAX_DESCRIPTION: usize = 200;
/// The longest check (a test name, a regex, a path, a command).
pub const MAX_CHECK: usize = 500;

/// What a planner may propose: the kinds a candidate's change can be
/// checked by, never an LLM's opinion nor held-out tests (it cannot know
/// them).
pub const PLANNED_KINDS: &[CriterionKind] = &[
    CriterionKind::Test,
    CriterionKind::Grep,
    CriterionKind::FileExists,
    CriterionKind::Command,
];

/// A planner's parsed proposal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Proposal {
    pub criteria: Vec<Criterion>,
    pub constraints: Vec<Constraint>,
}

/// The planner's prompt: the task, where the base is (read-only), what to
/// propose and the nonce its answer must carry.
pub fn plan_prompt(task: &Task, base_view: &std::path::Path, nonce: &str) -> String {
    let existing = if task.acceptance_criteria.is_empty() {
        String::new()
    } else {
        let mut s = String::from("\n## Criteria the task already has (do not repeat them)\n\n");
        for c in &task.acceptance_criteria {
            if c.kind == CriterionKind::Holdout {
                continue;
            }
            s.push_str(&crate::layers::review::criterion_bullet(c));
        }
        s
    };
    format!(
        "You are planning a coding task before other agents write any code. Do not change any file. \
Read the repository at {} (a read-only copy of the base commit) and the task below, then propose \
acceptance criteria that will tell whether a change does the task. A human approves them before the \
agents start; the agents are shown them.\n\n\
This plan's nonce is {nonce}. Your answer object must carry it as \"nonce\"; an answer without it is ignored.\n\n\
## Task\n\n{}\n{existing}\n\
## What to propose\n\n\
- `test`: the name (a filter) of a test the change must ADD, which fails on the base commit and passes on the \
change; its description is the test's intent in one line. An existing test never meets it.\n\
- `grep`: a regex that must match in the changed files (`!` first: must not match).\n\
- `file-exists`: a path that must exist after the change.\n\
- `command`: a shell command that must exit 0 on the change.\n\
- constraints: `no-touch-files` (value: a glob), `max-lines` (value: a number), `no-new-deps`.\n\n\
## Your answer\n\n\
Give your reasoning if you like, then exactly ONE JSON object (a ```json fence is fine):\n\
{{\"nonce\": \"{nonce}\", \"criteria\": [{{\"description\": \"one line\", \"type\": \"test\" or \"grep\" or \"file-exists\" or \"command\", \"check\": \"...\"}}], \
\"constraints\": [{{\"type\": \"max-lines\", \"value\": 200}}]}}\n\
At most {MAX_CRITERIA} criteria, each with its own description. Print only one answer object.\n",
        base_view.display(),
        task.instruction.trim(),
    )
}

/// Parse a planner's output: only answer objects carrying `"nonce":
/// nonce` count. `existing`: the task's own criteria's descriptions (a
/// proposed one may not reuse them). `Err` is a structural failure, with
/// why.
pub fn parse_plan(bytes: &[u8], nonce: &str, existing: &[String]) -> Result<Proposal, Error> {
    if bytes.len() > rascal_exec::agents::ask::MAX_ANSWER_BYTES {
        return Err(Error::Agent(format!(
            "the output is {} bytes, over the {} KiB limit for a plan",
            bytes.len(),
            rascal_exec::agents::ask::MAX_ANSWER_BYTES / 1024
        )));
    }
    let text = String::from_utf8_lossy(bytes);
    if text.trim().is_empty() {
        return Err(Error::Agent("the planner printed nothing".into()));
    }
    let signed = rascal_exec::agents::ask::signed_answers(&text, "criteria", nonce)?;
    if signed.iter().any(|o| *o != signed[0]) {
        return Err(Error::Agent(format!(
            "{} answer objects carrying the nonce disagree; exactly one plan is allowed",
            signed.len()
        )));
    }
    let o = &signed[0];
    let criteria = match o.get("criteria") {
        Some(Value::Array(a)) => a,
        _ => return Err(Error::Agent("`criteria` must be a list".into())),
    };
    if criteria.len() > MAX_CRITERIA {
        return Err(Error::Agent(format!(
            "{} criteria, over the limit of {MAX_CRITERIA}",
            criteria.len()
        )));
    }
    let mut out = Proposal::default();
    for (n, v) in criteria.iter().enumerate() {
        let c = criterion(n + 1, v)?;
        if existing.contains(&c.description)
            || out.criteria.iter().any(|o| o.description == c.description)
        {
            return Err(Error::Agent(format!(
                "criterion {}: the description `{}` is used twice; each criterion needs its own",
                n + 1,
                c.description
            )));
        }
        out.criteria.push(c);
    }
    let constraints = match o.get("constraints") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(_) => return Err(Error::Agent("`constraints` must be a list".into())),
    };
    if constraints.len() > MAX_CONSTRAINTS {
        return Err(Error::Agent(format!(
            "{} constraints, over the limit of {MAX_CONSTRAINTS}",
            constraints.len()
        )));
    }
    for (n, v) in constraints.into_iter().enumerate() {
        let c: Constraint = serde_json::from_value(v)
            .map_err(|e| Error::Agent(format!("constraint {}: {e}", n + 1)))?;
        clean(&c.description, MAX_DESCRIPTION)
            .map_err(|e| Error::Agent(format!("constraint {}: description {e}", n + 1)))?;
        out.constraints.push(c);
    }
    if out.criteria.is_empty() && out.constraints.is_empty() {
        return Err(Error::Agent(
            "the plan proposes no criterion and no constraint".into(),
        ));
    }
    Ok(out)
}

/// One proposed criterion, validated as a spec's (and bounded); a `test`
/// one is always a new test.
fn criterion(n: usize, v: &Value) -> Result<Criterion, Error> {
    let mut c: Criterion = serde_json::from_value(v.clone())
        .map_err(|e| Error::Agent(format!("criterion {n}: {e}")))?;
    if !PLANNED_KINDS.contains(&c.kind) {
        return Err(Error::Agent(format!(
            "criterion {n}: type `{}` cannot be planned; use test, grep, file-exists or command",
            c.kind.name()
        )));
    }
    clean(&c.description, MAX_DESCRIPTION)
        .map_err(|e| Error::Agent(format!("criterion {n}: description {e}")))?;
    clean(&c.check, MAX_CHECK).map_err(|e| Error::Agent(format!("criterion {n}: check {e}")))?;
    c.new_test = c.kind == CriterionKind::Test;
    c.validate()
        .map_err(|e| Error::Agent(format!("criterion {n}: {e}")))?;
    Ok(c)
}

/// One line of at most `max` characters, with no control characters.
fn clean(s: &str, max: usize) -> Result<(), Error> {
    if s.chars().count() > max {
        return Err(Error::Agent(format!("is longer than {max} characters")));
    }
    if s.chars().any(char::is_control) {
        return Err(Error::Agent(
            "has control characters (it must be one line of text)".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONCE: &str = "0123456789abcdef0123456789abcdef";

    fn parse(s: &str) -> Result<Proposal, Error> {
        parse_plan(s.as_bytes(), NONCE, &[])
    }

    #[test]
    fn a_signed_plan_parses_and_its_tests_are_new_tests() {
        let p = parse(&format!(
            r#"thinking… {{"nonce": "{NONCE}", "criteria": [
                {{"description": "shout upper-cases", "type": "test", "check": "shout_upper"}},
                {{"description": "no println", "type": "grep", "check": "!println!", "required": false}}],
              "constraints": [{{"type": "max-lines", "value": 50}}]}}"#
        ))
        .unwrap();
        assert_eq!(p.criteria.len(), 2);
        assert!(p.criteria[0].new_test);
        assert!(!p.criteria[1].new_test && !p.criteria[1].required);
        assert_eq!(p.constraints.len(), 1);
    }

    #[test]
    fn an_unsigned_or_broken_plan_is_refused_saying_why() {
        let unsigned =
            parse(r#"{"criteria": [{"description": "a", "type": "test", "check": "a"}]}"#)
                .unwrap_err()
                .to_string();
        assert!(unsigned.contains("nonce"), "{unsigned}");
        assert!(parse("no json here")
            .unwrap_err()
            .to_string()
            .contains("no JSON answer"));
        let judge = parse(&format!(
            r#"{{"nonce": "{NONCE}", "criteria": [{{"description": "a", "type": "llm-judge", "check": "a"}}]}}"#
        ))
        .unwrap_err().to_string();
        assert!(judge.contains("cannot be planned"), "{judge}");
        let unknown = parse(&format!(
            r#"{{"nonce": "{NONCE}", "criteria": [{{"description": "a", "type": "test", "check": "a", "why": 1}}]}}"#
        ))
        .unwrap_err().to_string();
        assert!(unknown.contains("criterion 1"), "{unknown}");
        let dup = parse(&format!(
            r#"{{"nonce": "{NONCE}", "criteria": [{{"description": "a", "type": "test", "check": "a"}}, {{"description": "a", "type": "test", "check": "b"}}]}}"#
        ))
        .unwrap_err().to_string();
        assert!(dup.contains("used twice"), "{dup}");
        let ctl = parse(&format!(
            r#"{{"nonce": "{NONCE}", "criteria": [{{"description": "a\u001b[2J", "type": "test", "check": "a"}}]}}"#
        ))
        .unwrap_err().to_string();
        assert!(ctl.contains("control"), "{ctl}");
        let empty = parse(&format!(r#"{{"nonce": "{NONCE}", "criteria": []}}"#))
            .unwrap_err()
            .to_string();
        assert!(empty.contains("no criterion"), "{empty}");
    }
}
