//! The real event loop on a TestBackend: under a flood of log lines input
//! still gets through (the loop does not drain the flood first), memory
//! stays bounded, and quitting a live run asks, then stops the agents. A
//! run that needs the human rings once per occasion, with the bytes the
//! terminal gets, and runs the `notify:` command.

use crate::common::fixture;
use rascal_core::model::event::RunEvent;
use rascal_engine::pipeline::Session;
use rascal_exec::exec::runner::Stream;
use rascal_tui::logbuf::CAPACITY;
use rascal_tui::notifier::Notifier;
use rascal_tui::shell::{run_loop, Shell, TermEvent, Trace};
use rascal_tui::{App, Key, RunMeta, Theme};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

fn clock() -> i64 {
    fixture::T0
}

#[tokio::test]
async fn input_is_handled_during_a_log_flood_and_memory_is_bounded() {
    let (run_tx, run_rx) = rascal_tui::shell::loop_channel();
    let (term_tx, term_rx) = mpsc::unbounded_channel();
    let events = fixture::events(8, false);
    let ids: Vec<String> = match &events[0].0 {
        RunEvent::RunStarted { candidates, .. } => {
            candidates.iter().map(|c| c.id.clone()).collect()
        }
        _ => unreachable!(),
    };
    // 8 candidates × 40,000 lines: eight seconds of 5,000 lines/s each,
    // sent as fast as the loop's bounded queue takes them.
    let flood = 8 * 40_000;
    let producer = std::thread::spawn(move || {
        for (ev, _) in events {
            if run_tx.blocking_send((ev, None)).is_err() {
                return;
            }
        }
        for i in 0..flood {
            let line = RunEvent::Log {
                candidate: ids[i % 8].clone(),
                stream: Stream::Stdout,
                display: None,
                text: format!("\u{1b}[33mline {i}\u{1b}[0m of a very chatty agent"),
            };
            if run_tx.blocking_send((line, None)).is_err() {
                return;
            }
        }
    });
    term_tx.send(TermEvent::Key(Key::Char('q'))).unwrap();
    term_tx.send(TermEvent::Key(Key::Char('s'))).unwrap();

    let cancel = CancellationToken::new();
    let shell = Shell {
        run: Session::recorded(
            std::env::temp_dir(),
            "r1".into(),
            "86486adf0123456789abcdef0123456789abcdef",
        )
        .handle(),
        cancel: cancel.clone(),
        decide: Box::new(|_, _| Ok(None)),
        trace: Trace::default(),
        clock,
        outside: None,
        notifier: Notifier::off(),
    };
    let mut term = Terminal::new(TestBackend::new(200, 50)).unwrap();
    let mut app = App::new(
        RunMeta::default(),
        Theme::named("dark", false).unwrap(),
        "tester".into(),
    );
    run_loop(&mut term, &mut app, run_rx, term_rx, &shell)
        .await
        .unwrap();

    assert!(app.quit);
    assert!(cancel.is_cancelled(), "quitting with `s` stops the agents");
    let ingested: u64 = app
        .candidates
        .iter()
        .map(|c| c.logs.len() as u64 + c.logs.dropped)
        .sum();
    assert!(
        ingested < flood as u64,
        "the quit keys were handled before the whole flood was folded ({ingested} of {flood})"
    );
    for c in &app.candidates {
        assert!(c.logs.len() <= CAPACITY);
    }
    drop(app);
    producer.join().unwrap();
}

