//! The host never follows a path an agent made: strip, lay over, copy,
//! unpack, materialise, remove and gc on agent-written trees, against link
//! chains into the user's repository, its .git, $HOME and /.

use super::*;
use rascal_exec::git::holdout::Holdout;
use std::os::unix::fs::symlink;

/// Where chains lead: the user's repository, its `.git`, a (fake) `$HOME`
/// and `/` (a folder under `/var/tmp` reached from the root). Each holds
/// `keep.txt` and `sub/keep.txt`.
struct Victims {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    home: PathBuf,
    under_root: PathBuf,
}

impl Drop for Victims {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.under_root);
    }
}

fn victims() -> Victims {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    git2::Repository::init(&repo).unwrap();
    let home = dir.path().join("home");
    let under_root = PathBuf::from("/var/tmp").join(marker("paths-root"));
    for d in [
        repo.clone(),
        repo.join(".git"),
        home.clone(),
        under_root.clone(),
    ] {
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("keep.txt"), "keep").unwrap();
        std::fs::write(d.join("sub/keep.txt"), "keep").unwrap();
    }
    Victims {
        _dir: dir,
        repo,
        home,
        under_root,
    }
}

impl Victims {
    /// (name, where the chain's last link points, the path below that to
    /// the victim's folder).
    fn targets(&self) -> Vec<(&'static str, PathBuf, PathBuf)> {
        vec![
            ("repo", self.repo.clone(), PathBuf::new()),
            ("git", self.repo.join(".git"), PathBuf::new()),
            ("home", self.home.clone(), PathBuf::new()),
            (
                "root",
                PathBuf::from("/"),
                self.under_root.strip_prefix("/").unwrap().to_path_buf(),
            ),
        ]
    }

    fn snapshot(&self) -> Vec<BTreeMap<PathBuf, Vec<u8>>> {
        [&self.repo, &self.home, &self.under_root]
            .iter()
            .map(|d| snapshot(d, &[]))
            .collect()
    }
}

/// `dir/name -> dir/name.1 -> … -> target`: `n` links in all.
fn chain(dir: &Path, name: &str, n: usize, target: &Path) {
    for i in 0..n {
        let from = if i == 0 {
            dir.join(name)
        } else {
            dir.join(format!("{name}.{i}"))
        };
        let to = if i + 1 == n {
            target.to_path_buf()
        } else {
            PathBuf::from(format!("{name}.{}", i + 1))
        };
        if let Some(p) = from.parent() {
            std::fs::create_dir_all(p).unwrap();
        }
        symlink(to, from).unwrap();
    }
}

/// Every chain (1, 2 and 5 links to each victim) planted in a fresh
/// directory by `plant`, then `op` run on it; the victims are
/// byte-identical afterwards.
fn each_chain(op: &str, mut run: impl FnMut(&Path, &Path)) {
    let v = victims();
    let before = v.snapshot();
    for (name, target, below) in v.targets() {
        for n in [1usize, 2, 5] {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().join("tree");
            std::fs::create_dir(&root).unwrap();
            chain(&root, "t", n, &target);
            // `t/<below>`: the victim's folder, as seen through the chain.
            run(&root, &Path::new("t").join(&below));
            assert_eq!(
                v.snapshot(),
                before,
                "{op}: a chain of {n} link(s) into {name} changed the victim"
            );
        }
    }
}

#[test]
fn stripping_held_out_tests_never_follows_a_chain() {
    each_chain("strip", |copy, through| {
        let mut h = Holdout::default();
        h.base_paths = vec![
            through.join("keep.txt").to_string_lossy().into_owned(),
            through.join("sub/keep.txt").to_string_lossy().into_owned(),
        ];
        h.strip(copy).unwrap();
    });
}

#[test]
fn laying_held_out_tests_over_never_follows_a_chain() {
    each_chain("lay over", |copy, through| {
        let mut h = Holdout::default();
        let p = through.join("sub/keep.txt").to_string_lossy().into_owned();
        h.outside = vec![(p.clone(), b"held out".to_vec())];
        h.lay_over(copy).unwrap();
        // The held-out file is in the copy, where the link was.
        assert_eq!(std::fs::read(copy.join(&p)).unwrap(), b"held out");
        assert!(!std::fs::symlink_metadata(copy.join("t"))
            .unwrap()
            .file_type()
            .is_symlink());
    });
}

