//! The few system calls the crates above make through rascal-exec, so
//! that they (and the tests) hold no `unsafe` of their own: who rascal
//! runs as, signalling a process and whether it exists, a note of SIGHUP
//! and SIGTERM, and whether a terminal hung up.

#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

/// The effective user id of this process.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// The real user and group ids of this process.
pub fn uid_gid() -> (u32, u32) {
    // SAFETY: getuid and getgid have no preconditions.
    unsafe { (libc::getuid(), libc::getgid()) }
}

/// Send signal `sig` to process `pid`; whether it was delivered.
pub fn signal(pid: i32, sig: i32) -> bool {
    // SAFETY: kill has no memory preconditions.
    unsafe { libc::kill(pid, sig) == 0 }
}

/// Whether a process `pid` exists (one of another user's counts).
pub fn process_alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks for existence.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

static TOLD_TO_STOP: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

extern "C" fn on_signal(_: libc::c_int) {
    // Only an atomic store: nothing else is safe in a signal handler.
    TOLD_TO_STOP.store(true, Ordering::SeqCst);
}

/// Note SIGHUP and SIGTERM from now on (once per process). A handler that
/// tokio installs later keeps calling this one, so the note survives it.
pub fn watch_signals() {
    INSTALL.call_once(|| {
        for sig in [libc::SIGHUP, libc::SIGTERM] {
            // SAFETY: a plain sigaction with a handler that only stores to
            // an atomic.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                sa.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
    });
}

/// The process was sent SIGHUP or SIGTERM (since `watch_signals`).
pub fn told_to_stop() -> bool {
    TOLD_TO_STOP.load(Ordering::SeqCst)
}

/// The terminal this process reads hung up (or cannot be opened any
/// more): stdin when it is a terminal, else /dev/tty, as crossterm reads.
pub fn terminal_hung_up() -> bool {
    // SAFETY: isatty and poll on a descriptor we own or on stdin; the
    // pollfd lives on the stack for the call.
    unsafe {
        if libc::isatty(libc::STDIN_FILENO) == 1 {
            return hung_up(libc::STDIN_FILENO);
        }
        let fd = libc::open(c"/dev/tty".as_ptr(), libc::O_RDONLY | libc::O_NOCTTY);
        if fd < 0 {
            return true;
        }
        let gone = hung_up(fd);
        libc::close(fd);
        gone
    }
}

/// `fd` reports a hang-up or an error, without waiting.
unsafe fn hung_up(fd: libc::c_int) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    if libc::poll(&mut p, 1, 0) < 0 {
        return false;
    }
    p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
}
