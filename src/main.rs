//! The `rascal` command line: a thin shell over the library. Exit codes:
//! 0 PASS or WARN, 1 FAIL, 2 usage or config error, 3 escalated.

use clap::{Parser, Subcommand};
use rascal::agents;
use rascal::cli::demo;
use rascal::config::Config;
use rascal::git::workspace;
use rascal::model::decision::{Decision, DecisionKind};
use rascal::model::event::RunEvent;
use rascal::model::summary::RunSummary;
use rascal::model::verdict::{gate, Report};
use rascal::output::printer::{self, Printer};
use rascal::pipeline::sequence::{self, Origin, Verification};
use rascal::pipeline::{self, RunRequest};
use rascal::store::Store;
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
        /// What the agents should do (or use --spec / --issue).
        #[arg(required_unless_present_any = ["spec", "issue"])]
        instruction: Option<String>,
        /// Run the task in .rascal/specs/NAME.yaml (read from the base commit).
        #[arg(long, value_name = "NAME", conflicts_with_all = ["instruction", "issue"])]
        spec: Option<String>,
        /// Run the task in a Markdown issue body (`## Acceptance Criteria`, `## Constraints`).
        #[arg(long, value_name = "FILE.md", conflicts_with = "instruction")]
        issue: Option<PathBuf>,
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
        /// TUI theme (dark, light, high-contrast); default from `theme:` in config.
        #[arg(long)]
        theme: Option<String>,
        /// Candidates per agent (compare mode), e.g. `--n 3`.
        #[arg(long)]
        n: Option<u32>,
        /// Select the comparator's pick when it passes, then finalize it.
        #[arg(long)]
        auto: bool,
        /// With --auto: push the branch to this remote (name or URL).
        #[arg(long, value_name = "REMOTE")]
        push: Option<String>,
        /// With --auto: open a pull request with `gh` (or print the command).
        #[arg(long)]
        pr: bool,
        /// Where agents run, overriding `launcher:` in .rascal/config.yaml.
        #[arg(long, value_enum)]
        launcher: Option<LauncherArg>,
        /// Narrow the permissions for this run: agents may only change paths
        /// matching these globs (on top of .rascal/permissions.yaml).
        #[arg(long = "allow-path", value_name = "GLOB")]
        allow_paths: Vec<String>,
        /// Narrow the permissions for this run: also deny these globs.
        #[arg(long = "deny-path", value_name = "GLOB")]
        deny_paths: Vec<String>,
    },
    /// Select the candidate to finalize.
    Select {
        run: String,
        candidate: String,
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Accept a failed check (recorded with your name and reason; never erases the verdict).
    Override {
        run: String,
        candidate: String,
        /// agent | guardrails | permissions | criteria | review
        #[arg(long)]
        layer: String,
        /// The check's name, e.g. `build`.
        #[arg(long)]
        check: String,
        /// Override one issue rule only.
        #[arg(long)]
        rule: Option<String>,
        /// Why the failure can be accepted (required).
        #[arg(long)]
        reason: String,
        /// Also accept, with the same reason, every check that was skipped
        /// (never ran) because of a failure — else the candidate stays FAIL.
        #[arg(long)]
        with_skipped: bool,
    },
    /// Send one candidate of a finished run back to its agent with feedback;
    /// it is verified again and the run re-ranked (all attempts are kept).
    Retry {
        run: String,
        candidate: String,
        /// What the agent should fix.
        #[arg(long)]
        feedback: String,
        #[arg(long)]
        json: bool,
        /// Do not print agent log lines.
        #[arg(long)]
        quiet: bool,
    },
    /// Hand a run (or one candidate) to a human.
    Escalate {
        run: String,
        candidate: Option<String>,
        #[arg(long, default_value = "")]
        note: String,
    },
    /// Commit the selected candidate on a branch and write the PR body.
    Finalize {
        run: String,
        /// Push the branch to this remote (name or URL).
        #[arg(long, value_name = "REMOTE")]
        push: Option<String>,
        /// Open a pull request with `gh` (or print the command).
        #[arg(long)]
        pr: bool,
    },
    /// Print a run's report: md (the PR body), json or sarif.
    Report {
        run: String,
        #[arg(long, value_enum, default_value = "md")]
        format: rascal::output::report::Format,
    },
    /// Resume a docker run whose rascal died (reattach to its containers);
    /// in a terminal, otherwise open the TUI on the run's record, following it.
    Attach {
        run: String,
        #[arg(long)]
        json: bool,
        /// Do not print agent log lines.
        #[arg(long)]
        quiet: bool,
        /// TUI theme (dark, light, high-contrast).
        #[arg(long)]
        theme: Option<String>,
    },
    /// Check the setup: each agent's CLI, version and credentials; the Docker
    /// engine; rascal containers of runs that are gone.
    Doctor {
        /// Remove containers whose run is not in this repository's store.
        #[arg(long)]
        remove: bool,
        #[arg(long)]
        json: bool,
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
        /// TUI theme (dark, light, high-contrast).
        #[arg(long)]
        theme: Option<String>,
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
            let steps: Vec<agents::scripted::Step> = serde_json::from_str(&text)
                .map_err(|e| format!("scenario {}: {e}", file.display()))?;
            Ok(agents::scripted::play(&steps, &dir))
        }
        Command::Check { base, json } => check(&dir, &base, json),
        Command::Run {
            instruction,
            spec,
            issue,
            agents,
            base,
            headless,
            json,
            timeout,
            quiet,
            n,
            auto,
            push,
            pr,
            theme,
            launcher,
            allow_paths,
            deny_paths,
        } => {
            let tui = tui_wanted(headless || json, theme)?;
            // Like `git -C`, a relative issue path is relative to DIR.
            let issue = issue.map(|p| if p.is_relative() { dir.join(p) } else { p });
            let mut req = RunRequest::new(
                dir.clone(),
                &instruction.unwrap_or_default(),
                agents,
                std::env::current_exe().map_err(|e| e.to_string())?,
            );
            req.spec = spec;
            req.issue = issue;
            req.base = base;
            req.timeout = timeout;
            req.n = n;
            req.auto = auto;
            req.scope = match scope_of(&allow_paths, &deny_paths) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("rascal: error: {e}");
                    return Ok(2);
                }
            };
            req.launcher = launcher.map(|l| match l {
                LauncherArg::Process => rascal::config::LauncherKind::Process,
                LauncherArg::Docker => rascal::config::LauncherKind::Docker,
            });
            let (code, run_id) = run(req, json, !quiet, tui)?;
            if auto && code == 0 {
                if let Some(id) = run_id {
                    let fin = finalize(&dir, &id, push, pr, json)?;
                    if fin != 0 {
                        return Ok(fin);
                    }
                }
            }
            Ok(code)
        }
        Command::Select {
            run,
            candidate,
            reason,
        } => decide(&dir, &run, Some(&candidate), DecisionKind::Select, &reason),
        Command::Override {
            run,
            candidate,
            layer,
            check,
            rule,
            reason,
            with_skipped,
        } => {
            let layer: rascal::model::verdict::Layer = serde_json::from_value(serde_json::Value::String(layer.clone()))
                .map_err(|_| format!("unknown layer `{layer}`\n  hint: one of agent, guardrails, permissions, criteria, review"))?;
            let code = decide(
                &dir,
                &run,
                Some(&candidate),
                DecisionKind::Override { layer, check, rule },
                &reason,
            )?;
            if code != 0 || !with_skipped {
                return Ok(code);
            }
            let skipped: Vec<(rascal::model::verdict::Layer, String)> = open_store(&dir)?
                .summary(&run)
                .map_err(|e| e.to_string())?
                .candidates
                .iter()
                .filter(|c| c.id == candidate)
                .flat_map(|c| c.reports.iter())
                .filter(|r| r.status == rascal::model::verdict::Status::Skipped)
                .map(|r| (r.layer, r.check.clone()))
                .collect();
            for (layer, check) in skipped {
                let kind = DecisionKind::Override {
                    layer,
                    check,
                    rule: None,
                };
                let code = decide(
                    &dir,
                    &run,
                    Some(&candidate),
                    kind,
                    &format!("not run: {reason}"),
                )?;
                if code != 0 {
                    return Ok(code);
                }
            }
            Ok(0)
        }
        Command::Escalate {
            run,
            candidate,
            note,
        } => decide(
            &dir,
            &run,
            candidate.as_deref(),
            DecisionKind::Escalate,
            &note,
        ),
        Command::Retry {
            run,
            candidate,
            feedback,
            json,
            quiet,
        } => {
            let repo = workspace::open(&dir).map_err(|e| e.to_string())?;
            let who = rascal::git::author::author(Some(&repo));
            let exe = std::env::current_exe().map_err(|e| e.to_string())?;
            match rascal::pipeline::retry::prepare_retry(
                &dir, &run, &candidate, &feedback, &who, exe,
            ) {
                Ok(p) => execute(p, json, !quiet, Vec::new()).map(|(code, _)| code),
                Err(e) => {
                    eprintln!("rascal: error: {e}");
                    Ok(e.exit_code())
                }
            }
        }
        Command::Finalize { run, push, pr } => finalize(&dir, &run, push, pr, false),
        Command::Report { run, format } => {
            let store = open_store(&dir)?;
            match store.summary(&run) {
                Ok(s) => {
                    say!("{}", rascal::output::report::render(&s, format));
                    Ok(0)
                }
                Err(e) => {
                    eprintln!("rascal: error: {e}");
                    Ok(2)
                }
            }
        }
        Command::Attach {
            run,
            json,
            quiet,
            theme,
        } => {
            let tui = tui_wanted(json, theme)?;
            let exe = std::env::current_exe().map_err(|e| e.to_string())?;
            match rascal::pipeline::attach::prepare_attach(&dir, &run, exe) {
                Ok(p) => {
                    // What landed before, then the rest live.
                    let earlier = open_store(&dir)?.events(&run).unwrap_or_default();
                    match tui {
                        Some(flag) => interactive(p, flag, earlier).map(|(code, _)| code),
                        None => execute(p, json, !quiet, earlier).map(|(code, _)| code),
                    }
                }
                // Nothing to resume (finished, process launcher, or driven by
                // a live rascal): in a terminal, the TUI shows the record and
                // follows it while it grows.
                Err(_) if tui.is_some() && open_store(&dir)?.run_exists(&run).unwrap_or(false) => {
                    let flag = tui.flatten();
                    let theme = rascal::tui::Theme::named(
                        flag.as_deref().unwrap_or("dark"),
                        rascal::tui::Theme::no_color_env(),
                    )?;
                    rascal::tui::shell::attach(&dir, &run, theme)
                }
                Err(e) => {
                    eprintln!("rascal: error: {e}");
                    Ok(e.exit_code())
                }
            }
        }
        Command::Doctor { remove, json } => doctor(&dir, remove, json),
        Command::List { json } => list(&dir, json),
        Command::Show { run, json, quiet } => show(&dir, &run, json, !quiet),
        Command::Demo {
            headless,
            keep,
            theme,
        } => {
            let tui = tui_wanted(headless, theme)?;
            let tmp = tempfile::Builder::new()
                .prefix("rascal-demo-")
                .tempdir()
                .map_err(|e| format!("creating a temp directory: {e}"))?;
            demo::create_sample(tmp.path())
                .map_err(|e| format!("creating the sample repository: {e}"))?;
            if tui.is_none() {
                say!(
                    "rascal demo: sample repository at {}\n",
                    tmp.path().display()
                );
            }
            let mut req = RunRequest::new(
                tmp.path().to_path_buf(),
                "",
                demo::AGENTS.iter().map(|s| s.to_string()).collect(),
                std::env::current_exe().map_err(|e| e.to_string())?,
            );
            req.spec = Some(demo::SPEC.into());
            let code = run(req, false, true, tui).map(|(c, _)| c);
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

/// `Some(theme flag)` when the TUI should open: not headless and stdout
/// is a terminal.
fn tui_wanted(headless: bool, theme: Option<String>) -> Result<Option<Option<String>>, String> {
    use std::io::IsTerminal;
    if let Some(name) = &theme {
        // A wrong name is an error even when the run ends up headless.
        rascal::tui::Theme::named(name, false)?;
    }
    Ok((!headless && std::io::stdout().is_terminal()).then_some(theme))
}

/// Run a task; returns the exit code and the run id (when it started).
fn run(
    req: RunRequest,
    json: bool,
    logs: bool,
    tui: Option<Option<String>>,
) -> Result<(i32, Option<String>), String> {
    let prepared = match pipeline::prepare(req) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("rascal: error: {e}");
            return Ok((e.exit_code(), None));
        }
    };
    if let Some(flag) = tui {
        return interactive(prepared, flag, Vec::new());
    }
    execute(prepared, json, logs, Vec::new())
}

