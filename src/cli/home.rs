//! `rascal` with no arguments: in a terminal, the home screen (this
//! repository's runs; open one, start one, remove a finished run's
//! workspaces); otherwise the same list `rascal list` prints. Opening or
//! starting a run leaves the home screen for the run's own screen, and
//! quitting that comes back here.

use super::args::{AttachArgs, ListArgs};
use super::exit::{CliError, PASS};
use super::shared::{current_exe, open_store_read};
use rascal_tui::home::{update, Home, HomeAction, HomeEffect, HomeRow};
use rascal_tui::keys::Key;
use rascal_tui::Theme;
use std::path::Path;
use std::time::{Duration, Instant};

/// How often the list is read again while the home screen is open.
const REFRESH: Duration = Duration::from_secs(2);

pub fn home(dir: &Path) -> Result<i32, CliError> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return super::list::list(dir, ListArgs { json: false });
    }
    let repo =
        rascal_exec::git::workspace::open(dir).map_err(|e| CliError::Usage(e.to_string()))?;
    let top = rascal_exec::git::workspace::workdir(&repo);
    let name = top
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| top.display().to_string());
    let (agents, theme_name) = configured(&repo);
    let theme = Theme::named(&theme_name, Theme::no_color_env()).map_err(CliError::from)?;
    let mut app = Home::new(name, agents, theme);
    loop {
        // The run's screen ended because the terminal closed: so does this.
        if rascal_tui::hangup::terminal_gone() {
            return Ok(PASS);
        }
        match screen(dir, &mut app)? {
            HomeEffect::Open(run) => {
                let args = AttachArgs {
                    run: run.clone(),
                    json: false,
                    quiet: false,
                    theme: Some(app.theme.name.clone()),
                };
                if let Err(e) = super::attach::attach(dir, args) {
                    update(&mut app, HomeAction::Said(format!("{run}: {e}")));
                }
            }
            HomeEffect::Start(instruction) => {
                let mut req = rascal_engine::pipeline::RunRequest::new(
                    dir.to_path_buf(),
                    &instruction,
                    vec![],
                    current_exe()?,
                );
                // `strategy.plan: true` plans it: approved on the plan screen.
                req.plan = rascal_engine::pipeline::PlanGate::Ask;
                match super::run::start(req, false, true, Some(Some(app.theme.name.clone()))) {
                    Ok(_) => app.dialog = None,
                    Err(e) => {
                        update(
                            &mut app,
                            HomeAction::NotStarted(
                                e.to_string().lines().next().unwrap_or("").to_string(),
                            ),
                        );
                    }
                }
            }
            _ => return Ok(PASS),
        }
    }
}

/// The agents a new run starts, and the theme, from `.rascal/config.yaml`
/// at HEAD (what a run reads).
fn configured(repo: &git2::Repository) -> (Result<Vec<String>, String>, String) {
    let head = match repo.head().ok().and_then(|h| h.peel_to_commit().ok()) {
        Some(c) => c.id(),
        None => {
            return (
                Err("no commit yet: commit something, then `rascal init`".into()),
                "dark".into(),
            )
        }
    };
    match rascal_exec::git::base::load_config(repo, head) {
        Ok(c) => {
            let theme = c.main.theme.clone().unwrap_or_else(|| "dark".into());
            let agents = if c.main.strategy.agents.is_empty() && !c.main.agents.is_empty() {
                Err("no `strategy: {agents: [...]}` in .rascal/config.yaml: name the agents a run starts".into())
            } else {
                Ok(c.main.strategy.agents.clone())
            };
            (agents, theme)
        }
        Err(e) => (
            Err(e.to_string().lines().next().unwrap_or("").to_string()),
            "dark".into(),
        ),
    }
}

/// The runs as the home screen shows them.
fn rows(dir: &Path) -> Result<Vec<HomeRow>, CliError> {
    let store = open_store_read(dir)?;
    let repo =
        rascal_exec::git::workspace::open(dir).map_err(|e| CliError::Usage(e.to_string()))?;
    let files = rascal_exec::git::workspace::files_dir(&repo);
    Ok(store
        .list()?
        .into_iter()
        .map(|r| {
            let ws = files.join("workspaces").join(&r.id);
            let run_dir = files.join("runs").join(&r.id);
            let workspaces = ws.is_dir();
            let disk = Some(rascal_engine::gc::usage_of(&[&ws, &run_dir]).bytes);
            HomeRow {
                tampered: r.broken_event.is_some(),
                id: r.id,
                status: r.status,
                state: r.state,
                instruction: r.instruction,
                started_at: r.started_at,
                candidates: r.candidates,
                selected: r.selected,
                finalized: r.finalized,
                disk,
                workspaces,
            }
        })
        .collect())
}

