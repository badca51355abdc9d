//! The cost of the sandbox, side by side: an agent start (`true` through
//! the process launcher, bubblewrap vs bare) and a guardrail command (`true`
//! on a fresh copy of the demo's change in bubblewrap vs in place). Median
//! of 20 each, in ms. Run with `cargo bench --bench sandbox`.

use rascal_exec::exec::confine::Confinement;
use rascal_exec::exec::launch::{process::ProcessLauncher, LaunchSpec, Launcher};
use rascal_exec::exec::place::{Place, Sandboxed};
use rascal_exec::exec::runner::{self, CommandSpec};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    if rascal_exec::exec::sandbox::available().is_err() {
        eprintln!("bubblewrap is not installed: nothing to compare");
        return;
    }
    let rt = rascal_exec::exec::runtime().unwrap();
    let repo = tempfile::tempdir().unwrap();
    rascal::cli::demo::create_sample(repo.path()).unwrap();
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
    std::fs::write(ws.join("src/extra.rs"), "pub fn extra() {}\n").unwrap();
    let mut changes = rascal_exec::git::workspace::changeset(repo.path(), &ws, base).unwrap();
    changes.tree = rascal_exec::git::tree::write_change_tree(repo.path(), &ws, base, &changes)
        .unwrap()
        .to_string();

    let env: Vec<(String, String)> = ["PATH", "HOME"]
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
        .collect();
    let agent = |confine: Option<Confinement>| {
        let spec = LaunchSpec {
            run: "r".into(),
            candidate: "c".into(),
            workdir: ws.clone(),
            argv: vec!["true".into()],
            env: env.clone(),
            stdin: None,
            timeout: Duration::from_secs(30),
            image: None,
            agent: None,
            repo: repo.path().to_path_buf(),
            resume: None,
            confine,
            upload: None,
        };
        // Nobody reads the lines: a closed queue drops them.
        let (tx, rx) = rascal_exec::exec::runner::log_channel();
        drop(rx);
        let t = Instant::now();
        rt.block_on(ProcessLauncher::default().run(spec, tx, CancellationToken::new()))
            .unwrap();
        t.elapsed().as_secs_f64() * 1000.0
    };
    let confine = Confinement {
        workspace: ws.clone(),
        writable: Vec::new(),
        hide: vec![repo.path().to_path_buf(), files.path().to_path_buf()],
        read_only: Vec::new(),
        network: false,
        limits: Default::default(),
    };
    let bare_agent = median((0..20).map(|_| agent(None)).collect());
    let boxed_agent = median((0..20).map(|_| agent(Some(confine.clone()))).collect());

    let check = |place: &Place| {
        let t = Instant::now();
        let spec = CommandSpec::shell("true", ws.clone(), Duration::from_secs(30));
        let prepared = place.prepare(spec, &[], false).unwrap();
        rt.block_on(runner::run(&prepared.spec, None, &CancellationToken::new()))
            .unwrap();
        t.elapsed().as_secs_f64() * 1000.0
    };
    let bare = Place::InPlace { origin: ws.clone() };
    let boxed = Place::Sandboxed(Arc::new(Sandboxed {
        origin: repo.path().to_path_buf(),
        workspace: ws.clone(),
        tree: changes.tree,
        run_tree: None,
        scratch: files.path().join("checks"),
        cache: None,
        hide: vec![repo.path().to_path_buf(), files.path().to_path_buf()],
        confined: true,
        holdout: Default::default(),
        with_holdout: false,
        limits: Default::default(),
    }));
    let bare_check = median((0..20).map(|_| check(&bare)).collect());
    let boxed_check = median((0..20).map(|_| check(&boxed)).collect());
    println!("sandbox overhead, median of 20 (ms):");
    println!("  agent start (`true`)      bare {bare_agent:6.2}   bubblewrap {boxed_agent:6.2}");
    println!("  guardrail (`true`, copy)  bare {bare_check:6.2}   bubblewrap {boxed_check:6.2}");
}
