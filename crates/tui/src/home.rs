//! The home screen: `rascal` with no arguments in a terminal. The runs of
//! this repository, newest first (state, task, age, candidates, what was
//! decided, disk held); `Enter` opens one (as `attach`), `n` starts a new
//! run from a prompt, `D` removes a finished run's workspaces. A pure
//! state and `update`, like the run screen: the shell (`cli/home.rs`)
//! reads the store and does what the effects ask.

use super::keys::Key;
use super::theme::Theme;
use rascal_core::model::state::State;

/// One run as the home screen lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct HomeRow {
    pub id: String,
    /// The record's status (`running`, `finished`, `interrupted`…).
    pub status: String,
    /// Folded from the journal (None: its record does not check out).
    pub state: Option<State>,
    pub tampered: bool,
    pub instruction: String,
    pub started_at: i64,
    pub candidates: u32,
    pub selected: Option<String>,
    pub finalized: Option<String>,
    /// Bytes its workspaces and run files hold on disk (None: not measured).
    pub disk: Option<u64>,
    /// Its workspaces are still on disk.
    pub workspaces: bool,
}

impl HomeRow {
    /// Whether the run is over (its workspaces may go).
    pub fn finished(&self) -> bool {
        !matches!(self.state, Some(State::Running) | Some(State::Queued))
            && self.status != "running"
    }

    /// What the state column says.
    pub fn state_text(&self) -> String {
        if self.tampered {
            return "TAMPERED".into();
        }
        self.state
            .map(|s| s.label().to_string())
            .unwrap_or_else(|| "-".into())
    }

    /// `finalized rascal/…` / `selected careful` / empty; `short` drops
    /// the branch (narrow screens).
    pub fn decided(&self, short: bool) -> String {
        match (&self.finalized, &self.selected) {
            (Some(_), _) if short => "finalized".into(),
            (Some(b), _) => format!("finalized {b}"),
            (None, Some(c)) => format!("selected {c}"),
            _ => String::new(),
        }
    }
}

/// A dialog open on the home screen.
#[derive(Debug, Clone, PartialEq)]
pub enum HomeDialog {
    /// `n`: the instruction of a new run.
    New {
        input: String,
        error: Option<String>,
    },
    /// `D`: remove this run's workspaces?
    Delete { run: String },
}

/// Everything the home screen can be asked to do.
#[derive(Debug, Clone, PartialEq)]
pub enum HomeAction {
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Open,
    New,
    Delete,
    Refresh,
    Help,
    Back,
    Quit,
    Input(char),
    Backspace,
    Submit,
    Choose(char),
    Resize(u16, u16),
    /// New rows from the store, at this time.
    Rows(Vec<HomeRow>, i64),
    /// A message for the status bar.
    Said(String),
    /// The new-run dialog's start failed: why (the dialog stays open).
    NotStarted(String),
}

/// What the shell must do.
#[derive(Debug, Clone, PartialEq)]
pub enum HomeEffect {
    /// Open the run's screen (as `rascal attach RUN`).
    Open(String),
    /// Start a run with this instruction on the configured agents.
    Start(String),
    /// Remove the run's workspaces (the record stays).
    DeleteWorkspaces(String),
    Refresh,
    Quit,
}

pub struct Home {
    pub repo: String,
    pub rows: Vec<HomeRow>,
    pub sel: usize,
    /// First row shown.
    pub top: usize,
    /// Agents a new run starts (from `.rascal/config.yaml`), or why none.
    pub agents: Result<Vec<String>, String>,
    pub dialog: Option<HomeDialog>,
    pub help: bool,
    pub flash: Option<String>,
    pub theme: Theme,
    pub width: u16,
    pub height: u16,
    pub now_ms: i64,
    pub quit: bool,
}

/// Rows a page moves.
const PAGE: usize = 10;

impl Home {
    pub fn new(repo: String, agents: Result<Vec<String>, String>, theme: Theme) -> Home {
        Home {
            repo,
            rows: Vec::new(),
            sel: 0,
            top: 0,
            agents,
            dialog: None,
            help: false,
            flash: None,
            theme,
            width: 80,
            height: 24,
            now_ms: 0,
            quit: false,
        }
    }

    pub fn selected(&self) -> Option<&HomeRow> {
        self.rows.get(self.sel)
    }

    /// Rows of the table that fit (header, column titles, status bar).
    pub fn visible_rows(&self) -> usize {
        (self.height as usize).saturating_sub(4).max(1)
    }

