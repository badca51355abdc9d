//! The one place that orders the layers of a candidate's change: L2
//! guardrails, then L4 permissions (`verify`, fail fast), then — only when
//! they pass — L3 criteria, then — only when those pass — L5 review
//! (`layers`). Correctness is always checked before review, never the
//! reverse. Progress is reported as each layer starts and each report lands.
//! `rascal check` runs `verify` alone, so a change is judged the same way in
//! either.

use crate::layers::criteria::{self, CriteriaRun, Judge};
use crate::layers::evidence::{reuse, test_run};
use crate::layers::review::{self, ReviewOutcome, ReviewRun, Site};
use crate::layers::{guardrails, permissions::Permissions};
use crate::pipeline::content::ContentRead;
use rascal_core::config::spec::{CriterionKind, Task};
use rascal_core::config::{AgentConfig, Config, GuardrailKind, GUARDRAILS_FILE, PERMISSIONS_FILE};
use rascal_core::model::changeset::ChangeSet;
use rascal_core::model::verdict::{Layer, Report, Status};
use rascal_exec::exec::place::Place;
use tokio_util::sync::CancellationToken;

/// Progress of a verification, for live display.
#[derive(Debug, Clone)]
pub enum Progress {
    LayerStarted(Layer),
    Report(Report),
}

/// Whether the change came from an agent (self-protection always on) or
/// from a human at `rascal check` (permissions only when configured).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Agent,
    Human,
}

pub struct Verification<'a> {
    pub config: &'a Config,
    /// Where the change's files are and where its commands run.
    pub place: &'a Place,
    pub changes: &'a ChangeSet,
    pub origin: Origin,
    /// The task's `allow_test_changes` (tests or paths it may change).
    pub allow_test_changes: &'a [String],
    pub cancel: CancellationToken,
}

/// Every layer of one attempt's change: `verify` (L2, L4), then the later
/// layers (L3, L5) when it passed, else their skipped reports, on a
/// ChangeSet that may have been streamed through the content checks
/// (`read`: what they found, as in [`verify_read`]). Returns the reports
/// and, when the review ran, its outcome.
pub async fn layers_read(
    v: &Verification<'_>,
    read: Option<&ContentRead>,
    later: &LaterLayers<'_>,
    sink: &(dyn Fn(Progress) + Send + Sync),
) -> (Vec<Report>, Option<ReviewOutcome>) {
    let mut reports = verify_read(v, read, sink).await;
    if reports.iter().any(failed) {
        for r in skipped(
            later.config,
            later.task,
            "skipped: guardrails or permissions failed",
        ) {
            sink(Progress::Report(r.clone()));
            reports.push(r);
        }
        return (reports, None);
    }
    let (rs, outcome) = later_layers(later, sink).await;
    reports.extend(rs);
    (reports, outcome)
}

/// Every layer's reports when none of them will run (the agent failed, made
/// no change, or the change could not be read).
pub fn skip_all(config: &Config, task: &Task, why: &str) -> Vec<Report> {
    let mut out = Vec::new();
    if let Some(list) = &config.guardrails {
        for g in list {
            out.push(Report::skipped(Layer::Guardrails, &g.name, why));
        }
    }
    if let Some(g) = test_run::integrity_guardrail(config, None) {
        if !out.iter().any(|r| r.check == g.name) {
            out.push(Report::skipped(Layer::Guardrails, &g.name, why));
        }
    }
    out.push(Report::skipped(Layer::Permissions, "permissions", why));
    out.extend(skipped(config, task, why));
    out
}

fn failed(r: &Report) -> bool {
    r.status == Status::Fail
}

/// Run L2 and L4, fail fast. Every check that only reads the change (the
/// pure guardrails, then permissions) runs before any command that executes
/// candidate code; when a required one fails, no command runs. Returns
/// every report (skipped ones included).
pub async fn verify(v: &Verification<'_>, sink: &(dyn Fn(Progress) + Send + Sync)) -> Vec<Report> {
    verify_read(v, None, sink).await
}

