//! Process and memory limits of a sandbox, enforced where it is spawned.
//! Where rascal can create child cgroups (cgroup v2 with the `pids` and
//! `memory` controllers delegated to rascal's cgroup, or the `pids` and
//! `memory` hierarchies of cgroup v1), each sandbox gets a cgroup of its own
//! with `pids.max` and `memory.max`; the sandbox's first process joins it
//! before it runs anything, so nothing it forks escapes. Elsewhere the
//! fallback is rlimits, which bound much less (see [`Mechanism::Rlimit`]).
//! [`mechanism`] decides once per process; [`decide`] is the pure rule.

#![allow(unsafe_code)]

use crate::config::limits::Limits;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How this machine bounds a sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mechanism {
    /// A cgroup v2 per sandbox, under `parent` (rascal's own cgroup): the
    /// processes (`pids.max`) and memory (`memory.max`, tmpfs pages and
    /// the kernel's memory for the sandbox included) of all its processes
    /// together.
    CgroupV2 { parent: PathBuf, enable: Enable },
    /// A cgroup per sandbox in the v1 `pids` and `memory` hierarchies
    /// (`pids.max`, `memory.limit_in_bytes`): the same bounds as v2.
    CgroupV1 { pids: PathBuf, memory: PathBuf },
    /// No cgroup rascal may create (`why`): rlimits on the sandbox's first
    /// process, inherited by its children. `RLIMIT_NPROC` counts every
    /// process of the user (and is not enforced at all for root), and
    /// `RLIMIT_DATA` bounds each process's heap on its own, not their sum.
    /// The private tmpfs mounts stay bounded by their size.
    Rlimit { why: String },
}

/// What must happen before sandboxes' cgroups can be made under a v2 parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enable {
    /// The parent already gives `pids` and `memory` to its children.
    Ready,
    /// Turn them on in the parent's `cgroup.subtree_control` (possible in
    /// the root cgroup, which may hold processes).
    Controllers,
    /// rascal is alone in its cgroup: move it into a leaf of its own
    /// first (a cgroup with processes cannot give controllers to children).
    MoveSelf,
}

/// A cgroup v2 as rascal found it (the input of [`decide`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FoundV2 {
    /// rascal's own cgroup directory.
    pub dir: PathBuf,
    pub writable: bool,
    /// `cgroup.controllers`: what this cgroup may give its children.
    pub controllers: Vec<String>,
    /// `cgroup.subtree_control`: what it does give them.
    pub subtree: Vec<String>,
    /// The root of the hierarchy (exempt from "no processes in inner cgroups").
    pub is_root: bool,
    /// `cgroup.procs` lists only rascal.
    pub only_rascal: bool,
}

/// What rascal found of the host's cgroups.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    pub v2: Option<FoundV2>,
    /// rascal's cgroup directory in the v1 `pids` hierarchy, if writable.
    pub v1_pids: Option<PathBuf>,
    /// rascal's cgroup directory in the v1 `memory` hierarchy, if writable.
    pub v1_memory: Option<PathBuf>,
}

const WANTED: [&str; 2] = ["pids", "memory"];

/// The rule: cgroup v2 when rascal's cgroup has (or can turn on) `pids`
/// and `memory` for children, else both v1 hierarchies when writable, else
/// rlimits, saying why.
pub fn decide(found: &Found) -> Mechanism {
    let mut why = Vec::new();
    match &found.v2 {
        Some(v2) => {
            let has = |list: &[String]| WANTED.iter().all(|w| list.iter().any(|c| c == w));
            if !v2.writable {
                why.push(format!("{} is not writable", v2.dir.display()));
            } else if has(&v2.subtree) {
                return Mechanism::CgroupV2 {
                    parent: v2.dir.clone(),
                    enable: Enable::Ready,
                };
            } else if !has(&v2.controllers) {
                why.push(format!(
                    "cgroup v2 at {} does not delegate pids and memory",
                    v2.dir.display()
                ));
            } else if v2.is_root {
                return Mechanism::CgroupV2 {
                    parent: v2.dir.clone(),
                    enable: Enable::Controllers,
                };
            } else if v2.only_rascal {
                return Mechanism::CgroupV2 {
                    parent: v2.dir.clone(),
                    enable: Enable::MoveSelf,
                };
            } else {
                why.push(format!(
                    "rascal's cgroup {} holds other processes, so it cannot give pids and memory to children",
                    v2.dir.display()
                ));
            }
        }
        None => why.push("no cgroup v2 with controllers".into()),
    }
    match (&found.v1_pids, &found.v1_memory) {
        (Some(pids), Some(memory)) => {
            return Mechanism::CgroupV1 {
                pids: pids.clone(),
                memory: memory.clone(),
            }
        }
        _ => why.push("no writable cgroup v1 pids and memory hierarchies".into()),
    }
    Mechanism::Rlimit {
        why: why.join("; "),
    }
}