#[test]
fn removing_a_tree_never_follows_a_chain() {
    each_chain("remove", |dir, through| {
        std::fs::create_dir_all(dir.join("deep/er")).unwrap();
        symlink(dir.join("t"), dir.join("deep/er/t")).unwrap();
        // A path through the chain is not removed (nor what it names).
        let e = rascal_exec::git::beneath::Beneath::open(dir)
            .unwrap()
            .remove_all(&through.join("sub"));
        assert!(e.is_err(), "a path through a link was removed");
        rascal_engine::gc::remove_beneath(dir).unwrap();
        assert!(!dir.exists());
    });
}

/// A tar with `entries` (path, link target or file content).
fn tar_of(entries: &[(&str, Option<&str>, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (path, link, content) in entries {
        let mut h = tar::Header::new_gnu();
        h.set_mode(0o644);
        match link {
            Some(t) => {
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_size(0);
                b.append_link(&mut h, path, t).unwrap();
            }
            None => {
                h.set_size(content.len() as u64);
                b.append_data(&mut h, path, *content).unwrap();
            }
        }
    }
    b.into_inner().unwrap()
}

#[test]
fn unpacking_a_download_never_follows_a_chain() {
    let v = victims();
    let before = v.snapshot();
    for (name, target, below) in v.targets() {
        for n in [1usize, 2, 5] {
            let target_s = target.to_string_lossy().into_owned();
            let mut links: Vec<(String, String)> = Vec::new();
            for i in 0..n {
                let from = if i == 0 {
                    "workspace/t".to_string()
                } else {
                    format!("workspace/t.{i}")
                };
                let to = if i + 1 == n {
                    target_s.clone()
                } else {
                    format!("t.{}", i + 1)
                };
                links.push((from, to));
            }
            let victim_file = Path::new("workspace/t")
                .join(&below)
                .join("keep.txt")
                .to_string_lossy()
                .into_owned();
            let mut entries: Vec<(&str, Option<&str>, &[u8])> = links
                .iter()
                .rev()
                .map(|(f, t)| (f.as_str(), Some(t.as_str()), &b""[..]))
                .collect();
            entries.push((victim_file.as_str(), None, b"overwritten"));
            let archive = tar_of(&entries);
            // Docker copy mode.
            let staging = tempfile::tempdir().unwrap();
            let got = rascal_exec::exec::launch::copy::unpack::unpack(
                archive.as_slice(),
                "workspace",
                staging.path(),
                None,
                rascal_exec::exec::launch::copy::unpack::Limits::DEFAULT,
            )
            .unwrap();
            assert!(!got.refused.is_empty(), "{name} {n}: {got:?}");
            // Then swapped in over a workspace that itself holds a chain.
            let dest = tempfile::tempdir().unwrap();
            chain(dest.path(), "old", n, &target);
            rascal_exec::exec::launch::copy::unpack::replace_contents(
                staging.path(),
                dest.path(),
                &[".git"],
            )
            .unwrap();
            // Kubernetes.
            let staging = tempfile::tempdir().unwrap();
            let r = rascal_exec::exec::launch::kubernetes::transfer::unpack(
                archive.as_slice(),
                staging.path(),
                1 << 20,
            );
            assert!(r.is_err(), "{name} {n}: {r:?}");
            let dest = tempfile::tempdir().unwrap();
            chain(dest.path(), "old", n, &target);
            chain(&staging.path().join("workspace"), "new", n, &target);
            rascal_exec::exec::launch::kubernetes::transfer::swap_in(
                &staging.path().join("workspace"),
                dest.path(),
                &[".git"],
            )
            .unwrap();
            assert_eq!(v.snapshot(), before, "unpack: {n} link(s) into {name}");
        }
    }
}

/// The files an upload archive holds: path → content (links: their target).
fn archived(bytes: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in tar::Archive::new(bytes).entries().unwrap() {
        let mut e = e.unwrap();
        let name = e.path().unwrap().to_string_lossy().into_owned();
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut e, &mut data).unwrap();
        if let Ok(Some(l)) = e.link_name() {
            data = l.to_string_lossy().as_bytes().to_vec();
        }
        out.insert(name, data);
    }
    out
}

#[test]
fn an_upload_never_reads_through_a_chain() {
    let v = victims();
    for (name, target, _) in v.targets() {
        for n in [1usize, 2, 5] {
            // A git workspace whose tracked folder `t/` became a chain,
            // hidden by its own .gitignore; and a plain copy.
            let ws = tempfile::tempdir().unwrap();
            let repo = git2::Repository::init(ws.path()).unwrap();
            std::fs::create_dir_all(ws.path().join("t/sub")).unwrap();
            std::fs::write(ws.path().join("t/keep.txt"), "mine").unwrap();
            std::fs::write(ws.path().join("t/sub/keep.txt"), "mine").unwrap();
            let mut index = repo.index().unwrap();
            index
                .add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None)
                .unwrap();
            index.write().unwrap();
            std::fs::remove_dir_all(ws.path().join("t")).unwrap();
            chain(ws.path(), "t", n, &target);
            std::fs::write(ws.path().join(".gitignore"), "t*\n").unwrap();
            for dir in [ws.path().to_path_buf(), {
                let plain = ws.path().join("plain");
                std::fs::create_dir(&plain).unwrap();
                chain(&plain, "t", n, &target);
                plain
            }] {
                let src = rascal_exec::exec::launch::copy::pack::Sources {
                    workspace: dir.clone(),
                    tree: None,
                    instruction: None,
                    criteria: None,
                    artifacts: None,
                    uid: 0,
                    gid: 0,
                };
                let mut out = Vec::new();
                rascal_exec::exec::launch::copy::pack::pack(&src, &mut out).unwrap();
                let files = archived(&out);
                assert!(
                    !files.values().any(|b| b == b"keep"),
                    "{name} {n}: a victim's file was uploaded: {:?}",
                    files.keys()
                );
                let mut out = Vec::new();
                rascal_exec::exec::launch::kubernetes::transfer::pack(
                    &rascal_exec::exec::launch::kubernetes::transfer::Inbound {
                        workdir: &dir,
                        tree: None,
                        instruction: None,
                        criteria: None,
                        stdin: b"",
                    },
                    &mut out,
                )
                .unwrap();
                let files = archived(&out);
                assert!(
                    !files.values().any(|b| b == b"keep"),
                    "{name} {n}: a victim's file went to the pod: {:?}",
                    files.keys()
                );
            }
        }
    }
}