/// [`verify`] on a ChangeSet that was streamed: what its content checks
/// found as each file was read (`read`, from a
/// [`crate::pipeline::content::ContentPass`] over the same config and
/// origin) stands in for the content the ChangeSet no longer holds.
pub async fn verify_read(
    v: &Verification<'_>,
    read: Option<&ContentRead>,
    sink: &(dyn Fn(Progress) + Send + Sync),
) -> Vec<Report> {
    let mut reports = Vec::new();
    let digest = v
        .config
        .digests
        .get(GUARDRAILS_FILE)
        .cloned()
        .unwrap_or_default();
    let package_json = base_package_json(v.place.origin(), &v.changes.base);
    // 1. What only reads the change: pure guardrails, then permissions.
    let stop = read_only_checks(
        v,
        read,
        (&digest, package_json.as_deref()),
        sink,
        &mut reports,
    );
    // 2. Commands: consecutive `parallel: true` ones run together.
    run_commands(
        v,
        (&digest, package_json.as_deref()),
        stop,
        sink,
        &mut reports,
    )
    .await;
    reports
}

/// A report to `sink` as it lands, and kept with the others.
fn emit(sink: &(dyn Fn(Progress) + Send + Sync), r: Report, reports: &mut Vec<Report>) {
    sink(Progress::Report(r.clone()));
    reports.push(r);
}

/// The checks that only read the change: the pure guardrails, the
/// `test-integrity` check, then permissions. Says why the commands are
/// skipped, when a required one failed.
fn read_only_checks(
    v: &Verification<'_>,
    read: Option<&ContentRead>,
    (digest, package_json): (&str, Option<&str>),
    sink: &(dyn Fn(Progress) + Send + Sync),
    reports: &mut Vec<Report>,
) -> Option<&'static str> {
    let guardrails = v.config.guardrails.as_deref().unwrap_or(&[]);
    if v.config.guardrails.is_some() {
        sink(Progress::LayerStarted(Layer::Guardrails));
    }
    for (i, g) in guardrails.iter().enumerate() {
        let found = read.and_then(|c| c.guardrail(i));
        if let Some(r) = guardrails::evaluate_read(g, v.changes, v.place, digest, found) {
            emit(sink, r, reports);
        }
    }
    // A failed `test-integrity` does not stop the commands: it read the
    // change's text; the test run's ledger and the base's own tests are the
    // evidence from execution a human weighs it against.
    let guardrail_failed = reports.iter().any(failed);
    let test_commands = test_run::test_commands(v.config, package_json);
    if let Some(g) = test_run::integrity_guardrail(v.config, package_json) {
        sink(Progress::LayerStarted(Layer::Guardrails));
        let r = test_run::integrity_report(
            &g,
            v.changes,
            v.place,
            &test_commands,
            v.allow_test_changes,
            digest,
        );
        emit(sink, r, reports);
    }
    let mut permissions_failed = false;
    if let Some(cfg) = permissions_in_force(v.config, v.origin) {
        sink(Progress::LayerStarted(Layer::Permissions));
        let r = check_permissions(v, &cfg, read);
        permissions_failed = failed(&r);
        emit(sink, r, reports);
    }
    if permissions_failed {
        Some("skipped: the change failed permissions")
    } else if guardrail_failed {
        Some("skipped: an earlier required guardrail failed")
    } else {
        None
    }
}

/// The command guardrails, consecutive `parallel: true` ones together;
/// once a required one fails (or `stop` says why from the start), the
/// rest are skipped, and a cancel leaves them errored.
async fn run_commands(
    v: &Verification<'_>,
    (digest, package_json): (&str, Option<&str>),
    mut stop: Option<&'static str>,
    sink: &(dyn Fn(Progress) + Send + Sync),
    reports: &mut Vec<Report>,
) {
    let guardrails = v.config.guardrails.as_deref().unwrap_or(&[]);
    let commands: Vec<_> = guardrails
        .iter()
        .filter(|g| matches!(g.kind, GuardrailKind::Command { .. }))
        .collect();
    if !commands.is_empty() {
        sink(Progress::LayerStarted(Layer::Guardrails));
    }
    let mut i = 0;
    while i < commands.len() {
        let parallel = |g: &&rascal_core::config::Guardrail| {
            matches!(g.kind, GuardrailKind::Command { parallel: true, .. })
        };
        let mut j = i + 1;
        if parallel(&commands[i]) {
            while j < commands.len() && parallel(&commands[j]) {
                j += 1;
            }
        }
        let batch = &commands[i..j];
        if stop.is_some() || v.cancel.is_cancelled() {
            for g in batch {
                // Cancelled is "could not verify": a FAIL, never a pass.
                let r = match stop {
                    Some(why) => Report::skipped(Layer::Guardrails, &g.name, why),
                    None => Report::new(Layer::Guardrails, &g.name)
                        .errored("cancelled before it ran")
                        .finish(),
                };
                emit(sink, r, reports);
            }
        } else {
            let futures = batch
                .iter()
                .map(|g| run_command_guardrail(v, g, package_json, digest));
            for r in futures::future::join_all(futures).await {
                if failed(&r) {
                    stop = Some("skipped: an earlier required guardrail failed");
                }
                emit(sink, r, reports);
            }
        }
        i = j;
    }
}

