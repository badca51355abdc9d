//! What the base commit defines for a candidate's checks, laid into the
//! trees their copies are written from:
//! - every check copy takes the files that decide how a check runs
//!   (toolchain selection, runner configuration, the scripts and Makefiles
//!   a test command names, modules that shadow the runner) from the base, so a
//!   change to them cannot change what a check runs (test integrity reports
//!   the change itself as an error);
//! - a base-tests copy also takes the base's tests: test files and test
//!   data from the base (those the candidate added left out), and in Rust
//!   sources the base's `#[cfg(test)]` modules in place of the candidate's.
//!
//! Paths the task allows to change (`allow_test_changes` globs) keep the
//! candidate's version.

use crate::Error;
use rascal_core::model::changeset::ChangeSet;
use rascal_exec::exec::place::Place;
use rascal_exec::git::overlay::{overlay, Lay};
use rascal_scan::test_integrity;

mod words;

pub use words::base_words;

/// Path globs of `allow_test_changes` (test names in it match no path).
fn allowed(allow: &[String]) -> globset::GlobSet {
    let mut set = globset::GlobSetBuilder::new();
    for a in allow {
        let Ok(p) = rascal_core::config::permissions::GlobPattern::try_from(a.clone()) else {
            continue;
        };
        for g in p.expanded() {
            if let Ok(g) = rascal_core::config::permissions::build_glob(&g) {
                set.add(g);
            }
        }
    }
    set.build().unwrap_or_else(|_| globset::GlobSet::empty())
}

/// The base commit's files, read from the user's repository.
struct BaseFiles {
    repo: git2::Repository,
    tree: git2::Oid,
}

impl BaseFiles {
    fn open(place: &Place, changes: &ChangeSet) -> Result<BaseFiles, Error> {
        let repo = git2::Repository::discover(place.origin())
            .map_err(|e| Error::Verification(e.to_string()))?;
        let tree = git2::Oid::from_str(&changes.base)
            .and_then(|b| repo.find_commit(b))
            .map(|c| c.tree_id())
            .map_err(|e| Error::Verification(format!("reading the base commit: {e}")))?;
        Ok(BaseFiles { repo, tree })
    }

    /// The text of `path` at the base (None when absent, not a file or not
    /// UTF-8).
    fn read(&self, path: &str) -> Option<String> {
        let tree = self.repo.find_tree(self.tree).ok()?;
        let entry = tree.get_path(std::path::Path::new(path)).ok()?;
        let blob = entry.to_object(&self.repo).ok()?;
        String::from_utf8(blob.as_blob()?.content().to_vec()).ok()
    }
}

/// The files of the base commit whose path passes `path_fits` and, when
/// given, whose text passes `text_fits` (only then are texts read): the
/// shallowest first, then by name, at most 256.
pub fn base_files_where(
    place: &Place,
    changes: &ChangeSet,
    path_fits: &dyn Fn(&str) -> bool,
    text_fits: Option<&dyn Fn(&str) -> bool>,
) -> Vec<String> {
    let Ok(base) = BaseFiles::open(place, changes) else {
        return Vec::new();
    };
    let Ok(tree) = base.repo.find_tree(base.tree) else {
        return Vec::new();
    };
    let mut paths: Vec<String> = Vec::new();
    let _ = tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        if entry.kind() == Some(git2::ObjectType::Blob) {
            let path = format!("{dir}{}", entry.name().unwrap_or(""));
            if path_fits(&path) {
                paths.push(path);
            }
        }
        git2::TreeWalkResult::Ok
    });
    paths.sort_by_key(|p| (p.matches('/').count(), p.clone()));
    paths
        .into_iter()
        .take(256)
        .filter(|p| text_fits.is_none_or(|fits| base.read(p).is_some_and(|t| fits(&t))))
        .collect()
}

/// The changed paths (both sides of a rename), each once, in order.
fn changed_paths(changes: &ChangeSet) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    changes
        .files
        .iter()
        .flat_map(|f| f.paths().map(str::to_string).collect::<Vec<_>>())
        .filter(|p| seen.insert(p.clone()))
        .collect()
}