/// The home screen until it asks to open or start a run, or to quit. The
/// terminal is restored on every way out.
fn screen(dir: &Path, app: &mut Home) -> Result<HomeEffect, CliError> {
    let mut terminal =
        rascal_tui::terminal::enter().map_err(|e| CliError::Usage(format!("terminal: {e}")))?;
    let _guard = rascal_tui::terminal::Guard;
    // A closed terminal ends the process while this screen shows.
    let _showing = rascal_tui::hangup::home_showing();
    let term = |e: std::io::Error| CliError::Usage(format!("terminal: {e}"));
    let size = terminal.size().map_err(term)?;
    update(app, HomeAction::Resize(size.width, size.height));
    update(
        app,
        HomeAction::Rows(rows(dir)?, rascal_engine::store::now_ms()),
    );
    let mut last = Instant::now();
    loop {
        // A closed terminal (or SIGHUP, SIGTERM) ends the home screen.
        if rascal_tui::hangup::terminal_gone() {
            return Ok(HomeEffect::Quit);
        }
        terminal
            .draw(|f| rascal_tui::draw::home::draw(f, app))
            .map_err(term)?;
        let action = if crossterm::event::poll(Duration::from_millis(250)).map_err(term)? {
            match crossterm::event::read().map_err(term)? {
                crossterm::event::Event::Key(k) => {
                    Key::from_event(&k).and_then(|k| rascal_tui::home::dispatch(app, k))
                }
                crossterm::event::Event::Resize(w, h) => {
                    let _ = terminal.autoresize();
                    Some(HomeAction::Resize(w, h))
                }
                _ => None,
            }
        } else if last.elapsed() >= REFRESH && app.dialog.is_none() {
            Some(HomeAction::Refresh)
        } else {
            None
        };
        let Some(action) = action else { continue };
        match update(app, action) {
            None => {}
            Some(HomeEffect::Refresh) => {
                last = Instant::now();
                update(
                    app,
                    HomeAction::Rows(rows(dir)?, rascal_engine::store::now_ms()),
                );
            }
            Some(HomeEffect::DeleteWorkspaces(run)) => {
                let msg = delete_workspaces(dir, &run);
                update(app, HomeAction::Said(msg));
                update(
                    app,
                    HomeAction::Rows(rows(dir)?, rascal_engine::store::now_ms()),
                );
            }
            Some(other) => return Ok(other),
        }
    }
}

/// `D`: remove a finished run's workspaces; says what it freed.
fn delete_workspaces(dir: &Path, run: &str) -> String {
    let Ok(repo) = rascal_exec::git::workspace::open(dir) else {
        return "not a git repository".into();
    };
    // The list may be two seconds old: ask the record again.
    match rows(dir).map(|r| r.into_iter().find(|r| r.id == run)) {
        Ok(Some(r)) if r.finished() => {}
        Ok(Some(_)) => return format!("{run} is running again: its workspaces stay"),
        Ok(None) => return format!("no run {run}"),
        Err(e) => return e.to_string(),
    }
    let files = rascal_exec::git::workspace::files_dir(&repo);
    let ws = files.join("workspaces").join(run);
    // The record stays, and so does each candidate's change: the diff and
    // compare views still read it.
    let summary = match open_store_read(dir).and_then(|s| s.summary(run).map_err(Into::into)) {
        Ok(s) => s,
        Err(e) => return format!("could not read {run}'s record: {e}; its workspaces stay"),
    };
    let kept = rascal_exec::git::kept::store_path(&files, run);
    for c in &summary.candidates {
        let path = rascal_exec::git::workspace::workspace_path(&files, run, &c.id);
        if std::fs::symlink_metadata(&path).is_err() {
            continue;
        }
        if let Err(e) = rascal_engine::finalize::keep_change(&repo, &kept, c, &path) {
            return format!("{}: {e}; {run}'s workspaces stay", c.id);
        }
    }
    let freed = rascal_engine::gc::usage(&ws).bytes;
    match rascal_engine::gc::remove_beneath(&ws) {
        Ok(()) => format!(
            "removed {run}'s workspaces ({})",
            rascal_engine::gc::human_bytes(freed)
        ),
        Err(e) => format!("could not remove {run}'s workspaces: {e}"),
    }
}
