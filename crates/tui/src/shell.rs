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
use crate::model::event::RunEvent;
use crate::model::verdict::Layer;
use crate::pipeline::{Decided, PreparedRun, Session};
use crate::store::logview::LogView;
use crossterm::event::{Event as CtEvent, MouseEventKind};
use rascal_engine::RunHandle;
use ratatui::backend::Backend;
use ratatui::Terminal;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

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
                let _ = writeln!(f, "{} {}", crate::store::now_ms(), msg.as_ref());
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
    ) -> Result<std::process::ExitStatus, String> {
        let Some((program, args)) = argv.split_first() else {
            return Err("nothing to run".into());
        };
        self.gate.pause();
        super::terminal::restore();
        println!("{}", crate::text::inert::terminal(banner));
        let status = std::process::Command::new(program)
            .args(args)
            .current_dir(dir)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .status();
        let back = super::terminal::resume();
        self.gate.resume();
        back.map_err(|e| format!("terminal: {e}"))?;
        status.map_err(|e| format!("`{program}`: {e}"))
    }

    /// Put `text` on the clipboard through the terminal (OSC 52).
    pub fn copy(&self, text: &str) -> std::io::Result<()> {
        let mut out = std::io::stdout();
        out.write_all(super::jump::osc52(text).as_bytes())?;
        out.flush()
    }
}

pub type Decider = Box<dyn Fn(&Decision, bool) -> Result<Option<RunEvent>, String> + Send>;

/// What the loop needs from the outside world.
pub struct Shell {
    /// The user's repository: the change of a workspace is read through it.
    pub origin: PathBuf,
    pub base: String,
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

/// Hand the terminal to the editor or a shell in a candidate's workspace,
/// after asking when the workspace has files that run code when opened.
fn jump_out<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    shell: &Shell,
    j: super::jump::Jump,
) -> std::io::Result<()> {
    let say = |app: &mut App, msg: String| {
        update(app, Action::Said(msg));
    };
    let Some(outside) = &shell.outside else {
        say(app, "no terminal to hand over here".into());
        return Ok(());
    };
    if !j.dir.is_dir() {
        say(
            app,
            format!(
                "{}'s workspace {} is gone (removed by finalize or gc)",
                j.candidate,
                j.dir.display()
            ),
        );
        return Ok(());
    }
    if !j.confirmed {
        let changed = changed_from_base(&shell.origin, &shell.base, &j.dir);
        let found = super::jump::hazards(&j.dir, &changed);
        if !found.is_empty() {
            update(app, Action::JumpHazards(j, found));
            return Ok(());
        }
    }
    let argv = super::jump::command(j.kind, &|n| std::env::var(n).ok(), &j.dir);
    // Git in the editor and shell runs nothing the workspace configured.
    let safe = match super::jump::jump_env(&j.dir, &j.candidate, &|n| std::env::var(n).ok()) {
        Ok(s) => s,
        Err(e) => {
            say(
                app,
                format!(
                    "could not prepare a safe git environment for the {}: {e}",
                    j.kind.name()
                ),
            );
            return Ok(());
        }
    };
    let env = &safe.vars;
    let banner = match j.kind {
        super::jump::JumpKind::Shell => format!(
            "rascal: a shell in {}'s workspace ({}); `exit` returns to rascal",
            j.candidate,
            j.dir.display()
        ),
        super::jump::JumpKind::Editor => format!("rascal: {} {}", argv[0], j.dir.display()),
    };
    shell
        .trace
        .log(format!("jump {} {}", j.kind.name(), j.dir.display()));
    let run = || outside.run(&argv, &j.dir, env, &banner);
    let r = match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(run),
        _ => run(),
    };
    terminal.clear().map_err(backend_error)?;
    let msg = match r {
        Ok(st) if st.success() => format!("back from the {}", j.kind.name()),
        Ok(st) => format!("the {} exited with {st}", j.kind.name()),
        Err(e) => format!("could not open the {}: {e}", j.kind.name()),
    };
    say(app, msg);
    Ok(())
}

