//! The run's exit code, from its verdict and how it ended.

use super::{final_exit_code, Ending};
use rascal_core::model::verdict::Verdict;

#[test]
fn the_exit_code_follows_the_verdict_and_how_the_run_ended() {
    let plain = Ending::default();
    let escalated = Ending {
        escalated: true,
        ..plain
    };
    let contested = Ending {
        contested: true,
        ..plain
    };
    let declared = Ending {
        declarations_escalate: true,
        ..plain
    };
    let strict = Ending {
        strict: true,
        ..plain
    };
    for (verdict, ending, code, why) in [
        (Verdict::Pass, plain, 0, "a PASS"),
        (Verdict::Warn, plain, 0, "a WARN passes"),
        (Verdict::Warn, strict, 1, "a WARN under --strict fails"),
        (Verdict::Fail, plain, 1, "a FAIL"),
        (
            Verdict::Pass,
            escalated,
            0,
            "an escalation beside a pass: one passed",
        ),
        (Verdict::Fail, escalated, 3, "an escalated FAIL"),
        (Verdict::Pass, contested, 4, "a contested PASS asks a human"),
        (Verdict::Fail, contested, 1, "a contested FAIL is a FAIL"),
        (
            Verdict::Pass,
            declared,
            3,
            "declarations escalate over a PASS",
        ),
        (
            Verdict::Pass,
            Ending {
                contested: true,
                declarations_escalate: true,
                ..plain
            },
            3,
            "declarations escalate over a contested run",
        ),
    ] {
        assert_eq!(final_exit_code(verdict, ending), code, "{why}");
    }
}
