//! The reaper: a small process that outlives rascal to empty rascal's
//! sandbox cgroups when rascal dies without doing it itself (SIGKILL, a
//! crash, an OOM kill). bubblewrap's `--die-with-parent` is the first line,
//! but it is a `PR_SET_PDEATHSIG` chain through two bwrap processes, and a
//! pid namespace's init has been seen to outlive it, reparented to pid 1
//! with the agent's processes under it. The cgroup does not depend on that
//! chain: everything the sandbox forked is in it (see `exec::limits`), so
//! killing its members ends the sandbox, however the processes were
//! (re)parented.
//!
//! rascal starts the reaper once, the first time it creates a sandbox
//! cgroup, with the read end of a pipe as its stdin. rascal keeps the write
//! end (close-on-exec, so no sandbox inherits it) and never writes to it:
//! the pipe reaches end-of-file only when every copy of the write end is
//! closed, which is when rascal's process has ended, however it ended. Then
//! the reaper kills every process in this rascal's cgroups
//! (`rascal-<pidns>-<pid>-<start>-*` under each hierarchy's parent: see
//! `exec::limits::Owner`), waits until they are
//! empty, and removes them. When rascal exits normally its cgroups are gone
//! already and the reaper finds nothing to do.
//!
//! The reaper is `/bin/sh` running a fixed script, not a fork of rascal:
//! forking a multi-threaded process allows only async-signal-safe work in the
//! child, and the reaper's work (reading directories, parsing pids) is not,
//! while re-executing rascal's own binary is not possible from a test binary
//! or a library user. It ignores the terminal's interrupt, hangup and
//! terminate signals, so a Ctrl-C that ends rascal does not end the reaper
//! before its work is done.

#![allow(unsafe_code)]

use std::path::PathBuf;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::OnceLock;

/// The script: wait for end-of-file on stdin, then empty and remove each
/// cgroup whose name matches a glob (arguments: the glob,
/// `rascal-<pidns>-<pid>-<start>-*`,
/// then the hierarchies' parent directories; the first is the one whose
/// `cgroup.procs` lists the sandbox's processes). Up to 10 s of kill rounds, for processes that
/// fork while being killed.
const SCRIPT: &str = r#"
trap '' INT HUP TERM QUIT
while read -r _; do :; done
names=$1; shift
first=$1
for c in "$first"/$names; do
  [ -d "$c" ] || continue
  n=0
  while [ $n -lt 100 ]; do
    [ -e "$c/cgroup.kill" ] && echo 1 > "$c/cgroup.kill" 2>/dev/null
    left=
    while read -r p; do
      # 0: a member outside this pid namespace (kill 0 is our own group).
      [ "$p" -gt 0 ] 2>/dev/null || continue
      if [ -e "$c/cgroup.kill" ]; then left=1; else kill -9 "$p" 2>/dev/null && left=1; fi
    done < "$c/cgroup.procs"
    [ -z "$left" ] && break
    sleep 0.1 2>/dev/null || sleep 1
    n=$((n + 1))
  done
done
for d in "$@"; do
  for c in "$d"/$names; do
    [ -d "$c" ] && rmdir "$c" 2>/dev/null
  done
done
exit 0
"#;

/// The write end of the reaper's stdin, kept for the life of the process.
static WATCH: OnceLock<Option<ChildStdin>> = OnceLock::new();

/// Start the reaper for this process's cgroups — those named by the glob
/// `names` under `parents` (each hierarchy's parent directory, the one
/// listing processes first) — once. A reaper that cannot start leaves
/// `--die-with-parent` and the next rascal's sweep; the error is returned
/// for the caller to report.
pub(crate) fn watch(parents: &[PathBuf], names: &str) -> Result<(), crate::Error> {
    let mut failed = None;
    WATCH.get_or_init(|| match start(parents, names) {
        Ok(stdin) => Some(stdin),
        Err(e) => {
            failed = Some(e);
            None
        }
    });
    failed.map_or(Ok(()), Err)
}

