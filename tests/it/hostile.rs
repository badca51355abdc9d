//! Hostile agents against the trust boundary, one per attack: each is a
//! `command` agent (a shell script) doing what a hostile or broken agent
//! would, run through the real binary with the process launcher (real
//! bubblewrap, real git, real SQLite). Each test asserts the outcome on the
//! host: nothing leaked, nothing of the user's changed, nothing survived.

use crate::common;
use common::{bwrap, code, stderr, stdout, TestRepo};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A unique word for files and processes of one test.
fn marker(what: &str) -> String {
    format!(
        "rascal-hostile-{what}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
            % 1_000_000_000
    )
}

/// A repository with `.rascal/` written once its own path is known (agents
/// are told where the user's repository is, as a hostile one could guess).
fn repo(agents: impl Fn(&Path) -> String, guardrails: &str) -> TestRepo {
    let t = TestRepo::new(&[
        ("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n"),
        ("build.sh", "#!/bin/sh\ntrue\n"),
    ]);
    t.write(".rascal/config.yaml", &agents(t.path()));
    t.write(".rascal/guardrails.yaml", guardrails);
    t.commit_all("rascal config");
    t
}

fn run(t: &TestRepo, agents: &str, env: &[(&str, &str)]) -> std::process::Output {
    let mut c = Command::new(common::bin());
    c.args(["run", "do the task", "--agent", agents, "--json"])
        .current_dir(t.path())
        .env("NO_COLOR", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn json(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", stdout(o), stderr(o)))
}

/// Every file under `dir` (following nothing), with its bytes.
fn snapshot(dir: &Path, skip: &[&str]) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().to_path_buf();
            if skip.iter().any(|s| rel.starts_with(s)) {
                continue;
            }
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

fn all_bytes_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    snapshot(dir, &[])
        .into_iter()
        .map(|(p, b)| (dir.join(p), b))
        .collect()
}

#[test]
fn a_host_secret_never_reaches_a_guardrail_through_a_planted_runner() {
    if !bwrap() {
        return;
    }
    let secret = marker("secret-value");
    let out = PathBuf::from("/var/tmp").join(marker("leak"));
    // The agent plants a cargo runner and rewrites the build script the
    // guardrail calls: both copy the environment to a host file.
    let script = format!(
        "mkdir -p .cargo && printf '[target.\\x27cfg(all())\\x27]\\nrunner = [\"sh\", \"-c\", \"env > {o}; env\", \"--\"]\\n' > .cargo/config.toml && printf '#!/bin/sh\\nenv > {o}\\nenv\\n' > build.sh && echo 'pub fn two() -> u32 {{ 2 }}' >> src/lib.rs",
        o = out.display()
    );
    let t = repo(
        |_| common::command_agents(&[("evil", &script)]),
        "guardrails:\n  - { name: build, command: \"sh build.sh\", timeout: 60s }\n",
    );
    let o = run(&t, "evil", &[("HOSTILE_SECRET", &secret)]);
    let doc = json(&o);
    assert!(
        !out.exists(),
        "a guardrail wrote {} on the host",
        out.display()
    );
    // The guardrail ran (its output is recorded) without the secret.
    let reports = doc["candidates"][0]["reports"].to_string();
    assert!(reports.contains("PATH="), "the build ran: {reports}");
    assert!(!reports.contains(&secret), "the secret reached a report");
    for (p, bytes) in all_bytes_under(&t.files())
        .into_iter()
        .chain(all_bytes_under(&t.path().join(".git/rascal")))
    {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(&secret),
            "the secret reached {}",
            p.display()
        );
    }
}

