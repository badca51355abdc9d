//! The plan screen's state (plan, then execute): the planner's proposed
//! criteria with checkboxes, which the human keeps or drops, edits (the
//! description or the check), marks optional, or adds to; Enter approves
//! them as a `Decision` saying what changed from the proposal. Pure: the
//! shell sends the decision and writes the spec (`w`). See docs/guide.md,
//! "Plan, then execute".

use crate::error::Error;
use rascal_core::config::spec::{Constraint, Criterion, CriterionKind, Task};
use rascal_core::model::decision::{Decision, DecisionKind};

/// One row: a criterion, where it came from, and whether it is kept.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanItem {
    /// Its index in the proposal; None when the human added it.
    pub origin: Option<usize>,
    pub criterion: Criterion,
    pub keep: bool,
}

/// What the text field edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanField {
    Description,
    Check,
    /// A new criterion, written as `description `type: check``.
    New,
}

impl PlanField {
    pub fn prompt(self) -> &'static str {
        match self {
            PlanField::Description => "description",
            PlanField::Check => "check",
            PlanField::New => "new criterion (description `type: check`)",
        }
    }
}

/// The open text field.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanEdit {
    pub field: PlanField,
    pub input: String,
}

/// The plan screen.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanScreen {
    pub agent: String,
    /// Why the planner gave no usable proposal (the human writes it).
    pub problem: Option<String>,
    pub proposed: Vec<Criterion>,
    pub constraints: Vec<Constraint>,
    /// Which of the proposed constraints are kept (the rows after the
    /// criteria): a planner's constraint binds every candidate, so the
    /// human may drop it as a criterion.
    pub constraint_keep: Vec<bool>,
    pub items: Vec<PlanItem>,
    /// The selected row: a criterion, then the constraints after them.
    pub sel: usize,
    /// The descriptions of the task's own criteria (a spec's): an edited
    /// or added criterion may not take one (each report is known by it).
    pub existing: Vec<String>,
    pub edit: Option<PlanEdit>,
    /// What was wrong with the last edit or approval.
    pub error: Option<String>,
    /// The approval was sent (or recorded): the screen is done.
    pub approved: bool,
    /// The criteria the unchanged base already meets, once checked there
    /// (None while they are).
    pub on_base: Option<Vec<rascal_core::model::event::VacuousCriterion>>,
}

impl PlanScreen {
    pub fn new(
        agent: &str,
        criteria: &[Criterion],
        constraints: &[Constraint],
        problem: Option<&str>,
    ) -> PlanScreen {
        PlanScreen {
            agent: agent.to_string(),
            problem: problem.map(str::to_string),
            proposed: criteria.to_vec(),
            constraints: constraints.to_vec(),
            constraint_keep: vec![true; constraints.len()],
            items: criteria
                .iter()
                .enumerate()
                .map(|(i, c)| PlanItem {
                    origin: Some(i),
                    criterion: c.clone(),
                    keep: true,
                })
                .collect(),
            sel: 0,
            existing: Vec::new(),
            edit: None,
            error: None,
            approved: false,
            on_base: None,
        }
    }

    /// Why criterion `c` is vacuous, when the base meets it as proposed
    /// (an edited criterion is the human's own).
    pub fn vacuous(&self, c: &Criterion) -> Option<&str> {
        let found = self.on_base.as_ref()?;
        let proposed = self.proposed.iter().any(|p| p == c);
        found
            .iter()
            .find(|v| proposed && v.criterion == c.description)
            .map(|v| v.why.as_str())
    }

    pub fn up(&mut self) {
        self.sel = self.sel.saturating_sub(1);
    }

    pub fn down(&mut self) {
        let rows = self.items.len() + self.constraints.len();
        self.sel = (self.sel + 1).min(rows.saturating_sub(1));
    }

    /// Keep or drop the selected criterion (or constraint).
    pub fn toggle(&mut self) {
        if let Some(i) = self.items.get_mut(self.sel) {
            i.keep = !i.keep;
        } else if let Some(k) = self
            .sel
            .checked_sub(self.items.len())
            .and_then(|n| self.constraint_keep.get_mut(n))
        {
            *k = !*k;
        }
    }

    /// The kept constraints.
    pub fn kept_constraints(&self) -> Vec<Constraint> {
        self.constraints
            .iter()
            .zip(&self.constraint_keep)
            .filter(|(_, k)| **k)
            .map(|(c, _)| c.clone())
            .collect()
    }

    /// Required ⇄ optional (`required: false`: it warns, never fails).
    pub fn toggle_required(&mut self) {
        if let Some(i) = self.items.get_mut(self.sel) {
            i.criterion.required = !i.criterion.required;
        }
    }

    /// Open the text field on the selected criterion's `field` (or empty,
    /// for a new one).
    pub fn start_edit(&mut self, field: PlanField) {
        let input = match (field, self.items.get(self.sel)) {
            (PlanField::Description, Some(i)) => i.criterion.description.clone(),
            (PlanField::Check, Some(i)) => i.criterion.check.clone(),
            (PlanField::New, _) => String::new(),
            (_, None) => return,
        };
        self.error = None;
        self.edit = Some(PlanEdit { field, input });
    }

