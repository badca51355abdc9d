//! The honest way out: an author agent that finds its task impossible or
//! contradictory (tests that contradict the instruction, a dependency that
//! is missing) writes its reason to `$RASCAL_ARTIFACTS_DIR/impossible.md`
//! instead of bending the tests — offering the exit cuts cheating
//! (ImpossibleBench, 2025). Here: the file's name, what its untrusted text
//! becomes (bounded, control characters gone), the verdict's reason, and
//! when declarations escalate the run — pure, so the pipeline's exit code
//! and the one fold agree.

use crate::model::state::State;
use crate::model::verdict::{Issue, Layer, Report, Severity};

/// The declaration's file, in the candidate's artifacts directory.
pub const FILE: &str = "impossible.md";

/// The rule of the agent's report that carries a declaration.
pub const RULE: &str = "agent/impossible";

/// The check (Layer::Agent) whose report carries it.
pub const CHECK: &str = "impossible";

/// At most this many bytes of the file are kept as its reason.
pub const MAX_REASON_BYTES: usize = 4096;

/// A declaration's reason from the file's bytes: at most
/// [`MAX_REASON_BYTES`] read as UTF-8 (lossy), every control character but
/// line feed and tab dropped, invisible reordering characters dropped,
/// trimmed; an empty file says so.
pub fn reason(raw: &[u8]) -> String {
    let head = &raw[..raw.len().min(MAX_REASON_BYTES)];
    let text = String::from_utf8_lossy(head);
    let clean: String = text
        .chars()
        .filter(|c| *c == '\n' || *c == '\t' || !crate::text::inert::is_unsafe(*c))
        .collect();
    let mut out = clean.trim().to_string();
    if raw.len() > MAX_REASON_BYTES {
        out.push_str(&format!(
            "\n…[{} more bytes not read]",
            raw.len() - MAX_REASON_BYTES
        ));
    }
    if out.is_empty() {
        "(no reason given: impossible.md is empty)".into()
    } else {
        out
    }
}

/// The candidate's verdict reason: `the agent declared the task
/// impossible: …` with the reason's first line.
pub fn verdict_reason(reason: &str) -> String {
    format!(
        "the agent declared the task impossible: {}",
        crate::text::ellipsis(first_line(reason), 200)
    )
}

/// The first non-empty line of a reason.
pub fn first_line(reason: &str) -> &str {
    reason
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// The agent's report that carries a declaration (Layer::Agent, check
/// `impossible`): it fails the candidate with [`verdict_reason`].
pub fn report(reason: &str) -> Report {
    Report::new(Layer::Agent, CHECK).finish_with_issue(Issue::new(
        RULE,
        Severity::Error,
        verdict_reason(reason),
    ))
}

/// The agent declared the task impossible in the attempt of `reports`.
pub fn declared(reports: &[Report]) -> bool {
    reports
        .iter()
        .any(|r| r.layer == Layer::Agent && r.issues.iter().any(|i| i.rule == RULE))
}

/// Whether the run escalates to a human over declarations: every
/// candidate declared the task impossible, or the candidates that passed
/// the gate (PASS, WARN) are fewer than the declarers and those are two or
/// more. A lone declaration beside a passing candidate only shows.
pub fn escalates(states: &[State]) -> bool {
    let declared = states.iter().filter(|s| **s == State::Impossible).count();
    let passed = states.iter().filter(|s| s.passed()).count();
    declared > 0 && (declared == states.len() || (declared >= 2 && passed < declared))
}

/// The declarers' reasons side by side, a Markdown table (`|` escaped,
/// each reason on one line, bounded).
pub fn table<'a>(declared: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let cell = |s: &str| {
        crate::text::ellipsis(&s.split_whitespace().collect::<Vec<_>>().join(" "), 300)
            .replace('|', "\\|")
    };
    let rows: Vec<String> = declared
        .into_iter()
        .map(|(id, reason)| format!("| {} | {} |", cell(id), cell(reason)))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "| candidate | why it declared the task impossible |\n|---|---|\n{}\n",
        rows.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_is_bounded_and_has_no_control_characters() {
        assert_eq!(
            reason(b"  tests say 2+2=5\x1b[31m\r\n\tsee t.rs\0 \n"),
            "tests say 2+2=5[31m\n\tsee t.rs"
        );
        assert_eq!(reason(b" \n"), "(no reason given: impossible.md is empty)");
        let long = vec![b'x'; MAX_REASON_BYTES + 10];
        let r = reason(&long);
        assert!(r.starts_with(&"x".repeat(MAX_REASON_BYTES)), "{r}");
        assert!(r.ends_with("…[10 more bytes not read]"), "{r}");
        // Not UTF-8, and a character that reorders text.
        assert_eq!(reason(b"a\xffb\xe2\x80\xaec"), "a\u{fffd}bc");
    }

    #[test]
    fn the_verdict_reason_carries_the_first_line() {
        assert_eq!(
            verdict_reason("\n  the spec wants 5\nmore"),
            "the agent declared the task impossible: the spec wants 5"
        );
    }

    #[test]
    fn the_report_fails_and_names_the_declaration() {
        let r = report("no libfoo\nat all");
        assert_eq!(r.status, crate::model::verdict::Status::Fail);
        assert_eq!(
            r.issues[0].message,
            "the agent declared the task impossible: no libfoo"
        );
        assert!(declared(&[r]));
        assert!(!declared(&[Report::new(Layer::Agent, "agent").finish()]));
    }

    #[test]
    fn declarations_escalate_when_all_or_a_majority_against_the_passing() {
        use State::*;
        assert!(escalates(&[Impossible]));
        assert!(escalates(&[Impossible, Impossible, Impossible]));
        assert!(escalates(&[Pass, Impossible, Impossible]));
        assert!(escalates(&[Fail, Impossible, Impossible]));
        assert!(!escalates(&[Pass, Impossible]));
        assert!(!escalates(&[Pass, Fail, Impossible]));
        assert!(!escalates(&[Fail, Impossible]));
        assert!(!escalates(&[Pass, Warn, Impossible, Impossible]));
        assert!(!escalates(&[Pass, Fail]));
        assert!(!escalates(&[]));
    }

    #[test]
    fn the_table_puts_reasons_side_by_side() {
        let t = table([("a", "tests contradict\nthe task"), ("b", "no | libfoo")]);
        assert_eq!(
            t,
            "| candidate | why it declared the task impossible |\n|---|---|\n\
             | a | tests contradict the task |\n| b | no \\| libfoo |\n"
        );
        assert_eq!(table([]), "");
    }
}
