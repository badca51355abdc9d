//! Unit tests of `place`.

use super::*;

#[test]
fn held_out_copies_never_share_a_build_cache_with_other_checks() {
    let s = Sandboxed {
        origin: "/repo".into(),
        workspace: "/files/ws".into(),
        tree: String::new(),
        run_tree: None,
        scratch: "/files/runs/r/c/checks".into(),
        cache: Some("/files/runs/r/c/build-cache".into()),
        hide: Vec::new(),
        confined: true,
        holdout: Default::default(),
        with_holdout: false,
        limits: Default::default(),
    };
    let place = Place::Sandboxed(Arc::new(s.clone()));
    let Place::Sandboxed(h) = place.with_holdout() else {
        panic!()
    };
    assert!(h.with_holdout);
    assert_ne!(h.cache, s.cache);
    assert_eq!(
        h.cache.as_deref(),
        Some(Path::new("/files/runs/r/c/holdout-build-cache"))
    );
    // The base's listing copy has its own cache too, and no holdout.
    let Some(Place::Sandboxed(b)) = place.at_base("abc", "/files/ledger/build-cache".into()) else {
        panic!()
    };
    assert!(!b.with_holdout);
    assert_ne!(b.cache, s.cache);
}
