//! TUI budgets: one dashboard frame at 200×50 with 8 candidates (target
//! under 2 ms) and with 16 (target under 1 ms), the diff view, and folding log lines into the state (8
//! candidates × 5,000 lines/s must be a small fraction of one core).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rascal_core::model::event::RunEvent;
use rascal_exec::exec::runner::Stream;
use rascal_tui::fixture;
use rascal_tui::update::update;
use rascal_tui::Action;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

fn full_logs(app: &mut rascal_tui::App) {
    let ids: Vec<String> = app.candidates.iter().map(|c| c.info.id.clone()).collect();
    for i in 0..2_500 {
        for id in &ids {
            let ev = RunEvent::Log {
                candidate: id.clone(),
                stream: Stream::Stdout,
                display: None,
                text: format!(
                    "\u{1b}[32mcompiling\u{1b}[0m crate {i} of a long build with some output text"
                ),
            };
            update(app, Action::Run(Box::new(ev), fixture::T0));
        }
    }
}

fn render(c: &mut Criterion) {
    let mut app = fixture::app(8, false, false);
    full_logs(&mut app);
    let mut term = Terminal::new(TestBackend::new(200, 50)).unwrap();
    c.bench_function("dashboard frame 200x50, 8 candidates", |b| {
        b.iter(|| {
            term.draw(|f| rascal_tui::draw::draw(f, &app)).unwrap();
        })
    });

    let mut app = fixture::app(16, false, false);
    full_logs(&mut app);
    c.bench_function("dashboard frame 200x50, 16 candidates", |b| {
        b.iter(|| {
            term.draw(|f| rascal_tui::draw::draw(f, &app)).unwrap();
        })
    });

    let mut app = fixture::app(3, true, false);
    update(&mut app, Action::Diff);
    update(
        &mut app,
        Action::DiffLoaded {
            candidate: "careful".into(),
            text: fixture::DIFF.into(),
        },
    );
    // Warm the highlight cache once: later frames reuse it.
    term.draw(|f| rascal_tui::draw::draw(f, &app)).unwrap();
    c.bench_function("diff frame 200x50, highlighted (cached)", |b| {
        b.iter(|| {
            term.draw(|f| rascal_tui::draw::draw(f, &app)).unwrap();
        })
    });
}

fn ingest(c: &mut Criterion) {
    let mut app = fixture::app(8, false, false);
    let ids: Vec<String> = app.candidates.iter().map(|c| c.info.id.clone()).collect();
    let events: Vec<RunEvent> = (0..8_000)
        .map(|i| RunEvent::Log {
            candidate: ids[i % ids.len()].clone(),
            stream: Stream::Stdout,
            display: None,
            text: format!("\u{1b}[1mline\u{1b}[0m {i}: some agent output of ordinary length"),
        })
        .collect();
    let mut g = c.benchmark_group("log ingest");
    g.throughput(Throughput::Elements(events.len() as u64));
    g.bench_function("8 candidates, 8,000 lines", |b| {
        b.iter(|| {
            for ev in &events {
                update(&mut app, Action::Run(Box::new(ev.clone()), fixture::T0));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, render, ingest);
criterion_main!(benches);