/// Whether a workspace path differs from the base (files under a folder:
/// any of them); a path the user's own checkout has as it is was already
/// trusted there.
fn changed_from_base(
    origin: &std::path::Path,
    base: &str,
    dir: &std::path::Path,
) -> impl Fn(&str) -> bool {
    let differs = crate::changes::differs_from_base(origin, base, dir);
    let dir = dir.to_path_buf();
    move |rel: &str| {
        super::jump::files_under(&dir, rel)
            .iter()
            .any(|f| differs(f))
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
            Effect::PreviewFinalize(candidate) => bg.preview_finalize(app, candidate),
            Effect::Finalize { open_pr, .. } => bg.finalize(app, open_pr),
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
                let msg = crate::pipeline::spec_file::save(&shell.origin, &path, &text);
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
            app.flash = Some(format!("not recorded: {}", e.lines().next().unwrap_or("")));
            app.dirty = true;
        }
    }
}

/// Effects that read or write off the UI thread: what they load comes
/// back to the loop as an action.
struct Background<'a> {
    shell: &'a Shell,
    loaded: &'a mpsc::UnboundedSender<Action>,
}

impl Background<'_> {
    /// Read a candidate's log file lines `from..from + count`.
    fn load_log(&self, app: &App, candidate: String, from: u64, count: u64) {
        let Some(c) = app.candidates.iter().find(|c| c.info.id == candidate) else {
            return;
        };
        let (spans, info) = (c.logs.spans(from, count), c.info.clone());
        let (origin, tx) = (self.shell.origin.clone(), self.loaded.clone());
        tokio::task::spawn_blocking(move || {
            let lines = super::logread::window(&origin, &info, spans);
            let _ = tx.send(Action::LogLoaded {
                candidate,
                first: from,
                lines,
            });
        });
    }

    /// Search a candidate's log file lines `from..upto` for `query` (the
    /// whole-log filter).
    fn search_log(
        &self,
        app: &App,
        candidate: String,
        query: String,
        (from, upto): (u64, u64),
        ring_from: u64,
    ) {
        let Some(c) = app.candidates.iter().find(|c| c.info.id == candidate) else {
            return;
        };
        let spans = c.logs.spans(from, upto.saturating_sub(from));
        let (origin, tx, info) = (
            self.shell.origin.clone(),
            self.loaded.clone(),
            c.info.clone(),
        );
        tokio::task::spawn_blocking(move || {
            let found = super::logread::search(&origin, &info, from, spans, &query);
            let _ = tx.send(Action::LogSearched {
                candidate,
                query,
                from,
                upto,
                ring_from,
                hits: found.hits,
                more: found.more,
                first: found.first,
                lines: found.lines,
            });
        });
    }

    /// Read the log file lines of the whole-log filter's matches `first..`.
    fn load_found(
        &self,
        app: &App,
        candidate: String,
        query: String,
        first: usize,
        lines: Vec<u64>,
    ) {
        let Some(c) = app.candidates.iter().find(|c| c.info.id == candidate) else {
            return;
        };
        let wanted = c.logs.spans_of(&lines);
        let (origin, tx, info) = (
            self.shell.origin.clone(),
            self.loaded.clone(),
            c.info.clone(),
        );
        tokio::task::spawn_blocking(move || {
            let lines = super::logread::chosen(&origin, &info, wanted);
            let _ = tx.send(Action::FoundLoaded {
                candidate,
                query,
                first,
                lines,
            });
        });
    }

    /// The run as the engine reads and finishes it.
    fn handle(&self, app: &App) -> RunHandle {
        RunHandle::new(&self.shell.origin, &app.run, &self.shell.base)
    }

    /// Run `read` off the event loop on the run; send what it answers back
    /// as an action.
    fn read_changes(&self, app: &App, read: impl FnOnce(&RunHandle) -> Action + Send + 'static) {
        let run = self.handle(app);
        let tx = self.loaded.clone();
        tokio::task::spawn_blocking(move || {
            let _ = tx.send(read(&run));
        });
    }

    /// Read a candidate's diff against the base.
    fn load_diff(&self, app: &App, id: String) {
        let Some(change) = app.change(&id) else {
            return;
        };
        self.read_changes(app, move |run| match run.diff(&change) {
            Ok(text) => Action::DiffLoaded {
                candidate: id,
                text,
            },
            Err(why) => Action::DiffUnreadable { candidate: id, why },
        });
    }

    /// Read how two candidates' changes differ.
    fn load_compare(&self, app: &App, a: String, b: String) {
        let (Some(ca), Some(cb)) = (app.change(&a), app.change(&b)) else {
            return;
        };
        self.read_changes(app, move |run| match run.compare(&ca, &cb) {
            Ok(text) => Action::CompareLoaded { a, b, text },
            Err(why) => Action::CompareUnreadable { a, b, why },
        });
    }

    /// Read test `index` (`name`, by `author`) from its author's change.
    fn load_test_source(&self, app: &App, index: usize, author: String, name: String) {
        let change = app.change(&author);
        self.read_changes(app, move |run| {
            let found = change
                .ok_or_else(|| format!("{author} is not a candidate of this run"))
                .and_then(|c| run.changed_files(&c))
                .and_then(|files| {
                    super::test_source::find(&files, &name).ok_or_else(|| {
                        format!(
                            "no function named `{}` in the {} files {author}'s change wrote",
                            super::test_source::function_name(&name),
                            files.len()
                        )
                    })
                });
            Action::TestSourceLoaded { index, found }
        });
    }

    /// Read what finalizing this candidate would do.
    fn preview_finalize(&self, app: &App, candidate: String) {
        let (run, tx) = (self.handle(app), self.loaded.clone());
        tokio::task::spawn_blocking(move || {
            let r = run.preview(&candidate).map_err(|e| e.to_string());
            let _ = tx.send(Action::FinalizePreviewed(r));
        });
    }

    /// Commit the selected candidate on its branch, then open the pull
    /// request when `open_pr`.
    fn finalize(&self, app: &App, open_pr: bool) {
        let (run, tx) = (self.handle(app), self.loaded.clone());
        let clock = self.shell.clock;
        tokio::task::spawn_blocking(move || {
            let done = run.finalize(open_pr).map_err(|e| e.to_string()).map(|out| {
                let (message, event) = super::finalize::said(out);
                if let Some(ev) = event {
                    let _ = tx.send(Action::Run(Box::new(ev), clock()));
                }
                message
            });
            let _ = tx.send(Action::FinalizeDone(done));
        });
    }

    /// Open the pull request of the finalized branch with `gh`.
    fn open_pr(&self, app: &App) {
        let Some(f) = app.summary.finalized.clone() else {
            return;
        };
        let (run, tx) = (self.handle(app), self.loaded.clone());
        let clock = self.shell.clock;
        tokio::task::spawn_blocking(move || {
            let r = run.open_pr(&f).map(|(out, ev)| {
                if let Some(ev) = ev {
                    let _ = tx.send(Action::Run(Box::new(ev), clock()));
                }
                out
            });
            let _ = tx.send(Action::PrOpened(r));
        });
    }
}

