//! Layer 3's reports as a Markdown checklist (the PR body and `--json`).

use crate::model::verdict::{Layer, Report, Status};

/// One checklist line for a Layer 3 report:
/// `- [x] description — evidence` or `- [ ] description ← FAILED: reason`.
pub fn checklist_line(r: &Report) -> String {
    let why = r
        .errored
        .clone()
        .or_else(|| r.issues.first().map(|i| i.message.clone()))
        .unwrap_or_else(|| r.output.clone());
    let tags = match (r.required, r.advisory) {
        (_, true) => " (advisory)",
        (false, _) => " (optional)",
        _ => "",
    };
    match r.status {
        Status::Pass => format!(
            "- [x] {}{tags} — {}",
            r.check,
            r.output.lines().next().unwrap_or("")
        ),
        Status::Skipped => format!("- [ ] {}{tags} ← {}", r.check, r.output),
        Status::Warn => format!("- [ ] {}{tags} ← WARNING: {}", r.check, why),
        Status::Fail => format!("- [ ] {}{tags} ← FAILED: {}", r.check, why),
    }
}

/// The Markdown checklist of the Layer 3 reports among `reports`.
pub fn checklist_markdown(reports: &[Report]) -> String {
    reports
        .iter()
        .filter(|r| r.layer == Layer::Criteria)
        .map(|r| checklist_line(r) + "\n")
        .collect()
}
