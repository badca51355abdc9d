//! The test run of a change: which command guardrails are the test run
//! (`tests: true`, or a known runner such as `cargo test`), the
//! `test-integrity` check that compares both sides of the change (on by
//! default when a test guardrail exists), and the guardrail's evidence that
//! tests ran at all — zero tests run by a test guardrail is an errored FAIL.

use crate::config::{Config, Guardrail, GuardrailKind};
use crate::exec::place::Place;
use crate::layers::ledger;
use crate::layers::test_integrity::{self, FileVersions, Input};
use crate::model::changeset::{ChangeSet, Operation};
use crate::model::verdict::{Layer, Report};

/// The name of the implicit `test-integrity` check.
pub const TEST_INTEGRITY: &str = "test-integrity";

/// Whether `g` is the test run: `tests: true`, or (unless `tests: false`)
/// a command a known test runner recognises.
pub fn is_test_guardrail(g: &Guardrail, package_json: Option<&str>) -> bool {
    match &g.kind {
        GuardrailKind::Command { tests: Some(t), .. } => *t,
        GuardrailKind::Command { command, .. } => {
            ledger::recognise(command, package_json).is_some()
        }
        _ => false,
    }
}

/// The commands of the test guardrails of `config`.
pub fn test_commands(config: &Config, package_json: Option<&str>) -> Vec<String> {
    config
        .guardrails
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .filter(|g| is_test_guardrail(g, package_json))
        .filter_map(|g| match &g.kind {
            GuardrailKind::Command { command, .. } => Some(command.clone()),
            _ => None,
        })
        .collect()
}

/// The `test-integrity` check that runs for `config`: the one configured
/// (`builtin: test-integrity`), else an implicit required one when a test
/// guardrail exists, else none.
pub fn integrity_guardrail(config: &Config, package_json: Option<&str>) -> Option<Guardrail> {
    let list = config.guardrails.as_deref().unwrap_or(&[]);
    if let Some(g) = list.iter().find(|g| g.kind == GuardrailKind::TestIntegrity) {
        return Some(g.clone());
    }
    list.iter()
        .any(|g| is_test_guardrail(g, package_json))
        .then(|| Guardrail {
            name: TEST_INTEGRITY.into(),
            required: true,
            kind: GuardrailKind::TestIntegrity,
        })
}

/// Bytes as text for the analysis; None for binary content.
fn text(bytes: Option<Vec<u8>>) -> Option<String> {
    bytes.and_then(|b| String::from_utf8(b).ok())
}

/// Run `test-integrity` on the change: the base and new text of every
/// changed file the analysis needs, read from the user's repository (base)
/// and the change's tree (never the live workspace).
pub fn integrity_report(
    g: &Guardrail,
    changes: &ChangeSet,
    place: &Place,
    commands: &[String],
    allow: &[String],
    config_digest: &str,
) -> Report {
    let started = std::time::Instant::now();
    let mut r = Report::new(Layer::Guardrails, &g.name)
        .input("base", &changes.base)
        .input("diff", changes.fingerprint())
        .input("config", config_digest)
        .input("tests", commands.join("\n"));
    r.required = g.required;
    let base = match git2::Repository::discover(place.origin())
        .ok()
        .zip(git2::Oid::from_str(&changes.base).ok())
    {
        Some(b) => b,
        None => {
            return r
                .errored("could not open the base commit to compare the tests")
                .finish()
        }
    };
    let read_base = |p: &str| {
        text(
            crate::git::workspace::read_at(&base.0, base.1, p)
                .ok()
                .flatten(),
        )
    };
    // (path, old path, base text, new text) of each file to compare.
    type Versions = (String, Option<String>, Option<String>, Option<String>);
    let mut owned: Vec<Versions> = Vec::new();
    for f in &changes.files {
        let relevant = f.paths().any(|p| test_integrity::relevant(p, commands));
        if !relevant {
            continue;
        }
        let old_path = f.old_path.clone();
        let base_text = read_base(old_path.as_deref().unwrap_or(&f.path));
        let new_text = match f.op {
            Operation::Delete => None,
            _ => text(place.read(&f.path)),
        };
        owned.push((f.path.clone(), old_path, base_text, new_text));
    }
    let files: Vec<FileVersions> = owned
        .iter()
        .map(|(path, old, b, n)| FileVersions {
            path,
            old_path: old.as_deref(),
            base: b.as_deref(),
            new: n.as_deref(),
        })
        .collect();
    r.issues = test_integrity::check(&Input {
        files: &files,
        test_commands: commands,
        allow,
        ledger: None,
    });
    r.output = if r.issues.is_empty() {
        format!(
            "{} test-related file(s) compared with the base: no test removed, skipped or weakened",
            files.len()
        )
    } else {
        format!(
            "{} finding(s) in {} test-related file(s)",
            r.issues.len(),
            files.len()
        )
    };
    r.duration_ms = started.elapsed().as_millis() as u64;
    r.finish()
}
