//! The workspace's .git is rascal's, jump-out runs no repository-configured program, and egress judges every tunnel.

#[allow(unused_imports)]
use super::*;

// ---------------------------------------------------------------------
// Egress: a tunnel that stays silent is refused, never waved through.

/// An agent CONNECTs to an allowed host and sends nothing (on main the
/// proxy let such a tunnel through unjudged after 30 s, counted as
/// allowed: the next bytes could be a TLS hello for any host behind the
/// same front). Now silence until the deadline refuses the tunnel, counts
/// it as refused, carries nothing upstream, and `on_refused: fail` fails.
#[test]
fn a_silent_tunnel_to_an_allowed_host_is_refused_and_counted() {
    use rascal_exec::egress::policy::Allowlist;
    use rascal_exec::egress::proxy::{PinnedResolver, Proxy, Rules, Sink};
    use std::io::Read;
    use std::sync::{Arc, Mutex};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    // An upstream that records what reaches it (and never speaks first).
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let got = Arc::new(Mutex::new(Vec::<u8>::new()));
    let g = got.clone();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut c) = conn else { continue };
            let g = g.clone();
            std::thread::spawn(move || {
                let _ = c.set_read_timeout(Some(Duration::from_secs(10)));
                let mut b = [0u8; 4096];
                while let Ok(n) = c.read(&mut b) {
                    if n == 0 {
                        break;
                    }
                    g.lock().unwrap().extend_from_slice(&b[..n]);
                }
            });
        }
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let l2 = lines.clone();
        let sink: Sink = Arc::new(move |t: String| l2.lock().unwrap().push(t));
        let within = Duration::from_millis(700);
        let rules = Rules {
            allow: Allowlist::new(&[format!("front.test:{port}")]).unwrap(),
            resolver: Arc::new(PinnedResolver(
                [(
                    "front.test".to_string(),
                    vec!["127.0.0.1".parse().unwrap()],
                )]
                .into_iter()
                .collect(),
            )),
            sink,
            judge_within: within,
        };
        let proxy = Proxy::bind("127.0.0.1:0".parse().unwrap(), rules, false)
            .await
            .unwrap();
        let mut s = tokio::net::TcpStream::connect(proxy.addr).await.unwrap();
        // Timed from before the CONNECT: the proxy's deadline starts after
        // it reads it, so a slow reader of the 200 cannot eat into it.
        let started = Instant::now();
        s.write_all(format!("CONNECT front.test:{port} HTTP/1.1\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut head = [0u8; 39];
        s.read_exact(&mut head).await.unwrap();
        assert!(head.starts_with(b"HTTP/1.1 200"));
        // Silent past the deadline, then the bytes of another host's
        // hello: the tunnel is closed by then, and nothing is carried.
        let mut rest = Vec::new();
        let closed = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut rest)).await;
        assert!(
            closed.is_ok(),
            "the proxy kept a silent tunnel open past its deadline"
        );
        assert!(started.elapsed() >= within, "{:?}", started.elapsed());
        let late = rascal_exec::egress::tls::sample_hello(Some("hidden.example"), &[]);
        let _ = s.write_all(&late).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(got.lock().unwrap().is_empty(), "bytes reached the upstream");
        let c = proxy.counts();
        assert_eq!((c.allowed, c.refused), (0, 1), "{c:?}");
        let log = lines.lock().unwrap().join("\n");
        assert!(
            log.contains(&format!(
                "rascal: network: refused front.test:{port}: the client sent nothing within"
            )),
            "{log}"
        );
        // The agent's report with `on_refused: fail` fails.
        let summary = c.summary(
            &[format!("front.test:{port}")],
            rascal_core::config::network::OnRefused::Fail,
            None,
        );
        let agent: rascal_core::config::AgentConfig = serde_yaml::from_str(&format!(
            "{{ runtime: command, command: [\"true\"], network: {{ allow: [\"front.test:{port}\"], on_refused: fail }} }}"
        ))
        .unwrap();
        let report = rascal_exec::egress::annotate(
            rascal_core::model::verdict::Report::new(rascal_core::model::verdict::Layer::Agent, "agent"),
            &agent,
            "docker",
            Some(&summary),
        )
        .finish();
        assert_eq!(
            report.status,
            rascal_core::model::verdict::Status::Fail,
            "{report:?}"
        );
    });
}

// ---------------------------------------------------------------------
// The kept workspace's .git is rascal's: nothing planted there runs when
// the user types git commands in it.

/// `script` gives git a terminal (so it starts its pager); the test
/// needs it and fails without it.
fn in_a_terminal(dir: &Path, cmd: &str, env: &[(String, String)]) -> std::process::Output {
    let mut c = Command::new("script");
    c.args(["-qec", &format!("timeout 60 {cmd}"), "/dev/null"])
        .current_dir(dir)
        .env("PAGER", "cat")
        .env_remove("GIT_PAGER")
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output()
        .unwrap_or_else(|e| panic!("`script` (util-linux) is needed to give git a terminal: {e}"))
}