#[test]
fn the_users_repository_git_config_hooks_and_store_are_untouched() {
    if !bwrap() {
        return;
    }
    let script = |repo: &Path| {
        let r = repo.display();
        format!(
            "echo 'pub fn evil() {{}}' >> {r}/src/lib.rs; \
             mkdir -p {r}/.git/hooks && printf '#!/bin/sh\\ntouch /var/tmp/hooked\\n' > {r}/.git/hooks/pre-commit; \
             printf '[core]\\n\\tfsmonitor = /bin/false\\n' >> {r}/.git/config; \
             echo junk >> {r}/.git/rascal/rascal.db; \
             mkdir -p ../.cargo && echo 'runner = true' > ../.cargo/config.toml; \
             echo 'pub fn two() -> u32 {{ 2 }}' >> src/lib.rs; true"
        )
    };
    let t = repo(
        |p| common::command_agents(&[("evil", &script(p))]),
        "guardrails: []\n",
    );
    // Create the store first, so there is one to protect.
    let _ = t.rascal(&["list"]);
    let before = snapshot(t.path(), &[".git/rascal"]);
    let db_before = std::fs::read(t.path().join(".git/rascal/rascal.db")).unwrap();
    let o = run(&t, "evil", &[]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert_eq!(
        snapshot(t.path(), &[".git/rascal"]),
        before,
        "the user's checkout or .git changed"
    );
    // The store grew by rascal's own appends only: the journal is intact.
    let db = std::fs::read(t.path().join(".git/rascal/rascal.db")).unwrap();
    assert!(!db.ends_with(b"junk\n"), "the agent wrote into the store");
    assert!(db.len() >= db_before.len());
    let run_id = json(&o)["run"].as_str().unwrap().to_string();
    let v = t.rascal(&["verify", &run_id]);
    assert_eq!(code(&v), 0, "{}{}", stdout(&v), stderr(&v));
    // Nothing was written next to the workspaces either.
    let ws = PathBuf::from(json(&o)["candidates"][0]["worktree"].as_str().unwrap());
    assert!(!ws.parent().unwrap().join(".cargo").exists());
    // The candidate's change is exactly what it wrote in its workspace:
    // src/lib.rs with `two` added, nothing of what it wrote outside.
    let c = &json(&o)["candidates"][0];
    assert_eq!(c["files_changed"], 1, "{c}");
    let tree = git2::Oid::from_str(c["tree"].as_str().expect("tree")).unwrap();
    // The change's new objects are in the workspace's store, the base's in
    // the user's repository: read through both.
    let store = git2::Repository::open_bare(ws.join(".git")).unwrap();
    store
        .odb()
        .unwrap()
        .add_disk_alternate(t.path().join(".git/objects").to_str().unwrap())
        .unwrap();
    let tree = store.find_tree(tree).unwrap();
    let base = store
        .find_tree(t.repo.head().unwrap().peel_to_tree().unwrap().id())
        .unwrap();
    let diff = store
        .diff_tree_to_tree(Some(&base), Some(&tree), None)
        .unwrap();
    let changed: Vec<String> = diff
        .deltas()
        .map(|d| d.new_file().path().unwrap().display().to_string())
        .collect();
    assert_eq!(changed, ["src/lib.rs"], "the whole change");
    let lib = store
        .find_blob(tree.get_path(Path::new("src/lib.rs")).unwrap().id())
        .unwrap();
    assert_eq!(
        std::str::from_utf8(lib.content()).unwrap(),
        "pub fn one() -> u32 {\n    1\n}\npub fn two() -> u32 { 2 }\n"
    );
}

/// A candidate writing into a sibling's workspace changes nothing there,
/// while its own write lands and both honest changes pass (the control).
#[test]
fn a_candidate_cannot_write_into_a_sibling_workspace() {
    if !bwrap() {
        return;
    }
    let t = repo(
        |_| {
            "agents:\n  a: { runtime: command, command: [\"sh\", \"-c\", \"mkdir -p ../b/src; echo 'pub fn backdoor() {}' > ../b/src/backdoor.rs; echo 'pub mod backdoor;' >> ../b/src/lib.rs; echo 'pub fn a() {}' >> src/lib.rs; true\"] }\n  b: { runtime: command, command: [\"sh\", \"-c\", \"sleep 1; echo 'pub fn b() {}' >> src/lib.rs\"] }\n".to_string()
        },
        "guardrails: []\n",
    );
    let o = run(&t, "a,b", &[]);
    let doc = json(&o);
    let b = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "b")
        .unwrap();
    let ws = PathBuf::from(b["worktree"].as_str().unwrap());
    assert!(!ws.join("src/backdoor.rs").exists(), "a wrote into b");
    let lib = std::fs::read_to_string(ws.join("src/lib.rs")).unwrap();
    assert!(!lib.contains("backdoor"), "{lib}");
    assert_eq!(b["files_changed"], 1, "{b}");
    // The control: the same script's write into its own workspace landed,
    // and both honest changes pass.
    let a = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "a")
        .unwrap();
    let own = PathBuf::from(a["worktree"].as_str().unwrap()).join("src/lib.rs");
    let own = std::fs::read_to_string(own).unwrap();
    assert!(own.contains("pub fn a() {}"), "{own}");
    assert!(lib.contains("pub fn b() {}"), "{lib}");
    assert_eq!(a["verdict"], "pass", "{a}");
    assert_eq!(b["verdict"], "pass", "{b}");
}