    fn keep_in_view(&mut self) {
        let n = self.visible_rows();
        if self.sel < self.top {
            self.top = self.sel;
        } else if self.sel >= self.top + n {
            self.top = self.sel + 1 - n;
        }
    }

    fn go(&mut self, delta: i64) {
        if self.rows.is_empty() {
            self.sel = 0;
            return;
        }
        let last = self.rows.len() as i64 - 1;
        self.sel = (self.sel as i64 + delta).clamp(0, last) as usize;
        self.keep_in_view();
    }
}

/// The action a key stands for now (dialogs take keys first).
pub fn dispatch(home: &Home, key: Key) -> Option<HomeAction> {
    if let Some(d) = &home.dialog {
        return Some(match (d, key) {
            (_, Key::Esc) | (_, Key::Ctrl('c')) => HomeAction::Back,
            (HomeDialog::New { .. }, Key::Enter) => HomeAction::Submit,
            (HomeDialog::New { .. }, Key::Backspace) => HomeAction::Backspace,
            (HomeDialog::New { .. }, Key::Char(c)) => HomeAction::Input(c),
            (HomeDialog::Delete { .. }, Key::Char(c)) => HomeAction::Choose(c),
            (HomeDialog::Delete { .. }, Key::Enter) => HomeAction::Choose('y'),
            _ => return None,
        });
    }
    if home.help {
        return Some(match key {
            Key::Char('q') | Key::Ctrl('c') => HomeAction::Quit,
            _ => HomeAction::Back,
        });
    }
    Some(match key {
        Key::Char('j') | Key::Down => HomeAction::Down,
        Key::Char('k') | Key::Up => HomeAction::Up,
        Key::PageDown | Key::Ctrl('d') => HomeAction::PageDown,
        Key::PageUp | Key::Ctrl('u') => HomeAction::PageUp,
        Key::Char('g') | Key::Home => HomeAction::Top,
        Key::Char('G') | Key::End => HomeAction::Bottom,
        Key::Enter => HomeAction::Open,
        Key::Char('n') => HomeAction::New,
        Key::Char('D') => HomeAction::Delete,
        Key::Char('r') => HomeAction::Refresh,
        Key::Char('?') => HomeAction::Help,
        Key::Esc => HomeAction::Back,
        Key::Char('q') | Key::Ctrl('c') => HomeAction::Quit,
        _ => return None,
    })
}

/// The keys of the home screen: `(key, what)`, as the run screen's bar has
/// them: quit and help last, never dropped; the others dropped from the
/// end of the list when the bar is too narrow.
pub fn keys(home: &Home) -> Vec<(&'static str, &'static str)> {
    if let Some(d) = &home.dialog {
        return match d {
            HomeDialog::New { .. } => vec![("Enter", "start the run"), ("Esc", "cancel")],
            HomeDialog::Delete { .. } => vec![("y", "remove"), ("n/Esc", "keep")],
        };
    }
    if home.help {
        return vec![("any key", "close help")];
    }
    let mut v = Vec::new();
    if !home.rows.is_empty() {
        v.push(("Enter", "open run"));
    }
    v.push(("n", "new run"));
    if home
        .selected()
        .is_some_and(|r| r.finished() && r.workspaces)
    {
        v.push(("D", "delete workspaces"));
    }
    if home.rows.len() > 1 {
        v.push(("j/k", "move"));
    }
    v.push(("r", "refresh"));
    v.push(("q", "quit"));
    v.push(("?", "help"));
    v
}

/// Every key of the home screen, for the help overlay.
pub const HELP: &[(&str, &str)] = &[
    ("j/k ↓/↑", "move"),
    ("PgDn/PgUp", "page"),
    ("g/G", "first / last run"),
    (
        "Enter",
        "open the run (its dashboard, as `rascal attach RUN`)",
    ),
    (
        "n",
        "new run: type the instruction; the configured agents run it",
    ),
    ("D", "delete a finished run's workspaces (its record stays)"),
    ("r", "refresh (also every 2 s)"),
    ("?", "this help"),
    ("q", "quit (from a run's screen, q comes back here)"),
];

impl Home {
    /// New rows: the same run stays selected when new ones arrive on top.
    fn take_rows(&mut self, rows: Vec<HomeRow>, now: i64) {
        // Keep the same run selected when new ones arrive on top.
        let keep = self.selected().map(|r| r.id.clone());
        self.rows = rows;
        self.now_ms = now;
        self.sel = keep
            .and_then(|id| self.rows.iter().position(|r| r.id == id))
            .unwrap_or(0)
            .min(self.rows.len().saturating_sub(1));
        self.keep_in_view();
    }

