//! The checks' build cache starts from the base's seed, which only base
//! code writes: a candidate whose tests write into their build cache, and
//! try the seed and the base's cache beside it, reaches neither — its
//! writes land in its own copy — and the next run's candidate starts from
//! the seed as base code left it. Real cargo, real binary, bubblewrap.

use crate::common::{bwrap, stdout};
use crate::test_integrity::{candidate, run, rust_repo, CARGO_TEST};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A test that writes `planted.txt` into its build cache and, through
/// `..`, where the base's seed and cache are on the host.
const PLANTER: &str = r#"sed -i 's/a - b/a + b/' src/lib.rs
cat >> src/lib.rs <<'RASCAL_EOF'

#[cfg(test)]
mod plant {
    #[test]
    fn plants() {
        let cache = std::path::PathBuf::from(std::env::var("CARGO_TARGET_DIR").unwrap());
        std::fs::write(cache.join("planted.txt"), "planted").unwrap();
        for up in 1..6 {
            let mut p = cache.clone();
            for _ in 0..up {
                p.push("..");
            }
            for d in ["ledger/build-seed", "ledger/build-cache"] {
                let _ = std::fs::write(p.join(d).join("planted.txt"), "planted");
            }
        }
    }
}
RASCAL_EOF
"#;

/// Every path under `dir` named `name`.
fn named(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(named(&p, name));
        } else if e.file_name() == name {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_candidates_code_never_writes_the_seed_the_next_candidate_starts_from() {
    if !bwrap() {
        return;
    }
    let honest = "sed -i 's/a - b/a + b/' src/lib.rs";
    let t = rust_repo(&[("planter", PLANTER), ("honest", honest)], CARGO_TEST);
    let doc = run(&t, &["planter"]);
    let planter = candidate(&doc, "planter");
    assert_eq!(planter["verdict"], "pass", "{planter}");
    // `<files>/workspaces/<run>/<candidate>`
    let files = Path::new(planter["worktree"].as_str().unwrap())
        .ancestors()
        .nth(3)
        .unwrap()
        .to_path_buf();
    let run_id = doc["run"].as_str().unwrap();
    // Its code ran, and wrote its own copy…
    let own = files.join("runs").join(run_id).join("planter/build-cache");
    assert_eq!(named(&own, "planted.txt").len(), 1, "{}", own.display());
    // …never the base's cache or its seed, which base code built.
    let ledger = files.join("ledger");
    assert!(
        named(&ledger, "planted.txt").is_empty(),
        "{:?}",
        named(&ledger, "planted.txt")
    );
    let seed = ledger.join("build-seed");
    assert!(
        std::fs::read_dir(&seed).is_ok_and(|mut d| d.next().is_some()),
        "the base's build was published as the seed: {}",
        seed.display()
    );

    // The next run's candidate starts from the seed, as base code left it.
    let doc = run(&t, &["honest"]);
    let honest = candidate(&doc, "honest");
    assert_eq!(honest["verdict"], "pass", "{honest}");
    let shown = Command::new(crate::common::bin())
        .args(["show", doc["run"].as_str().unwrap()])
        .current_dir(t.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let shown = stdout(&shown);
    assert!(
        shown.contains("the checks' build cache starts from the base's"),
        "{shown}"
    );
    let theirs = files
        .join("runs")
        .join(doc["run"].as_str().unwrap())
        .join("honest/build-cache");
    assert!(named(&theirs, "planted.txt").is_empty());
}
