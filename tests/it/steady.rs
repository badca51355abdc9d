//! Steady copies (`exec::steady`, issue 52): the checks of one build cache
//! reuse what the check before them built when the crate's files are the
//! same, and never a build of other content — real cargo, in bubblewrap,
//! on copies written from real git trees.

use crate::common;
use rascal_exec::exec::place::{Place, Sandboxed};
use rascal_exec::exec::runner::CommandSpec;
use std::sync::Arc;
use std::time::Duration;

const MANIFEST: &str = "[package]\nname = \"steady\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";

/// The test also reads a file through the path compiled into it: a binary
/// reused from an earlier check must still find the copy it runs in.
const TEST: &str = r#"#[test]
fn adds() {
    assert_eq!(steady::add(2, 2), 4);
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(here.join("tests/t.rs").is_file(), "{} is gone", here.display());
}
"#;

/// Which of cargo's lines named the crate (`Fresh`, `Compiling`), the
/// exit code, and the output's tail.
async fn cargo_test(place: &Place) -> (bool, bool, Option<i32>, String) {
    let script = "cargo test --offline -v >out.txt 2>&1; s=$?; \
                  grep -E '^ +(Fresh|Compiling|Dirty) steady ' out.txt; \
                  grep -E '^test result|panicked' out.txt; exit $s";
    let spec = CommandSpec::new(
        vec!["sh".into(), "-c".into(), script.into()],
        Default::default(),
        Duration::from_secs(300),
    );
    let cancel = Default::default();
    let out = place.run(spec, &[], false, None, &cancel).await.unwrap();
    let said = out.tail.clone();
    (
        said.contains("Fresh steady"),
        said.contains("Compiling steady"),
        out.exit.code,
        said,
    )
}

/// A crate whose test file is `test`, committed, with a candidate's
/// workspace of it and its checks' place at the base: a build cache
/// emptied as for an attempt, in bubblewrap, hiding the repository and
/// rascal's files when `hidden`.
struct AtBase {
    repo: common::TestRepo,
    files: tempfile::TempDir,
    ws: std::path::PathBuf,
    place: Place,
}

fn at_base(test: &str, hidden: bool) -> AtBase {
    let repo = common::TestRepo::new(&[
        ("Cargo.toml", MANIFEST),
        (
            "src/lib.rs",
            "pub fn add(a: u32, b: u32) -> u32 { a + b }\n",
        ),
        ("tests/t.rs", test),
    ]);
    let base = repo.head();
    let git = git2::Repository::open(repo.path()).unwrap();
    let tree = git.find_commit(base).unwrap().tree_id().to_string();
    let files = tempfile::tempdir().unwrap();
    let holdout = Arc::new(rascal_exec::git::holdout::Holdout::default());
    let ws = rascal_exec::git::workspace::create_workspace(
        &git,
        base,
        &files.path().join("ws/c"),
        &holdout,
    )
    .unwrap();
    let cache = rascal_exec::exec::cache::fresh_for_attempt(&files.path().join("c")).unwrap();
    let hide = match hidden {
        true => rascal_exec::exec::confine::private_paths(repo.path(), files.path()),
        false => Vec::new(),
    };
    let place = Place::Sandboxed(Arc::new(Sandboxed {
        origin: repo.path().to_path_buf(),
        workspace: ws.clone(),
        tree,
        run_tree: None,
        scratch: files.path().join("c/checks"),
        cache: Some(cache),
        hide,
        confined: true,
        holdout,
        with_holdout: false,
        limits: Default::default(),
    }));
    AtBase {
        repo,
        files,
        ws,
        place,
    }
}

#[tokio::test]
async fn a_check_reuses_the_last_build_only_for_the_same_files() {
    if !common::bwrap() {
        return;
    }
    // Every part is kept to the end (a part left out would be dropped here).
    let AtBase {
        repo,
        files: _files,
        ws,
        place: at_base,
    } = at_base(TEST, false);
    let base = repo.head();
    // The change: the test's expectation, one character.
    std::fs::write(ws.join("tests/t.rs"), TEST.replace("4)", "5)")).unwrap();
    let changes = rascal_exec::git::workspace::changeset(repo.path(), &ws, base).unwrap();
    let change_tree =
        rascal_exec::git::tree::write_change_tree(repo.path(), &ws, base, &changes).unwrap();
    let changed = at_base.running_on(&change_tree.to_string());

    let (fresh, compiled, code, said) = cargo_test(&at_base).await;
    assert_eq!((fresh, compiled, code), (false, true, Some(0)), "{said}");
    // The same files again: nothing of the crate is compiled again, and
    // the reused test binary finds the copy through its compiled-in path.
    let (fresh, compiled, code, said) = cargo_test(&at_base).await;
    assert_eq!((fresh, compiled, code), (true, false, Some(0)), "{said}");
    // One byte of the test differs: built again, and it fails.
    let (_, compiled, code, said) = cargo_test(&changed).await;
    assert!(compiled, "{said}");
    assert_eq!(code, Some(101), "the stale passing test ran: {said}");
    // Back to the first files: built again (the last build was of the
    // other test), and it passes.
    let (_, compiled, code, said) = cargo_test(&at_base).await;
    assert!(compiled, "{said}");
    assert_eq!(code, Some(0), "{said}");
}

/// A test that tries to write the record of what was laid and its lock,
/// beside its copy (`../build-cache.laid`): in the sandbox only the copy
/// and the cache are written through to the host (unconfined, the same
/// test plants both: checked by hand).
const PLANTER: &str = r#"#[test]
fn plants() {
    let here = std::env::current_dir().unwrap();
    for name in ["build-cache.laid", "build-cache.lock"] {
        let p = here.parent().unwrap().join(name);
        match std::fs::write(&p, "planted") {
            Ok(()) => println!("WROTE {}", p.display()),
            Err(e) => println!("REFUSED {} {e}", p.display()),
        }
    }
}
"#;

#[tokio::test]
async fn a_check_cannot_write_the_record_of_what_was_laid() {
    if !common::bwrap() {
        return;
    }
    // As a run hides them: the repository and rascal's files.
    let AtBase {
        repo: _repo,
        files,
        ws: _ws,
        place,
    } = at_base(PLANTER, true);
    let spec = CommandSpec::new(
        vec![
            "sh".into(),
            "-c".into(),
            "cargo test --offline -q -- --nocapture 2>&1 | grep -E 'WROTE|REFUSED|test result'"
                .into(),
        ],
        Default::default(),
        Duration::from_secs(300),
    );
    let out = place
        .run(spec, &[], false, None, &Default::default())
        .await
        .unwrap();
    let said = out.tail;
    let record = files.path().join("c/build-cache.laid");
    assert!(
        said.contains("build-cache.laid"),
        "the attempt was made: {said}"
    );
    assert!(said.contains("1 passed"), "{said}");
    // The record on the host is rascal's, as written before the command.
    let kept = std::fs::read_to_string(&record).unwrap();
    assert!(kept.contains("\"files\""), "{kept} — {said}");
    assert!(kept.contains("tests/t.rs"), "{kept}");
    assert_eq!(
        std::fs::read(files.path().join("c/build-cache.lock")).unwrap(),
        b""
    );
}