/// One command guardrail, run where the change is (`where: local`: this
/// machine's sandbox, not the agent's container); a test runner's through
/// the test guardrail.
async fn run_command_guardrail(
    v: &Verification<'_>,
    g: &rascal_core::config::Guardrail,
    package_json: Option<&str>,
    digest: &str,
) -> Report {
    let here = match &g.kind {
        rascal_core::config::GuardrailKind::Command { local: true, .. } => match v.place.local() {
            Ok(p) => p,
            Err(e) => {
                return Report::new(Layer::Guardrails, &g.name)
                    .errored(e.to_string())
                    .finish()
            }
        },
        _ => v.place.clone(),
    };
    let place = &here;
    if test_run::is_test_guardrail(g, package_json) {
        // Boxed: the judgement's future is large, and a worker's stack is not.
        let judge = Box::pin(test_run::run_test_guardrail(
            g,
            v.changes,
            place,
            digest,
            package_json,
            v.allow_test_changes,
            &v.cancel,
        ));
        // Every `.rascal/` file (limits and sandbox settings too), not
        // only the guardrails'.
        let config = format!("{:?}", v.config.digests);
        let inputs = reuse::Inputs {
            guardrail: g,
            config: &config,
            package_json,
            allow: v.allow_test_changes,
        };
        match reuse::Reuse::of(v.changes, place, &inputs) {
            Some(kept) => kept.or_judge(judge).await,
            None => judge.await,
        }
    } else {
        guardrails::run_command(g, v.changes, place, digest, false, &v.cancel).await
    }
}

/// The base commit's `package.json` (what `npm test` runs decides whether
/// it is a test runner), read from the user's repository, never the change.
pub fn base_package_json(origin: &std::path::Path, base: &str) -> Option<String> {
    let repo = git2::Repository::discover(origin).ok()?;
    let base = git2::Oid::from_str(base).ok()?;
    let bytes = rascal_exec::git::workspace::read_at(&repo, base, "package.json").ok()??;
    String::from_utf8(bytes).ok()
}

/// The permissions a change from `origin` is judged by: the config's, or
/// for an agent's change at least the built-in self-protection
/// ([`rascal_core::config::PermissionsConfig::built_in`]).
pub fn permissions_in_force(
    config: &Config,
    origin: Origin,
) -> Option<rascal_core::config::PermissionsConfig> {
    match (&config.permissions, origin) {
        (Some(p), _) => Some(p.clone()),
        (None, Origin::Agent) => Some(rascal_core::config::PermissionsConfig::built_in()),
        (None, Origin::Human) => None,
    }
}

/// Layer 4 on the change.
fn check_permissions(
    v: &Verification<'_>,
    cfg: &rascal_core::config::PermissionsConfig,
    read: Option<&ContentRead>,
) -> Report {
    let started = std::time::Instant::now();
    let digest = v
        .config
        .digests
        .get(PERMISSIONS_FILE)
        .cloned()
        .unwrap_or_else(|| "built-in self-protection".into());
    let mut r = Report::new(Layer::Permissions, "permissions")
        .input("base", &v.changes.base)
        .input("diff", v.changes.fingerprint())
        .input("config", digest);
    match Permissions::compile(cfg) {
        Ok(p) => {
            r.advisory = p.advisory();
            r.issues = match read {
                Some(c) => p.check_read(v.changes, &c.imports),
                None => p.check(v.changes),
            };
        }
        Err(e) => r = r.errored(format!("permission rules could not compile: {e}")),
    }
    r.duration_ms = started.elapsed().as_millis() as u64;
    r.finish()
}

/// Reports for Layers 3 and 5 when they will not run this attempt.
pub fn skipped(config: &Config, task: &Task, why: &str) -> Vec<Report> {
    let mut out = Vec::new();
    for c in &task.acceptance_criteria {
        out.push(Report::skipped(Layer::Criteria, &c.description, why));
    }
    for c in &task.constraints {
        out.push(Report::skipped(Layer::Criteria, &c.description, why));
    }
    if let Some(r) = config.verification.as_ref().and_then(|v| v.review.as_ref()) {
        for name in &r.reviewers {
            out.push(Report::skipped(Layer::Review, name, why));
        }
    }
    out
}

