//! A planner's proposal and the criteria checked on the unchanged base,
//! as printed.

use rascal_core::text::{cut, sanitize};

/// The planner's proposal: its criteria and constraints, or why there is
/// none.
pub(super) fn plan_lines(
    agent: &str,
    criteria: &[rascal_core::config::spec::Criterion],
    constraints: &[rascal_core::config::spec::Constraint],
    problem: Option<&str>,
) -> Vec<String> {
    let mut out = vec![match problem {
        Some(p) => format!(
            "plan by {}: no usable proposal: {}",
            sanitize(agent),
            cut(&sanitize(p), 300)
        ),
        None => format!(
            "plan proposed by {}: {}, {}",
            sanitize(agent),
            rascal_core::text::plural(criteria.len() as u64, "acceptance criterion"),
            rascal_core::text::plural(constraints.len() as u64, "constraint")
        ),
    }];
    out.extend(criteria.iter().map(criterion_line));
    out.extend(constraints.iter().map(constraint_line));
    out
}

/// One criterion of a plan or a planned task.
pub fn criterion_line(c: &rascal_core::config::spec::Criterion) -> String {
    format!(
        "    - {}{} ({}: `{}`{})",
        cut(&sanitize(&c.description), 200),
        if c.required { "" } else { " [optional]" },
        c.kind.name(),
        // As long as a planner may write one (`plan_answer::MAX_CHECK`):
        // what a human approves is shown whole.
        cut(&sanitize(&c.check), 500),
        if c.new_test { ", a new test" } else { "" }
    )
}

/// One constraint of a plan or a planned task.
pub fn constraint_line(c: &rascal_core::config::spec::Constraint) -> String {
    use rascal_core::config::spec::ConstraintKind;
    let v = match &c.kind {
        ConstraintKind::NoTouchFiles(g) => format!(": `{}`", sanitize(g.as_str())),
        ConstraintKind::MaxLines(n) => format!(": {n}"),
        ConstraintKind::NoNewDeps => String::new(),
    };
    format!(
        "    - constraint {} ({}{v})",
        cut(&sanitize(&c.description), 200),
        c.kind.name()
    )
}

/// The criteria checked on the unchanged base: one line, and one per
/// vacuous criterion.
pub(super) fn vacuous_lines(
    checked: usize,
    vacuous: &[rascal_core::model::event::VacuousCriterion],
) -> Vec<String> {
    if vacuous.is_empty() {
        return vec![format!(
            "criteria on the base: {} checked, none met by the unchanged base",
            checked
        )];
    }
    let mut out = vec![format!(
        "criteria on the base: {} of {checked} vacuous — the unchanged base already meets {}: never counted as evidence",
        vacuous.len(),
        if vacuous.len() == 1 { "it" } else { "them" }
    )];
    out.extend(vacuous.iter().map(|v| {
        format!(
            "  vacuous: {} — {}",
            sanitize(&v.criterion),
            sanitize(&v.why)
        )
    }));
    out
}