#[tokio::test]
async fn an_escalation_rings_once_and_the_runs_end_once_with_the_command_run() {
    use rascal_core::config::notify::Notify;
    use rascal_core::model::verdict::Verdict;
    use rascal_tui::notify::Desktop;
    use std::sync::{Arc, Mutex};

    let (run_tx, run_rx) = rascal_tui::shell::loop_channel();
    let (term_tx, term_rx) = mpsc::unbounded_channel();
    let events = fixture::events(2, false);
    let (run, ids): (String, Vec<String>) = match &events[0].0 {
        RunEvent::RunStarted {
            run, candidates, ..
        } => (
            run.clone(),
            candidates.iter().map(|c| c.id.clone()).collect(),
        ),
        _ => unreachable!(),
    };
    run_tx.try_send((events[0].0.clone(), None)).unwrap();
    let finished = |id: &str| RunEvent::CandidateFinished {
        candidate: id.into(),
        verdict: Verdict::Fail,
        reason: None,
        files: 1,
        lines: 1,
        tree: None,
        cancelled: false,
    };
    let mut live = vec![
        RunEvent::CandidateEscalated {
            candidate: ids[0].clone(),
            reason: "retries exhausted".into(),
            table: String::new(),
        },
        finished(&ids[0]),
    ];
    // Plenty happens after the escalation: none of it rings again.
    for i in 0..200 {
        live.push(RunEvent::Log {
            candidate: ids[1].clone(),
            stream: Stream::Stdout,
            display: None,
            text: format!("line {i}"),
        });
    }
    live.push(finished(&ids[1]));
    live.push(RunEvent::RunFinished {
        verdict: Verdict::Fail,
        exit_code: 3,
    });
    for ev in live {
        run_tx.try_send((ev, None)).unwrap();
    }

    let dir = tempfile::tempdir().unwrap();
    let written = Arc::new(Mutex::new(Vec::<u8>::new()));
    let notify = Notify {
        bell: true,
        desktop: true,
        command: vec![
            "sh".into(),
            "-c".into(),
            "printf '%s %s\\n' \"$RASCAL_EVENT\" \"$RASCAL_RUN\" >> events".into(),
        ],
    };
    let shell = Shell {
        run: Session::recorded(
            std::env::temp_dir(),
            "r1".into(),
            "86486adf0123456789abcdef0123456789abcdef",
        )
        .handle(),
        cancel: CancellationToken::new(),
        decide: Box::new(|_, _| Ok(None)),
        trace: Trace::default(),
        clock,
        outside: None,
        notifier: Notifier::to(
            notify,
            Desktop::Osc777,
            dir.path().to_path_buf(),
            written.clone(),
        ),
    };
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let mut app = App::new(
        RunMeta::default(),
        Theme::named("dark", false).unwrap(),
        "tester".into(),
    );
    let bells = |w: &Arc<Mutex<Vec<u8>>>| w.lock().unwrap().iter().filter(|b| **b == 0x07).count();
    let events_file = dir.path().join("events");
    let seen = || std::fs::read_to_string(&events_file).unwrap_or_default();
    // Quit once both notices are out and both commands have run.
    let driver = async {
        for _ in 0..1000 {
            if seen().lines().count() >= 2 && bells(&written) >= 4 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        term_tx.send(TermEvent::Terminate).unwrap();
    };
    let (r, ()) = tokio::join!(
        run_loop(&mut term, &mut app, run_rx, term_rx, &shell),
        driver
    );
    r.unwrap();

    let bytes = written.lock().unwrap().clone();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let escalation = format!(
        "\x07\x1b]777;notify;rascal: {0} needs a human;run {run}: {0} was escalated — retries exhausted\x07",
        ids[0]
    );
    assert!(text.starts_with(&escalation), "{text:?}");
    let rest = &text[escalation.len()..];
    assert!(
        rest.starts_with("\x07\x1b]777;notify;rascal: run escalated;run "),
        "then the run's end: {rest:?}"
    );
    // One bell and one OSC each: an escalation, and the run's end.
    assert_eq!(text.matches('\x07').count(), 4, "{text:?}");
    assert_eq!(text.matches("\x1b]777;").count(), 2, "{text:?}");
    assert_eq!(
        seen(),
        format!("escalated {run}\nescalated {run}\n"),
        "the command ran once per notice, with the run's variables"
    );
}