/// A link path that stays inside the repository when read one link at a
/// time, but climbs to `/` on disk: `a/b/up -> ..` walked 20 times (each
/// time one level higher than it reads), then 40 `..`, then `abs`.
fn lexically_inside_chain(abs: &Path) -> String {
    let mut p = String::from("a");
    for _ in 0..20 {
        p.push_str("/b/up");
    }
    for _ in 0..40 {
        p.push_str("/..");
    }
    format!("{p}/{}", abs.strip_prefix("/").unwrap().display())
}

#[test]
fn a_two_link_chain_into_the_users_tests_deletes_nothing_and_never_passes() {
    if !bwrap() {
        return;
    }
    let t = TestRepo::new(&[
        ("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n"),
        ("tests/visible.rs", "#[test]\nfn visible() {}\n"),
        ("tests/holdout_x.rs", "#[test]\nfn held_out_secret() {}\n"),
    ]);
    let through = lexically_inside_chain(&t.path().join("tests"));
    // tests -> l2 -> a/b/up/…/<repo>/tests: each link reads as inside.
    let script = format!(
        "mkdir -p a/b && ln -s .. a/b/up && ln -s '{through}' l2 && rm -rf tests && ln -s l2 tests && echo 'pub fn two() {{}}' >> src/lib.rs"
    );
    t.write(
        ".rascal/config.yaml",
        &common::command_agents(&[("evil", &script)]),
    );
    t.write(
        ".rascal/guardrails.yaml",
        "guardrails:\n  - { name: ok, command: \"true\", timeout: 60s }\n",
    );
    t.write(
        ".rascal/specs/h.yaml",
        "instruction: add two\nholdout: [tests/holdout_x.rs]\n",
    );
    t.commit_all("rascal config");
    let skip = [".git/rascal", ".git/index"];
    let before = snapshot(t.path(), &skip);
    let o = Command::new(common::bin())
        .args(["run", "--spec", "h", "--agent", "evil", "--json"])
        .current_dir(t.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let doc = json(&o);
    assert_eq!(
        snapshot(t.path(), &skip),
        before,
        "rascal changed the user's checkout through the agent's links"
    );
    assert!(t.path().join("tests/holdout_x.rs").exists());
    let c = &doc["candidates"][0];
    assert_ne!(c["verdict"], "pass", "an escaping chain passed: {c}");
    assert!(
        c["reports"].to_string().contains("symlink-escape"),
        "the chain is named: {c}"
    );
}

/// A finished run of `careful`; its id.
fn a_finished_run(t: &TestRepo) -> String {
    let o = t.rascal(&["run", "add b", "--agent", "careful", "--json"]);
    json(&o)["run"].as_str().unwrap().to_string()
}

fn gc_repo() -> TestRepo {
    let t = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            &common::command_agents(&[("careful", "echo 'pub fn b() {}' >> src/a.rs")]),
        ),
        ("src/a.rs", "pub fn a() {}\n"),
    ]);
    t.write(".rascal/guardrails.yaml", "guardrails: []\n");
    t.commit_all("guardrails");
    t
}

