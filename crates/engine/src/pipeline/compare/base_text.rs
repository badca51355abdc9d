//! The base commit's text files, for the checks that read the base's code
//! as text (cross-testing's words, vacuous criteria's greps): every blob
//! of its tree that is UTF-8 and at most `max_file` bytes, up to
//! `max_total` bytes in all — never `.rascal/`, rascal's own files (a spec
//! holds the very criteria a grep is checked for; the config, the agents'
//! commands), which are no code of the project.

use std::path::Path;

/// Path and text of each text file of `base`'s tree, in tree order.
pub fn text_files(
    repo: &Path,
    base: git2::Oid,
    max_file: usize,
    max_total: usize,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Ok(repo) = git2::Repository::discover(repo) else {
        return out;
    };
    let Ok(tree) = repo.find_commit(base).and_then(|c| c.tree()) else {
        return out;
    };
    let mut read = 0usize;
    let _ = tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        if read > max_total {
            return git2::TreeWalkResult::Abort;
        }
        if dir.is_empty() && entry.name().ok() == Some(".rascal") {
            return git2::TreeWalkResult::Skip;
        }
        if entry.kind() != Some(git2::ObjectType::Blob) {
            return git2::TreeWalkResult::Ok;
        }
        let Ok(blob) = entry.to_object(&repo).and_then(|o| o.peel_to_blob()) else {
            return git2::TreeWalkResult::Ok;
        };
        if blob.size() <= max_file {
            if let Ok(text) = std::str::from_utf8(blob.content()) {
                read += text.len();
                out.push((
                    format!("{dir}{}", entry.name().unwrap_or("")),
                    text.to_string(),
                ));
            }
        }
        git2::TreeWalkResult::Ok
    });
    out
}
