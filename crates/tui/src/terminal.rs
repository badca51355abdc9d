//! The terminal wrapper: raw mode, alternate screen, mouse capture, and
//! restoring all of it on exit, on panic and on signals.

use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::execute;
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use std::io::{stdout, Stdout};

pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// Put the terminal back as we found it. Safe to call more than once.
pub fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(
        stdout(),
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

/// Enter the TUI; a panic restores the terminal before its message prints.
pub fn enter() -> std::io::Result<Term> {
    super::hangup::watch_signals();
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        prev(info);
    }));
    enable_raw_mode()?;
    if let Err(e) = execute!(stdout(), EnterAlternateScreen, EnableMouseCapture) {
        restore();
        return Err(e);
    }
    let mut t = Terminal::new(CrosstermBackend::new(stdout()))?;
    t.clear()?;
    Ok(t)
}

/// Take the terminal back after handing it to another program (an editor,
/// a shell): raw mode, the alternate screen and the mouse again.
pub fn resume() -> std::io::Result<()> {
    enable_raw_mode()?;
    execute!(stdout(), EnterAlternateScreen, EnableMouseCapture)
}

/// Restores the terminal when dropped (early returns, errors).
pub struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}
