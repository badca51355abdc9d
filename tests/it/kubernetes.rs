//! The kubernetes launcher and doctor against the in-process fake API
//! server (tests/common/kube_fake.rs): the exact requests (the Job's pod
//! security, the Secret, the NetworkPolicy, the exec tar streams, the log
//! follow, the foreground delete), the hostile result archive refused at
//! the trust boundary, reattach, cancel and timeout, and `rascal doctor`
//! for a kube context. No cluster is reachable on the build machines.

use crate::common;

use common::kube_fake::{FakeKube, Files, Phase, Recorded, CONTEXT};
use rascal_core::config::kubernetes::KubernetesConfig;
use rascal_core::config::{AgentConfig, RuntimeKind};
use rascal_exec::exec::launch::kubernetes::KubernetesLauncher;
use rascal_exec::exec::launch::{LaunchSpec, Launcher, Resume};
use rascal_exec::exec::runner::LogLine;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const NS: &str = "agents";

struct Setup {
    _dir: tempfile::TempDir,
    spec: LaunchSpec,
    outside: std::path::PathBuf,
}

fn setup(timeout: Duration) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("ws/claude");
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::write(work.join("src/lib.rs"), "pub fn a() {}\n").unwrap();
    std::fs::write(work.join("old.txt"), "to be deleted\n").unwrap();
    let instruction = dir.path().join("instruction.md");
    std::fs::write(&instruction, "Add b().\n").unwrap();
    let artifacts = dir.path().join("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let mut agent = AgentConfig::new(RuntimeKind::Command);
    agent.env = vec!["ANTHROPIC_API_KEY".into()];
    agent.cpus = Some(1.0);
    agent.memory = Some(rascal_core::config::container::ByteSize(512 << 20));
    let spec = LaunchSpec {
        run: "r-20261130-1a2b".into(),
        candidate: "claude".into(),
        workdir: work,
        argv: vec!["my-agent".into(), instruction.display().to_string()],
        env: vec![
            ("ANTHROPIC_API_KEY".into(), "sk-ant-secret-value".into()),
            ("PATH".into(), "/host/only/bin".into()),
            (
                "RASCAL_INSTRUCTION_FILE".into(),
                instruction.display().to_string(),
            ),
            (
                "RASCAL_ARTIFACTS_DIR".into(),
                artifacts.display().to_string(),
            ),
        ],
        stdin: Some(b"Add b().\n".to_vec()),
        timeout,
        image: Some("rascal-runner:test".into()),
        agent: Some(agent),
        repo: dir.path().join("repo"),
        resume: None,
        confine: None,
        upload: None,
    };
    Setup {
        _dir: dir,
        spec,
        outside,
    }
}

fn config() -> KubernetesConfig {
    KubernetesConfig {
        namespace: NS.into(),
        context: Some(CONTEXT.into()),
        ..Default::default()
    }
}

/// The agent of the fake pod: edits one file, adds one, deletes one.
fn edit(files: &mut Files) {
    files.insert(
        "workspace/src/lib.rs".into(),
        Some(b"pub fn a() {}\npub fn b() {}\n".to_vec()),
    );
    files.insert("workspace/NEW.md".into(), Some(b"new\n".to_vec()));
    files.remove("workspace/old.txt");
    files.insert(
        "artifacts/commit_message.txt".into(),
        Some(b"feat: add b\n".to_vec()),
    );
}

async fn launch(
    fake: &FakeKube,
    spec: LaunchSpec,
    cancel: CancellationToken,
) -> (
    Result<rascal_exec::exec::runner::Exit, rascal_exec::exec::launch::LaunchError>,
    Vec<LogLine>,
) {
    let launcher = KubernetesLauncher::new(config()).with_kubeconfig(fake.kubeconfig.clone());
    // The queue is bounded: read it while the launcher runs.
    let (tx, mut rx) = rascal_exec::exec::runner::log_channel();
    let collect = tokio::spawn(async move {
        let mut lines = Vec::new();
        while let Some(batch) = rx.recv().await {
            lines.extend(batch);
        }
        lines
    });
    let exit = tokio::time::timeout(Duration::from_secs(60), launcher.run(spec, tx, cancel))
        .await
        .expect("the launcher finished within 60s");
    (exit, collect.await.unwrap())
}

