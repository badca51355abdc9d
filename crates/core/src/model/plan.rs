//! Plan, then execute: the criteria a human approved against what the
//! planner proposed — what changed, in words, for the journal's decision
//! (docs/guide.md, "Plan, then execute").

use crate::config::spec::{Constraint, Criterion};

/// What the approved criteria change from the proposal, one line each:
/// dropped, edited, made optional (or required), added. Empty when the
/// proposal was approved as it was. Criteria are matched by position in
/// the proposal (`origin`: for each approved criterion, the index of the
/// proposed one it came from, None when the human added it).
pub fn changes(
    proposed: &[Criterion],
    approved: &[(Option<usize>, Criterion)],
    proposed_constraints: &[Constraint],
    approved_constraints: &[Constraint],
) -> Vec<String> {
    let mut out = Vec::new();
    for (i, p) in proposed.iter().enumerate() {
        match approved.iter().find(|(o, _)| *o == Some(i)) {
            None => out.push(format!("dropped `{}`", p.description)),
            Some((_, a)) => {
                if a.description != p.description
                    || a.check != p.check
                    || a.kind != p.kind
                    || a.new_test != p.new_test
                {
                    out.push(format!(
                        "edited `{}` → `{}` ({}: `{}`)",
                        p.description,
                        a.description,
                        a.kind.name(),
                        a.check
                    ));
                }
                if a.required != p.required {
                    out.push(format!(
                        "made `{}` {}",
                        a.description,
                        if a.required { "required" } else { "optional" }
                    ));
                }
            }
        }
    }
    for (_, a) in approved.iter().filter(|(o, _)| o.is_none()) {
        out.push(format!(
            "added `{}` ({}: `{}`{})",
            a.description,
            a.kind.name(),
            a.check,
            if a.required { "" } else { ", optional" }
        ));
    }
    for c in proposed_constraints {
        if !approved_constraints.contains(c) {
            out.push(format!("dropped constraint `{}`", c.description));
        }
    }
    for c in approved_constraints {
        if !proposed_constraints.contains(c) {
            out.push(format!("added constraint `{}`", c.description));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::spec::CriterionKind;

    fn c(d: &str, check: &str) -> Criterion {
        Criterion {
            description: d.into(),
            kind: CriterionKind::Test,
            check: check.into(),
            required: true,
            new_test: true,
        }
    }

    #[test]
    fn an_unchanged_plan_has_no_changes() {
        let p = vec![c("a", "x"), c("b", "y")];
        let a: Vec<_> = p
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, c)| (Some(i), c))
            .collect();
        assert!(changes(&p, &a, &[], &[]).is_empty());
    }

    #[test]
    fn dropped_edited_optional_and_added_are_each_said() {
        let p = vec![c("a", "x"), c("b", "y"), c("c", "z")];
        let mut edited = c("a2", "x");
        edited.required = false;
        let a = vec![
            (Some(0), edited),
            (Some(2), c("c", "z")),
            (None, c("d", "w")),
        ];
        assert_eq!(
            changes(&p, &a, &[], &[]),
            vec![
                "edited `a` → `a2` (test: `x`)".to_string(),
                "made `a2` optional".into(),
                "dropped `b`".into(),
                "added `d` (test: `w`)".into(),
            ]
        );
    }
}