/// Lay `edits` over this place's run tree; the place whose copies are
/// written from the result.
fn laid(place: &Place, changes: &ChangeSet, edits: &[(String, Lay)]) -> Result<Place, Error> {
    let Some(tree) = place.run_tree() else {
        return Ok(place.clone());
    };
    laid_on(place, changes, tree, edits)
}

/// Lay `edits` over `tree` (the run tree, or the base's); the place whose
/// copies are written from the result.
fn laid_on(
    place: &Place,
    changes: &ChangeSet,
    tree: &str,
    edits: &[(String, Lay)],
) -> Result<Place, Error> {
    let Some(ws) = place.workspace() else {
        return Ok(place.clone());
    };
    let tree = git2::Oid::from_str(tree).map_err(|_| no_tree())?;
    let base = git2::Oid::from_str(&changes.base).map_err(|_| no_base())?;
    let id = overlay(place.origin(), ws, tree, base, edits)?;
    Ok(place.running_on(&id.to_string()))
}

/// `place` with one more file, `path` holding `bytes` (the discriminator's
/// probe), laid over what its copies are written from.
pub fn with_file(place: &Place, base: &str, path: &str, bytes: &[u8]) -> Result<Place, Error> {
    let Some(ws) = place.workspace() else {
        return Err(Error::Verification(
            "this place has no workspace to lay a file in".into(),
        ));
    };
    let tree = place.run_tree().ok_or_else(no_tree)?.to_string();
    let tree = git2::Oid::from_str(&tree).map_err(|_| no_tree())?;
    let base = git2::Oid::from_str(base).map_err(|_| no_base())?;
    let edits = [(path.to_string(), Lay::Bytes(bytes.to_vec()))];
    let id = overlay(place.origin(), ws, tree, base, &edits)?;
    Ok(place.running_on(&id.to_string()))
}

/// A place whose change has no tree to lay files over.
fn no_tree() -> Error {
    Error::Verification("the change has no tree".into())
}

/// A change whose base is not a commit id.
fn no_base() -> Error {
    Error::Verification("no base commit".into())
}

/// `place` with the files that decide how checks run laid from the base
/// (see the module doc). When that cannot be done, every check on the
/// returned place fails saying why — never runs on the candidate's files.
pub fn checks_from_base(
    place: &Place,
    changes: &ChangeSet,
    commands: &[String],
    allow: &[String],
) -> Place {
    let allowed = allowed(allow);
    let edits: Vec<(String, Lay)> = changed_paths(changes)
        .into_iter()
        .filter(|p| test_integrity::decides_checks(p, commands) && !allowed.is_match(p))
        .map(|p| (p, Lay::FromBase))
        .collect();
    match laid(place, changes, &edits) {
        Ok(p) => p,
        Err(e) => place.running_on(&format!(
            "(the files that decide how checks run could not be laid from the base: {e})"
        )),
    }
}

/// The files of a base-tests copy that differ from the change's: the
/// base's tests laid over the run tree. `listed_in`: files the base's own
/// listing names its tests in (whatever they are called), laid from the
/// base too; none laid (`laid == 0`) when the change touches no test (its
/// own copies already run the base's tests). Each of `canaries` is
/// appended to its file as that copy has it (not counted as laid), and
/// any file can be rewritten ([`BaseTestsCopy::put`]) before the copy is
/// written ([`BaseTestsCopy::place`]).
pub struct BaseTestsCopy {
    edits: Vec<(String, Lay)>,
    /// How many of them are the base's tests (canaries not counted).
    pub laid: usize,
    base: BaseFiles,
    files: rascal_exec::exec::place::FilesReader,
}

impl BaseTestsCopy {
    /// The base-tests copy of `place` (see [`BaseTestsCopy`]).
    pub fn new(
        place: &Place,
        changes: &ChangeSet,
        allow: &[String],
        listed_in: &[String],
        canaries: &[crate::layers::evidence::canary::Canary],
    ) -> Result<BaseTestsCopy, Error> {
        let allowed = allowed(allow);
        let base = BaseFiles::open(place, changes)?;
        let read_base = |p: &str| base.read(p);
        let files = place.files_reader();
        let words = base_words(place, changes);
        let edits: Vec<(String, Lay)> = changed_paths(changes)
            .into_iter()
            .filter(|p| !allowed.is_match(p))
            .filter_map(|p| {
                let lay = if listed_in.contains(&p) {
                    Lay::FromBase
                } else {
                    base_test_lay(&p, &read_base, &files, words.as_deref())?
                };
                Some((p, lay))
            })
            .collect();
        let mut copy = BaseTestsCopy {
            laid: edits.len(),
            edits,
            base,
            files,
        };
        for c in canaries {
            if let Some(text) = copy.text(&c.path) {
                copy.put(&c.path, c.appended_to(&text));
            }
        }
        Ok(copy)
    }

