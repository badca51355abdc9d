//! `rascal doctor`, the sandbox part: whether bubblewrap works, how the
//! sandboxes' process and memory limits are enforced on this machine
//! (cgroup v2, cgroup v1, or the rlimit fallback), and a warning when
//! rascal runs as root, with what that would give a sandbox escape.

use rascal_exec::exec::limits::Mechanism;

/// The lines for this machine.
pub fn lines() -> Vec<String> {
    let euid = rascal_exec::exec::os::euid();
    let bwrap = rascal_exec::exec::sandbox::available().map(|p| p.display().to_string());
    lines_for(euid, bwrap, rascal_exec::exec::limits::mechanism())
}

/// The lines for a process of `euid`, bubblewrap as probed, and `limits`.
pub fn lines_for(
    euid: u32,
    bwrap: Result<String, rascal_exec::Error>,
    limits: &Mechanism,
) -> Vec<String> {
    let mut out = Vec::new();
    match bwrap {
        Ok(path) => out.push(format!(
            "sandbox: bubblewrap at {path}: agents and their checks see only the system \
             directories, a minimal /dev, private /tmp, /run and home, their workspace and \
             their `mounts:` (no host socket)"
        )),
        Err(e) => out.push(format!("sandbox: {e}")),
    }
    let note = if limits.is_cgroup() { "" } else { "warning: " };
    out.push(format!("{note}limits: {}", limits.describe()));
    if euid == 0 {
        out.push(
            "warning: rascal runs as root (uid 0). Inside a sandbox the capabilities are \
             dropped, but uid 0 still owns every root-owned file the sandbox shows; and a \
             process that escapes one (a kernel or bubblewrap bug, a socket or directory a \
             `mounts:` entry shows) is root on this machine: it can read and change every \
             file, start privileged containers through the Docker engine, and load kernel \
             modules. Under root the process limit's rlimit fallback binds nothing.\n  hint: \
             run rascal as an ordinary user (e.g. `useradd -m rascal`); add it to the docker \
             group only for the docker launcher (that group is root-equivalent too)"
                .into(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_warned_about_with_what_it_means() {
        let m = Mechanism::CgroupV1 {
            pids: "/sys/fs/cgroup/pids".into(),
            memory: "/sys/fs/cgroup/memory".into(),
        };
        let l = lines_for(0, Ok("/usr/bin/bwrap".into()), &m);
        assert!(l[0].contains("bubblewrap at /usr/bin/bwrap"), "{l:?}");
        assert!(l[1].starts_with("limits: cgroup v1"), "{l:?}");
        let root = &l[2];
        assert!(root.starts_with("warning: rascal runs as root"), "{root}");
        assert!(
            root.contains("escapes") && root.contains("ordinary user"),
            "{root}"
        );
        assert_eq!(lines_for(1000, Ok("/usr/bin/bwrap".into()), &m).len(), 2);
    }

    #[test]
    fn the_rlimit_fallback_is_a_warning_that_says_what_it_misses() {
        let m = Mechanism::Rlimit {
            why: "no cgroup v2 with controllers".into(),
        };
        let missing = rascal_exec::Error::ToolMissing {
            tool: "bwrap",
            message: "bubblewrap (bwrap) is not installed".into(),
        };
        let l = lines_for(1000, Err(missing), &m);
        assert_eq!(l[0], "sandbox: bubblewrap (bwrap) is not installed");
        assert!(
            l[1].starts_with("warning: limits: rlimits only (no cgroup v2"),
            "{l:?}"
        );
        assert!(l[1].contains("RLIMIT_NPROC"), "{l:?}");
    }
}