/// Which of `names` exist as `{prefix}-{name}`.
fn fired(prefix: &Path, names: &[&str]) -> Vec<String> {
    names
        .iter()
        .filter(|n| PathBuf::from(format!("{}-{n}", prefix.display())).exists())
        .map(|n| n.to_string())
        .collect()
}

#[test]
fn nothing_an_agent_plants_in_the_workspace_git_runs_when_the_user_types_git_there() {
    if !bwrap() {
        return;
    }
    let m = PathBuf::from("/var/tmp").join(marker("gitdir"));
    // Each planted program touches `{m}-<what>`, on the host if it ever
    // runs there (inside the sandbox the agent runs none of them).
    let script = format!(
        r#"M={m}
G="$PWD/.git"
mk() {{ if [ "$2" = pager ]; then c=cat; else c=true; fi; printf '#!/bin/sh\ntouch %s-%s\n%s\n' "$M" "$2" "$c" > "$1"; chmod +x "$1"; }}
mkdir -p "$G/evilhooks"
mk "$G/fsmonitor.sh" fsmonitor
mk "$G/pager.sh" pager
mk "$G/extdiff.sh" include
mk "$G/evilhooks/post-index-change" hookspath
mk "$G/hooks/post-index-change" hook
printf '[diff]\n\texternal = %s\n' "$G/extdiff.sh" > "$G/included.cfg"
printf '[core]\n\tfsmonitor = %s\n\thooksPath = %s\n\tpager = %s\n[includeIf "gitdir:/"]\n\tpath = %s\n' "$G/fsmonitor.sh" "$G/evilhooks" "$G/pager.sh" "$G/included.cfg" >> "$G/config"
echo 'pub fn two() -> u32 {{ 2 }}' >> src/lib.rs
echo 'new' > added.txt
"#,
        m = m.display()
    );
    let t = repo(
        |_| common::command_agents(&[("evil", &script)]),
        "guardrails: []\n",
    );
    let o = run(&t, "evil", &[]);
    let doc = json(&o);
    let ws = PathBuf::from(doc["candidates"][0]["worktree"].as_str().unwrap());
    assert!(
        ws.join(".git/fsmonitor.sh").exists(),
        "the agent planted its programs: {}{}",
        stdout(&o),
        stderr(&o)
    );
    let names = ["fsmonitor", "pager", "include", "hookspath", "hook"];
    assert!(fired(&m, &names).is_empty(), "ran during the run");
    // The user's shell: a plain environment, git given a terminal.
    let mut outs = Vec::new();
    for cmd in [
        "git status",
        "git log",
        "git diff",
        "git add -A",
        "git diff --cached",
        "git diff HEAD",
    ] {
        outs.push((cmd, in_a_terminal(&ws, cmd, &[])));
    }
    let ran = fired(&m, &names);
    for n in &names {
        let _ = std::fs::remove_file(format!("{}-{n}", m.display()));
    }
    assert!(
        ran.is_empty(),
        "programs the agent planted in the workspace's .git ran on the host: {ran:?}"
    );
    for (cmd, out) in &outs {
        assert!(
            out.status.success(),
            "`{cmd}` failed in the kept workspace: {}{}",
            stdout(out),
            stderr(out)
        );
    }
    // `git diff` showed the agent's change (git works there).
    let diff = &outs.last().unwrap().1;
    assert!(stdout(diff).contains("two()"), "{}", stdout(diff));
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        rascal_exec::git::gitdir::TEMPLATE_CONFIG
    );
}

// ---------------------------------------------------------------------
// Jump-out: git runs nothing a repository in the workspace configured.

fn git_in(dir: &Path, args: &[&str], env: &[(String, String)]) -> std::process::Output {
    let mut c = Command::new("git");
    c.args(args)
        .current_dir(dir)
        .env("PAGER", "cat")
        .env_remove("GIT_PAGER")
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn git_ok(dir: &Path, args: &[&str]) {
    let o = git_in(
        dir,
        &[
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "protocol.file.allow=always",
            ][..],
            args,
        ]
        .concat(),
        &[],
    );
    assert!(o.status.success(), "git {args:?}: {}", stderr(&o));
}

