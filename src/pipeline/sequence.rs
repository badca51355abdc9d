//! Runs the per-candidate layers that need no agent — L2 guardrails then L4
//! permissions — on a worktree's ChangeSet, fail fast, reporting progress as
//! each layer starts and each report lands. `rascal check` and the pipeline
//! both use this, so a change is judged the same way in either.

use crate::config::{Config, GuardrailKind, GUARDRAILS_FILE, PERMISSIONS_FILE};
use crate::layers::{guardrails, permissions::Permissions};
use crate::model::changeset::ChangeSet;
use crate::model::verdict::{Layer, Report, Status};
use std::path::Path;
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
    pub workdir: &'a Path,
    pub changes: &'a ChangeSet,
    pub origin: Origin,
    pub cancel: CancellationToken,
}

fn failed(r: &Report) -> bool {
    r.status == Status::Fail
}

/// Run L2 then L4. Returns every report (skipped ones included).
pub async fn verify(v: &Verification<'_>, sink: &(dyn Fn(Progress) + Send + Sync)) -> Vec<Report> {
    let mut reports = Vec::new();
    let emit = |r: Report, reports: &mut Vec<Report>| {
        sink(Progress::Report(r.clone()));
        reports.push(r);
    };
    let mut stop = false;

    if let Some(list) = &v.config.guardrails {
        sink(Progress::LayerStarted(Layer::Guardrails));
        let digest = v
            .config
            .digests
            .get(GUARDRAILS_FILE)
            .cloned()
            .unwrap_or_default();
        // Cheap, pure checks first.
        for g in list {
            if let Some(r) = guardrails::evaluate_pure(g, v.changes, v.workdir, &digest) {
                stop |= failed(&r);
                emit(r, &mut reports);
            }
        }
        // Then commands: consecutive `parallel: true` ones run together.
        let commands: Vec<_> = list
            .iter()
            .filter(|g| matches!(g.kind, GuardrailKind::Command { .. }))
            .collect();
        let mut i = 0;
        while i < commands.len() {
            let parallel = |g: &&crate::config::Guardrail| {
                matches!(g.kind, GuardrailKind::Command { parallel: true, .. })
            };
            let mut j = i + 1;
            if parallel(&commands[i]) {
                while j < commands.len() && parallel(&commands[j]) {
                    j += 1;
                }
            }
            let batch = &commands[i..j];
            if stop || v.cancel.is_cancelled() {
                for g in batch {
                    // Cancelled is "could not verify": a FAIL, never a pass.
                    let r = if stop {
                        Report::skipped(
                            Layer::Guardrails,
                            &g.name,
                            "skipped: an earlier required guardrail failed",
                        )
                    } else {
                        Report::new(Layer::Guardrails, &g.name)
                            .errored("cancelled before it ran")
                            .finish()
                    };
                    emit(r, &mut reports);
                }
            } else {
                let futures = batch
                    .iter()
                    .map(|g| guardrails::run_command(g, v.changes, v.workdir, &digest, &v.cancel));
                for r in futures::future::join_all(futures).await {
                    stop |= failed(&r);
                    emit(r, &mut reports);
                }
            }
            i = j;
        }
    }

    let permissions = match (&v.config.permissions, v.origin) {
        (Some(p), _) => Some(p.clone()),
        (None, Origin::Agent) => Some(Default::default()),
        (None, Origin::Human) => None,
    };
    if let Some(cfg) = permissions {
        if stop {
            emit(
                Report::skipped(
                    Layer::Permissions,
                    "permissions",
                    "skipped: guardrails failed",
                ),
                &mut reports,
            );
        } else {
            sink(Progress::LayerStarted(Layer::Permissions));
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
            match Permissions::compile(&cfg) {
                Ok(p) => {
                    r.advisory = p.advisory();
                    r.issues = p.check(v.changes);
                }
                Err(e) => r = r.errored(format!("permission rules could not compile: {e}")),
            }
            r.duration_ms = started.elapsed().as_millis() as u64;
            emit(r.finish(), &mut reports);
        }
    }
    reports
}
