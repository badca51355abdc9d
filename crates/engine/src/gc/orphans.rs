//! `rascal gc --orphans`: rascal's files of repositories that no longer
//! exist (a demo's sample repository removed with its temp directory, a
//! clone deleted). Each repository's files directory names its repository
//! in `OWNER_FILE`, written when a run starts there; a directory whose
//! named repository is gone is an orphan. A directory that names none (made
//! by an older rascal) cannot be judged and is left alone, said so.

use rascal_exec::git::workspace::{state_root, OWNER_FILE};
use std::path::{Path, PathBuf};

/// One files directory and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub dir: PathBuf,
    pub bytes: u64,
    pub owner: Owner,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// Its repository (a git directory) is gone: an orphan.
    Gone(PathBuf),
    /// Its repository is still there.
    Present,
    /// It names no repository (an older rascal made it).
    Unknown,
}

/// What `OWNER_FILE`'s text says, given which paths exist.
pub fn owner(text: Option<&str>, exists: impl Fn(&Path) -> bool) -> Owner {
    match text.map(str::trim).filter(|t| !t.is_empty()) {
        None => Owner::Unknown,
        Some(t) if exists(Path::new(t)) => Owner::Present,
        Some(t) => Owner::Gone(PathBuf::from(t)),
    }
}

/// Every repository's files directory under the state root, judged.
pub fn scan() -> Vec<Found> {
    scan_in(&state_root())
}

/// Every directory under `root`, judged; sorted by name.
pub fn scan_in(root: &Path) -> Vec<Found> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut out: Vec<Found> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .map(|dir| {
            let text = std::fs::read_to_string(dir.join(OWNER_FILE)).ok();
            let owner = owner(text.as_deref(), |p| p.exists());
            let bytes = match owner {
                Owner::Gone(_) => super::disk::usage(&dir).bytes,
                _ => 0,
            };
            Found { dir, bytes, owner }
        })
        .collect();
    out.sort_by(|a, b| a.dir.cmp(&b.dir));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_an_orphan_only_when_its_named_repository_is_gone() {
        let here = |p: &Path| p == Path::new("/repo/.git");
        assert_eq!(owner(Some("/repo/.git\n"), here), Owner::Present);
        assert_eq!(
            owner(Some("/tmp/rascal-demo-x/.git"), here),
            Owner::Gone("/tmp/rascal-demo-x/.git".into())
        );
        assert_eq!(owner(None, here), Owner::Unknown);
        assert_eq!(owner(Some("  "), here), Owner::Unknown);
    }
}
