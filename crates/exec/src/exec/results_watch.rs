//! Watching a run's results files: a file rascal reads results from is
//! written by the runner once, when it reports; code in the same process
//! that writes it again afterwards (an `atexit` hook, a thread that waits
//! for the runner to finish) rewrites the verdict. The directory of each
//! file is made before the run and watched with inotify from outside the
//! sandbox (the kernel queues the events; they are read after the run),
//! so what happened to the file is known whatever the process tree did:
//! after the file was first closed from writing, any further write,
//! close from writing, creation, rename onto it or removal means it was
//! rewritten after the runner reported. The directory itself being
//! removed or renamed away means the same.
//!
//! Not seen: a write through a hard link made in another directory before
//! the runner wrote (the mutated canaries cross-check such a run), and
//! launchers whose copies are not on this host's file system (containers
//! in copy mode, Kubernetes): there the file is read as written.

#![allow(unsafe_code)]

use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

/// A watch on the directories of a run's results files.
pub(crate) struct Watch {
    fd: OwnedFd,
    /// Watch descriptor → (directory as given, the file names in it).
    dirs: HashMap<i32, (String, Vec<String>)>,
    /// Watch descriptor of the copy's root → the first component of every
    /// watched directory.
    roots: HashMap<i32, Vec<String>>,
}

/// What the events of one file said.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Seen {
    /// It was closed after being opened for writing.
    written: bool,
    /// Something happened to it after that.
    again: bool,
}

const CHANGES: u32 = libc::IN_MODIFY
    | libc::IN_CLOSE_WRITE
    | libc::IN_CREATE
    | libc::IN_MOVED_TO
    | libc::IN_MOVED_FROM
    | libc::IN_DELETE
    | libc::IN_ATTRIB;

