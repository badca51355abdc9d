//! The cost of copy mode, side by side: one docker candidate running `true`
//! with its workspace bind-mounted vs copied in and out (upload before
//! start, download and safe unpacking after exit), for the demo's
//! repository and for a 100 MiB one. Prints the median of the runs in ms,
//! and copy mode's own upload/download times and sizes from the
//! candidate's log. The engine is whatever DOCKER_HOST names (the local
//! one by default; copy mode is forced). Run with
//! `cargo bench --bench copy_mode`.

use rascal_core::config::workspace::WorkspaceMode;
use rascal_core::config::{AgentConfig, RuntimeKind};
use rascal_exec::exec::launch::{docker::DockerLauncher, LaunchSpec, Launcher};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const IMAGE: &str = "rascal-bench-busybox:1";

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// FROM scratch + the static busybox, built on the engine (never pulled).
fn build_image() -> Result<(), String> {
    let ctx = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::create_dir(ctx.path().join("bin")).map_err(|e| e.to_string())?;
    std::fs::copy("/bin/busybox", ctx.path().join("bin/busybox"))
        .map_err(|e| format!("/bin/busybox: {e} (apt-get install busybox-static)"))?;
    std::os::unix::fs::symlink("busybox", ctx.path().join("bin/true")).unwrap();
    std::fs::write(
        ctx.path().join("Dockerfile"),
        "FROM scratch\nCOPY bin /bin\n",
    )
    .unwrap();
    let o = Command::new("docker")
        .args(["build", "-q", "-t", IMAGE])
        .arg(ctx.path())
        .env("DOCKER_BUILDKIT", "0")
        .output()
        .map_err(|e| format!("docker: {e}"))?;
    o.status
        .success()
        .then_some(())
        .ok_or_else(|| String::from_utf8_lossy(&o.stderr).into_owned())
}

/// A committed repository: the demo's, or `mib` files of 1 MiB of
/// incompressible bytes.
fn repository(dir: &Path, mib: usize) {
    if mib == 0 {
        rascal::cli::demo::create_sample(dir).unwrap();
        return;
    }
    let repo = git2::Repository::init(dir).unwrap();
    let mut x: u64 = 0x9e3779b97f4a7c15;
    for i in 0..mib {
        let mut data = vec![0u8; 1 << 20];
        for chunk in data.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
        }
        std::fs::create_dir_all(dir.join(format!("d{}", i % 10))).unwrap();
        std::fs::write(dir.join(format!("d{}/f{i}.bin", i % 10)), data).unwrap();
    }
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("bench", "bench@rascal.invalid").unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, "base", &tree, &[])
        .unwrap();
}

/// The number after `key` in a log line (`in 180 ms` → 180).
fn after(line: &str, key: &str) -> Option<String> {
    let rest = &line[line.find(key)? + key.len()..];
    Some(rest.split([' ', ')', ';']).next()?.to_string())
}

fn main() {
    let rt = rascal_exec::exec::runtime().unwrap();
    if let Err(e) = rt.block_on(rascal_exec::exec::launch::docker::connect()) {
        eprintln!("no Docker engine: nothing to measure ({e})");
        return;
    }
    if let Err(e) = build_image() {
        eprintln!("could not build {IMAGE}: {e}");
        return;
    }
    println!(
        "engine: {}",
        rascal_exec::exec::launch::docker::engine_address()
    );
    for (label, mib, runs) in [("demo repository", 0, 9), ("100 MiB repository", 100, 5)] {
        let repo = tempfile::tempdir().unwrap();
        repository(repo.path(), mib);
        let git = git2::Repository::open(repo.path()).unwrap();
        let base = git.head().unwrap().peel_to_commit().unwrap().id();
        let files = tempfile::tempdir().unwrap();
        let ws = rascal_exec::git::workspace::create_workspace(
            &git,
            base,
            &files.path().join("workspaces/r/c"),
            &Default::default(),
        )
        .unwrap();
        let one = |mode: WorkspaceMode, n: usize| {
            let mut agent = AgentConfig::new(RuntimeKind::Command);
            agent.workspace = Some(mode);
            agent.network = Some("none".into());
            let spec = LaunchSpec {
                run: format!("bench-{}", std::process::id()),
                candidate: format!("c{n}"),
                workdir: ws.clone(),
                argv: vec!["true".into()],
                env: Vec::new(),
                stdin: None,
                timeout: Duration::from_secs(300),
                image: Some(IMAGE.into()),
                agent: Some(agent.clone()),
                repo: repo.path().to_path_buf(),
                resume: None,
                confine: None,
                upload: None,
            };
            // The queue is bounded: read it while the launcher runs.
            let (tx, mut rx) = rascal_exec::exec::runner::log_channel();
            let collect = rt.spawn(async move {
                let mut lines = Vec::new();
                while let Some(batch) = rx.recv().await {
                    lines.extend(batch);
                }
                lines
            });
            let launcher = DockerLauncher::new();
            let t = Instant::now();
            rt.block_on(launcher.run(spec, tx, CancellationToken::new()))
                .unwrap();
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            rt.block_on(launcher.release(
                &format!("bench-{}", std::process::id()),
                &format!("c{n}"),
                &agent,
            ));
            let lines: Vec<String> = rt
                .block_on(collect)
                .unwrap()
                .into_iter()
                .map(|l| l.text)
                .collect();
            (ms, lines)
        };
        let mount = median((0..runs).map(|n| one(WorkspaceMode::Mount, n).0).collect());
        let mut up = Vec::new();
        let mut down = Vec::new();
        let mut total = Vec::new();
        let mut sizes = (String::new(), String::new());
        for n in 0..runs {
            let (ms, lines) = one(WorkspaceMode::Copy, 100 + n);
            total.push(ms);
            for l in &lines {
                if l.contains("copy mode: uploaded") {
                    up.push(
                        after(l, " in ")
                            .and_then(|v| v.parse().ok())
                            .unwrap_or(f64::NAN),
                    );
                    sizes.0 = l.trim_start_matches("rascal: copy mode: ").to_string();
                }
                if l.contains("copy mode: downloaded") {
                    down.push(
                        after(l, " in ")
                            .and_then(|v| v.parse().ok())
                            .unwrap_or(f64::NAN),
                    );
                    sizes.1 = l.trim_start_matches("rascal: copy mode: ").to_string();
                }
            }
        }
        println!("{label}:");
        println!("  mount mode run      {mount:8.0} ms (median of {runs})");
        println!(
            "  copy mode run       {:8.0} ms (median of {runs}; {:.2}x)",
            median(total.clone()),
            median(total) / mount
        );
        println!("  upload              {:8.0} ms  {}", median(up), sizes.0);
        println!("  download + unpack   {:8.0} ms  {}", median(down), sizes.1);
    }
}
