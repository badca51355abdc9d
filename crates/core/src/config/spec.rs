//! The task: what to do (instruction), how to tell it is done (acceptance
//! criteria, Layer 3) and what must not happen (constraints). A task comes
//! from the command line, from `.rascal/specs/NAME.yaml` at the base commit,
//! or from a Markdown issue body with `## Acceptance Criteria` and
//! `## Constraints` lists.

use crate::config::permissions::GlobPattern;
use crate::config::{parse, ConfigError};
use serde::{Deserialize, Serialize};

pub const SPECS_DIR: &str = ".rascal/specs";

/// How a criterion is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CriterionKind {
    /// Run the named test with the repository's test command template.
    Test,
    /// A shell command that must exit 0.
    Command,
    /// A regex that must match in the changed files (`!` prefix: must not).
    Grep,
    /// A path that must exist after the change.
    FileExists,
    /// An LLM judge's opinion: advisory, never gates alone.
    LlmJudge,
    /// Held-out tests (the spec's `holdout:`), run with the test command
    /// template on a copy that has them.
    Holdout,
}

impl CriterionKind {
    pub const ALL: &'static [(&'static str, CriterionKind)] = &[
        ("test", CriterionKind::Test),
        ("command", CriterionKind::Command),
        ("grep", CriterionKind::Grep),
        ("file-exists", CriterionKind::FileExists),
        ("llm-judge", CriterionKind::LlmJudge),
        ("holdout", CriterionKind::Holdout),
    ];

    pub fn name(self) -> &'static str {
        CriterionKind::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }

    fn from_name(s: &str) -> Option<CriterionKind> {
        CriterionKind::ALL
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, k)| *k)
    }
}

/// One acceptance criterion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawCriterion")]
pub struct Criterion {
    pub description: String,
    #[serde(rename = "type")]
    pub kind: CriterionKind,
    pub check: String,
    /// A failing optional criterion warns instead of failing.
    pub required: bool,
    /// `type: test` only: the test must be one this change writes, failing
    /// on the base's code and passing on the change (a planned criterion
    /// asks for a new test, so the base's own tests never meet it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub new_test: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCriterion {
    description: String,
    #[serde(rename = "type")]
    kind: CriterionKind,
    check: String,
    #[serde(default)]
    required: Option<bool>,
    #[serde(default)]
    new_test: bool,
}

impl TryFrom<RawCriterion> for Criterion {
    type Error = crate::Error;
    fn try_from(r: RawCriterion) -> Result<Self, crate::Error> {
        let c = Criterion {
            description: r.description,
            kind: r.kind,
            check: r.check,
            required: r.required.unwrap_or(true),
            new_test: r.new_test,
        };
        c.validate()?;
        Ok(c)
    }
}

impl Criterion {
    /// Whether the criterion can be checked as written: a description, a
    /// check, `new_test` only on a test, a grep's regex that compiles.
    pub fn validate(&self) -> Result<(), crate::Error> {
        let invalid = |what: String| Err(crate::Error::Invalid(what));
        if self.description.trim().is_empty() {
            return invalid("criterion `description` must not be empty".into());
        }
        if self.check.trim().is_empty() {
            return invalid(format!(
                "criterion `{}`: `check` must not be empty",
                self.description
            ));
        }
        if self.new_test && self.kind != CriterionKind::Test {
            return invalid(format!(
                "criterion `{}`: `new_test` applies to `type: test` only",
                self.description
            ));
        }
        if self.kind == CriterionKind::Grep {
            if let Err(e) = grep_pattern(&self.check) {
                return invalid(format!("criterion `{}`: {e}", self.description));
            }
        }
        Ok(())
    }
}

/// A grep check: the regex, and whether it must match (false after `!`).
pub fn grep_pattern(check: &str) -> Result<(regex::Regex, bool), crate::Error> {
    let (must, pat) = match check.strip_prefix('!') {
        Some(rest) => (false, rest),
        None => (true, check),
    };
    regex::Regex::new(pat).map(|r| (r, must)).map_err(|e| {
        crate::Error::Invalid(format!(
            "invalid regex `{pat}`: {}",
            e.to_string().lines().last().unwrap_or("syntax error")
        ))
    })
}

