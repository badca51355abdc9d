//! Who owns a sandbox cgroup (pid namespace, pid, start time), and
//! which cgroups a gone rascal left behind.

use std::sync::OnceLock;

/// Who owns a sandbox cgroup: the rascal process's pid namespace, pid and
/// start time (clock ticks after boot, from `/proc/PID/stat`). A pid alone
/// is not enough: it is reused, and it means another process in another
/// pid namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Owner {
    pub pidns: u64,
    pub pid: u32,
    pub start: u64,
}

impl Owner {
    /// This process.
    pub(crate) fn me() -> &'static Owner {
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
    pub(crate) fn prefix(&self) -> String {
        format!("rascal-{}-{}-{}-", self.pidns, self.pid, self.start)
    }

    /// The owner of a sandbox cgroup named `rascal-<pidns>-<pid>-<start>-<n>`.
    pub(crate) fn of(name: &str) -> Option<Owner> {
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
pub(super) fn start_time(pid: u32) -> Option<u64> {
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
pub(super) fn stale(name: &str) -> bool {
    let Some(owner) = Owner::of(name) else {
        return false;
    };
    let me = Owner::me();
    if owner.pidns != me.pidns || owner == *me {
        return false;
    }
    start_time(owner.pid) != Some(owner.start)
}
