//! Files beneath a root directory, never through a symlink. Every host-side
//! operation on a tree an agent wrote (a workspace, a check's copy, a
//! download, a run folder gc removes) goes through a [`Beneath`]: each path
//! is opened relative to the root's descriptor with `openat2(2)` and
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` where the kernel has it, and by
//! an `openat(2)` walk, component by component with `O_NOFOLLOW`, where it
//! does not (ENOSYS). A symlink anywhere on the way is an error (ELOOP or
//! ENOTDIR), never followed; links themselves can be made, listed and
//! removed. See docs/security.md.

#![allow(unsafe_code)]

use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once `openat2` answered ENOSYS: every later open walks instead.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// How paths are resolved (both refuse every symlink on the way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Walk {
    /// `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, falling back
    /// to [`Walk::Components`] when the kernel does not have it.
    Kernel,
    /// `openat` on each component with `O_NOFOLLOW`.
    Components,
}

/// What is at a path (the path itself: a symlink is a symlink).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Dir,
    File { len: u64, mode: u32 },
    Symlink,
    Other,
}

/// A directory whose paths are opened without following any symlink.
#[derive(Debug)]
pub struct Beneath {
    root: OwnedFd,
    shown: PathBuf,
    walk: Walk,
}

/// Whether `e` says a symlink or a non-directory stood on the way.
pub fn is_link_on_way(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ELOOP) | Some(libc::ENOTDIR) | Some(libc::EXDEV)
    )
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn cstr(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

/// `rel` as plain components: no `..`, no absolute path, no NUL.
fn parts(rel: &Path) -> io::Result<Vec<&OsStr>> {
    let mut out = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "`{}` is not a plain path beneath its directory (absolute or `..`)",
                        rel.display()
                    ),
                ))
            }
        }
    }
    Ok(out)
}

fn stat_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<Kind> {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor, a NUL-terminated name, a stat to fill.
    cvt(unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    })?;
    Ok(kind_of(&st))
}

fn kind_of(st: &libc::stat) -> Kind {
    match st.st_mode & libc::S_IFMT {
        libc::S_IFDIR => Kind::Dir,
        libc::S_IFREG => Kind::File {
            len: st.st_size as u64,
            mode: st.st_mode & 0o7777,
        },
        libc::S_IFLNK => Kind::Symlink,
        _ => Kind::Other,
    }
}

fn openat(dir: BorrowedFd<'_>, name: &CStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    // SAFETY: a valid descriptor and a NUL-terminated name.
    let fd = cvt(unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            mode as libc::c_uint,
        )
    })?;
    // SAFETY: a descriptor just opened, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn openat2(dir: BorrowedFd<'_>, path: &CStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_NOFOLLOW | libc::O_CLOEXEC) as u64;
    how.mode = if flags & libc::O_CREAT != 0 {
        mode as u64
    } else {
        0
    };
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
    // SAFETY: a valid descriptor, a NUL-terminated path and an open_how of
    // the size passed.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir.as_raw_fd(),
            path.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// The names in the directory `dir` (without `.` and `..`).