/// What a constraint forbids.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "kebab-case")]
pub enum ConstraintKind {
    /// No changed path (either side of a rename) may match the glob.
    NoTouchFiles(GlobPattern),
    /// No dependency added to Cargo.toml, go.mod, package.json,
    /// pyproject.toml or requirements*.txt.
    NoNewDeps,
    /// At most this many lines changed (added + removed).
    MaxLines(u64),
}

impl ConstraintKind {
    pub fn name(&self) -> &'static str {
        match self {
            ConstraintKind::NoTouchFiles(_) => "no-touch-files",
            ConstraintKind::NoNewDeps => "no-new-deps",
            ConstraintKind::MaxLines(_) => "max-lines",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawConstraint")]
pub struct Constraint {
    pub description: String,
    #[serde(flatten)]
    pub kind: ConstraintKind,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConstraint {
    #[serde(default)]
    description: Option<String>,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    value: Option<serde_yaml::Value>,
}

impl TryFrom<RawConstraint> for Constraint {
    type Error = crate::Error;
    fn try_from(r: RawConstraint) -> Result<Self, crate::Error> {
        let value = r.value.as_ref().map(|v| match v {
            serde_yaml::Value::String(s) => s.clone(),
            serde_yaml::Value::Number(n) => n.to_string(),
            other => format!("{other:?}"),
        });
        let kind = constraint_kind(&r.kind, value.as_deref())?;
        Ok(Constraint {
            description: r.description.unwrap_or_else(|| kind.name().to_string()),
            kind,
        })
    }
}

pub fn constraint_kind(kind: &str, value: Option<&str>) -> Result<ConstraintKind, crate::Error> {
    match (kind, value) {
        ("no-touch-files", Some(v)) => Ok(ConstraintKind::NoTouchFiles(GlobPattern::try_from(
            v.to_string(),
        )?)),
        ("no-touch-files", None) => Err(crate::Error::Invalid("`no-touch-files` needs `value: GLOB`".into())),
        ("no-new-deps", None) => Ok(ConstraintKind::NoNewDeps),
        ("no-new-deps", Some(_)) => Err(crate::Error::Invalid("`no-new-deps` takes no `value`".into())),
        ("max-lines", Some(v)) => v
            .trim()
            .parse::<u64>()
            .map(ConstraintKind::MaxLines)
            .map_err(|_| crate::Error::Invalid(format!("`max-lines` needs a whole number as `value`, got `{v}`"))),
        ("max-lines", None) => Err(crate::Error::Invalid("`max-lines` needs `value: N`".into())),
        (other, _) => Err(crate::Error::Invalid(format!(
            "unknown constraint type `{other}`; expected one of: no-touch-files, no-new-deps, max-lines"
        ))),
    }
}

/// A task: the instruction plus what Layer 3 checks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    pub instruction: String,
    #[serde(default)]
    pub acceptance_criteria: Vec<Criterion>,
    #[serde(default)]
    pub constraints: Vec<Constraint>,
    /// Dynamic scoping: permissions for this task only. They narrow the
    /// repository's `.rascal/permissions.yaml`, never widen it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<crate::config::PermissionsConfig>,
    /// Tests (names) or paths (globs) this task may remove, skip or
    /// weaken without failing `test-integrity`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_test_changes: Vec<String>,
    /// Held-out tests: paths or globs in the base commit (or a directory
    /// outside the repository) that agents never see; `type: holdout`
    /// criteria run them on the verification copy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holdout: Vec<String>,
    /// Plan, then execute: a planning agent proposes acceptance criteria
    /// and a human approves them before any candidate writes code
    /// (docs/configuration.md, "Plan, then execute"). On an approved task
    /// it says the criteria came from a plan: the candidates are shown them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub plan: bool,
}

impl Task {
    pub fn from_instruction(instruction: impl Into<String>) -> Task {
        Task {
            instruction: instruction.into(),
            ..Task::default()
        }
    }

    /// The task as a spec file's YAML (what `from_yaml` reads back).
    pub fn to_yaml(&self) -> Result<String, crate::Error> {
        serde_yaml::to_string(self).map_err(|e| crate::Error::Yaml(e.to_string()))
    }

    /// True when Layer 3 has something to check.
    pub fn has_criteria(&self) -> bool {
        !self.acceptance_criteria.is_empty() || !self.constraints.is_empty()
    }

    /// Parse a spec file's YAML; errors name `file:line:col`.
    pub fn from_yaml(file: &str, text: &str) -> Result<Task, ConfigError> {
        let task: Task = parse(file, text)?;
        crate::config::yaml::unique_names(
            file,
            text,
            &[crate::config::yaml::Seg::key("acceptance_criteria")],
            Some("description"),
            task.acceptance_criteria
                .iter()
                .map(|c| c.description.as_str()),
            "acceptance criteria",
            "give each criterion its own description: its report is known by it",
        )?;
        if task.instruction.trim().is_empty() {
            return Err(ConfigError {
                file: file.to_string(),
                line: None,
                column: None,
                message: "`instruction` is empty".into(),
                hint: "say what the agents should do in `instruction:`".into(),
            });
        }
        Ok(task)
    }

    /// Parse a Markdown issue body. The whole body is the instruction; the
    /// `## Acceptance Criteria` checklist and `## Constraints` list are
    /// parsed. An item may end with a code span naming its check, e.g.
    /// `` - [ ] health works `test: health_returns_ok` ``; an item without
    /// one is judged by the LLM judge (advisory). A constraint without one
    /// becomes an advisory judged criterion too, except "no new
    /// dependencies", which is recognised.
    pub fn from_markdown(file: &str, text: &str) -> Result<Task, ConfigError> {
        let mut task = Task::from_instruction(text.trim().to_string());
        if task.instruction.is_empty() {
            return Err(ConfigError {
                file: file.to_string(),
                line: None,
                column: None,
                message: "the issue body is empty".into(),
                hint: "write what the agents should do, with `## Acceptance Criteria` as a `- [ ]` list".into(),
            });
        }
        #[derive(PartialEq)]
        enum Section {
            Other,
            Criteria,
            Constraints,
        }
        let mut section = Section::Other;
        // Criterion description → its line: a report is known by it.
        let mut seen = std::collections::HashMap::<String, usize>::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            let err = |message: String| {
                ConfigError {
                file: file.to_string(),
                line: Some(i + 1),
                column: Some(raw.len() - raw.trim_start().len() + 1),
                message,
                hint: "end an item with a code span like `test: NAME`, `grep: REGEX`, `command: CMD`, `file-exists: PATH`, `no-touch-files: GLOB`, `max-lines: N` or `no-new-deps`".into(),
            }
            };
            if let Some(h) = line.strip_prefix('#') {
                let title = h.trim_start_matches('#').trim().to_ascii_lowercase();
                section = match title.as_str() {
                    "acceptance criteria" => Section::Criteria,
                    "constraints" => Section::Constraints,
                    _ => Section::Other,
                };
                continue;
            }
            let item = match line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")) {
                Some(rest) => strip_checkbox(rest.trim()),
                None => continue,
            };
            if item.is_empty() || section == Section::Other {
                continue;
            }
            let (description, hint) = split_hint(item);
            let before = task.acceptance_criteria.len();
            match section {
                Section::Criteria => {
                    let c = criterion_item(item, description, hint, &err)?;
                    task.acceptance_criteria.push(c);
                }
                Section::Constraints => constraint_item(&mut task, description, hint, &err)?,
                Section::Other => {}
            }
            if let Some(c) = task.acceptance_criteria.get(before) {
                if let Some(first) = seen.insert(c.description.clone(), i + 1) {
                    return Err(err(format!(
                        "two acceptance criteria are named `{}`: at line {first} and at line {}",
                        c.description,
                        i + 1
                    )));
                }
            }
        }
        Ok(task)
    }
}

