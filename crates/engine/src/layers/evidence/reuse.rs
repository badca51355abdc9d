//! A test guardrail's judgement is made once per exact input (issue 52):
//! the same base, the same change tree run in the same sandbox, the same
//! guardrail, configuration and rascal give the same report, so a second
//! candidate (or a retry, or the next run) with that change tree reuses it
//! and says so, instead of building and running everything again.
//! Candidates that arrive together wait for the first one's judgement.
//!
//! Only rascal writes the kept reports (`ledger/reused/` beside the run
//! files, never inside a sandbox's copy; `rascal gc` removes them with the
//! ledger's other shared caches), and a report is looked up by a digest
//! of all of its inputs: one byte changed in any file of the change is a
//! new tree, a new key, a fresh run; so is a changed `.rascal/` file or a
//! new rascal. Container candidates (their image is an input rascal does
//! not hash), held-out runs and checks in place (`rascal check`) never
//! reuse. What is not hashed: the machine's toolchain (a new compiler or
//! pytest) — `RASCAL_FRESH=1` runs every check again.

use rascal_core::config::Guardrail;
use rascal_core::model::changeset::ChangeSet;
use rascal_core::model::ledger::StepTime;
use rascal_core::model::verdict::{Report, Status};
use rascal_exec::exec::place::Place;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The first line of a reused report's output.
pub(crate) const REUSED: &str = "reused: this change tree was judged with the same tests, command and configuration before; nothing ran again (RASCAL_FRESH=1 runs it again)";

/// Where a judgement of these inputs is kept.
pub(crate) struct Reuse {
    key: String,
    file: PathBuf,
}

/// What the judgement of a test guardrail depends on besides the code.
pub(crate) struct Inputs<'a> {
    pub guardrail: &'a Guardrail,
    pub config: &'a str,
    pub package_json: Option<&'a str>,
    pub allow: &'a [String],
}

impl Reuse {
    /// The kept judgement for `changes` run at `place` with `inputs`, or
    /// None where reuse is not safe to decide (see the module text).
    pub(crate) fn of(changes: &ChangeSet, place: &Place, inputs: &Inputs<'_>) -> Option<Reuse> {
        let ran = reusable_run(place, &changes.tree)?;
        let key = key(&changes.base, &changes.tree, ran, inputs);
        let file = kept_file(place, "reused", &key)?;
        Some(Reuse { key, file })
    }

    /// The kept judgement, marked as reused, else `judge`'s (kept when it
    /// is an answer, not a failure to answer). One judgement of a key at a
    /// time: a candidate with the same inputs waits for the first.
    pub(crate) async fn or_judge(self, judge: impl std::future::Future<Output = Report>) -> Report {
        let started = std::time::Instant::now();
        let lock = one_at_a_time(&self.key);
        let _held = lock.lock().await;
        if let Some(r) = self.kept() {
            return reused(r, started.elapsed().as_millis() as u64);
        }
        let r = judge.await;
        if keepable(&r) {
            if let Some(dir) = self.file.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = std::fs::write(&self.file, serde_json::to_vec(&r).unwrap_or_default());
        }
        r
    }

    fn kept(&self) -> Option<Report> {
        let bytes = std::fs::read(&self.file).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

/// The tree the checks at `place` ran for the change tree `tree`, when
/// what they found may be reused: not asked to run everything again
/// (`RASCAL_FRESH`), a confined bubblewrap copy (unconfined, a candidate's
/// code could write a result for a tree it will make; confined, it writes
/// only its copy and build cache), no held-out tests (files outside the
/// change tree), and a change tree to key on.
pub(crate) fn reusable_run<'a>(place: &'a Place, tree: &str) -> Option<&'a str> {
    let Place::Sandboxed(s) = place else {
        return None;
    };
    if fresh_asked() || s.with_holdout || !s.confined || tree.is_empty() {
        return None;
    }
    place.run_tree()
}

/// Where what was found for `key` is kept: in `folder` of the ledger
/// beside the run files of `place`'s repository, where only rascal writes.
pub(crate) fn kept_file(place: &Place, folder: &str, key: &str) -> Option<PathBuf> {
    let repo = git2::Repository::discover(place.origin()).ok()?;
    Some(
        rascal_exec::git::workspace::files_dir(&repo)
            .join("ledger")
            .join(folder)
            .join(format!("{}.json", &key[..32])),
    )
}

