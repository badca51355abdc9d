//! Held-out tests (a spec's `holdout:`): acceptance tests the agents never
//! see. Paths or globs name files of the base commit; an absolute path (or
//! `~/…`) names a directory outside the repository whose files are laid
//! over the repository root. They are left out of every candidate's
//! workspace (files and git objects), out of its change, out of every
//! verification copy — except the copy a `type: holdout` criterion runs on.
//! The spec files (`.rascal/specs/`) go with them, since a spec names the
//! held-out tests; directories outside the repository are hidden from every
//! sandbox ([`outside_dirs`]). A held-out report says pass or fail and
//! nothing else ([`PASSED`], [`FAILED`]): see docs/security.md.

use git2::{Oid, Repository};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use std::path::{Path, PathBuf};

/// At most this much is read from a holdout directory outside the
/// repository.
const MAX_OUTSIDE_BYTES: u64 = 64 * 1024 * 1024;

/// The whole evidence of held-out tests that passed.
pub const PASSED: &str = "held-out tests passed";

/// The whole evidence of held-out tests that did not all run and pass:
/// no count, no name, no output — nothing the candidate's code could
/// shape reaches an agent.
pub const FAILED: &str = "held-out tests failed (which, how many and their output are never shown)";

/// The held-out tests of one task, resolved at its base commit.
#[derive(Debug, Clone, Default)]
pub struct Holdout {
    /// Files of the base commit that are held out.
    pub base_paths: Vec<String>,
    /// Files from directories outside the repository: (path in the copy,
    /// content).
    pub outside: Vec<(String, Vec<u8>)>,
    /// The spec files of the base commit (`.rascal/specs/…`): they name
    /// the held-out tests, so they are held out with them (never in a
    /// workspace, left out of every copy the agents' checks see).
    pub specs: Vec<String>,
    globs: Option<GlobSet>,
}

