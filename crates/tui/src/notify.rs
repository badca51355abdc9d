//! When a run needs you, and what to say. A pure function over the run's
//! summary before and after an event gives the notices that became due — a
//! candidate the pipeline escalated, or every candidate finished so the run
//! awaits your decision — once per occurrence, never again on a redraw or
//! a tick. Also pure: which desktop notification the terminal shows (from
//! `TERM_PROGRAM`, `TERM` and friends) and the exact bytes of the bell and
//! the OSC sequence. The shell writes them and runs the `notify:` command;
//! nothing here does I/O.
//!
//! There is no "waiting for input" state in rascal: agents run headless
//! (their prompts are skipped or refused), so nothing waits on a human
//! mid-run.

use rascal_core::model::decision::DecisionKind;
use rascal_core::model::state::State;
use rascal_core::model::summary::RunSummary;
use std::collections::BTreeSet;

/// Why a run needs you.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occasion {
    /// The pipeline handed a candidate to a human (retries ran out, the
    /// review could not be trusted).
    Escalated,
    /// Every candidate finished: the run awaits your decision.
    Finished,
}

impl Occasion {
    /// `$RASCAL_EVENT`.
    pub fn name(self) -> &'static str {
        match self {
            Occasion::Escalated => "escalated",
            Occasion::Finished => "finished",
        }
    }
}

/// One notification to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub occasion: Occasion,
    pub run: String,
    /// The candidate it is about (an escalation).
    pub candidate: Option<String>,
    /// A short title (OSC 777's title).
    pub title: String,
    /// One line saying what happened and what to do.
    pub message: String,
}

impl Notice {
    /// The variables the `notify:` command gets, on top of the user's
    /// environment.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut v = vec![
            ("RASCAL_RUN".to_string(), self.run.clone()),
            ("RASCAL_EVENT".to_string(), self.occasion.name().to_string()),
            ("RASCAL_MESSAGE".to_string(), self.message.clone()),
        ];
        if let Some(c) = &self.candidate {
            v.push(("RASCAL_CANDIDATE".to_string(), c.clone()));
        }
        v
    }
}

/// What in a run may need a human, at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attention {
    /// Candidates the pipeline escalated (a human's own escalation needs
    /// no bell: they are there).
    escalated: BTreeSet<String>,
    /// Every candidate finished (and not because a human stopped them all).
    finished: bool,
}

impl Attention {
    pub fn of(s: &RunSummary) -> Attention {
        let escalated = s
            .candidates
            .iter()
            .filter(|c| c.state == State::Escalated)
            .filter(|c| c.escalated.as_ref().is_some_and(|e| e.by.is_none()))
            .map(|c| c.id.clone())
            .collect();
        // A human who stopped every candidate (`X`, `x` on each) is there;
        // a run whose budgets stopped them is not.
        let stopped_by_hand = s.state == State::Cancelled
            && s.candidates.iter().all(|c| c.over_budget.is_none())
            && (s.decisions.iter().any(|d| d.kind == DecisionKind::Cancel)
                || s.candidates
                    .iter()
                    .all(|c| c.decisions.iter().any(|d| d.kind == DecisionKind::Cancel)));
        Attention {
            escalated,
            finished: s.status == "finished" && !stopped_by_hand,
        }
    }
}

/// The notices that became due between `before` and `after` (`s` is the
/// summary `after` was taken from): each new escalation, then the run's
/// finish.
pub fn due(before: &Attention, after: &Attention, s: &RunSummary) -> Vec<Notice> {
    let mut out: Vec<Notice> = after
        .escalated
        .difference(&before.escalated)
        .map(|id| escalated(s, id))
        .collect();
    if after.finished && !before.finished {
        out.push(finished(s));
    }
    out
}

fn escalated(s: &RunSummary, id: &str) -> Notice {
    let why = s
        .candidates
        .iter()
        .find(|c| c.id == id)
        .and_then(|c| c.escalated.as_ref())
        .map(|e| e.reason.lines().next().unwrap_or("").to_string())
        .unwrap_or_default();
    Notice {
        occasion: Occasion::Escalated,
        run: s.run.clone(),
        candidate: Some(id.to_string()),
        title: format!("rascal: {id} needs a human"),
        message: rascal_core::text::ellipsis(
            &format!("run {}: {id} was escalated — {why}", s.run),
            200,
        ),
    }
}

fn finished(s: &RunSummary) -> Notice {
    let states: Vec<String> = s
        .candidates
        .iter()
        .map(|c| format!("{} {}", c.id, c.state))
        .collect();
    let (title, ask) = match s.state {
        State::Escalated => ("rascal: run escalated", "it needs a human"),
        State::Contested => (
            "rascal: run contested",
            "the candidates disagree and nothing settles it: you pick",
        ),
        _ => ("rascal: run finished", "awaiting your decision"),
    };
    Notice {
        occasion: if s.state == State::Escalated {
            Occasion::Escalated
        } else {
            Occasion::Finished
        },
        run: s.run.clone(),
        candidate: None,
        title: title.into(),
        message: rascal_core::text::ellipsis(
            &format!("run {} finished ({}) — {ask}", s.run, states.join(" · ")),
            200,
        ),
    }
}