/// `y`: put a candidate's workspace path, tree id or diff on the
/// clipboard; returns what to say.
fn copy(app: &App, shell: &Shell, candidate: &str, what: super::jump::CopyWhat) -> String {
    use super::jump::CopyWhat;
    let Some(c) = app.candidates.iter().find(|c| c.info.id == candidate) else {
        return format!("no candidate {candidate}");
    };
    let Some(outside) = &shell.outside else {
        return "no terminal to copy through here".into();
    };
    let text = match what {
        CopyWhat::Path => c.info.worktree.clone(),
        CopyWhat::Tree => match app
            .summary
            .candidates
            .iter()
            .find(|s| s.id == candidate)
            .and_then(|s| s.tree.clone())
        {
            Some(t) => t,
            None => return format!("{candidate} has no verified tree yet"),
        },
        CopyWhat::Diff => {
            let change = app.change(candidate);
            match change
                .ok_or_else(|| format!("no candidate {candidate}"))
                .and_then(|ch| RunHandle::new(&shell.origin, &app.run, &shell.base).diff(&ch))
            {
                Ok(t) => t,
                Err(e) => return format!("could not read {candidate}'s diff: {e}"),
            }
        }
    };
    // What is copied is what the output policy lets out (and its size).
    let text = crate::text::inert::clipboard(&text);
    if text.len() > super::jump::MAX_COPY_BYTES {
        return format!(
            "the {} is {} KiB, more than a terminal clipboard takes ({} KiB): not copied",
            what.name(),
            text.len() / 1024,
            super::jump::MAX_COPY_BYTES / 1024
        );
    }
    match outside.copy(&text) {
        Ok(()) => format!(
            "copied {}'s {} ({} bytes)",
            candidate,
            what.name(),
            text.len()
        ),
        Err(e) => format!("could not copy: {e}"),
    }
}