impl Holdout {
    /// Resolve `specs` at `base` of `repo`. Errors say which entry is wrong.
    pub fn resolve(
        repo: &Repository,
        base: Oid,
        specs: &[String],
    ) -> crate::error::Result<Holdout> {
        let mut out = Holdout::default();
        if specs.is_empty() {
            return Ok(out);
        }
        let mut globs = GlobSetBuilder::new();
        let mut dirs: Vec<PathBuf> = Vec::new();
        for spec in specs {
            let s = spec.trim();
            if let Some(dir) = outside_dir(s) {
                dirs.push(dir);
                continue;
            }
            let s = s.trim_start_matches("./").trim_end_matches('/');
            if s.is_empty() || s.split('/').any(|c| c == "..") {
                return Err(bad(format!(
                    "holdout `{spec}` is not a path inside the repository"
                )));
            }
            for pat in [s.to_string(), format!("{s}/**")] {
                let g = GlobBuilder::new(&pat)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| bad(format!("holdout `{spec}`: {e}")))?;
                globs.add(g);
            }
        }
        let set = globs
            .build()
            .map_err(|e| bad(format!("holdout globs: {e}")))?;
        let tree = repo
            .find_commit(base)
            .and_then(|c| c.tree())
            .map_err(|e| bad(format!("reading the base commit: {e}")))?;
        let specs_dir = format!("{}/", rascal_core::config::spec::SPECS_DIR);
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(git2::ObjectType::Blob) {
                let path = format!("{dir}{}", entry.name().unwrap_or(""));
                if set.is_match(&path) {
                    out.base_paths.push(path);
                } else if path.starts_with(&specs_dir) {
                    out.specs.push(path);
                }
            }
            git2::TreeWalkResult::Ok
        })
        .map_err(|e| bad(e.to_string()))?;
        out.globs = Some(set);
        let mut total = 0u64;
        for dir in dirs {
            read_outside(&dir, &dir, &mut out.outside, &mut total)?;
        }
        if out.base_paths.is_empty() && out.outside.is_empty() {
            return Err(bad(format!(
                "holdout {} names no file at the base commit: commit the held-out tests first, or name a directory outside the repository by its absolute path",
                specs.join(", ")
            )));
        }
        Ok(out)
    }

    pub fn is_empty(&self) -> bool {
        self.base_paths.is_empty() && self.outside.is_empty()
    }

    /// Whether `path` (repository-relative) is held out: a held-out test,
    /// or (with any) a spec file.
    pub(crate) fn holds(&self, path: &str) -> bool {
        self.globs.as_ref().is_some_and(|g| g.is_match(path))
            || self.outside.iter().any(|(p, _)| p == path)
            || (!self.is_empty() && is_spec(path))
    }

    /// How many held-out files there are.
    pub fn len(&self) -> usize {
        self.base_paths.len() + self.outside.len()
    }

    /// Leave the held-out paths out of `change`: the agent never had them,
    /// so their absence (or anything it wrote there) is not its change.
    pub fn leave_out(&self, change: &mut rascal_core::model::changeset::ChangeSet) {
        if !self.is_empty() {
            change.files.retain(|f| !f.paths().any(|p| self.holds(p)));
        }
    }

    /// `diff` (git's patch text) without the sections of held-out paths:
    /// a reviewer or judge never sees them, nor passes them on as feedback.
    pub fn strip_from_diff(&self, diff: &str) -> String {
        if self.is_empty() {
            return diff.to_string();
        }
        let mut out = String::with_capacity(diff.len());
        let mut keep = true;
        for line in diff.split_inclusive('\n') {
            if let Some(rest) = line.strip_prefix("diff --git ") {
                keep = !rest
                    .split_whitespace()
                    .filter_map(|w| w.strip_prefix("a/").or_else(|| w.strip_prefix("b/")))
                    .any(|p| self.holds(p));
            }
            if keep {
                out.push_str(line);
            }
        }
        out
    }

    /// Make the copy at `dir` (written from a change tree) one the agents'
    /// checks may see: without the held-out files. Paths are resolved
    /// beneath `dir` without following any symlink (the change may hold
    /// links out of the copy): a held-out path behind a link is not in the
    /// copy, so there is nothing to remove there.
    pub fn strip(&self, dir: &Path) -> std::io::Result<()> {
        let copy = crate::git::beneath::Beneath::open(dir)?;
        for p in self.base_paths.iter().chain(&self.specs) {
            match copy.remove_file(Path::new(p)) {
                Err(e)
                    if e.kind() == std::io::ErrorKind::NotFound
                        || crate::git::beneath::is_link_on_way(&e) => {}
                other => other?,
            }
        }
        Ok(())
    }

    /// Add the held-out files from outside the repository to the copy at
    /// `dir` (the in-repository ones are in the tree already). A symlink or
    /// file where a held-out file or its directory goes is replaced (the
    /// link itself, never what it points at).
    pub fn lay_over(&self, dir: &Path) -> std::io::Result<()> {
        let copy = crate::git::beneath::Beneath::open(dir)?;
        for (p, bytes) in &self.outside {
            let to = Path::new(p);
            if let Some(parent) = to.parent() {
                copy.create_dir_all(parent, true)?;
            }
            if copy
                .kind(to)
                .is_ok_and(|k| k == crate::git::beneath::Kind::Dir)
            {
                copy.remove_all(to)?;
            }
            copy.write(to, bytes, 0o644)?;
        }
        Ok(())
    }
}

