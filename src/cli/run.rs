//! `rascal run`, and what `demo`, `retry` and `attach` share with it:
//! running a prepared run under the TUI or headless (printing events as they
//! come, or one JSON document at the end).

use super::args::RunArgs;
use super::exit::{CliError, PASS};
use super::shared::{current_exe, out, say, tell};
use rascal_core::config::PermissionsConfig;
use rascal_core::model::event::RunEvent;
use rascal_core::model::summary::RunSummary;
use rascal_engine::output::Printer;
use rascal_engine::pipeline::{self, PreparedRun, RunRequest};
use rascal_tui::Theme;
use std::io::Write;
use std::path::Path;

/// `rascal run`: the task on its agents, then (with `--auto`) finalize the
/// comparator's pick.
pub fn run(dir: &Path, args: RunArgs) -> Result<i32, CliError> {
    let RunArgs {
        instruction,
        spec,
        issue,
        agents,
        base,
        headless,
        json,
        timeout,
        quiet,
        theme,
        n,
        auto,
        strict,
        push,
        pr,
        launcher,
        allow_paths,
        deny_paths,
        config_from_worktree,
        plan,
        approve,
        allow_vacuous,
    } = args;
    let tui = tui_wanted(headless || json, theme)?;
    // Like `git -C`, a relative issue path is relative to DIR.
    let issue = issue.map(|p| if p.is_relative() { dir.join(p) } else { p });
    let mut req = RunRequest::new(
        dir.to_path_buf(),
        &instruction.unwrap_or_default(),
        agents,
        current_exe()?,
    );
    req.spec = spec;
    req.issue = issue;
    req.base = base;
    req.timeout = timeout;
    req.n = n;
    req.auto = auto;
    req.strict = strict;
    req.scope = scope_of(&allow_paths, &deny_paths)?;
    req.launcher = launcher.map(Into::into);
    req.config_from_worktree = config_from_worktree;
    req.plan_wanted = plan;
    req.allow_vacuous = allow_vacuous;
    req.plan = if approve {
        pipeline::PlanGate::Approve
    } else if tui.is_some() {
        pipeline::PlanGate::Ask
    } else {
        pipeline::PlanGate::Print
    };
    let (code, run_id) = start(req, json, !quiet, tui)?;
    if auto && code == PASS {
        if let Some(id) = run_id {
            let opts = rascal_engine::finalize::FinalizeOptions {
                push,
                pr,
                ..Default::default()
            };
            let fin = super::finalize::finalize_run(dir, &id, opts, json)?;
            if fin != PASS {
                return Ok(fin);
            }
        }
    }
    Ok(code)
}

/// `Some(theme flag)` when the TUI should open: not headless and stdout
/// is a terminal.
pub fn tui_wanted(
    headless: bool,
    theme: Option<String>,
) -> Result<Option<Option<String>>, CliError> {
    use std::io::IsTerminal;
    if let Some(name) = &theme {
        // A wrong name is an error even when the run ends up headless.
        Theme::named(name, false).map_err(CliError::from)?;
    }
    Ok((!headless && std::io::stdout().is_terminal()).then_some(theme))
}

/// Prepare and run a task; returns the exit code and the run id.
pub fn start(
    req: RunRequest,
    json: bool,
    logs: bool,
    tui: Option<Option<String>>,
) -> Result<(i32, Option<String>), CliError> {
    let prepared = pipeline::prepare(req)?;
    // The headless printer says it in the run's header; elsewhere it goes
    // to stderr before the run starts.
    if json || tui.is_some() {
        for l in prepared.worktree.lines(&prepared.base.to_string()) {
            tell!("rascal: {l}");
        }
    }
    if let Some(flag) = tui {
        return interactive(prepared, flag, Vec::new());
    }
    execute(prepared, json, logs, Vec::new(), Vec::new())
}

/// Run a prepared run under the TUI (`earlier`: events already recorded,
/// with the time each was journalled).
pub fn interactive(
    prepared: PreparedRun,
    theme: Option<String>,
    earlier: Vec<(i64, RunEvent)>,
) -> Result<(i32, Option<String>), CliError> {
    let name = theme
        .or_else(|| prepared.config.main.theme.clone())
        .unwrap_or_else(|| "dark".into());
    let theme = Theme::named(&name, Theme::no_color_env()).map_err(CliError::from)?;
    let id = prepared.run.clone();
    rascal_tui::shell::run_interactive(prepared, theme, earlier)
        .map(|c| (c, Some(id)))
        .map_err(CliError::from)
}