/// Events queued for the loop at most: a loop that falls behind slows
/// the pipeline down (see `pipeline::journal`) instead of growing a queue.
pub const LOOP_QUEUE: usize = 4096;

/// A bounded queue of stamped events for the loop.
pub fn loop_channel() -> (mpsc::Sender<Stamped>, mpsc::Receiver<Stamped>) {
    mpsc::channel(LOOP_QUEUE)
}

/// What reaches the loop for one event: a log segment becomes its lines
/// (the last screenful the log buffer keeps) followed by the segment
/// itself (its counts); anything else passes as it is.
pub fn for_loop(view: &mut LogView, ev: RunEvent, at: Option<i64>) -> Vec<Stamped> {
    view.see(&ev);
    let mut out = Vec::new();
    if let RunEvent::LogSegment(seg) = &ev {
        view.lines(seg, super::logbuf::CAPACITY, |l| out.push((l, at)));
    }
    out.push((ev, at));
    out
}

/// Pass `earlier` events, then a pipeline's, on to the loop, stamped on
/// arrival.
fn forward(
    earlier: Vec<(i64, RunEvent)>,
    mut events: mpsc::Receiver<RunEvent>,
    to: mpsc::Sender<Stamped>,
    mut view: LogView,
) {
    tokio::spawn(async move {
        for (at, ev) in earlier {
            for s in for_loop(&mut view, ev, Some(at)) {
                if to.send(s).await.is_err() {
                    return;
                }
            }
        }
        while let Some(ev) = events.recv().await {
            for s in for_loop(&mut view, ev, None) {
                if to.send(s).await.is_err() {
                    return;
                }
            }
        }
    });
}

/// Paint the TUI in the real terminal until the user quits; the terminal is
/// restored whatever happens. Returns the final state.
async fn present(
    mut app: App,
    rx: mpsc::Receiver<Stamped>,
    term_rx: mpsc::UnboundedReceiver<TermEvent>,
    shell: &Shell,
) -> Result<App, String> {
    let mut terminal = super::terminal::enter().map_err(|e| format!("terminal: {e}"))?;
    let guard = super::terminal::Guard;
    app.now_ms = (shell.clock)();
    let r = run_loop(&mut terminal, &mut app, rx, term_rx, shell).await;
    drop(guard);
    r.map_err(|e| format!("terminal: {e}"))?;
    Ok(app)
}

fn now() -> i64 {
    crate::store::now_ms()
}

/// The layers this run has on (the strip shows the rest as off).
pub fn meta_of(prepared: &PreparedRun) -> RunMeta {
    let mut layers = vec![Layer::Agent, Layer::Permissions];
    if prepared.config.guardrails.is_some() {
        layers.push(Layer::Guardrails);
    }
    if !prepared.task.acceptance_criteria.is_empty() || !prepared.task.constraints.is_empty() {
        layers.push(Layer::Criteria);
    }
    if prepared
        .config
        .verification
        .as_ref()
        .is_some_and(|v| v.review.is_some())
    {
        layers.push(Layer::Review);
    }
    RunMeta {
        strategy: format!("{:?}", prepared.config.main.strategy.mode).to_lowercase(),
        layers_on: layers,
        detachable: prepared.config.main.launcher != crate::config::LauncherKind::Process,
        attached: false,
        combine: prepared
            .config
            .verification
            .as_ref()
            .is_some_and(|v| v.combine.is_some()),
    }
}

