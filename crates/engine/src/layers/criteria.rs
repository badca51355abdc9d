//! Layer 3, acceptance criteria and constraints: does the change do what
//! was asked? One report per criterion or constraint, each with evidence
//! (the command and its exit code, the matched location, the judge's
//! reason) in `output`, rendered as a Markdown checklist. grep, file-exists
//! and the constraints are pure over the ChangeSet and the files; `test` and
//! `command` run through the command runner; `llm-judge` asks the judge
//! agent and is advisory (its issues are clamped to warnings).

use crate::layers::criterion_proof::{self, BaseSide};
use crate::layers::diagnostics::{self, Captured};
use crate::layers::review;
use crate::layers::test_results::{self, run_whole, Whole};
use rascal_core::config::permissions::{compile_globs, fold_path};
use rascal_core::config::spec::{
    grep_pattern, Constraint, ConstraintKind, Criterion, CriterionKind, Task,
};
use rascal_core::config::{AgentConfig, Config, VERIFICATION_FILE};
use rascal_core::model::changeset::ChangeSet;
use rascal_core::model::verdict::{Issue, Layer, Report, Severity};
use rascal_exec::agents::ask::{self, Site};
use rascal_exec::exec::place::Place;
use rascal_exec::exec::runner::TAIL_LINES;
use rascal_scan::deps;
use rascal_scan::ledger::{self, Judged, Listing, Recognised};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

mod command;
mod judge;
mod pure_checks;
mod test_command;

#[cfg(test)]
pub(crate) use command::unmatched_holdout;
pub use command::{is_held_out, run_command_criterion};
use judge::run_judge;
pub use judge::{parse_judge, Judge};
pub use pure_checks::{check_constraint, check_file_exists, check_grep};
pub use test_command::{
    default_test_command, shell_quote, shown_listing, template_from_guardrails, tests_ran_in,
};

/// Default time for one `test` or `command` criterion.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// The files a pure criterion may look at: after the change, and at base.
pub trait Files {
    /// Content of `path` after the change (None: absent or not a file).
    fn read(&self, path: &str) -> Option<Vec<u8>>;
    /// Content of `path` at the base commit.
    fn read_base(&self, path: &str) -> Option<Vec<u8>>;
}

/// A candidate's change (read from its tree, never from the live
/// workspace) and its base commit.
pub struct PlaceFiles<'a> {
    pub place: &'a Place,
    pub base: git2::Oid,
}

impl Files for PlaceFiles<'_> {
    fn read(&self, path: &str) -> Option<Vec<u8>> {
        self.place.read(safe_rel(path)?.to_str()?)
    }

    /// From the user's repository, never from the candidate's own `.git`.
    fn read_base(&self, path: &str) -> Option<Vec<u8>> {
        let repo = git2::Repository::discover(self.place.origin()).ok()?;
        rascal_exec::git::workspace::read_at(&repo, self.base, path).ok()?
    }
}

/// `path` as a relative path that stays inside the repository.
fn safe_rel(path: &str) -> Option<PathBuf> {
    let p = Path::new(path);
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => out.push(s),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

fn criterion_report(c: &Criterion) -> Report {
    let mut r = Report::new(Layer::Criteria, &c.description)
        .input("type", c.kind.name())
        .input("check", &c.check);
    r.required = c.required;
    r.advisory = c.kind == CriterionKind::LlmJudge;
    r
}

fn fail(mut r: Report, rule: &str, evidence: String) -> Report {
    r.issues
        .push(Issue::new(rule, Severity::Error, evidence.clone()));
    r.output = evidence;
    r.finish()
}

fn pass(mut r: Report, evidence: String) -> Report {
    r.output = evidence;
    r.finish()
}

/// Everything Layer 3 needs for one attempt.
pub struct CriteriaRun<'a> {
    pub task: &'a Task,
    pub config: &'a Config,
    /// Where the change's files are and where its commands run.
    pub place: &'a Place,
    pub base: git2::Oid,
    pub changes: &'a ChangeSet,
    pub diff: &'a str,
    pub judge: Option<Judge<'a>>,
    /// The base's side, for `test` criteria met by the change's own tests
    /// (None in place).
    pub base_side: Option<&'a dyn BaseSide>,
    pub cancel: CancellationToken,
}

/// Check every criterion (in order), then every constraint. All of them
/// run — the checklist is complete, so feedback to an author is too.
pub async fn evaluate(run: &CriteriaRun<'_>, sink: &(dyn Fn(Report) + Send + Sync)) -> Vec<Report> {
    let files = PlaceFiles {
        place: run.place,
        base: run.base,
    };
    let (template, timeout) = command_settings(run.config, run.place.origin(), run.base);
    let mut out = Vec::new();
    for (i, c) in run.task.acceptance_criteria.iter().enumerate() {
        let started = Instant::now();
        let mut r = match c.kind {
            CriterionKind::Grep => check_grep(c, run.changes, &files),
            CriterionKind::FileExists => check_file_exists(c, &files),
            CriterionKind::Test | CriterionKind::Command => {
                run_command_criterion(c, template.as_deref(), run.place, (timeout, run.base_side), &run.cancel).await
            }
            CriterionKind::Holdout if run.place.holdout_files() == 0 => criterion_report(c)
                .errored("a `holdout` criterion, but the task's spec names no held-out tests (`holdout:`)")
                .finish(),
            CriterionKind::Holdout => {
                let place = run.place.with_holdout();
                run_command_criterion(c, template.as_deref(), &place, (timeout, None), &run.cancel).await
            }
            CriterionKind::LlmJudge => {
                run_judge(
                    c,
                    run.task,
                    run.diff,
                    run.judge.as_ref(),
                    i + 1,
                    &run.cancel,
                )
                .await
            }
        };
        if r.duration_ms == 0 {
            r.duration_ms = started.elapsed().as_millis() as u64;
        }
        let r = r.input("diff", run.changes.fingerprint()).finish();
        sink(r.clone());
        out.push(r);
    }
    for c in &run.task.constraints {
        let started = Instant::now();
        let mut r = check_constraint(c, run.changes, &files);
        r.duration_ms = started.elapsed().as_millis() as u64;
        let r = r.input("diff", run.changes.fingerprint()).finish();
        sink(r.clone());
        out.push(r);
    }
    out
}

/// How `test` and `command` criteria run (`criteria:` in
/// `verification.yaml`): the test command template (else the project's
/// own test run with a filter, else the repository's default at `base`),
/// and the time each may take.
pub fn command_settings(
    config: &Config,
    origin: &Path,
    base: git2::Oid,
) -> (Option<String>, Duration) {
    let settings = config
        .verification
        .as_ref()
        .and_then(|v| v.criteria.clone())
        .unwrap_or_default();
    let template = settings
        .test_command
        .clone()
        .or_else(|| {
            config
                .guardrails
                .as_deref()
                .and_then(template_from_guardrails)
        })
        .or_else(|| default_test_command(origin, base).map(String::from));
    let timeout = settings.timeout.map(|d| d.get()).unwrap_or(DEFAULT_TIMEOUT);
    (template, timeout)
}

pub use rascal_core::model::checklist::checklist_line;

#[cfg(test)]
mod tests;
