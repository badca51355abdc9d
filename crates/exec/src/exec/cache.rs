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
    Ok(p)
}

/// The held-out checks' build cache beside the build cache `build`.
pub fn holdout_beside(build: &Path) -> PathBuf {
    build.with_file_name(HOLDOUT)
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
}
