//! Unit tests of `sandbox`.

use super::*;
use std::fs;
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::chown;
use std::os::unix::fs::PermissionsExt;
use std::process::Output;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// False (with a note) when bwrap is unusable here; set RASCAL_REQUIRE_BWRAP=1
/// to turn that into a failure (e.g. in CI).
fn have_bwrap() -> bool {
    match available() {
        Ok(_) => true,
        Err(e) => {
            skip("RASCAL_REQUIRE_BWRAP", &e.to_string());
            false
        }
    }
}

/// A test that cannot run here: a failure when `require` is set (CI
/// sets every `RASCAL_REQUIRE_*`), else said on stderr and appended to
/// the file `RASCAL_SKIP_LOG` names, which CI sums up.
fn skip(require: &str, why: &str) {
    if std::env::var_os(require).is_some_and(|v| !v.is_empty()) {
        panic!("{require} is set but {why}");
    }
    eprintln!("skipped: {why} (set {require}=1 to make this a failure)");
    if let Some(log) = std::env::var_os("RASCAL_SKIP_LOG") {
        let test = std::thread::current().name().unwrap_or("?").to_string();
        let why = why.replace(['\n', '\t'], " ");
        let line = format!("{require}\t{test}\t{why}\n");
        let open = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log);
        let _ = open.and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
    }
}

/// A scratch directory outside /tmp (the sandbox's /tmp is private, so host
/// files under /tmp would simply be invisible, which would prove nothing).
fn scratch() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("rascal-sandbox-test-")
        .tempdir_in("/var/tmp")
        .expect("create scratch dir in /var/tmp");
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

fn mkdir(path: &Path) -> PathBuf {
    fs::create_dir_all(path).unwrap();
    path.to_path_buf()
}

/// A bare policy: nothing hidden, home in the private /tmp.
fn policy(workspace: &Path) -> SandboxPolicy {
    SandboxPolicy {
        workspace: workspace.to_path_buf(),
        writable: vec![],
        read_only: vec![],
        network: false,
        home: PathBuf::from("/tmp/rascal-home"),
        hide: vec![],
        tmpfs_size: None,
    }
}

#[test]
fn shows_says_which_host_paths_the_sandbox_sees() {
    let mut p = policy(Path::new("/tmp/ws"));
    p.home = PathBuf::from("/home/me");
    p.hide = vec![PathBuf::from("/home/me"), PathBuf::from("/srv/repo")];
    p.read_only = vec![(
        PathBuf::from("/home/me/tools"),
        PathBuf::from("/home/me/tools"),
    )];
    assert!(p.shows(Path::new("/tmp/ws/agents/fix.sh")), "the workspace");
    assert!(
        p.shows(Path::new("/home/me/tools/fix.sh")),
        "a bind in the home"
    );
    assert!(p.shows(Path::new("/usr/bin/env")), "a system directory");
    assert!(!p.shows(Path::new("/home/me/agents/fix.sh")), "the home");
    assert!(!p.shows(Path::new("/srv/repo/fix.sh")), "the repository");
    assert!(!p.shows(Path::new("/tmp/other/fix.sh")), "the private /tmp");
    assert!(!p.shows(Path::new("/mnt/x")), "anything not given");
}

/// Unique per call, and made of digits so it can be a `sleep` duration.
fn marker() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "{}{:09}{}",
        std::process::id(),
        nanos,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

fn sh(script: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), script.into()]
}

/// Runs `prefix + argv` with HOME set, killing it after 60 s.
fn spawn_output(prefix: &[&str], argv: &[String], home: &Path) -> Output {
    spawn_output_within(Duration::from_secs(60), prefix, argv, home)
}

