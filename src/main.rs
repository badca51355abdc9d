//! The `rascal` command line: a thin shell over the library. Exit codes:
//! 0 PASS or WARN, 1 FAIL, 2 usage or config error, 3 escalated.

use clap::{Parser, Subcommand};
use rascal::config::Config;
use rascal::event::{RunEvent, RunSummary};
use rascal::pipeline::{self, RunRequest};
use rascal::printer::{self, Printer};
use rascal::store::Store;
use rascal::verdict::{gate, Report};
use rascal::verify::{self, Origin, Verification};
use rascal::{agent, demo, workspace};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use tokio_util::sync::CancellationToken;

#[derive(Parser)]
#[command(
    name = "rascal",
    version,
    about = "Hand one coding task to several AI agents and know which result can be trusted",
    after_help = "Exit codes: 0 PASS or WARN, 1 FAIL, 2 usage or config error, 3 escalated to a human."
)]
struct Cli {
    /// Run as if started in DIR.
    #[arg(short = 'C', global = true, value_name = "DIR")]
    dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a task on one or more agents and verify each candidate.
    Run {
        /// What the agents should do.
        instruction: String,
        /// Agent name from .rascal/config.yaml (repeat for several candidates).
        #[arg(long = "agent", short = 'a', value_delimiter = ',')]
        agents: Vec<String>,
        /// Base commit (branch, tag or sha) the candidates start from.
        #[arg(long, default_value = "HEAD")]
        base: String,
        /// Print results as lines (no TUI).
        #[arg(long)]
        headless: bool,
        /// Print one JSON document at the end (implies --headless).
        #[arg(long)]
        json: bool,
        /// Agent timeout, overriding the config (e.g. 90s, 5m).
        #[arg(long, value_parser = parse_dur)]
        timeout: Option<std::time::Duration>,
        /// Do not print agent log lines.
        #[arg(long)]
        quiet: bool,
        /// Where agents run, overriding `launcher:` in .rascal/config.yaml.
        #[arg(long, value_enum)]
        launcher: Option<LauncherArg>,
    },
    /// Resume a docker run whose rascal died: reattach to its containers.
    Attach {
        run: String,
        #[arg(long)]
        json: bool,
        /// Do not print agent log lines.
        #[arg(long)]
        quiet: bool,
    },
    /// Check the Docker engine and find rascal containers of runs that are gone.
    Doctor {
        /// Remove containers whose run is not in this repository's store.
        #[arg(long)]
        remove: bool,
    },
    /// Run guardrails and permissions on the working tree (no agent).
    Check {
        /// Compare the working tree against this commit.
        #[arg(long, default_value = "HEAD")]
        base: String,
        #[arg(long)]
        json: bool,
    },
    /// List the runs recorded in this repository.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Show a recorded run as it printed live.
    Show {
        run: String,
        #[arg(long)]
        json: bool,
        /// Do not print agent log lines.
        #[arg(long)]
        quiet: bool,
    },
    /// Run the bundled sample: three scripted agents on a sample repository.
    Demo {
        #[arg(long)]
        headless: bool,
        /// Keep the sample repository (its path is printed).
        #[arg(long)]
        keep: bool,
    },
    #[command(name = "__scripted-agent", hide = true)]
    ScriptedAgent { file: PathBuf },
}

/// `println!` that never panics: a closed stdout (`rascal show … | head`)
/// must not kill a run or print a backtrace.
macro_rules! say {
    () => {{
        let _ = writeln!(std::io::stdout());
    }};
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum LauncherArg {
    Process,
    Docker,
}

fn parse_dur(s: &str) -> Result<std::time::Duration, String> {
    rascal::config::duration::parse_duration(s).map(|d| d.get())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match real_main(cli) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("rascal: error: {msg}");
            2
        }
    };
    ExitCode::from(code as u8)
}

fn cwd(dir: &Option<PathBuf>) -> PathBuf {
    dir.clone()
        .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")))
}

