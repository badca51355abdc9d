//! Process and memory limits of a sandbox, enforced where it is spawned.
//! Where rascal can create child cgroups (cgroup v2 with the `pids` and
//! `memory` controllers delegated to rascal's cgroup, or the `pids` and
//! `memory` hierarchies of cgroup v1), each sandbox gets a cgroup of its own
//! with `pids.max` and `memory.max`; the sandbox's first process joins it
//! before it runs anything, so nothing it forks escapes. Elsewhere the
//! fallback is rlimits, which bound much less (see [`Mechanism::Rlimit`]).
//! [`mechanism`] decides once per process; [`decide`] is the pure rule.

#![allow(unsafe_code)]

use rascal_core::config::limits::Limits;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

mod owner;

use owner::stale;
#[cfg(test)]
use owner::start_time;
pub(crate) use owner::Owner;

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
pub(crate) struct FoundV2 {
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
pub(crate) struct Found {
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
pub(crate) fn decide(found: &Found) -> Mechanism {
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
            Err(e) => Mechanism::Rlimit { why: e.to_string() },
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
fn prepare(m: &Mechanism) -> crate::error::Result<()> {
    let Mechanism::CgroupV2 { parent, enable } = m else {
        return Ok(());
    };
    if *enable == Enable::MoveSelf {
        let leaf = parent.join(format!("rascal-{}", std::process::id()));
        let _ = std::fs::create_dir(&leaf);
        std::fs::write(leaf.join("cgroup.procs"), std::process::id().to_string()).map_err(|e| {
            crate::Error::Sandbox(format!("moving rascal into {}: {e}", leaf.display()))
        })?;
    }
    if *enable != Enable::Ready {
        std::fs::write(parent.join("cgroup.subtree_control"), "+pids +memory").map_err(|e| {
            crate::Error::Sandbox(format!(
                "turning on pids and memory in {}/cgroup.subtree_control: {e}",
                parent.display()
            ))
        })?;
    }
    Ok(())
}

/// Make one cgroup, start `sh -c :` in it the way a sandbox starts, and
/// remove it, so a setup where moving a process in is refused (no write
/// access to the common ancestor's `cgroup.procs`) falls back at once
/// instead of failing every sandbox.
fn trial(m: &Mechanism) -> crate::error::Result<()> {
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
        Ok(s) => Err(crate::Error::Sandbox(format!(
            "a trial process in a new cgroup exited with {s}"
        ))),
        Err(e) => Err(crate::Error::Sandbox(format!(
            "cannot move a process into a new cgroup: {e}"
        ))),
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

/// Why a sandbox was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hit {
    Pids,
    Memory,
}

impl Hit {
    /// `512 processes`, `memory 2 GiB`.
    pub(crate) fn reason(self, limits: &Limits) -> String {
        match self {
            Hit::Pids => limits.pids_reason(),
            Hit::Memory => limits.memory_reason(),
        }
    }
}

/// One sandbox's cgroup (one directory per hierarchy).
#[derive(Debug)]
pub(crate) struct Cgroup {
    /// v2: one directory; v1: the pids one, then the memory one.
    dirs: Vec<PathBuf>,
    v2: bool,
}

static SEQ: AtomicU64 = AtomicU64::new(0);

impl Cgroup {
    /// A fresh cgroup with `limits`.
    pub(crate) fn create(m: &Mechanism, limits: Limits) -> crate::error::Result<Cgroup> {
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
            Mechanism::Rlimit { .. } => {
                return Err(crate::Error::Sandbox("no cgroups here".into()))
            }
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
        let made = (|| -> crate::error::Result<()> {
            for d in &cg.dirs {
                std::fs::create_dir(d).map_err(|e| {
                    crate::Error::Sandbox(format!("creating cgroup {}: {e}", d.display()))
                })?;
            }
            let set = |dir: &Path, file: &str, value: String| {
                std::fs::write(dir.join(file), &value).map_err(|e| {
                    crate::Error::Sandbox(format!(
                        "writing {value} to {}/{file}: {e}",
                        dir.display()
                    ))
                })
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
    pub(crate) fn procs_files(&self) -> Vec<CString> {
        self.dirs
            .iter()
            .filter_map(|d| {
                CString::new(d.join("cgroup.procs").as_os_str().as_encoded_bytes()).ok()
            })
            .collect()
    }

    /// Whether the sandbox ran into a limit: a fork refused (`pids.events`)
    /// or a process killed for memory (`oom_kill`).
    pub(crate) fn hit(&self) -> Option<Hit> {
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
    #[cfg(test)]
    pub(crate) fn dirs(&self) -> &[PathBuf] {
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
    pub(crate) fn kill_all(&self) {
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
    pub(crate) async fn remove(self) {
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
pub(crate) fn before_exec(
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
mod tests;
