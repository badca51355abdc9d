//! `draw(state)`: the whole screen from the state, nothing else. Each
//! screen and overlay has its own file; styles come from the theme by meaning.

pub(crate) mod compare;
pub mod dashboard;
pub(crate) mod detail;
pub(crate) mod dialog;
pub(crate) mod diffview;
pub(crate) mod evidence;
pub mod help;
pub mod home;
pub(crate) mod plan;
pub(crate) mod ranking;
pub(crate) mod statusbar;

use super::app::{App, RunState, Screen};
use rascal_core::text::{ellipsis, sanitize};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

pub fn draw(frame: &mut Frame, app: &App) {
    let area = frame.area();
    if area.height < 4 || area.width < 20 {
        frame.render_widget(Paragraph::new("terminal too small"), area);
        app.theme.fill_screen(frame.buffer_mut());
        return;
    }
    header(frame, app, Rect::new(area.x, area.y, area.width, 2));
    let body = Rect::new(area.x, area.y + 2, area.width, area.height - 3);
    match app.screen {
        Screen::Dashboard => dashboard::draw(frame, app, area),
        Screen::Detail => detail::draw(frame, app, body),
        Screen::Diff => diffview::draw(frame, app, body),
        Screen::Compare => compare::draw(frame, app, body),
        Screen::Plan => plan::draw(frame, app, body),
    }
    statusbar::draw(
        frame,
        app,
        Rect::new(area.x, area.y + area.height - 1, area.width, 1),
    );
    if app.help {
        help::draw(frame, app, body);
    }
    if app.dialog.is_some() {
        dialog::draw(frame, app, body);
    }
    app.theme.fill_screen(frame.buffer_mut());
}

/// The run header: state, run id, strategy, base, wall clock; then the
/// selection and finalize (when there are), and the task.
fn header(frame: &mut Frame, app: &App, area: Rect) {
    let cols = area.width as usize;
    let l1 = run_line(app, cols);
    let l2 = selection_and_task_line(app, cols);
    frame.render_widget(Paragraph::new(vec![Line::from(l1), l2]), area);
}

/// The run's state in words (finished, and how) and its style.
fn run_state(app: &App) -> (String, ratatui::style::Style) {
    use rascal_core::model::state::State;
    let t = &app.theme;
    match &app.state {
        RunState::Starting => ("starting".to_string(), t.pending),
        RunState::Running => ("running".to_string(), t.running),
        RunState::Finished { verdict, exit_code } => match app.summary.state {
            // The verdict is not the whole story: say what happened.
            s @ (State::Cancelled | State::Escalated | State::Impossible | State::Contested) => (
                format!("finished {s} (exit {exit_code})"),
                state_style(app, s),
            ),
            _ => (
                format!("finished {} (exit {exit_code})", verdict.label()),
                verdict_style(app, *verdict),
            ),
        },
        RunState::Interrupted(_) => ("INTERRUPTED".to_string(), t.fail),
    }
}

/// The header's first line, `cols` wide: state, run id, strategy, base,
/// wall clock, the screen's name, and a warning when a candidate runs
/// unsandboxed.
fn run_line(app: &App, cols: usize) -> Vec<Span<'static>> {
    let t = &app.theme;
    let (state, style) = run_state(app);
    let base = &app.base[..app.base.len().min(8)];
    let wall = app
        .summary
        .wall
        .length_ms(app.now_ms)
        .map(clock)
        .unwrap_or_else(|| "–".into());
    let strategy = [
        Span::styled(" · strategy ", t.dim),
        Span::styled(app.meta.strategy.clone(), t.text),
    ];
    let base = [
        Span::styled(" · base ", t.dim),
        Span::styled(base.to_string(), t.text),
    ];
    let mut l1 = vec![
        Span::styled(" rascal ", t.title),
        Span::styled(state, style),
        Span::styled(" · run ", t.dim),
        Span::styled(sanitize(&app.run), t.text),
    ];
    // The wall clock stays; on a narrow terminal the strategy goes first,
    // then the base, then the word `run` before the run's id.
    let used = |spans: &[Span]| -> usize {
        spans
            .iter()
            .map(|s| rascal_core::text::width(&s.content))
            .sum()
    };
    let wall = [Span::styled(" · wall ", t.dim), Span::styled(wall, t.text)];
    let fixed = used(&l1) + used(&wall) + screen_width(app);
    if fixed + used(&base) + used(&strategy) <= cols {
        l1.extend(strategy);
    }
    if fixed + used(&base) <= cols {
        l1.extend(base);
    } else if fixed > cols {
        l1[2] = Span::styled(" · ", t.dim);
    }
    l1.extend(wall);
    if app.screen != Screen::Dashboard {
        l1.push(Span::styled(" · ", t.dim));
        l1.push(Span::styled(app.screen.name(), t.title));
    }
    if app.candidates.iter().any(|c| c.info.unsandboxed) {
        l1.push(Span::styled(
            " · UNSANDBOXED: apt-get install bubblewrap",
            t.fail.add_modifier(ratatui::style::Modifier::BOLD),
        ));
    }
    l1
}

/// The header's second line, `cols` wide: the selected candidate and
/// where it was finalized (when it is), then the task as far as it fits.
fn selection_and_task_line(app: &App, cols: usize) -> Line<'static> {
    let t = &app.theme;
    let task = sanitize(app.instruction.lines().next().unwrap_or(""));
    let mut l2 = selection_spans(app);
    let used: usize = l2
        .iter()
        .map(|s| rascal_core::text::width(&s.content))
        .sum();
    let sep = if used > 0 { " ·" } else { "" };
    let room = cols.saturating_sub(7 + used + sep.len());
    if room >= 12 {
        l2.push(Span::styled(format!("{sep} task "), t.dim));
        l2.push(Span::styled(ellipsis(&task, room), t.text));
    }
    Line::from(l2)
}

