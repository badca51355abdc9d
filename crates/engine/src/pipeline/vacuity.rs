//! The task's acceptance criteria checked on the unchanged base, before
//! any candidate's (see `layers::vacuous` for what vacuous means). Grep
//! and file-exists criteria are read from the base's tree; `command` and
//! `test` criteria run on a fresh copy of the base in the sandbox the
//! candidates' checks use, with the network off — never unconfined: where
//! bubblewrap is missing they are not checked (and say so). The result is
//! journaled (`RunEvent::CriteriaOnBase`) for every view.

use crate::layers::criteria;
use crate::layers::vacuous::{self, OnBase};
use crate::pipeline::journal::Journal;
use rascal_core::config::spec::Criterion;
use rascal_core::config::Config;
use rascal_core::model::event::{RunEvent, VacuousCriterion};
use rascal_core::model::verdict::Status;
use rascal_exec::exec::place::{Place, Sandboxed};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// A text file larger than this is not read for a grep.
const MAX_FILE: usize = 1024 * 1024;

/// Where and against what the criteria are checked.
pub(crate) struct OnBaseRun<'a> {
    pub run: &'a str,
    pub config: &'a Config,
    pub repo_dir: &'a Path,
    pub state: &'a Path,
    pub base: git2::Oid,
    pub holdout: &'a [String],
    pub journal: &'a Journal,
    pub cancel: &'a CancellationToken,
}

/// Check `criteria` on the base, journal what was found, and return the
/// vacuous ones.
pub(crate) async fn check(p: &OnBaseRun<'_>, criteria: &[Criterion]) -> Vec<VacuousCriterion> {
    if criteria.is_empty() {
        return Vec::new();
    }
    let files = {
        let (repo, base) = (p.repo_dir.to_path_buf(), p.base);
        tokio::task::spawn_blocking(move || base_files(&repo, base))
            .await
            .unwrap_or_default()
    };
    let (template, timeout) = criteria::command_settings(p.config, p.repo_dir, p.base);
    let mut place: Option<Result<Place, crate::Error>> = None;
    let mut found = Vec::new();
    let mut checked = 0;
    for c in criteria {
        let why = match vacuous::on_base(c, &files) {
            OnBase::Skip => continue,
            OnBase::Read(why) => why,
            OnBase::Run => {
                let at = place.get_or_insert_with(|| base_place(p));
                let Ok(at) = at else { continue };
                let r = criteria::run_command_criterion(
                    c,
                    template.as_deref(),
                    at,
                    (timeout, None),
                    p.cancel,
                )
                .await;
                (r.status == Status::Pass && r.errored.is_none()).then(|| vacuous::ran_clean(c))
            }
        };
        if p.cancel.is_cancelled() {
            return found;
        }
        checked += 1;
        if let Some(why) = why {
            found.push(VacuousCriterion {
                criterion: c.description.clone(),
                why,
            });
        }
    }
    p.journal.emit(RunEvent::CriteriaOnBase {
        checked,
        vacuous: found.clone(),
    });
    let _ = std::fs::remove_dir_all(scratch(p));
    found
}

fn scratch(p: &OnBaseRun<'_>) -> PathBuf {
    p.state.join("runs").join(p.run).join("criteria-on-base")
}

/// A sandboxed copy of the base for `command` and `test` criteria.
fn base_place(p: &OnBaseRun<'_>) -> Result<Place, crate::Error> {
    rascal_exec::exec::sandbox::available().map_err(|e| {
        crate::Error::Sandbox(format!("no sandbox to run criteria on the base in: {e}"))
    })?;
    let repo = rascal_exec::git::workspace::open(p.repo_dir)?;
    let tree = repo
        .find_commit(p.base)
        .map_err(|e| crate::Error::Workspace(e.into()))?
        .tree_id()
        .to_string();
    let holdout = rascal_exec::git::holdout::Holdout::resolve(&repo, p.base, p.holdout)?;
    // The repository's own object store holds the base tree.
    let root = repo
        .path()
        .parent()
        .ok_or_else(|| crate::Error::Usage("the repository has no working directory".into()))?
        .to_path_buf();
    let mut hide = rascal_exec::exec::confine::private_paths(p.repo_dir, p.state);
    hide.extend(rascal_exec::git::holdout::outside_dirs(p.holdout));
    let dir = scratch(p);
    Ok(Place::Sandboxed(Arc::new(Sandboxed {
        origin: p.repo_dir.to_path_buf(),
        workspace: root,
        tree,
        run_tree: None,
        scratch: dir.join("checks"),
        cache: Some(dir.join("build-cache")),
        hide,
        confined: true,
        holdout: Arc::new(holdout),
        with_holdout: false,
        limits: Default::default(),
    })))
}

/// The base's text files, path and text (but `.rascal/`).
fn base_files(repo: &Path, base: git2::Oid) -> Vec<(String, String)> {
    crate::pipeline::compare::base_text::text_files(repo, base, MAX_FILE, 64 * 1024 * 1024)
}