/// Run a prepared run under the TUI; returns the run's exit code once the
/// user quits. The terminal is restored on every path out.
pub fn run_interactive(
    prepared: PreparedRun,
    theme: Theme,
    earlier: Vec<(i64, RunEvent)>,
) -> Result<i32, String> {
    let meta = meta_of(&prepared);
    let notifier = super::notifier::Notifier::terminal(
        prepared.config.main.notify.clone(),
        prepared.repo_dir.clone(),
    );
    let base = prepared.base.to_string();
    let run_id = prepared.run.clone();
    let replay = prepared.replays();
    let repo = prepared.repo_dir.clone();
    let who = author_in(&repo);
    let trace = Trace::to(prepared.state.join("runs").join(&run_id).join("tui.log"));
    let mut view = LogView::new(&prepared.state);
    for (info, agent) in &prepared.candidates {
        view.runtime(&info.id, agent.runtime);
    }
    let rt = crate::exec::runtime()?;
    let result = rt.block_on(async move {
        let (stx, rx) = loop_channel();
        let (session, events) = crate::pipeline::Session::start(prepared);
        let session = std::sync::Arc::new(session);
        forward(earlier, events, stx.clone(), view.clone());
        let cancel = session.cancellation();
        let (term_tx, term_rx) = mpsc::unbounded_channel::<TermEvent>();
        let gate = InputGate::default();
        spawn_input(term_tx.clone(), gate.clone());
        spawn_signals(term_tx);
        let trace2 = trace.clone();
        let owner = session.clone();
        let shell = Shell {
            origin: repo.clone(),
            base,
            cancel: cancel.clone(),
            decide: Box::new(move |d: &Decision, live: bool| {
                trace2.log(format!(
                    "decision {}",
                    serde_json::to_string(d).unwrap_or_default()
                ));
                Ok(match owner.decide(d, live)? {
                    Decided::Sent => None,
                    Decided::Recorded(ev) => Some(ev),
                    Decided::Retrying(events) => {
                        // The candidate's next attempt streams into this screen.
                        forward(Vec::new(), events, stx.clone(), view.clone());
                        None
                    }
                })
            }),
            trace,
            clock: now,
            outside: Some(Outside { gate }),
            notifier,
        };
        let app = present(App::new(meta, theme, who), rx, term_rx, &shell).await?;
        if app.live() && !cancel.is_cancelled() {
            // Quit with `l`: the docker agents go on without us.
            return Ok(None);
        }
        let outcome = session
            .outcome()
            .await
            .ok_or("internal error: the run had no pipeline")?
            .map_err(|e| e.to_string())?;
        Ok::<Option<i32>, String>(Some(outcome.exit_code))
    });
    super::terminal::restore();
    match result? {
        // Written, not printed: the terminal may be gone (a closed
        // terminal ends the screen), and a failed write is no panic.
        Some(code) => {
            if replay {
                let _ = writeln!(std::io::stdout(), "replay: rascal show {run_id}");
            }
            Ok(code)
        }
        None => {
            rt.shutdown_background();
            let _ = writeln!(
                std::io::stdout(),
                "left the agents running; follow them with: rascal attach {run_id}"
            );
            Ok(0)
        }
    }
}

fn spawn_input(tx: mpsc::UnboundedSender<TermEvent>, gate: InputGate) {
    // The terminal closed or rascal was told to stop: the screen quits and
    // stops its candidates (a hung-up tty reads end-of-file forever, which
    // crossterm would poll in a busy loop).
    let gone = move |tx: &mpsc::UnboundedSender<TermEvent>| {
        let _ = tx.send(TermEvent::Terminate);
    };
    // The reader below can be stuck inside crossterm once the terminal
    // hangs up: a watcher says so instead (see `hangup`).
    let (watched, told) = (tx.clone(), tx.clone());
    super::hangup::watch(move || watched.is_closed(), move || gone(&told));
    std::thread::spawn(move || loop {
        if super::hangup::terminal_gone() {
            return gone(&tx);
        }
        if gate.paused() {
            if tx.is_closed() {
                return;
            }
            std::thread::sleep(Duration::from_millis(30));
            continue;
        }
        let _reading = gate.0 .1.lock();
        if gate.paused() {
            continue;
        }
        match crossterm::event::poll(Duration::from_millis(100)) {
            Ok(true) => {
                let Ok(ev) = crossterm::event::read() else {
                    return gone(&tx);
                };
                if let Some(ev) = TermEvent::from_crossterm(ev) {
                    if tx.send(ev).is_err() {
                        return;
                    }
                }
            }
            Ok(false) => {
                if tx.is_closed() {
                    return;
                }
            }
            Err(_) => return gone(&tx),
        }
    });
}