impl Mechanism {
    /// One line for `rascal doctor`.
    pub fn describe(&self) -> String {
        match self {
            Mechanism::CgroupV2 { parent, .. } => format!(
                "cgroup v2: each sandbox gets a cgroup under {} with pids.max and memory.max; \
                 should rascal be killed, a reaper process empties them",
                parent.display()
            ),
            Mechanism::CgroupV1 { pids, memory } => format!(
                "cgroup v1: each sandbox gets a cgroup in {} (pids.max) and {} \
                 (memory.limit_in_bytes); should rascal be killed, a reaper process empties them",
                pids.display(),
                memory.display()
            ),
            Mechanism::Rlimit { why } => format!(
                "rlimits only ({why}): RLIMIT_NPROC counts all of the user's processes and does \
                 not bind root, RLIMIT_DATA bounds each process's heap alone, not their sum; the \
                 private /tmp, /run, /dev/shm and home are size-limited tmpfs"
            ),
        }
    }

    pub fn is_cgroup(&self) -> bool {
        !matches!(self, Mechanism::Rlimit { .. })
    }
}

/// This machine's mechanism, decided (and prepared: controllers turned on,
/// rascal moved into a leaf) once per process. `RASCAL_LIMITS=rlimit`
/// forces the fallback (tests of it).
pub fn mechanism() -> &'static Mechanism {
    static M: OnceLock<Mechanism> = OnceLock::new();
    M.get_or_init(|| {
        if std::env::var("RASCAL_LIMITS").as_deref() == Ok("rlimit") {
            return Mechanism::Rlimit {
                why: "RASCAL_LIMITS=rlimit".into(),
            };
        }
        let m = decide(&probe());
        // Leftovers first: a dead rascal's cgroups are emptied before this
        // process makes its own.
        match prepare(&m).and_then(|()| {
            sweep(&m);
            trial(&m)
        }) {
            Ok(()) => m,
            Err(e) => Mechanism::Rlimit { why: e },
        }
    })
}

/// Read /proc/self/cgroup and /proc/self/mountinfo.
fn probe() -> Found {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut found = Found::default();
    for (fstype, mount_root, point, opts) in mounts(&mountinfo) {
        let path_in = |controller: Option<&str>| -> Option<PathBuf> {
            let line = cgroup.lines().find(|l| {
                let mut f = l.splitn(3, ':');
                let (_, ctrl) = (f.next(), f.next().unwrap_or(""));
                match controller {
                    None => ctrl.is_empty() && l.starts_with("0::"),
                    Some(c) => ctrl.split(',').any(|x| x == c),
                }
            })?;
            let path = line.splitn(3, ':').nth(2)?;
            let rel = Path::new(path).strip_prefix(&mount_root).ok()?;
            Some(Path::new(&point).join(rel))
        };
        if fstype == "cgroup2" {
            let Some(dir) = path_in(None) else { continue };
            let read = |f: &str| {
                std::fs::read_to_string(dir.join(f))
                    .unwrap_or_default()
                    .split_whitespace()
                    .map(String::from)
                    .collect::<Vec<_>>()
            };
            let controllers = read("cgroup.controllers");
            if controllers.is_empty() {
                continue;
            }
            let procs = read("cgroup.procs");
            found.v2 = Some(FoundV2 {
                writable: writable(&dir),
                subtree: read("cgroup.subtree_control"),
                is_root: dir == Path::new(&point) && mount_root == "/",
                only_rascal: procs == [std::process::id().to_string()],
                controllers,
                dir,
            });
        } else if fstype == "cgroup" {
            for (c, slot) in [
                ("pids", &mut found.v1_pids),
                ("memory", &mut found.v1_memory),
            ] {
                if opts.split(',').any(|o| o == c) {
                    if let Some(dir) = path_in(Some(c)).filter(|d| writable(d)) {
                        *slot = Some(dir);
                    }
                }
            }
        }
    }
    found
}

