//! What base code alone produced for a check, computed once per base tree
//! and kept in the repository's ledger directory: only base code ever
//! writes there (its own copy and build cache). Shared by the test
//! guardrails of known runners and of JUnit-reporting ones.

use crate::Error;
use rascal_core::model::changeset::ChangeSet;
use rascal_exec::exec::place::Place;

/// What base code alone produced for this guardrail, computed once per
/// base tree and kept in `cache_dir` under `what`: only base code ever
/// writes there (its own copy and build cache).
pub(crate) async fn at_base_once<T, F>(
    cache_dir: &std::path::Path,
    key: String,
    keep: impl Fn(&T) -> bool,
    compute: F,
) -> Result<T, Error>
where
    T: serde::Serialize + serde::de::DeserializeOwned,
    F: std::future::Future<Output = Result<T, Error>>,
{
    static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let key = rascal_core::digest::digest(key);
    let file = cache_dir.join(format!("{}.json", &key[..32]));
    let kept = || {
        std::fs::read(&file)
            .ok()
            .and_then(|b| serde_json::from_slice::<T>(&b).ok())
    };
    // Kept already: no need to wait while another base run is made.
    if let Some(v) = kept() {
        return Ok(v);
    }
    let _one = ONE_AT_A_TIME.lock().await;
    if let Some(v) = kept() {
        return Ok(v);
    }
    let v = compute.await?;
    if keep(&v) {
        let _ = std::fs::create_dir_all(cache_dir);
        let _ = std::fs::write(&file, serde_json::to_vec(&v).unwrap_or_default());
    }
    // What base code just built seeds the candidates' build caches.
    let built = cache_dir.join("build-cache");
    let _ =
        tokio::task::spawn_blocking(move || rascal_exec::exec::cache::publish_seed(&built)).await;
    Ok(v)
}

/// No copy of the base could be made here (in place, for `rascal check`)
/// to `to` ("list its tests in", "run its tests in"): the check could not
/// be carried out.
pub(crate) fn no_base_copy(to: &str) -> Error {
    Error::Verification(format!("no copy of the base to {to}"))
}

/// The base commit's tree, when a copy of the base can be made here (not
/// in place, for `rascal check`).
pub(crate) fn base_tree_of(
    place: &Place,
    changes: &ChangeSet,
) -> Option<(git2::Repository, String)> {
    let repo = git2::Repository::discover(place.origin()).ok()?;
    let tree = git2::Oid::from_str(&changes.base)
        .and_then(|b| repo.find_commit(b))
        .map(|c| c.tree_id().to_string())
        .ok()?;
    place.at_base(&tree, Default::default())?;
    Some((repo, tree))
}