fn names(dir: BorrowedFd<'_>) -> io::Result<Vec<OsString>> {
    // SAFETY: duplicating a valid descriptor.
    let dup = cvt(unsafe { libc::fcntl(dir.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) })?;
    // SAFETY: `dup` is ours; fdopendir takes it over on success.
    let d = unsafe { libc::fdopendir(dup) };
    if d.is_null() {
        let e = io::Error::last_os_error();
        // SAFETY: fdopendir failed, so `dup` is still ours to close.
        unsafe { libc::close(dup) };
        return Err(e);
    }
    let mut out = Vec::new();
    // SAFETY: `d` is a valid DIR* until closedir below; each dirent is
    // read before the next readdir.
    unsafe {
        libc::rewinddir(d);
        loop {
            *libc::__errno_location() = 0;
            let ent = libc::readdir(d);
            if ent.is_null() {
                let errno = *libc::__errno_location();
                libc::closedir(d);
                if errno != 0 {
                    return Err(io::Error::from_raw_os_error(errno));
                }
                break;
            }
            let name = CStr::from_ptr((*ent).d_name.as_ptr()).to_bytes();
            if name != b"." && name != b".." {
                out.push(OsString::from_vec(name.to_vec()));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Empty the directory `dir` (its own descriptor), never following a link;
/// a directory without write or search permission is given it first.
fn clear(dir: BorrowedFd<'_>, depth: u32) -> io::Result<()> {
    if depth > 4096 {
        return Err(io::Error::other("more than 4096 directories deep"));
    }
    for name in names(dir)? {
        let c = cstr(&name)?;
        match stat_at(dir, &c) {
            Ok(Kind::Dir) => {
                let sub = openat(dir, &c, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
                // SAFETY: a valid descriptor of a directory.
                unsafe { libc::fchmod(sub.as_raw_fd(), 0o700) };
                clear(sub.as_fd(), depth + 1)?;
                drop(sub);
                // SAFETY: a valid descriptor and name.
                cvt(unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), libc::AT_REMOVEDIR) })?;
            }
            Ok(_) => {
                // SAFETY: a valid descriptor and name.
                cvt(unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) })?;
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Remove `path` with everything below it, opened beneath its parent (a
/// link at `path` or below it is removed, never followed). Nothing there
/// is not an error.
pub fn remove_path(path: &Path) -> io::Result<()> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a path rascal removes", path.display()),
        ));
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    match Beneath::open(parent) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(b) => b.remove_all(Path::new(name)),
    }
}

impl Beneath {
    /// The directory `root` (rascal's own path: it may itself be reached
    /// through links the user made; nothing below it is).
    pub fn open(root: &Path) -> io::Result<Beneath> {
        Beneath::open_with(root, Walk::Kernel)
    }

    /// [`Beneath::open`] resolving paths the way `walk` says.
    pub(crate) fn open_with(root: &Path, walk: Walk) -> io::Result<Beneath> {
        let c = cstr(root.as_os_str())?;
        // SAFETY: a NUL-terminated path.
        let fd = cvt(unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        })?;
        Ok(Beneath {
            // SAFETY: a descriptor just opened, owned by nobody else.
            root: unsafe { OwnedFd::from_raw_fd(fd) },
            shown: root.to_path_buf(),
            walk,
        })
    }

    /// The root's path (for messages).
    pub(crate) fn path(&self) -> &Path {
        &self.shown
    }

    /// How this one resolves paths in fact (`Kernel` only while the kernel
    /// has `openat2`).
    pub(crate) fn walk(&self) -> Walk {
        if self.walk == Walk::Kernel && NO_OPENAT2.load(Ordering::Relaxed) {
            Walk::Components
        } else {
            self.walk
        }
    }

    /// Open `rel` beneath the root with `flags` (`O_NOFOLLOW` always).
    fn open_rel(&self, rel: &[&OsStr], flags: i32, mode: u32) -> io::Result<OwnedFd> {
        if rel.is_empty() {
            return openat(self.root.as_fd(), c".", flags, mode);
        }
        if self.walk() == Walk::Kernel {
            let joined: PathBuf = rel.iter().collect();
            match openat2(self.root.as_fd(), &cstr(joined.as_os_str())?, flags, mode) {
                Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                    NO_OPENAT2.store(true, Ordering::Relaxed);
                }
                other => return other,
            }
        }
        let mut at: Option<OwnedFd> = None;
        for (i, name) in rel.iter().enumerate() {
            let dir = at.as_ref().map_or(self.root.as_fd(), |f| f.as_fd());
            let c = cstr(name)?;
            let next = if i + 1 == rel.len() {
                openat(dir, &c, flags, mode)?
            } else {
                openat(dir, &c, libc::O_RDONLY | libc::O_DIRECTORY, 0)?
            };
            at = Some(next);
        }
        Ok(at.expect("at least one component"))
    }

    /// The directory holding `rel`'s last component, and that name.
    fn parent(&self, rel: &Path) -> io::Result<(OwnedFd, CString)> {
        let p = parts(rel)?;
        let Some((last, dirs)) = p.split_last() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the root itself has no parent here",
            ));
        };
        let dir = self.open_rel(dirs, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
        Ok((dir, cstr(last)?))
    }

    /// The directory `rel` as a [`Beneath`] of its own.
    #[cfg(test)]
    fn dir(&self, rel: &Path) -> io::Result<Beneath> {
        let fd = self.open_rel(&parts(rel)?, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
        Ok(Beneath {
            root: fd,
            shown: self.shown.join(rel),
            walk: self.walk,
        })
    }

    /// What is at `rel` (a symlink there is `Symlink`).
    pub(crate) fn kind(&self, rel: &Path) -> io::Result<Kind> {
        if parts(rel)?.is_empty() {
            return Ok(Kind::Dir);
        }
        let (dir, name) = self.parent(rel)?;
        stat_at(dir.as_fd(), &name)
    }

    /// The regular file `rel`, open for reading.
    pub(crate) fn open_file(&self, rel: &Path) -> io::Result<File> {
        let fd = self.open_rel(&parts(rel)?, libc::O_RDONLY | libc::O_NONBLOCK, 0)?;
        let f = File::from(fd);
        if !f.metadata()?.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a regular file", self.shown.join(rel).display()),
            ));
        }
        Ok(f)
    }

    /// The content of the regular file `rel`.
    pub fn read(&self, rel: &Path) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        io::Read::read_to_end(&mut self.open_file(rel)?, &mut out)?;
        Ok(out)
    }

    /// The target of the symlink `rel`.
    pub(crate) fn read_link(&self, rel: &Path) -> io::Result<OsString> {
        let (dir, name) = self.parent(rel)?;
        let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
        // SAFETY: a valid descriptor, name and buffer of the length given.
        let n = unsafe {
            libc::readlinkat(
                dir.as_raw_fd(),
                name.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        buf.truncate(n as usize);
        Ok(OsString::from_vec(buf))
    }

    /// Write `bytes` as a new regular file at `rel` with permission bits
    /// `mode` (whatever was there that is not a directory is replaced; the
    /// parent must exist).
    pub(crate) fn write(&self, rel: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
        let mut f = self.create(rel, mode)?;
        io::Write::write_all(&mut f, bytes)
    }

    /// A new regular file at `rel` (see [`Beneath::write`]), open for writing.
    pub(crate) fn create(&self, rel: &Path, mode: u32) -> io::Result<File> {
        let (dir, name) = self.parent(rel)?;
        // SAFETY: a valid descriptor and name; removes a link, never its target.
        let r = unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::NotFound {
                return Err(e);
            }
        }
        let fd = openat(
            dir.as_fd(),
            &name,
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL,
            0o600,
        )?;
        // SAFETY: a valid descriptor (umask does not apply to fchmod).
        cvt(unsafe { libc::fchmod(fd.as_raw_fd(), mode & 0o7777) })?;
        Ok(File::from(fd))
    }

    /// A new regular file at `rel`, open for writing, never over anything
    /// already there (a file, a link, a directory: `AlreadyExists`); the
    /// parent must exist.
    pub fn create_new(&self, rel: &Path, mode: u32) -> io::Result<File> {
        let (dir, name) = self.parent(rel)?;
        let fd = openat(
            dir.as_fd(),
            &name,
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL,
            0o600,
        )?;
        // SAFETY: a valid descriptor (umask does not apply to fchmod).
        cvt(unsafe { libc::fchmod(fd.as_raw_fd(), mode & 0o7777) })?;
        Ok(File::from(fd))
    }

    /// A symlink at `rel` pointing at `target` (made, never followed).
    pub(crate) fn symlink(&self, target: &OsStr, rel: &Path) -> io::Result<()> {
        let (dir, name) = self.parent(rel)?;
        let t = cstr(target)?;
        // SAFETY: valid descriptor and NUL-terminated strings.
        cvt(unsafe { libc::symlinkat(t.as_ptr(), dir.as_raw_fd(), name.as_ptr()) })?;
        Ok(())
    }

    /// The directory `rel` (its parent must exist; one already there is fine).
    pub(crate) fn create_dir(&self, rel: &Path) -> io::Result<()> {
        let (dir, name) = self.parent(rel)?;
        // SAFETY: a valid descriptor and name.
        let r = unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o755) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::AlreadyExists && stat_at(dir.as_fd(), &name)? == Kind::Dir
            {
                return Ok(());
            }
            return Err(e);
        }
        Ok(())
    }

    /// Every directory of `rel`. A symlink or file on the way is an error,
    /// unless `replace`: then it is removed (the link itself) and a
    /// directory made in its place.
    pub fn create_dir_all(&self, rel: &Path, replace: bool) -> io::Result<()> {
        let p = parts(rel)?;
        for n in 1..=p.len() {
            let here: PathBuf = p[..n].iter().collect();
            match self.create_dir(&here) {
                Err(e) if replace && e.kind() == io::ErrorKind::AlreadyExists => {
                    self.remove_all(&here)?;
                    self.create_dir(&here)?;
                }
                other => other?,
            }
        }
        Ok(())
    }

    /// Remove the file or symlink `rel` (never what a link points at).
    pub(crate) fn remove_file(&self, rel: &Path) -> io::Result<()> {
        let (dir, name) = self.parent(rel)?;
        // SAFETY: a valid descriptor and name.
        cvt(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) })?;
        Ok(())
    }

    /// Remove the empty directory `rel` (a link there is not removed).
    pub fn remove_dir(&self, rel: &Path) -> io::Result<()> {
        let (dir, name) = self.parent(rel)?;
        // SAFETY: a valid descriptor and name.
        cvt(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) })?;
        Ok(())
    }

    /// Remove `rel` with everything below it (a symlink is removed, never
    /// followed). Nothing there is not an error.
    pub fn remove_all(&self, rel: &Path) -> io::Result<()> {
        if parts(rel)?.is_empty() {
            return self.clear();
        }
        let (dir, name) = match self.parent(rel) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            other => other?,
        };
        match stat_at(dir.as_fd(), &name) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
            Ok(Kind::Dir) => {
                let sub = openat(dir.as_fd(), &name, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
                // SAFETY: a valid descriptor of a directory.
                unsafe { libc::fchmod(sub.as_raw_fd(), 0o700) };
                clear(sub.as_fd(), 0)?;
                drop(sub);
                // SAFETY: a valid descriptor and name.
                cvt(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) })?;
                Ok(())
            }
            Ok(_) => {
                // SAFETY: a valid descriptor and name.
                cvt(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) })?;
                Ok(())
            }
        }
    }

    /// Empty the root directory itself.
    pub(crate) fn clear(&self) -> io::Result<()> {
        clear(self.root.as_fd(), 0)
    }

    /// The entries of the directory `rel`, sorted by name, each with its kind.
    pub(crate) fn list(&self, rel: &Path) -> io::Result<Vec<(OsString, Kind)>> {
        let dir = self.open_rel(&parts(rel)?, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
        let mut out = Vec::new();
        for name in names(dir.as_fd())? {
            match stat_at(dir.as_fd(), &cstr(&name)?) {
                Ok(k) => out.push((name, k)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// Every file and symlink below `rel` (relative to `rel`), sorted;
    /// directories are entered by descriptor, never through a link.
    pub(crate) fn files(&self, rel: &Path) -> io::Result<Vec<(PathBuf, Kind)>> {
        let mut out = Vec::new();
        let mut stack = vec![PathBuf::new()];
        while let Some(at) = stack.pop() {
            for (name, kind) in self.list(&rel.join(&at))? {
                let p = at.join(name);
                match kind {
                    Kind::Dir => stack.push(p),
                    Kind::File { .. } | Kind::Symlink => out.push((p, kind)),
                    Kind::Other => {}
                }
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Move `from` (beneath this root) to `to` beneath `other`'s root.
    pub(crate) fn move_to(&self, from: &Path, other: &Beneath, to: &Path) -> io::Result<()> {
        let (fd, fname) = self.parent(from)?;
        let (td, tname) = other.parent(to)?;
        // SAFETY: valid descriptors and names.
        cvt(unsafe {
            libc::renameat(
                fd.as_raw_fd(),
                fname.as_ptr(),
                td.as_raw_fd(),
                tname.as_ptr(),
            )
        })?;
        Ok(())
    }

    /// Move `from` to `to`, both beneath the root.
    #[cfg(test)]
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.move_to(from, self, to)
    }
}

#[cfg(test)]
mod tests;