    /// The text of `path` as this copy has it (None when absent or not
    /// UTF-8).
    pub fn text(&self, path: &str) -> Option<String> {
        match self.edits.iter().find(|(p, _)| p == path).map(|(_, l)| l) {
            Some(Lay::Bytes(b)) => String::from_utf8(b.clone()).ok(),
            Some(Lay::FromBase) => self.base.read(path),
            Some(Lay::Remove) => None,
            None => self
                .files
                .read(path)
                .and_then(|b| String::from_utf8(b).ok()),
        }
    }

    /// The text of `path` at the base commit (None when absent or not
    /// UTF-8).
    pub fn base_text(&self, path: &str) -> Option<String> {
        self.base.read(path)
    }

    /// This copy with `text` at `path`.
    pub fn put(&mut self, path: &str, text: String) {
        let lay = (path.to_string(), Lay::Bytes(text.into_bytes()));
        match self.edits.iter().position(|(p, _)| p == path) {
            Some(i) => self.edits[i] = lay,
            None => self.edits.push(lay),
        }
    }

    /// The place whose copies are written with these files.
    pub fn place(&self, place: &Place, changes: &ChangeSet) -> Result<Place, Error> {
        laid(place, changes, &self.edits)
    }
}

/// What a base-tests copy puts at the changed path `p`: the base's file
/// for test files, test data and the files of Rust test modules; the
/// candidate's Rust source with the base's test modules, the base's
/// version of each item only tests use (`words`: the crate's, at the
/// base) and the base's doc comments where they hold examples (doctests);
/// else nothing.
fn base_test_lay(
    p: &str,
    read_base: &dyn Fn(&str) -> Option<String>,
    files: &rascal_exec::exec::place::FilesReader,
    words: Option<&test_integrity::Words>,
) -> Option<Lay> {
    if test_integrity::is_test_path(p)
        || test_integrity::in_rust_test_module(p, read_base)
        || words.is_some_and(|w| w.test_only_file(p))
    {
        return Some(Lay::FromBase);
    }
    let (rust, python) = (p.ends_with(".rs"), p.ends_with(".py"));
    if !rust && !python {
        return None;
    }
    let now = String::from_utf8(files.read(p)?).ok()?;
    let base_text = read_base(p).unwrap_or_default();
    let with_data = words
        .map(|w| test_integrity::test_only_items(p, &base_text, w))
        .and_then(|items| test_integrity::with_base_items(p, &base_text, &now, &items));
    if python {
        let laid = with_data?;
        return (laid != now).then(|| Lay::Bytes(laid.into_bytes()));
    }
    let now_data = with_data.as_deref().unwrap_or(&now);
    let swapped = test_integrity::with_base_test_modules(&base_text, now_data)
        .unwrap_or_else(|| now_data.to_string());
    let swapped = test_integrity::with_base_doctests(&base_text, &swapped).unwrap_or(swapped);
    (swapped != now).then(|| Lay::Bytes(swapped.into_bytes()))
}

