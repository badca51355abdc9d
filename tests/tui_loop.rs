//! The real event loop on a TestBackend: under a flood of log lines input
//! still gets through (the loop does not drain the flood first), memory
//! stays bounded, and quitting a live run asks, then stops the agents.

use rascal::exec::runner::Stream;
use rascal::model::event::RunEvent;
use rascal::tui::fixture;
use rascal::tui::logbuf::CAPACITY;
use rascal::tui::shell::{run_loop, Shell, TermEvent, Trace};
use rascal::tui::{App, Key, RunMeta, Theme};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

fn clock() -> i64 {
    fixture::T0
}

#[tokio::test]
async fn input_is_handled_during_a_log_flood_and_memory_is_bounded() {
    let (run_tx, run_rx) = mpsc::unbounded_channel();
    let (term_tx, term_rx) = mpsc::unbounded_channel();
    let events = fixture::events(8, false);
    let ids: Vec<String> = match &events[0].0 {
        RunEvent::RunStarted { candidates, .. } => {
            candidates.iter().map(|c| c.id.clone()).collect()
        }
        _ => unreachable!(),
    };
    for (ev, _) in events {
        run_tx.send((ev, None)).unwrap();
    }
    // 8 candidates × 40,000 lines: eight seconds of 5,000 lines/s each.
    let flood = 8 * 40_000;
    for i in 0..flood {
        run_tx
            .send((
                RunEvent::Log {
                    candidate: ids[i % 8].clone(),
                    stream: Stream::Stdout,
                    display: None,
                    text: format!("\u{1b}[33mline {i}\u{1b}[0m of a very chatty agent"),
                },
                None,
            ))
            .unwrap();
    }
    term_tx.send(TermEvent::Key(Key::Char('q'))).unwrap();
    term_tx.send(TermEvent::Key(Key::Char('s'))).unwrap();

    let cancel = CancellationToken::new();
    let shell = Shell {
        origin: std::env::temp_dir(),
        base: "86486adf0123456789abcdef0123456789abcdef".into(),
        cancel: cancel.clone(),
        decide: Box::new(|_, _| Ok(None)),
        trace: Trace::default(),
        clock,
        outside: None,
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
    drop(run_tx);
}