/// An `## Acceptance Criteria` item of an issue body: checked as its code
/// span says, or (without one) judged by the LLM judge.
fn criterion_item(
    item: &str,
    description: &str,
    hint: Option<(&str, &str)>,
    err: &dyn Fn(String) -> ConfigError,
) -> Result<Criterion, ConfigError> {
    let c = match hint {
        Some((kind, check)) => {
            let kind = CriterionKind::from_name(kind)
                .ok_or_else(|| err(format!("unknown criterion type `{kind}` in `{item}`")))?;
            Criterion {
                description: description.to_string(),
                kind,
                check: check.to_string(),
                required: true,
                new_test: false,
            }
        }
        None => Criterion {
            description: description.to_string(),
            kind: CriterionKind::LlmJudge,
            check: description.to_string(),
            required: true,
            new_test: false,
        },
    };
    c.validate().map_err(|e| err(e.to_string()))?;
    Ok(c)
}

/// A `## Constraints` item of an issue body, into `task`: a constraint
/// checked as its code span says, "no new dependencies", or else an
/// advisory criterion for the LLM judge.
fn constraint_item(
    task: &mut Task,
    description: &str,
    hint: Option<(&str, &str)>,
    err: &dyn Fn(String) -> ConfigError,
) -> Result<(), ConfigError> {
    match hint {
        Some((kind, value)) => {
            let value = (!value.is_empty()).then_some(value);
            let kind = constraint_kind(kind, value).map_err(|e| err(e.to_string()))?;
            task.constraints.push(Constraint {
                description: description.to_string(),
                kind,
            });
        }
        None if mentions_no_new_deps(description) => task.constraints.push(Constraint {
            description: description.to_string(),
            kind: ConstraintKind::NoNewDeps,
        }),
        None => task.acceptance_criteria.push(Criterion {
            description: format!("constraint: {description}"),
            kind: CriterionKind::LlmJudge,
            check: description.to_string(),
            required: true,
            new_test: false,
        }),
    }
    Ok(())
}

