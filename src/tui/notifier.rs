//! The shell's side of notifications: writes the bell and the desktop
//! notification (`notify::bytes`) to the terminal, and runs the `notify:`
//! command in the background; a failing command comes back as an action
//! that puts one line in the status bar. What to send and when is
//! `notify`.

use super::action::Action;
use super::notify::{self, Desktop, Notice};
use crate::config::notify::Notify;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// Where the bytes go: the terminal, or a buffer in tests.
type Out = Arc<Mutex<dyn Write + Send>>;

pub struct Notifier {
    config: Notify,
    desktop: Desktop,
    /// Where the command runs: the repository's top folder.
    dir: PathBuf,
    out: Out,
}

impl Notifier {
    /// Sends nothing.
    pub fn off() -> Notifier {
        Notifier::to(
            Notify::off(),
            Desktop::None,
            PathBuf::from("."),
            Arc::new(Mutex::new(std::io::sink())),
        )
    }

    /// To the real terminal (stdout), the desktop notification chosen from
    /// the environment; the command runs in `dir`.
    pub fn terminal(config: Notify, dir: PathBuf) -> Notifier {
        let desktop = notify::desktop_of(|k| std::env::var(k).ok());
        Notifier::to(
            config,
            desktop,
            dir,
            Arc::new(Mutex::new(std::io::stdout())),
        )
    }

    /// To any writer (tests read what the terminal would get).
    pub fn to(config: Notify, desktop: Desktop, dir: PathBuf, out: Out) -> Notifier {
        Notifier {
            config,
            desktop,
            dir,
            out,
        }
    }

    /// Announce each notice: bytes to the terminal at once, the command in
    /// the background (its failure is sent back as `Action::NotifyFailed`).
    pub fn send(&self, notices: Vec<Notice>, back: &mpsc::UnboundedSender<Action>) {
        let desktop = if self.config.desktop {
            self.desktop
        } else {
            Desktop::None
        };
        for n in notices {
            let bytes = notify::bytes(&n, self.config.bell, desktop);
            if !bytes.is_empty() {
                if let Ok(mut out) = self.out.lock() {
                    let _ = out.write_all(&bytes).and_then(|_| out.flush());
                }
            }
            if self.config.command.is_empty() {
                continue;
            }
            let (argv, dir, back) = (self.config.command.clone(), self.dir.clone(), back.clone());
            tokio::spawn(async move {
                if let Err(e) = crate::exec::notify::run(&argv, &dir, n.env()).await {
                    let _ = back.send(Action::NotifyFailed(e));
                }
            });
        }
    }
}
