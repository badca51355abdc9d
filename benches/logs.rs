//! Log ingest: the part of the path from an agent's pipe to the journal
//! that costs per line — a reader splitting 64 KiB reads into lines and
//! the log file writer cutting them into hashed segments — for 1,000,000
//! lines of 24 bytes (the flood's shape). The figure to keep is lines/s
//! (issue 17: at least 1M lines/s aggregate). End to end, with the journal
//! and the views, `bench/flood/run.sh` measures the whole run.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rascal_core::model::log::Stream;
use rascal_engine::store::{LogWriter, DEFAULT_MAX_LOG_BYTES};
use std::hint::black_box;

const LINES: u64 = 1_000_000;

fn flood_text() -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..LINES {
        out.extend_from_slice(format!("log line number {i}\n").as_bytes());
    }
    out
}

fn ingest(c: &mut Criterion) {
    let text = flood_text();
    let dir = tempfile::tempdir().unwrap();
    let mut g = c.benchmark_group("log ingest");
    g.sample_size(10);
    g.throughput(Throughput::Elements(LINES));
    g.bench_function("split, write, segment 1M lines", |b| {
        b.iter(|| {
            let mut w =
                LogWriter::open(dir.path(), "runs/r/a/agent.log", "a", DEFAULT_MAX_LOG_BYTES)
                    .unwrap();
            let mut segments = 0usize;
            for chunk in text.chunks(64 * 1024) {
                // The reader's split (as runner::read_lines does it).
                for line in chunk.split(|&b| b == b'\n') {
                    let s = String::from_utf8_lossy(line);
                    segments += w.line(Stream::Stdout, &s).unwrap().len();
                }
            }
            segments += w.seal().unwrap().iter().count();
            std::fs::remove_file(dir.path().join("runs/r/a/agent.log")).unwrap();
            black_box(segments)
        })
    });
    g.finish();
}

criterion_group!(benches, ingest);
criterion_main!(benches);
