//! Where a combined candidate's change came from, as the pipeline reads
//! it: its sources' diffs (as the combining agent was handed them), its
//! own verified change and the base's files, traced by the pure
//! `layers::provenance` into the candidate's `provenance` report.

use crate::pipeline::candidate::CandidateOutcome;
use rascal_core::model::verdict::Layer;
use rascal_exec::git::holdout::Holdout;
use rascal_exec::git::workspace;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a combined change is traced to (`layers::provenance`): the
/// diffs its sources were handed as, and where its own change is.
pub(crate) struct Sources {
    pub(crate) diffs: Vec<(String, String)>,
    pub(crate) worktree: PathBuf,
    pub(crate) holdout: Arc<Holdout>,
    pub(crate) allow_glue: bool,
}

impl Sources {
    /// The `provenance` report of the combined candidate `o`: its verified
    /// change traced to its sources and the base (`origin` at `base`).
    pub(crate) fn report(
        &self,
        origin: &Path,
        base: git2::Oid,
        o: &CandidateOutcome,
    ) -> rascal_core::model::verdict::Report {
        use crate::layers::provenance;
        let tree = o
            .changes
            .as_ref()
            .and_then(|c| git2::Oid::from_str(&c.tree).ok());
        let diff = match tree {
            Some(tree) => workspace::tree_diff_text(origin, &self.worktree, base, tree),
            None => workspace::diff_text(origin, &self.worktree, base),
        };
        let diff = match diff {
            Ok(d) => self.holdout.strip_from_diff(&d),
            Err(e) => {
                return rascal_core::model::verdict::Report::new(
                    Layer::Agent,
                    provenance::PROVENANCE,
                )
                .errored(format!(
                    "could not read the combined change to trace it: {e}"
                ))
                .finish()
            }
        };
        let repo = workspace::open(origin).ok();
        let base_file = |path: &str| -> Option<String> {
            let repo = repo.as_ref()?;
            let tree = repo.find_commit(base).ok()?.tree().ok()?;
            let blob = tree
                .get_path(Path::new(path))
                .ok()?
                .to_object(repo)
                .ok()?
                .peel_to_blob()
                .ok()?;
            Some(String::from_utf8_lossy(blob.content()).into_owned())
        };
        let traced = provenance::trace(&diff, &self.diffs, &base_file);
        provenance::report(&traced, self.allow_glue)
    }
}
