//! The build caches a candidate's checks share (`CARGO_TARGET_DIR`, see
//! `place`): the candidate's code writes them, so every attempt starts
//! with empty ones. Nothing an earlier attempt's code left there (binaries
//! with far-future mtimes, planted artifacts) can stand in for this
//! attempt's build. Within one attempt the checks share them: they all run
//! the same code, which could do in each check whatever it did in another.

use std::path::{Path, PathBuf};

/// The build cache of a candidate's checks, in its run files.
pub const BUILD: &str = "build-cache";

/// The held-out checks' own build cache, beside it: code that ran beside
/// the held-out tests never shares a cache with a check whose output an
/// agent reads.
pub const HOLDOUT: &str = "holdout-build-cache";

/// Empty both build caches in `candidate_dir` for a new attempt (they are
/// removed; the build cache is made again, empty). Returns the build
/// cache's path. Links in them are removed, never followed.
pub fn fresh_for_attempt(candidate_dir: &Path) -> std::io::Result<PathBuf> {
    for name in [BUILD, HOLDOUT] {
        let p = candidate_dir.join(name);
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&p)?,
            Ok(_) => std::fs::remove_file(&p)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    let p = candidate_dir.join(BUILD);
    std::fs::create_dir_all(&p)?;
    crate::exec::steady::begin(&p);
    crate::exec::steady::begin(&holdout_beside(&p));
    Ok(p)
}

/// The held-out checks' build cache beside the build cache `build`.
pub(crate) fn holdout_beside(build: &Path) -> PathBuf {
    build.with_file_name(HOLDOUT)
}

/// The seed beside the base's build cache (`ledger/build-cache`, which only
/// base code writes): a snapshot of it, taken when no base run was writing,
/// that every candidate's empty build cache starts from. Candidates then
/// build only what their change touches, never the base's dependencies
/// again; their code writes its own copy, never the seed.
pub const SEED: &str = "build-seed";

/// Publish `base_cache` as the seed beside it: copied whole (links are
/// not copied), then swapped in by renames. Returns false, keeping the old
/// seed, when a file changed while it was copied (a base run was writing).
pub fn publish_seed(base_cache: &Path) -> std::io::Result<bool> {
    if !base_cache.is_dir() {
        return Ok(false);
    }
    let seed = base_cache.with_file_name(SEED);
    let fresh = base_cache.with_file_name(format!("{SEED}.new-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&fresh);
    let copied = copy_tree(base_cache, &fresh).and_then(|()| unchanged(base_cache, &fresh));
    match copied {
        Ok(true) => {}
        Ok(false) | Err(_) => {
            let _ = std::fs::remove_dir_all(&fresh);
            return copied.map(|_| false);
        }
    }
    let old = base_cache.with_file_name(format!("{SEED}.old-{}", std::process::id()));
    if seed.exists() {
        std::fs::rename(&seed, &old)?;
    }
    std::fs::rename(&fresh, &seed)?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(true)
}

/// Fill the empty build cache `build` from `seed`. On any error `build` is
/// emptied again: a cold build is slower, never wrong. Returns the bytes
/// copied (0 when there is no seed yet).
pub fn seed(build: &Path, seed: &Path) -> std::io::Result<u64> {
    crate::exec::steady::begin(build);
    if !seed.is_dir() {
        return Ok(0);
    }
    match copy_tree(seed, build).and_then(|()| size(build)) {
        Ok(n) => Ok(n),
        Err(e) => {
            let _ = std::fs::remove_dir_all(build);
            std::fs::create_dir_all(build)?;
            Err(e)
        }
    }
}

/// Copy the directories and regular files under `from` into `to`, each
/// file with its modification time (build tools compare them); links and
/// anything else are left out, never followed.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if kind.is_dir() {
            copy_tree(&src, &dst)?;
        } else if kind.is_file() {
            // The time before the copy: a file written while it is copied
            // then differs from its copy's (see `unchanged`).
            let modified = std::fs::symlink_metadata(&src)?.modified()?;
            std::fs::copy(&src, &dst)?;
            std::fs::File::options()
                .write(true)
                .open(&dst)?
                .set_modified(modified)?;
        }
    }
    Ok(())
}

