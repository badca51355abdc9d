//! `rascal gc`, the DISK column of `rascal list`, and the workspaces
//! finalize removes — as a user meets them: real repositories, real runs of
//! scripted agents through the real binary, the real store (runs are made
//! old by moving their recorded times back in SQLite, which the journal's
//! hash chain does not cover), and a real Docker engine for containers.

use crate::common;
use common::{code, stderr, stdout, TestRepo};
use std::path::{Path, PathBuf};

const AGENTS: &str = "agents:
  careful:
    runtime: scripted
    steps:
      - { do: write, path: src/b.rs, content: \"pub fn b() -> u32 { 42 }\\n\" }
  hasty:
    runtime: scripted
    steps:
      - { do: write, path: src/c.rs, content: \"pub fn c() {}\\n\" }
  sleeper:
    runtime: scripted
    steps:
      - { do: say, text: thinking }
      - { do: sleep, ms: 60000 }
";

fn repo() -> TestRepo {
    TestRepo::new(&[
        (".rascal/config.yaml", AGENTS),
        ("src/a.rs", "pub fn a() {}\n"),
        ("README.md", "sample\n"),
    ])
}

fn run_id(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("rascal run "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("run id in output: {out}"))
        .to_string()
}

/// A finished run of `careful` and `hasty`; its id.
fn two_candidate_run(t: &TestRepo) -> String {
    let o = t.rascal(&["run", "add b", "--agent", "careful,hasty", "--headless"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    run_id(&stdout(&o))
}

fn db(t: &TestRepo) -> rusqlite::Connection {
    rusqlite::Connection::open(t.path().join(".git/rascal/rascal.db")).unwrap()
}

/// Move everything recorded about `run`'s times `days` into the past
/// (start, end, decisions: the projections, not the chained journal).
fn backdate(t: &TestRepo, run: &str, days: i64) {
    let ms = days * 86_400_000;
    db(t)
        .execute_batch(&format!(
            "UPDATE runs SET started_at = started_at - {ms},
               finished_at = CASE WHEN finished_at IS NULL THEN NULL ELSE finished_at - {ms} END
             WHERE id = '{run}';
             UPDATE decisions SET at = at - {ms} WHERE run_id = '{run}';"
        ))
        .unwrap();
}

fn workspaces(t: &TestRepo, run: &str) -> PathBuf {
    t.files().join("workspaces").join(run)
}

fn run_files(t: &TestRepo, run: &str) -> PathBuf {
    t.files().join("runs").join(run)
}

fn json(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", stdout(o), stderr(o)))
}

/// `disk_bytes` of each run in `rascal list --json`.
fn listed_disk(t: &TestRepo) -> Vec<(String, u64)> {
    let o = t.rascal(&["list", "--json"]);
    json(&o)
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["disk_bytes"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn disk_of(t: &TestRepo, run: &str) -> u64 {
    listed_disk(t)
        .into_iter()
        .find(|(id, _)| id == run)
        .map(|(_, b)| b)
        .unwrap_or_else(|| panic!("{run} not listed"))
}

/// The `rascal list` line of `run`.
fn list_line(t: &TestRepo, run: &str) -> String {
    stdout(&t.rascal(&["list"]))
        .lines()
        .find(|l| l.starts_with(run))
        .unwrap_or_else(|| panic!("{run} not in list"))
        .to_string()
}

#[test]
fn gc_removes_old_runs_files_says_what_it_freed_and_keeps_recent_runs() {
    let t = repo();
    let old = two_candidate_run(&t);
    let new = two_candidate_run(&t);
    backdate(&t, &old, 8);
    for c in ["careful", "hasty"] {
        assert!(workspaces(&t, &old).join(c).join(".git").exists(), "{c}");
        assert!(
            run_files(&t, &old).join(c).join("agent.log").exists(),
            "{c}"
        );
    }
    let before = disk_of(&t, &old);
    assert!(before > 0);
    assert!(list_line(&t, &old).contains(" KiB") || list_line(&t, &old).contains(" MiB"));

    let o = t.rascal(&["gc", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let doc = json(&o);
    assert_eq!(doc["older_than"], "7d");
    let runs = doc["runs"].as_array().unwrap();
    let old_doc = runs.iter().find(|r| r["run"] == old.as_str()).unwrap();
    assert_eq!(old_doc["freed_bytes"].as_u64(), Some(before), "{doc}");
    assert_eq!(doc["freed_bytes"].as_u64(), Some(before), "{doc}");
    assert_eq!(old_doc["records"], "kept");
    let new_doc = runs.iter().find(|r| r["run"] == new.as_str()).unwrap();
    assert!(new_doc["removed"].as_array().unwrap().is_empty());
    assert!(new_doc["kept"][0]["reason"]
        .as_str()
        .unwrap()
        .ends_with("younger than 7d"));

    assert!(!workspaces(&t, &old).exists(), "old workspaces removed");
    assert!(!run_files(&t, &old).exists(), "old run files removed");
    assert!(workspaces(&t, &new).join("careful").exists(), "recent kept");
    assert!(run_files(&t, &new).join("careful/agent.log").exists());

    // The record stays (the audit trail): listed with nothing on disk.
    let line = list_line(&t, &old);
    assert!(line.contains(" – "), "{line}");
    assert_eq!(disk_of(&t, &old), 0);
    assert!(disk_of(&t, &new) > 0);
    let show = t.rascal(&["show", &old, "--quiet"]);
    assert_eq!(code(&show), 0, "{}", stderr(&show));
    assert_eq!(code(&t.rascal(&["verify", &old])), 0);

    // Again: nothing left to remove.
    let o = t.rascal(&["gc"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0);
    assert!(
        out.contains(
            "nothing to remove: no finished run last active 7d ago or more has files left"
        ),
        "{out}"
    );
    assert!(out.contains(&format!("kept {new} (last active")), "{out}");
}

#[test]
fn the_human_report_names_each_run_its_size_and_the_total() {
    let t = repo();
    let a = two_candidate_run(&t);
    let b = two_candidate_run(&t);
    let freed = disk_of(&t, &a) + disk_of(&t, &b);
    let o = t.rascal(&["gc", "--older-than", "0s"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    for run in [&a, &b] {
        let line = out
            .lines()
            .find(|l| l.starts_with(run.as_str()))
            .unwrap_or_else(|| panic!("{run}: {out}"));
        assert!(line.contains("freed"), "{line}");
        assert!(line.ends_with("2 workspaces, run files"), "{line}");
    }
    let total = format!(
        "freed {} in total (2 runs cleaned, 0 kept)",
        rascal_engine::gc::human_bytes(freed)
    );
    assert!(out.contains(&total), "{total}\n{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("store ") && l.ends_with("(compacted)")),
        "{out}"
    );
}

#[test]
fn a_dry_run_prints_the_plan_and_removes_nothing() {
    let t = repo();
    let run = two_candidate_run(&t);
    backdate(&t, &run, 30);
    let before = disk_of(&t, &run);
    let o = t.rascal(&["gc", "--dry-run", "--forget"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}");
    assert!(out.contains(&format!("{run}  would free")), "{out}");
    assert!(out.contains("would forget its records"), "{out}");
    assert!(out.ends_with("dry run: nothing was removed\n"), "{out}");
    assert!(workspaces(&t, &run).join("careful").exists());
    assert!(run_files(&t, &run).join("careful").exists());
    assert_eq!(disk_of(&t, &run), before);
    assert_eq!(code(&t.rascal(&["show", &run, "--quiet"])), 0);
}

#[test]
fn a_running_run_is_never_touched_and_is_collected_once_its_rascal_is_gone() {
    let t = repo();
    let mut child =
        common::spawn_rascal(t.path(), &["run", "x", "--agent", "sleeper", "--headless"]);
    let run = common::wait_for_running_run(&t, 30);
    // Its workspace exists before the agent runs; wait for its log too.
    let log = run_files(&t, &run).join("sleeper/agent.log");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("thinking")
    {
        assert!(std::time::Instant::now() < deadline, "agent never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    backdate(&t, &run, 60);
    let o = t.rascal(&["gc", "--older-than", "0s", "--forget"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    let pid = child.id();
    assert!(
        out.contains(&format!(
            "kept {run} (running: its rascal (pid {pid}) is running it)"
        )),
        "{out}"
    );
    assert!(!out.contains(&format!("{run}  freed")), "{out}");
    assert!(workspaces(&t, &run).join("sleeper").exists());
    assert!(log.exists());
    assert!(stdout(&t.rascal(&["list"])).contains(&run));

    child.kill().unwrap();
    child.wait().unwrap();
    let o = t.rascal(&["gc", "--older-than", "0s"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(out.contains(&format!("{run}  freed")), "{out}");
    assert!(!workspaces(&t, &run).exists());
    assert!(list_line(&t, &run).contains("INTERRUPTED"));
}

#[test]
fn keep_selected_keeps_the_chosen_candidate_so_it_can_still_be_finalized() {
    let t = repo();
    let run = two_candidate_run(&t);
    let o = t.rascal(&["select", &run, "careful"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // A build cache of its checks (rebuilt when needed) is not kept.
    let cache = run_files(&t, &run).join("careful/build-cache/debug");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(cache.join("libfoo.rlib"), vec![0u8; 100_000]).unwrap();
    // Nor what sits beside it: its steady copy's record (`exec::steady`).
    let record = run_files(&t, &run).join("careful/build-cache.laid");
    std::fs::write(&record, "{}").unwrap();
    backdate(&t, &run, 10);
    let o = t.rascal(&["gc", "--keep-selected", "--forget"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(
        out.contains(&format!("kept {run} careful (selected; --keep-selected)")),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "kept the records of {run} (its selected candidate is kept"
        )),
        "{out}"
    );
    assert!(workspaces(&t, &run).join("careful/src/b.rs").exists());
    assert!(!workspaces(&t, &run).join("hasty").exists());
    assert!(run_files(&t, &run).join("careful/agent.log").exists());
    assert!(run_files(&t, &run).join("careful/artifacts").exists());
    assert!(!run_files(&t, &run).join("careful/build-cache").exists());
    assert!(!record.exists());
    assert!(!run_files(&t, &run).join("hasty").exists());
    // The kept candidate is still finalized as it was verified.
    let o = t.rascal(&["finalize", &run]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("committed"), "{}", stdout(&o));

    // Once finalized, --keep-selected keeps nothing of it; its branch
    // (the user's result) stays.
    let branch = format!("rascal/add-b-{run}");
    assert!(t.repo.find_branch(&branch, git2::BranchType::Local).is_ok());
    let o = t.rascal(&["gc", "--keep-selected", "--older-than", "0s"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(!workspaces(&t, &run).exists(), "{}", stdout(&o));
    assert!(!run_files(&t, &run).exists());
    assert!(t.repo.find_branch(&branch, git2::BranchType::Local).is_ok());
}

#[test]
fn forget_deletes_every_record_of_the_runs_it_collects_and_only_theirs() {
    let t = repo();
    let gone = two_candidate_run(&t);
    let stays = two_candidate_run(&t);
    backdate(&t, &gone, 9);
    let o = t.rascal(&["gc", "--forget"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(out.contains(&format!("{gone}  freed")), "{out}");
    assert!(out.contains("records forgotten"), "{out}");
    assert!(out.contains("; forgot the records of 1 run"), "{out}");
    let conn = db(&t);
    for (table, col) in [
        ("runs", "id"),
        ("candidates", "run_id"),
        ("reports", "run_id"),
        ("decisions", "run_id"),
        ("events", "run_id"),
    ] {
        let n: i64 = conn
            .query_row(
                &format!("SELECT COUNT(*) FROM {table} WHERE {col} = ?1"),
                [&gone],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 0, "{table} still has rows of {gone}");
    }
    let list = stdout(&t.rascal(&["list"]));
    assert!(!list.contains(&gone), "{list}");
    assert!(list.contains(&stays), "{list}");
    let show = t.rascal(&["show", &gone]);
    assert_eq!(code(&show), 2);
    assert!(
        stderr(&show).contains(&format!("no run `{gone}`")),
        "{}",
        stderr(&show)
    );
    assert_eq!(code(&t.rascal(&["verify", &stays])), 0);
    assert!(workspaces(&t, &stays).exists());
}

#[test]
fn named_runs_are_collected_whatever_their_age_and_unknown_ones_refused() {
    let t = repo();
    let a = two_candidate_run(&t);
    let b = two_candidate_run(&t);
    let o = t.rascal(&["gc", "--run", &a]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(!workspaces(&t, &a).exists());
    assert!(workspaces(&t, &b).exists(), "only the named run");
    assert!(!stdout(&o).contains(&b), "{}", stdout(&o));

    let o = t.rascal(&["gc", "--run", "r-20000101-dead"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("no run `r-20000101-dead` in this repository"),
        "{}",
        stderr(&o)
    );
    let o = t.rascal(&["gc", "--older-than", "a week"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("7d"), "{}", stderr(&o));
    assert!(workspaces(&t, &b).exists());
}

#[test]
fn an_older_rascals_wt_branches_go_and_finalized_branches_stay() {
    let t = repo();
    let run = two_candidate_run(&t);
    assert_eq!(code(&t.rascal(&["select", &run, "careful"])), 0);
    assert_eq!(code(&t.rascal(&["finalize", &run])), 0);
    // What an older rascal left of its run: a git worktree under
    // .git/rascal/worktrees/ on branch rascal/wt/<run>/<candidate> (git
    // refuses to delete a branch a worktree has checked out), and the
    // branch of a candidate whose worktree is gone.
    let head = t.repo.head().unwrap().peel_to_commit().unwrap();
    let branch = t
        .repo
        .branch("rascal/wt/r-20240101-0a0a/claude", &head, false)
        .unwrap();
    t.repo
        .branch("rascal/wt/r-20240101-0a0a/codex", &head, false)
        .unwrap();
    let legacy = t
        .path()
        .join(".git/rascal/worktrees/r-20240101-0a0a/claude");
    std::fs::create_dir_all(legacy.parent().unwrap()).unwrap();
    let mut opts = git2::WorktreeAddOptions::new();
    let reference = branch.into_reference();
    opts.reference(Some(&reference));
    t.repo
        .worktree("r-20240101-0a0a-claude", &legacy, Some(&opts))
        .unwrap();
    assert!(legacy.join("src/a.rs").exists());
    filetime_back(legacy.parent().unwrap(), 3600);
    let o = t.rascal(&["gc", "--older-than", "0s"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(
        out.contains("r-20240101-0a0a  freed") && out.contains("2 rascal/wt branches"),
        "{out}"
    );
    assert!(out.contains("1 old worktree"), "{out}");
    assert!(!legacy.exists());
    let names: Vec<String> = t
        .repo
        .branches(Some(git2::BranchType::Local))
        .unwrap()
        .map(|b| b.unwrap().0.name().unwrap().unwrap().to_string())
        .collect();
    assert!(
        !names.iter().any(|n| n.starts_with("rascal/wt/")),
        "{names:?}"
    );
    assert_eq!(t.repo.worktrees().unwrap().len(), 0, "registration pruned");
    assert!(names.contains(&format!("rascal/add-b-{run}")), "{names:?}");
}

/// Set the modification time of `dir` and everything in it `secs` back.
fn filetime_back(dir: &Path, secs: u64) {
    let when = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
    let mut stack = vec![dir.to_path_buf()];
    let mut all = Vec::new();
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        }
        all.push(p);
    }
    for p in all {
        std::fs::File::open(&p).unwrap().set_modified(when).unwrap();
    }
}

#[test]
fn files_no_record_names_are_collected_once_they_are_not_fresh() {
    let t = repo();
    let stray = t.files().join("workspaces/r-20250101-beef/careful");
    std::fs::create_dir_all(&stray).unwrap();
    std::fs::write(stray.join("f"), "left by a crash").unwrap();
    let o = t.rascal(&["gc", "--older-than", "0s"]);
    let out = stdout(&o);
    assert!(
        out.contains("kept r-20250101-beef (not recorded yet, modified"),
        "{out}"
    );
    assert!(stray.exists());
    filetime_back(&t.files().join("workspaces/r-20250101-beef"), 3600);
    let o = t.rascal(&["gc", "--older-than", "0s"]);
    let out = stdout(&o);
    assert!(
        out.contains("r-20250101-beef  freed") && out.contains("(no record names this run)"),
        "{out}"
    );
    assert!(!t.files().join("workspaces/r-20250101-beef").exists());
}

#[test]
fn a_removal_that_fails_is_named_with_its_cause_and_the_rest_goes_on() {
    if !common::bwrap() {
        return;
    }
    let t = repo();
    let run = two_candidate_run(&t);
    let ws = workspaces(&t, &run);
    // rascal gc in a mount namespace where the run's workspaces are a
    // read-only file system: nothing under them can be removed (even by
    // root), everything else can.
    let o = std::process::Command::new("bwrap")
        .args(["--dev-bind", "/", "/", "--ro-bind"])
        .arg(&ws)
        .arg(&ws)
        .arg("--")
        .arg(common::bin())
        .args(["gc", "--older-than", "0s", "--forget"])
        .current_dir(t.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(code(&o), 1, "{out}{err}");
    assert!(
        err.contains(&format!(
            "rascal: could not remove {}: Read-only file system",
            ws.join("careful").display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("the records of run {run}: kept")),
        "{err}"
    );
    assert!(!run_files(&t, &run).exists(), "the rest went on");
    assert!(ws.join("careful").exists());
    // The next gc, without the obstacle, finishes the job.
    let o = t.rascal(&["gc", "--older-than", "0s", "--forget"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(!ws.exists());
    assert!(!stdout(&t.rascal(&["list"])).contains(&run));
}

#[test]
fn finalize_removes_the_other_candidates_workspaces_and_keeps_the_winners() {
    let t = repo();
    let run = two_candidate_run(&t);
    assert_eq!(code(&t.rascal(&["select", &run, "careful"])), 0);
    let o = t.rascal(&["finalize", &run]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(out.contains("removed the workspace of hasty ("), "{out}");
    assert!(!workspaces(&t, &run).join("hasty").exists());
    assert!(workspaces(&t, &run).join("careful/src/b.rs").exists());
    // Its run files (log, PR body) stay until gc.
    assert!(run_files(&t, &run).join("hasty/agent.log").exists());
    assert!(run_files(&t, &run).join("pr_body.md").exists());
    // Finalizing again is still a no-op on the kept workspace.
    let o = t.rascal(&["finalize", &run]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).contains("already holds this run's commit"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn keep_workspaces_true_keeps_every_workspace_after_finalize() {
    let t = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            &format!("keep_workspaces: true\n{AGENTS}"),
        ),
        ("src/a.rs", "pub fn a() {}\n"),
    ]);
    let run = two_candidate_run(&t);
    assert_eq!(code(&t.rascal(&["select", &run, "careful"])), 0);
    let o = t.rascal(&["finalize", &run]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        !stdout(&o).contains("removed the workspace"),
        "{}",
        stdout(&o)
    );
    assert!(workspaces(&t, &run).join("hasty").exists());
    assert!(workspaces(&t, &run).join("careful").exists());
    // gc still collects them once the run is old.
    let o = t.rascal(&["gc", "--older-than", "0s"]);
    assert_eq!(code(&o), 0);
    assert!(!workspaces(&t, &run).exists());
}

#[test]
fn a_stopped_container_of_an_old_run_is_removed_by_its_labels() {
    let Some(e) = common::docker::engine() else {
        return;
    };
    let agent = format!(
        "launcher: docker\nagents:\n  boxed: {{ runtime: command, image: \"{}\", command: [\"sh\", \"-c\", \"echo hi > hi.txt\"], network: none, keep_containers: true }}\n",
        common::docker::IMAGE
    );
    let t = TestRepo::new(&[(".rascal/config.yaml", &agent), ("README.md", "hello\n")]);
    let o = t.rascal(&["run", "x", "--agent", "boxed", "--headless"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let run = run_id(&stdout(&o));
    let mine = || -> Vec<String> {
        e.rt.block_on(rascal_exec::exec::launch::docker::list_rascal_containers(
            &e.docker,
            Some(&run),
        ))
        .unwrap()
        .into_iter()
        .filter_map(|c| c.id)
        .collect()
    };
    assert_eq!(mine().len(), 1, "keep_containers left it");
    // Recent: kept, container and all.
    let o = t.rascal(&["gc"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(mine().len(), 1);
    backdate(&t, &run, 8);
    let o = t.rascal(&["gc"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(
        out.contains(&format!("{run}  freed")) && out.contains("1 container"),
        "{out}"
    );
    assert!(mine().is_empty(), "container removed");
    assert!(!workspaces(&t, &run).exists());
}

#[test]
fn an_interrupted_run_whose_container_still_runs_counts_as_running() {
    let Some(e) = common::docker::engine() else {
        return;
    };
    let agent = format!(
        "launcher: docker\nagents:\n  slow: {{ runtime: command, image: \"{}\", command: [\"sh\", \"-c\", \"echo started; sleep 60\"], network: none }}\n",
        common::docker::IMAGE
    );
    let t = TestRepo::new(&[(".rascal/config.yaml", &agent), ("README.md", "hello\n")]);
    let mut child = common::spawn_rascal(t.path(), &["run", "x", "--agent", "slow", "--headless"]);
    let run = common::wait_for_running_run(&t, 60);
    let containers = || {
        e.rt.block_on(rascal_exec::exec::launch::docker::list_rascal_containers(
            &e.docker,
            Some(&run),
        ))
        .unwrap()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !containers()
        .iter()
        .any(|c| c.state.map(|s| s.to_string()).as_deref() == Some("running"))
    {
        assert!(std::time::Instant::now() < deadline, "container never ran");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // rascal dies without any cleanup; its container goes on.
    child.kill().unwrap();
    child.wait().unwrap();
    backdate(&t, &run, 30);
    let o = t.rascal(&["gc", "--older-than", "0s", "--forget"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    let name = rascal_exec::exec::launch::docker::container_name(&run, "slow");
    assert!(
        out.contains(&format!(
            "kept {run} (running: container {name} is running)"
        )),
        "{out}"
    );
    assert!(workspaces(&t, &run).join("slow").exists());
    assert!(list_line(&t, &run).contains("INTERRUPTED"));
    for c in containers() {
        e.rt.block_on(rascal_exec::exec::launch::docker::remove(
            &e.docker,
            &c.id.unwrap(),
        ))
        .unwrap();
    }
    // Once it is gone, the run is collected.
    let o = t.rascal(&["gc", "--older-than", "0s"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(!workspaces(&t, &run).exists(), "{}", stdout(&o));
}

#[test]
fn an_egress_network_left_behind_is_removed_with_its_run() {
    let Some(e) = common::docker::engine() else {
        return;
    };
    let agent = format!(
        "launcher: docker\nagents:\n  boxed: {{ runtime: command, image: \"{}\", command: [\"sh\", \"-c\", \"echo hi > hi.txt\"], network: {{ allow: [api.example.com] }} }}\n",
        common::docker::IMAGE
    );
    let t = TestRepo::new(&[(".rascal/config.yaml", &agent), ("README.md", "hello\n")]);
    let o = t.rascal(&["run", "x", "--agent", "boxed", "--headless"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let run = run_id(&stdout(&o));
    let net = rascal_exec::egress::network::network_name(&run);
    let exists = || e.rt.block_on(e.docker.inspect_network(&net, None)).is_ok();
    assert!(!exists(), "the run's end removed its network");
    // As if rascal had died mid-run: the network is still there.
    e.rt.block_on(rascal_exec::egress::network::ensure(
        &e.docker,
        &run,
        &t.path().to_string_lossy(),
    ))
    .unwrap();
    assert!(exists());
    backdate(&t, &run, 8);
    let o = t.rascal(&["gc"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(!exists(), "gc removed network {net}");
}