/// `(fstype, root, mount point, super options)` of each cgroup mount.
fn mounts(mountinfo: &str) -> Vec<(String, String, String, String)> {
    mountinfo
        .lines()
        .filter_map(|l| {
            let (pre, post) = l.split_once(" - ")?;
            let pre: Vec<&str> = pre.split(' ').collect();
            let post: Vec<&str> = post.split(' ').collect();
            let fstype = *post.first()?;
            (fstype == "cgroup" || fstype == "cgroup2").then(|| {
                (
                    fstype.to_string(),
                    pre.get(3).unwrap_or(&"/").to_string(),
                    pre.get(4).unwrap_or(&"").replace("\\040", " "),
                    post.get(2).unwrap_or(&"").to_string(),
                )
            })
        })
        .collect()
}

fn writable(dir: &Path) -> bool {
    let Ok(c) = CString::new(dir.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: a valid C string; access only reads it.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// Turn on the controllers (moving rascal into a leaf first if needed).
fn prepare(m: &Mechanism) -> Result<(), String> {
    let Mechanism::CgroupV2 { parent, enable } = m else {
        return Ok(());
    };
    if *enable == Enable::MoveSelf {
        let leaf = parent.join(format!("rascal-{}", std::process::id()));
        let _ = std::fs::create_dir(&leaf);
        std::fs::write(leaf.join("cgroup.procs"), std::process::id().to_string())
            .map_err(|e| format!("moving rascal into {}: {e}", leaf.display()))?;
    }
    if *enable != Enable::Ready {
        std::fs::write(parent.join("cgroup.subtree_control"), "+pids +memory").map_err(|e| {
            format!(
                "turning on pids and memory in {}/cgroup.subtree_control: {e}",
                parent.display()
            )
        })?;
    }
    Ok(())
}

/// Make one cgroup, start `sh -c :` in it the way a sandbox starts, and
/// remove it, so a setup where moving a process in is refused (no write
/// access to the common ancestor's `cgroup.procs`) falls back at once
/// instead of failing every sandbox.
fn trial(m: &Mechanism) -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    if !m.is_cgroup() {
        return Ok(());
    }
    let c = Cgroup::create(m, Limits::default())?;
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", ":"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: the hook only makes async-signal-safe calls (see before_exec).
    unsafe {
        cmd.pre_exec(before_exec(c.procs_files(), None));
    }
    let ran = cmd.status();
    // The shell is gone once `status` returns.
    c.remove_now();
    match ran {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("a trial process in a new cgroup exited with {s}")),
        Err(e) => Err(format!("cannot move a process into a new cgroup: {e}")),
    }
}

/// Empty and remove the cgroups of rascal processes that are gone (killed
/// before they or their reaper could): whatever still runs in one is a
/// sandbox that outlived its rascal.
fn sweep(m: &Mechanism) {
    let (parents, v2) = match m {
        Mechanism::CgroupV2 { parent, .. } => (vec![parent], true),
        Mechanism::CgroupV1 { pids, memory } => (vec![pids, memory], false),
        Mechanism::Rlimit { .. } => return,
    };
    for e in std::fs::read_dir(parents[0])
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if stale(&name) {
            let dirs = parents.iter().map(|p| p.join(&name)).collect();
            let left = Cgroup { dirs, v2 };
            for _ in 0..50 {
                left.kill_all();
                if left.pids().is_empty() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            left.remove_now();
        }
    }
    for parent in &parents[1..] {
        for e in std::fs::read_dir(parent).into_iter().flatten().flatten() {
            if stale(&e.file_name().to_string_lossy()) {
                // Fails (and is left) when it still has processes.
                let _ = std::fs::remove_dir(e.path());
            }
        }
    }
}

/// Who owns a sandbox cgroup: the rascal process's pid namespace, pid and
/// start time (clock ticks after boot, from `/proc/PID/stat`). A pid alone
/// is not enough: it is reused, and it means another process in another
/// pid namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub pidns: u64,
    pub pid: u32,
    pub start: u64,
}

impl Owner {
    /// This process.
    pub fn me() -> &'static Owner {
        static ME: OnceLock<Owner> = OnceLock::new();
        ME.get_or_init(|| {
            let pid = std::process::id();
            Owner {
                pidns: pid_namespace("self").unwrap_or(0),
                pid,
                start: start_time(pid).unwrap_or(0),
            }
        })
    }

    /// The prefix of its cgroups' names: `rascal-<pidns>-<pid>-<start>-`.
    pub fn prefix(&self) -> String {
        format!("rascal-{}-{}-{}-", self.pidns, self.pid, self.start)
    }

    /// The owner of a sandbox cgroup named `rascal-<pidns>-<pid>-<start>-<n>`.
    pub fn of(name: &str) -> Option<Owner> {
        let mut parts = name.strip_prefix("rascal-")?.split('-');
        let owner = Owner {
            pidns: parts.next()?.parse().ok()?,
            pid: parts.next()?.parse().ok()?,
            start: parts.next()?.parse().ok()?,
        };
        parts.next()?.parse::<u64>().ok()?;
        parts.next().is_none().then_some(owner)
    }
}

