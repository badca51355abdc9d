//! The lines of a check's report, as `rascal run`, `show` and `check` print
//! them.

use rascal_core::model::verdict::{Report, Status};
use rascal_core::text::{cut, sanitize};
use rascal_exec::exec::runner::human;
use std::time::Duration;

/// How many output lines of a failed check are shown.
const OUTPUT_LINES: usize = 8;

fn mark(status: Status) -> &'static str {
    match status {
        Status::Pass => "✓",
        Status::Warn => "!",
        Status::Fail => "✗",
        Status::Skipped => "–",
    }
}

/// The lines for one report: a header, a test run's evidence (its ledger,
/// the base's tests, the new tests), then issues, then (when it failed)
/// the output tail.
pub fn report_lines(r: &Report) -> Vec<String> {
    let mut out = Vec::new();
    if r.layer == rascal_core::model::verdict::Layer::Criteria {
        // Layer 3 reads as its Markdown checklist, evidence included.
        out.push(format!(
            "{} criteria {}",
            mark(r.status),
            cut(&sanitize(&crate::layers::criteria::checklist_line(r)), 400)
        ));
        if matches!(r.status, Status::Fail | Status::Warn) {
            let rest = r
                .output
                .split_once('\n')
                .map(|(_, rest)| rest)
                .unwrap_or("");
            out.extend(output_lines(rest));
        }
        return out;
    }
    let status = match r.status {
        Status::Fail => "FAIL".to_string(),
        Status::Warn => "WARN".to_string(),
        s => s.label().to_string(),
    };
    let mut head = format!(
        "{} {}/{} {status}",
        mark(r.status),
        r.layer,
        sanitize(&r.check)
    );
    if r.status != Status::Skipped {
        head.push_str(&format!(
            " ({})",
            human(Duration::from_millis(r.duration_ms))
        ));
    }
    if let Some(e) = &r.errored {
        head.push_str(&format!(" — could not verify: {}", sanitize(e)));
    } else if r.status == Status::Skipped && !r.output.is_empty() {
        head.push_str(&format!(" — {}", sanitize(&r.output)));
    }
    out.push(head);
    // A test run's evidence (a failed one's output carries it already).
    if let (Some(l), false) = (&r.ledger, r.status == Status::Fail) {
        let lines = std::iter::once(l.summary())
            .chain(l.base_tests.as_ref().map(|b| b.summary()))
            .chain(l.base_tests.as_ref().and_then(|b| b.release_summary()))
            .chain(l.new_tests.as_ref().map(|n| n.summary()));
        out.extend(lines.map(|t| format!("    {}", cut(&sanitize(&t), 300))));
    }
    for i in &r.issues {
        let loc = i
            .location_to_print()
            .map(|l| format!("{} ", sanitize(&l)))
            .unwrap_or_default();
        let sev = i.effective_severity(r.advisory);
        out.push(format!(
            "    {loc}{}: {} [{}]",
            sev.label(),
            cut(&sanitize(&i.message), 300),
            sanitize(&i.rule)
        ));
    }
    if matches!(r.status, Status::Fail | Status::Warn) && r.status != Status::Skipped {
        out.extend(output_lines(&r.output));
    }
    out
}

/// A failed check's output as printed: its first error's block, when that
/// lies before the last `OUTPUT_LINES`, then those lines.
fn output_lines(output: &str) -> Vec<String> {
    crate::layers::diagnostics::shown(output, OUTPUT_LINES)
        .iter()
        .map(|l| format!("    │ {}", cut(&sanitize(l), 200)))
        .collect()
}
