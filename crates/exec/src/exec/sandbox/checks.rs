//! Checking a policy's mounts before bwrap sees them: clean absolute
//! paths, one mount per destination and none on the sandbox's own, and
//! mount points bwrap can create.

use super::{s, Mount, SYSTEM_MOUNTS};
use crate::Error;
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// The destinations of the policy's own mounts: none on one of the
/// sandbox's own mount points, no two on one destination.
pub(super) fn distinct_destinations(
    mounts: &[Mount],
    system: &[Mount],
) -> Result<HashSet<PathBuf>, Error> {
    let mut dests = HashSet::new();
    for m in mounts {
        let reserved = SYSTEM_MOUNTS.iter().any(|s| m.dest == Path::new(s))
            || system.iter().any(|s| s.dest == m.dest)
            || m.dest.starts_with("/dev")
            || m.dest.starts_with("/proc");
        if reserved {
            return Err(Error::Sandbox(format!(
                "sandbox {} {} collides with one of the sandbox's own mounts (/, /dev, \
                 /proc, /etc, /tmp, /run, /var and the system directories)",
                m.what,
                m.dest.display()
            )));
        }
        if !dests.insert(m.dest.clone()) {
            return Err(Error::Sandbox(format!(
                "sandbox: two mounts on {} (the {} is one of them)",
                m.dest.display(),
                m.what
            )));
        }
    }
    Ok(dests)
}

/// Every mount point bwrap must create can be: none missing inside a
/// read-only mount (`mounts` sorted parents first).
pub(super) fn check_mount_points(mounts: &[Mount]) -> Result<(), Error> {
    for (i, m) in mounts.iter().enumerate() {
        // The deepest mount applied before that encloses it; none: the root tmpfs.
        let parent = mounts[..i]
            .iter()
            .rev()
            .find(|p| m.dest.starts_with(&p.dest));
        let creatable = parent.is_none_or(Mount::allows_mkdir_below);
        if !creatable && !m.dest.exists() {
            return Err(Error::Sandbox(format!(
                "sandbox {} {} does not exist on the host and lies inside {} (a read-only \
                 mount), so bwrap cannot create its mount point",
                m.what,
                m.dest.display(),
                parent.map_or("/".into(), |p| s(&p.dest)),
            )));
        }
    }
    Ok(())
}

/// Absolute, `..`-free, UTF-8, with `.` and duplicate slashes removed.
pub(super) fn clean(path: &Path, what: &str) -> Result<PathBuf, Error> {
    if !path.is_absolute() || path.to_str().is_none() {
        return Err(Error::Sandbox(format!(
            "sandbox {what} {} must be an absolute UTF-8 path",
            path.display()
        )));
    }
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::RootDir | Component::CurDir => {}
            Component::Normal(part) => out.push(part),
            Component::ParentDir | Component::Prefix(_) => {
                return Err(Error::Sandbox(format!(
                    "sandbox {what} {} must not contain `..`",
                    path.display()
                )));
            }
        }
    }
    Ok(out)
}