fn real_main(cli: Cli) -> Result<i32, String> {
    let dir = cwd(&cli.dir);
    match cli.command {
        Command::ScriptedAgent { file } => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| format!("reading scenario {}: {e}", file.display()))?;
            let steps: Vec<agent::scripted::Step> = serde_json::from_str(&text)
                .map_err(|e| format!("scenario {}: {e}", file.display()))?;
            Ok(agent::scripted::play(&steps, &dir))
        }
        Command::Check { base, json } => check(&dir, &base, json),
        Command::Run {
            instruction,
            agents,
            base,
            headless: _,
            json,
            timeout,
            quiet,
            launcher,
        } => {
            let req = RunRequest {
                repo: dir,
                base,
                instruction,
                agents,
                rascal_exe: std::env::current_exe().map_err(|e| e.to_string())?,
                timeout,
                launcher: launcher.map(|l| match l {
                    LauncherArg::Process => rascal::config::LauncherKind::Process,
                    LauncherArg::Docker => rascal::config::LauncherKind::Docker,
                }),
            };
            run(req, json, !quiet)
        }
        Command::Attach { run, json, quiet } => {
            let exe = std::env::current_exe().map_err(|e| e.to_string())?;
            match rascal::reattach::prepare_attach(&dir, &run, exe) {
                Ok(p) => {
                    // What landed before, then the rest live.
                    let earlier = open_store(&dir)?.events(&run).unwrap_or_default();
                    execute(p, json, !quiet, earlier)
                }
                Err(e) => {
                    eprintln!("rascal: error: {e}");
                    Ok(e.exit_code())
                }
            }
        }
        Command::Doctor { remove } => {
            let repo = workspace::open(&dir).map_err(|e| e.to_string())?;
            let store = open_store(&dir)?;
            let d = runtime()?.block_on(rascal::doctor::diagnose(
                &store,
                &workspace::workdir(&repo),
                remove,
            ));
            out(d.lines);
            Ok(d.exit_code)
        }
        Command::List { json } => list(&dir, json),
        Command::Show { run, json, quiet } => show(&dir, &run, json, !quiet),
        Command::Demo { headless: _, keep } => {
            let tmp = tempfile::Builder::new()
                .prefix("rascal-demo-")
                .tempdir()
                .map_err(|e| format!("creating a temp directory: {e}"))?;
            demo::create_sample(tmp.path())
                .map_err(|e| format!("creating the sample repository: {e}"))?;
            say!("rascal demo: sample repository at {}", tmp.path().display());
            say!("(the TUI is not built yet; printing the run headless)\n");
            let req = RunRequest {
                repo: tmp.path().to_path_buf(),
                base: "HEAD".into(),
                instruction: demo::INSTRUCTION.into(),
                agents: demo::AGENTS.iter().map(|s| s.to_string()).collect(),
                rascal_exe: std::env::current_exe().map_err(|e| e.to_string())?,
                timeout: None,
                launcher: None,
            };
            let code = run(req, false, true);
            if keep {
                let path = tmp.keep();
                say!("\nkept the sample repository at {}", path.display());
                say!("replay it with: rascal -C {} list", path.display());
            }
            code
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting the async runtime: {e}"))
}

fn out(lines: Vec<String>) {
    let stdout = std::io::stdout();
    let mut o = stdout.lock();
    for l in lines {
        let _ = writeln!(o, "{l}");
    }
    let _ = o.flush();
}

fn run(req: RunRequest, json: bool, logs: bool) -> Result<i32, String> {
    let prepared = match pipeline::prepare(req) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("rascal: error: {e}");
            return Ok(e.exit_code());
        }
    };
    execute(prepared, json, logs, Vec::new())
}

/// Execute a prepared run, printing `earlier` (replayed) events first.
fn execute(
    prepared: pipeline::PreparedRun,
    json: bool,
    logs: bool,
    earlier: Vec<RunEvent>,
) -> Result<i32, String> {
    let rt = runtime()?;
    rt.block_on(async move {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<RunEvent>();
        let cancel = CancellationToken::new();
        let on_signal = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("rascal: interrupted; stopping agents (the run record is kept)");
                on_signal.cancel();
            }
        });
        let pipeline = tokio::spawn(pipeline::execute(prepared, tx, cancel));
        let mut printer = Printer::new(logs);
        let mut events = Vec::new();
        for ev in earlier {
            if !json {
                out(printer.render(&ev));
            }
            events.push(ev);
        }
        while let Some(ev) = rx.recv().await {
            if !json {
                out(printer.render(&ev));
            }
            events.push(ev);
        }
        let outcome = pipeline
            .await
            .map_err(|e| format!("internal error: {e}"))?
            .map_err(|e| e.to_string())?;
        if json {
            let summary = RunSummary::from_events(&events);
            say!(
                "{}",
                serde_json::to_string_pretty(&summary).unwrap_or_default()
            );
        } else {
            say!("replay: rascal show {}", outcome.run);
        }
        Ok(outcome.exit_code)
    })
}