/// The inode of `/proc/<who>/ns/pid` (`pid:[4026531836]`).
fn pid_namespace(who: &str) -> Option<u64> {
    let link = std::fs::read_link(format!("/proc/{who}/ns/pid")).ok()?;
    let text = link.to_string_lossy();
    text.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok()
}

/// A process's start time (field 22 of `/proc/PID/stat`).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name (field 2) may hold spaces and parentheses: count after the
    // last `)`.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

/// A sandbox cgroup whose rascal is gone: its owner ran in this pid
/// namespace (elsewhere this process cannot tell, and leaves it alone),
/// and no process with that pid and start time exists. Not this process's
/// own, nor any name rascal did not make.
fn stale(name: &str) -> bool {
    let Some(owner) = Owner::of(name) else {
        return false;
    };
    let me = Owner::me();
    if owner.pidns != me.pidns || owner == *me {
        return false;
    }
    start_time(owner.pid) != Some(owner.start)
}

/// Why a sandbox was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    Pids,
    Memory,
}

impl Hit {
    /// `512 processes`, `memory 2 GiB`.
    pub fn reason(self, limits: &Limits) -> String {
        match self {
            Hit::Pids => limits.pids_reason(),
            Hit::Memory => limits.memory_reason(),
        }
    }
}

/// One sandbox's cgroup (one directory per hierarchy).
#[derive(Debug)]
pub struct Cgroup {
    /// v2: one directory; v1: the pids one, then the memory one.
    dirs: Vec<PathBuf>,
    v2: bool,
}

static SEQ: AtomicU64 = AtomicU64::new(0);