fn only(reqs: &[Recorded], method: &str, suffix: &str) -> Recorded {
    let found: Vec<&Recorded> = reqs
        .iter()
        .filter(|r| r.method == method && r.path.ends_with(suffix))
        .collect();
    assert_eq!(found.len(), 1, "{method} …{suffix}: {found:?}");
    found[0].clone()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

#[tokio::test]
async fn a_candidate_runs_as_one_hardened_job_and_its_result_comes_back() {
    let fake = FakeKube::start(NS).await;
    fake.with(|s| {
        s.agent = Box::new(edit);
        s.log_lines = vec!["thinking".into(), "wrote src/lib.rs".into()];
    });
    let set = setup(Duration::from_secs(1800));
    let (exit, lines) = launch(&fake, set.spec.clone(), CancellationToken::new()).await;
    let exit = exit.expect("the candidate ran");
    assert_eq!(exit.code, Some(0));
    assert!(!exit.timed_out && !exit.cancelled);

    // The order of what was asked: policy and secret before the Job.
    let trace = fake.trace();
    let job = "rascal-r-20261130-1a2b-claude";
    let first: Vec<&str> = trace.iter().take(5).map(String::as_str).collect();
    assert_eq!(
        first,
        [
            format!("POST /apis/networking.k8s.io/v1/namespaces/{NS}/networkpolicies").as_str(),
            format!("POST /api/v1/namespaces/{NS}/secrets").as_str(),
            format!("POST /apis/batch/v1/namespaces/{NS}/jobs").as_str(),
            format!(
                "PATCH /apis/networking.k8s.io/v1/namespaces/{NS}/networkpolicies/{job}-egress"
            )
            .as_str(),
            format!("PATCH /api/v1/namespaces/{NS}/secrets/{job}-env").as_str(),
        ],
        "{trace:#?}"
    );
    let execs: Vec<&String> = trace.iter().filter(|t| t.starts_with("EXEC")).collect();
    assert_eq!(
        execs,
        [
            "EXEC receive tar -x -f - -C /rascal",
            "EXEC receive touch /rascal-handoff/ready",
            "EXEC collect tar -c -f - -C /rascal workspace artifacts",
            "EXEC collect touch /rascal-done/now",
        ],
        "{trace:#?}"
    );

    let reqs = fake.requests();
    let created = only(&reqs, "POST", "/jobs").body.unwrap();
    let pod = &created["spec"]["template"]["spec"];
    let js = &created["spec"];
    assert_eq!(js["backoffLimit"], 0);
    assert_eq!(js["activeDeadlineSeconds"], 1800 + 600);
    assert_eq!(js["ttlSecondsAfterFinished"], 3600);
    assert_eq!(pod["restartPolicy"], "Never");
    assert_eq!(pod["automountServiceAccountToken"], false);
    assert_eq!(pod["enableServiceLinks"], false);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    let containers: Vec<&Value> = pod["initContainers"]
        .as_array()
        .unwrap()
        .iter()
        .chain(pod["containers"].as_array().unwrap())
        .collect();
    assert_eq!(containers.len(), 3);
    for c in &containers {
        let sc = &c["securityContext"];
        assert_eq!(sc["allowPrivilegeEscalation"], false, "{}", c["name"]);
        assert_eq!(sc["readOnlyRootFilesystem"], true, "{}", c["name"]);
        assert_eq!(sc["runAsNonRoot"], true);
        assert_eq!(sc["privileged"], false);
        assert_eq!(sc["capabilities"]["drop"], serde_json::json!(["ALL"]));
        assert!(sc["capabilities"].get("add").is_none());
        assert_eq!(sc["seccompProfile"]["type"], "RuntimeDefault");
        assert!(c["resources"]["limits"]["cpu"].is_string());
        assert!(c["resources"]["limits"]["memory"].is_string());
    }
    let agent = &pod["containers"][0];
    assert_eq!(agent["name"], "agent");
    assert_eq!(agent["image"], "rascal-runner:test");
    assert_eq!(agent["resources"]["limits"]["cpu"], "1");
    assert_eq!(
        agent["resources"]["limits"]["memory"],
        (512u64 << 20).to_string()
    );
    for key in [
        "rascal.run",
        "rascal.candidate",
        "rascal.repo",
        "rascal.version",
    ] {
        assert!(
            created["metadata"]["labels"][key].is_string(),
            "label {key}"
        );
        assert_eq!(
            created["metadata"]["labels"][key],
            js["template"]["metadata"]["labels"][key]
        );
    }
    // The credential is in the Secret only.
    let text = created.to_string();
    assert!(
        !text.contains("sk-ant-secret-value"),
        "credential in the Job"
    );
    assert!(!text.contains("/host/only/bin"), "host PATH in the Job");
    let secret = only(&reqs, "POST", "/secrets").body.unwrap();
    assert_eq!(
        secret["data"]["ANTHROPIC_API_KEY"],
        "c2stYW50LXNlY3JldC12YWx1ZQ=="
    );
    let owner = only(&reqs, "PATCH", "-env").body.unwrap();
    assert_eq!(
        owner["metadata"]["ownerReferences"][0]["uid"],
        format!("job-uid-{job}")
    );
    // Egress: default deny, nothing allowed out.
    let policy = only(&reqs, "POST", "/networkpolicies").body.unwrap();
    assert_eq!(
        policy["spec"]["policyTypes"],
        serde_json::json!(["Ingress", "Egress"])
    );
    assert_eq!(policy["spec"]["egress"], serde_json::json!([]));
    assert_eq!(
        policy["spec"]["podSelector"]["matchLabels"]["rascal.candidate"],
        "claude"
    );

    // The workspace went in as a tar over exec stdin, closed with v5 CLOSE.
    let tar_in = reqs
        .iter()
        .find(|r| {
            r.path.ends_with("/exec")
                && r.q("command").first().map(String::as_str) == Some("tar")
                && r.q("container") == ["receive"]
        })
        .unwrap();
    assert_eq!(tar_in.protocol.as_deref(), Some("v5.channel.k8s.io"));
    assert!(
        tar_in.stdin_closed,
        "stdin was not closed with a CLOSE frame"
    );
    let received = fake.with(|s| s.received[job].clone());
    assert_eq!(
        received["workspace/src/lib.rs"].as_deref(),
        Some(&b"pub fn a() {}\n"[..])
    );
    assert_eq!(received["stdin"].as_deref(), Some(&b"Add b().\n"[..]));
    assert_eq!(
        received["instruction.md"].as_deref(),
        Some(&b"Add b().\n"[..])
    );
    assert!(received.contains_key("artifacts"));

    // The log was followed, then read whole once the agent had ended.
    let logs: Vec<&Recorded> = reqs.iter().filter(|r| r.path.ends_with("/log")).collect();
    assert_eq!(logs.len(), 2, "{trace:#?}");
    assert_eq!(logs[0].q("follow"), ["true"]);
    assert!(
        logs[1].q("follow").iter().all(|f| f == "false"),
        "{:?}",
        logs[1]
    );
    assert!(logs.iter().all(|l| l.q("container") == ["agent"]));
    assert_eq!(
        lines.iter().filter(|l| l.text == "thinking").count(),
        1,
        "a line was sent twice"
    );
    let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
    assert!(
        texts.contains(&"thinking") && texts.contains(&"wrote src/lib.rs"),
        "{texts:?}"
    );

    // The result is the worktree now: edited, added, deleted.
    let work = &set.spec.workdir;
    assert_eq!(
        read(&work.join("src/lib.rs")),
        "pub fn a() {}\npub fn b() {}\n"
    );
    assert_eq!(read(&work.join("NEW.md")), "new\n");
    assert!(!work.join("old.txt").exists());
    let artifacts = set
        .spec
        .env
        .iter()
        .find(|(k, _)| k == "RASCAL_ARTIFACTS_DIR")
        .unwrap()
        .1
        .clone();
    assert_eq!(
        read(&Path::new(&artifacts).join("commit_message.txt")),
        "feat: add b\n"
    );
    assert_eq!(fake.with(|s| s.phase[job]), Phase::Done);

    // Released: the Job is deleted with foreground propagation.
    let launcher = KubernetesLauncher::new(config()).with_kubeconfig(fake.kubeconfig.clone());
    launcher
        .release(
            &set.spec.run,
            &set.spec.candidate,
            set.spec.agent.as_ref().unwrap(),
        )
        .await;
    let del = only(&fake.requests(), "DELETE", &format!("/jobs/{job}"));
    assert_eq!(del.body.unwrap()["propagationPolicy"], "Foreground");
}

fn hostile(build: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    build(&mut b);
    b.into_inner().unwrap()
}

fn raw_entry(
    b: &mut tar::Builder<Vec<u8>>,
    kind: tar::EntryType,
    name: &str,
    link: &str,
    data: &[u8],
) {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_size(data.len() as u64);
    h.set_mode(0o644);
    h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
    h.as_old_mut().linkname[..link.len()].copy_from_slice(link.as_bytes());
    h.set_cksum();
    b.append(&h, data).unwrap();
}

#[tokio::test]
async fn a_hostile_result_archive_is_refused_and_nothing_is_applied() {
    let set = setup(Duration::from_secs(600));
    let outside = set.outside.display().to_string();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "dotdot",
            hostile(|b| {
                raw_entry(
                    b,
                    tar::EntryType::Regular,
                    "workspace/../../outside/x",
                    "",
                    b"x",
                )
            }),
        ),
        (
            "symlink then write through it",
            hostile(|b| {
                raw_entry(b, tar::EntryType::Symlink, "workspace/esc", &outside, b"");
                raw_entry(b, tar::EntryType::Regular, "workspace/esc/x", "", b"x");
            }),
        ),
        (
            "device",
            hostile(|b| raw_entry(b, tar::EntryType::Block, "workspace/sda", "", b"")),
        ),
        (
            "workspace is a symlink",
            hostile(|b| raw_entry(b, tar::EntryType::Symlink, "workspace", &outside, b"")),
        ),
    ];
    for (what, bytes) in cases {
        let fake = FakeKube::start(NS).await;
        fake.with(|s| s.hostile_result = Some(bytes));
        let (exit, _) = launch(&fake, set.spec.clone(), CancellationToken::new()).await;
        let e = exit.expect_err(what).to_string();
        assert!(
            e.contains("refused") || e.contains("not a directory"),
            "{what}: {e}"
        );
        assert_eq!(
            read(&set.spec.workdir.join("src/lib.rs")),
            "pub fn a() {}\n",
            "{what}: the worktree changed"
        );
        assert!(set.spec.workdir.join("old.txt").exists(), "{what}");
        assert_eq!(
            std::fs::read_dir(&set.outside).unwrap().count(),
            0,
            "{what}: wrote outside"
        );
        // A refused result ends the pod: the Job is deleted.
        assert!(
            fake.trace().iter().any(|t| t.starts_with("DELETE")),
            "{what}"
        );
    }
}

