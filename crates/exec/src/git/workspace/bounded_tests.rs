//! Unit tests of `workspace`.

use super::*;

/// A repository with one commit, and `files` written after it.
fn repo(files: &[(&str, &[u8])]) -> (tempfile::TempDir, Oid) {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repository::init(dir.path()).unwrap();
    std::fs::write(dir.path().join("README.md"), "# base\n").unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(Path::new("README.md")).unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
    let base = repo
        .commit(Some("HEAD"), &sig, &sig, "base", &tree, &[])
        .unwrap();
    for (path, bytes) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    (dir, base)
}

#[test]
fn a_huge_line_count_reaches_the_checks_in_bounded_windows_and_is_not_kept() {
    let lines = 3 * Part::WINDOW_LINES + 17;
    let text = "a\n".repeat(lines);
    let (dir, base) = repo(&[("many.txt", text.as_bytes())]);
    let (mut windows, mut biggest, mut total, mut last_seen) = (0, 0, 0, false);
    let mut read = |f: &FileChange| {
        windows += 1;
        biggest = biggest.max(f.added_lines.len());
        total += f.added_lines.len();
        last_seen = f.part.is_some_and(|p| p.last);
    };
    let cs = changeset_streamed(
        dir.path(),
        dir.path(),
        base,
        &Default::default(),
        Some(&mut read),
    )
    .unwrap();
    assert_eq!(windows, 4);
    assert!(biggest <= Part::WINDOW_LINES, "{biggest}");
    assert_eq!(total, lines);
    assert!(last_seen);
    let f = &cs.files[0];
    assert_eq!(f.added as usize, lines);
    assert!(f.added_lines.is_empty() && f.content.is_none() && f.part.is_none());
    // The same digest as the file held whole.
    let whole = changeset(dir.path(), dir.path(), base).unwrap();
    assert_eq!(whole.files[0].content_digest(), f.content_digest());
}

/// `git mv a z`, then a new `a`: the rename's old path is a new file
/// of its own, and the change tree holds both (the rename's removal of
/// `a` must not take out the new `a`, whichever comes first).
#[test]
fn a_renamed_files_old_path_written_anew_stays_in_the_change_tree() {
    let old = "one line of the file\n".repeat(40);
    let (dir, base) = repo(&[]);
    let repo_ = Repository::open(dir.path()).unwrap();
    // The base gets `a.txt` too.
    std::fs::write(dir.path().join("a.txt"), &old).unwrap();
    let mut index = repo_.index().unwrap();
    index.add_path(Path::new("a.txt")).unwrap();
    let tree = repo_.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
    let parent = repo_.find_commit(base).unwrap();
    let base = repo_
        .commit(Some("HEAD"), &sig, &sig, "a", &tree, &[&parent])
        .unwrap();
    // The agent: a.txt moved to z.txt (staged, as `git mv` does), and a
    // different a.txt written.
    std::fs::rename(dir.path().join("a.txt"), dir.path().join("z.txt")).unwrap();
    let mut index = repo_.index().unwrap();
    index.remove_path(Path::new("a.txt")).unwrap();
    index.add_path(Path::new("z.txt")).unwrap();
    index.write().unwrap();
    std::fs::write(dir.path().join("a.txt"), "something else\n").unwrap();
    let cs = candidate_change(
        dir.path(),
        dir.path(),
        base,
        &Default::default(),
        &Default::default(),
        None,
    )
    .unwrap();
    let tree = repo_.find_tree(Oid::from_str(&cs.tree).unwrap()).unwrap();
    let blob = |path: &str| {
        let id = tree.get_path(Path::new(path)).unwrap().id();
        String::from_utf8(repo_.find_blob(id).unwrap().content().to_vec()).unwrap()
    };
    assert_eq!(blob("z.txt"), old);
    assert_eq!(blob("a.txt"), "something else\n", "{:?}", cs.files);
    assert_eq!(blob("README.md"), "# base\n");
}