/// Run a prepared run under the TUI (`earlier`: events already recorded).
fn interactive(
    prepared: pipeline::PreparedRun,
    theme: Option<String>,
    earlier: Vec<RunEvent>,
) -> Result<(i32, Option<String>), String> {
    let name = theme
        .or_else(|| prepared.config.main.theme.clone())
        .unwrap_or_else(|| "dark".into());
    let theme = match rascal::tui::Theme::named(&name, rascal::tui::Theme::no_color_env()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("rascal: error: {e}");
            return Ok((2, None));
        }
    };
    let id = prepared.run.clone();
    rascal::tui::shell::run_interactive(prepared, theme, earlier).map(|c| (c, Some(id)))
}

/// Execute a prepared run, printing `earlier` (replayed) events first.
fn execute(
    prepared: pipeline::PreparedRun,
    json: bool,
    logs: bool,
    earlier: Vec<RunEvent>,
) -> Result<(i32, Option<String>), String> {
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
        Ok((outcome.exit_code, Some(outcome.run)))
    })
}

fn check(dir: &std::path::Path, base: &str, json: bool) -> Result<i32, String> {
    let setup = || -> Result<(Config, git2::Oid, PathBuf), String> {
        let repo = workspace::open(dir).map_err(|e| e.to_string())?;
        let oid = workspace::resolve(&repo, base).map_err(|e| e.to_string())?;
        let config = rascal::git::base::load_config(&repo, oid).map_err(|e| e.to_string())?;
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
        sequence::verify(&v, &move |p| {
            if let (true, sequence::Progress::Report(r)) = (live, p) {
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
            "verdict {verdict} · {} changed against {}",
            rascal::text::change_size(changes.files.len() as u64, changes.lines_changed()),
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
        "{:<17} {:<11} {:<9} {:>4}  {:<8}  task",
        "RUN",
        "STATUS",
        "VERDICT",
        "CAND",
        "BASE"
    );
    for r in runs {
        say!(
            "{:<17} {:<11} {:<9} {:>4}  {:<8}  {}",
            r.id,
            r.status,
            if r.exit_code == Some(3) {
                "ESCALATED".to_string()
            } else {
                r.verdict.as_deref().unwrap_or("-").to_uppercase()
            },
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

fn decide(
    dir: &std::path::Path,
    run: &str,
    candidate: Option<&str>,
    kind: DecisionKind,
    reason: &str,
) -> Result<i32, String> {
    let repo = workspace::open(dir).map_err(|e| e.to_string())?;
    let who = rascal::git::author::author(Some(&repo));
    let escalate = kind == DecisionKind::Escalate;
    let d = Decision::new(candidate, kind, &who, reason);
    match pipeline::record_decision(dir, run, d) {
        Ok(RunEvent::DecisionRecorded { decision }) => {
            say!("{}", printer::decision_line(&decision));
            Ok(if escalate { 3 } else { 0 })
        }
        Ok(_) => Ok(0),
        Err(e) => {
            eprintln!("rascal: error: {e}");
            Ok(2)
        }
    }
}

fn finalize(
    dir: &std::path::Path,
    run: &str,
    push: Option<String>,
    pr: bool,
    quiet: bool,
) -> Result<i32, String> {
    let store = open_store(dir)?;
    let summary = match store.summary(run) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rascal: error: {e}");
            return Ok(2);
        }
    };
    let opts = rascal::finalize::FinalizeOptions { push, pr };
    match rascal::finalize::finalize(dir, &summary, &opts) {
        Ok(f) => {
            if !quiet {
                say!("committed {} on branch {}", &f.commit[..12], f.branch);
                say!("  {}", f.message.lines().next().unwrap_or(""));
                say!("PR body: {}", f.pr_body.display());
                if let Some(r) = &f.pushed_to {
                    say!("pushed {} to {r}", f.branch);
                }
                if f.pr_opened {
                    say!("opened a pull request with gh");
                } else {
                    let cmd: Vec<String> = f
                        .pr_command
                        .iter()
                        .map(|a| {
                            if a.contains(' ') {
                                format!("'{}'", a.replace('\'', "'\\''"))
                            } else {
                                a.clone()
                            }
                        })
                        .collect();
                    say!("open the pull request with:\n  {}", cmd.join(" "));
                }
            }
            Ok(0)
        }
        Err(e) => {
            eprintln!("rascal: error: {e}");
            Ok(
                if matches!(e, rascal::finalize::FinalizeError::NothingSelected(_)) {
                    2
                } else {
                    1
                },
            )
        }
    }
}

fn doctor(dir: &std::path::Path, remove: bool, json: bool) -> Result<i32, String> {
    let loaded = workspace::open(dir)
        .map_err(|e| e.to_string())
        .and_then(|repo| {
            let head = workspace::resolve(&repo, "HEAD").map_err(|e| e.to_string())?;
            rascal::git::base::load_config(&repo, head).map_err(|e| e.to_string())
        });
    let config = match loaded {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rascal: error: {e}");
            return Ok(2);
        }
    };
    let checks = rascal::doctor::agents::agent_checks(&config);
    let agents_ok = checks.iter().all(|c| c.problems.is_empty());
    let repo = workspace::open(dir).map_err(|e| e.to_string())?;
    let store = open_store(dir)?;
    let docker = runtime()?.block_on(rascal::doctor::diagnose(
        &store,
        &workspace::workdir(&repo),
        remove,
    ));
    // An unreachable engine only matters when this repository uses it.
    let uses_docker = config.main.launcher == rascal::config::LauncherKind::Docker;
    let docker_ok = docker.exit_code == 0 || !uses_docker;
    let ok = agents_ok && docker_ok;
    if json {
        say!(
            "{}",
            serde_json::json!({"ok": ok, "agents": checks, "docker": docker.lines})
        );
    } else {
        out(rascal::doctor::agents::agent_lines(&checks));
        out(docker.lines);
    }
    Ok(if ok { 0 } else { 1 })
}

/// `--allow-path` / `--deny-path` as permissions that narrow the repo's.
fn scope_of(
    allow: &[String],
    deny: &[String],
) -> Result<Option<rascal::config::PermissionsConfig>, String> {
    if allow.is_empty() && deny.is_empty() {
        return Ok(None);
    }
    let globs = |list: &[String], flag: &str| {
        list.iter()
            .map(|g| {
                rascal::config::permissions::GlobPattern::try_from(g.clone())
                    .map_err(|e| format!("{flag} {g}: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()
    };
    Ok(Some(rascal::config::PermissionsConfig {
        allowed_paths: globs(allow, "--allow-path")?,
        denied_paths: globs(deny, "--deny-path")?,
        ..Default::default()
    }))
}
