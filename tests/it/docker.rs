//! The docker launcher against a real engine: scripted shell agents in a
//! tiny image built here (FROM scratch + Debian's static busybox, through
//! the engine's classic builder; nothing is ever pulled). Without an engine
//! these tests skip with a printed reason, unless RASCAL_REQUIRE_DOCKER is
//! set (CI), where a missing engine is a failure.

use crate::common;
use bollard::models::ContainerSummary;
use bollard::Docker;
use common::docker::{engine, Engine, IMAGE};
use common::{code, stderr, stdout, TestRepo};
use futures::StreamExt;
use rascal_exec::exec::launch::docker as rdocker;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

impl Engine {
    /// Rascal's containers of candidate `candidate` of the repository `t`.
    fn containers_of(&self, t: &TestRepo, candidate: &str) -> Vec<ContainerSummary> {
        let all = self
            .rt
            .block_on(rdocker::list_rascal_containers(&self.docker, None))
            .unwrap();
        let here = t.path().to_string_lossy().into_owned();
        all.into_iter()
            .filter(|c| {
                let l = c.labels.clone().unwrap_or_default();
                l.get(rdocker::LABEL_CANDIDATE).map(String::as_str) == Some(candidate)
                    && l.get(rdocker::LABEL_REPO)
                        .is_some_and(|r| r.trim_end_matches('/') == here.trim_end_matches('/'))
            })
            .collect()
    }

    fn wait_running(&self, t: &TestRepo, candidate: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(c) = self
                .containers_of(t, candidate)
                .into_iter()
                .find(|c| c.state.map(|s| s.to_string()) == Some("running".into()))
            {
                return c.id.unwrap();
            }
            assert!(
                Instant::now() < deadline,
                "container of {candidate} never ran"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn repo(agents: &str) -> TestRepo {
    TestRepo::new(&[
        (
            ".rascal/config.yaml",
            &format!("launcher: docker\nagents:\n{agents}"),
        ),
        ("README.md", "hello\n"),
    ])
}

/// One busybox agent line for .rascal/config.yaml.
fn agent(name: &str, script: &str, extra: &str) -> String {
    format!(
        "  {name}: {{ runtime: command, image: \"{IMAGE}\", command: [\"sh\", \"-c\", {}], network: none{extra} }}\n",
        serde_json::to_string(script).unwrap()
    )
}

fn run_id(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("rascal run "))
        .and_then(|l| l.split_whitespace().next())
        .expect("run id in output")
        .to_string()
}

/// Whether a line `[candidate] what…` was printed.
fn says(out: &str, candidate: &str, what: &str) -> bool {
    out.lines().any(|l| {
        l.strip_prefix('[')
            .and_then(|l| l.split_once("] "))
            .is_some_and(|(tag, rest)| tag.trim_end() == candidate && rest.starts_with(what))
    })
}

/// The log texts printed for `candidate` on `bar` (│ stdout, ┃ stderr).
fn logs(out: &str, candidate: &str, bar: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            // `[tag] │ text`, the tag padded to the widest candidate id.
            let (tag, rest) = l.strip_prefix('[')?.split_once("] ")?;
            if tag.trim_end() != candidate {
                return None;
            }
            rest.strip_prefix(bar)?
                .strip_prefix(' ')
                .map(str::to_string)
        })
        .collect()
}

/// The time (seconds since boot, the host's clock: containers share it)
/// an agent wrote to `name` in its workspace.
fn stamp(ws: &std::path::Path, name: &str) -> f64 {
    let text = std::fs::read_to_string(ws.join(name)).unwrap();
    let first = text.split_whitespace().next().unwrap_or_default();
    first
        .parse()
        .unwrap_or_else(|e| panic!("{name}: {text:?}: {e}"))
}

