//! The project's words: every Rust and Python file of the base read once
//! per base tree, to find the items only tests use.

use super::*;

/// At most this many Rust and Python files, and bytes of them, are read
/// for the project's words; a larger tree finds no test data in code.
const MAX_WORD_FILES: usize = 4000;
const MAX_WORD_BYTES: usize = 64 << 20;

/// The words of every Rust and Python file of the base commit (outside
/// vendored trees), for finding the items only tests use
/// (`test_integrity::test_only_items`). None when the base cannot be read
/// or is too large to read whole: an item is then never taken for test
/// data on a partial count.
///
/// Read once per base tree in a process: every candidate of a run, and
/// each of its checks, shares the base, so they share its words.
pub fn base_words(
    place: &Place,
    changes: &ChangeSet,
) -> Option<std::sync::Arc<test_integrity::Words>> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Cache =
        Mutex<HashMap<(std::path::PathBuf, git2::Oid), Option<Arc<test_integrity::Words>>>>;
    static READ: OnceLock<Cache> = OnceLock::new();
    let base = BaseFiles::open(place, changes).ok()?;
    let key = (base.repo.path().to_path_buf(), base.tree);
    let cache = READ.get_or_init(Default::default);
    if let Some(words) = cache.lock().ok()?.get(&key) {
        return words.clone();
    }
    let words = read_words(&base).map(Arc::new);
    let mut held = cache.lock().ok()?;
    if held.len() >= 8 {
        held.clear();
    }
    held.insert(key, words.clone());
    words
}

/// [`base_words`], read from the base's tree.
fn read_words(base: &BaseFiles) -> Option<test_integrity::Words> {
    let tree = base.repo.find_tree(base.tree).ok()?;
    let mut words = test_integrity::Words::default();
    let (mut files, mut bytes, mut whole) = (0usize, 0usize, true);
    let _ = tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        let vendored = dir
            .split('/')
            .any(|d| d == "vendor" || d == "third_party" || d == "target");
        if vendored {
            return git2::TreeWalkResult::Skip;
        }
        let name = entry.name().unwrap_or("");
        if entry.kind() != Some(git2::ObjectType::Blob) || !test_integrity::Words::reads(name) {
            return git2::TreeWalkResult::Ok;
        }
        let Ok(blob) = base.repo.find_blob(entry.id()) else {
            return git2::TreeWalkResult::Ok;
        };
        files += 1;
        bytes += blob.size();
        if files > MAX_WORD_FILES || bytes > MAX_WORD_BYTES {
            whole = false;
            return git2::TreeWalkResult::Abort;
        }
        if let Ok(text) = std::str::from_utf8(blob.content()) {
            words.add(&format!("{dir}{name}"), text);
        }
        git2::TreeWalkResult::Ok
    });
    whole.then_some(words)
}