/// `RASCAL_FRESH` set (and not `0`): every check runs again, nothing is
/// reused.
fn fresh_asked() -> bool {
    std::env::var_os("RASCAL_FRESH").is_some_and(|v| !v.is_empty() && v != "0")
}

/// The digest of everything a test guardrail's judgement depends on
/// besides the machine: the base, the change tree and the tree run (an
/// overlay may differ), the guardrail, the configuration, the base's
/// `package.json`, the test changes allowed, whether a full report was
/// asked for, and rascal's own version.
fn key(base: &str, tree: &str, ran: &str, i: &Inputs<'_>) -> String {
    let text = serde_json::json!({
        "rascal": env!("CARGO_PKG_VERSION"),
        "base": base,
        "tree": tree,
        "ran": ran,
        "guardrail": format!("{:?}", i.guardrail),
        "config": i.config,
        "package_json": i.package_json,
        "allow": i.allow,
        "full_report": crate::layers::evidence::test_run::base_steps::full_report(),
    });
    rascal_core::digest::digest(text.to_string())
}

/// An answer (pass, or a failure with its findings), not a check that
/// could not run, was skipped or was stopped.
fn keepable(r: &Report) -> bool {
    r.errored.is_none() && matches!(r.status, Status::Pass | Status::Warn | Status::Fail)
}

/// `r` as this run's report: said to be reused, its time the lookup's.
fn reused(mut r: Report, ms: u64) -> Report {
    r.output = format!("{REUSED}\n{}", r.output);
    r.duration_ms = ms;
    if let Some(l) = r.ledger.as_mut() {
        l.steps = vec![StepTime {
            step: "reused".into(),
            ms,
            runs: 0,
        }];
    }
    r.input("reused", "1").finish()
}

/// The lock of one key, shared by every check of this process.
fn one_at_a_time(key: &str) -> Arc<tokio::sync::Mutex<()>> {
    type Locks = Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>;
    static LOCKS: std::sync::LazyLock<Locks> = std::sync::LazyLock::new(Default::default);
    let mut locks = LOCKS.lock().unwrap_or_else(|e| e.into_inner());
    locks.entry(key.to_string()).or_default().clone()
}

/// A test guardrail named `tests` running `command`, for unit tests.
#[cfg(test)]
pub(crate) fn guardrail(command: &str) -> Guardrail {
    let text = format!("{{ name: tests, command: '{command}' }}");
    rascal_core::config::parse("guardrails.yaml", &text).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rascal_core::model::verdict::Layer;

    #[test]
    fn every_input_is_in_the_key() {
        let g = guardrail("pytest -q");
        let i = Inputs {
            guardrail: &g,
            config: "c1",
            package_json: None,
            allow: &[],
        };
        let k = key("base", "tree", "tree", &i);
        assert_eq!(k, key("base", "tree", "tree", &i), "the same inputs");
        assert_ne!(k, key("base2", "tree", "tree", &i), "base");
        assert_ne!(k, key("base", "tree2", "tree", &i), "change tree");
        assert_ne!(k, key("base", "tree", "overlay", &i), "tree run");
        let other = guardrail("pytest -q -x");
        let g2 = Inputs {
            guardrail: &other,
            ..i
        };
        assert_ne!(k, key("base", "tree", "tree", &g2), "guardrail");
        let c2 = Inputs { config: "c2", ..i };
        assert_ne!(k, key("base", "tree", "tree", &c2), "config");
        let p2 = Inputs {
            package_json: Some("{}"),
            ..i
        };
        assert_ne!(k, key("base", "tree", "tree", &p2), "package.json");
        let allowed = ["tests/test_a.py".to_string()];
        let a2 = Inputs {
            allow: &allowed,
            ..i
        };
        assert_ne!(k, key("base", "tree", "tree", &a2), "allowed test changes");
    }

    #[test]
    fn only_answers_are_kept_and_a_reused_one_says_so() {
        let pass = Report::new(Layer::Guardrails, "tests").finish();
        assert!(keepable(&pass));
        let broke = Report::new(Layer::Guardrails, "tests")
            .errored("cancelled")
            .finish();
        assert!(!keepable(&broke));
        assert!(!keepable(&Report::skipped(
            Layer::Guardrails,
            "tests",
            "build failed"
        )));
        let r = reused(pass.clone(), 3);
        assert!(r.output.starts_with(REUSED), "{}", r.output);
        assert_eq!(r.status, pass.status);
        assert!(r.receipt.inputs.contains_key("reused"));
    }
}