#[tokio::test]
async fn cancel_deletes_the_job_with_foreground_propagation() {
    let fake = FakeKube::start(NS).await;
    fake.with(|s| {
        s.hang = true;
        s.log_lines = vec!["working".into()];
    });
    let set = setup(Duration::from_secs(600));
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let fake_state = fake.state.clone();
    tokio::spawn(async move {
        // Cancel once the agent runs (its log line is out).
        crate::common::wait::until_async(
            "the agent's log is read",
            Duration::from_secs(60),
            || {
                fake_state
                    .lock()
                    .unwrap()
                    .requests
                    .iter()
                    .any(|r| r.path.ends_with("/log"))
            },
        )
        .await;
        c.cancel();
    });
    let (exit, _) = launch(&fake, set.spec.clone(), cancel).await;
    let exit = exit.unwrap();
    assert!(exit.cancelled);
    let del = only(
        &fake.requests(),
        "DELETE",
        "/jobs/rascal-r-20261130-1a2b-claude",
    );
    assert_eq!(del.body.unwrap()["propagationPolicy"], "Foreground");
    assert!(
        !fake.trace().iter().any(|t| t.contains("tar -c")),
        "a cancelled candidate's result was fetched"
    );
}

#[tokio::test]
async fn timeout_deletes_the_job_and_says_so() {
    let fake = FakeKube::start(NS).await;
    fake.with(|s| s.hang = true);
    let set = setup(Duration::from_millis(1500));
    let (exit, _) = launch(&fake, set.spec.clone(), CancellationToken::new()).await;
    let exit = exit.unwrap();
    assert!(exit.timed_out);
    assert!(exit.failure.unwrap().contains("timed out"));
    only(
        &fake.requests(),
        "DELETE",
        "/jobs/rascal-r-20261130-1a2b-claude",
    );
}

#[tokio::test]
async fn reattach_follows_the_log_from_where_the_journal_stopped() {
    let fake = FakeKube::start(NS).await;
    let set = setup(Duration::from_secs(600));
    // A first rascal started the candidate, then died.
    fake.with(|s| {
        s.agent = Box::new(edit);
        s.log_lines = vec!["one".into(), "two".into(), "three".into(), "four".into()];
        s.hang = true;
    });
    let launcher = KubernetesLauncher::new(config()).with_kubeconfig(fake.kubeconfig.clone());
    let (tx, _rx) = rascal_exec::exec::runner::log_channel();
    let first = tokio::spawn({
        let spec = set.spec.clone();
        async move { launcher.run(spec, tx, CancellationToken::new()).await }
    });
    // Wait until the agent runs, then kill the first rascal.
    crate::common::wait::until_async("the agent's pod runs", Duration::from_secs(60), || {
        fake.with(|s| s.phase.values().any(|p| *p == Phase::Running))
    })
    .await;
    first.abort();
    let _ = first.await;
    // The agent ends; the next log stream breaks after three lines.
    fake.with(|s| {
        s.hang = false;
        s.break_log_after = Some(3);
        for p in s.phase.values_mut() {
            *p = Phase::Finished;
        }
    });
    let created = fake.with(|s| s.requests.iter().filter(|r| r.method == "POST").count());

    let mut spec = set.spec.clone();
    spec.resume = Some(Resume {
        stdout_lines: 2,
        stderr_lines: 0,
    });
    let (exit, lines) = launch(&fake, spec, CancellationToken::new()).await;
    assert_eq!(exit.unwrap().code, Some(0));
    let out: Vec<&str> = lines
        .iter()
        .filter(|l| l.stream == rascal_exec::exec::runner::Stream::Stdout)
        .map(|l| l.text.as_str())
        .collect();
    // Journalled lines are not sent again, across a broken stream too.
    assert_eq!(out, ["three", "four"]);
    let posts = fake.with(|s| s.requests.iter().filter(|r| r.method == "POST").count());
    assert_eq!(posts, created, "a reattach created objects");
    let tar_ins = fake.trace().iter().filter(|t| t.contains("tar -x")).count();
    assert_eq!(tar_ins, 1, "the workspace was sent twice");
    assert_eq!(read(&set.spec.workdir.join("NEW.md")), "new\n");
}

#[tokio::test]
async fn a_pod_that_cannot_start_fails_with_the_reason() {
    let fake = FakeKube::start(NS).await;
    fake.with(|s| s.stuck = Some("ImagePullBackOff".into()));
    let set = setup(Duration::from_secs(600));
    let (exit, _) = launch(&fake, set.spec.clone(), CancellationToken::new()).await;
    let e = exit.unwrap_err().to_string();
    assert!(e.contains("ImagePullBackOff") && e.contains("hint:"), "{e}");
    only(
        &fake.requests(),
        "DELETE",
        "/jobs/rascal-r-20261130-1a2b-claude",
    );
}

