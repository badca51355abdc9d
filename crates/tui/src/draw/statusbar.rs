//! The status bar: the keys valid right now (from the command table),
//! fitted to the width by priority so `q quit` and `? help` always show,
//! after a message when there is one.

use crate::app::App;
use crate::commands::{fit_hints, hint_width, hints, Bar};
use rascal_core::text::{ellipsis, width};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

/// The bar's spans for a terminal `columns` wide.
pub fn spans(app: &App, columns: usize) -> Vec<Span<'static>> {
    let t = &app.theme;
    let all = hints(app);
    let pinned: usize = all
        .iter()
        .filter(|h| h.bar == Bar::Always)
        .map(hint_width)
        .sum();
    let mut out = Vec::new();
    let mut room = columns;
    if let Some(msg) = &app.flash {
        // The message shortens the hints, never the pinned ones.
        let max = columns.saturating_sub(pinned + 3);
        if max > 0 {
            let msg = ellipsis(msg, max);
            room = room.saturating_sub(width(&msg) + 3);
            out.push(Span::styled(format!(" {msg} "), t.warn));
            out.push(Span::styled(" ", t.status_bar));
        }
    }
    for h in fit_hints(&all, room) {
        out.push(Span::styled(format!(" {} ", h.key), t.key));
        out.push(Span::styled(format!(" {} ", h.desc), t.status_bar));
    }
    out
}

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    frame.render_widget(
        Paragraph::new(Line::from(spans(app, area.width as usize))),
        area,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::Hint;
    use crate::fixture;

    fn bar(app: &App, w: usize) -> String {
        spans(app, w).iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn help_and_quit_show_at_every_width_and_the_bar_fits() {
        let mut app = fixture::app(3, true, false);
        // hasty: it failed, so override and retry apply too.
        app.focus = 1;
        app.layer_sel = 1;
        let mut shown = Vec::new();
        for w in [60, 80, 120, 200] {
            let b = bar(&app, w);
            assert!(width(&b) <= w, "{w}: {b:?} is {} wide", width(&b));
            assert!(b.ends_with(" ?  help "), "{w}: {b:?}");
            assert!(b.contains(" q  quit "), "{w}: {b:?}");
            shown.push(b);
        }
        // Wider shows more: everything at 200, the low ones gone at 60;
        // `Tab` (how to reach the other candidates) at every width.
        for b in &shown {
            assert!(b.starts_with(" Tab  next "), "{b}");
        }
        assert!(shown[3].contains(" Tab  next candidate "), "{}", shown[3]);
        assert!(shown[3].contains(" !  escalate "), "{}", shown[3]);
        assert!(!shown[0].contains(" !  escalate "), "{}", shown[0]);
        // High before low: the diff and override keys outlast escalate.
        assert!(shown[1].contains(" d  diff "), "{}", shown[1]);
        assert!(shown[1].contains(" o  override "), "{}", shown[1]);
        assert!(!shown[1].contains(" !  escalate "), "{}", shown[1]);
        let keys = |b: &str| b.matches("  ").count();
        for pair in shown.windows(2) {
            assert!(keys(&pair[0]) <= keys(&pair[1]), "{pair:?}");
        }
    }

    /// Issue 31, item 9: at 80 columns a finished run's dashboard still
    /// offers finalize and compare (in brief), not only their whole words.
    #[test]
    fn at_80_columns_a_finished_runs_bar_keeps_finalize_and_compare() {
        let app = fixture::app(3, true, false);
        for w in [80, 100] {
            let b = bar(&app, w);
            assert!(width(&b) <= w, "{w}: {b:?}");
            for k in [
                " Tab  next",
                " F  finalize",
                " c  compare",
                " d  diff",
                " q  quit",
            ] {
                assert!(b.contains(k), "{w}: {k} in {b:?}");
            }
        }
        let b = bar(&app, 200);
        assert!(
            b.contains(" Tab  next candidate ") && b.contains(" Enter  layer detail "),
            "{b}"
        );
    }

    /// Issue 53: at 120 columns the plan screen's bar showed only `Space
    /// e Enter q ?`; its other keys were in the help alone.
    #[test]
    fn at_120_columns_the_plan_screens_bar_shows_every_plan_key() {
        use rascal_core::config::spec::{Criterion, CriterionKind};
        let mut app = fixture::app(2, false, false);
        let c = Criterion {
            description: "it shouts".into(),
            kind: CriterionKind::Command,
            check: "true".into(),
            required: true,
            new_test: false,
        };
        app.plan = Some(crate::plan::PlanScreen::new("planner", &[c], &[], None));
        app.screen = crate::app::Screen::Plan;
        let b = bar(&app, 120);
        assert!(width(&b) <= 120, "{b:?}");
        for k in [
            " Space  keep",
            " e  edit",
            " c  check",
            " o  optional",
            " a  add",
            " w  save",
            " Enter  approve",
            " q  quit",
            " ?  help",
        ] {
            assert!(b.contains(k), "{k} in {b:?}");
        }
    }

    #[test]
    fn a_message_shortens_the_hints_never_help() {
        let mut app = fixture::app(3, true, false);
        app.flash = Some(
            "recorded: override hasty · still FAIL: 1 skipped not accepted (guard tests)".into(),
        );
        for w in [60, 80, 120] {
            let b = bar(&app, w);
            assert!(width(&b) <= w, "{w}: {b:?}");
            assert!(b.starts_with(" recorded: override hasty"), "{w}: {b:?}");
            assert!(b.ends_with(" ?  help "), "{w}: {b:?}");
        }
        assert!(bar(&app, 60).contains('…'), "a long message is cut");
        assert!(!bar(&app, 80).contains(" d  diff "), "{}", bar(&app, 80));
    }

    #[test]
    fn the_lowest_priority_goes_first_and_nothing_lower_stays() {
        let h = |key, bar| Hint {
            key,
            desc: "x",
            bar,
        };
        // Each hint is `key`+`x`+4 = 6 columns wide.
        let all = [
            h("a", Bar::Low),
            h("b", Bar::High),
            h("c", Bar::Mid),
            h("d", Bar::Low),
            h("?", Bar::Always),
        ];
        let keys = |room| -> String { fit_hints(&all, room).iter().map(|h| h.key).collect() };
        assert_eq!(keys(30), "abcd?");
        assert_eq!(keys(29), "abc?", "of two Low, the rightmost goes first");
        assert_eq!(keys(23), "bc?");
        assert_eq!(keys(17), "b?");
        assert_eq!(keys(3), "?", "the pinned one stays even when it overflows");
    }
}