/// Whether `path` lies in the specs directory (`.rascal/specs/`).
fn is_spec(path: &str) -> bool {
    path.strip_prefix(rascal_core::config::spec::SPECS_DIR)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The directories outside the repository that `holdout:` entries `specs`
/// name: hidden from every sandbox (agents, checks, reviewers, judges),
/// whether or not they exist.
pub fn outside_dirs(specs: &[String]) -> Vec<PathBuf> {
    specs.iter().filter_map(|s| outside_dir(s.trim())).collect()
}

/// `spec` as a directory outside the repository (absolute or `~/…`).
fn outside_dir(spec: &str) -> Option<PathBuf> {
    if let Some(rest) = spec.strip_prefix("~/") {
        return std::env::var_os("HOME").map(|h| PathBuf::from(h).join(rest));
    }
    spec.starts_with('/').then(|| PathBuf::from(spec))
}

/// A holdout that cannot be resolved, saying why.
fn bad(message: String) -> crate::Error {
    crate::Error::Holdout(message)
}

fn read_outside(
    root: &Path,
    dir: &Path,
    out: &mut Vec<(String, Vec<u8>)>,
    total: &mut u64,
) -> crate::error::Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        bad(format!(
            "holdout directory {}: {e} (it must exist and be readable)",
            dir.display()
        ))
    })?;
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            read_outside(root, &path, out, total)?;
        } else if meta.is_file() {
            *total += meta.len();
            if *total > MAX_OUTSIDE_BYTES {
                return Err(bad(format!(
                    "holdout directory {} holds more than {} MiB",
                    root.display(),
                    MAX_OUTSIDE_BYTES >> 20
                )));
            }
            let rel = path
                .strip_prefix(root)
                .map_err(|e| bad(e.to_string()))?
                .to_string_lossy()
                .into_owned();
            let bytes =
                std::fs::read(&path).map_err(|e| bad(format!("{}: {e}", path.display())))?;
            out.push((rel, bytes));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository with `files` committed; its base commit.
    fn repo(files: &[(&str, &str)]) -> (tempfile::TempDir, Repository, Oid) {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let mut index = repo.index().unwrap();
        for (p, c) in files {
            let full = dir.path().join(p);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(&full, c).unwrap();
            index.add_path(Path::new(p)).unwrap();
        }
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        let base = repo.commit(None, &sig, &sig, "base", &tree, &[]).unwrap();
        drop(tree);
        (dir, repo, base)
    }

    #[test]
    fn the_specs_are_held_out_with_the_tests() {
        let (_d, r, base) = repo(&[
            ("src/lib.rs", "x"),
            ("tests/hidden.rs", "y"),
            (".rascal/config.yaml", "agents: {}"),
            (".rascal/specs/hold.yaml", "holdout: [tests/hidden.rs]"),
            (".rascal/specs/other.yaml", "instruction: x"),
        ]);
        let h = Holdout::resolve(&r, base, &["tests/hidden.rs".into()]).unwrap();
        assert_eq!(h.base_paths, ["tests/hidden.rs"]);
        assert_eq!(
            h.specs,
            [".rascal/specs/hold.yaml", ".rascal/specs/other.yaml"]
        );
        assert_eq!(h.len(), 1, "specs are not held-out tests");
        assert!(h.holds(".rascal/specs/hold.yaml"));
        assert!(h.holds(".rascal/specs/new.yaml"));
        assert!(!h.holds(".rascal/config.yaml"));
        assert!(!h.holds(".rascal/specsx"));
        assert!(!h.holds("src/lib.rs"));
        // Stripping a copy takes the specs out too.
        let copy = tempfile::tempdir().unwrap();
        for p in [
            "tests/hidden.rs",
            ".rascal/specs/hold.yaml",
            ".rascal/config.yaml",
        ] {
            std::fs::create_dir_all(copy.path().join(p).parent().unwrap()).unwrap();
            std::fs::write(copy.path().join(p), "z").unwrap();
        }
        h.strip(copy.path()).unwrap();
        assert!(!copy.path().join("tests/hidden.rs").exists());
        assert!(!copy.path().join(".rascal/specs/hold.yaml").exists());
        assert!(copy.path().join(".rascal/config.yaml").exists());
        // Without held-out tests nothing is held out, specs included.
        let none = Holdout::resolve(&r, base, &[]).unwrap();
        assert!(!none.holds(".rascal/specs/hold.yaml"));
    }

    #[test]
    fn outside_directories_are_named_for_hiding() {
        assert_eq!(
            outside_dirs(&["tests/x.rs".into(), " /srv/accept ".into()]),
            [PathBuf::from("/srv/accept")]
        );
        assert!(outside_dirs(&["tests/**".into()]).is_empty());
    }
}