/// A workspace whose `.git/config` starts with a UTF-8 BOM (git skips it)
/// and hides a `[filter]` and a diff driver, and a nested repository
/// registered as a gitlink carrying a filter of its own (git status in the
/// workspace recurses into it). Each program touches a marker.
fn booby_trapped(ws: &Path, m: &Path) {
    let prog = |name: &str| {
        let p = m.join(format!("{name}.sh"));
        std::fs::write(
            &p,
            format!("#!/bin/sh\ntouch {}/{name}-ran\ncat\n", m.display()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p.display().to_string()
    };
    let (clean, textconv, nested) = (prog("clean"), prog("textconv"), prog("nested"));
    // The nested repository, committed, registered as a gitlink.
    let sub = ws.join("vendor/lib");
    std::fs::create_dir_all(&sub).unwrap();
    git_ok(&sub, &["init", "-q"]);
    std::fs::write(sub.join("data.txt"), "one\n").unwrap();
    std::fs::write(sub.join(".gitattributes"), "*.txt filter=nf\n").unwrap();
    git_ok(&sub, &["add", "-A"]);
    git_ok(&sub, &["commit", "-qm", "sub"]);
    git_ok(ws, &["init", "-q"]);
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    std::fs::write(ws.join(".gitattributes"), "*.txt filter=bf diff=bf\n").unwrap();
    git_ok(ws, &["add", "a.txt", ".gitattributes", "vendor/lib"]);
    git_ok(ws, &["commit", "-qm", "base"]);
    // Now the traps, planted after the commits.
    let cfg = ws.join(".git/config");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        format!(
            "\u{feff}{text}[filter \"bf\"]\n\tclean = {clean}\n\tsmudge = {clean}\n\trequired = true\n[diff \"bf\"]\n\ttextconv = {textconv}\n"
        ),
    )
    .unwrap();
    let mut sub_cfg = std::fs::read_to_string(sub.join(".git/config")).unwrap();
    sub_cfg.push_str(&format!("[filter \"nf\"]\n\tclean = {nested}\n"));
    std::fs::write(sub.join(".git/config"), sub_cfg).unwrap();
    // Changed files; the nested one keeps its size, so git must read its
    // content (through the filter) to see that it changed.
    std::fs::write(ws.join("a.txt"), "one\ntwo, longer\n").unwrap();
    std::fs::write(sub.join("data.txt"), "two\n").unwrap();
}

fn ran(m: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(m)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with("-ran"))
        .collect();
    v.sort();
    v
}

#[test]
fn in_the_jump_out_environment_git_runs_no_filter_of_a_bom_config_or_a_nested_gitlink() {
    let d = tempfile::tempdir().unwrap();
    let marks = tempfile::tempdir().unwrap();
    let ws = d.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    booby_trapped(&ws, marks.path());
    // The traps are live: plain git (and main's environment, which only
    // turned off the fsmonitor and hooks) runs them.
    let main_env: Vec<(String, String)> = [
        ("GIT_CONFIG_COUNT", "2"),
        ("GIT_CONFIG_KEY_0", "core.fsmonitor"),
        ("GIT_CONFIG_VALUE_0", "false"),
        ("GIT_CONFIG_KEY_1", "core.hooksPath"),
        ("GIT_CONFIG_VALUE_1", "/dev/null"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let _ = git_in(&ws, &["status"], &main_env);
    let _ = git_in(&ws, &["diff"], &main_env);
    assert_eq!(
        ran(marks.path()),
        vec!["clean-ran", "nested-ran", "textconv-ran"],
        "the traps did not fire without rascal's environment: the test proves nothing"
    );
    for f in ran(marks.path()) {
        std::fs::remove_file(marks.path().join(f)).unwrap();
    }
    // The environment the TUI gives its editor and shell.
    let safe = rascal_tui::jump::jump_env(&ws, "c1", &|n| match n {
        "PAGER" => Some("cat".into()),
        _ => None,
    })
    .unwrap();
    for args in [
        &["status"][..],
        &["diff"],
        &["diff", "--submodule=diff"],
        &["status", "--ignore-submodules=none"],
    ] {
        let o = git_in(&ws, args, &safe.vars);
        assert!(o.status.success(), "git {args:?}: {}", stderr(&o));
        if args == ["diff"] {
            assert!(stdout(&o).contains("two, longer"), "{}", stdout(&o));
        }
    }
    let sub = ws.join("vendor/lib");
    for args in [&["status"][..], &["diff"]] {
        let o = git_in(&sub, args, &safe.vars);
        assert!(
            o.status.success(),
            "git {args:?} in the nested repository: {}",
            stderr(&o)
        );
    }
    assert_eq!(
        ran(marks.path()),
        Vec::<String>::new(),
        "git ran a program the workspace configured"
    );
}

/// `rascal finalize` refuses a workspace whose `.git` is no longer the
/// folder rascal made (here replaced by a link after the run, as a docker
/// agent still running could): nothing is committed.
#[test]
fn finalize_refuses_a_workspace_whose_git_is_a_link() {
    if !bwrap() {
        return;
    }
    let t = repo(
        |_| common::command_agents(&[("ok", "echo 'pub fn two() -> u32 { 2 }' >> src/lib.rs")]),
        "guardrails: []\n",
    );
    let o = run(&t, "ok", &[]);
    let doc = json(&o);
    let c = &doc["candidates"][0];
    assert_eq!(c["verdict"], "pass", "{c}");
    let ws = PathBuf::from(c["worktree"].as_str().unwrap());
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::rename(ws.join(".git"), elsewhere.path().join("git")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path().join("git"), ws.join(".git")).unwrap();
    let run_id = doc["run"].as_str().unwrap();
    assert_eq!(code(&t.rascal(&["select", run_id, "ok"])), 0);
    let f = t.rascal(&["finalize", run_id]);
    assert_ne!(code(&f), 0, "{}", stdout(&f));
    assert!(
        stderr(&f).contains("not the directory rascal created"),
        "{}",
        stderr(&f)
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
