//! `rascal attach`: resume a docker run whose rascal died; in a terminal,
//! a run with nothing to resume opens in the TUI, followed while it grows.

use super::args::AttachArgs;
use super::exit::CliError;
use super::run::{execute, interactive, tui_wanted};
use super::shared::{current_exe, open_store};
use rascal_tui::Theme;
use std::path::Path;

pub fn attach(dir: &Path, args: AttachArgs) -> Result<i32, CliError> {
    let AttachArgs {
        run,
        json,
        quiet,
        theme,
    } = args;
    let tui = tui_wanted(json, theme)?;
    let exe = current_exe()?;
    // `prepare_attach` reads the journal, checking the run's hash chain: a
    // run whose record was changed after it was written is neither resumed
    // nor opened.
    match rascal_engine::pipeline::prepare_attach(dir, &run, exe) {
        Ok(p) => {
            // What landed before (with the times it landed: clocks go on
            // from the journal, never restart), then the rest live.
            let earlier = open_store(dir)?
                .verified_timed(&run)
                .map(|(events, _)| events)
                .unwrap_or_default();
            match tui {
                Some(flag) => interactive(p, flag, earlier).map(|(code, _)| code),
                None => execute(
                    p,
                    json,
                    !quiet,
                    earlier.into_iter().map(|(_, ev)| ev).collect(),
                    Vec::new(),
                )
                .map(|(code, _)| code),
            }
        }
        // Nothing to resume (finished, process launcher, or driven by
        // a live rascal): in a terminal, the TUI shows the record and
        // follows it while it grows.
        Err(e)
            if !matches!(
                e,
                rascal_engine::pipeline::PipelineError::Store(
                    rascal_engine::store::StoreError::Tampered(_)
                )
            ) && tui.is_some()
                && open_store(dir)?.run_exists(&run).unwrap_or(false) =>
        {
            let flag = tui.flatten();
            let theme = Theme::named(flag.as_deref().unwrap_or("dark"), Theme::no_color_env())
                .map_err(CliError::from)?;
            rascal_tui::shell::attach(dir, &run, theme).map_err(CliError::from)
        }
        Err(e) => Err(e.into()),
    }
}