/// The one notice of a headless run, sent when it ends: `escalated` when
/// the run was escalated to a human (exit 3), naming the first escalated
/// candidate and why (no screen shows it), else `finished`.
pub fn at_end(s: &RunSummary) -> Notice {
    let mut n = finished(s);
    if n.occasion != Occasion::Escalated {
        return n;
    }
    if let Some(c) = s.candidates.iter().find(|c| c.escalated.is_some()) {
        let why = escalated(s, &c.id).message;
        n.message = rascal_core::text::ellipsis(&format!("{} · {}", n.message, why), 400);
        n.candidate = Some(c.id.clone());
    }
    n
}

/// Follows a run event by event and says what became due. Events from
/// before the screen opened (a replayed journal, `attach` to a finished
/// run) are history: they update what is known, and notify nobody.
#[derive(Debug, Clone)]
pub struct Watch {
    opened_ms: i64,
    last: Attention,
}

impl Watch {
    pub fn new(opened_ms: i64) -> Watch {
        Watch {
            opened_ms,
            last: Attention::default(),
        }
    }

    /// The summary after one more event, stamped `at_ms` when it came from
    /// the journal (None: it happened just now).
    pub fn observe(&mut self, s: &RunSummary, at_ms: Option<i64>) -> Vec<Notice> {
        let now = Attention::of(s);
        if now == self.last {
            return Vec::new();
        }
        let notices = if at_ms.is_none_or(|t| t >= self.opened_ms) {
            due(&self.last, &now, s)
        } else {
            Vec::new()
        };
        self.last = now;
        notices
    }
}

/// Which desktop notification a terminal shows, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Desktop {
    /// `ESC ] 777 ; notify ; TITLE ; BODY BEL` (urxvt's, also foot,
    /// Ghostty, WezTerm).
    Osc777,
    /// `ESC ] 9 ; BODY BEL` (iTerm2's, also kitty).
    Osc9,
    /// Unknown, or known not to show one: the bell only.
    None,
}

/// The desktop notification the terminal in `env` likely shows. One is
/// chosen, never both (a terminal that knows both would show two).
/// Terminals are recognised the way other tools do it, by the variables
/// they set: `TERM_PROGRAM` (iTerm.app, WezTerm, ghostty), `LC_TERMINAL`
/// (iTerm2, also over ssh), `TERM` (xterm-kitty, xterm-ghostty, foot,
/// rxvt-unicode) and `KITTY_WINDOW_ID`. Under tmux or GNU screen (`TMUX`,
/// `STY`, `TERM=screen…|tmux…`) none is sent: the outer terminal cannot be
/// told from inside, and tmux drops OSC sequences unless
/// `allow-passthrough` is on (off by default since tmux 3.3); the bell
/// still reaches it (tmux flags the window) and `notify.command` works
/// anywhere.
pub fn desktop_of(env: impl Fn(&str) -> Option<String>) -> Desktop {
    let var = |k: &str| env(k).unwrap_or_default();
    let term = var("TERM");
    if env("TMUX").is_some()
        || env("STY").is_some()
        || term.starts_with("screen")
        || term.starts_with("tmux")
    {
        return Desktop::None;
    }
    match var("TERM_PROGRAM").as_str() {
        "iTerm.app" => return Desktop::Osc9,
        "WezTerm" | "ghostty" => return Desktop::Osc777,
        _ => {}
    }
    if var("LC_TERMINAL") == "iTerm2" {
        return Desktop::Osc9;
    }
    if term == "xterm-kitty" || env("KITTY_WINDOW_ID").is_some() {
        return Desktop::Osc9;
    }
    if term == "xterm-ghostty" || term.starts_with("foot") || term.starts_with("rxvt-unicode") {
        return Desktop::Osc777;
    }
    Desktop::None
}

// What may go inside an OSC string is the output policy's to say.
use rascal_core::text::inert::osc_text;