/// A change to a file beside a held-out test (`tests/other.rs` next
/// to `tests/holdout_x.rs`): its subtree is rewritten with the
/// held-out entry kept as the base had it, and the held-out blob never
/// enters the workspace's store. (Before, git refused the tree: the
/// blob is not in the store — and a good candidate could not be
/// judged.)
#[test]
fn a_change_beside_a_held_out_test_keeps_it_and_copies_none_of_it() {
    let (dir, first) = repo(&[
        ("tests/holdout_x.rs", b"secret cases"),
        ("tests/other.rs", b"old"),
    ]);
    let r = Repository::open(dir.path()).unwrap();
    let mut index = r.index().unwrap();
    for p in ["tests/holdout_x.rs", "tests/other.rs"] {
        index.add_path(Path::new(p)).unwrap();
    }
    let tree = r.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
    let parent = r.find_commit(first).unwrap();
    let base = r
        .commit(Some("HEAD"), &sig, &sig, "tests", &tree, &[&parent])
        .unwrap();
    let h =
        crate::git::holdout::Holdout::resolve(&r, base, &["tests/holdout_x.rs".into()]).unwrap();
    let root = tempfile::tempdir().unwrap();
    let ws = create_workspace(&r, base, &root.path().join("c"), &h).unwrap();
    assert!(!ws.join("tests/holdout_x.rs").exists());
    std::fs::write(ws.join("tests/other.rs"), "new").unwrap();
    let cs = candidate_change(dir.path(), &ws, base, &Default::default(), &h, None).unwrap();
    let paths: Vec<&str> = cs.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["tests/other.rs"]);
    let held = r
        .find_commit(base)
        .unwrap()
        .tree()
        .unwrap()
        .get_path(Path::new("tests/holdout_x.rs"))
        .unwrap()
        .id();
    let store = crate::git::tree::workspace_store(&ws).unwrap();
    let tree = store.find_tree(Oid::from_str(&cs.tree).unwrap()).unwrap();
    assert_eq!(
        tree.get_path(Path::new("tests/holdout_x.rs")).unwrap().id(),
        held
    );
    assert!(!store.odb().unwrap().exists(held));
    let other = tree.get_path(Path::new("tests/other.rs")).unwrap().id();
    assert_eq!(store.find_blob(other).unwrap().content(), b"new");
}

#[test]
fn a_candidates_huge_file_keeps_a_bounded_likeness_and_its_whole_blob() {
    let text = "a\n".repeat(2 * Part::WINDOW_LINES);
    let mut long = vec![b'y'; Part::LINE_PIECE * 2 + 5];
    long.push(b'\n');
    let (dir, base) = repo(&[("many.txt", text.as_bytes()), ("long.txt", &long)]);
    let mut pieces = 0;
    let mut read = |f: &FileChange| {
        if f.path == "long.txt" {
            pieces += f.added_lines.len();
            assert!(f
                .added_lines
                .iter()
                .all(|l| l.text.len() <= Part::LINE_PIECE));
        }
    };
    let cs = candidate_change(
        dir.path(),
        dir.path(),
        base,
        &Default::default(),
        &Default::default(),
        Some(&mut read),
    )
    .unwrap();
    assert_eq!(pieces, 3);
    for f in &cs.files {
        assert!(f.added_lines.is_empty());
        match f.likeness.as_ref().unwrap() {
            rascal_core::model::likeness::Likeness::Sketch { mins, .. } => {
                assert!(mins.len() <= rascal_core::model::likeness::SKETCH_SIZE)
            }
            rascal_core::model::likeness::Likeness::Text(t) => {
                assert!(t.len() <= rascal_core::model::likeness::TEXT_BUDGET)
            }
        }
    }
    // The change tree holds the files' bytes whole.
    let store = crate::git::tree::workspace_store(dir.path()).unwrap();
    let tree = store.find_tree(Oid::from_str(&cs.tree).unwrap()).unwrap();
    let id = tree.get_path(Path::new("long.txt")).unwrap().id();
    assert_eq!(store.find_blob(id).unwrap().content(), &long[..]);
}

#[test]
fn the_diff_text_names_a_file_too_big_to_show() {
    let big = "b\n".repeat(MAX_DIFF_FILE as usize);
    let (dir, base) = repo(&[("big.txt", big.as_bytes()), ("small.txt", b"s\n")]);
    let text = diff_text(dir.path(), dir.path(), base).unwrap();
    assert!(text.len() < 10_000, "{}", text.len());
    assert!(text.contains("big.txt is over"), "{text}");
    assert!(text.contains("+s"), "{text}");
}
