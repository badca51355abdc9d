//! How sandboxed processes run and die and what they share with the host
//! (namespaces, network, capabilities, terminal, user), each checked by
//! running bwrap.

use super::*;
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::chown;
use std::os::unix::fs::PermissionsExt;
use std::time::Instant;

/// Pids whose /proc/PID/cmdline contains `needle`.
fn procs_with(needle: &[u8]) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        let Ok(cmdline) = fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if cmdline.windows(needle.len()).any(|w| w == needle) {
            found.push(pid);
        }
    }
    found
}

/// Kills, on drop (also when a test panics), every process whose command line
/// contains this test's unique marker, so a failing test leaks nothing.
struct Reap(String);

impl Drop for Reap {
    fn drop(&mut self) {
        for pid in procs_with(self.0.as_bytes()) {
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
    }
}

fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn available_finds_working_bwrap() {
    if !have_bwrap() {
        return;
    }
    let bwrap = available().unwrap();
    assert!(bwrap.is_absolute());
    // It works: a sandbox of the namespaces `wrap` uses runs a command.
    let ran = Command::new(&bwrap)
        .args([
            "--ro-bind",
            "/",
            "/",
            "--unshare-pid",
            "--unshare-net",
            "--",
        ])
        .args(["sh", "-c", "exit 3"])
        .status()
        .unwrap();
    assert_eq!(ran.code(), Some(3));
    // The answer kept for the process is what a fresh probe finds.
    assert_eq!(
        available().map_err(|e| e.to_string()),
        probe(bwrap_path()).map_err(|e| e.to_string())
    );
}

/// When the main process exits, every descendant dies too, even one that
/// escaped into its own session. The exit status is passed through.
#[test]
fn descendants_die_with_main_process() {
    if !have_bwrap() {
        return;
    }
    let (_t, base) = scratch();
    let ws = mkdir(&base.join("ws"));
    let m = marker();
    // `[.]` so the waiting grep does not match its own command line.
    let script = format!(
        "setsid sh -c 'sleep 1000.{m}; :' >/dev/null 2>&1 &
             i=0
             until grep -qs '1000[.]{m}' /proc/[0-9]*/cmdline; do
               i=$((i+1)); [ $i -gt 200 ] && exit 99; sleep 0.01
             done
             echo STARTED; exit 7"
    );
    let _reap = Reap(format!("1000.{m}"));
    let p = policy(&ws);
    let argv = p.wrap(&sh(&script)).unwrap();
    // Without the pid namespace + --die-with-parent, bwrap's init would stay
    // alive with our stdout, and this would time out.
    let output = spawn_output_within(Duration::from_secs(10), &[], &argv, p.home());
    let out = String::from_utf8_lossy(&output.stdout);
    assert_eq!(lines(&out), ["STARTED"]);
    assert_eq!(output.status.code(), Some(7));
    let needle = format!("1000.{m}");
    wait_until(
        "the sandbox's sleep is gone",
        Duration::from_secs(30),
        || procs_with(needle.as_bytes()).is_empty(),
    );
}

/// SIGKILL of the process that spawned bwrap takes down the whole sandbox
/// (--die-with-parent kills bwrap, and the pid namespace takes the rest).
#[test]
fn killing_parent_kills_sandbox() {
    if !have_bwrap() {
        return;
    }
    let (_t, base) = scratch();
    let ws = mkdir(&base.join("ws"));
    let m = marker();
    let _reap = Reap(format!("1000.{m}"));
    let argv = policy(&ws)
        .wrap(&sh(&format!("sleep 1000.{m}; :")))
        .unwrap();
    // The intermediate must not exec bwrap (hence `; exit`), so it stays its parent.
    let mut parent = Command::new("sh")
        .arg("-c")
        .arg("\"$@\"; exit $?")
        .arg("sh")
        .args(&argv)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The real sleep: its argv is exactly "sleep", "1000.<m>".
    let sleep_argv = format!("sleep\x001000.{m}");
    wait_until("the sandboxed sleep runs", Duration::from_secs(10), || {
        !procs_with(sleep_argv.as_bytes()).is_empty()
    });
    parent.kill().unwrap();
    parent.wait().unwrap();
    let needle = format!("1000.{m}");
    wait_until(
        "bwrap and the sandbox are gone",
        Duration::from_secs(30),
        || procs_with(needle.as_bytes()).is_empty(),
    );
}

/// network=false: only a private loopback, and a listener on the host's
/// 127.0.0.1 is unreachable; network=true (control) reaches it.
#[test]
fn network_is_unshared() {
    if !have_bwrap() {
        return;
    }
    let (_t, base) = scratch();
    let ws = mkdir(&base.join("ws"));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    TcpStream::connect(("127.0.0.1", port)).expect("reachable outside the sandbox");
    let has_bash = Path::new("/bin/bash").exists() || Path::new("/usr/bin/bash").exists();
    let script = format!(
        "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ' '; echo
             if [ {has_bash} = true ]; then
               if bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' 2>/dev/null
               then echo CONNECTED; else echo REFUSED; fi
             fi"
    );
    let mut p = policy(&ws);
    let (out, _) = run_in(&p, &script);
    let out = lines(&out);
    assert_eq!(out[0].trim(), "lo");
    if has_bash {
        assert_eq!(out[1], "REFUSED");
        p.network = true;
        let (out, _) = run_in(&p, &script);
        assert_eq!(lines(&out)[1], "CONNECTED");
    }
}

/// New pid/net/ipc/uts/cgroup namespaces, no capabilities, a new session, and
/// the workspace as cwd.
#[test]
fn namespaces_capabilities_session_and_cwd() {
    if !have_bwrap() {
        return;
    }
    let (_t, base) = scratch();
    let ws = mkdir(&base.join("ws"));
    let script =
        "for n in pid net ipc uts cgroup; do echo \"$n $(readlink /proc/self/ns/$n)\"; done
             grep -E '^(Cap(Inh|Prm|Eff|Amb)|NoNewPrivs):' /proc/self/status | tr -d '\\t'
             echo \"session $(cut -d' ' -f6 /proc/$$/stat) pid $$\"
             pwd";
    let (out, _) = run_in(&policy(&ws), script);
    let out = lines(&out);
    for (i, ns) in ["pid", "net", "ipc", "uts", "cgroup"].iter().enumerate() {
        let host = fs::read_link(format!("/proc/self/ns/{ns}")).unwrap();
        let (name, inside) = out[i].split_once(' ').unwrap();
        assert_eq!(name, *ns);
        assert_ne!(inside, s(&host), "{ns} namespace is shared with the host");
    }
    // This `grep` was exec'd by the shell: no_new_privs keeps even a root-owned
    // process from regaining capabilities on exec. (As root, bwrap 0.8 leaves
    // the bounding set alone; unprivileged, it is empty too.)
    assert_eq!(
        &out[5..10],
        [
            "CapInh:0000000000000000",
            "CapPrm:0000000000000000",
            "CapEff:0000000000000000",
            "CapAmb:0000000000000000",
            "NoNewPrivs:1"
        ]
    );
    // Session 1 is led by bwrap's init inside the sandbox; without
    // --new-session it would be the host's session leader (shown as 0).
    assert_eq!(out[10], "session 1 pid 2");
    assert_eq!(out[11], s(&ws));
}

/// --new-session: even when rascal has a controlling terminal (faked here with
/// `script`), the sandboxed command has none, so it cannot TIOCSTI into it.
#[test]
fn new_session_has_no_controlling_terminal() {
    if !have_bwrap() {
        return;
    }
    let Some(script) = ["/usr/bin/script", "/bin/script"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        skip(
            "RASCAL_REQUIRE_SANDBOX_TOOLS",
            "`script` not found (apt-get install bsdutils)",
        );
        return;
    };
    let (_t, base) = scratch();
    let ws = mkdir(&base.join("ws"));
    let probe = "echo \"tty_nr $(cut -d' ' -f7 /proc/$$/stat)\"";
    let quote = |a: &String| format!("'{}'", a.replace('\'', "'\\''"));
    let quoted = |argv: &[String]| argv.iter().map(quote).collect::<Vec<_>>().join(" ");
    let outer = |cmd: String| {
        let out = spawn_output(&[script, "-qec", &cmd, "/dev/null"], &[], Path::new("/"));
        String::from_utf8_lossy(&out.stdout).replace('\r', "")
    };
    // Control: outside the sandbox, the same probe under `script` has a terminal.
    assert_ne!(outer(quoted(&sh(probe))).trim(), "tty_nr 0");
    let argv = policy(&ws).wrap(&sh(probe)).unwrap();
    assert_eq!(outer(quoted(&argv)).trim(), "tty_nr 0");
}

/// The same sandbox works for an unprivileged user (bwrap then builds it in a
/// user namespace). Run as root, this test drops to `nobody` with setpriv; run
/// unprivileged, every other test already covers this.
#[test]
fn works_unprivileged() {
    if !have_bwrap() {
        return;
    }
    if !is_root() {
        // Unprivileged, every other test already runs bwrap so; this one
        // drops to `nobody`, which takes root.
        skip(
            "RASCAL_REQUIRE_ROOT",
            "not root: cannot drop to nobody (the other tests ran bwrap unprivileged)",
        );
        return;
    }
    let Some(setpriv) = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        skip(
            "RASCAL_REQUIRE_SANDBOX_TOOLS",
            "`setpriv` not found (apt-get install util-linux)",
        );
        return;
    };
    let (_t, base) = scratch();
    fs::set_permissions(&base, fs::Permissions::from_mode(0o755)).unwrap();
    let ws = mkdir(&base.join("ws"));
    chown(&ws, Some(65534), Some(65534)).unwrap();
    let outside = base.join("outside");
    fs::write(&outside, "original").unwrap();
    fs::set_permissions(&outside, fs::Permissions::from_mode(0o666)).unwrap();
    let hidden = mkdir(&base.join("hidden"));
    fs::write(hidden.join("secret"), "secret").unwrap();
    fs::set_permissions(hidden.join("secret"), fs::Permissions::from_mode(0o644)).unwrap();
    let mut p = policy(&ws);
    // Shown read-only, so hiding `hidden` in it is what keeps it from view.
    p.read_only = vec![(base.clone(), base.clone())];
    p.hide = vec![hidden.clone()];
    let script = format!(
        "id -u
             echo ok > out && echo WROTE-WS
             echo changed > '{o}' && echo WROTE-OUTSIDE
             cat '{h}/secret' && echo READ-SECRET
             echo \"home entries: $(ls -A \"$HOME\" | wc -l)\"
             echo x > \"$HOME/f\" && echo WROTE-HOME
             tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '
             grep '^CapEff:' /proc/self/status | tr -d '\\t'",
        o = s(&outside),
        h = s(&hidden)
    );
    let argv = p.wrap(&sh(&script)).unwrap();
    let out = spawn_output(
        &[
            setpriv,
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
        ],
        &argv,
        p.home(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        lines(&stdout),
        [
            "65534",
            "WROTE-WS",
            "home entries: 0",
            "WROTE-HOME",
            "lo",
            "CapEff:0000000000000000"
        ]
    );
    assert_eq!(fs::read_to_string(&outside).unwrap(), "original");
    assert!(ws.join("out").exists());
}

/// Overhead of the sandbox: `cargo test --release -- --ignored --nocapture overhead`.
#[test]
#[ignore = "benchmark; run explicitly"]
fn overhead() {
    if !have_bwrap() {
        return;
    }
    let (_t, base) = scratch();
    let ws = mkdir(&base.join("ws"));
    let median_ms = |argv: &[String]| {
        let mut times: Vec<f64> = (0..20)
            .map(|_| {
                let start = Instant::now();
                let status = Command::new(&argv[0])
                    .args(&argv[1..])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .status()
                    .unwrap();
                assert!(status.success());
                start.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(f64::total_cmp);
        (times[9] + times[10]) / 2.0
    };
    let bare = median_ms(&["true".to_string()]);
    let mut p = SandboxPolicy::new(&ws);
    let sandboxed = median_ms(&p.wrap(&["true".to_string()]).unwrap());
    p.network = true;
    let shared_net = median_ms(&p.wrap(&["true".to_string()]).unwrap());
    println!(
        "`true` x20, median: bare {bare:.2} ms, bwrap {sandboxed:.2} ms, \
             bwrap with host network {shared_net:.2} ms"
    );
}