/// Every regular file of `copy` has the size and modification time of
/// its original in `from` (nothing was written while it was copied).
fn unchanged(from: &Path, copy: &Path) -> std::io::Result<bool> {
    for entry in std::fs::read_dir(copy)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let original = from.join(entry.file_name());
        if kind.is_dir() {
            if !unchanged(&original, &entry.path())? {
                return Ok(false);
            }
        } else {
            let (a, b) = (std::fs::symlink_metadata(&original)?, entry.metadata()?);
            if a.len() != b.len() || a.modified()? != b.modified()? {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// The bytes of the regular files under `dir`.
fn size(dir: &Path) -> std::io::Result<u64> {
    let mut n = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            n += size(&entry.path())?;
        } else if kind.is_file() {
            n += entry.metadata()?.len();
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_attempt_starts_with_empty_caches() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep"), "x").unwrap();
        let build = fresh_for_attempt(dir.path()).unwrap();
        assert_eq!(build, dir.path().join(BUILD));
        std::fs::create_dir_all(build.join("debug/deps")).unwrap();
        std::fs::write(build.join("debug/deps/test-1234"), "planted").unwrap();
        std::os::unix::fs::symlink(outside.path(), build.join("out")).unwrap();
        let held = holdout_beside(&build);
        std::fs::create_dir_all(&held).unwrap();
        std::fs::write(held.join("x"), "y").unwrap();
        let again = fresh_for_attempt(dir.path()).unwrap();
        assert_eq!(again, build);
        assert_eq!(std::fs::read_dir(&again).unwrap().count(), 0);
        assert!(!held.exists());
        // A link in the cache is removed, its target left alone.
        assert!(outside.path().join("keep").exists());
    }

    #[test]
    fn a_candidate_starts_from_the_seed_and_never_writes_it() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("ledger/build-cache");
        std::fs::create_dir_all(base.join("debug/deps")).unwrap();
        std::fs::write(base.join("debug/deps/libdep.rlib"), "base-built").unwrap();
        let outside = dir.path().join("outside");
        std::fs::write(&outside, "secret").unwrap();
        std::os::unix::fs::symlink(&outside, base.join("debug/link")).unwrap();
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        std::fs::File::options()
            .write(true)
            .open(base.join("debug/deps/libdep.rlib"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert!(publish_seed(&base).unwrap());
        let seed_dir = base.with_file_name(SEED);

        let candidate = tempfile::tempdir().unwrap();
        let build = fresh_for_attempt(candidate.path()).unwrap();
        assert_eq!(seed(&build, &seed_dir).unwrap(), "base-built".len() as u64);
        let copied = build.join("debug/deps/libdep.rlib");
        assert_eq!(std::fs::read_to_string(&copied).unwrap(), "base-built");
        // The build tool's clock: the original's modification time.
        assert_eq!(std::fs::metadata(&copied).unwrap().modified().unwrap(), old);
        // Links are not carried over.
        assert!(std::fs::symlink_metadata(build.join("debug/link")).is_err());
        // The candidate's code writes its own copy; the seed is untouched.
        std::fs::write(&copied, "planted").unwrap();
        assert_eq!(
            std::fs::read_to_string(seed_dir.join("debug/deps/libdep.rlib")).unwrap(),
            "base-built"
        );
        // The next attempt starts from the seed again, not from the plant.
        let build = fresh_for_attempt(candidate.path()).unwrap();
        seed(&build, &seed_dir).unwrap();
        assert_eq!(std::fs::read_to_string(&copied).unwrap(), "base-built");
    }

    #[test]
    fn a_file_written_after_it_was_copied_keeps_the_old_seed() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("ledger/build-cache");
        std::fs::create_dir_all(&base).unwrap();
        std::fs::write(base.join("lib.rlib"), "one").unwrap();
        assert!(publish_seed(&base).unwrap());
        let seed_dir = base.with_file_name(SEED);
        // A copy taken before a base run wrote the file again is stale:
        // the same length, a later time.
        let copy = dir.path().join("copy");
        copy_tree(&base, &copy).unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::write(base.join("lib.rlib"), "two").unwrap();
        std::fs::File::options()
            .write(true)
            .open(base.join("lib.rlib"))
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert!(!unchanged(&base, &copy).unwrap());
        // Published again after the write, the seed has the new file.
        assert!(publish_seed(&base).unwrap());
        assert_eq!(
            std::fs::read_to_string(seed_dir.join("lib.rlib")).unwrap(),
            "two"
        );
    }

    #[test]
    fn no_seed_means_an_empty_cache() {
        let dir = tempfile::tempdir().unwrap();
        let build = fresh_for_attempt(dir.path()).unwrap();
        assert_eq!(seed(&build, &dir.path().join("none")).unwrap(), 0);
        assert_eq!(std::fs::read_dir(&build).unwrap().count(), 0);
        assert!(!publish_seed(&dir.path().join("missing")).unwrap());
    }
}
