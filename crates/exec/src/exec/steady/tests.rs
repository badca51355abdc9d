//! Unit tests of `steady`.

use super::*;

fn time_of(p: &Path) -> SystemTime {
    std::fs::metadata(p).unwrap().modified().unwrap()
}

/// Lay `files` (path, content) in a fresh directory at `copy` and stamp it.
fn lay(claim: &mut Claim, copy: &Path, files: &[(&str, &str)]) {
    let _ = std::fs::remove_dir_all(copy);
    for (p, c) in files {
        let p = copy.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, c).unwrap();
    }
    claim.stamp(copy).unwrap();
}

#[tokio::test]
async fn a_file_keeps_its_time_only_while_its_content_does() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("build-cache");
    begin(&cache);
    let mut held = claim(&cache).await.unwrap();
    let copy = held.path.clone();
    let (lib, test) = (copy.join("src/lib.rs"), copy.join("tests/t.rs"));

    lay(
        &mut held,
        &copy,
        &[("src/lib.rs", "a"), ("tests/t.rs", "x")],
    );
    let (lib1, test1) = (time_of(&lib), time_of(&test));
    // The same content: the same times.
    lay(
        &mut held,
        &copy,
        &[("src/lib.rs", "a"), ("tests/t.rs", "x")],
    );
    assert_eq!(time_of(&lib), lib1);
    assert_eq!(time_of(&test), test1);
    // One byte more: a later time for that file alone.
    lay(
        &mut held,
        &copy,
        &[("src/lib.rs", "a"), ("tests/t.rs", "x ")],
    );
    assert_eq!(time_of(&lib), lib1);
    let test2 = time_of(&test);
    assert!(test2 > test1);
    // Back to the first content: later still, never the first time (the
    // last build was made from the other content).
    lay(
        &mut held,
        &copy,
        &[("src/lib.rs", "a"), ("tests/t.rs", "x")],
    );
    let test3 = time_of(&test);
    assert!(test3 > test2);
    // Absent, then back with the same content: a new time.
    lay(&mut held, &copy, &[("src/lib.rs", "a")]);
    lay(
        &mut held,
        &copy,
        &[("src/lib.rs", "a"), ("tests/t.rs", "x")],
    );
    assert!(time_of(&test) > test3);
    assert_eq!(time_of(&lib), lib1);
}

#[tokio::test]
async fn a_copy_laid_elsewhere_or_a_cache_begun_again_is_all_new() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("build-cache");
    begin(&cache);
    let mut held = claim(&cache).await.unwrap();
    let copy = held.path.clone();
    lay(&mut held, &copy, &[("src/lib.rs", "a")]);
    let first = time_of(&copy.join("src/lib.rs"));
    let elsewhere = dir.path().join("elsewhere");
    lay(&mut held, &elsewhere, &[("src/lib.rs", "a")]);
    let second = time_of(&elsewhere.join("src/lib.rs"));
    assert!(second > first);
    drop(held);
    // The cache emptied again: nothing laid before counts.
    begin(&cache);
    let mut held = claim(&cache).await.unwrap();
    lay(&mut held, &elsewhere, &[("src/lib.rs", "a")]);
    assert!(time_of(&elsewhere.join("src/lib.rs")) > second);
}

#[tokio::test]
async fn checks_of_one_cache_take_turns_and_the_record_outlives_a_claim() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("build-cache");
    begin(&cache);
    let mut first = claim(&cache).await.unwrap();
    let copy = first.path.clone();
    lay(&mut first, &copy, &[("src/lib.rs", "a")]);
    let laid = time_of(&copy.join("src/lib.rs"));
    let second = tokio::time::timeout(Duration::from_millis(200), claim(&cache)).await;
    assert!(
        second.is_err(),
        "a second check ran while the first held the cache"
    );
    drop(first);
    // The next claim (another rascal could hold it: the record is on
    // disk, beside the cache, where no command writes) knows what was laid.
    let mut second = claim(&cache).await.unwrap();
    assert_eq!(second.path, copy);
    assert!(beside(&cache, "laid").is_file());
    lay(&mut second, &copy, &[("src/lib.rs", "a")]);
    assert_eq!(time_of(&copy.join("src/lib.rs")), laid);
    // Another cache has a path of its own and does not wait.
    let other = dir.path().join("holdout-build-cache");
    let third = claim(&other).await.unwrap();
    assert_ne!(third.path, second.path);
    drop((second, third));
    // A cache gone for good takes its record and lock with it.
    end(&cache);
    assert!(!beside(&cache, "laid").exists());
    assert!(!beside(&cache, "lock").exists());
}

#[tokio::test]
async fn a_turn_that_cannot_be_taken_is_an_error_never_a_copy_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-directory");
    std::fs::write(&file, "x").unwrap();
    assert!(claim(&file.join("build-cache")).await.is_err());
}
