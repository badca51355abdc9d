//! Unit tests of `sandbox`.

use super::*;
use crate::exec::skip::skip;
use std::fs;
use std::process::Output;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;

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

mod filesystem;
mod processes;
