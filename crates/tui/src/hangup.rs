//! Whether the TUI's terminal is gone: it was closed (the terminal
//! emulator or the tmux session ended: the tty hangs up) or rascal was told
//! to stop (SIGHUP, SIGTERM). crossterm's reader, once the tty hangs up
//! while it waits, loops forever inside its own `poll` (a read of a hung-up
//! tty fails or reads nothing, and it retries), so a screen cannot notice
//! from its input loop: a watcher thread asks instead. A run's screen is
//! told to quit (and stops its candidates, their sandboxes with them); the
//! home screen, which holds nothing to stop, ends the process.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

/// The home screen is reading the terminal (nothing to stop if it is gone).
static HOME_SHOWING: AtomicBool = AtomicBool::new(false);
static HOME_WATCH: Once = Once::new();
/// How often the watchers look.
const EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// Note SIGHUP and SIGTERM from now on (once per process). A handler that
/// tokio installs later for the run's screen keeps calling this one, so the
/// note survives the run's screen (the home screen after it, too).
pub fn watch_signals() {
    rascal_engine::watch_signals();
}

/// The process was sent SIGHUP or SIGTERM (since `watch_signals`).
pub fn told_to_stop() -> bool {
    rascal_engine::told_to_stop()
}

/// The terminal the TUI reads hung up (or cannot be opened any more), or
/// the process was told to stop. The TUI reads keys from stdin when it is
/// a terminal, else from /dev/tty, as crossterm does.
pub fn terminal_gone() -> bool {
    told_to_stop() || rascal_engine::terminal_hung_up()
}

/// Call `gone` (once) from a watcher thread when the terminal is gone;
/// the watcher ends by itself when `done` says so.
pub fn watch(done: impl Fn() -> bool + Send + 'static, gone: impl FnOnce() + Send + 'static) {
    std::thread::spawn(move || loop {
        if done() {
            return;
        }
        if terminal_gone() {
            return gone();
        }
        std::thread::sleep(EVERY);
    });
}

/// While the returned guard lives, the home screen reads the terminal: a
/// closed terminal ends the process (exit 129, as a hang-up would).
pub fn home_showing() -> HomeShowing {
    HOME_WATCH.call_once(|| {
        std::thread::spawn(|| loop {
            // No terminal left to restore: just end.
            if HOME_SHOWING.load(Ordering::SeqCst) && terminal_gone() {
                std::process::exit(129);
            }
            std::thread::sleep(EVERY);
        });
    });
    HOME_SHOWING.store(true, Ordering::SeqCst);
    HomeShowing
}

/// See `home_showing`.
pub struct HomeShowing;

impl Drop for HomeShowing {
    fn drop(&mut self) {
        HOME_SHOWING.store(false, Ordering::SeqCst);
    }
}