/// The bytes that announce `n` on the terminal: the bell when `bell`, then
/// the desktop notification the terminal shows (none for `Desktop::None`).
pub fn bytes(n: &Notice, bell: bool, desktop: Desktop) -> Vec<u8> {
    let mut out = Vec::new();
    if bell {
        out.push(0x07);
    }
    match desktop {
        Desktop::Osc777 => out.extend_from_slice(
            format!(
                "\x1b]777;notify;{};{}\x07",
                osc_text(&n.title, 80),
                osc_text(&n.message, 200)
            )
            .as_bytes(),
        ),
        Desktop::Osc9 => out.extend_from_slice(
            format!(
                "\x1b]9;{}\x07",
                osc_text(&format!("{}: {}", n.title, n.message), 240)
            )
            .as_bytes(),
        ),
        Desktop::None => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rascal_core::model::decision::Decision;
    use rascal_core::model::event::{CandidateInfo, RunEvent};
    use rascal_core::model::verdict::Verdict;

    fn info(id: &str) -> CandidateInfo {
        CandidateInfo {
            id: id.into(),
            agent: id.into(),
            runtime: "scripted".into(),
            worktree: String::new(),
            unsandboxed: false,
        }
    }

    fn started() -> RunEvent {
        RunEvent::RunStarted {
            run: "r-1".into(),
            repo: String::new(),
            base: "b".into(),
            instruction: "do it".into(),
            launcher: "process".into(),
            candidates: vec![info("a"), info("b")],
        }
    }

    fn finished(id: &str, cancelled: bool) -> RunEvent {
        RunEvent::CandidateFinished {
            candidate: id.into(),
            verdict: Verdict::Fail,
            reason: None,
            files: 0,
            lines: 0,
            tree: None,
            cancelled,
        }
    }

    fn escalated(id: &str) -> RunEvent {
        RunEvent::CandidateEscalated {
            candidate: id.into(),
            reason: "retries exhausted\nthe table".into(),
            table: String::new(),
        }
    }

    fn run_finished(code: i32) -> RunEvent {
        RunEvent::RunFinished {
            verdict: Verdict::Fail,
            exit_code: code,
        }
    }

    /// Fold `events` one by one through a watch opened at 0, live.
    fn watch(events: &[RunEvent]) -> Vec<Notice> {
        let mut s = RunSummary::new();
        let mut w = Watch::new(0);
        let mut out = Vec::new();
        for ev in events {
            s.apply(ev);
            out.extend(w.observe(&s, None));
        }
        out
    }

    #[test]
    fn one_escalation_is_one_notice_however_many_events_follow() {
        let n = watch(&[
            started(),
            escalated("a"),
            finished("a", false),
            RunEvent::Usage {
                candidate: "b".into(),
                usage: Default::default(),
            },
            RunEvent::Log {
                candidate: "b".into(),
                stream: rascal_core::model::log::Stream::Stdout,
                text: "still going".into(),
                display: None,
            },
        ]);
        assert_eq!(n.len(), 1, "{n:?}");
        assert_eq!(n[0].occasion, Occasion::Escalated);
        assert_eq!(n[0].candidate.as_deref(), Some("a"));
        assert_eq!(n[0].message, "run r-1: a was escalated — retries exhausted");
        let env = n[0].env();
        assert!(env.contains(&("RASCAL_EVENT".into(), "escalated".into())));
        assert!(env.contains(&("RASCAL_CANDIDATE".into(), "a".into())));
    }

    #[test]
    fn the_end_of_the_run_is_one_notice_and_a_retry_makes_a_new_occasion() {
        let mut events = vec![started(), finished("a", false), finished("b", false)];
        assert!(watch(&events).is_empty(), "not over until the run is");
        events.push(run_finished(1));
        let n = watch(&events);
        assert_eq!(n.len(), 1);
        assert_eq!(n[0].occasion, Occasion::Finished);
        assert_eq!(
            n[0].message,
            "run r-1 finished (a FAIL · b FAIL) — awaiting your decision"
        );
        // A retry after the run reopens it; its end is a new occasion.
        events.extend([
            RunEvent::AttemptStarted {
                candidate: "a".into(),
                attempt: 2,
                feedback: "again".into(),
            },
            finished("a", false),
            run_finished(1),
        ]);
        assert_eq!(watch(&events).len(), 2);
    }

    #[test]
    fn a_run_that_ends_escalated_says_so() {
        let n = watch(&[
            started(),
            escalated("a"),
            finished("a", false),
            finished("b", false),
            run_finished(3),
        ]);
        assert_eq!(
            n.iter().map(|n| n.occasion).collect::<Vec<_>>(),
            vec![Occasion::Escalated, Occasion::Escalated]
        );
        assert_eq!(n[1].title, "rascal: run escalated");
        assert_eq!(n[1].candidate, None);
    }

    #[test]
    fn a_headless_run_that_ends_escalated_says_who_and_why() {
        let events = [
            started(),
            escalated("a"),
            finished("a", false),
            finished("b", false),
            run_finished(3),
        ];
        let s = RunSummary::from_events(&events);
        let n = at_end(&s);
        assert_eq!(n.occasion, Occasion::Escalated);
        assert_eq!(n.candidate.as_deref(), Some("a"));
        assert!(n.message.contains("a was escalated — "), "{}", n.message);
    }

    #[test]
    fn a_humans_own_escalation_or_cancel_rings_nothing() {
        let by_hand = RunEvent::DecisionRecorded {
            decision: Decision::new(Some("a"), DecisionKind::Escalate, "me", "edits CI"),
        };
        assert!(watch(&[started(), finished("a", false), by_hand]).is_empty());
        let stop_all = RunEvent::DecisionRecorded {
            decision: Decision::new(None, DecisionKind::Cancel, "me", "enough"),
        };
        let n = watch(&[
            started(),
            stop_all,
            finished("a", true),
            finished("b", true),
            run_finished(1),
        ]);
        assert!(n.is_empty(), "{n:?}");
        // Stopped by their budgets: nobody was there; the end is said.
        let over = |id: &str| RunEvent::OverBudget {
            candidate: id.into(),
            reason: "budget: $1.00 spent of $0.50 (agent a)".into(),
        };
        let n = watch(&[
            started(),
            over("a"),
            finished("a", true),
            over("b"),
            finished("b", true),
            run_finished(1),
        ]);
        assert_eq!(n.len(), 1, "{n:?}");
    }

    #[test]
    fn history_from_before_the_screen_opened_notifies_nobody() {
        let mut s = RunSummary::new();
        let mut w = Watch::new(10_000);
        for ev in [
            started(),
            escalated("a"),
            finished("a", false),
            run_finished(3),
        ] {
            s.apply(&ev);
            assert!(w.observe(&s, Some(5_000)).is_empty());
        }
        // Then a retry, live: its end is new.
        for ev in [
            RunEvent::AttemptStarted {
                candidate: "a".into(),
                attempt: 2,
                feedback: "again".into(),
            },
            finished("a", false),
        ] {
            s.apply(&ev);
            assert!(w.observe(&s, Some(11_000)).is_empty());
        }
        s.apply(&run_finished(1));
        assert_eq!(w.observe(&s, Some(12_000)).len(), 1);
    }

    #[test]
    fn the_terminal_is_told_by_its_variables_and_multiplexers_get_none() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            desktop_of(env(&[("TERM_PROGRAM", "iTerm.app")])),
            Desktop::Osc9
        );
        assert_eq!(
            desktop_of(env(&[("TERM_PROGRAM", "WezTerm")])),
            Desktop::Osc777
        );
        assert_eq!(
            desktop_of(env(&[("TERM", "xterm-ghostty")])),
            Desktop::Osc777
        );
        assert_eq!(desktop_of(env(&[("TERM", "foot")])), Desktop::Osc777);
        assert_eq!(
            desktop_of(env(&[("TERM", "rxvt-unicode-256color")])),
            Desktop::Osc777
        );
        assert_eq!(desktop_of(env(&[("TERM", "xterm-kitty")])), Desktop::Osc9);
        assert_eq!(desktop_of(env(&[("LC_TERMINAL", "iTerm2")])), Desktop::Osc9);
        assert_eq!(
            desktop_of(env(&[("TERM", "xterm-256color")])),
            Desktop::None
        );
        assert_eq!(desktop_of(env(&[])), Desktop::None);
        assert_eq!(
            desktop_of(env(&[
                ("TERM_PROGRAM", "iTerm.app"),
                ("TMUX", "/tmp/tmux-0/default,1,0")
            ])),
            Desktop::None
        );
        assert_eq!(
            desktop_of(env(&[
                ("TERM", "screen-256color"),
                ("LC_TERMINAL", "iTerm2")
            ])),
            Desktop::None
        );
    }

    #[test]
    fn the_bytes_are_a_bell_and_one_clean_osc() {
        let n = Notice {
            occasion: Occasion::Escalated,
            run: "r-1".into(),
            candidate: Some("a".into()),
            title: "rascal: a needs a human".into(),
            message: "run r-1; a\x1b]0;pwned\x07 escalated".into(),
        };
        assert_eq!(
            bytes(&n, true, Desktop::Osc777),
            b"\x07\x1b]777;notify;rascal: a needs a human;run r-1, a ]0,pwned  escalated\x07"
                .to_vec()
        );
        assert_eq!(
            bytes(&n, false, Desktop::Osc9),
            b"\x1b]9;rascal: a needs a human: run r-1, a ]0,pwned  escalated\x07".to_vec()
        );
        assert_eq!(bytes(&n, true, Desktop::None), b"\x07".to_vec());
        assert!(bytes(&n, false, Desktop::None).is_empty());
    }

    #[test]
    fn a_contested_run_says_so_in_its_notice() {
        let mut s = RunSummary::new();
        s.apply(&run_finished(
            rascal_core::model::verdict::CONTESTED_EXIT_CODE,
        ));
        let n = at_end(&s);
        assert_eq!(n.title, "rascal: run contested");
        assert!(n.message.contains("you pick"), "{}", n.message);
    }
}
