//! Vacuous acceptance criteria: a criterion that the unchanged base
//! already meets shows nothing about a change — `command: true`, a grep
//! that matches what is there, a file that exists, tests the base already
//! passes. Every criterion (the spec's, the planner's) is checked on the
//! base before any candidate's; one that passes there is `vacuous`: marked
//! on the plan screen and in every view, refused by `--approve` unless
//! `--allow-vacuous`, and never counted as evidence. Grep and file-exists
//! are read from the base's tree here (pure); `command` and `test` run on a
//! sandboxed copy of the base (`pipeline::vacuity`).
//!
//! What "passes at the base" means per kind: `grep PATTERN` must match in
//! the changed files, so it is vacuous when the pattern already matches
//! in the base's files (touching that file meets it); `grep !PATTERN` when
//! it matches nowhere in the base (doing nothing meets it); `file-exists`
//! when the file is there already. A `new_test` criterion asks for a test
//! the base lacks and is shown new elsewhere; `llm-judge` is advisory and
//! `holdout` is the task's own: none of those is checked here.

use rascal_core::config::spec::{grep_pattern, Criterion, CriterionKind};

/// How a criterion is checked on the base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnBase {
    /// Read from the base's files: `Some(why)` when vacuous.
    Read(Option<String>),
    /// Run on a copy of the base (`command`, `test`).
    Run,
    /// Not checked on the base (`new_test`, `llm-judge`, `holdout`).
    Skip,
}

/// A criterion on the base's files (`files`: path and text of each text
/// file of the base tree).
pub fn on_base(c: &Criterion, files: &[(String, String)]) -> OnBase {
    match c.kind {
        CriterionKind::Grep => OnBase::Read(grep(c, files)),
        CriterionKind::FileExists => {
            let path = c.check.trim().trim_start_matches("./");
            OnBase::Read(
                files
                    .iter()
                    .any(|(p, _)| p == path)
                    .then(|| format!("`{path}` exists at the base already")),
            )
        }
        CriterionKind::Command => OnBase::Run,
        CriterionKind::Test if !c.new_test => OnBase::Run,
        CriterionKind::Test | CriterionKind::LlmJudge | CriterionKind::Holdout => OnBase::Skip,
    }
}

fn grep(c: &Criterion, files: &[(String, String)]) -> Option<String> {
    let (re, must) = grep_pattern(&c.check).ok()?;
    let hit = files.iter().find_map(|(p, text)| {
        text.lines()
            .position(|l| re.is_match(l))
            .map(|i| format!("{p}:{}", i + 1))
    });
    match (must, hit) {
        (true, Some(at)) => Some(format!(
            "`{}` matches at the base already ({at}): any change to that file meets it",
            re.as_str()
        )),
        (false, None) => Some(format!(
            "`{}` matches nowhere at the base already: a change that does nothing meets it",
            re.as_str()
        )),
        _ => None,
    }
}

/// Why a `command` or `test` criterion that passed on the base is vacuous.
pub fn ran_clean(c: &Criterion) -> String {
    match c.kind {
        CriterionKind::Test => format!(
            "the tests `{}` selects pass on the unchanged base: a change that does nothing meets it",
            c.check
        ),
        _ => format!(
            "`{}` passes on the unchanged base: a change that does nothing meets it",
            c.check
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn criterion(kind: CriterionKind, check: &str) -> Criterion {
        Criterion {
            description: check.into(),
            kind,
            check: check.into(),
            required: true,
            new_test: false,
        }
    }

    fn base() -> Vec<(String, String)> {
        vec![
            (
                "src/lib.rs".into(),
                "pub fn decode(s: &str) -> String {\n    s.into()\n}\n".into(),
            ),
            ("README.md".into(), "# calc\n".into()),
        ]
    }

    #[test]
    fn a_grep_the_base_already_meets_is_vacuous_and_one_it_does_not_is_not() {
        let any = on_base(&criterion(CriterionKind::Grep, "."), &base());
        assert!(
            matches!(&any, OnBase::Read(Some(w)) if w.contains("src/lib.rs:1")),
            "{any:?}"
        );
        let new = on_base(
            &criterion(CriterionKind::Grep, "Result<String, DecodeError>"),
            &base(),
        );
        assert_eq!(new, OnBase::Read(None));
        let never = on_base(&criterion(CriterionKind::Grep, "!unsafe"), &base());
        assert!(
            matches!(never, OnBase::Read(Some(_))),
            "nothing to remove: vacuous"
        );
        let remove = on_base(&criterion(CriterionKind::Grep, "!s.into"), &base());
        assert_eq!(
            remove,
            OnBase::Read(None),
            "the base has it: the change must remove it"
        );
    }

    #[test]
    fn a_file_that_exists_already_is_vacuous_and_commands_run_on_the_base() {
        assert!(matches!(
            on_base(&criterion(CriterionKind::FileExists, "README.md"), &base()),
            OnBase::Read(Some(_))
        ));
        assert_eq!(
            on_base(
                &criterion(CriterionKind::FileExists, "CHANGELOG.md"),
                &base()
            ),
            OnBase::Read(None)
        );
        assert_eq!(
            on_base(&criterion(CriterionKind::Command, "true"), &base()),
            OnBase::Run
        );
        assert_eq!(
            on_base(&criterion(CriterionKind::Test, "tests::"), &base()),
            OnBase::Run
        );
        let mut new = criterion(CriterionKind::Test, "tests::decode_errors");
        new.new_test = true;
        assert_eq!(on_base(&new, &base()), OnBase::Skip);
        assert_eq!(
            on_base(&criterion(CriterionKind::LlmJudge, "is it good"), &base()),
            OnBase::Skip
        );
    }
}
