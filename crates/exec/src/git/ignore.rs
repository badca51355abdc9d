//! The ignore rules of the base commit: every `.gitignore` of the base tree,
//! the repository's `info/exclude` and `core.excludesfile`. Only these
//! decide what is left out of a candidate's change: a `.gitignore` the
//! candidate wrote or edited (or an exclude in its own `.git`) hides
//! nothing.

use git2::{ObjectType, Oid, Repository, TreeWalkMode, TreeWalkResult};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use std::path::{Path, PathBuf};

/// The base's ignore rules, lowest precedence first.
pub(crate) struct BaseIgnores {
    /// (directory the rules apply below, relative to the top; the rules)
    rules: Vec<(PathBuf, Gitignore)>,
}

impl BaseIgnores {
    /// The rules of commit `base` of `repo`.
    pub(crate) fn of(repo: &Repository, base: Oid) -> Result<BaseIgnores, git2::Error> {
        let root = PathBuf::from("/");
        let mut rules = Vec::new();
        let mut from_text = |dir: PathBuf, text: &str| {
            let mut b = GitignoreBuilder::new(root.join(&dir));
            for line in text.lines() {
                let _ = b.add_line(None, line);
            }
            if let Ok(g) = b.build() {
                rules.push((dir, g));
            }
        };
        if let Ok(cfg) = repo.config() {
            if let Ok(p) = cfg.get_path("core.excludesfile") {
                if let Ok(text) = std::fs::read_to_string(p) {
                    from_text(PathBuf::new(), &text);
                }
            }
        }
        if let Ok(text) = std::fs::read_to_string(repo.commondir().join("info/exclude")) {
            from_text(PathBuf::new(), &text);
        }
        let tree = repo.find_commit(base)?.tree()?;
        let mut files: Vec<(PathBuf, Oid)> = Vec::new();
        tree.walk(TreeWalkMode::PreOrder, |dir, e| {
            if e.kind() == Some(ObjectType::Blob) && e.name().ok() == Some(".gitignore") {
                files.push((PathBuf::from(dir), e.id()));
            }
            TreeWalkResult::Ok
        })?;
        // Shallow directories first: deeper rules take precedence.
        files.sort_by_key(|(d, _)| d.components().count());
        for (dir, id) in files {
            let blob = repo.find_blob(id)?;
            from_text(dir, &String::from_utf8_lossy(blob.content()));
        }
        Ok(BaseIgnores { rules })
    }

    /// Whether the base ignores `path` (relative to the top).
    pub(crate) fn ignored(&self, path: &str, is_dir: bool) -> bool {
        let rel = Path::new(path);
        let mut verdict = false;
        for (dir, g) in &self.rules {
            if !rel.starts_with(dir) {
                continue;
            }
            match g.matched_path_or_any_parents(Path::new("/").join(rel), is_dir) {
                Match::Ignore(_) => verdict = true,
                Match::Whitelist(_) => verdict = false,
                Match::None => {}
            }
        }
        verdict
    }
}
