//! The verdict model (docs/architecture.md, "Verdicts"): what a check reports, and how reports are
//! reduced to PASS / WARN / FAIL by `gate()`. "Could not verify" is never PASS.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How bad a finding is. Ordered: info < warning < error < critical.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
    Critical,
}

impl Severity {
    pub fn label(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
            Severity::Critical => "critical",
        }
    }
}

/// How sure the check is of a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

/// The verification layers, in the order a candidate goes through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    Agent,
    Guardrails,
    Permissions,
    Criteria,
    Review,
    Compare,
}

impl Layer {
    pub fn name(self) -> &'static str {
        match self {
            Layer::Agent => "agent",
            Layer::Guardrails => "guardrails",
            Layer::Permissions => "permissions",
            Layer::Criteria => "criteria",
            Layer::Review => "review",
            Layer::Compare => "compare",
        }
    }
}

impl std::fmt::Display for Layer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One grounded finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Issue {
    pub rule: String,
    pub severity: Severity,
    pub confidence: Confidence,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    pub message: String,
}

impl Issue {
    pub fn new(rule: impl Into<String>, severity: Severity, message: impl Into<String>) -> Self {
        Issue {
            rule: rule.into(),
            severity,
            confidence: Confidence::High,
            path: None,
            line: None,
            message: message.into(),
        }
    }

    pub fn at(mut self, path: impl Into<String>, line: Option<u32>) -> Self {
        self.path = Some(path.into());
        self.line = line;
        self
    }

    pub fn confidence(mut self, confidence: Confidence) -> Self {
        self.confidence = confidence;
        self
    }

    /// The severity that counts for the gate: an issue from an advisory
    /// check, or with low confidence, can warn but never block.
    pub fn effective_severity(&self, advisory: bool) -> Severity {
        if advisory || self.confidence == Confidence::Low {
            self.severity.min(Severity::Warning)
        } else {
            self.severity
        }
    }

    /// `path:line` when known, for printing.
    pub fn location(&self) -> Option<String> {
        match (&self.path, self.line) {
            (Some(p), Some(l)) => Some(format!("{p}:{l}")),
            (Some(p), None) => Some(p.clone()),
            _ => None,
        }
    }

    /// `path:line` for printing before the message, unless the message
    /// already starts with it (a compiler's `src/lib.rs:6:5: error…`).
    pub fn location_to_print(&self) -> Option<String> {
        self.location()
            .filter(|l| !self.message.starts_with(&format!("{l}:")))
    }
}

/// PASS / WARN / FAIL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Warn,
    Fail,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Warn => "WARN",
            Verdict::Fail => "FAIL",
        }
    }

    /// Process exit code for a verdict: 0 PASS or WARN, 1 FAIL.
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Pass | Verdict::Warn => 0,
            Verdict::Fail => 1,
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// The status of one report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Warn,
    Fail,
    /// Not run because an earlier required check failed (fail fast).
    Skipped,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Warn => "warn",
            Status::Fail => "fail",
            Status::Skipped => "skipped",
        }
    }
}

/// Digests of what a check looked at and what it found, so a later reader
/// can tell exactly what was checked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// Input name (base, diff, config, command…) → sha256 hex.
    pub inputs: BTreeMap<String, String>,
    /// sha256 of the result (status, exit code, issues, output).
    pub result: String,
}

pub use crate::digest::digest;

/// What one check returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub layer: Layer,
    pub check: String,
    pub status: Status,
    /// Why the check could not produce a trustworthy answer (did not run,
    /// timed out, crashed, unparsable). An errored required check is FAIL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errored: Option<String>,
    /// A required check can fail the verdict; an optional one only warn.
    pub required: bool,
    /// Advisory checks (judges, heuristics) have their issues clamped to warnings.
    pub advisory: bool,
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub issues: Vec<Issue>,
    /// The tail of the check's output.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub output: String,
    /// A test guardrail's ledger: which tests ran and passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger: Option<Box<crate::model::ledger::Ledger>>,
    /// The agent's network and what its egress proxy did (agent reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<Box<crate::model::network::NetworkSummary>>,
    pub receipt: Receipt,
}

