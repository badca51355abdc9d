//! The prompts rascal composes for an author: a real agent CLI (claude,
//! codex, goose) gets the task as the user wrote it, then what rascal asks
//! of every author — the honest way out (`impossible.md`) instead of
//! bending the tests. A `command` agent gets the raw instruction; its
//! contract (README, docs/configuration.md) says the same. A planned
//! task's approved acceptance criteria are shown to every author: in the
//! prompt of a real CLI, and in `$RASCAL_CRITERIA_FILE` for any agent —
//! held-out tests never.

use rascal_core::config::spec::{ConstraintKind, CriterionKind, Task};

pub(crate) use crate::exec::env::CRITERIA_ENV;

/// The task's criteria an author may see: all but held-out tests.
fn shown(task: &Task) -> Task {
    let mut t = Task::from_instruction(task.instruction.clone());
    t.acceptance_criteria = task
        .acceptance_criteria
        .iter()
        .filter(|c| c.kind != CriterionKind::Holdout)
        .cloned()
        .collect();
    t.constraints = task.constraints.clone();
    t
}

/// The criteria as a prompt's section (None when there are none to show).
pub(crate) fn criteria_section(task: &Task) -> Option<String> {
    let t = shown(task);
    if !t.has_criteria() {
        return None;
    }
    let mut s = String::from(
        "## Acceptance criteria (approved before you started; rascal checks each one)\n\n",
    );
    for c in &t.acceptance_criteria {
        let note = match (c.kind, c.new_test) {
            (CriterionKind::Test, true) => {
                " — write this test: it must fail on the base commit and pass on your change"
            }
            _ => "",
        };
        s.push_str(&format!(
            "- {}{} ({}: `{}`){note}\n",
            c.description,
            if c.required { "" } else { " [optional]" },
            c.kind.name(),
            c.check
        ));
    }
    if !t.constraints.is_empty() {
        s.push_str("\n## Constraints\n\n");
        for c in &t.constraints {
            let v = match &c.kind {
                ConstraintKind::NoTouchFiles(g) => format!(": `{}`", g.as_str()),
                ConstraintKind::MaxLines(n) => format!(": {n}"),
                ConstraintKind::NoNewDeps => String::new(),
            };
            s.push_str(&format!("- {} ({}{v})\n", c.description, c.kind.name()));
        }
    }
    Some(s)
}

/// The criteria file's text: JSON in the spec's schema.
pub(crate) fn criteria_json(task: &Task) -> String {
    let t = shown(task);
    serde_json::json!({
        "acceptance_criteria": t.acceptance_criteria,
        "constraints": t.constraints,
    })
    .to_string()
}

/// What every prompt rascal composes for an author says, last.
pub const WAY_OUT: &str = "If you find the task impossible or contradictory (for example tests that contradict the instruction, or a dependency that is missing), do not edit, delete or special-case tests to make them pass: write your reason to `$RASCAL_ARTIFACTS_DIR/impossible.md` and stop. rascal then reports the task as impossible to a human instead of judging a change.";

/// `text` ending with [`WAY_OUT`] (once: a follow-up that already says it
/// is left as it is).
pub fn with_way_out(text: &str) -> String {
    if text.contains(WAY_OUT) {
        return text.to_string();
    }
    format!("{}\n\n{WAY_OUT}\n", text.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rascal_core::config::spec::Criterion;

    #[test]
    fn the_criteria_are_shown_but_held_out_tests_never() {
        let mut task = Task::from_instruction("Add shout().");
        let c = |d: &str, kind, check: &str| Criterion {
            description: d.into(),
            kind,
            check: check.into(),
            required: true,
            new_test: kind == CriterionKind::Test,
        };
        task.acceptance_criteria = vec![
            c("shout upper-cases", CriterionKind::Test, "shout_upper"),
            c("hidden", CriterionKind::Holdout, "secret_holdout_name"),
        ];
        let s = criteria_section(&task).unwrap();
        assert!(
            s.contains("shout upper-cases (test: `shout_upper`) — write this test"),
            "{s}"
        );
        assert!(
            !s.contains("secret_holdout_name") && !s.contains("hidden"),
            "{s}"
        );
        let j = criteria_json(&task);
        assert!(
            j.contains("shout_upper") && !j.contains("secret_holdout_name"),
            "{j}"
        );
        assert!(criteria_section(&Task::from_instruction("x")).is_none());
    }

    #[test]
    fn the_way_out_is_said_once() {
        let p = with_way_out("Add shout().\n");
        assert_eq!(p, format!("Add shout().\n\n{WAY_OUT}\n"));
        assert!(p.contains("$RASCAL_ARTIFACTS_DIR/impossible.md"));
        assert_eq!(with_way_out(&p), p);
    }
}