#[tokio::test]
async fn a_leftover_job_name_is_a_clear_error() {
    let fake = FakeKube::start(NS).await;
    let set = setup(Duration::from_secs(600));
    fake.with(|s| {
        s.jobs.insert(
            "rascal-r-20261130-1a2b-claude".into(),
            serde_json::json!({}),
        );
    });
    let (exit, _) = launch(&fake, set.spec.clone(), CancellationToken::new()).await;
    let e = exit.unwrap_err().to_string();
    assert!(e.contains("rascal doctor --remove"), "{e}");
    // What was created before the refusal is not left behind.
    let trace = fake.trace();
    assert!(
        trace
            .iter()
            .any(|t| t.starts_with("DELETE") && t.ends_with("-egress")),
        "{trace:#?}"
    );
    assert!(
        trace
            .iter()
            .any(|t| t.starts_with("DELETE") && t.ends_with("-env")),
        "{trace:#?}"
    );
}

const ALL: &[&str] = &[
    "create jobs",
    "get jobs",
    "list jobs",
    "delete jobs",
    "list pods",
    "get pods/log",
    "create pods/exec",
    "get pods/exec",
    "create secrets",
    "patch secrets",
    "create networkpolicies",
    "patch networkpolicies",
];

fn leftover(name: &str, run: &str, repo: &Path) -> Value {
    let label = rascal_exec::exec::launch::kubernetes::spec::repo_label(repo);
    serde_json::json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": NS,
            "labels": {"rascal.run": run, "rascal.candidate": "claude", "rascal.repo": label, "rascal.version": "0.1.0"},
            "annotations": {"rascal.dev/repo-path": repo.display().to_string(), "rascal.dev/run": run, "rascal.dev/candidate": "claude"}},
        "spec": {"template": {"spec": {"containers": []}}},
        "status": {"active": 1}
    })
}

#[tokio::test]
async fn doctor_checks_context_namespace_permissions_and_leftover_jobs() {
    let fake = FakeKube::start(NS).await;
    let repo = common::TestRepo::new(&[("a.txt", "a\n")]);
    let store_dir = tempfile::tempdir().unwrap();
    let store = rascal_engine::store::Store::open(&store_dir.path().join("rascal.db")).unwrap();
    fake.with(|s| {
        s.allowed = ALL.iter().map(|s| s.to_string()).collect();
        s.leftovers = vec![
            leftover("rascal-r-gone-claude", "r-gone", repo.path()),
            leftover("rascal-r-other-claude", "r-other", Path::new("/elsewhere")),
        ];
    });
    let d = rascal_engine::doctor::diagnose_kubernetes(
        &store,
        repo.path(),
        &config(),
        Some(&fake.kubeconfig),
        false,
    )
    .await;
    let text = d.lines.join("\n");
    println!("{text}");
    assert!(
        text.contains(&format!("context {CONTEXT} at http://{}", fake.addr)),
        "{text}"
    );
    assert!(text.contains("v1.33.1-fake"));
    assert!(text.contains(&format!("namespace {NS}: present")));
    assert!(text.contains("may create jobs, get jobs"), "{text}");
    assert!(
        text.contains("orphan: Job rascal-r-gone-claude (active) of run r-gone"),
        "{text}"
    );
    assert!(
        !text.contains("r-other"),
        "another repository's Job was listed"
    );
    assert_eq!(d.exit_code, 1, "an orphan is unhealthy");
    // Each permission was asked as a SelfSubjectAccessReview in the namespace.
    let reviews: Vec<Value> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("selfsubjectaccessreviews"))
        .map(|r| r.body.unwrap())
        .collect();
    assert_eq!(reviews.len(), ALL.len());
    let exec = reviews
        .iter()
        .find(|r| {
            r["spec"]["resourceAttributes"]["subresource"] == "exec"
                && r["spec"]["resourceAttributes"]["verb"] == "create"
        })
        .expect("pods/exec asked");
    assert_eq!(exec["spec"]["resourceAttributes"]["namespace"], NS);

    // --remove deletes it, foreground.
    let d = rascal_engine::doctor::diagnose_kubernetes(
        &store,
        repo.path(),
        &config(),
        Some(&fake.kubeconfig),
        true,
    )
    .await;
    assert!(
        d.lines
            .join("\n")
            .contains("removed Job rascal-r-gone-claude"),
        "{:?}",
        d.lines
    );
    let del = only(&fake.requests(), "DELETE", "/jobs/rascal-r-gone-claude");
    assert_eq!(del.body.unwrap()["propagationPolicy"], "Foreground");
    assert_eq!(d.exit_code, 0, "{:?}", d.lines);
}

#[tokio::test]
async fn doctor_names_each_missing_permission_and_a_missing_namespace() {
    let fake = FakeKube::start("other").await;
    fake.with(|s| s.allowed = ["create jobs".to_string()].into_iter().collect());
    let store_dir = tempfile::tempdir().unwrap();
    let store = rascal_engine::store::Store::open(&store_dir.path().join("rascal.db")).unwrap();
    let d = rascal_engine::doctor::diagnose_kubernetes(
        &store,
        Path::new("/r"),
        &config(),
        Some(&fake.kubeconfig),
        false,
    )
    .await;
    let text = d.lines.join("\n");
    assert_eq!(d.exit_code, 1);
    assert!(
        text.contains(&format!("namespace {NS} does not exist")),
        "{text}"
    );
    assert!(text.contains("may NOT create pods/exec"), "{text}");
    assert!(!text.contains("may NOT create jobs"), "{text}");
    assert!(text.contains("docs/kubernetes.md"), "{text}");
}

#[tokio::test]
async fn an_unknown_context_says_which_contexts_there_are() {
    let fake = FakeKube::start(NS).await;
    let k = KubernetesConfig {
        context: Some("prod".into()),
        ..config()
    };
    let store_dir = tempfile::tempdir().unwrap();
    let store = rascal_engine::store::Store::open(&store_dir.path().join("rascal.db")).unwrap();
    let d = rascal_engine::doctor::diagnose_kubernetes(
        &store,
        Path::new("/r"),
        &k,
        Some(&fake.kubeconfig),
        false,
    )
    .await;
    let text = d.lines.join("\n");
    assert_eq!(d.exit_code, 1);
    assert!(
        text.contains("context `prod` is not in the kubeconfig") && text.contains(CONTEXT),
        "{text}"
    );
    assert!(fake.requests().is_empty(), "asked the server anyway");
}

/// Run the rascal binary in `dir` with `KUBECONFIG` pointing at the fake,
/// off the runtime's threads (the fake keeps serving meanwhile).
async fn rascal_with(dir: &Path, kubeconfig: &Path, args: &[&str]) -> std::process::Output {
    let (dir, kc) = (dir.to_path_buf(), kubeconfig.to_path_buf());
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(common::bin())
            .args(&args)
            .current_dir(&dir)
            .env("NO_COLOR", "1")
            .env("KUBECONFIG", &kc)
            .output()
            .expect("running rascal")
    })
    .await
    .unwrap()
}