impl Cgroup {
    /// A fresh cgroup with `limits`.
    pub fn create(m: &Mechanism, limits: Limits) -> Result<Cgroup, String> {
        let name = format!(
            "{}{}",
            Owner::me().prefix(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let (dirs, v2) = match m {
            Mechanism::CgroupV2 { parent, .. } => (vec![parent.join(&name)], true),
            Mechanism::CgroupV1 { pids, memory } => {
                (vec![pids.join(&name), memory.join(&name)], false)
            }
            Mechanism::Rlimit { .. } => return Err("no cgroups here".into()),
        };
        // Should rascal die without removing it, the reaper empties it.
        let parents: Vec<PathBuf> = dirs
            .iter()
            .filter_map(|d| d.parent())
            .map(Path::to_path_buf)
            .collect();
        // Without one (no /bin/sh), `--die-with-parent` and the next
        // rascal's sweep are what is left.
        let _ = crate::exec::reaper::watch(&parents, &format!("{}*", Owner::me().prefix()));
        let cg = Cgroup { dirs, v2 };
        let made = (|| -> Result<(), String> {
            for d in &cg.dirs {
                std::fs::create_dir(d)
                    .map_err(|e| format!("creating cgroup {}: {e}", d.display()))?;
            }
            let set = |dir: &Path, file: &str, value: String| {
                std::fs::write(dir.join(file), &value)
                    .map_err(|e| format!("writing {value} to {}/{file}: {e}", dir.display()))
            };
            let (p, mem) = (&cg.dirs[0], cg.dirs.last().unwrap());
            set(p, "pids.max", limits.pids.to_string())?;
            if v2 {
                set(mem, "memory.max", limits.memory.to_string())?;
                // No swapping past the limit (absent without swap accounting).
                let _ = set(mem, "memory.swap.max", "0".into());
            } else {
                set(mem, "memory.limit_in_bytes", limits.memory.to_string())?;
                let _ = set(
                    mem,
                    "memory.memsw.limit_in_bytes",
                    limits.memory.to_string(),
                );
            }
            Ok(())
        })();
        match made {
            Ok(()) => Ok(cg),
            Err(e) => {
                cg.remove_now();
                Err(e)
            }
        }
    }

    /// The `cgroup.procs` files the sandbox's first process writes itself
    /// into (before exec, so all it forks is inside).
    pub fn procs_files(&self) -> Vec<CString> {
        self.dirs
            .iter()
            .filter_map(|d| {
                CString::new(d.join("cgroup.procs").as_os_str().as_encoded_bytes()).ok()
            })
            .collect()
    }

    /// Whether the sandbox ran into a limit: a fork refused (`pids.events`)
    /// or a process killed for memory (`oom_kill`).
    pub fn hit(&self) -> Option<Hit> {
        let count = |file: PathBuf, key: &str| {
            std::fs::read_to_string(file)
                .unwrap_or_default()
                .lines()
                .find_map(|l| l.strip_prefix(key)?.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        if count(self.dirs[0].join("pids.events"), "max ") > 0 {
            return Some(Hit::Pids);
        }
        let mem = self.dirs.last().unwrap();
        let file = if self.v2 {
            "memory.events"
        } else {
            "memory.oom_control"
        };
        (count(mem.join(file), "oom_kill ") > 0).then_some(Hit::Memory)
    }

    /// Its directories (one per hierarchy).
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    fn pids(&self) -> Vec<i32> {
        self.dirs
            .iter()
            .flat_map(|d| {
                std::fs::read_to_string(d.join("cgroup.procs"))
                    .unwrap_or_default()
                    .lines()
                    .filter_map(|l| l.trim().parse().ok())
                    // `0`: a member outside this pid namespace, never
                    // something to signal (kill(0) is this process group).
                    .filter(|&p: &i32| p > 0)
                    .collect::<Vec<i32>>()
            })
            .collect()
    }

    /// SIGKILL every process in the cgroup.
    pub fn kill_all(&self) {
        if self.v2 && std::fs::write(self.dirs[0].join("cgroup.kill"), "1").is_ok() {
            return;
        }
        for pid in self.pids() {
            // SAFETY: kill with a pid read from our own cgroup; ESRCH is fine.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }

    /// Kill what is left, wait (up to 5 s) until the cgroup is empty, and
    /// remove it.
    pub async fn remove(self) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            self.kill_all();
            if self.pids().is_empty() || Instant::now() > deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.remove_now();
    }

    fn remove_now(&self) {
        for d in self.dirs.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// What the sandbox's first process does before exec: join `procs` (write
/// `0`, "this process"), or under the fallback set the rlimits. Only
/// async-signal-safe calls: it runs between fork and exec.
pub fn before_exec(
    procs: Vec<CString>,
    rlimits: Option<Limits>,
) -> impl Fn() -> std::io::Result<()> + Send + Sync + 'static {
    move || {
        for f in &procs {
            // SAFETY: open/write/close on a valid C string and a local buffer.
            unsafe {
                let fd = libc::open(f.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let n = libc::write(fd, b"0".as_ptr().cast(), 1);
                let err = std::io::Error::last_os_error();
                libc::close(fd);
                if n != 1 {
                    return Err(err);
                }
            }
        }
        if let Some(l) = rlimits {
            for (what, value) in [(libc::RLIMIT_NPROC, l.pids), (libc::RLIMIT_DATA, l.memory)] {
                let lim = libc::rlimit {
                    rlim_cur: value as libc::rlim_t,
                    rlim_max: value as libc::rlim_t,
                };
                // SAFETY: setrlimit with a valid struct.
                if unsafe { libc::setrlimit(what, &lim) } != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2(subtree: &[&str], controllers: &[&str]) -> FoundV2 {
        FoundV2 {
            dir: "/sys/fs/cgroup/user.slice/x.scope".into(),
            writable: true,
            controllers: controllers.iter().map(|s| s.to_string()).collect(),
            subtree: subtree.iter().map(|s| s.to_string()).collect(),
            is_root: false,
            only_rascal: false,
        }
    }

    #[test]
    fn delegated_cgroup_v2_is_used_as_it_is() {
        let found = Found {
            v2: Some(v2(&["cpu", "memory", "pids"], &["cpu", "memory", "pids"])),
            ..Found::default()
        };
        assert_eq!(
            decide(&found),
            Mechanism::CgroupV2 {
                parent: "/sys/fs/cgroup/user.slice/x.scope".into(),
                enable: Enable::Ready
            }
        );
    }

    #[test]
    fn controllers_are_turned_on_in_the_root_or_when_rascal_is_alone() {
        let mut f = v2(&[], &["memory", "pids"]);
        f.is_root = true;
        let m = decide(&Found {
            v2: Some(f.clone()),
            ..Found::default()
        });
        assert!(matches!(
            m,
            Mechanism::CgroupV2 {
                enable: Enable::Controllers,
                ..
            }
        ));
        f.is_root = false;
        f.only_rascal = true;
        let m = decide(&Found {
            v2: Some(f.clone()),
            ..Found::default()
        });
        assert!(matches!(
            m,
            Mechanism::CgroupV2 {
                enable: Enable::MoveSelf,
                ..
            }
        ));
        // Shared with other processes: not rascal's to reorganise.
        f.only_rascal = false;
        let m = decide(&Found {
            v2: Some(f),
            ..Found::default()
        });
        let Mechanism::Rlimit { why } = m else {
            panic!("{m:?}")
        };
        assert!(why.contains("holds other processes"), "{why}");
    }

    #[test]
    fn cgroup_v1_when_v2_cannot_and_both_hierarchies_are_writable() {
        // This machine's shape: a hybrid layout, v2 with only hugetlb.
        let found = Found {
            v2: Some(v2(&[], &["hugetlb"])),
            v1_pids: Some("/sys/fs/cgroup/pids".into()),
            v1_memory: Some("/sys/fs/cgroup/memory/x".into()),
        };
        assert_eq!(
            decide(&found),
            Mechanism::CgroupV1 {
                pids: "/sys/fs/cgroup/pids".into(),
                memory: "/sys/fs/cgroup/memory/x".into()
            }
        );
        let only_pids = Found {
            v1_memory: None,
            ..found
        };
        let m = decide(&only_pids);
        let Mechanism::Rlimit { why } = &m else {
            panic!("{m:?}")
        };
        assert!(
            why.contains("does not delegate") && why.contains("v1"),
            "{why}"
        );
        assert!(m.describe().contains("RLIMIT_NPROC"));
    }

    #[test]
    fn read_only_cgroup_falls_back_to_rlimits() {
        let mut f = v2(&["memory", "pids"], &["memory", "pids"]);
        f.writable = false;
        let m = decide(&Found {
            v2: Some(f),
            ..Found::default()
        });
        let Mechanism::Rlimit { why } = m else {
            panic!()
        };
        assert!(why.contains("not writable"), "{why}");
        assert!(matches!(
            decide(&Found::default()),
            Mechanism::Rlimit { .. }
        ));
    }

    #[test]
    fn mountinfo_lines_give_cgroup_mounts() {
        let info =
            "35 25 0:30 / /sys/fs/cgroup/pids rw,relatime shared:14 - cgroup cgroup rw,pids\n\
                    36 25 0:31 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n\
                    22 1 8:1 / / rw - ext4 /dev/sda1 rw\n";
        let m = mounts(info);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].0, "cgroup");
        assert_eq!(m[0].2, "/sys/fs/cgroup/pids");
        assert_eq!(m[0].3, "rw,pids");
        assert_eq!(m[1].0, "cgroup2");
    }

    #[test]
    fn only_cgroups_of_gone_rascal_processes_are_stale() {
        let me = Owner::me();
        assert!(me.pidns > 0 && me.start > 0, "{me:?}");
        let name = |pidns: u64, pid: u32, start: u64| format!("rascal-{pidns}-{pid}-{start}-3");
        // No such process.
        assert!(stale(&name(me.pidns, 4194304, 7)));
        // This process's own.
        assert!(!stale(&format!("{}3", me.prefix())));
        // Its pid reused: pid 1 exists, but did not start at tick 1.
        assert!(stale(&name(me.pidns, 1, 1)));
        // pid 1 as it is: alive.
        let init = start_time(1).unwrap();
        assert!(!stale(&name(me.pidns, 1, init)));
        // Another pid namespace's: not this process's to judge.
        assert!(!stale(&name(me.pidns + 1, 4194304, 7)));
        // Not a sandbox's: a MoveSelf leaf, an older name, anything else.
        assert!(!stale("rascal-4194304999"));
        assert!(!stale("rascal-4194304999-3"));
        assert!(!stale("user.slice"));
        assert_eq!(
            Owner::of(&name(9, 8, 7)),
            Some(Owner {
                pidns: 9,
                pid: 8,
                start: 7
            })
        );
    }

    #[test]
    fn hits_name_the_limit() {
        let l = Limits {
            pids: 512,
            memory: 2 << 30,
        };
        assert_eq!(Hit::Pids.reason(&l), "512 processes");
        assert_eq!(Hit::Memory.reason(&l), "memory 2 GiB");
    }
}
