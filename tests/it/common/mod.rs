//! Shared helpers for integration tests: real git repositories in temp
//! directories, and the real `rascal` binary.
#![allow(dead_code)]

pub mod deadline;
pub mod docker;
pub use rascal_tui::fixture;
pub mod kube_fake;
pub mod tmux;
pub mod wait;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct TestRepo {
    pub dir: tempfile::TempDir,
    pub repo: git2::Repository,
}

impl TestRepo {
    /// Where rascal keeps this repository's workspaces and run files
    /// (outside the repository).
    #[allow(dead_code)]
    pub fn files(&self) -> std::path::PathBuf {
        rascal_exec::git::workspace::files_dir(&self.repo)
    }

    /// A repository with `files` committed as the first commit.
    pub fn new(files: &[(&str, &str)]) -> TestRepo {
        deadline::watch();
        let dir = tempfile::Builder::new()
            .prefix("rascal-test-")
            .tempdir()
            .unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let t = TestRepo { dir, repo };
        for (p, c) in files {
            t.write(p, c);
        }
        t.commit_all("initial");
        t
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, path: &str, content: &str) {
        self.write_bytes(path, content.as_bytes());
    }

    pub fn write_bytes(&self, path: &str, content: &[u8]) {
        let p = self.path().join(path);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, content).unwrap();
    }

    /// Stage everything (incl. deletions) and commit; returns the commit id.
    pub fn commit_all(&self, msg: &str) -> git2::Oid {
        let mut index = self.repo.index().unwrap();
        index
            .add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.update_all(["*"].iter(), None).unwrap();
        index.write().unwrap();
        let tree = self.repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("test", "test@example.invalid").unwrap();
        let parents: Vec<git2::Commit> = self
            .repo
            .head()
            .ok()
            .and_then(|h| h.peel_to_commit().ok())
            .into_iter()
            .collect();
        let refs: Vec<&git2::Commit> = parents.iter().collect();
        self.repo
            .commit(Some("HEAD"), &sig, &sig, msg, &tree, &refs)
            .unwrap()
    }

    pub fn head(&self) -> git2::Oid {
        self.repo.head().unwrap().peel_to_commit().unwrap().id()
    }

    /// Run the rascal binary with `args` in this repository.
    pub fn rascal(&self, args: &[&str]) -> Output {
        rascal_in(self.path(), args)
    }
}

/// The real binary (and the calling test is watched from now: see
/// [`deadline`]).
pub fn bin() -> PathBuf {
    deadline::watch();
    PathBuf::from(env!("CARGO_BIN_EXE_rascal"))
}

pub fn rascal_in(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("running rascal");
    if out.status.code().is_none() {
        use std::os::unix::process::ExitStatusExt;
        eprintln!(
            "rascal {args:?} was killed by signal {:?}",
            out.status.signal()
        );
    }
    out
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// Start the rascal binary in `dir` in the background, output discarded.
pub fn spawn_rascal(dir: &Path, args: &[&str]) -> std::process::Child {
    Command::new(bin())
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starting rascal")
}

/// `spawn_rascal`, its stdout and stderr going to the file `log` (read it
/// to say why a background run failed).
pub fn spawn_rascal_logged(dir: &Path, args: &[&str], log: &Path) -> std::process::Child {
    let out = std::fs::File::create(log).expect("creating the log file");
    let err = out.try_clone().expect("cloning the log file");
    Command::new(bin())
        .args(args)
        .current_dir(dir)
        .stdout(out)
        .stderr(err)
        .spawn()
        .expect("starting rascal")
}

/// Wait (up to `secs`) until `rascal list` shows a running run; its id.
pub fn wait_for_running_run(t: &TestRepo, secs: u64) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        let list = stdout(&t.rascal(&["list"]));
        if let Some(l) = list.lines().find(|l| l.contains("running")) {
            return l.split_whitespace().next().unwrap().to_string();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "run never listed as running: {list}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Live (non-zombie) processes whose command line contains `marker`.
#[allow(dead_code)]
pub fn procs_with(marker: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        if String::from_utf8_lossy(&cmd).contains(marker) && !stat.contains(") Z ") {
            out.push(pid);
        }
    }
    out
}

/// Poll until no live process's command line holds `marker`, for at most
/// `secs` seconds (a generous deadline: the kernel tears a killed sandbox
/// down asynchronously, and a loaded machine is slow); the survivors if
/// some are still there then.
#[allow(dead_code)]
pub fn survivors_after(marker: &str, secs: u64) -> Vec<u32> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        let left = procs_with(marker);
        if left.is_empty() || std::time::Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Whether bubblewrap works here. Where it is missing the test says so and
/// stops — unless RASCAL_REQUIRE_BWRAP is set (CI sets it): then it fails.
pub fn bwrap() -> bool {
    let ok = rascal_exec::exec::sandbox::available().is_ok();
    if !ok {
        skip(
            "RASCAL_REQUIRE_BWRAP",
            "bubblewrap is not usable (apt-get install bubblewrap)",
        );
    }
    ok
}

/// Every skip goes through the workspace's one helper (crate tests use
/// it too).
#[allow(unused_imports)]
pub use rascal_exec::exec::skip::skip;

/// `.rascal/config.yaml` defining `command` agents, each a shell script
/// (name → script) run as `sh -c SCRIPT`.
pub fn command_agents(agents: &[(&str, &str)]) -> String {
    let mut y = String::from("agents:\n");
    for (name, script) in agents {
        y.push_str(&format!(
            "  {name}: {{ runtime: command, command: [\"sh\", \"-c\", {}] }}\n",
            serde_json::to_string(script).unwrap()
        ));
    }
    y
}

/// Deterministic pseudo-random string of `n` characters from `alphabet`
/// (test secrets that are not in any file).
pub fn rnd(seed: u64, n: usize, alphabet: &str) -> String {
    let chars: Vec<char> = alphabet.chars().collect();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            chars[(x % chars.len() as u64) as usize]
        })
        .collect()
}