    pub fn input(&mut self, c: char) {
        if let Some(e) = &mut self.edit {
            if !c.is_control() && e.input.chars().count() < 500 {
                e.input.push(c);
            }
        }
    }

    pub fn backspace(&mut self) {
        if let Some(e) = &mut self.edit {
            e.input.pop();
        }
    }

    pub fn cancel_edit(&mut self) {
        self.edit = None;
        self.error = None;
    }

    /// Apply the text field: the criterion as edited must be valid (and
    /// keep its own description), else the field stays open with why.
    pub fn submit_edit(&mut self) {
        let Some(edit) = self.edit.clone() else {
            return;
        };
        let text = edit.input.trim().to_string();
        let result = match edit.field {
            PlanField::New => added(&text).map(|c| {
                self.items.push(PlanItem {
                    origin: None,
                    criterion: c,
                    keep: true,
                });
                self.sel = self.items.len() - 1;
            }),
            field => {
                let Some(item) = self.items.get(self.sel) else {
                    return;
                };
                let mut c = item.criterion.clone();
                match field {
                    PlanField::Description => c.description = text,
                    _ => c.check = text,
                }
                c.validate()
                    .map(|_| self.items[self.sel].criterion = c)
                    .map_err(|e| Error::Plan(e.to_string()))
            }
        };
        let result = result.and_then(|_| self.unique());
        match result {
            Ok(()) => {
                self.edit = None;
                self.error = None;
            }
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    /// Each kept criterion has its own description.
    fn unique(&self) -> Result<(), Error> {
        let mut seen: std::collections::BTreeSet<&str> =
            self.existing.iter().map(String::as_str).collect();
        for i in self.items.iter().filter(|i| i.keep) {
            if !seen.insert(i.criterion.description.as_str()) {
                return Err(Error::Plan(format!(
                    "two criteria are named `{}`: give each its own description",
                    i.criterion.description
                )));
            }
        }
        Ok(())
    }

    /// The kept criteria, with where each came from.
    pub fn kept(&self) -> Vec<(Option<usize>, Criterion)> {
        self.items
            .iter()
            .filter(|i| i.keep)
            .map(|i| (i.origin, i.criterion.clone()))
            .collect()
    }

    /// The approval as `who` makes it: the kept criteria, the proposal's
    /// constraints, what changed.
    pub fn decision(&self, who: &str) -> Result<Decision, Error> {
        self.unique()?;
        let kept = self.kept();
        let constraints = self.kept_constraints();
        let changes = rascal_core::model::plan::changes(
            &self.proposed,
            &kept,
            &self.constraints,
            &constraints,
        );
        let reason = if changes.is_empty() {
            "approved as proposed".to_string()
        } else {
            "approved with changes".to_string()
        };
        Ok(Decision::new(
            None,
            DecisionKind::ApprovePlan {
                criteria: kept.into_iter().map(|(_, c)| c).collect(),
                constraints,
                changes,
            },
            who,
            &reason,
        ))
    }

    /// The kept criteria as a spec (`w` saves it in the repository).
    pub fn spec_yaml(&self, instruction: &str) -> Result<String, Error> {
        let mut task = Task::from_instruction(instruction);
        task.acceptance_criteria = self.kept().into_iter().map(|(_, c)| c).collect();
        task.constraints = self.kept_constraints();
        task.to_yaml().map_err(|e| Error::Plan(e.to_string()))
    }
}

/// A criterion the human added, written as an issue's checklist item:
/// `description `type: check``. A `test` is a new test, as a planned one.
fn added(text: &str) -> Result<Criterion, Error> {
    let doc = format!("## Acceptance Criteria\n- {text}\n");
    let task =
        Task::from_markdown("the new criterion", &doc).map_err(|e| Error::Plan(e.message))?;
    let mut c = task
        .acceptance_criteria
        .into_iter()
        .next()
        .ok_or_else(|| Error::Plan("write it as: description `type: check`".into()))?;
    if c.kind == CriterionKind::LlmJudge || c.kind == CriterionKind::Holdout {
        return Err(Error::Plan(
            "end it with its check: `test: NAME`, `grep: REGEX`, `file-exists: PATH` or `command: CMD`"
                .into(),
        ));
    }
    c.new_test = c.kind == CriterionKind::Test;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crit(d: &str, kind: CriterionKind, check: &str) -> Criterion {
        Criterion {
            description: d.into(),
            kind,
            check: check.into(),
            required: true,
            new_test: kind == CriterionKind::Test,
        }
    }

    fn screen() -> PlanScreen {
        PlanScreen::new(
            "planner",
            &[
                crit("a is tested", CriterionKind::Test, "a_works"),
                crit("b exists", CriterionKind::FileExists, "b.txt"),
                crit("no todo", CriterionKind::Grep, "!TODO"),
            ],
            &[],
            None,
        )
    }

    #[test]
    fn edit_drop_optional_and_add_are_the_decisions_changes() {
        let mut p = screen();
        p.start_edit(PlanField::Description);
        for _ in 0.."a is tested".len() {
            p.backspace();
        }
        "a has a unit test".chars().for_each(|c| p.input(c));
        p.submit_edit();
        p.down();
        p.toggle();
        p.down();
        p.toggle_required();
        p.start_edit(PlanField::New);
        "docs mention a `grep: the a command`"
            .chars()
            .for_each(|c| p.input(c));
        p.submit_edit();
        assert_eq!(p.error, None);
        let d = p.decision("Ann <ann@example.com>").unwrap();
        let DecisionKind::ApprovePlan {
            criteria, changes, ..
        } = &d.kind
        else {
            panic!("{d:?}")
        };
        let names: Vec<&str> = criteria.iter().map(|c| c.description.as_str()).collect();
        assert_eq!(names, ["a has a unit test", "no todo", "docs mention a"]);
        assert!(criteria[0].new_test && !criteria[1].required);
        assert_eq!(changes.len(), 4, "{changes:?}");
        assert_eq!(d.reason, "approved with changes");
        assert_eq!(d.who, "Ann <ann@example.com>");
    }

    /// A planner's constraint binds every candidate: the human can drop
    /// it (it is selected after the criteria), and the decision says so.
    #[test]
    fn a_proposed_constraint_can_be_dropped() {
        use rascal_core::config::spec::ConstraintKind;
        let lock = Constraint {
            description: "everything is locked".into(),
            kind: ConstraintKind::NoTouchFiles("**".to_string().try_into().unwrap()),
        };
        let small = Constraint {
            description: "small".into(),
            kind: ConstraintKind::MaxLines(50),
        };
        let mut p = PlanScreen::new(
            "planner",
            &[crit("a is tested", CriterionKind::Test, "a_works")],
            &[lock, small.clone()],
            None,
        );
        p.down();
        p.toggle();
        p.down();
        p.down();
        assert_eq!(p.sel, 2, "the last row is the last constraint");
        let d = p.decision("me").unwrap();
        let DecisionKind::ApprovePlan {
            criteria,
            constraints,
            changes,
        } = &d.kind
        else {
            panic!("{d:?}")
        };
        assert_eq!(criteria.len(), 1);
        assert_eq!(constraints, &vec![small]);
        assert_eq!(
            changes,
            &vec!["dropped constraint `everything is locked`".to_string()]
        );
        let yaml = p.spec_yaml("Add a.").unwrap();
        assert!(!yaml.contains("everything is locked"), "{yaml}");
    }

    #[test]
    fn the_saved_spec_reads_back_as_the_kept_criteria() {
        let mut p = screen();
        p.down();
        p.toggle();
        let yaml = p.spec_yaml("Add a.").unwrap();
        let task = Task::from_yaml(".rascal/specs/add-a.yaml", &yaml).unwrap();
        assert_eq!(task.instruction, "Add a.");
        let kept: Vec<Criterion> = p.kept().into_iter().map(|(_, c)| c).collect();
        assert_eq!(task.acceptance_criteria, kept);
        assert!(task.acceptance_criteria[0].new_test);
    }

    /// The spec's own criteria keep their descriptions: an edit that takes
    /// one is refused (the approved task would not read back as a spec).
    #[test]
    fn an_edit_may_not_take_the_specs_own_criterions_description() {
        let mut p = screen();
        p.existing = vec!["the spec's own".into()];
        p.start_edit(PlanField::Description);
        for _ in 0.."a is tested".len() {
            p.backspace();
        }
        "the spec's own".chars().for_each(|c| p.input(c));
        p.submit_edit();
        assert!(p.edit.is_some(), "the field stays open");
        assert!(
            p.error.as_deref().unwrap().contains("the spec's own"),
            "{:?}",
            p.error
        );
        // Nor can it be approved while the two share a description.
        p.cancel_edit();
        let e = p.decision("me").unwrap_err().to_string();
        assert!(e.contains("the spec's own"), "{e}");
    }

    #[test]
    fn a_bad_edit_keeps_the_field_open_saying_why() {
        let mut p = screen();
        p.down();
        p.down();
        p.start_edit(PlanField::Check);
        p.input('(');
        p.submit_edit();
        assert!(p.edit.is_some());
        assert!(
            p.error.as_deref().unwrap().contains("invalid regex"),
            "{:?}",
            p.error
        );
        p.cancel_edit();
        p.start_edit(PlanField::New);
        "no check here".chars().for_each(|c| p.input(c));
        p.submit_edit();
        assert!(p
            .error
            .as_deref()
            .unwrap()
            .contains("end it with its check"));
        // Unchanged: approved as proposed.
        p.cancel_edit();
        let d = p.decision("me").unwrap();
        assert_eq!(d.reason, "approved as proposed");
    }
}