/// `place` with its copies written from the base commit with the change's
/// tests laid in: its test files, the files its listing names tests in
/// (`listed_in`), the files of its out-of-line test modules, and in Rust
/// sources its `#[cfg(test)]` modules over the base's code. The change's
/// tests, run on the code they were written to change. The data files the
/// change adds or rewrites are laid in too (a marker, a fixture, a table;
/// never code, a build or runner file): only the code differs from the
/// change's own run, so a test that fails here fails because of the code —
/// not because a file it looks for is missing or says something else. A
/// file the base's code names, or that is in a directory it names, is not:
/// laid there, it could make the base's code fail (a flag file it reads,
/// a file under a directory it lists) and a test seem to find a bug the
/// base never had. Without the base's words (a tree
/// too large to read) none is laid.
pub fn tests_on_base(
    place: &Place,
    changes: &ChangeSet,
    listed_in: &[String],
) -> Result<Place, Error> {
    let base = BaseFiles::open(place, changes)?;
    let mut edits = test_edits(place, changes, listed_in, &|p| base.read(p));
    let files = place.files_reader();
    let words = base_words(place, changes);
    for f in &changes.files {
        use rascal_core::model::changeset::{EntryKind, Operation};
        let written = matches!(
            f.op,
            Operation::Create | Operation::Modify | Operation::Rename
        ) && f.new_kind == Some(EntryKind::File);
        let inert = words.as_deref().is_some_and(|w| !w.code_may_read(&f.path));
        if written
            && inert
            && test_integrity::is_data(&f.path)
            && !edits.iter().any(|(p, _)| *p == f.path)
        {
            if let Some(bytes) = files.read(&f.path) {
                edits.push((f.path.clone(), Lay::Bytes(bytes)));
            }
        }
    }
    laid_on(place, changes, &base.tree.to_string(), &edits)
}

/// `place` (a check copy of the change) with every function the change
/// adds or rewrites stubbed out to return a zero value at once
/// (`test_integrity::without_new_code`); test code stays the change's.
/// The change's new tests that do not build on the base's code run here:
/// one that still passes does not check what the new code does.
pub fn without_new_code(place: &Place, changes: &ChangeSet) -> Result<Place, Error> {
    let base = BaseFiles::open(place, changes)?;
    let files = place.files_reader();
    let read_now = |p: &str| files.read(p).and_then(|b| String::from_utf8(b).ok());
    let edits: Vec<(String, Lay)> = changed_paths(changes)
        .into_iter()
        .filter(|p| !test_integrity::in_rust_test_module(p, &read_now))
        .filter_map(|p| {
            let now = read_now(&p)?;
            let stubbed = test_integrity::without_new_code(&p, base.read(&p).as_deref(), &now)?;
            Some((p, Lay::Bytes(stubbed.into_bytes())))
        })
        .collect();
    laid(place, changes, &edits)
}

/// `target` (another candidate's check place) with the tests of each
/// `authors` change (its place, change, and the files its listing names
/// tests in) laid in, the same way [`tests_on_base`] lays them over the
/// base: their tests, run on the other candidate's code. The authors'
/// paths must not overlap ([`test_paths`]). The target's own tests are
/// not in that run — its test files and test modules are the base's, as
/// in its base-tests copy — so nothing the target wrote as a test (a
/// module that loosens every other module's assertions, say) runs beside
/// the authors' tests: they judge its code, not its tests.
pub fn tests_on_other(
    authors: &[(&Place, &ChangeSet, &[String])],
    (target, target_changes): (&Place, &ChangeSet),
) -> Result<Place, Error> {
    let files = target.files_reader();
    let read_there = |p: &str| files.read(p).and_then(|b| String::from_utf8(b).ok());
    let edits: Vec<(String, Lay)> = authors
        .iter()
        .flat_map(|(place, changes, listed_in)| test_edits(place, changes, listed_in, &read_there))
        .collect();
    with_target_tests_from_base(edits, (target, target_changes))
}

/// `edits` laid on the target, with the target's own tests (test files
/// and test modules it changed) laid from the base wherever `edits` does
/// not lay that path: other tests judge its code, never its tests.
fn with_target_tests_from_base(
    mut edits: Vec<(String, Lay)>,
    (target, target_changes): (&Place, &ChangeSet),
) -> Result<Place, Error> {
    let files = target.files_reader();
    let base = BaseFiles::open(target, target_changes)?;
    let read_base = |p: &str| base.read(p);
    for p in changed_paths(target_changes) {
        if edits.iter().any(|(q, _)| *q == p) {
            continue;
        }
        if let Some(lay) = base_test_lay(&p, &read_base, &files, None) {
            edits.push((p, lay));
        }
    }
    laid(target, target_changes, &edits)
}