const KUBE_CONFIG: &str = "launcher: kubernetes\nkubernetes: { namespace: agents }\nagents:\n  echo: { runtime: command, image: \"runner:1\", command: [\"sh\", \"-c\", \"echo hi\"] }\nstrategy: { mode: single, agents: [echo] }\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rascal_doctor_reports_on_the_kube_context() {
    let fake = FakeKube::start(NS).await;
    let repo = common::TestRepo::new(&[(".rascal/config.yaml", KUBE_CONFIG), ("a.txt", "a\n")]);
    fake.with(|s| {
        s.allowed = ALL.iter().map(|s| s.to_string()).collect();
        s.leftovers = vec![leftover("rascal-r-gone-echo", "r-gone", repo.path())];
    });
    let o = rascal_with(repo.path(), &fake.kubeconfig, &["doctor"]).await;
    let out = common::stdout(&o);
    println!("$ rascal doctor\n{out}{}", common::stderr(&o));
    assert!(
        out.contains(&format!(
            "kubernetes: context {CONTEXT} at http://{}",
            fake.addr
        )),
        "{out}"
    );
    assert!(
        out.contains("kubernetes: namespace agents: present"),
        "{out}"
    );
    assert!(out.contains("may create jobs"), "{out}");
    assert!(out.contains("orphan: Job rascal-r-gone-echo"), "{out}");
    assert!(
        out.contains("image runner:1"),
        "the agent's image is named: {out}"
    );
    assert_eq!(common::code(&o), 1, "an orphan Job is unhealthy: {out}");
    // The docker engine is not asked about under the kubernetes launcher.
    assert!(!out.contains("docker:"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_headless_run_on_kubernetes_records_the_agent_and_its_change() {
    let fake = FakeKube::start(NS).await;
    let repo = common::TestRepo::new(&[(".rascal/config.yaml", KUBE_CONFIG), ("a.txt", "a\n")]);
    fake.with(|s| {
        s.log_lines = vec!["hi from the pod".into()];
        s.agent = Box::new(|f: &mut Files| {
            f.insert("workspace/a.txt".into(), Some(b"a\nb\n".to_vec()));
        });
    });
    let o = rascal_with(
        repo.path(),
        &fake.kubeconfig,
        &["run", "add b", "--headless", "--json"],
    )
    .await;
    let out = common::stdout(&o);
    let err = common::stderr(&o);
    assert_eq!(common::code(&o), 0, "{out}\n{err}");
    let trace = fake.trace();
    assert!(
        trace
            .iter()
            .any(|t| t.starts_with("POST /apis/batch/v1/namespaces/agents/jobs")),
        "{trace:#?}"
    );
    // The same records as any run: the launcher, the log, the change.
    let doc: Value = serde_json::from_str(&out).expect("--json prints one document");
    let id = doc["run"].as_str().expect("the run's id").to_string();
    let shown = common::stdout(&common::rascal_in(repo.path(), &["show", &id]));
    println!("$ rascal show {id}\n{shown}");
    assert!(
        shown.contains("kubernetes"),
        "launcher not recorded: {shown}"
    );
    let log = std::fs::read_to_string(
        repo.path()
            .join(format!(".git/rascal/runs/{id}/echo/agent.log")),
    )
    .unwrap_or_default();
    assert!(
        log.contains("hi from the pod") || shown.contains("hi from the pod"),
        "log not recorded: {shown}\n{log}"
    );
    assert!(
        shown.contains("verdict PASS · 1 file, 1 line changed"),
        "the change: {shown}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.files().join(format!("workspaces/{id}/echo/a.txt"))).unwrap(),
        "a\nb\n",
        "the pod's result is the candidate's worktree"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rascal_attach_resumes_a_kubernetes_run_whose_rascal_was_killed() {
    let fake = FakeKube::start(NS).await;
    let repo = common::TestRepo::new(&[(".rascal/config.yaml", KUBE_CONFIG), ("a.txt", "a\n")]);
    let first: Vec<String> = (1..=5).map(|i| format!("line {i}")).collect();
    fake.with(|s| {
        s.hang = true;
        s.log_lines = first.clone();
        s.agent = Box::new(|f: &mut Files| {
            f.insert("workspace/a.txt".into(), Some(b"a\nb\n".to_vec()));
        });
    });
    let mut child = std::process::Command::new(common::bin())
        .args(["run", "add b", "--headless"])
        .current_dir(repo.path())
        .env("KUBECONFIG", &fake.kubeconfig)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill rascal once its journal holds the agent's lines.
    let deadline = std::time::Instant::now() + Duration::from_secs(240);
    let run = loop {
        let list = common::stdout(&common::rascal_in(repo.path(), &["list"]));
        let id = list
            .lines()
            .nth(1)
            .and_then(|l| l.split_whitespace().next())
            .map(String::from);
        if let Some(id) = id {
            let shown = common::stdout(&common::rascal_in(repo.path(), &["show", &id]));
            if shown.contains("line 5") {
                break id;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "run never logged: {list}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    child.kill().unwrap(); // SIGKILL: no cleanup at all
    child.wait().unwrap();
    // Meanwhile the agent goes on, writes three more lines and ends.
    fake.with(|s| {
        s.hang = false;
        s.log_lines = (1..=8).map(|i| format!("line {i}")).collect();
        for p in s.phase.values_mut() {
            *p = Phase::Finished;
        }
    });
    let o = rascal_with(repo.path(), &fake.kubeconfig, &["attach", &run]).await;
    let out = common::stdout(&o);
    assert_eq!(common::code(&o), 0, "{out}{}", common::stderr(&o));
    assert!(out.contains("verdict PASS"), "{out}");
    let shown = common::stdout(&common::rascal_in(repo.path(), &["show", &run]));
    for i in 1..=8 {
        assert_eq!(
            shown.matches(&format!("│ line {i}\n")).count(),
            1,
            "line {i} is not there exactly once: {shown}"
        );
    }
    assert!(shown.contains("1 file, 1 line changed"), "{shown}");
    // Created once, not again by the attach.
    let jobs = fake
        .trace()
        .iter()
        .filter(|t| t.starts_with("POST /apis/batch/v1"))
        .count();
    assert_eq!(jobs, 1);
}

/// Figures for the README, not a test of speed (no assertion on time):
/// `cargo test --release --test it kubernetes:: -- --ignored --nocapture figures`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn figures() {
    fn median(mut v: Vec<Duration>) -> (Duration, Duration, Duration) {
        v.sort();
        (v[v.len() / 2], v[0], v[v.len() - 1])
    }
    for (files, size) in [(10usize, 1024usize), (2000, 4096)] {
        let mut took = Vec::new();
        for _ in 0..10 {
            let fake = FakeKube::start(NS).await;
            fake.with(|s| s.agent = Box::new(edit));
            let set = setup(Duration::from_secs(600));
            for i in 0..files {
                let p = set.spec.workdir.join(format!("d{}/f{i}.txt", i % 50));
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, vec![b'x'; size]).unwrap();
            }
            let t = std::time::Instant::now();
            let (exit, _) = launch(&fake, set.spec.clone(), CancellationToken::new()).await;
            took.push(t.elapsed());
            assert_eq!(exit.unwrap().code, Some(0));
        }
        let (m, lo, hi) = median(took);
        println!(
            "{files} files x {size} B: launch to result applied, median of 10 {m:?} ({lo:?} – {hi:?})"
        );
    }
}

// ---- Verification commands of a kubernetes candidate: a Job each ----

/// A kubernetes candidate's change, ready for its checks: a repository
/// whose base holds a held-out test, the candidate's workspace with the
/// agent's edit and an ignored build output (in the live workspace, not
/// in the change), and the change's tree.
struct KubeChange {
    _repo: common::TestRepo,
    _files: tempfile::TempDir,
    changes: rascal_core::model::changeset::ChangeSet,
    place: rascal_exec::exec::place::Place,
}

const CHECK_JOB: &str = "rascal-r-20261130-1a2b-claude-check-0";

fn kube_change(fake: &FakeKube) -> KubeChange {
    use rascal_exec::exec::place::{Backend, Contained, Place, Sandboxed};
    use std::sync::Arc;
    let repo = common::TestRepo::new(&[
        (".gitignore", "build/\n"),
        ("src/lib.rs", "pub fn a() {}\n"),
        ("tests/hidden.rs", "#[test] fn secretly() {}\n"),
    ]);
    let base = repo.head();
    let git = git2::Repository::open(repo.path()).unwrap();
    let holdout =
        rascal_exec::git::holdout::Holdout::resolve(&git, base, &["tests/hidden.rs".into()])
            .unwrap();
    let files = tempfile::tempdir().unwrap();
    let ws = rascal_exec::git::workspace::create_workspace(
        &git,
        base,
        &files.path().join("ws/claude"),
        &holdout,
    )
    .unwrap();
    // The agent's edit, and a build output the change does not hold.
    std::fs::write(ws.join("src/lib.rs"), "pub fn a() {}\npub fn b() {}\n").unwrap();
    std::fs::create_dir_all(ws.join("build")).unwrap();
    std::fs::write(ws.join("build/junk.txt"), "live workspace only\n").unwrap();
    let mut changes = rascal_exec::git::workspace::changeset(repo.path(), &ws, base).unwrap();
    holdout.leave_out(&mut changes);
    changes.tree = rascal_exec::git::tree::write_change_tree(repo.path(), &ws, base, &changes)
        .unwrap()
        .to_string();
    let mut agent = AgentConfig::new(RuntimeKind::Command);
    agent.env = vec!["ANTHROPIC_API_KEY".into()];
    agent.cpus = Some(1.0);
    agent.memory = Some(rascal_core::config::container::ByteSize(512 << 20));
    let copy = Sandboxed {
        origin: repo.path().to_path_buf(),
        workspace: ws,
        tree: changes.tree.clone(),
        run_tree: None,
        scratch: files.path().join("checks"),
        cache: None,
        hide: Vec::new(),
        confined: false,
        holdout: Arc::new(holdout),
        with_holdout: false,
        limits: Default::default(),
    };
    let launcher = KubernetesLauncher::new(config()).with_kubeconfig(fake.kubeconfig.clone());
    let place = Place::Container(Arc::new(Contained {
        copy,
        run: "r-20261130-1a2b".into(),
        candidate: "claude".into(),
        image: "rascal-runner:test".into(),
        agent,
        seq: Default::default(),
        attempt: 1,
        backend: Backend::Kubernetes(Arc::new(launcher)),
    }));
    KubeChange {
        _repo: repo,
        _files: files,
        changes,
        place,
    }
}

/// Run `command` at `place` (bounded), its lines gathered.
async fn run_check(
    place: &rascal_exec::exec::place::Place,
    command: &str,
    env: &[String],
    files: &[String],
    timeout: Duration,
    cancel: CancellationToken,
) -> (
    Result<(rascal_exec::exec::runner::Outcome, Vec<Option<Vec<u8>>>), rascal_exec::Error>,
    Vec<String>,
) {
    let (tx, mut rx) = rascal_exec::exec::runner::log_channel();
    let gather = tokio::spawn(async move {
        let mut lines = Vec::new();
        while let Some(batch) = rx.recv().await {
            lines.extend(batch.into_iter().map(|l| l.text));
        }
        lines
    });
    let spec = rascal_exec::exec::runner::CommandSpec::shell(
        command,
        place.files().to_path_buf(),
        timeout,
    );
    let result = tokio::time::timeout(
        Duration::from_secs(60),
        place.run_reading(spec, env, false, Some(tx), &cancel, files),
    )
    .await
    .expect("the check finished within 60s");
    (result, gather.await.unwrap())
}

fn check_job_created(fake: &FakeKube) -> Value {
    let posts: Vec<Value> = fake
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/jobs"))
        .map(|r| r.body.unwrap())
        .collect();
    assert_eq!(posts.len(), 1, "{posts:#?}");
    posts[0].clone()
}

#[tokio::test]
async fn a_kube_candidates_check_runs_as_a_second_job_on_its_change() {
    let fake = FakeKube::start(NS).await;
    fake.with(|s| {
        s.check = Box::new(|f: &mut Files| {
            f.insert(
                "workspace/results.xml".into(),
                Some(b"<testsuite tests=\"1\"/>".to_vec()),
            );
        });
        s.check_log_lines = vec!["running 1 test".into(), "test b ... ok".into()];
    });
    let k = kube_change(&fake);
    // A variable the check names: its own Secret, by reference.
    std::env::set_var("RASCAL_KUBE_CHECK_TOKEN", "check-token-value");
    let (result, lines) = run_check(
        &k.place,
        "cargo test",
        &["RASCAL_KUBE_CHECK_TOKEN".into()],
        &["results.xml".into(), "missing.xml".into()],
        Duration::from_secs(300),
        CancellationToken::new(),
    )
    .await;
    let (outcome, read) = result.expect("the check ran");
    assert_eq!(outcome.exit.code, Some(0), "{outcome:?}");
    assert!(outcome.exit.success());
    // Its output streamed into the check's lines.
    assert!(lines.iter().any(|l| l == "test b ... ok"), "{lines:?}");
    assert!(outcome.tail.contains("test b ... ok"));
    // The file the check reads back came out of `collect`; a missing one
    // reads as absent.
    assert_eq!(
        read,
        vec![Some(b"<testsuite tests=\"1\"/>".to_vec()), None],
        "{:#?}",
        fake.trace()
    );

    // The second Job: the agent's pod security, labelled as a check of
    // `claude`, never its credentials Secret, the command.
    let job = check_job_created(&fake);
    assert_eq!(job["metadata"]["name"], CHECK_JOB);
    let labels = &job["metadata"]["labels"];
    assert_eq!(labels["rascal.check-of"], "claude");
    assert_eq!(labels["rascal.check"], "0");
    assert_eq!(labels["rascal.run"], "r-20261130-1a2b");
    assert!(labels.get("rascal.candidate").is_none(), "{labels}");
    assert_eq!(job["spec"]["template"]["metadata"]["labels"], *labels);
    assert_eq!(job["spec"]["backoffLimit"], 0);
    assert_eq!(job["spec"]["activeDeadlineSeconds"], 300 + 600);
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["automountServiceAccountToken"], false);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    let containers: Vec<&Value> = pod["initContainers"]
        .as_array()
        .unwrap()
        .iter()
        .chain(pod["containers"].as_array().unwrap())
        .collect();
    assert_eq!(containers.len(), 3);
    for c in &containers {
        let sc = &c["securityContext"];
        assert_eq!(sc["allowPrivilegeEscalation"], false, "{}", c["name"]);
        assert_eq!(sc["readOnlyRootFilesystem"], true, "{}", c["name"]);
        assert_eq!(sc["runAsNonRoot"], true);
        assert_eq!(sc["privileged"], false);
        assert_eq!(sc["capabilities"]["drop"], serde_json::json!(["ALL"]));
        assert_eq!(sc["seccompProfile"]["type"], "RuntimeDefault");
        assert!(c["resources"]["limits"]["memory"].is_string());
    }
    let main = &pod["containers"][0];
    assert_eq!(main["name"], "check");
    assert_eq!(main["image"], "rascal-runner:test");
    assert_eq!(main["workingDir"], "/workspace");
    let cmd: Vec<&str> = main["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(cmd[cmd.len() - 3..], ["sh", "-c", "cargo test"], "{cmd:?}");
    assert_eq!(
        main["resources"]["limits"]["memory"],
        (512u64 << 20).to_string()
    );
    let text = job.to_string();
    assert!(
        !text.contains("ANTHROPIC_API_KEY"),
        "the agent's credential: {text}"
    );
    assert!(
        !text.contains("\"rascal-r-20261130-1a2b-claude-env\""),
        "the agent's Secret: {text}"
    );
    assert!(
        !text.contains("check-token-value"),
        "a value in the Job: {text}"
    );
    let token = main["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "RASCAL_KUBE_CHECK_TOKEN")
        .expect("the named variable");
    assert_eq!(
        token["valueFrom"]["secretKeyRef"]["name"],
        format!("{CHECK_JOB}-env")
    );
    let reqs = fake.requests();
    let secret = only(&reqs, "POST", "/secrets").body.unwrap();
    assert_eq!(secret["metadata"]["name"], format!("{CHECK_JOB}-env"));
    assert_eq!(
        secret["data"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["RASCAL_KUBE_CHECK_TOKEN"]
    );
    // Network off: its own default-deny policy, selecting its pod only.
    let policy = only(&reqs, "POST", "/networkpolicies").body.unwrap();
    assert_eq!(policy["spec"]["egress"], serde_json::json!([]));
    assert_eq!(
        policy["spec"]["policyTypes"],
        serde_json::json!(["Ingress", "Egress"])
    );
    let sel = &policy["spec"]["podSelector"]["matchLabels"];
    assert_eq!(sel["rascal.check-of"], "claude");
    assert_eq!(sel["rascal.check"], "0");
    assert!(sel.get("rascal.candidate").is_none());

    // What went in: the change (the agent's edit), never the live
    // workspace (no build output, no .git), never a held-out test.
    let got = fake.with(|s| s.received[CHECK_JOB].clone());
    assert_eq!(
        got["workspace/src/lib.rs"].as_deref(),
        Some(&b"pub fn a() {}\npub fn b() {}\n"[..])
    );
    assert!(got.contains_key("workspace/.gitignore"));
    for absent in [
        "workspace/tests/hidden.rs",
        "workspace/build/junk.txt",
        "workspace/.git",
    ] {
        assert!(
            !got.keys()
                .any(|p| p == absent || p.starts_with(&format!("{absent}/"))),
            "{absent} went in: {:?}",
            got.keys().collect::<Vec<_>>()
        );
    }
    let trace = fake.trace();
    let execs: Vec<&String> = trace.iter().filter(|t| t.starts_with("EXEC")).collect();
    assert_eq!(
        execs,
        [
            "EXEC receive tar -x -f - -C /rascal",
            "EXEC receive touch /rascal-handoff/ready",
            "EXEC collect tar -c -f - -C /rascal/workspace ./results.xml",
            "EXEC collect tar -c -f - -C /rascal/workspace ./missing.xml",
            "EXEC collect touch /rascal-done/now",
        ],
        "{trace:#?}"
    );
    // The log of its `check` container was followed.
    assert!(reqs
        .iter()
        .filter(|r| r.path.ends_with("/log"))
        .all(|r| r.q("container") == ["check"]));
    // Deleted afterwards, foreground.
    let del = only(&reqs, "DELETE", &format!("/jobs/{CHECK_JOB}"));
    assert_eq!(del.body.unwrap()["propagationPolicy"], "Foreground");
}

fn guardrail(yaml: &str) -> rascal_core::config::Guardrail {
    serde_yaml::from_str(yaml).unwrap()
}

#[tokio::test]
async fn the_check_jobs_exit_code_decides_the_guardrail() {
    for (code, status) in [(0, "pass"), (1, "fail")] {
        let fake = FakeKube::start(NS).await;
        fake.with(|s| {
            s.check_exit_code = code;
            s.check_log_lines = vec![format!("tests exit {code}")];
        });
        let k = kube_change(&fake);
        let g = guardrail("{ name: test, command: \"./run-tests\", timeout: 60s }");
        let r = rascal_engine::layers::run_command(
            &g,
            &k.changes,
            &k.place,
            "digest",
            false,
            &CancellationToken::new(),
        )
        .await;
        let shown = serde_json::to_value(&r).unwrap();
        assert_eq!(shown["status"], status, "{shown:#}");
        assert_eq!(r.exit_code, Some(code));
        assert!(
            r.output.contains(&format!("tests exit {code}")),
            "{shown:#}"
        );
        assert_eq!(
            check_job_created(&fake)["metadata"]["labels"]["rascal.check-of"],
            "claude"
        );
        only(&fake.requests(), "DELETE", &format!("/jobs/{CHECK_JOB}"));
    }
}

#[tokio::test]
async fn a_check_job_that_cannot_run_fails_the_check_never_passes_it() {
    let g = guardrail("{ name: test, command: \"./run-tests\", timeout: 3s }");
    // (what the fake does, what the report must say)
    type Setup = fn(&mut common::kube_fake::State);
    let cases: Vec<(&str, Setup, &str)> = vec![
        (
            "the Job is refused",
            |s| s.refuse_check_jobs = Some(403),
            "could not create the Job of check 0 of candidate `claude`",
        ),
        (
            "the image cannot be pulled",
            |s| s.check_stuck = Some("ErrImagePull".into()),
            "ErrImagePull",
        ),
        (
            "the pod is never scheduled",
            |s| s.check_unschedulable = true,
            "never started the `check` container",
        ),
    ];
    for (what, setup, says) in cases {
        let fake = FakeKube::start(NS).await;
        fake.with(setup);
        let k = kube_change(&fake);
        let r = rascal_engine::layers::run_command(
            &g,
            &k.changes,
            &k.place,
            "digest",
            false,
            &CancellationToken::new(),
        )
        .await;
        let shown = serde_json::to_value(&r).unwrap();
        assert_eq!(shown["status"], "fail", "{what}: {shown:#}");
        assert!(
            shown["errored"].as_str().unwrap_or("").contains(says),
            "{what}: {shown:#}"
        );
        // Nothing is left behind: a created Job is deleted.
        let created = fake
            .requests()
            .iter()
            .any(|r| r.method == "POST" && r.path.ends_with("/jobs"));
        let deleted = fake
            .trace()
            .iter()
            .any(|t| t.starts_with("DELETE") && t.contains(CHECK_JOB));
        assert!(
            deleted || what == "the Job is refused",
            "{what}: {:#?}",
            fake.trace()
        );
        assert!(created);
    }
}

#[tokio::test]
async fn a_cancelled_check_deletes_its_job() {
    let fake = FakeKube::start(NS).await;
    fake.with(|s| s.check_unschedulable = true);
    let k = kube_change(&fake);
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let state = fake.state.clone();
    tokio::spawn(async move {
        // Cancel once the Job exists.
        crate::common::wait::until_async("the check's Job exists", Duration::from_secs(60), || {
            state.lock().unwrap().jobs.contains_key(CHECK_JOB)
        })
        .await;
        c.cancel();
    });
    let (result, _) = run_check(
        &k.place,
        "./run-tests",
        &[],
        &[],
        Duration::from_secs(600),
        cancel,
    )
    .await;
    let (outcome, _) = result.unwrap();
    assert!(outcome.exit.cancelled);
    let del = only(&fake.requests(), "DELETE", &format!("/jobs/{CHECK_JOB}"));
    assert_eq!(del.body.unwrap()["propagationPolicy"], "Foreground");
}

#[tokio::test]
async fn a_where_local_check_of_a_kube_candidate_creates_no_job() {
    let fake = FakeKube::start(NS).await;
    let k = kube_change(&fake);
    match k.place.local() {
        Ok(local) => {
            let (result, lines) = run_check(
                &local,
                "grep -q 'pub fn b' src/lib.rs && test ! -e tests/hidden.rs && echo checked-here",
                &[],
                &[],
                Duration::from_secs(60),
                CancellationToken::new(),
            )
            .await;
            let (outcome, _) = result.unwrap();
            assert_eq!(outcome.exit.code, Some(0), "{lines:?}");
            assert!(lines.iter().any(|l| l == "checked-here"), "{lines:?}");
        }
        // Without bubblewrap it is an error, never an unconfined run.
        Err(e) => assert!(e.to_string().contains("bubblewrap"), "{e}"),
    }
    assert!(fake.requests().is_empty(), "{:#?}", fake.trace());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_headless_kube_run_checks_the_change_in_a_second_job_whose_exit_decides() {
    let fake = FakeKube::start(NS).await;
    let repo = common::TestRepo::new(&[
        (".rascal/config.yaml", KUBE_CONFIG),
        (
            ".rascal/guardrails.yaml",
            "guardrails:\n  - { name: test, command: \"./run-tests\", timeout: 60s }\n",
        ),
        ("a.txt", "a\n"),
    ]);
    fake.with(|s| {
        s.agent = Box::new(|f: &mut Files| {
            f.insert("workspace/a.txt".into(), Some(b"a\nb\n".to_vec()));
        });
        s.check_log_lines = vec!["all tests passed".into()];
    });
    // `./run-tests` is the test run by its name, but rascal cannot read its
    // results: a pass is a warning that says so.
    for (code, exit, verdict) in [(0, 0, "warn"), (1, 1, "fail")] {
        fake.with(|s| {
            s.check_exit_code = code;
            s.requests.clear();
        });
        let o = rascal_with(
            repo.path(),
            &fake.kubeconfig,
            &["run", "add b", "--headless", "--json"],
        )
        .await;
        let out = common::stdout(&o);
        assert_eq!(common::code(&o), exit, "{out}\n{}", common::stderr(&o));
        let doc: Value = serde_json::from_str(&out).unwrap();
        let c = &doc["candidates"][0];
        assert_eq!(c["verdict"], verdict, "{c:#}");
        let test = c["reports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["check"] == "test")
            .expect("the test guardrail's report");
        assert_eq!(test["exit_code"], code, "{test:#}");
        // Two Jobs: the agent's, then the check's, labelled as a check of
        // candidate `echo`; the check's is deleted.
        let jobs: Vec<Value> = fake
            .requests()
            .into_iter()
            .filter(|r| r.method == "POST" && r.path.ends_with("/jobs"))
            .map(|r| r.body.unwrap())
            .collect();
        assert_eq!(jobs.len(), 2, "{:#?}", fake.trace());
        assert_eq!(jobs[0]["metadata"]["labels"]["rascal.candidate"], "echo");
        assert_eq!(jobs[1]["metadata"]["labels"]["rascal.check-of"], "echo");
        let check = jobs[1]["metadata"]["name"].as_str().unwrap().to_string();
        let received = fake.with(|s| s.received[&check].clone());
        assert_eq!(
            received["workspace/a.txt"].as_deref(),
            Some(&b"a\nb\n"[..]),
            "the check got the change"
        );
        assert!(
            fake.trace()
                .iter()
                .any(|t| t == &format!("DELETE /apis/batch/v1/namespaces/{NS}/jobs/{check}")),
            "{:#?}",
            fake.trace()
        );
    }
}