impl Report {
    /// A fresh report for `check` in `layer`; call `finish()` once filled.
    pub fn new(layer: Layer, check: impl Into<String>) -> Self {
        Report {
            layer,
            check: check.into(),
            status: Status::Pass,
            errored: None,
            required: true,
            advisory: false,
            duration_ms: 0,
            exit_code: None,
            issues: Vec::new(),
            output: String::new(),
            ledger: None,
            network: None,
            receipt: Receipt::default(),
        }
    }

    /// A report for a check that was not run because an earlier one failed.
    pub fn skipped(layer: Layer, check: impl Into<String>, why: &str) -> Self {
        let mut r = Report::new(layer, check);
        r.status = Status::Skipped;
        r.output = why.to_string();
        r.finish()
    }

    pub fn input(mut self, name: &str, bytes: impl AsRef<[u8]>) -> Self {
        self.receipt.inputs.insert(name.to_string(), digest(bytes));
        self
    }

    pub fn errored(mut self, why: impl Into<String>) -> Self {
        self.errored = Some(why.into());
        self
    }

    /// Add `issue`, then [`Report::finish`].
    pub fn finish_with_issue(mut self, issue: Issue) -> Report {
        self.issues.push(issue);
        self.finish()
    }

    /// Derive the status from `errored` and the issues, and seal the receipt.
    pub fn finish(mut self) -> Self {
        if self.status != Status::Skipped {
            self.status = status_of(&self);
        }
        let mut result = serde_json::json!({
            "status": self.status,
            "errored": self.errored,
            "exit_code": self.exit_code,
            "issues": self.issues,
            "output": self.output,
        });
        if let Some(l) = &self.ledger {
            // What was found, not how long finding it took.
            let mut l = l.clone();
            l.steps.clear();
            result["ledger"] = serde_json::json!(l);
        }
        if let Some(n) = &self.network {
            result["network"] = serde_json::json!(n);
        }
        self.receipt.result = digest(result.to_string());
        self
    }

    /// The worst effective severity among this report's issues.
    pub fn worst(&self) -> Option<Severity> {
        self.issues
            .iter()
            .map(|i| i.effective_severity(self.advisory))
            .max()
    }
}

fn status_of(r: &Report) -> Status {
    if r.errored.is_some() {
        return if r.required && !r.advisory {
            Status::Fail
        } else {
            Status::Warn
        };
    }
    match r.worst() {
        Some(s) if s >= Severity::Error && r.required => Status::Fail,
        Some(s) if s >= Severity::Warning => Status::Warn,
        _ => Status::Pass,
    }
}

/// Reduce reports to one verdict: any errored required check → FAIL; any
/// unclamped issue ≥ error in a required check → FAIL; any warning → WARN;
/// else PASS. An empty list of reports is PASS only because nothing was
/// configured; callers that expected checks must add an errored report.
pub fn gate(reports: &[Report]) -> Verdict {
    let mut verdict = Verdict::Pass;
    for r in reports {
        let s = if r.status == Status::Skipped {
            Status::Skipped
        } else {
            status_of(r)
        };
        match s {
            Status::Fail => return Verdict::Fail,
            Status::Warn => verdict = Verdict::Warn,
            Status::Pass | Status::Skipped => {}
        }
    }
    verdict
}

/// The run's verdict from its candidates' verdicts: the best one (what you
/// get by picking the winner); no candidate, or none finished → FAIL.
pub fn run_verdict(candidates: &[Verdict]) -> Verdict {
    candidates.iter().copied().min().unwrap_or(Verdict::Fail)
}

/// The run's exit code: 0 when a candidate passed (or warned), 3 when none
/// did and at least one was escalated to a human, else 1.
pub fn run_exit_code(verdict: Verdict, any_escalated: bool) -> i32 {
    match verdict {
        Verdict::Fail if any_escalated => 3,
        v => v.exit_code(),
    }
}

/// The exit code of a run whose candidates passed but disagree, with
/// nothing rascal trusts to settle which is right: no pick, a human
/// decides. Never 0: a contested run is not a pass.
pub const CONTESTED_EXIT_CODE: i32 = 4;