/// A kept answer's tests (`pipeline::answers`: an earlier run's author's
/// test files, path and text, as cross-testing laid them) laid on the
/// target as [`tests_on_other`] lays a present author's: test files whole,
/// a Rust source as the target's code with the kept test modules. A Rust
/// source whose test modules cannot be swapped in is an error (the kept
/// tests would not be the ones answered).
pub fn kept_tests_on(
    kept: &[(String, String)],
    (target, target_changes): (&Place, &ChangeSet),
) -> Result<Place, Error> {
    let files = target.files_reader();
    let read_there = |p: &str| files.read(p).and_then(|b| String::from_utf8(b).ok());
    // A module file is test code when a kept file (or, else, the
    // target's) declares it `#[cfg(test)]`.
    let read_either = |p: &str| {
        kept.iter()
            .find(|(q, _)| q == p)
            .map(|(_, t)| t.clone())
            .or_else(|| read_there(p))
    };
    let mut edits = Vec::new();
    for (path, text) in kept {
        let whole = test_integrity::is_test_path(path)
            || !path.ends_with(".rs")
            || test_integrity::in_rust_test_module(path, &read_either);
        let lay = if whole {
            Lay::Bytes(text.clone().into_bytes())
        } else {
            let there = read_there(path).unwrap_or_default();
            let swapped =
                test_integrity::with_base_test_modules(text, &there).ok_or_else(|| {
                    Error::Verification(format!(
                        "the test modules of `{path}` cannot be laid in this change's `{path}`"
                    ))
                })?;
            Lay::Bytes(swapped.into_bytes())
        };
        edits.push((path.clone(), lay));
    }
    with_target_tests_from_base(edits, (target, target_changes))
}

/// The paths [`tests_on_other`] would lay: the author's test files and
/// the Rust sources holding its test modules.
pub fn test_paths(place: &Place, changes: &ChangeSet, listed_in: &[String]) -> Vec<String> {
    test_edits(place, changes, listed_in, &|_| Some(String::new()))
        .into_iter()
        .map(|(p, _)| p)
        .collect()
}

/// The edits that lay the change's tests over another tree whose text
/// `read_there` gives: test files (and the files `listed_in` names) whole,
/// Rust sources as that tree's code with the change's test modules.
fn test_edits(
    place: &Place,
    changes: &ChangeSet,
    listed_in: &[String],
    read_there: &dyn Fn(&str) -> Option<String>,
) -> Vec<(String, Lay)> {
    let files = place.files_reader();
    let read_now = |p: &str| files.read(p).and_then(|b| String::from_utf8(b).ok());
    changed_paths(changes)
        .into_iter()
        .filter_map(|p| {
            let test_file = listed_in.contains(&p)
                || test_integrity::is_test_path(&p)
                || test_integrity::in_rust_test_module(&p, &read_now);
            let lay = if test_file {
                files.read(&p).map_or(Lay::Remove, Lay::Bytes)
            } else if p.ends_with(".rs") {
                let (now, there) = (read_now(&p)?, read_there(&p)?);
                let swapped = test_integrity::with_base_test_modules(&now, &there)?;
                if swapped == there {
                    return None;
                }
                Lay::Bytes(swapped.into_bytes())
            } else {
                return None;
            };
            Some((p, lay))
        })
        .collect()
}

/// The base's side of a candidate's `test` criteria: a copy of the base
/// (sharing the build cache only base code writes, like the test
/// guardrail's base runs) and the change's tests on the base's code.
pub struct CandidateBase<'a> {
    place: &'a Place,
    changes: &'a ChangeSet,
    tree: String,
    cache: std::path::PathBuf,
}

impl<'a> CandidateBase<'a> {
    /// None in place (no copy of the base can be made there).
    pub fn new(place: &'a Place, changes: &'a ChangeSet) -> Option<CandidateBase<'a>> {
        let base = BaseFiles::open(place, changes).ok()?;
        let cache = rascal_exec::git::workspace::files_dir(&base.repo)
            .join("ledger")
            .join("build-cache");
        let tree = base.tree.to_string();
        place.at_base(&tree, cache.clone())?;
        Some(CandidateBase {
            place,
            changes,
            tree,
            cache,
        })
    }
}

impl crate::layers::criterion_proof::BaseSide for CandidateBase<'_> {
    fn base(&self) -> Option<Place> {
        self.place.at_base(&self.tree, self.cache.clone())
    }

    fn tests_on_base(&self, listed_in: &[String]) -> Result<Place, Error> {
        tests_on_base(self.place, self.changes, listed_in)
    }

    fn without_new_code(&self) -> Result<Place, Error> {
        without_new_code(self.place, self.changes)
    }
}
