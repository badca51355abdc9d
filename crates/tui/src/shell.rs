//! The imperative shell: terminal input and run events in, `update`, draw
//! when something changed (at most ~60 frames/s, nothing when idle), and
//! the effects `update` asks for (load a diff, send a decision, stop).

use super::action::Action;
use super::app::{App, RunMeta};
use super::decision::{author_in, Decision};
use super::draw::draw;
use super::keys::Key;
use super::theme::Theme;
use super::update::{update, Effect};
use crossterm::event::{Event as CtEvent, MouseEventKind};
use rascal_core::model::event::RunEvent;
use rascal_core::model::verdict::Layer;
use rascal_engine::pipeline::{Decided, PreparedRun, Session};
use rascal_engine::store::LogView;
use rascal_engine::RunHandle;
use ratatui::backend::Backend;
use ratatui::Terminal;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

mod background;
mod jump_out;
mod start;

use background::Background;
use jump_out::{copy, jump_out};
pub use start::{attach, for_loop, loop_channel, meta_of, run_interactive};

/// Shortest time between two frames (~60 frames/s).
pub const FRAME: Duration = Duration::from_millis(16);
/// Spinner and clock period while something runs.
pub const TICK: Duration = Duration::from_millis(120);
/// Run events folded per turn before input gets a look in.
const BATCH: usize = 4096;

/// Input from the terminal, already reduced to what the TUI uses.
#[derive(Debug, Clone, PartialEq)]
pub enum TermEvent {
    Key(Key),
    Click(u16, u16),
    Scroll(i32),
    Resize(u16, u16),
    /// SIGTERM/SIGHUP: stop and restore the terminal.
    Terminate,
}

impl TermEvent {
    pub fn from_crossterm(ev: CtEvent) -> Option<TermEvent> {
        match ev {
            CtEvent::Key(k) => Key::from_event(&k).map(TermEvent::Key),
            CtEvent::Mouse(m) => match m.kind {
                MouseEventKind::Down(_) => Some(TermEvent::Click(m.column, m.row)),
                MouseEventKind::ScrollUp => Some(TermEvent::Scroll(-3)),
                MouseEventKind::ScrollDown => Some(TermEvent::Scroll(3)),
                _ => None,
            },
            CtEvent::Resize(w, h) => Some(TermEvent::Resize(w, h)),
            _ => None,
        }
    }
}

/// A line-per-event trace of the TUI session, in the run directory (never
/// on the terminal).
#[derive(Clone, Default)]
pub struct Trace {
    path: Option<PathBuf>,
}

impl Trace {
    pub fn to(path: PathBuf) -> Trace {
        if let Some(p) = path.parent() {
            let _ = std::fs::create_dir_all(p);
        }
        Trace { path: Some(path) }
    }

    pub fn log(&self, msg: impl AsRef<str>) {
        if let Some(p) = &self.path {
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
            {
                let _ = writeln!(f, "{} {}", rascal_engine::store::now_ms(), msg.as_ref());
            }
        }
    }
}

/// Lets the shell stop reading the terminal while another program (an
/// editor, a shell) owns it: the input thread polls only while it holds
/// the lock and the gate is open, so `pause` returns once it has stopped.
#[derive(Clone, Default)]
pub struct InputGate(std::sync::Arc<(std::sync::atomic::AtomicBool, std::sync::Mutex<()>)>);