/// What Layers 3 and 5 need for one attempt.
pub struct LaterLayers<'a> {
    pub config: &'a Config,
    pub task: &'a Task,
    /// Where the change's files are and where its commands run.
    pub place: &'a Place,
    pub base: git2::Oid,
    pub changes: &'a ChangeSet,
    pub author: (&'a str, &'a AgentConfig),
    pub site: Site,
    pub cancel: CancellationToken,
}

/// L3 criteria, then — only when they pass — L5 review. Returns the
/// reports and, when the review ran, its outcome.
pub async fn later_layers(
    l: &LaterLayers<'_>,
    sink: &(dyn Fn(Progress) + Send + Sync),
) -> (Vec<Report>, Option<ReviewOutcome>) {
    let review_cfg = l
        .config
        .verification
        .as_ref()
        .and_then(|v| v.review.as_ref());
    let needs_diff = review_cfg.is_some()
        || l.task
            .acceptance_criteria
            .iter()
            .any(|c| c.kind == CriterionKind::LlmJudge);
    let diff = if needs_diff {
        match diff_of(l) {
            Ok(d) => d,
            Err(e) => {
                let r = Report::new(Layer::Review, "diff")
                    .errored(format!("could not compute the diff: {e}"))
                    .finish();
                sink(Progress::Report(r.clone()));
                return (vec![r], None);
            }
        }
    } else {
        String::new()
    };
    let report_sink = |r: Report| sink(Progress::Report(r));
    let mut reports = Vec::new();
    if l.task.has_criteria() {
        sink(Progress::LayerStarted(Layer::Criteria));
        let judge = judge_of(l);
        let base_side =
            crate::layers::evidence::base_defined::CandidateBase::new(l.place, l.changes);
        let run = CriteriaRun {
            base_side: base_side
                .as_ref()
                .map(|b| b as &dyn crate::layers::criterion_proof::BaseSide),
            task: l.task,
            config: l.config,
            place: l.place,
            base: l.base,
            changes: l.changes,
            diff: &diff,
            judge,
            cancel: l.cancel.clone(),
        };
        reports.extend(criteria::evaluate(&run, &report_sink).await);
    }
    let Some(review_cfg) = review_cfg else {
        return (reports, None);
    };
    if reports.iter().any(|r| r.status == Status::Fail) {
        for name in &review_cfg.reviewers {
            let r = Report::skipped(
                Layer::Review,
                name,
                "skipped: acceptance criteria failed (correctness is checked before review)",
            );
            sink(Progress::Report(r.clone()));
            reports.push(r);
        }
        return (reports, None);
    }
    sink(Progress::LayerStarted(Layer::Review));
    let run = ReviewRun {
        config: l.config,
        review: review_cfg,
        author: l.author,
        task: l.task,
        diff: &diff,
        changes: l.changes,
        site: l.site.clone(),
        cancel: l.cancel.clone(),
    };
    let (rs, outcome) = review::review(&run, &report_sink).await;
    reports.extend(rs);
    (reports, Some(outcome))
}

/// A candidate's diff from its change tree (what the checks read, no
/// second read of its workspace); `rascal check`'s from the files. The
/// held-out tests are left out.
fn diff_of(l: &LaterLayers<'_>) -> Result<String, crate::Error> {
    let text = match git2::Oid::from_str(&l.changes.tree) {
        Ok(tree) => rascal_exec::git::workspace::tree_diff_text(
            l.place.origin(),
            l.place.files(),
            l.base,
            tree,
        ),
        Err(_) => rascal_exec::git::workspace::diff_text(l.place.origin(), l.place.files(), l.base),
    }?;
    Ok(match l.place.holdout() {
        Some(h) => h.strip_from_diff(&text),
        None => text,
    })
}

/// The judge of `llm-judge` criteria, when `criteria.judge` names an agent.
fn judge_of<'a>(l: &'a LaterLayers<'_>) -> Option<Judge<'a>> {
    let settings = l
        .config
        .verification
        .as_ref()
        .and_then(|v| v.criteria.as_ref());
    settings.and_then(|s| s.judge.as_deref()).and_then(|name| {
        l.config.main.agents.get(name).map(|agent| Judge {
            name,
            agent,
            site: l.site.clone(),
            timeout: settings
                .and_then(|s| s.timeout)
                .map(|d| d.get())
                .unwrap_or(criteria::DEFAULT_TIMEOUT),
            budget: settings.map(|s| s.budget).unwrap_or_default().tokens,
        })
    })
}