impl Watch {
    /// Make the directory of each of `files` (relative to `root`, the
    /// copy) and watch it; None when inotify is not available.
    pub(crate) fn start(root: &Path, files: &[String]) -> Option<Watch> {
        if files.is_empty() {
            return None;
        }
        // SAFETY: inotify_init1 takes flags only; a negative result is an error.
        let raw = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if raw < 0 {
            return None;
        }
        // SAFETY: `raw` is a fresh descriptor this function owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut w = Watch {
            fd,
            dirs: HashMap::new(),
            roots: HashMap::new(),
        };
        for f in files {
            if f.starts_with('/') || f.split('/').any(|c| c == "..") {
                continue;
            }
            let (dir, name) = f.rsplit_once('/').unwrap_or(("", f.as_str()));
            let full = root.join(dir);
            if !dir.is_empty() && std::fs::create_dir_all(&full).is_err() {
                continue;
            }
            let wd = w.add(&full, CHANGES)?;
            w.dirs
                .entry(wd)
                .or_insert_with(|| (dir.to_string(), Vec::new()))
                .1
                .push(name.to_string());
            if let Some(first) = dir.split('/').next().filter(|d| !d.is_empty()) {
                let wd = w.add(
                    root,
                    libc::IN_DELETE | libc::IN_MOVED_FROM | libc::IN_MOVED_TO | libc::IN_CREATE,
                )?;
                w.roots.entry(wd).or_default().push(first.to_string());
            }
        }
        Some(w)
    }

    fn add(&self, dir: &Path, mask: u32) -> Option<i32> {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
        // SAFETY: a valid descriptor and a NUL-terminated path.
        let wd = unsafe {
            libc::inotify_add_watch(self.fd.as_raw_fd(), c.as_ptr(), mask | libc::IN_ONLYDIR)
        };
        (wd >= 0).then_some(wd)
    }

    /// The results files (as given to [`Watch::start`]) that were written
    /// again after the runner first wrote them, or whose directory went
    /// away; read once the run has ended.
    pub(crate) fn rewritten(self) -> Vec<String> {
        let mut seen: HashMap<(i32, String), Seen> = HashMap::new();
        let mut dirs_gone: Vec<String> = Vec::new();
        let mut overflow = false;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            // SAFETY: reading into a buffer of the given length.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                break;
            }
            let mut at = 0usize;
            let header = std::mem::size_of::<libc::inotify_event>();
            while at + header <= n as usize {
                // SAFETY: the kernel wrote a whole event at `at`.
                let ev: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(buf.as_ptr().add(at).cast()) };
                let name_bytes = &buf[at + header..at + header + ev.len as usize];
                let name = String::from_utf8_lossy(name_bytes)
                    .trim_end_matches('\0')
                    .to_string();
                at += header + ev.len as usize;
                if ev.mask & libc::IN_Q_OVERFLOW != 0 {
                    overflow = true;
                    continue;
                }
                if let Some(firsts) = self.roots.get(&ev.wd) {
                    if firsts.contains(&name) {
                        dirs_gone.push(name);
                    }
                    continue;
                }
                if ev.mask & (libc::IN_DELETE_SELF | libc::IN_MOVE_SELF) != 0 {
                    if let Some((d, _)) = self.dirs.get(&ev.wd) {
                        dirs_gone.push(d.clone());
                    }
                    continue;
                }
                let s = seen.entry((ev.wd, name)).or_default();
                if s.written {
                    s.again = true;
                } else if ev.mask & libc::IN_CLOSE_WRITE != 0 {
                    s.written = true;
                }
            }
        }
        let mut out = Vec::new();
        for (wd, (dir, names)) in &self.dirs {
            let first = dir.split('/').next().unwrap_or("");
            for name in names {
                let path = if dir.is_empty() {
                    name.clone()
                } else {
                    format!("{dir}/{name}")
                };
                let again = seen.get(&(*wd, name.clone())).is_some_and(|s| s.again);
                let gone = dirs_gone.iter().any(|d| d == dir || d == first);
                if again || gone || overflow {
                    out.push(path);
                }
            }
        }
        out.sort();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write(path: &Path, text: &str) {
        let mut f = std::fs::File::create(path).unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }

    #[test]
    fn a_file_written_once_is_not_rewritten_and_one_written_again_is() {
        let d = tempfile::tempdir().unwrap();
        let files = vec![".rascal-results/results".to_string()];
        let file = d.path().join(".rascal-results/results");
        // Once, after a removal of a stale one: as a runner writes it.
        let w = Watch::start(d.path(), &files).unwrap();
        let _ = std::fs::remove_file(&file);
        write(&file, "<testsuite/>");
        let _ = std::fs::read(&file).unwrap();
        assert!(w.rewritten().is_empty());
        // Written again after the runner closed it (an atexit hook).
        let w = Watch::start(d.path(), &files).unwrap();
        std::fs::remove_file(&file).unwrap();
        write(&file, "<testsuite/>");
        write(&file, "<testsuite>forged</testsuite>");
        assert_eq!(w.rewritten(), files);
        // Replaced by a rename onto it.
        let w = Watch::start(d.path(), &files).unwrap();
        write(&file, "<testsuite/>");
        write(&d.path().join(".rascal-results/other"), "forged");
        std::fs::rename(d.path().join(".rascal-results/other"), &file).unwrap();
        assert_eq!(w.rewritten(), files);
        // Its directory moved away and made again.
        let w = Watch::start(d.path(), &files).unwrap();
        write(&file, "<testsuite/>");
        std::fs::rename(d.path().join(".rascal-results"), d.path().join("moved")).unwrap();
        std::fs::create_dir(d.path().join(".rascal-results")).unwrap();
        write(&file, "forged");
        assert_eq!(w.rewritten(), files);
    }

    #[test]
    fn a_file_at_the_root_is_watched_too() {
        let d = tempfile::tempdir().unwrap();
        let files = vec!["junit.xml".to_string()];
        let w = Watch::start(d.path(), &files).unwrap();
        write(&d.path().join("junit.xml"), "a");
        write(&d.path().join("unrelated"), "b");
        write(&d.path().join("unrelated"), "c");
        assert!(w.rewritten().is_empty());
        let w = Watch::start(d.path(), &files).unwrap();
        write(&d.path().join("junit.xml"), "a");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(d.path().join("junit.xml"))
            .unwrap();
        f.write_all(b"more").unwrap();
        drop(f);
        assert_eq!(w.rewritten(), files);
    }
}