/// Daemons an agent detaches (setsid, nohup) are gone after the run; the
/// agent ends only once both ran, so their absence is the reaper's doing.
#[test]
fn no_process_of_an_agent_outlives_the_run() {
    if !bwrap() {
        return;
    }
    let m = marker("daemon");
    let duration = format!("3000.{}", std::process::id());
    // Each daemon leaves a file once it runs, and the agent ends only
    // after both are there: the control that they were alive when it did.
    let script = format!(
        "setsid sh -c 'touch up-1; exec sleep {duration}' & (setsid nohup sh -c 'touch up-2; sleep {duration}; echo {m}' >/dev/null 2>&1 &); i=0; until [ -e up-1 ] && [ -e up-2 ]; do i=$((i+1)); [ $i -gt 1200 ] && {{ echo 'the daemons never started' >&2; exit 1; }}; sleep 0.05; done; rm up-1 up-2; echo 'pub fn two() {{}}' >> src/lib.rs"
    );
    let t = repo(
        |_| common::command_agents(&[("evil", &script)]),
        "guardrails: []\n",
    );
    let o = run(&t, "evil", &[]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let c = &json(&o)["candidates"][0];
    assert_eq!(
        c["verdict"], "pass",
        "both daemons ran and the agent ended: {c}"
    );
    let left = common::survivors_after(&duration, 30);
    assert!(left.is_empty(), "a detached job survived the run: {left:?}");
}

#[test]
fn killing_rascal_kills_the_sandboxed_agent_and_attach_says_so() {
    if !bwrap() {
        return;
    }
    let duration = format!("3001.{}", std::process::id());
    let script = format!("setsid sh -c 'sleep {duration}' & sleep {duration}");
    let t = repo(
        |_| common::command_agents(&[("stuck", &script)]),
        "guardrails: []\n",
    );
    let mut child = common::spawn_rascal(t.path(), &["run", "x", "--agent", "stuck", "--headless"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while common::procs_with(&duration).is_empty() {
        assert!(Instant::now() < deadline, "the agent never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let run = common::wait_for_running_run(&t, 30);
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();
    let left = common::survivors_after(&duration, 30);
    assert!(left.is_empty(), "the agent outlived rascal: {left:?}");
    // The run is not pretended to be running: the next rascal marks it.
    let list = stdout(&t.rascal(&["list"]));
    let line = list.lines().find(|l| l.starts_with(&run)).unwrap();
    assert!(line.contains("interrupted"), "{list}");
    // And attach says why there is nothing to reattach to.
    let a = t.rascal(&["attach", &run, "--json"]);
    assert_eq!(code(&a), 2);
    assert!(
        stderr(&a).contains("its agents stopped with the rascal that ran them"),
        "{}",
        stderr(&a)
    );
}

#[test]
fn the_workspace_holds_only_the_base_and_git_works_in_it() {
    if !bwrap() {
        return;
    }
    let t = repo(
        |_| {
            "agents:\n  peek: { runtime: command, command: [\"sh\", \"-c\", \"git log --all --oneline > seen-log.txt 2>&1; git for-each-ref > seen-refs.txt 2>&1; git status --short > seen-status.txt 2>&1; echo $? >> seen-status.txt\"] }\n".to_string()
        },
        "guardrails: []\n",
    );
    // A later commit and another branch with a "reference solution".
    let base = t.head();
    t.write("src/solution.rs", "pub fn answer() -> u32 { 42 }\n");
    let later = t.commit_all("the solution");
    t.repo
        .branch(
            "rascal/other-candidate",
            &t.repo.find_commit(later).unwrap(),
            true,
        )
        .unwrap();
    let o = Command::new(common::bin())
        .args([
            "run",
            "x",
            "--agent",
            "peek",
            "--json",
            "--base",
            &base.to_string(),
        ])
        .current_dir(t.path())
        .output()
        .unwrap();
    let doc = json(&o);
    let ws = PathBuf::from(doc["candidates"][0]["worktree"].as_str().unwrap());
    let log = std::fs::read_to_string(ws.join("seen-log.txt")).unwrap();
    assert_eq!(log.lines().count(), 1, "only the base commit: {log}");
    assert!(!log.contains("solution"), "{log}");
    let refs = std::fs::read_to_string(ws.join("seen-refs.txt")).unwrap();
    assert_eq!(refs.lines().count(), 1, "{refs}");
    assert!(refs.contains("refs/heads/rascal"), "{refs}");
    let status = std::fs::read_to_string(ws.join("seen-status.txt")).unwrap();
    assert!(
        status.trim_end().ends_with('0'),
        "git status failed: {status}"
    );
    assert!(!ws.join("src/solution.rs").exists());
}

#[test]
fn files_a_guardrail_writes_are_not_part_of_the_change() {
    if !bwrap() {
        return;
    }
    let t = repo(
        |_| {
            "agents:\n  ok: { runtime: command, command: [\"sh\", \"-c\", \"echo 'pub fn two() -> u32 { 2 }' >> src/lib.rs\"] }\n".to_string()
        },
        "guardrails:\n  - { name: gen, command: \"echo generated > generated.txt && echo lock > Cargo.lock && mkdir -p target && touch target/x\" }\n  - { name: fresh, command: \"test ! -e generated.txt\" }\n",
    );
    let o = run(&t, "ok", &[]);
    let doc = json(&o);
    let c = &doc["candidates"][0];
    assert_eq!(c["verdict"], "pass", "{c}");
    assert_eq!(c["files_changed"], 1, "{c}");
    let ws = PathBuf::from(c["worktree"].as_str().unwrap());
    for f in ["generated.txt", "Cargo.lock", "target"] {
        assert!(!ws.join(f).exists(), "{f} reached the workspace");
    }
}

/// An agent cannot read the store, the user's home or checkout; the same
/// probe reads its own workspace (the control).
#[test]
fn an_agent_cannot_read_the_store_or_the_users_home() {
    if !bwrap() {
        return;
    }
    let home = std::env::var("HOME").unwrap();
    let probe = format!("{home}/.rascal-hostile-probe-{}", std::process::id());
    std::fs::write(&probe, "host-private").unwrap();
    let script = |repo: &Path| {
        format!(
            "(cat {r}/.git/rascal/rascal.db >/dev/null 2>&1 && echo store-visible || echo store-hidden) > seen.txt; \
             (cat {probe} 2>/dev/null || echo home-hidden) >> seen.txt; \
             (cat {r}/src/lib.rs >/dev/null 2>&1 && echo repo-visible || echo repo-hidden) >> seen.txt; \
             (cat src/lib.rs >/dev/null 2>&1 && echo own-visible || echo own-hidden) >> seen.txt",
            r = repo.display()
        )
    };
    let t = repo(
        |p| common::command_agents(&[("peek", &script(p))]),
        "guardrails: []\n",
    );
    let _ = t.rascal(&["list"]);
    let o = run(&t, "peek", &[]);
    let _ = std::fs::remove_file(&probe);
    let doc = json(&o);
    let ws = PathBuf::from(doc["candidates"][0]["worktree"].as_str().unwrap());
    let seen = std::fs::read_to_string(ws.join("seen.txt")).unwrap();
    // The last probe is the control: the same `cat` reads the agent's own
    // workspace, so "hidden" above is the sandbox's doing.
    assert_eq!(
        seen,
        "store-hidden\nhome-hidden\nrepo-hidden\nown-visible\n"
    );
}

#[test]
fn a_rewritten_object_in_the_workspace_store_cannot_change_what_finalize_commits() {
    if !bwrap() {
        return;
    }
    let t = repo(
        |_| {
            "agents:\n  ok: { runtime: command, command: [\"sh\", \"-c\", \"echo 'pub fn two() -> u32 { 2 }' >> src/lib.rs\"] }\n".to_string()
        },
        "guardrails: []\n",
    );
    let o = run(&t, "ok", &[]);
    let doc = json(&o);
    let c = &doc["candidates"][0];
    assert_eq!(c["verdict"], "pass", "{c}");
    let ws = PathBuf::from(c["worktree"].as_str().unwrap());
    let tree = git2::Oid::from_str(c["tree"].as_str().expect("tree")).unwrap();
    // The new blob of src/lib.rs, as the workspace's store holds it.
    let store = git2::Repository::open_bare(ws.join(".git")).unwrap();
    let blob = store
        .find_tree(tree)
        .unwrap()
        .get_path(Path::new("src/lib.rs"))
        .unwrap()
        .id();
    // Replace that loose object with another (valid) object's bytes.
    let other = tempfile::tempdir().unwrap();
    let scratch = git2::Repository::init(other.path()).unwrap();
    let evil = scratch.blob(b"pub fn evil() {}\n").unwrap();
    let loose = |root: &Path, id: git2::Oid| {
        let h = id.to_string();
        root.join("objects").join(&h[..2]).join(&h[2..])
    };
    let target = loose(&ws.join(".git"), blob);
    let mut perm = std::fs::metadata(&target).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perm.set_readonly(false);
    std::fs::set_permissions(&target, perm).unwrap();
    std::fs::copy(loose(&other.path().join(".git"), evil), &target).unwrap();
    let run = doc["run"].as_str().unwrap();
    assert_eq!(code(&t.rascal(&["select", run, "ok"])), 0);
    let f = t.rascal(&["finalize", run]);
    assert_ne!(code(&f), 0, "{}", stdout(&f));
    // Refused for the rewritten object (git's or rascal's own hash check
    // names it), not for any other reason.
    let said = format!("{}{}", stdout(&f), stderr(&f));
    assert!(
        said.contains(&blob.to_string())
            && (said.contains("hash mismatch") || said.contains("does not match its id")),
        "{said}"
    );
    assert!(
        t.repo.branches(None).unwrap().flatten().all(|(b, _)| !b
            .name()
            .unwrap()
            .unwrap_or("")
            .starts_with("rascal/do-the-task")),
        "a branch was created"
    );
}

#[test]
fn a_reviewer_runs_confined_too() {
    if !bwrap() {
        return;
    }
    // The reviewer reports what it could reach as its one issue.
    let reviewer = |repo: &Path| {
        format!(
            "seen=''; cat {r}/.git/rascal/rascal.db >/dev/null 2>&1 && seen=\"$seen store\"; cat {r}/src/lib.rs >/dev/null 2>&1 && seen=\"$seen checkout\"; echo x > {r}/reviewer-was-here 2>/dev/null && seen=\"$seen wrote\"; printf '{{\"nonce\": \"%s\", \"verdict\": \"approve\", \"issues\": [{{\"severity\": \"minor\", \"location\": \"src/lib.rs:1\", \"description\": \"reached:%s\"}}]}}\\n' \"$RASCAL_REVIEW_NONCE\" \"$seen\"",
            r = repo.display()
        )
    };
    let t = repo(
        |p| {
            format!(
                "agents:\n  author: {{ runtime: command, command: [\"sh\", \"-c\", \"echo 'pub fn two() {{}}' >> src/lib.rs\"] }}\n  rev: {{ runtime: command, command: [\"sh\", \"-c\", {}] }}\n",
                serde_json::to_string(&reviewer(p)).unwrap()
            )
        },
        "guardrails: []\n",
    );
    t.write(".rascal/verification.yaml", "review:\n  reviewers: [rev]\n");
    t.commit_all("review");
    let _ = t.rascal(&["list"]);
    let o = run(&t, "author", &[]);
    let doc = json(&o);
    let reports = doc["candidates"][0]["reports"].to_string();
    assert!(reports.contains("reached:"), "the reviewer ran: {reports}");
    assert!(
        !reports.contains("reached: "),
        "the reviewer reached something: {reports}"
    );
    assert!(!t.path().join("reviewer-was-here").exists());
}

/// Code a build script runs from outside the change fails the check; the
/// same script in a path of the change passes (the control).
#[test]
fn code_hidden_where_the_change_does_not_reach_is_missing_from_the_checked_copy() {
    if !bwrap() {
        return;
    }
    // The build script runs code the agent put in its artifacts directory
    // (outside the workspace, named by an absolute path), in a path the
    // base ignores, or in a `.rascal-artifacts/` of its own. The first two
    // are not part of the change, so the copy the check runs on does not
    // have them and the build fails; the third is part of the change, and a
    // protected path.
    // The control: the same script put in a path of the change passes.
    for (place, fails) in [
        ("$RASCAL_ARTIFACTS_DIR/evil.sh", Some("guardrails/build")),
        ("target/evil.sh", Some("guardrails/build")),
        (".rascal-artifacts/evil.sh", Some("permissions")),
        ("scripts/honest.sh", None),
    ] {
        let script = format!(
            "mkdir -p $(dirname {place}) && printf 'exit 0\\n' > {place} && printf \"#!/bin/sh\\nsh {place}\\n\" > build.sh"
        );
        let t = repo(
            |_| common::command_agents(&[("sly", &script)]),
            "guardrails:\n  - { name: build, command: \"sh build.sh\" }\n",
        );
        t.write(".gitignore", "/target\n");
        t.commit_all("ignore target");
        let doc = json(&run(&t, "sly", &[]));
        let c = &doc["candidates"][0];
        match fails {
            Some(fails) => {
                assert_eq!(c["verdict"], "fail", "{place}: {c}");
                assert!(c["reports"].to_string().contains(fails), "{place}: {c}");
            }
            None => assert_eq!(c["verdict"], "pass", "{place}: {c}"),
        }
    }
}

#[test]
fn a_workspace_git_pointed_at_the_users_repository_fails_and_changes_nothing() {
    if !bwrap() {
        return;
    }
    let script = |repo: &Path| {
        format!(
            "echo 'pub fn two() {{}}' >> src/lib.rs; rm -rf .git; ln -s {r}/.git .git",
            r = repo.display()
        )
    };
    let t = repo(
        |p| common::command_agents(&[("evil", &script(p))]),
        "guardrails: []\n",
    );
    let _ = t.rascal(&["list"]);
    let before = snapshot(&t.path().join(".git"), &["rascal"]);
    let doc = json(&run(&t, "evil", &[]));
    let c = &doc["candidates"][0];
    assert_eq!(c["verdict"], "fail", "{c}");
    assert!(c["tree"].is_null(), "{c}");
    assert!(
        c["reports"]
            .to_string()
            .contains("not the directory rascal created"),
        "{c}"
    );
    assert_eq!(snapshot(&t.path().join(".git"), &["rascal"]), before);
}

// Attack classes of trust boundaries III and IV, one file each (they share
// the helpers above through `super::*`).
#[path = "hostile/bounded.rs"]
mod bounded;
#[path = "hostile/gitdir.rs"]
mod gitdir;
#[path = "hostile/holdout.rs"]
mod holdout;
#[path = "hostile/output.rs"]
mod output;
#[path = "hostile/paths.rs"]
mod paths;
#[path = "hostile/sandbox.rs"]
mod sandbox;