/// Like `spawn_output`, but gives up after `timeout`. Output is read to EOF, so
/// a leaked process that still holds stdout also counts as a timeout.
fn spawn_output_within(timeout: Duration, prefix: &[&str], argv: &[String], home: &Path) -> Output {
    let all: Vec<String> = prefix
        .iter()
        .map(|a| a.to_string())
        .chain(argv.iter().cloned())
        .collect();
    let child = Command::new(&all[0])
        .args(&all[1..])
        .env("HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id() as libc::pid_t;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(timeout) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("sandboxed command timed out: {all:?}");
        }
    }
}

fn run_in(p: &SandboxPolicy, script: &str) -> (String, Output) {
    let out = spawn_output(&[], &p.wrap(&sh(script)).unwrap(), p.home());
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!(
        "--- stdout:\n{stdout}--- stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (stdout, out)
}

fn lines(stdout: &str) -> Vec<&str> {
    stdout.lines().collect()
}

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

// ---- argv construction (runs no sandbox) ----

#[test]
fn argv_has_flags_and_mounts_in_nesting_order() {
    let (_t, base) = scratch();
    let ws = mkdir(&base.join("ws"));
    let hidden = mkdir(&ws.join("hidden"));
    let git = mkdir(&hidden.join(".git"));
    let mut p = policy(&ws);
    p.tmpfs_size = Some(1 << 20);
    if !knows_size() {
        eprintln!("this bwrap has no --size: checked without it");
        p.tmpfs_size = None;
    }
    // Deliberately listed deepest first: wrap must still mount parents first.
    p.hide = vec![git.clone(), hidden.clone(), base.join("not-shown")];
    let argv = p.wrap(&sh("true")).unwrap();
    let at = |seq: &[&str]| {
        argv.windows(seq.len())
            .position(|w| w.iter().zip(seq).all(|(a, b)| a == b))
            .unwrap_or_else(|| panic!("{seq:?} not in {argv:?}"))
    };
    let (hid, w, g) = (s(&hidden), s(&ws), s(&git));
    assert!(argv[0].ends_with("bwrap"));
    // Built up from an empty root: never the host's `/`.
    assert!(!argv.windows(3).any(|w| w == ["--ro-bind", "/", "/"]));
    assert_eq!(&argv[1..3], ["--dev", "/dev"]);
    let tmpfs = |d: &str| match p.tmpfs_size {
        Some(_) => at(&["--size", "1048576", "--tmpfs", d]),
        None => at(&["--tmpfs", d]),
    };
    tmpfs("/dev/shm");
    at(&["--remount-ro", "/dev"]);
    at(&["--ro-bind", "/usr", "/usr"]);
    tmpfs("/tmp");
    tmpfs("/run");
    tmpfs("/tmp/rascal-home");
    at(&["--symlink", "../run", "/var/run"]);
    assert!(at(&["--tmpfs", "/tmp"]) < at(&["--bind", &w, &w]));
    assert!(at(&["--bind", &w, &w]) < at(&["--tmpfs", &hid]));
    assert!(at(&["--tmpfs", &hid]) < at(&["--tmpfs", &g]));
    assert!(at(&["--tmpfs", &g]) < at(&["--remount-ro", &hid]));
    assert!(at(&["--remount-ro", &hid]) < at(&["--remount-ro", "/"]));
    // Hidden where nothing shows it: nothing to hide.
    assert!(!argv.iter().any(|a| a.contains("not-shown")));
    for flag in [
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--unshare-net",
        "--die-with-parent",
        "--new-session",
    ] {
        at(&[flag]);
    }
    at(&["--cap-drop", "ALL"]);
    at(&["--chdir", &w]);
    assert_eq!(&argv[argv.len() - 4..], &["--", "sh", "-c", "true"]);

    p.network = true;
    assert!(!p
        .wrap(&sh("true"))
        .unwrap()
        .contains(&"--unshare-net".into()));
}

#[test]
fn wrap_rejects_bad_policies() {
    let (_t, base) = scratch();
    let ws = mkdir(&base.join("ws"));
    let err = |p: &SandboxPolicy| p.wrap(&sh("true")).unwrap_err().to_string();

    assert!(policy(&ws).wrap(&[]).is_err());
    assert!(err(&policy(Path::new("relative/ws"))).contains("absolute"));
    assert!(err(&policy(&base.join("ws/../ws"))).contains(".."));
    assert!(err(&policy(&base.join("missing"))).contains("not a directory"));

    let mut p = policy(&ws);
    p.read_only = vec![(base.join("no-such-login.json"), "/tmp/login.json".into())];
    let e = err(&p);
    assert!(e.contains("read-only mount source") && e.contains("does not exist"));

    let mut p = policy(&ws);
    p.writable = vec![(base.join("no-such-cache"), "/tmp/cache".into())];
    assert!(err(&p).contains("writable mount source"));

    let mut p = policy(&ws);
    p.writable = vec![(base.clone(), ws.clone())];
    assert!(err(&p).contains("two mounts"));

    let mut p = policy(&ws);
    p.read_only = vec![(base.clone(), "/proc/x".into())];
    assert!(err(&p).contains("collides"));

    // /usr/<unique> does not exist, and /usr is a read-only system bind.
    let mut p = policy(&ws);
    p.home = PathBuf::from(format!("/usr/rascal-test-{}", marker()));
    assert!(err(&p).contains("mount point"));
    // Anywhere outside the system directories the empty root makes room.
    p.home = PathBuf::from(format!("/home/rascal-test-{}", marker()));
    assert!(p.wrap(&sh("true")).is_ok());
    // The system's own mount points are not the policy's.
    let mut p = policy(&ws);
    p.read_only = vec![(base.clone(), "/usr".into())];
    assert!(err(&p).contains("collides"));

    // Missing hidden paths are simply skipped.
    let mut p = policy(&ws);
    p.hide = vec![base.join("not-there")];
    assert!(!p
        .wrap(&sh("true"))
        .unwrap()
        .contains(&s(&base.join("not-there"))));
}

#[test]
fn new_hides_real_home_and_sensitive_sockets() {
    let (_t, base) = scratch();
    let home = mkdir(&base.join("home"));
    let ws = mkdir(&home.join("proj/ws"));
    let p = SandboxPolicy::with_real_home(ws.clone(), Some(home.clone()));
    assert_eq!(p.home(), home);
    assert_eq!(p.workspace, ws);
    assert!(!p.network);
    assert!(p.hide.contains(&home));
    let p = SandboxPolicy::with_real_home(ws, None);
    assert_eq!(p.home(), Path::new("/tmp/home"));
}

#[test]
fn probe_reports_missing_or_broken_bwrap() {
    let missing = probe(None).unwrap_err();
    assert!(matches!(
        missing,
        crate::Error::ToolMissing { tool: "bwrap", .. }
    ));
    assert_eq!(missing.to_string(), INSTALL_HINT);
    let e = probe(Some("/bin/false".into())).unwrap_err();
    assert!(matches!(e, crate::Error::Sandbox(_)));
    let e = e.to_string();
    assert!(e.contains("cannot create a sandbox") && e.contains("user namespaces"));
    assert!(!e.contains('\n'));
}

// ---- properties, each checked by running bwrap ----

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

/// The system is read-only: writes outside the workspace fail and leave host
/// files untouched, while writes to the workspace land on the host.
#[test]
fn writes_outside_workspace_fail() {
    if !have_bwrap() {
        return;
    }
    let (_t, base) = scratch();
    let ws = mkdir(&base.join("ws"));
    let outside = mkdir(&base.join("outside"));
    fs::write(outside.join("file"), "original").unwrap();
    let script = format!(
        "echo changed > '{o}/file' && echo WROTE-EXISTING
             echo new > '{o}/new' && echo WROTE-NEW
             rm -f '{o}/file' && echo REMOVED
             touch /usr/rascal-sandbox-probe && echo WROTE-USR
             echo ok > in-ws && echo WROTE-WS
             pwd",
        o = s(&outside)
    );
    // The scratch directory shown read-only, so `outside` is there to attack.
    let mut p = policy(&ws);
    p.read_only = vec![(base.clone(), base.clone())];
    let (out, output) = run_in(&p, &script);
    assert!(output.status.success());
    assert_eq!(lines(&out), ["WROTE-WS", &s(&ws)]);
    assert_eq!(
        fs::read_to_string(outside.join("file")).unwrap(),
        "original"
    );
    assert!(!outside.join("new").exists());
    assert!(!Path::new("/usr/rascal-sandbox-probe").exists());
    assert_eq!(fs::read_to_string(ws.join("in-ws")).unwrap(), "ok\n");
}

/// /tmp and HOME are private, empty tmpfs mounts: writable inside, never
/// reaching the host, and hiding what the host has at those paths. /dev and
/// /proc are fresh.
#[test]
fn tmp_and_home_are_private() {
    if !have_bwrap() {
        return;
    }
    let (_t, base) = scratch();
    let ws = mkdir(&base.join("ws"));
    // A host directory at the home path, with content that must not show.
    let home = mkdir(&base.join("home"));
    fs::write(home.join("host-secret"), "secret").unwrap();
    let tmp_probe = format!("/tmp/rascal-sandbox-probe-{}", marker());
    let mut p = policy(&ws);
    p.home = home.clone();
    let script = format!(
        "test \"$HOME\" = '{h}' && echo HOME-IS-SET
             echo \"home entries: $(ls -A \"$HOME\" | wc -l)\"
             echo x > \"$HOME/written\" && echo WROTE-HOME
             echo \"tmp entries: $(ls -A /tmp | wc -l)\"
             echo y > '{tmp_probe}' && echo WROTE-TMP
             test -c /dev/null && test -c /dev/urandom && echo DEV-OK
             test ! -e /dev/sda && test ! -e /dev/vda && echo NO-DISKS
             test -r /proc/self/status && echo PROC-OK",
        h = s(&home)
    );
    let (out, _) = run_in(&p, &script);
    assert_eq!(
        lines(&out),
        [
            "HOME-IS-SET",
            "home entries: 0",
            "WROTE-HOME",
            "tmp entries: 0",
            "WROTE-TMP",
            "DEV-OK",
            "NO-DISKS",
            "PROC-OK"
        ]
    );
    assert!(!home.join("written").exists());
    assert_eq!(
        fs::read_to_string(home.join("host-secret")).unwrap(),
        "secret"
    );
    assert!(!Path::new(&tmp_probe).exists());
}

/// A hidden directory's contents are unreadable and it cannot be written, while
/// a workspace nested inside it is bound after the tmpfs and stays writable.
#[test]
fn hidden_dir_hides_but_nested_workspace_stays_writable() {
    if !have_bwrap() {
        return;
    }
    let (_t, base) = scratch();
    let hidden = mkdir(&base.join("hidden"));
    fs::write(hidden.join("secret.txt"), "secret").unwrap();
    let ws = mkdir(&hidden.join("ws"));
    fs::write(ws.join("src.txt"), "code").unwrap();
    let mut p = policy(&ws);
    // Shown read-only, so hiding `hidden` in it is what keeps it from view.
    p.read_only = vec![(base.clone(), base.clone())];
    p.hide = vec![hidden.clone()];
    let script = format!(
        "cat '{h}/secret.txt' && echo READ-SECRET
             ls -A '{h}'
             echo x > '{h}/new' && echo WROTE-HIDDEN
             cat src.txt; echo
             echo ok > '{w}/out.txt' && echo WROTE-WS",
        h = s(&hidden),
        w = s(&ws)
    );
    let (out, _) = run_in(&p, &script);
    assert_eq!(lines(&out), ["ws", "code", "WROTE-WS"]);
    assert!(!hidden.join("new").exists());
    assert_eq!(fs::read_to_string(ws.join("out.txt")).unwrap(), "ok\n");
}

/// The default policy's hidden real home: the private home sits at the real
/// home's path, so its files vanish, while a workspace under it still works.
#[test]
fn real_home_is_hidden_around_workspace() {
    if !have_bwrap() {
        return;
    }
    let (_t, base) = scratch();
    let home = mkdir(&base.join("home"));
    fs::write(home.join(".credentials"), "token").unwrap();
    let ws = mkdir(&home.join("src/proj"));
    let p = SandboxPolicy::with_real_home(ws.clone(), Some(home.clone()));
    let script = format!(
        "cat '{h}/.credentials' && echo READ-CREDENTIALS
             ls -A \"$HOME\"
             echo scratch > \"$HOME/.cache-file\" && echo WROTE-HOME
             echo ok > built && echo WROTE-WS",
        h = s(&home)
    );
    let (out, _) = run_in(&p, &script);
    assert_eq!(lines(&out), ["src", "WROTE-HOME", "WROTE-WS"]);
    assert!(!home.join(".cache-file").exists());
    assert!(ws.join("built").exists());
}

/// A hidden file reads as empty (it is /dev/null) and cannot be replaced.
#[test]
fn hidden_file_reads_empty() {
    if !have_bwrap() {
        return;
    }
    let (_t, base) = scratch();
    let ws = mkdir(&base.join("ws"));
    let secret = ws.join("token.json");
    fs::write(&secret, "secret").unwrap();
    let mut p = policy(&ws);
    p.hide = vec![secret.clone()];
    let script = format!(
        "echo \"[$(cat '{f}')]\"
             echo x > '{f}'; cat '{f}'",
        f = s(&secret)
    );
    let (out, _) = run_in(&p, &script);
    assert_eq!(lines(&out), ["[]"]);
    assert_eq!(fs::read_to_string(&secret).unwrap(), "secret");
}

/// Another candidate's workspace next to ours is neither writable nor
/// readable: nothing of the host shows that is not bound.
#[test]
fn sibling_workspace_is_not_writable() {
    if !have_bwrap() {
        return;
    }
    let (_t, base) = scratch();
    let ws = mkdir(&base.join("cand-1"));
    let other = mkdir(&base.join("cand-2"));
    fs::write(other.join("lib.rs"), "theirs").unwrap();
    let script = format!(
        "cat '{o}/lib.rs'; echo
             echo mine > '{o}/lib.rs' && echo WROTE-FILE
             touch '{o}/new' && echo CREATED
             mkdir '{o}/dir' && echo MKDIR
             rm '{o}/lib.rs' && echo REMOVED
             mv '{o}' '{b}/moved' && echo MOVED
             true",
        o = s(&other),
        b = s(&base)
    );
    let (out, _) = run_in(&policy(&ws), &script);
    assert_eq!(lines(&out), [""]);
    assert_eq!(fs::read_to_string(other.join("lib.rs")).unwrap(), "theirs");
    assert_eq!(fs::read_dir(&other).unwrap().count(), 1);
}

/// read_only binds are visible but not writable (e.g. a login file placed in the
/// private home); writable binds land on the host.
#[test]
fn read_only_and_writable_binds() {
    if !have_bwrap() {
        return;
    }
    let (_t, base) = scratch();
    let ws = mkdir(&base.join("ws"));
    let login = base.join("login.json");
    fs::write(&login, "token").unwrap();
    let cache = mkdir(&base.join("cache"));
    let mut p = policy(&ws);
    p.read_only = vec![(login.clone(), p.home.join(".tool/login.json"))];
    p.writable = vec![(cache.clone(), PathBuf::from("/tmp/build-cache"))];
    let script = "cat \"$HOME/.tool/login.json\"; echo
             echo x >> \"$HOME/.tool/login.json\" && echo WROTE-LOGIN
             echo c > /tmp/build-cache/obj && echo WROTE-CACHE";
    let (out, _) = run_in(&p, script);
    assert_eq!(lines(&out), ["token", "WROTE-CACHE"]);
    assert_eq!(fs::read_to_string(&login).unwrap(), "token");
    assert_eq!(fs::read_to_string(cache.join("obj")).unwrap(), "c\n");
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
        eprintln!("not root: the other tests already ran bwrap unprivileged");
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

/// `find` over the sandbox's whole filesystem (not following links,
/// skipping /proc and /sys), printing every socket. Each entry is
/// `stat`ed: `find -type s` trusts the directory entry's type, which
/// for a socket bound onto a mount point is the placeholder's (a file).
const SOCKET_WALK: &str = "find / \\( -path /proc -o -path /sys \\) -prune -o -print0 2>/dev/null \
         | xargs -0 stat -c '%F|%n' 2>/dev/null | sed -n 's/^socket|//p'; echo WALKED";

/// No host socket is in the sandbox (the engines', systemd's, D-Bus's, the
/// user's agents'): the root is built up from an allowlist. A socket a bind
/// names (as `mounts:` does) is the one exception.
#[test]
fn no_host_socket_shows_unless_bound() {
    if !have_bwrap() {
        return;
    }
    let (_t, base) = scratch();
    let ws = mkdir(&base.join("ws"));
    let sock = base.join("agent.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let (out, _) = run_in(
        &SandboxPolicy::with_real_home(ws.clone(), real_home()),
        SOCKET_WALK,
    );
    assert_eq!(lines(&out), ["WALKED"], "sockets in the sandbox");
    let mut p = policy(&ws);
    p.read_only = vec![(sock.clone(), sock.clone())];
    let (out, _) = run_in(&p, SOCKET_WALK);
    assert_eq!(lines(&out), [s(&sock).as_str(), "WALKED"]);
}

/// Only the allowlisted system shows: no /home, /root, /var/lib or /srv of
/// the host, an /etc without shadow, and the root is read-only.
#[test]
fn only_the_system_allowlist_shows() {
    if !have_bwrap() {
        return;
    }
    let (_t, base) = scratch();
    let ws = mkdir(&base.join("ws"));
    let script = "ls -A /var; test -e /var/lib && echo VAR-LIB
             test -e /etc/shadow && echo SHADOW
             test -e /etc/passwd && echo PASSWD
             test -x /bin/sh && echo BIN-SH
             ls /root 2>/dev/null | head -1
             touch /new-top-level 2>/dev/null && echo WROTE-ROOT
             touch /etc/new 2>/dev/null && echo WROTE-ETC
             touch /dev/new 2>/dev/null && echo WROTE-DEV
             echo x > /run/x && echo x > /var/tmp/x && echo x > /dev/shm/x && echo PRIVATE-OK";
    let (out, _) = run_in(&policy(&ws), script);
    assert_eq!(
        lines(&out),
        ["run", "tmp", "PASSWD", "BIN-SH", "PRIVATE-OK"]
    );
}

/// Each private tmpfs holds at most `tmpfs_size` bytes.
#[test]
fn private_tmpfs_mounts_are_bounded() {
    if !have_bwrap() {
        return;
    }
    if !knows_size() {
        skip(
            "RASCAL_REQUIRE_SANDBOX_TOOLS",
            "this bwrap has no --size (bubblewrap 0.8 or later has it)",
        );
        return;
    }
    let (_t, base) = scratch();
    let ws = mkdir(&base.join("ws"));
    let mut p = policy(&ws);
    p.tmpfs_size = Some(4 << 20);
    let script = "for d in /tmp /var/tmp /run /dev/shm \"$HOME\"; do
               head -c 8388608 /dev/zero > \"$d/fill\" 2>/dev/null && echo \"$d UNBOUNDED\"
               echo \"$d $(($(wc -c < \"$d/fill\") / 1048576))\"
             done";
    let (out, _) = run_in(&p, script);
    assert_eq!(
        lines(&out),
        [
            "/tmp 4",
            "/var/tmp 4",
            "/run 4",
            "/dev/shm 4",
            "/tmp/rascal-home 4"
        ]
    );
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