/// Two docker candidates run at once (each one's interval, from the
/// times it wrote when it began and ended, intersects the other's), each
/// one's stdout and stderr lines in order, the instruction on stdin and
/// as a file, files owned by the host user, containers removed.
#[test]
fn two_candidates_run_in_parallel_with_logs_in_order_per_candidate() {
    let Some(e) = engine() else { return };
    // Each stays up a couple of seconds after its lines: long enough that
    // two launched together overlap, while one after the other never do.
    let script = "cat /proc/uptime > began; for i in $(seq 1 30); do echo \"$RASCAL_AGENT out $i\"; echo \"$RASCAL_AGENT err $i\" >&2; sleep 0.02; done; cat > from-stdin.txt; cat \"$RASCAL_INSTRUCTION_FILE\" > from-file.txt; sleep 2; cat /proc/uptime > ended";
    // Two at once whatever the machine's cores (the default is one a core).
    let t = repo(&(agent("alpha", script, "") + &agent("beta", script, "")));
    t.write(
        ".rascal/config.yaml",
        &format!(
            "strategy: {{ max_parallel: 2 }}\nlauncher: docker\nagents:\n{}{}",
            agent("alpha", script, ""),
            agent("beta", script, "")
        ),
    );
    t.commit_all("two at once");
    let o = t.rascal(&[
        "run",
        "write the instruction down",
        "--agent",
        "alpha,beta",
        "--headless",
    ]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(out.contains("launcher docker"), "{out}");
    for c in ["alpha", "beta"] {
        assert!(says(&out, c, "verdict PASS"), "{out}");
        let want_out: Vec<String> = (1..=30).map(|i| format!("{c} out {i}")).collect();
        let want_err: Vec<String> = (1..=30).map(|i| format!("{c} err {i}")).collect();
        assert_eq!(
            logs(&out, c, "│"),
            want_out,
            "stdout of {c} in order: {out}"
        );
        assert_eq!(
            logs(&out, c, "┃"),
            want_err,
            "stderr of {c} in order: {out}"
        );
        // The instruction reached the agent on stdin and as a mounted file,
        // and files it wrote belong to the host user.
        let wt = t.files().join("workspaces").join(run_id(&out)).join(c);
        for f in ["from-stdin.txt", "from-file.txt"] {
            let p = wt.join(f);
            assert_eq!(
                std::fs::read_to_string(&p).unwrap(),
                "write the instruction down",
                "{f}"
            );
            use std::os::unix::fs::MetadataExt;
            // SAFETY: getuid cannot fail.
            assert_eq!(
                std::fs::metadata(&p).unwrap().uid(),
                rascal_exec::exec::os::uid_gid().0
            );
        }
        // The full log is in the run directory.
        let log = std::fs::read_to_string(
            t.files()
                .join("runs")
                .join(run_id(&out))
                .join(c)
                .join("agent.log"),
        )
        .unwrap();
        assert_eq!(log.lines().count(), 60, "{log}");
        // Removed once its logs and exit code were recorded.
        assert!(
            e.containers_of(&t, c).is_empty(),
            "container of {c} left behind"
        );
    }
    // They overlapped: each began before the other ended.
    let span = |c: &str| {
        let ws = t.files().join("workspaces").join(run_id(&out)).join(c);
        (stamp(&ws, "began"), stamp(&ws, "ended"))
    };
    let (a, b) = (span("alpha"), span("beta"));
    assert!(
        a.0 <= b.1 && b.0 <= a.1,
        "alpha ran {a:?} and beta {b:?} (seconds since boot): one after the other"
    );
}

#[test]
fn running_candidate_is_hardened_as_docker_inspect_shows_then_cancel_stops_it() {
    let Some(e) = engine() else { return };
    let t = repo(&agent(
        "hard",
        "echo ready; sleep 300",
        ", memory: 64m, cpus: 0.5, pids: 64",
    ));
    let child = Command::new(common::bin())
        .args(["run", "x", "--agent", "hard", "--headless"])
        .current_dir(t.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let id = e.wait_running(&t, "hard");
    let info =
        e.rt.block_on(e.docker.inspect_container(&id, None))
            .unwrap();
    let hc = info.host_config.unwrap();
    assert_eq!(hc.cap_drop, Some(vec!["ALL".to_string()]));
    assert!(hc
        .security_opt
        .unwrap_or_default()
        .contains(&"no-new-privileges".to_string()),);
    assert_eq!(hc.memory, Some(64 << 20));
    assert_eq!(hc.nano_cpus, Some(500_000_000));
    assert_eq!(hc.pids_limit, Some(64));
    assert_eq!(hc.network_mode.as_deref(), Some("none"));
    assert_eq!(hc.readonly_rootfs, Some(true));
    assert!(hc.tmpfs.unwrap_or_default().contains_key("/tmp"));
    let config = info.config.unwrap();
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = rascal_exec::exec::os::uid_gid();
    let user = format!("{uid}:{gid}");
    assert_eq!(config.user.as_deref(), Some(user.as_str()));
    assert_eq!(config.working_dir.as_deref(), Some("/workspace"));
    let labels = config.labels.unwrap();
    for l in [
        rdocker::LABEL_RUN,
        rdocker::LABEL_CANDIDATE,
        rdocker::LABEL_REPO,
        rdocker::LABEL_VERSION,
    ] {
        assert!(labels.contains_key(l), "label {l}: {labels:?}");
    }
    assert!(labels[rdocker::LABEL_RUN].starts_with("r-"));
    let mounts = info.mounts.unwrap_or_default();
    assert!(mounts
        .iter()
        .any(|m| m.destination.as_deref() == Some("/workspace") && m.rw == Some(true)));

    // Cancel (Ctrl-C): the container is stopped, recorded, and removed.
    // SAFETY: signalling our own child.
    rascal_exec::exec::os::signal(child.id() as i32, libc::SIGINT);
    let o = child.wait_with_output().unwrap();
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(out.contains("agent cancelled"), "{out}");
    assert!(
        e.containers_of(&t, "hard").is_empty(),
        "container left behind"
    );
}

#[test]
fn timeout_kills_a_sleeping_agent_and_removes_its_container() {
    let Some(e) = engine() else { return };
    let t = repo(&agent("sleepy", "echo going to sleep; sleep 300", ""));
    let o = t.rascal(&[
        "run",
        "x",
        "--agent",
        "sleepy",
        "--headless",
        "--timeout",
        "2s",
    ]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(out.contains("going to sleep"), "{out}");
    assert!(out.contains("agent timed out after 2.0s"), "{out}");
    assert!(e.containers_of(&t, "sleepy").is_empty());
}

#[test]
fn oom_killed_agent_is_reported_as_such_with_the_limit() {
    let Some(_e) = engine() else { return };
    let t = repo(&agent(
        "greedy",
        "echo eating; x=$(head -c 200000000 /dev/zero | tr '\\000' x); echo survived",
        ", memory: 8m",
    ));
    let o = t.rascal(&["run", "x", "--agent", "greedy", "--headless"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(out.contains("OOM-killed"), "{out}");
    assert!(out.contains("8.0 MiB"), "names the limit: {out}");
    assert_eq!(logs(&out, "greedy", "│"), vec!["eating"], "{out}");
}

/// A missing image is found before the run starts (issue 53): the run is
/// refused (exit 2, nothing recorded), naming the image and how to build
/// it — as the README promises for an agent that cannot work — instead of
/// that candidate failing at launch.
#[test]
fn a_missing_image_refuses_the_run_up_front_with_how_to_build_it() {
    let Some(_e) = engine() else { return };
    let missing = "  ghost: { runtime: command, image: \"rascal-test-no-such-image:404\", command: [\"sh\", \"-c\", \"true\"] }\n";
    let t = repo(&(missing.to_string() + &agent("fine", "echo ok > ok.txt", "")));
    let o = t.rascal(&["run", "x", "--agent", "ghost,fine", "--headless"]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(code(&o), 2, "{err}{}", stdout(&o));
    assert!(
        err.contains(
            "agent `ghost`: image `rascal-test-no-such-image:404` is not on the Docker engine"
        ),
        "{err}"
    );
    assert!(
        err.contains("docker build -t rascal-test-no-such-image:404"),
        "{err}"
    );
    assert!(!err.contains("agent `fine`"), "{err}");
    // Nothing was recorded.
    assert!(
        !stdout(&t.rascal(&["list"])).contains("r-"),
        "a run was recorded"
    );
    // The agent whose image is there runs.
    let o = t.rascal(&["run", "x", "--agent", "fine", "--headless"]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
}

#[test]
fn attach_after_rascal_is_killed_resumes_logs_without_loss_and_records_the_result() {
    let Some(e) = engine() else { return };
    let t = repo(&agent(
        "slow",
        "for i in $(seq 1 40); do echo \"line $i\"; sleep 0.1; done; echo done > result.txt",
        "",
    ));
    let mut child = common::spawn_rascal(t.path(), &["run", "x", "--agent", "slow", "--headless"]);
    // Kill rascal once some lines have landed in the journal.
    let deadline = Instant::now() + Duration::from_secs(240);
    let run = loop {
        let list = stdout(&t.rascal(&["list"]));
        if let Some(id) = list
            .lines()
            .nth(1)
            .and_then(|l| l.split_whitespace().next())
        {
            let shown = stdout(&t.rascal(&["show", id]));
            if shown.contains("line 5") {
                break id.to_string();
            }
        }
        assert!(Instant::now() < deadline, "run never logged: {list}");
        std::thread::sleep(Duration::from_millis(50));
    };
    child.kill().unwrap(); // SIGKILL: no cleanup at all
    child.wait().unwrap();
    assert!(
        !e.containers_of(&t, "slow").is_empty(),
        "the container outlives rascal"
    );
    let o = t.rascal(&["attach", &run]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(out.contains("reattached"), "{out}");
    assert!(out.contains("verdict PASS"), "{out}");

    // Every line exactly once, in order, in the record.
    let shown = stdout(&t.rascal(&["show", &run]));
    let lines = logs(&shown, "slow", "│");
    let want: Vec<String> = (1..=40).map(|i| format!("line {i}")).collect();
    assert_eq!(lines, want, "{shown}");
    let doc: serde_json::Value =
        serde_json::from_str(&stdout(&t.rascal(&["show", &run, "--json"]))).unwrap();
    assert_eq!(doc["status"], "finished");
    assert_eq!(doc["candidates"][0]["verdict"], "pass");
    assert!(
        e.containers_of(&t, "slow").is_empty(),
        "removed after recording"
    );
}

#[test]
fn doctor_reports_and_removes_containers_of_runs_the_store_does_not_have() {
    let Some(e) = engine() else { return };
    let t = repo(&agent("fine", "echo ok > ok.txt", ""));
    // A container as a vanished run would have left it.
    let repo_label = t.path().to_string_lossy().into_owned() + "/";
    let labels = std::collections::HashMap::from([
        (
            rdocker::LABEL_RUN.to_string(),
            "r-19700101-dead".to_string(),
        ),
        (rdocker::LABEL_CANDIDATE.to_string(), "fine".to_string()),
        (rdocker::LABEL_REPO.to_string(), repo_label),
        (rdocker::LABEL_VERSION.to_string(), "0".to_string()),
    ]);
    e.rt.block_on(e.docker.create_container(
        None,
        bollard::models::ContainerCreateBody {
            image: Some(IMAGE.into()),
            cmd: Some(vec!["true".into()]),
            labels: Some(labels),
            ..Default::default()
        },
    ))
    .unwrap();
    let o = t.rascal(&["doctor"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(out.contains("API 1."), "engine version: {out}");
    assert!(
        out.contains("orphan") && out.contains("r-19700101-dead"),
        "{out}"
    );
    assert!(out.contains("rascal doctor --remove"), "{out}");
    let o = t.rascal(&["doctor", "--remove"]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert!(stdout(&o).contains("removed container"));
    assert!(e.containers_of(&t, "fine").is_empty());
}

/// Start-to-first-log-line latency, median of 20, through the launcher and
/// through `docker run`. A measurement, not a test: run it with
/// `cargo test --test it docker:: -- --ignored --nocapture latency`.
#[test]
#[ignore]
fn latency_start_to_first_log_line() {
    use rascal_exec::exec::launch::{LaunchSpec, Launcher};
    let Some(e) = engine() else { return };
    let dir = tempfile::tempdir().unwrap();
    let launcher = rdocker::DockerLauncher::new();
    let mut ours = Vec::new();
    for i in 0..20 {
        let spec = LaunchSpec {
            run: format!("r-latency-{}", std::process::id()),
            candidate: format!("c{i}"),
            workdir: dir.path().to_path_buf(),
            argv: vec!["echo".into(), "first".into()],
            env: Vec::new(),
            stdin: None,
            timeout: Duration::from_secs(60),
            image: Some(IMAGE.into()),
            agent: None,
            repo: dir.path().to_path_buf(),
            resume: None,
            confine: None,
            upload: None,
        };
        let (tx, mut rx) = rascal_exec::exec::runner::log_channel();
        let cancel = tokio_util::sync::CancellationToken::new();
        let took = e.rt.block_on(async {
            let t0 = Instant::now();
            let run = launcher.run(spec.clone(), tx, cancel);
            tokio::pin!(run);
            let mut first = None;
            loop {
                tokio::select! {
                    l = rx.recv(), if first.is_none() => {
                        if l.is_some() { first = Some(t0.elapsed()); }
                    }
                    r = &mut run => { r.unwrap(); break; }
                }
            }
            let agent: rascal_core::config::AgentConfig =
                serde_yaml::from_str("{runtime: command, command: [echo]}").unwrap();
            launcher.release(&spec.run, &spec.candidate, &agent).await;
            first.expect("a first line")
        });
        ours.push(took);
    }
    let mut cli = Vec::new();
    for _ in 0..20 {
        let t0 = Instant::now();
        let mut c = Command::new("docker")
            .args(["run", "--rm", "--network", "none", IMAGE, "echo", "first"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Read;
        let mut b = [0u8; 1];
        c.stdout.as_mut().unwrap().read_exact(&mut b).unwrap();
        cli.push(t0.elapsed());
        c.wait().unwrap();
    }
    ours.sort();
    cli.sort();
    println!(
        "start-to-first-log-line, median of 20: rascal docker launcher {:?} (min {:?}, max {:?}); docker run {:?} (min {:?}, max {:?})",
        ours[10], ours[0], ours[19], cli[10], cli[0], cli[19]
    );
}

#[test]
fn keep_containers_keeps_the_exited_container_for_debugging() {
    let Some(e) = engine() else { return };
    let t = repo(&agent(
        "kept",
        "echo hi > hi.txt",
        ", keep_containers: true",
    ));
    let o = t.rascal(&["run", "x", "--agent", "kept", "--headless"]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let left = e.containers_of(&t, "kept");
    assert_eq!(left.len(), 1, "kept");
    let doctor = stdout(&t.rascal(&["doctor"]));
    assert!(doctor.contains("of finished run"), "{doctor}");
    for c in left {
        e.rt.block_on(rdocker::remove(&e.docker, &c.id.unwrap()))
            .unwrap();
    }
}

// These need no engine: they check what happens without one.

#[test]
fn launcher_flag_overrides_the_config_and_no_engine_refuses_the_run_clearly() {
    let t = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            &format!("launcher: process\nagents:\n{}", agent("a", "true", "")),
        ),
        ("README.md", "hello\n"),
    ]);
    let o = Command::new(common::bin())
        .args([
            "run",
            "x",
            "--agent",
            "a",
            "--headless",
            "--launcher",
            "docker",
        ])
        .current_dir(t.path())
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .output()
        .unwrap();
    // Refused before anything starts (exit 2, nothing recorded): the
    // agent's image cannot be looked for without an engine.
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}{}", stdout(&o));
    assert!(
        err.contains("no Docker engine answered at unix:///nonexistent/docker.sock"),
        "{err}"
    );
    assert!(err.contains("--launcher process"), "says what to do: {err}");
    let o = t.rascal(&["run", "x", "--launcher", "kubernetes"]);
    assert_eq!(code(&o), 2);
}

#[test]
fn attach_refuses_runs_of_the_process_launcher_and_finished_runs() {
    let t = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            "agents:\n  w: { runtime: scripted, steps: [{ do: write, path: b.txt, content: \"b\\n\" }] }\n  stuck: { runtime: command, command: [sh, -c, \"echo thinking; exec sleep 20\"] }\n",
        ),
        ("README.md", "hello\n"),
    ]);
    let o = t.rascal(&["run", "x", "--agent", "w", "--headless"]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let run = run_id(&stdout(&o));
    let o = t.rascal(&["attach", &run]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("already finished"), "{}", stderr(&o));
    let o = t.rascal(&["attach", "r-00000000-0000"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("no run `r-00000000-0000`"),
        "{}",
        stderr(&o)
    );

    // A process run killed mid-way: its agent is orphaned (and ends by
    // itself within 20 s); there is nothing to reattach.
    let mut child = common::spawn_rascal(t.path(), &["run", "x", "--agent", "stuck", "--headless"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    let run = loop {
        let list = stdout(&t.rascal(&["list"]));
        if let Some(l) = list.lines().find(|l| l.contains("running")) {
            break l.split_whitespace().next().unwrap().to_string();
        }
        assert!(Instant::now() < deadline, "run never started: {list}");
        std::thread::sleep(Duration::from_millis(50));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let o = t.rascal(&["attach", &run]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("used the `process` launcher"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn docker_settings_are_validated_with_the_agent_named() {
    let t = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            &format!(
                "launcher: docker\nagents:\n{}",
                agent("tiny", "true", ", memory: 1m")
            ),
        ),
        ("README.md", "hello\n"),
    ]);
    let o = t.rascal(&["run", "x", "--agent", "tiny", "--headless"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("agent `tiny`: `memory: 1.0 MiB` is below Docker's minimum"),
        "{}",
        stderr(&o)
    );
    let t = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            &format!("agents:\n{}", agent("odd", "true", ", memory: 12 parsecs")),
        ),
        ("README.md", "hello\n"),
    ]);
    let o = t.rascal(&["run", "x", "--agent", "odd", "--headless"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains(".rascal/config.yaml") && stderr(&o).contains("unknown unit"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn attach_without_an_engine_leaves_the_run_for_later() {
    let Some(e) = engine() else { return };
    let t = repo(&agent(
        "slow",
        "for i in $(seq 1 30); do echo \"line $i\"; sleep 0.1; done; echo done > result.txt",
        "",
    ));
    let mut child = common::spawn_rascal(t.path(), &["run", "x", "--agent", "slow", "--headless"]);
    e.wait_running(&t, "slow");
    let run = common::wait_for_running_run(&t, 30);
    child.kill().unwrap();
    child.wait().unwrap();
    let o = Command::new(common::bin())
        .args(["attach", &run])
        .current_dir(t.path())
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("cannot attach to run")
            && stderr(&o).contains("no Docker engine answered"),
        "{}",
        stderr(&o)
    );
    let list = stdout(&t.rascal(&["list"]));
    assert!(list.contains("interrupted"), "{list}");
    // With the engine back, the attach records the result.
    let o = t.rascal(&["attach", &run]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let shown = stdout(&t.rascal(&["show", &run]));
    let want: Vec<String> = (1..=30).map(|i| format!("line {i}")).collect();
    assert_eq!(logs(&shown, "slow", "│"), want, "{shown}");
}

#[test]
fn network_is_bridge_by_default_and_can_be_a_named_network() {
    let Some(e) = engine() else { return };
    let net = format!("rascal-test-net-{}", std::process::id());
    e.rt.block_on(
        e.docker
            .create_network(bollard::models::NetworkCreateRequest {
                name: net.clone(),
                ..Default::default()
            }),
    )
    .unwrap();
    let cfg = format!(
        "  plain: {{ runtime: command, image: \"{IMAGE}\", command: [\"sh\", \"-c\", \"echo a > a.txt\"], keep_containers: true }}\n  named: {{ runtime: command, image: \"{IMAGE}\", command: [\"sh\", \"-c\", \"echo b > b.txt\"], network: {net}, keep_containers: true }}\n"
    );
    let t = repo(&cfg);
    let o = t.rascal(&["run", "x", "--agent", "plain,named", "--headless"]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    for (c, want) in [("plain", "bridge"), ("named", net.as_str())] {
        let kept = e.containers_of(&t, c);
        assert_eq!(kept.len(), 1);
        let id = kept[0].id.clone().unwrap();
        let info =
            e.rt.block_on(e.docker.inspect_container(&id, None))
                .unwrap();
        assert_eq!(
            info.host_config.unwrap().network_mode.as_deref(),
            Some(want),
            "{c}"
        );
        e.rt.block_on(rdocker::remove(&e.docker, &id)).unwrap();
    }
    e.rt.block_on(e.docker.remove_network(&net)).unwrap();
}

#[test]
fn attach_keeps_the_original_deadline() {
    let Some(e) = engine() else { return };
    let t = repo(&agent("sleepy", "echo zzz; sleep 300", ""));
    let mut child = common::spawn_rascal(
        t.path(),
        &[
            "run",
            "x",
            "--agent",
            "sleepy",
            "--headless",
            "--timeout",
            "4s",
        ],
    );
    e.wait_running(&t, "sleepy");
    let run = common::wait_for_running_run(&t, 30);
    child.kill().unwrap();
    child.wait().unwrap();
    // The 4 s given to the first rascal still hold, not the config's 30m.
    let o = t.rascal(&["attach", &run]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(out.contains("agent timed out after 4.0s"), "{out}");
    assert!(e.containers_of(&t, "sleepy").is_empty());
}

const CLAUDE_IMAGE: &str = "rascal-test-claude-standin:1";
const SECRET: &str = "sk-ant-api03-DOCKERfakeCREDENTIAL0123456789abcdef";

/// The busybox image plus a stand-in `claude` on PATH that reports its argv
/// and stdin, makes a change, and replays the recorded Claude Code stream.
async fn build_claude_standin(docker: &Docker) -> Result<(), String> {
    let script = b"#!/bin/sh\necho \"standin argv: $*\"\necho \"standin stdin: $(cat)\"\necho \"debug: key $ANTHROPIC_API_KEY\"\nmkdir -p src && printf 'pub fn health() -> u16 { 200 }\\n' > src/health.rs\ncat /fixtures/claude.jsonl\n";
    let stream = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("crates/exec/tests/fixtures/streams/claude.jsonl"),
    )
    .map_err(|e| e.to_string())?;
    let dockerfile = format!(
        "FROM {IMAGE}\nCOPY claude /bin/claude\nCOPY claude.jsonl /fixtures/claude.jsonl\n"
    );
    let mut tar = tar::Builder::new(Vec::new());
    for (name, bytes, mode) in [
        ("Dockerfile", dockerfile.as_bytes(), 0o644),
        ("claude", &script[..], 0o755),
        ("claude.jsonl", &stream[..], 0o644),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(mode);
        h.set_cksum();
        tar.append_data(&mut h, name, bytes)
            .map_err(|e| e.to_string())?;
    }
    let opts = bollard::query_parameters::BuildImageOptionsBuilder::default()
        .dockerfile("Dockerfile")
        .t(CLAUDE_IMAGE)
        .rm(true)
        .version(bollard::query_parameters::BuilderVersion::BuilderV1)
        .build();
    let body = tar.into_inner().map_err(|e| e.to_string())?;
    let mut s = docker.build_image(opts, None, Some(bollard::body_full(body.into())));
    while let Some(item) = s.next().await {
        let info = item.map_err(|e| format!("building {CLAUDE_IMAGE}: {e}"))?;
        if let Some(e) = info.error_detail.and_then(|d| d.message) {
            return Err(format!("building {CLAUDE_IMAGE}: {e}"));
        }
    }
    Ok(())
}

#[test]
fn claude_runtime_in_a_container_skips_prompts_parses_its_stream_and_redacts_the_key() {
    let Some(e) = engine() else { return };
    e.rt.block_on(build_claude_standin(&e.docker)).unwrap();
    let t = repo(&format!(
        "  cc: {{ runtime: claude, image: \"{CLAUDE_IMAGE}\", env: [ANTHROPIC_API_KEY], network: none }}\n"
    ));
    let o = Command::new(common::bin())
        .args([
            "run",
            "Add a /health endpoint",
            "--agent",
            "cc",
            "--headless",
        ])
        .current_dir(t.path())
        .env("ANTHROPIC_API_KEY", SECRET)
        .output()
        .unwrap();
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    // Inside a container the agent may skip its own permission prompts.
    let argv = logs(&out, "cc", "│")
        .into_iter()
        .find(|l| l.starts_with("standin argv:"))
        .expect(&out);
    assert!(
        argv.contains("-p --output-format stream-json --verbose --dangerously-skip-permissions"),
        "{argv}"
    );
    assert!(
        says(&out, "cc", "│ standin stdin: Add a /health endpoint"),
        "{out}"
    );
    for want in [
        "▸ Edit src/health.rs",
        "■ done: Added /health returning 200 and a test.",
        "$0.0123",
        "debug: key [redacted]",
    ] {
        assert!(out.contains(want), "missing {want:?} in:\n{out}");
    }
    assert!(!out.contains(SECRET), "the credential reached the screen");
    let db = std::fs::read(t.path().join(".git/rascal/rascal.db")).unwrap();
    assert!(
        !String::from_utf8_lossy(&db).contains(SECRET),
        "the credential reached the store"
    );
}

#[test]
fn guardrail_commands_of_a_docker_candidate_run_in_a_fresh_container_on_a_copy() {
    let Some(e) = engine() else { return };
    let t = TestRepo::new(&[
        (
            ".rascal/config.yaml",
            &format!(
                "launcher: docker\nagents:\n{}",
                agent("c", "echo new > new.txt", "")
            ),
        ),
        (
            ".rascal/guardrails.yaml",
            "guardrails:\n  - { name: where, command: \"test -f /.dockerenv && test -f new.txt && echo in-a-container && env && touch made-by-check\" }\n  - { name: fresh, command: \"test ! -e made-by-check\" }\n",
        ),
        ("README.md", "hello\n"),
    ]);
    let secret = format!("hostile-secret-{}", std::process::id());
    let o = Command::new(common::bin())
        .args(["run", "x", "--agent", "c", "--json"])
        .current_dir(t.path())
        .env("HOSTILE_SECRET", &secret)
        .output()
        .unwrap();
    let doc: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|err| panic!("{err}: {}", stderr(&o)));
    let c = &doc["candidates"][0];
    assert_eq!(c["verdict"], "pass", "{c}");
    let reports = c["reports"].to_string();
    assert!(reports.contains("in-a-container"), "{reports}");
    assert!(
        !reports.contains(&secret),
        "the host environment reached a check"
    );
    let ws = std::path::PathBuf::from(c["worktree"].as_str().unwrap());
    assert!(!ws.join("made-by-check").exists());
    // Every container of the run (agent and checks) is gone.
    assert!(e.containers_of(&t, "c").is_empty());
    let run = doc["run"].as_str().unwrap();
    let left =
        e.rt.block_on(rdocker::list_rascal_containers(&e.docker, Some(run)))
            .unwrap();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_container_agent_reaches_neither_the_users_repository_nor_a_sibling_and_leaves_nothing_running()
{
    let Some(e) = engine() else { return };
    let t = TestRepo::new(&[("README.md", "hello\n")]);
    let script = format!(
        "echo evil >> {r}/README.md 2>/dev/null; mkdir -p ../b 2>/dev/null && echo evil > ../b/backdoor.txt 2>/dev/null; ls {r}/.git/rascal > seen.txt 2>&1; setsid sleep 1000 & echo ok > a.txt",
        r = t.path().display()
    );
    t.write(
        ".rascal/config.yaml",
        &format!(
            "launcher: docker\nagents:\n{}{}",
            agent("a", &script, ""),
            agent("b", "sleep 1; echo b > b.txt", "")
        ),
    );
    t.commit_all("config");
    let before = std::fs::read(t.path().join("README.md")).unwrap();
    let o = t.rascal(&["run", "x", "--agent", "a,b", "--json"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(std::fs::read(t.path().join("README.md")).unwrap(), before);
    let ws = |id: &str| {
        std::path::PathBuf::from(
            doc["candidates"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["id"] == id)
                .unwrap()["worktree"]
                .as_str()
                .unwrap(),
        )
    };
    assert!(!ws("b").join("backdoor.txt").exists());
    let seen = std::fs::read_to_string(ws("a").join("seen.txt")).unwrap();
    assert!(
        seen.contains("No such file"),
        "the store was visible: {seen}"
    );
    // The container (and the `setsid` job in it) is gone.
    let run = doc["run"].as_str().unwrap();
    let left =
        e.rt.block_on(rdocker::list_rascal_containers(&e.docker, Some(run)))
            .unwrap();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_container_agent_leaves_its_commit_message_outside_the_workspace_and_finalize_uses_it() {
    let Some(_e) = engine() else { return };
    let script = "echo \"$RASCAL_ARTIFACTS_DIR\" > where.txt; printf 'feat: made in a container\\n' > \"$RASCAL_ARTIFACTS_DIR/commit_message.txt\"";
    let t = repo(&agent("c", script, ""));
    let o = t.rascal(&["run", "x", "--agent", "c", "--json"]);
    let doc: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|err| panic!("{err}: {}", stderr(&o)));
    let c = &doc["candidates"][0];
    assert_eq!(c["verdict"], "pass", "{c}");
    let ws = std::path::PathBuf::from(c["worktree"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(ws.join("where.txt"))
            .unwrap()
            .trim(),
        "/rascal/artifacts"
    );
    // The change is where.txt alone: the artifact is not in the workspace.
    assert_eq!(c["files_changed"], 1, "{c}");
    let run = doc["run"].as_str().unwrap();
    assert_eq!(code(&t.rascal(&["select", run, "c"])), 0);
    let f = t.rascal(&["finalize", run]);
    assert_eq!(code(&f), 0, "{}", stderr(&f));
    let branch = stdout(&f)
        .lines()
        .next()
        .unwrap()
        .split("on branch ")
        .nth(1)
        .unwrap()
        .to_string();
    let head = t
        .repo
        .find_reference(&format!("refs/heads/{branch}"))
        .unwrap()
        .peel_to_commit()
        .unwrap();
    assert!(
        head.message()
            .unwrap()
            .starts_with("feat: made in a container"),
        "{:?}",
        head.message()
    );
    assert!(head
        .tree()
        .unwrap()
        .get_path(std::path::Path::new("commit_message.txt"))
        .is_err());
}

#[test]
fn doctor_under_docker_asks_the_engine_for_images_and_runs_nothing_from_the_host() {
    let Some(_e) = engine() else { return };
    let t = repo(&format!(
        "  wrapped: {{ runtime: command, image: \"{IMAGE}\", command: [\"./scripts/agent.sh\"] }}\n  missing: {{ runtime: command, image: \"rascal-test-no-such-image:0\", command: [\"sh\"] }}\n"
    ));
    let o = t.rascal(&["doctor"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(
        out.contains(&format!(
            "✓ wrapped (command) · image {IMAGE} on the engine"
        )),
        "the program is in the image, not on the host: {out}"
    );
    assert!(!out.contains("not found"), "{out}");
    assert!(
        out.contains("✗ missing (command) · image rascal-test-no-such-image:0 NOT on the engine")
            && out.contains("is not on the Docker engine at"),
        "{out}"
    );
}