fn strip_checkbox(s: &str) -> &str {
    for b in ["[ ]", "[x]", "[X]"] {
        if let Some(rest) = s.strip_prefix(b) {
            return rest.trim();
        }
    }
    s
}

/// `description `type: check`` → (description, Some((type, check))).
fn split_hint(item: &str) -> (&str, Option<(&str, &str)>) {
    if let Some(body) = item.strip_suffix('`') {
        if let Some(start) = body.rfind('`') {
            let span = &body[start + 1..];
            let desc = body[..start]
                .trim()
                .trim_end_matches(['—', '-', ':'])
                .trim();
            let known = |k: &str| {
                CriterionKind::from_name(k).is_some()
                    || matches!(k, "no-touch-files" | "no-new-deps" | "max-lines")
            };
            let (kind, check) = match span.split_once(':') {
                Some((k, c)) => (k.trim(), c.trim()),
                None => (span.trim(), ""),
            };
            if known(kind) {
                let desc = if desc.is_empty() { span } else { desc };
                return (desc, Some((kind, check)));
            }
        }
    }
    (item, None)
}

fn mentions_no_new_deps(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    l.contains("no new dependenc") || l.contains("no new deps")
}

/// A spec name is a file stem under `.rascal/specs/`: no path separators.
pub fn spec_path(name: &str) -> Result<String, crate::Error> {
    let stem = name.strip_suffix(".yaml").unwrap_or(name);
    let ok = !stem.is_empty()
        && !stem.starts_with('.')
        && stem
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(format!("{SPECS_DIR}/{stem}.yaml"))
    } else {
        Err(crate::Error::SpecName {
            name: name.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hint_splitting() {
        assert_eq!(
            split_hint("health works `test: health_ok`"),
            ("health works", Some(("test", "health_ok")))
        );
        assert_eq!(
            split_hint("`no-new-deps`"),
            ("no-new-deps", Some(("no-new-deps", "")))
        );
        assert_eq!(split_hint("uses `foo` well"), ("uses `foo` well", None));
        assert_eq!(split_hint("x `rust: code`"), ("x `rust: code`", None));
    }
}
