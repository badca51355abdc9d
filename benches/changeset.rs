//! The ChangeSet against git's own floor, on a generated change of new
//! source files (600 files, ~10 MB, 250,000 lines; the side-by-side script
//! `bench/changeset/run.sh` measures the full 6,000-file change with the
//! release binary and its peak RSS): the floor (`git status --porcelain
//! -uall`, reading every changed file, counting its lines), the ChangeSet
//! streamed through `rascal check`'s content checks, and the ChangeSet held
//! whole. The ratio streamed / floor is printed at the end.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rascal_core::config::Config;
use rascal_engine::pipeline::read_change;
use rascal_engine::pipeline::{permissions_in_force, Origin};
use rascal_exec::git::workspace;
use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const FILES: usize = 600;
const LINES: usize = 417;

fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}");
    out.stdout
}

/// A repository with one commit and FILES new, untracked source files.
fn generate() -> (tempfile::TempDir, u64) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    git(p, &["init", "-q", "."]);
    std::fs::write(p.join("README.md"), "# bench\n").unwrap();
    git(p, &["add", "-A"]);
    git(
        p,
        &[
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@localhost",
            "commit",
            "-qm",
            "base",
        ],
    );
    let mut bytes = 0;
    for f in 0..FILES {
        let d = p.join(format!("src/m{:02}", f % 60));
        std::fs::create_dir_all(&d).unwrap();
        let mut text = String::from("use std::collections::HashMap;\n");
        for l in 1..LINES {
            match l % 7 {
                0 => text.push_str(&format!("    // step {l} of file {f}\n")),
                3 => text.push_str(&format!("fn f_{f}_{l}(x: u64) -> u64 {{ x * {l} }}\n")),
                _ => text.push_str(&format!("    let v{l} = table.get(&{}).copied();\n", f * l)),
            }
        }
        bytes += text.len() as u64;
        let mut file = std::fs::File::create(d.join(format!("file_{f:05}.rs"))).unwrap();
        file.write_all(text.as_bytes()).unwrap();
    }
    (dir, bytes)
}

/// git's floor: status, then read every changed file and count its lines.
fn floor(dir: &Path) -> usize {
    let status = git(dir, &["status", "--porcelain", "-uall", "-z"]);
    let mut lines = 0;
    for entry in status.split(|&b| b == 0).filter(|e| e.len() > 3) {
        let path = std::str::from_utf8(&entry[3..]).unwrap();
        let bytes = std::fs::read(dir.join(path)).unwrap();
        lines += bytes.iter().filter(|&&b| b == b'\n').count();
    }
    lines
}

fn streamed(dir: &Path, base: git2::Oid, config: &Config) -> usize {
    let (cs, read) = read_change(
        config,
        permissions_in_force(config, Origin::Human).as_ref(),
        dir,
        dir,
        base,
        &Default::default(),
    )
    .unwrap();
    black_box(read);
    cs.files.len()
}

fn median(c: &mut [Duration]) -> Duration {
    c.sort();
    c[c.len() / 2]
}

fn bench(c: &mut Criterion) {
    let (dir, bytes) = generate();
    let p = dir.path();
    let repo = git2::Repository::open(p).unwrap();
    let base = repo.head().unwrap().peel_to_commit().unwrap().id();
    let none = Config::default();
    let mut g = c.benchmark_group("changeset");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("floor: git status -uall + read + count lines", |b| {
        b.iter(|| black_box(floor(p)))
    });
    g.bench_function("streamed (rascal check)", |b| {
        b.iter(|| black_box(streamed(p, base, &none)))
    });
    g.bench_function("held whole", |b| {
        b.iter(|| black_box(workspace::changeset(p, p, base).unwrap().files.len()))
    });
    g.finish();
    // The ratio, side by side in alternating rounds.
    let (mut f, mut s) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        let t = Instant::now();
        black_box(floor(p));
        f.push(t.elapsed());
        let t = Instant::now();
        black_box(streamed(p, base, &none));
        s.push(t.elapsed());
    }
    let (f, s) = (median(&mut f), median(&mut s));
    println!(
        "changeset: {FILES} files, {bytes} bytes · floor {:.1} ms · streamed {:.1} ms · ratio {:.2}x",
        f.as_secs_f64() * 1e3,
        s.as_secs_f64() * 1e3,
        s.as_secs_f64() / f.as_secs_f64()
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