fn spawn_signals(tx: mpsc::UnboundedSender<TermEvent>) {
    use tokio::signal::unix::{signal, SignalKind};
    for kind in [SignalKind::terminate(), SignalKind::hangup()] {
        let tx = tx.clone();
        if let Ok(mut s) = signal(kind) {
            tokio::spawn(async move {
                if s.recv().await.is_some() {
                    let _ = tx.send(TermEvent::Terminate);
                }
            });
        }
    }
}

/// `rascal attach RUN`: the TUI on a recorded run, following it while
/// another rascal process is still writing it. Decisions go to the store.
pub fn attach(repo_dir: &std::path::Path, run: &str, theme: Theme) -> Result<i32, String> {
    let project = crate::store::Project::open(repo_dir).map_err(|e| e.to_string())?;
    let store = project.store().map_err(|e| e.to_string())?;
    let first = store.events_since(run, 0).map_err(|e| e.to_string())?;
    if first.is_empty() {
        return Err(format!(
            "no run `{run}` in this repository\n  hint: `rascal list` shows the runs"
        ));
    }
    let base = first
        .iter()
        .find_map(|(_, _, ev)| match ev {
            RunEvent::RunStarted { base, .. } => Some(base.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let mut meta = RunMeta {
        attached: true,
        ..RunMeta::default()
    };
    let mut notifier = super::notifier::Notifier::off();
    {
        if let Some(config) = project.config_at(&base) {
            notifier =
                super::notifier::Notifier::terminal(config.main.notify.clone(), project.dir());
            meta.layers_on = vec![Layer::Agent, Layer::Permissions, Layer::Criteria];
            if config.guardrails.is_some() {
                meta.layers_on.push(Layer::Guardrails);
            }
            if config
                .verification
                .as_ref()
                .is_some_and(|v| v.review.is_some())
            {
                meta.layers_on.push(Layer::Review);
            }
            meta.strategy = format!("{:?}", config.main.strategy.mode).to_lowercase();
            meta.combine = config
                .verification
                .as_ref()
                .is_some_and(|v| v.combine.is_some());
        }
    }
    let trace = Trace::to(project.files().join("runs").join(run).join("tui.log"));
    let rt = crate::exec::runtime()?;
    let repo_path = project.dir();
    let who = project.author();
    let run_id = run.to_string();
    let code = rt.block_on(async move {
        let (tx, rx) = loop_channel();
        // Follow the journal: what is there, then whatever is appended.
        let follow_run = run_id.clone();
        let mut view = LogView::new(&project.files());
        std::thread::spawn(move || {
            let mut last = 0;
            let mut batch = first;
            loop {
                let mut ended = false;
                for (seq, at, ev) in batch {
                    last = seq;
                    ended |= matches!(
                        ev,
                        RunEvent::RunFinished { .. } | RunEvent::RunInterrupted { .. }
                    );
                    for s in for_loop(&mut view, ev, Some(at)) {
                        if tx.blocking_send(s).is_err() {
                            return;
                        }
                    }
                }
                if tx.is_closed() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(if ended { 1000 } else { 250 }));
                batch = match store.events_since(&follow_run, last) {
                    Ok(b) => b,
                    Err(_) => return,
                };
            }
        });
        let (term_tx, term_rx) = mpsc::unbounded_channel::<TermEvent>();
        let gate = InputGate::default();
        spawn_input(term_tx.clone(), gate.clone());
        spawn_signals(term_tx);
        let session = Session::recorded(repo_path.clone(), run_id.clone());
        let shell = Shell {
            origin: repo_path.clone(),
            base,
            cancel: session.cancellation(),
            decide: Box::new(move |d: &Decision, live: bool| {
                Ok(match session.decide(d, live)? {
                    Decided::Recorded(ev) => Some(ev),
                    Decided::Sent | Decided::Retrying(_) => None,
                })
            }),
            trace,
            clock: now,
            outside: Some(Outside { gate }),
            notifier,
        };
        let app = present(App::new(meta, theme, who), rx, term_rx, &shell).await?;
        Ok::<i32, String>(match app.state {
            super::app::RunState::Finished { exit_code, .. } => exit_code,
            _ => 0,
        })
    });
    super::terminal::restore();
    code
}
