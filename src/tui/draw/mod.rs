//! `draw(state)`: the whole screen from the state, nothing else. Each
//! screen and overlay has its own file; styles come from the theme by meaning.

pub mod compare;
pub mod dashboard;
pub mod detail;
pub mod dialog;
pub mod diffview;
pub mod help;
pub mod statusbar;

use super::app::{App, RunState, Screen};
use crate::text::{ellipsis, sanitize};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

pub fn draw(frame: &mut Frame, app: &App) {
    let area = frame.area();
    if area.height < 4 || area.width < 20 {
        frame.render_widget(Paragraph::new("terminal too small"), area);
        return;
    }
    header(frame, app, Rect::new(area.x, area.y, area.width, 2));
    let body = Rect::new(area.x, area.y + 2, area.width, area.height - 3);
    match app.screen {
        Screen::Dashboard => dashboard::draw(frame, app, area),
        Screen::Detail => detail::draw(frame, app, body),
        Screen::Diff => diffview::draw(frame, app, body),
        Screen::Compare => compare::draw(frame, app, body),
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
}

/// The run header: state, run id, strategy, base; then the task.
fn header(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let (state, style) = match &app.state {
        RunState::Starting => ("starting".to_string(), t.pending),
        RunState::Running => ("running".to_string(), t.running),
        RunState::Finished { verdict, exit_code } => (
            format!("finished {} (exit {exit_code})", verdict.label()),
            verdict_style(app, *verdict),
        ),
        RunState::Interrupted(_) => ("interrupted".to_string(), t.fail),
    };
    let base = &app.base[..app.base.len().min(8)];
    let mut l1 = vec![
        Span::styled(" rascal ", t.title),
        Span::styled(state, style),
        Span::styled(" · run ", t.dim),
        Span::styled(sanitize(&app.run), t.text),
        Span::styled(" · strategy ", t.dim),
        Span::styled(app.meta.strategy.clone(), t.text),
        Span::styled(" · base ", t.dim),
        Span::styled(base.to_string(), t.text),
    ];
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
    let task = sanitize(app.instruction.lines().next().unwrap_or(""));
    let l2 = Line::from(vec![
        Span::styled(" task ", t.dim),
        Span::styled(
            ellipsis(&task, area.width.saturating_sub(7) as usize),
            t.text,
        ),
    ]);
    frame.render_widget(Paragraph::new(vec![Line::from(l1), l2]), area);
}

pub fn verdict_style(app: &App, v: crate::model::verdict::Verdict) -> ratatui::style::Style {
    match v {
        crate::model::verdict::Verdict::Pass => app.theme.pass,
        crate::model::verdict::Verdict::Warn => app.theme.warn,
        crate::model::verdict::Verdict::Fail => app.theme.fail,
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

/// `m:ss` (or `h:mm:ss`).
pub fn clock(ms: i64) -> String {
    let s = ms / 1000;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
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