fn start(parents: &[PathBuf], names: &str) -> Result<ChildStdin, crate::Error> {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(SCRIPT)
        .arg("rascal-reaper")
        .arg(names)
        .args(parents)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // Its own process group: a signal rascal's group gets is not its.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().map_err(|e| {
        crate::Error::Sandbox(format!("cannot start the cgroup reaper (/bin/sh): {e}"))
    })?;
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| crate::Error::Sandbox("the reaper has no stdin".into()))?;
    // Nobody waits for it: it outlives rascal by design. A thread reaps it
    // should it end early (it only does on end-of-file, i.e. never while
    // rascal lives), so it never lingers as a zombie.
    std::thread::Builder::new()
        .name("rascal-reaper-wait".into())
        .spawn(move || {
            let _ = child.wait();
        })
        .map_err(|e| crate::Error::Sandbox(format!("cannot watch the cgroup reaper: {e}")))?;
    Ok(stdin)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// The script itself, against plain directories standing in for cgroups
    /// (a `cgroup.procs` file listing a real process): on end-of-file it
    /// kills the listed process and removes the directories of the named
    /// pid only.
    #[test]
    fn on_end_of_file_the_script_kills_the_listed_processes_and_removes_their_cgroups() {
        let root = tempfile::tempdir().unwrap();
        let (pids, mem) = (root.path().join("pids"), root.path().join("memory"));
        let mut victim = Command::new("sleep").arg("300").spawn().unwrap();
        for parent in [&pids, &mem] {
            for name in ["rascal-4242-0", "rascal-4243-0"] {
                std::fs::create_dir_all(parent.join(name)).unwrap();
            }
        }
        // A plain directory cannot be removed while it holds files; the
        // real cgroup.procs is a kernel file. Stand-in: procs in a file the
        // script reads, and no other files in the memory side.
        std::fs::write(
            pids.join("rascal-4242-0/cgroup.procs"),
            format!("{}\n", victim.id()),
        )
        .unwrap();
        std::fs::write(pids.join("rascal-4243-0/cgroup.procs"), "").unwrap();
        let mut reaper = Command::new("/bin/sh")
            .arg("-c")
            .arg(SCRIPT)
            .arg("rascal-reaper")
            .arg("rascal-4242-*")
            .arg(&pids)
            .arg(&mem)
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert!(victim.try_wait().unwrap().is_none(), "killed before EOF");
        drop(reaper.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(s) = victim.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "the listed process lived on");
            std::thread::sleep(Duration::from_millis(20));
        };
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        reaper.wait().unwrap();
        // The memory side (empty) of the dead rascal is removed; the other
        // rascal's cgroups are not touched.
        assert!(!mem.join("rascal-4242-0").exists());
        assert!(mem.join("rascal-4243-0").exists());
        assert!(pids.join("rascal-4243-0").exists());
    }

    /// The same on this machine's real cgroups (where rascal can make
    /// them): a process inside a sandbox cgroup of this process is killed,
    /// and the cgroup removed, once the script's stdin ends.
    #[test]
    fn on_real_cgroups_the_script_empties_and_removes_them() {
        use crate::exec::limits::{mechanism, Cgroup, Mechanism};
        use std::os::unix::process::CommandExt;
        let parents = match mechanism() {
            Mechanism::CgroupV2 { parent, .. } => vec![parent.clone()],
            Mechanism::CgroupV1 { pids, memory } => vec![pids.clone(), memory.clone()],
            Mechanism::Rlimit { why } => {
                crate::exec::skip::skip(
                    "RASCAL_REQUIRE_CGROUPS",
                    &format!("no cgroups here ({why})"),
                );
                return;
            }
        };
        let limits = rascal_core::config::limits::Limits::default();
        let cg = Cgroup::create(mechanism(), limits).unwrap();
        let mut cmd = Command::new("sleep");
        cmd.arg("301");
        // SAFETY: the hook only makes async-signal-safe calls.
        unsafe { cmd.pre_exec(crate::exec::limits::before_exec(cg.procs_files(), None)) };
        let mut victim = cmd.spawn().unwrap();
        let mut reaper = Command::new("/bin/sh")
            .arg("-c")
            .arg(SCRIPT)
            .arg("rascal-reaper")
            // Only this test's cgroup: other tests' sandboxes run alongside.
            .arg(cg.dirs()[0].file_name().unwrap())
            .args(&parents)
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        drop(reaper.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        while victim.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "the process in the cgroup lived on"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        reaper.wait().unwrap();
        assert!(cg.dirs().iter().all(|d| !d.exists()), "{:?}", cg.dirs());
    }
}
