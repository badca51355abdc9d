//! Finding bubblewrap, and checking once that it can build a sandbox here.

use crate::Error;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Error returned by [`available`] when bwrap cannot be found.
pub(crate) const INSTALL_HINT: &str =
    "bubblewrap (bwrap) is not installed: apt-get install bubblewrap \
     (or set `sandbox: none` on the agent to run it unsandboxed)";

/// Where common distributions install bwrap, tried after `$PATH`.
const FALLBACK_LOCATIONS: &[&str] = &[
    "/usr/bin/bwrap",
    "/usr/local/bin/bwrap",
    "/bin/bwrap",
    "/run/current-system/sw/bin/bwrap",
];

fn is_executable(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Finds bwrap on `$PATH`, then in common install locations. Cached.
pub(crate) fn bwrap_path() -> Option<PathBuf> {
    static PATH: OnceLock<Option<PathBuf>> = OnceLock::new();
    PATH.get_or_init(|| {
        // `RASCAL_BWRAP=PATH` names the program (an empty value or a path
        // that is not executable: as if bubblewrap were not installed).
        if let Some(given) = std::env::var_os("RASCAL_BWRAP") {
            let p = PathBuf::from(given);
            return is_executable(&p).then_some(p);
        }
        let on_path = std::env::var_os("PATH")
            .into_iter()
            .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join("bwrap"));
        on_path
            .chain(FALLBACK_LOCATIONS.iter().map(PathBuf::from))
            .find(|p| is_executable(p))
    })
    .clone()
}

/// Whether this bwrap knows `--size` (bubblewrap 0.6 and later). Older ones
/// get unsized tmpfs mounts (a cgroup's memory limit still counts their
/// pages; the rlimit fallback then leaves them bounded only by the kernel's
/// default, half the RAM).
pub fn knows_size() -> bool {
    static KNOWS: OnceLock<bool> = OnceLock::new();
    *KNOWS.get_or_init(|| {
        bwrap_path()
            .and_then(|b| {
                Command::new(b)
                    .arg("--help")
                    .stdin(Stdio::null())
                    .output()
                    .ok()
            })
            .is_some_and(|o| {
                String::from_utf8_lossy(&o.stdout).contains("--size")
                    || String::from_utf8_lossy(&o.stderr).contains("--size")
            })
    })
}

/// Ok(path of bwrap) when bwrap is installed **and** can build a sandbox with the
/// namespaces [`SandboxPolicy::wrap`] uses. It probes once per process with
/// `bwrap --ro-bind / / … true`, because some kernels or AppArmor setups forbid
/// unprivileged user namespaces. Err is one line to show the user:
/// [`Error::ToolMissing`] when bwrap is not installed, [`Error::Sandbox`]
/// when it cannot build a sandbox here.
pub fn available() -> Result<PathBuf, Error> {
    static AVAILABLE: OnceLock<Result<PathBuf, Error>> = OnceLock::new();
    match AVAILABLE.get_or_init(|| probe(bwrap_path())) {
        Ok(path) => Ok(path.clone()),
        Err(e) => Err(e.again()),
    }
}

pub(super) fn probe(bwrap: Option<PathBuf>) -> Result<PathBuf, Error> {
    let bwrap = bwrap.ok_or_else(|| Error::ToolMissing {
        tool: "bwrap",
        message: INSTALL_HINT.to_string(),
    })?;
    let fail = |why: String| {
        Error::Sandbox(format!(
            "bubblewrap ({}) is installed but cannot create a sandbox here ({why}); the kernel \
             may forbid unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, \
             or kernel.apparmor_restrict_unprivileged_userns=0) (or set `sandbox: none` on the \
             agent to run it unsandboxed)",
            bwrap.display()
        ))
    };
    // The probe builds its root the way the sandbox does (a tmpfs and the
    // system directories), not by binding the whole of `/`: a recursive
    // bind of `/` also remounts whatever else is mounted at that moment (a
    // container's overlay coming or going), and fails with it.
    let mut child = Command::new(&bwrap)
        .args([
            "--tmpfs",
            "/",
            "--ro-bind-try",
            "/usr",
            "/usr",
            "--ro-bind-try",
            "/bin",
            "/bin",
            "--ro-bind-try",
            "/lib",
            "/lib",
            "--ro-bind-try",
            "/lib64",
            "/lib64",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-net",
            "--unshare-cgroup-try",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--",
            "true",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("cannot run it: {e}")))?;
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(fail("the probe `bwrap ... true` hung for 10 s".to_string()));
            }
            Err(e) => return Err(fail(format!("waiting for it failed: {e}"))),
        }
    };
    if status.success() {
        return Ok(bwrap);
    }
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = pipe.read_to_string(&mut stderr);
    }
    let first = stderr.lines().next().unwrap_or("").trim();
    Err(fail(if first.is_empty() {
        format!("`bwrap ... true` exited with {status}")
    } else {
        first.to_string()
    }))
}