/// The selected candidate and where it was finalized, or that it is not
/// yet (and whether it did not pass); nothing with no selection.
fn selection_spans(app: &App) -> Vec<Span<'static>> {
    let t = &app.theme;
    let mut l2 = Vec::new();
    match (&app.summary.selected, &app.summary.finalized) {
        (sel, Some(f)) => {
            l2.push(Span::styled(" selected ", t.dim));
            l2.push(Span::styled(
                sanitize(sel.as_deref().unwrap_or(&f.candidate)),
                t.pass.add_modifier(ratatui::style::Modifier::BOLD),
            ));
            l2.push(Span::styled(" · finalized on ", t.dim));
            l2.push(Span::styled(sanitize(&f.branch), t.title));
            l2.push(Span::styled(
                format!(" @{}", &f.commit[..f.commit.len().min(8)]),
                t.text,
            ));
            if f.pr_opened {
                l2.push(Span::styled(" · PR opened", t.pass));
            }
        }
        (Some(sel), None) => {
            l2.push(Span::styled(" selected ", t.dim));
            l2.push(Span::styled(
                sanitize(sel),
                t.pass.add_modifier(ratatui::style::Modifier::BOLD),
            ));
            if app
                .candidates
                .iter()
                .any(|c| &c.info.id == sel && c.select_refusal.is_some())
            {
                l2.push(Span::styled(" (did not pass)", t.fail));
            }
            l2.push(Span::styled(" · not finalized (F)", t.dim));
        }
        (None, None) => {}
    }
    l2
}

/// The columns the header's screen name (` · diff`) takes.
fn screen_width(app: &App) -> usize {
    if app.screen == Screen::Dashboard {
        0
    } else {
        3 + rascal_core::text::width(app.screen.name())
    }
}

/// The style of a run's or candidate's state.
pub fn state_style(app: &App, s: rascal_core::model::state::State) -> ratatui::style::Style {
    use rascal_core::model::state::State;
    let t = &app.theme;
    match s {
        State::Queued => t.pending,
        State::Running => t.running,
        State::Pass => t.pass,
        State::Warn => t.warn,
        State::Fail | State::Interrupted => t.fail,
        State::Cancelled => t.off.add_modifier(ratatui::style::Modifier::BOLD),
        State::Escalated => t.warn.add_modifier(ratatui::style::Modifier::BOLD),
        State::Impossible => t.warn.add_modifier(ratatui::style::Modifier::ITALIC),
        State::Contested => t
            .warn
            .add_modifier(ratatui::style::Modifier::BOLD | ratatui::style::Modifier::REVERSED),
    }
}

pub fn verdict_style(app: &App, v: rascal_core::model::verdict::Verdict) -> ratatui::style::Style {
    match v {
        rascal_core::model::verdict::Verdict::Pass => app.theme.pass,
        rascal_core::model::verdict::Verdict::Warn => app.theme.warn,
        rascal_core::model::verdict::Verdict::Fail => app.theme.fail,
    }
}

pub fn mark_style(app: &App, m: super::app::Mark) -> ratatui::style::Style {
    use super::app::Mark;
    let t = &app.theme;
    match m {
        Mark::Pending => t.pending,
        Mark::Running => t.running,
        Mark::Pass => t.pass,
        Mark::Warn => t.warn,
        Mark::Fail => t.fail,
        Mark::Overridden => t.overridden,
        Mark::Off => t.off,
    }
}

/// A person's name without their e-mail (`Tess Ter <tess@…>` → `Tess Ter`).
pub fn who_name(who: &str) -> &str {
    who.split(" <").next().unwrap_or(who)
}

/// `m:ss` (or `h:mm:ss`).
pub fn clock(ms: i64) -> String {
    let s = ms / 1000;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// Text that must be read whole, in lines of `w` columns styled `style`:
/// wrapped, never cut — unless it needs more than `max` lines (at least
/// one), when the last shown ends in `…`.
pub fn wrapped(
    text: &str,
    w: usize,
    max: usize,
    style: ratatui::style::Style,
) -> Vec<Line<'static>> {
    let mut lines = rascal_core::text::wrap(text, w);
    let max = max.max(1);
    if max == 1 && lines.len() > 1 {
        // One line: as much of it as fits, like any cut line.
        lines = vec![ellipsis(text, w)];
    } else if lines.len() > max {
        lines.truncate(max);
        let last = &mut lines[max - 1];
        *last = if rascal_core::text::width(last) < w {
            format!("{last}…")
        } else {
            ellipsis(last, w)
        };
    }
    lines
        .into_iter()
        .map(|l| Line::from(Span::styled(l, style)))
        .collect()
}

/// A dialog box: `lines` wrapped in a bordered, titled box drawn over
/// whatever is at `rect`.
pub fn boxed(
    frame: &mut ratatui::Frame,
    t: &crate::theme::Theme,
    rect: Rect,
    title: &str,
    lines: Vec<ratatui::text::Line>,
) {
    use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focus)
        .title(ratatui::text::Span::styled(title.to_string(), t.title));
    frame.render_widget(
        Paragraph::new(lines)
            .style(t.dialog)
            .block(block)
            .wrap(Wrap { trim: false }),
        rect,
    );
}

/// A centred rectangle of at most `w`×`h` inside `area`.
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}
