//! Starting the TUI: on a new run (`run_interactive`) or on a run that is
//! already going (`attach`); the threads that read the keyboard and the
//! signals, and the feed of the run's events to the loop.

use super::*;

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
        view.lines(seg, crate::logbuf::CAPACITY, |l| out.push((l, at)));
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
) -> Result<App, crate::Error> {
    let mut terminal = crate::terminal::enter()?;
    let guard = crate::terminal::Guard;
    app.now_ms = (shell.clock)();
    let r = run_loop(&mut terminal, &mut app, rx, term_rx, shell).await;
    drop(guard);
    r?;
    Ok(app)
}

fn now() -> i64 {
    rascal_engine::store::now_ms()
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
        detachable: prepared.config.main.launcher != rascal_core::config::LauncherKind::Process,
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
) -> Result<i32, crate::Error> {
    let meta = meta_of(&prepared);
    let notifier = crate::notifier::Notifier::terminal(
        prepared.config.main.notify.clone(),
        prepared.repo_dir.clone(),
    );
    let run_id = prepared.run.clone();
    let replay = prepared.replays();
    let repo = prepared.repo_dir.clone();
    let who = author_in(&repo);
    let trace = Trace::to(prepared.state.join("runs").join(&run_id).join("tui.log"));
    let mut view = LogView::new(&prepared.state);
    for (info, agent) in &prepared.candidates {
        view.runtime(&info.id, agent.runtime);
    }
    let rt = rascal_engine::runtime()?;
    let result = rt.block_on(async move {
        let (stx, rx) = loop_channel();
        let (session, events) = rascal_engine::pipeline::Session::start(prepared);
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
            run: session.handle(),
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
        let outcome = session.outcome().await.ok_or_else(|| {
            rascal_engine::Error::Usage("internal error: the run had no pipeline".into())
        })?;
        Ok::<Option<i32>, crate::Error>(Some(
            outcome.map_err(rascal_engine::Error::from)?.exit_code,
        ))
    });
    crate::terminal::restore();
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
    crate::hangup::watch(move || watched.is_closed(), move || gone(&told));
    std::thread::spawn(move || loop {
        if crate::hangup::terminal_gone() {
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
pub fn attach(repo_dir: &std::path::Path, run: &str, theme: Theme) -> Result<i32, crate::Error> {
    let project =
        rascal_engine::store::Project::open(repo_dir).map_err(rascal_engine::Error::from)?;
    let store = project.store().map_err(rascal_engine::Error::from)?;
    let first = store
        .events_since(run, 0)
        .map_err(rascal_engine::Error::from)?;
    if first.is_empty() {
        return Err(rascal_engine::Error::Usage(format!(
            "no run `{run}` in this repository\n  hint: `rascal list` shows the runs"
        ))
        .into());
    }
    let base = first
        .iter()
        .find_map(|(_, _, ev)| match ev {
            RunEvent::RunStarted { base, .. } => Some(base.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let (meta, notifier) = attached_meta(&project, &base);
    let trace = Trace::to(project.files().join("runs").join(run).join("tui.log"));
    let rt = rascal_engine::runtime()?;
    let repo_path = project.dir();
    let who = project.author();
    let run_id = run.to_string();
    let code = rt.block_on(async move {
        let (tx, rx) = loop_channel();
        // Follow the journal: what is there, then whatever is appended.
        let follow_run = run_id.clone();
        let mut view = LogView::new(&project.files());
        std::thread::spawn(move || follow_journal(&store, &follow_run, first, &mut view, &tx));
        let (term_tx, term_rx) = mpsc::unbounded_channel::<TermEvent>();
        let gate = InputGate::default();
        spawn_input(term_tx.clone(), gate.clone());
        spawn_signals(term_tx);
        let session = Session::recorded(repo_path.clone(), run_id.clone(), &base);
        let shell = Shell {
            run: session.handle(),
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
        Ok::<i32, crate::Error>(match app.state {
            crate::app::RunState::Finished { exit_code, .. } => exit_code,
            _ => 0,
        })
    });
    crate::terminal::restore();
    code
}

/// What the TUI knows of an attached run beyond its journal: the layers
/// its configuration turns on, its strategy, and its notifier.
fn attached_meta(
    project: &rascal_engine::store::Project,
    base: &str,
) -> (RunMeta, crate::notifier::Notifier) {
    let mut meta = RunMeta {
        attached: true,
        ..RunMeta::default()
    };
    let mut notifier = crate::notifier::Notifier::off();
    {
        if let Some(config) = project.config_at(base) {
            notifier =
                crate::notifier::Notifier::terminal(config.main.notify.clone(), project.dir());
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
    (meta, notifier)
}

/// Follow an attached run's journal: `first` (what is there), then
/// whatever is appended, sent to the loop until the loop goes away.
fn follow_journal(
    store: &rascal_engine::store::Store,
    run: &str,
    first: Vec<(i64, i64, RunEvent)>,
    view: &mut LogView,
    tx: &mpsc::Sender<Stamped>,
) {
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
            for s in for_loop(view, ev, Some(at)) {
                if tx.blocking_send(s).is_err() {
                    return;
                }
            }
        }
        if tx.is_closed() {
            return;
        }
        std::thread::sleep(Duration::from_millis(if ended { 1000 } else { 250 }));
        batch = match store.events_since(run, last) {
            Ok(b) => b,
            Err(_) => return,
        };
    }
}