fn check(dir: &std::path::Path, base: &str, json: bool) -> Result<i32, String> {
    let setup = || -> Result<(Config, git2::Oid, PathBuf), String> {
        let repo = workspace::open(dir).map_err(|e| e.to_string())?;
        let oid = workspace::resolve(&repo, base).map_err(|e| e.to_string())?;
        let config = Config::load_at(&repo, oid).map_err(|e| e.to_string())?;
        Ok((config, oid, workspace::workdir(&repo)))
    };
    let (config, oid, workdir) = match setup() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rascal: error: {e}");
            return Ok(2);
        }
    };
    let changes = match workspace::changeset(&workdir, oid) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rascal: error: {e}");
            return Ok(2);
        }
    };
    let rt = runtime()?;
    let reports: Vec<Report> = rt.block_on(async {
        let v = Verification {
            config: &config,
            workdir: &workdir,
            changes: &changes,
            origin: Origin::Human,
            cancel: CancellationToken::new(),
        };
        let live = !json;
        verify::verify(&v, &move |p| {
            if let (true, verify::Progress::Report(r)) = (live, p) {
                out(printer::report_lines(&r));
            }
        })
        .await
    });
    let verdict = gate(&reports);
    if json {
        let doc = serde_json::json!({
            "verdict": verdict,
            "base": oid.to_string(),
            "files_changed": changes.files.len(),
            "lines_changed": changes.lines_changed(),
            "layers": reports,
        });
        say!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        say!(
            "verdict {verdict} · {} files, {} lines changed against {}",
            changes.files.len(),
            changes.lines_changed(),
            &oid.to_string()[..8]
        );
    }
    Ok(verdict.exit_code())
}

fn open_store(dir: &std::path::Path) -> Result<Store, String> {
    let repo = workspace::open(dir).map_err(|e| e.to_string())?;
    let mut store =
        Store::open(&Store::path_in(&workspace::state_dir(&repo))).map_err(|e| e.to_string())?;
    store.mark_interrupted().map_err(|e| e.to_string())?;
    Ok(store)
}

fn list(dir: &std::path::Path, json: bool) -> Result<i32, String> {
    let store = open_store(dir)?;
    let runs = store.list().map_err(|e| e.to_string())?;
    if json {
        say!(
            "{}",
            serde_json::to_string_pretty(&runs).unwrap_or_default()
        );
        return Ok(0);
    }
    if runs.is_empty() {
        say!("no runs yet — start one with: rascal run \"INSTRUCTION\" --agent NAME");
        return Ok(0);
    }
    say!(
        "{:<17} {:<11} {:<7} {:>4}  {:<8}  task",
        "RUN",
        "STATUS",
        "VERDICT",
        "CAND",
        "BASE"
    );
    for r in runs {
        say!(
            "{:<17} {:<11} {:<7} {:>4}  {:<8}  {}",
            r.id,
            r.status,
            r.verdict.as_deref().unwrap_or("-").to_uppercase(),
            r.candidates,
            &r.base[..r.base.len().min(8)],
            rascal::text::ellipsis(
                &rascal::text::sanitize(r.instruction.lines().next().unwrap_or("")),
                60
            )
        );
    }
    Ok(0)
}

fn show(dir: &std::path::Path, run: &str, json: bool, logs: bool) -> Result<i32, String> {
    let store = open_store(dir)?;
    let events = match store.events(run) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("rascal: error: {e}");
            return Ok(2);
        }
    };
    let summary = RunSummary::from_events(&events);
    if json {
        say!(
            "{}",
            serde_json::to_string_pretty(&summary).unwrap_or_default()
        );
    } else {
        let mut printer = Printer::new(logs);
        for ev in &events {
            out(printer.render(ev));
        }
        if summary.status == "running" {
            say!("(run still in progress)");
        }
    }
    Ok(summary.exit_code.unwrap_or(1))
}
