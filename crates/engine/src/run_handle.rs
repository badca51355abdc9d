//! One run as a front end reads and finishes it, handed out by the run's
//! `Session` (`Session::handle`) once it has started (or attached to) it:
//! a candidate's diff, two candidates compared, the files a change wrote
//! (to find a test's source), a candidate's log, whether a workspace file
//! differs from the base, what finalizing would do, the finalize itself
//! and the pull request after it, and a plan saved as a spec. Cheap to
//! clone into a background task. Each call is the engine's one path for
//! that job: `rascal finalize` makes the same finalize call, `rascal show`
//! reads the same record.

use crate::changes::{self, Change};
use crate::finalize::run::{self as finalize_run, Outcome};
use crate::finalize::FinalizeOptions;
use crate::store::LogView;
use crate::store::Project;
use rascal_core::model::event::{CandidateInfo, Finalization, RunEvent};
use rascal_core::model::preview::Preview;
use std::path::{Path, PathBuf};

/// Run `run` of the repository at `repo`, whose base commit is `base`.
#[derive(Debug, Clone)]
pub struct RunHandle {
    repo: PathBuf,
    run: String,
    base: String,
}

impl RunHandle {
    /// Made by the run's `Session`: a front end gets it from there.
    pub(crate) fn new(repo: &Path, run: &str, base: &str) -> RunHandle {
        RunHandle {
            repo: repo.to_path_buf(),
            run: run.to_string(),
            base: base.to_string(),
        }
    }

    /// The run's id.
    pub fn run(&self) -> &str {
        &self.run
    }

    /// `c`'s change as a unified diff against the base.
    pub fn diff(&self, c: &Change) -> Result<String, crate::Error> {
        changes::diff_text(&self.repo, &self.run, &self.base, c)
    }

    /// How `a`'s change differs from `b`'s (B old, A new).
    pub fn compare(&self, a: &Change, b: &Change) -> Result<String, crate::Error> {
        changes::compare_text(&self.repo, &self.run, &self.base, a, b)
    }

    /// The files `c`'s verified change added or modified (path, text).
    pub fn changed_files(&self, c: &Change) -> Result<Vec<(String, String)>, crate::Error> {
        changes::changed_files(&self.repo, &self.run, &self.base, c)
    }

    /// Whether a file of the workspace at `dir` differs from the base (a
    /// file the base does not have differs; so does any file when the
    /// repository cannot be read).
    pub fn differs_from_base(&self, dir: &Path) -> impl Fn(&str) -> bool {
        changes::differs_from_base(&self.repo, &self.base, dir)
    }

    /// The candidate's log as the journal recorded it (segments checked
    /// against their hashes when read).
    pub fn log(&self, info: &CandidateInfo) -> Result<LogView, crate::Error> {
        let files = self.project()?.files();
        Ok(LogView::for_candidates(&files, std::slice::from_ref(info)))
    }

    /// Write the plan's criteria as a spec at `path` in the repository
    /// (never over a file, never through a link): what happened, in one
    /// line.
    pub fn save_spec(&self, path: &str, text: &str) -> String {
        crate::pipeline::save_spec(&self.repo, path, text)
    }

    fn project(&self) -> Result<Project, crate::Error> {
        Ok(Project::open(&self.repo)?)
    }

    /// What finalizing `candidate` would do.
    pub fn preview(&self, candidate: &str) -> Result<Preview, crate::Error> {
        Ok(finalize_run::preview_run(
            &self.project()?,
            &self.run,
            candidate,
        )?)
    }

    /// Finalize the run's selected candidate, as `rascal finalize [--pr]`
    /// does.
    pub fn finalize(&self, open_pr: bool) -> Result<Outcome, crate::Error> {
        let opts = FinalizeOptions {
            pr: open_pr,
            ..FinalizeOptions::default()
        };
        Ok(finalize_run::finalize_run(
            &self.project()?,
            &self.run,
            &opts,
        )?)
    }

    /// Open the finalized branch's pull request with `gh` and journal it:
    /// the PR's address and the event (None when the record could not say
    /// so).
    pub fn open_pr(&self, f: &Finalization) -> Result<(String, Option<RunEvent>), crate::Error> {
        finalize_run::open_pr(&self.project()?, &self.run, f)
    }
}