    /// Enter: open the selected run, unless its record was tampered with.
    fn open(&mut self) -> Option<HomeEffect> {
        let r = self.selected()?;
        if r.tampered {
            self.flash = Some(format!(
                "{}'s record was changed after it was written: `rascal verify {}`",
                r.id, r.id
            ));
            return None;
        }
        Some(HomeEffect::Open(r.id.clone()))
    }

    /// `n`: the new-run dialog, when agents are configured.
    fn new_run(&mut self) {
        match &self.agents {
            Ok(a) if !a.is_empty() => {
                self.dialog = Some(HomeDialog::New {
                    input: String::new(),
                    error: None,
                })
            }
            Ok(_) => {
                self.flash =
                    Some("no agents in .rascal/config.yaml: `rascal init` writes a start".into())
            }
            Err(e) => self.flash = Some(e.clone()),
        }
    }

    /// `D`: ask before deleting a finished run's workspaces.
    fn ask_delete(&mut self) {
        match self.selected() {
            Some(r) if !r.finished() => {
                self.flash = Some(format!(
                    "{} is still running: its workspaces stay until it ends",
                    r.id
                ))
            }
            Some(r) if !r.workspaces => {
                self.flash = Some(format!("{} has no workspaces left", r.id))
            }
            Some(r) => {
                self.dialog = Some(HomeDialog::Delete { run: r.id.clone() });
            }
            None => {}
        }
    }

    /// Enter in the new-run dialog: start a run of the instruction typed.
    fn submit(&mut self) -> Option<HomeEffect> {
        let Some(HomeDialog::New { input, error }) = &mut self.dialog else {
            return None;
        };
        let text = input.trim().to_string();
        if text.is_empty() {
            *error = Some("say what the agents should do".into());
            return None;
        }
        Some(HomeEffect::Start(text))
    }

    /// `y`/`n` in the delete dialog.
    fn choose(&mut self, c: char) -> Option<HomeEffect> {
        let Some(HomeDialog::Delete { run }) = self.dialog.clone() else {
            return None;
        };
        match c {
            'y' => {
                self.dialog = None;
                return Some(HomeEffect::DeleteWorkspaces(run));
            }
            'n' => self.dialog = None,
            _ => {}
        }
        None
    }
}

/// The home screen's answer to an action; what the shell must do, if
/// anything.
pub fn update(home: &mut Home, action: HomeAction) -> Option<HomeEffect> {
    if !matches!(action, HomeAction::Rows(..) | HomeAction::Resize(..)) {
        home.flash = None;
    }
    match action {
        HomeAction::Up => home.go(-1),
        HomeAction::Down => home.go(1),
        HomeAction::PageUp => home.go(-(PAGE as i64)),
        HomeAction::PageDown => home.go(PAGE as i64),
        HomeAction::Top => home.go(i64::MIN / 4),
        HomeAction::Bottom => home.go(i64::MAX / 4),
        HomeAction::Resize(w, h) => {
            home.width = w;
            home.height = h;
            home.keep_in_view();
        }
        HomeAction::Rows(rows, now) => home.take_rows(rows, now),
        HomeAction::Open => return home.open(),
        HomeAction::New => home.new_run(),
        HomeAction::Delete => home.ask_delete(),
        HomeAction::Refresh => return Some(HomeEffect::Refresh),
        HomeAction::Help => home.help = !home.help,
        HomeAction::Back => {
            home.help = false;
            home.dialog = None;
        }
        HomeAction::Quit => {
            home.quit = true;
            return Some(HomeEffect::Quit);
        }
        HomeAction::Input(c) => {
            if let Some(HomeDialog::New { input, error }) = &mut home.dialog {
                input.push(c);
                *error = None;
            }
        }
        HomeAction::Backspace => {
            if let Some(HomeDialog::New { input, .. }) = &mut home.dialog {
                input.pop();
            }
        }
        HomeAction::Submit => return home.submit(),
        HomeAction::NotStarted(why) => {
            if let Some(HomeDialog::New { error, .. }) = &mut home.dialog {
                *error = Some(why);
            } else {
                home.flash = Some(why);
            }
        }
        HomeAction::Choose(c) => return home.choose(c),
        HomeAction::Said(msg) => home.flash = Some(msg),
    }
    None
}

