//! What the labelled benchmarks (`pick`, `real_crates`) share: a task's
//! candidates, committing its repository, running the real binary on it
//! (`rascal run --json`), reading the verdicts, and printing the table.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// One candidate: its id, its label, and its script.
pub struct Candidate {
    pub id: String,
    pub label: &'static str,
    pub script: String,
}

/// The labels of candidates that should be picked.
pub const GOOD: &[&str] = &["good", "verbose"];

/// The labels of candidates that should be rejected.
pub const BAD: &[&str] = &["broken", "wrong", "cheat", "scope"];

/// A task: a repository's files, its instruction and its candidates.
pub struct Task {
    pub name: String,
    pub files: Vec<(String, String)>,
    pub instruction: String,
    pub candidates: Vec<Candidate>,
    /// More lines of `.rascal/config.yaml`'s `agents:` (a discriminator).
    pub helpers: String,
}

/// A shell line writing `content` to `path`.
#[allow(dead_code)] // not every bench writes whole files
pub fn write(path: &str, content: &str) -> String {
    format!("cat > {path} <<'RASCAL_EOF'\n{content}RASCAL_EOF\n")
}

pub fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .map(|o| o.status.success());
    assert!(matches!(ok, Ok(true)), "git {args:?} in {}", dir.display());
}

/// What one task's run came to.
pub struct Outcome {
    pub task: String,
    pub pick: String,
    pub verdict: &'static str,
    pub bad_accepted: Vec<&'static str>,
    pub good_rejected: Vec<&'static str>,
    pub seconds: f64,
    /// The whole `--json` document.
    #[allow(dead_code)] // read where the bench keeps it
    pub doc: serde_json::Value,
}

/// Writes the task's files and one `runtime: command` agent per candidate
/// into `dir`, commits it all as the base, runs rascal there and reads
/// its verdicts.
pub fn run_in(bin: &Path, dir: &Path, task: &Task) -> Outcome {
    for (p, c) in &task.files {
        let path = dir.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, c).unwrap();
    }
    let mut agents = String::from("agents:\n");
    for c in &task.candidates {
        agents.push_str(&format!(
            "  {}: {{ runtime: command, command: [\"sh\", \"-c\", {}] }}\n",
            c.id,
            serde_json::to_string(&c.script).unwrap()
        ));
    }
    agents.push_str(&task.helpers);
    std::fs::create_dir_all(dir.join(".rascal")).unwrap();
    std::fs::write(dir.join(".rascal/config.yaml"), agents).unwrap();
    let id = [
        "-c",
        "user.name=bench",
        "-c",
        "user.email=bench@example.com",
    ];
    git(dir, &["init", "-q"]);
    git(dir, &[&id[..], &["add", "-A"]].concat());
    git(dir, &[&id[..], &["commit", "-qm", "base"]].concat());
    let ids: Vec<&str> = task.candidates.iter().map(|c| c.id.as_str()).collect();
    let started = Instant::now();
    let o = Command::new(bin)
        .args([
            "run",
            "--spec",
            &task.instruction,
            "--agent",
            &ids.join(","),
            "--json",
        ])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("running rascal");
    let seconds = started.elapsed().as_secs_f64();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{}: {e}: {}", task.name, String::from_utf8_lossy(&o.stderr)));
    let label = |id: &str| {
        task.candidates
            .iter()
            .find(|c| c.id == id)
            .map_or("?", |c| c.label)
    };
    let pick = doc["ranking"]["pick"].as_str().unwrap_or("").to_string();
    let contested = doc["ranking"]["contested"].is_string();
    let has_good = task.candidates.iter().any(|c| GOOD.contains(&c.label));
    let verdict = match (pick.as_str(), contested) {
        ("", true) => "contested",
        ("", false) if !has_good => "right",
        ("", false) => "missed",
        (p, _) if GOOD.contains(&label(p)) => "right",
        _ => "wrong",
    };
    let mut bad_accepted = Vec::new();
    let mut good_rejected = Vec::new();
    for c in doc["candidates"].as_array().into_iter().flatten() {
        let id = c["id"].as_str().unwrap_or_default();
        let passed = c["verdict"] == "pass" || c["verdict"] == "warn";
        match (GOOD.contains(&label(id)), passed) {
            (true, false) => good_rejected.push(label(id)),
            (false, true) => bad_accepted.push(label(id)),
            _ => {}
        }
    }
    Outcome {
        task: task.name.clone(),
        pick: if pick.is_empty() {
            "—".into()
        } else {
            format!("{pick} ({})", label(&pick))
        },
        verdict,
        bad_accepted,
        good_rejected,
        seconds,
        doc,
    }
}

/// The rascal binary to measure: `RASCAL_BIN`, else the one cargo built.
pub fn rascal_bin() -> std::path::PathBuf {
    std::env::var_os("RASCAL_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_rascal").into())
}

/// The names in the comma-separated list `var` (empty: all tasks).
pub fn only(var: &str) -> Vec<String> {
    std::env::var(var)
        .map(|s| s.split(',').map(str::to_string).collect())
        .unwrap_or_default()
}

pub fn print_header() {
    println!(
        "{:<22} {:<16} {:<10} {:<24} {:<14} {:>6}",
        "task", "pick", "outcome", "bad accepted", "good rejected", "secs"
    );
}

pub fn print_row(o: &Outcome) {
    let list = |v: &[&str]| {
        if v.is_empty() {
            "—".to_string()
        } else {
            v.join(",")
        }
    };
    println!(
        "{:<22} {:<16} {:<10} {:<24} {:<14} {:>6.1}",
        o.task,
        o.pick,
        o.verdict,
        list(&o.bad_accepted),
        list(&o.good_rejected),
        o.seconds
    );
}

/// The totals under the table.
pub fn print_summary(tasks: &[Task], all: &[Outcome], started: Instant) {
    let count = |v: &str| all.iter().filter(|o| o.verdict == v).count();
    let n = all.len();
    println!(
        "\n{n} tasks: picks right {} · contested {} · wrong {} · missed {}",
        count("right"),
        count("contested"),
        count("wrong"),
        count("missed")
    );
    let bad: Vec<String> = BAD
        .iter()
        .map(|k| {
            let of = tasks
                .iter()
                .flat_map(|t| &t.candidates)
                .filter(|c| c.label == *k)
                .count();
            let acc = all
                .iter()
                .flat_map(|o| &o.bad_accepted)
                .filter(|l| **l == *k)
                .count();
            format!("{k} {acc}/{of}")
        })
        .collect();
    let goods = tasks
        .iter()
        .flat_map(|t| &t.candidates)
        .filter(|c| GOOD.contains(&c.label))
        .count();
    let rejected: usize = all.iter().map(|o| o.good_rejected.len()).sum();
    println!(
        "bad accepted by kind: {} · good rejected {rejected}/{goods}",
        bad.join(" · ")
    );
    println!("run time {:.0} s", started.elapsed().as_secs_f64());
}