impl InputGate {
    fn paused(&self) -> bool {
        self.0 .0.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Close the gate and wait for the input thread's current poll to end.
    pub fn pause(&self) {
        self.0 .0.store(true, std::sync::atomic::Ordering::SeqCst);
        drop(self.0 .1.lock());
    }

    pub fn resume(&self) {
        self.0 .0.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The real terminal, for what goes past the TUI: handing it to an editor
/// or a shell, and writing the clipboard sequence.
pub struct Outside {
    pub gate: InputGate,
}

impl Outside {
    /// Suspend the TUI, run `argv` in `dir` on the terminal, and take the
    /// terminal back whatever happened.
    pub fn run(
        &self,
        argv: &[String],
        dir: &std::path::Path,
        env: &[(String, String)],
        banner: &str,
    ) -> Result<std::process::ExitStatus, crate::Error> {
        let Some((program, args)) = argv.split_first() else {
            return Err(crate::Error::Jump("nothing to run".into()));
        };
        self.gate.pause();
        super::terminal::restore();
        println!("{}", rascal_core::text::inert::terminal(banner));
        let status = std::process::Command::new(program)
            .args(args)
            .current_dir(dir)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .status();
        let back = super::terminal::resume();
        self.gate.resume();
        back?;
        status.map_err(|e| crate::Error::Jump(format!("`{program}`: {e}")))
    }

    /// Put `text` on the clipboard through the terminal (OSC 52).
    pub fn copy(&self, text: &str) -> std::io::Result<()> {
        let mut out = std::io::stdout();
        out.write_all(super::jump::osc52(text).as_bytes())?;
        out.flush()
    }
}

pub type Decider =
    Box<dyn Fn(&Decision, bool) -> Result<Option<RunEvent>, rascal_engine::Error> + Send>;

/// What the loop needs from the outside world.
pub struct Shell {
    /// The run as the engine reads and finishes it (from its `Session`):
    /// diffs, logs, previews, the finalize.
    pub run: RunHandle,
    pub cancel: CancellationToken,
    /// Where decisions go: to the live pipeline (`live`), else straight to
    /// the store; returns the recorded event when it does not come back
    /// through the run's event channel.
    pub decide: Decider,
    pub trace: Trace,
    /// The clock (injected so tests are deterministic).
    pub clock: fn() -> i64,
    /// The real terminal (None under a test backend: jumping out and the
    /// clipboard then say they are not available).
    pub outside: Option<Outside>,
    /// Bell, desktop notification and `notify:` command when the run needs
    /// the human (see `notify`).
    pub notifier: super::notifier::Notifier,
}

/// A run event with the time it happened when known (replayed from the
/// store); live events are stamped on arrival.
pub type Stamped = (RunEvent, Option<i64>);

/// A backend's error as an I/O error (ratatui backends each have their own
/// error type; the crossterm one is already `io::Error`).
fn backend_error<E: std::error::Error>(e: E) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

/// The event loop, generic over the backend. Returns when the user quits.
pub async fn run_loop<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    mut run_rx: mpsc::Receiver<Stamped>,
    mut term_rx: mpsc::UnboundedReceiver<TermEvent>,
    shell: &Shell,
) -> std::io::Result<()> {
    let (loaded_tx, mut loaded_rx) = mpsc::unbounded_channel::<Action>();
    let mut run_open = true;
    let mut last_draw: Option<Instant> = None;
    let size = terminal.size().map_err(backend_error)?;
    update(app, Action::Resize(size.width, size.height));
    let mut watch = super::notify::Watch::new((shell.clock)());
    loop {
        let now = Instant::now();
        if app.dirty && last_draw.is_none_or(|t| now.duration_since(t) >= FRAME) {
            terminal.draw(|f| draw(f, app)).map_err(backend_error)?;
            app.dirty = false;
            last_draw = Some(now);
        }
        if app.quit {
            return Ok(());
        }
        let wake = if app.dirty {
            last_draw.map(|t| t + FRAME).unwrap_or(now)
        } else if app.animating() {
            now + TICK
        } else {
            now + Duration::from_secs(3600)
        };
        tokio::select! {
            ev = run_rx.recv(), if run_open => match ev {
                Some((ev, t)) => {
                    let now = (shell.clock)();
                    update(app, Action::Run(Box::new(ev), t.unwrap_or(now)));
                    shell.notifier.send(watch.observe(&app.summary, t), &loaded_tx);
                    for _ in 0..BATCH {
                        match run_rx.try_recv() {
                            Ok((ev, t)) => {
                                update(app, Action::Run(Box::new(ev), t.unwrap_or(now)));
                                shell.notifier.send(watch.observe(&app.summary, t), &loaded_tx);
                            }
                            Err(_) => break,
                        }
                    }
                }
                None => run_open = false,
            },
            ev = term_rx.recv() => {
                let Some(ev) = ev else { return Ok(()) };
                let action = match ev {
                    TermEvent::Key(k) => {
                        shell.trace.log(format!("key {k:?}"));
                        super::commands::dispatch(app, k)
                    }
                    TermEvent::Click(x, y) => Some(Action::Click(x, y)),
                    TermEvent::Scroll(n) => Some(Action::Scroll(n)),
                    TermEvent::Resize(w, h) => {
                        let _ = terminal.autoresize();
                        Some(Action::Resize(w, h))
                    }
                    TermEvent::Terminate => Some(Action::ForceQuit),
                };
                if let Some(a) = action {
                    let fx = update(app, a);
                    for j in perform(app, fx, shell, &loaded_tx) {
                        jump_out(terminal, app, shell, j)?;
                    }
                }
            },
            a = loaded_rx.recv() => if let Some(a) = a { update(app, a); },
            _ = tokio::time::sleep_until(wake.into()) => {
                if app.animating() {
                    update(app, Action::Tick((shell.clock)()));
                }
            }
        }
    }
}

/// Do the effects `update` asked for; jumps out of the TUI are returned,
/// for the loop (which owns the terminal) to make.
fn perform(
    app: &mut App,
    fx: Vec<Effect>,
    shell: &Shell,
    loaded: &mpsc::UnboundedSender<Action>,
) -> Vec<super::jump::Jump> {
    let bg = Background { shell, loaded };
    let mut jumps = Vec::new();
    for e in fx {
        shell.trace.log(format!("effect {e:?}"));
        match e {
            Effect::LoadLog {
                candidate,
                from,
                count,
            } => bg.load_log(app, candidate, from, count),
            Effect::SearchLog {
                candidate,
                query,
                from,
                upto,
                ring_from,
            } => bg.search_log(app, candidate, query, (from, upto), ring_from),
            Effect::LoadFound {
                candidate,
                query,
                first,
                lines,
            } => bg.load_found(app, candidate, query, first, lines),
            Effect::LoadDiff(id) => bg.load_diff(app, id),
            Effect::LoadCompare(a, b) => bg.load_compare(app, a, b),
            Effect::LoadTestSource {
                index,
                author,
                name,
            } => bg.load_test_source(app, index, author, name),
            Effect::Decide(d) => decide(app, shell, &d),
            Effect::PreviewFinalize(candidate) => bg.preview_finalize(candidate),
            Effect::Finalize { open_pr, .. } => bg.finalize(open_pr),
            Effect::OpenPr(_) => bg.open_pr(app),
            Effect::Jump(j) => jumps.push(j),
            Effect::Copy { candidate, what } => {
                let msg = copy(app, shell, &candidate, what);
                update(app, Action::Said(msg));
            }
            Effect::CancelCandidate(_) => {}
            Effect::CancelRun => shell.cancel.cancel(),
            Effect::Quit { stop } => {
                if stop {
                    shell.cancel.cancel();
                }
            }
            Effect::SaveSpec { path, text } => {
                let msg = shell.run.save_spec(&path, &text);
                update(app, Action::Said(msg));
            }
        }
    }
    jumps
}

/// Record a decision (live to the run while it has candidates going); a
/// refusal is flashed.
fn decide(app: &mut App, shell: &Shell, d: &Decision) {
    let live = app.live() && app.candidates.iter().any(|c| !c.finished());
    match (shell.decide)(d, live) {
        Ok(Some(ev)) => app.apply(&ev, (shell.clock)()),
        Ok(None) => {}
        Err(e) => {
            shell.trace.log(format!("decision not recorded: {e}"));
            let e = e.to_string();
            app.flash = Some(format!("not recorded: {}", e.lines().next().unwrap_or("")));
            app.dirty = true;
        }
    }
}

/// Events queued for the loop at most: a loop that falls behind slows
/// the pipeline down (see `pipeline::journal`) instead of growing a queue.
pub const LOOP_QUEUE: usize = 4096;
