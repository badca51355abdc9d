//! Unit tests of `app`.

use super::*;

/// Issue 53: a planned run waits on its plan screen with no candidate
/// running; its header clock stood at `wall 0:00` because nothing on
/// screen was said to move.
#[test]
fn the_wall_clock_runs_while_the_plan_waits() {
    use crate::fixture;
    let mut app = fixture::app(2, false, false);
    let (started, at) = fixture::events(2, false).remove(0);
    let mut waiting = App::new(app.meta.clone(), app.theme.clone(), "Ada".into());
    crate::update::update(&mut waiting, crate::Action::Run(Box::new(started), at));
    assert!(waiting.candidates.iter().all(|c| !c.started));
    assert!(waiting.animating(), "the wall clock runs");
    crate::update::update(&mut waiting, crate::Action::Tick(at + 7_000));
    assert_eq!(waiting.summary.wall.length_ms(waiting.now_ms), Some(7_000));
    // A finished run's clock stands still.
    app.state = RunState::Finished {
        verdict: Verdict::Pass,
        exit_code: 0,
    };
    assert!(!app.animating());
}

fn candidate() -> Candidate {
    Candidate::new(CandidateInfo {
        id: "c".into(),
        agent: "a".into(),
        runtime: "command".into(),
        worktree: "/tmp/w".into(),
        unsandboxed: false,
    })
}

#[test]
fn a_check_the_cancel_stopped_is_not_shown_as_failed() {
    let stopped = Report::new(Layer::Guardrails, "build")
        .errored("`cargo build` cancelled")
        .finish();
    let mut c = candidate();
    c.reports.push(stopped.clone());
    c.state = State::Cancelled;
    c.cancelled = true;
    assert_eq!(c.mark(Layer::Guardrails, &RunMeta::default()), Mark::Off);
    // The same report in a candidate nobody cancelled is a failure, and
    // so is a real failure beside it in a cancelled one.
    let mut c = candidate();
    c.reports.push(stopped.clone());
    c.state = State::Fail;
    assert_eq!(c.mark(Layer::Guardrails, &RunMeta::default()), Mark::Fail);
    let mut c = candidate();
    c.reports.push(stopped);
    c.reports.push(
        Report::new(Layer::Guardrails, "lint")
            .errored("`cargo clippy` exited 1")
            .finish(),
    );
    c.state = State::Cancelled;
    c.cancelled = true;
    assert_eq!(c.mark(Layer::Guardrails, &RunMeta::default()), Mark::Fail);
}
