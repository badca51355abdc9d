//! The shell's side of notifications: writes the bell and the desktop
//! notification (`notify::bytes`) to the terminal, and runs the `notify:`
//! command in the background; a failing command comes back as an action
//! that puts one line in the status bar. What to send and when is
//! `notify`.

use super::action::Action;
use super::notify::{self, Desktop, Notice};
use rascal_core::config::notify::Notify;
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
                if let Err(e) = rascal_engine::run_notifier(&argv, &dir, n.env()).await {
                    let _ = back.send(Action::NotifyFailed(e.to_string()));
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::Occasion;

    fn notice() -> Notice {
        Notice {
            occasion: Occasion::Finished,
            run: "r-1".into(),
            candidate: None,
            title: "rascal: run finished".into(),
            message: "run r-1 finished (a PASS) — awaiting your decision".into(),
        }
    }

    fn written(config: Notify, desktop: Desktop) -> Vec<u8> {
        let out = Arc::new(Mutex::new(Vec::<u8>::new()));
        let n = Notifier::to(config, desktop, PathBuf::from("."), out.clone());
        let (tx, _rx) = mpsc::unbounded_channel();
        n.send(vec![notice()], &tx);
        let bytes = out.lock().unwrap().clone();
        bytes
    }

    #[test]
    fn bell_and_desktop_follow_the_config() {
        let both = Notify::default();
        assert_eq!(
            written(both.clone(), Desktop::Osc9),
            b"\x07\x1b]9;rascal: run finished: run r-1 finished (a PASS) \xe2\x80\x94 awaiting your decision\x07".to_vec()
        );
        let no_bell = Notify {
            bell: false,
            ..both.clone()
        };
        assert_eq!(
            written(no_bell, Desktop::Osc777),
            "\x1b]777;notify;rascal: run finished;run r-1 finished (a PASS) — awaiting your decision\x07"
                .as_bytes()
                .to_vec()
        );
        let no_desktop = Notify {
            desktop: false,
            ..both
        };
        assert_eq!(written(no_desktop, Desktop::Osc777), b"\x07".to_vec());
        assert!(written(Notify::off(), Desktop::Osc777).is_empty());
    }

    #[tokio::test]
    async fn a_failing_command_comes_back_as_a_status_line() {
        let dir = tempfile::tempdir().unwrap();
        let config = Notify {
            command: vec!["sh".into(), "-c".into(), "exit 3".into()],
            ..Notify::off()
        };
        let n = Notifier::to(
            config,
            Desktop::None,
            dir.path().to_path_buf(),
            Arc::new(Mutex::new(std::io::sink())),
        );
        let (tx, mut rx) = mpsc::unbounded_channel();
        n.send(vec![notice()], &tx);
        let action = rx.recv().await.unwrap();
        assert_eq!(
            action,
            Action::NotifyFailed("`sh` exited with code 3".into())
        );
        let mut app = crate::App::new(
            crate::RunMeta::default(),
            crate::Theme::named("dark", false).unwrap(),
            "me".into(),
        );
        crate::update::update(&mut app, action);
        assert_eq!(
            app.flash.as_deref(),
            Some("notify command failed: `sh` exited with code 3")
        );
    }
}