/// The exit code a strict run (`--strict`, for CI) ends with: a warning
/// is a failure there, whatever else holds.
pub fn strict_exit_code(verdict: Verdict, exit_code: i32) -> i32 {
    match verdict {
        Verdict::Warn => Verdict::Fail.exit_code(),
        _ => exit_code,
    }
}

/// A candidate's verdict from its reports.
pub fn candidate_verdict(reports: &[Report]) -> Verdict {
    if reports.is_empty() {
        return Verdict::Fail;
    }
    gate(reports)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report_with(issue: Issue, advisory: bool) -> Report {
        let mut r = Report::new(Layer::Guardrails, "x");
        r.advisory = advisory;
        r.issues.push(issue);
        r.finish()
    }

    #[test]
    fn a_strict_run_fails_on_a_warning_and_keeps_every_other_code() {
        assert_eq!(strict_exit_code(Verdict::Warn, 0), 1);
        assert_eq!(strict_exit_code(Verdict::Pass, 0), 0);
        assert_eq!(strict_exit_code(Verdict::Fail, 3), 3);
    }

    #[test]
    fn errored_required_check_fails_even_without_issues() {
        let r = Report::new(Layer::Guardrails, "build")
            .errored("timed out after 1s")
            .finish();
        assert_eq!(r.status, Status::Fail);
        assert_eq!(gate(&[r]), Verdict::Fail);
    }

    #[test]
    fn advisory_and_low_confidence_issues_are_clamped_to_warning() {
        let crit = Issue::new("r", Severity::Critical, "m");
        assert_eq!(gate(&[report_with(crit.clone(), true)]), Verdict::Warn);
        let low = crit.clone().confidence(Confidence::Low);
        assert_eq!(gate(&[report_with(low, false)]), Verdict::Warn);
        assert_eq!(gate(&[report_with(crit, false)]), Verdict::Fail);
    }

    #[test]
    fn warnings_warn_info_passes_and_fail_wins() {
        let info = report_with(Issue::new("r", Severity::Info, "m"), false);
        let warn = report_with(Issue::new("r", Severity::Warning, "m"), false);
        let err = report_with(Issue::new("r", Severity::Error, "m"), false);
        assert_eq!(gate(std::slice::from_ref(&info)), Verdict::Pass);
        assert_eq!(gate(&[info.clone(), warn.clone()]), Verdict::Warn);
        assert_eq!(gate(&[warn, err, info]), Verdict::Fail);
    }

    #[test]
    fn receipt_changes_with_the_result() {
        let a = Report::new(Layer::Guardrails, "x")
            .input("cmd", "true")
            .finish();
        let b = Report::new(Layer::Guardrails, "x")
            .input("cmd", "true")
            .errored("boom")
            .finish();
        assert_ne!(a.receipt.result, b.receipt.result);
        assert_eq!(a.receipt.inputs["cmd"], digest("true"));
    }

    #[test]
    fn an_errored_check_fails_only_when_required_and_not_advisory() {
        let errored = |required, advisory| {
            let mut r = Report::new(Layer::Criteria, "c").errored("did not run");
            r.required = required;
            r.advisory = advisory;
            gate(&[r.finish()])
        };
        assert_eq!(errored(true, false), Verdict::Fail);
        assert_eq!(errored(true, true), Verdict::Warn);
        assert_eq!(errored(false, false), Verdict::Warn);
    }

    #[test]
    fn a_run_passes_with_its_best_candidate_and_exits_by_its_verdict() {
        use Verdict::{Fail, Pass, Warn};
        assert_eq!(run_verdict(&[Fail, Warn, Pass]), Pass);
        assert_eq!(run_verdict(&[Fail, Warn]), Warn);
        assert_eq!(run_verdict(&[]), Fail, "no candidate is no pass");
        assert_eq!([Pass, Warn, Fail].map(Verdict::exit_code), [0, 0, 1]);
        assert_eq!(run_exit_code(Fail, true), 3, "escalated to a human");
        assert_eq!(run_exit_code(Fail, false), 1);
        assert_eq!(run_exit_code(Pass, true), 0, "a pass is a pass");
        assert_eq!(run_exit_code(Warn, false), 0);
    }
}