/// Execute a prepared run headless, printing `earlier` (replayed) events
/// first; `known` events (a retried run's record so far) are folded in
/// without being printed, so the closing state line and the JSON document
/// describe the whole run.
pub fn execute(
    prepared: PreparedRun,
    json: bool,
    logs: bool,
    earlier: Vec<RunEvent>,
    known: Vec<RunEvent>,
) -> Result<(i32, Option<String>), CliError> {
    let replay = prepared.replays();
    // A headless run has no terminal to ring: only the `notify:` command,
    // once, when it ends.
    let notify = (
        prepared.config.main.notify.command.clone(),
        prepared.repo_dir.clone(),
    );
    let mut view = rascal_engine::store::LogView::new(&prepared.state);
    let rt = rascal_engine::runtime()?;
    rt.block_on(async move {
        let (session, mut rx) = rascal_engine::pipeline::Session::start(prepared);
        let on_signal = session.cancellation();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("rascal: interrupted; stopping agents (the run record is kept)");
                on_signal.cancel();
            }
        });
        let mut printer = Printer::new(logs);
        // Folded as they come, never retained: a flood of log lines costs
        // the printer's line, not memory.
        let mut summary = RunSummary::new();
        for ev in &known {
            printer.render(ev);
            summary.apply(ev);
        }
        let mut show = |ev: RunEvent| {
            if !json {
                print_event(&mut printer, &mut view, &ev);
            }
            summary.apply(&ev);
        };
        for ev in earlier {
            show(ev);
        }
        while let Some(ev) = rx.recv().await {
            show(ev);
        }
        let outcome = session
            .outcome()
            .await
            .ok_or_else(|| CliError::Usage("internal error: the run had no pipeline".into()))??;
        if json {
            say!(
                "{}",
                rascal_core::text::inert::json(
                    &serde_json::to_string_pretty(&summary).unwrap_or_default()
                )
            );
        } else {
            out(rascal_engine::output::state_lines(&summary));
            if replay {
                say!("replay: rascal show {}", outcome.run);
            }
        }
        let (argv, dir) = &notify;
        if !argv.is_empty() {
            let n = rascal_tui::notify::at_end(&summary);
            if let Err(e) = rascal_exec::exec::notify::run(argv, dir, n.env()).await {
                tell!("rascal: warning: the notify command failed: {e}");
            }
        }
        Ok((outcome.exit_code, Some(outcome.run)))
    })
}

/// Print one event; a log segment's lines are read from its log file
/// (only when they are printed) and streamed, never held.
pub fn print_event(printer: &mut Printer, view: &mut rascal_engine::store::LogView, ev: &RunEvent) {
    view.see(ev);
    if let (RunEvent::LogSegment(seg), true) = (ev, printer.logs) {
        let stdout = std::io::stdout();
        let mut o = std::io::BufWriter::with_capacity(64 * 1024, stdout.lock());
        view.each(seg, 0, seg.lines, |stream, text, display| {
            let line = printer.log_line(&seg.candidate, stream, text, display.as_deref());
            let _ = writeln!(o, "{line}");
        });
        let _ = o.flush();
    }
    out(printer.render(ev));
}

/// `--allow-path` / `--deny-path` as permissions that narrow the repo's.
fn scope_of(allow: &[String], deny: &[String]) -> Result<Option<PermissionsConfig>, CliError> {
    if allow.is_empty() && deny.is_empty() {
        return Ok(None);
    }
    let globs = |list: &[String], flag: &str| {
        list.iter()
            .map(|g| {
                rascal_core::config::permissions::GlobPattern::try_from(g.clone())
                    .map_err(|e| CliError::Usage(format!("{flag} {g}: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()
    };
    Ok(Some(PermissionsConfig {
        allowed_paths: globs(allow, "--allow-path")?,
        denied_paths: globs(deny, "--deny-path")?,
        ..Default::default()
    }))
}