fn db(t: &TestRepo) -> rusqlite::Connection {
    rusqlite::Connection::open(t.path().join(".git/rascal/rascal.db")).unwrap()
}

#[test]
fn gc_never_takes_a_run_id_from_the_store_as_a_path() {
    if !bwrap() {
        return;
    }
    let v = victims();
    let before = v.snapshot();
    let t = gc_repo();
    let run = a_finished_run(&t);
    // Rows whose ids name the victims' folders (absolute, and relative
    // from the state folder).
    for id in [
        v.home.display().to_string(),
        v.repo.display().to_string(),
        "../../../../../../../../../..".to_string() + &v.under_root.display().to_string(),
    ] {
        db(&t)
            .execute_batch(&format!(
                "CREATE TEMP TABLE fake AS SELECT * FROM runs WHERE id = '{run}';
                 UPDATE fake SET id = '{id}', started_at = started_at - 864000000,
                   finished_at = finished_at - 864000000;
                 INSERT INTO runs SELECT * FROM fake;
                 DROP TABLE fake;"
            ))
            .unwrap();
    }
    let o = t.rascal(&["gc", "--older-than", "0s", "--forget"]);
    assert_eq!(v.snapshot(), before, "gc removed what a store row named");
    assert_ne!(code(&o), 0, "refused rows are a failure: {}", stdout(&o));
    assert!(
        (stdout(&o) + &stderr(&o)).contains("not one rascal makes"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
    // The real run was collected as usual.
    assert!(!t.files().join("runs").join(&run).exists());
}

#[test]
fn gc_removes_a_symlinked_run_folder_as_a_link_never_its_target() {
    if !bwrap() {
        return;
    }
    let v = victims();
    let before = v.snapshot();
    let t = gc_repo();
    for (i, (name, target, below)) in v.targets().into_iter().enumerate() {
        let run = a_finished_run(&t);
        let folder = if i % 2 == 0 { "runs" } else { "workspaces" };
        let dir = t.files().join(folder).join(&run);
        std::fs::remove_dir_all(&dir).unwrap();
        // A chain of two: runs/<run> -> <run>.1 -> the victim.
        symlink(t.files().join(folder).join(format!("{run}.1")), &dir).unwrap();
        symlink(
            target.join(&below),
            t.files().join(folder).join(format!("{run}.1")),
        )
        .unwrap();
        let o = t.rascal(&["gc", "--older-than", "0s"]);
        assert_eq!(
            v.snapshot(),
            before,
            "gc emptied {name} through {folder}/{run}: {}{}",
            stdout(&o),
            stderr(&o)
        );
        assert!(
            std::fs::symlink_metadata(&dir).is_err(),
            "the link itself goes ({name})"
        );
    }
}

/// A host folder holding a secret, removed on drop.
struct HostFolder(PathBuf);

impl Drop for HostFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn copy_mode_never_uploads_through_a_tracked_folder_turned_into_a_link() {
    let Some(_engine) = common::docker::engine() else {
        return;
    };
    let secret = marker("host-secret");
    let host = HostFolder(PathBuf::from("/var/tmp").join(marker("host-folder")));
    std::fs::create_dir_all(&host.0).unwrap();
    std::fs::write(host.0.join("secret.txt"), &secret).unwrap();
    // Attempt 1 turns the tracked `lib/` into a link to the host folder
    // and hides it; attempt 2 copies what it finds there into the change.
    let script = format!(
        "if [ -f .gitignore ]; then cat lib/secret.txt > stolen.txt; echo done > done.txt; \
         else busybox rm -rf lib && busybox ln -s {} lib && echo lib > .gitignore && echo one > one.txt; fi; true",
        host.0.display()
    );
    let config = format!(
        "launcher: docker\nagents:\n  far: {{ runtime: command, image: \"{}\", workspace: copy, network: none, command: [\"sh\", \"-c\", {}] }}\n  reviewer: {{ runtime: scripted, scenario: review-approve }}\n",
        common::docker::IMAGE,
        serde_json::to_string(&script).unwrap()
    );
    let t = TestRepo::new(&[
        (".rascal/config.yaml", &config),
        (".rascal/guardrails.yaml", "guardrails: []\n"),
        // A failed criterion is sent back: a second attempt.
        (
            ".rascal/verification.yaml",
            "review:\n  reviewers: [reviewer]\n  on_request_changes: retry\n  max_retries: 1\n",
        ),
        // The link is only a warning here: the upload is what is tested.
        (".rascal/permissions.yaml", "permissions:\n  mode: advisory\n"),
        (
            ".rascal/specs/s.yaml",
            "instruction: x\nacceptance_criteria:\n  - { description: done, type: file-exists, check: done.txt }\n",
        ),
        ("lib/secret.txt", "public\n"),
        ("README.md", "hello\n"),
    ]);
    let o = Command::new(common::bin())
        .args(["run", "--spec", "s", "--agent", "far", "--json"])
        .current_dir(t.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let doc = json(&o);
    let c = &doc["candidates"][0];
    let ws = PathBuf::from(c["worktree"].as_str().unwrap());
    assert!(
        ws.join("done.txt").exists(),
        "the second attempt ran: {c}\n{}",
        stderr(&o)
    );
    for (p, bytes) in all_bytes_under(&t.files()) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(&secret),
            "the host's file came back in {}",
            p.display()
        );
    }
    assert!(!o
        .stdout
        .windows(secret.len())
        .any(|w| w == secret.as_bytes()));
}

#[test]
fn an_upload_from_a_tree_sends_the_tree_not_the_workspace() {
    let v = victims();
    // A workspace as rascal makes it, then a tracked folder replaced by a
    // chain into the user's repository, hidden by its own .gitignore.
    let user = TestRepo::new(&[("t/keep.txt", "mine\n"), ("held/secret.rs", "held\n")]);
    let ws_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().join("ws");
    let holdout = {
        let mut h = Holdout::resolve(&user.repo, user.head(), &["held".to_string()]).unwrap();
        h.outside.clear();
        h
    };
    rascal_exec::git::workspace::create_workspace(&user.repo, user.head(), &ws, &holdout).unwrap();
    let tree = git2::Repository::open(&ws)
        .unwrap()
        .head()
        .unwrap()
        .peel_to_tree()
        .unwrap()
        .id();
    // The base's tree (with the held-out file) must not send it either.
    let base_tree = user
        .repo
        .find_commit(user.head())
        .unwrap()
        .tree()
        .unwrap()
        .id();
    std::fs::remove_dir_all(ws.join("t")).unwrap();
    chain(&ws, "t", 2, &v.repo);
    std::fs::write(ws.join(".gitignore"), "t*\n").unwrap();
    for tree in [tree, base_tree] {
        let upload = rascal_exec::exec::launch::Upload {
            origin: user.path().to_path_buf(),
            tree,
            holdout: std::sync::Arc::new(holdout.clone()),
        };
        let src = rascal_exec::exec::launch::copy::pack::Sources {
            workspace: ws.clone(),
            tree: Some(upload.clone()),
            instruction: None,
            criteria: None,
            artifacts: None,
            uid: 0,
            gid: 0,
        };
        let mut out = Vec::new();
        rascal_exec::exec::launch::copy::pack::pack(&src, &mut out).unwrap();
        let docker = archived(&out);
        let mut out = Vec::new();
        rascal_exec::exec::launch::kubernetes::transfer::pack(
            &rascal_exec::exec::launch::kubernetes::transfer::Inbound {
                workdir: &ws,
                tree: Some(&upload),
                instruction: None,
                criteria: None,
                stdin: b"",
            },
            &mut out,
        )
        .unwrap();
        let kube = archived(&out);
        for files in [docker, kube] {
            assert_eq!(
                files.get("workspace/t/keep.txt").map(Vec::as_slice),
                Some(&b"mine\n"[..]),
                "the tree's file, not the link: {:?}",
                files.keys()
            );
            assert!(!files.values().any(|b| b == b"keep"), "{:?}", files.keys());
            assert!(
                !files.keys().any(|k| k.contains("held")),
                "a held-out file was sent: {:?}",
                files.keys()
            );
            assert!(files.contains_key("git/HEAD"), "{:?}", files.keys());
        }
    }
}