/// `42s`, `5m`, `3h`, `2d` ago.
pub fn age(now_ms: i64, then_ms: i64) -> String {
    let s = ((now_ms - then_ms) / 1000).max(0);
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, state: State, ws: bool) -> HomeRow {
        HomeRow {
            id: id.into(),
            status: if state == State::Running {
                "running".into()
            } else {
                "finished".into()
            },
            state: Some(state),
            tampered: false,
            instruction: format!("task of {id}"),
            started_at: 0,
            candidates: 2,
            selected: None,
            finalized: None,
            disk: Some(1024),
            workspaces: ws,
        }
    }

    fn home() -> Home {
        let mut h = Home::new(
            "repo".into(),
            Ok(vec!["careful".into()]),
            Theme::named("dark", false).unwrap(),
        );
        update(
            &mut h,
            HomeAction::Rows(
                vec![
                    row("r3", State::Running, true),
                    row("r2", State::Pass, true),
                    row("r1", State::Fail, false),
                ],
                5000,
            ),
        );
        h
    }

    fn press(h: &mut Home, k: Key) -> Option<HomeEffect> {
        let a = dispatch(h, k)?;
        update(h, a)
    }

    #[test]
    fn enter_opens_the_selected_run_and_the_selection_survives_a_refresh() {
        let mut h = home();
        press(&mut h, Key::Char('j'));
        assert_eq!(
            press(&mut h, Key::Enter),
            Some(HomeEffect::Open("r2".into()))
        );
        let mut rows = h.rows.clone();
        rows.insert(0, row("r4", State::Running, true));
        update(&mut h, HomeAction::Rows(rows, 6000));
        assert_eq!(
            h.selected().unwrap().id,
            "r2",
            "a new run on top moves nothing"
        );
    }

    #[test]
    fn n_asks_for_an_instruction_and_refuses_an_empty_one() {
        let mut h = home();
        press(&mut h, Key::Char('n'));
        assert!(matches!(h.dialog, Some(HomeDialog::New { .. })));
        assert_eq!(press(&mut h, Key::Enter), None);
        assert!(matches!(
            &h.dialog,
            Some(HomeDialog::New { error: Some(e), .. }) if e.contains("say what")
        ));
        for c in "fix it".chars() {
            press(&mut h, Key::Char(c));
        }
        assert_eq!(
            press(&mut h, Key::Enter),
            Some(HomeEffect::Start("fix it".into()))
        );
        update(&mut h, HomeAction::NotStarted("no agent".into()));
        assert!(matches!(
            &h.dialog,
            Some(HomeDialog::New { error: Some(e), .. }) if e == "no agent"
        ));
    }

    #[test]
    fn n_without_agents_says_how_to_get_some() {
        let mut h = home();
        h.agents = Ok(vec![]);
        press(&mut h, Key::Char('n'));
        assert!(h.dialog.is_none());
        assert!(h.flash.as_deref().unwrap().contains("rascal init"));
    }

    #[test]
    fn delete_asks_first_and_never_touches_a_running_run() {
        let mut h = home();
        assert_eq!(press(&mut h, Key::Char('D')), None);
        assert!(h.dialog.is_none());
        assert!(h.flash.as_deref().unwrap().contains("still running"));
        press(&mut h, Key::Char('j'));
        press(&mut h, Key::Char('D'));
        assert_eq!(h.dialog, Some(HomeDialog::Delete { run: "r2".into() }));
        assert_eq!(
            press(&mut h, Key::Char('y')),
            Some(HomeEffect::DeleteWorkspaces("r2".into()))
        );
        press(&mut h, Key::Char('j'));
        press(&mut h, Key::Char('D'));
        assert!(h.flash.as_deref().unwrap().contains("no workspaces left"));
    }

    #[test]
    fn the_status_bar_keys_follow_the_selection() {
        let mut h = home();
        let has = |h: &Home, k: &str| keys(h).iter().any(|(a, _)| *a == k);
        assert!(!has(&h, "D"), "a running run cannot be deleted");
        press(&mut h, Key::Char('j'));
        assert!(has(&h, "D"));
        assert_eq!(keys(&h).last(), Some(&("?", "help")));
    }

    #[test]
    fn ages_read_like_a_person_says_them() {
        assert_eq!(age(61_000, 0), "1m");
        assert_eq!(age(3_600_000 * 5, 0), "5h");
        assert_eq!(age(86_400_000 * 3, 0), "3d");
        assert_eq!(age(0, 10), "0s");
    }
}
