//! Findings from the runner's own test listing (the ledger) at the base and
//! now: tests gone or newly ignored.

use super::compare::Finding;
use super::{short, LedgerView, RULE_REMOVED, RULE_SKIP};
use rascal_core::model::verdict::Issue;
use rascal_core::model::verdict::Severity;
use std::collections::HashMap;
use std::collections::HashSet;

/// The last segment of a listed test name: `a::b::c` → `c`,
/// `tests/t.py::TestA::test_b[1]` → `test_b`, `group > title` → `title`.
pub(super) fn ledger_leaf(name: &str) -> &str {
    let name = match name.find('[') {
        Some(i) if name.ends_with(']') => &name[..i],
        _ => name,
    };
    let name = name.rsplit("::").next().unwrap_or(name);
    let name = name.rsplit(" > ").next().unwrap_or(name);
    if name.contains(' ') {
        name
    } else {
        name.rsplit('.').next().unwrap_or(name)
    }
}

pub(super) fn ledger_findings(ledger: &LedgerView, out: &mut Vec<Finding>) {
    let reported = |rule: &str| -> HashSet<String> {
        out.iter()
            .filter(|f| f.issue.rule == rule)
            .flat_map(|f| f.tests.iter().map(|(_, leaf)| leaf.clone()))
            .collect()
    };
    let removed_static = reported(RULE_REMOVED);
    let skipped_static = reported(RULE_SKIP);
    let set = |v: &[String]| -> HashSet<String> { v.iter().cloned().collect() };
    let (base, now, ignored_now, ignored_base) = (
        set(ledger.at_base),
        set(ledger.now),
        set(ledger.ignored_now),
        set(ledger.ignored_at_base),
    );
    // Names new in the listing, by last segment: a test that moved.
    let mut new_leaves: HashMap<&str, usize> = HashMap::new();
    for n in ledger.now.iter().chain(ledger.ignored_now) {
        if !base.contains(n) {
            *new_leaves.entry(ledger_leaf(n)).or_default() += 1;
        }
    }
    // Doc tests new in the listing, by item: cargo names them by line,
    // and an example whose line moved is not gone.
    let mut new_items: HashMap<String, usize> = HashMap::new();
    for n in ledger.now.iter().chain(ledger.ignored_now) {
        let item = crate::ledger::comparable(n);
        if !base.contains(n) && &item != n {
            *new_items.entry(item).or_default() += 1;
        }
    }
    let mut seen = HashSet::new();
    for name in ledger.at_base {
        if now.contains(name) || ignored_now.contains(name) || !seen.insert(name) {
            continue;
        }
        let moved = new_items
            .get_mut(&crate::ledger::comparable(name))
            .filter(|c| **c > 0);
        if let Some(c) = moved {
            *c -= 1;
            continue;
        }
        let leaf = ledger_leaf(name);
        if removed_static.contains(leaf) {
            continue;
        }
        if let Some(c) = new_leaves.get_mut(leaf).filter(|c| **c > 0) {
            *c -= 1;
            continue;
        }
        let item = crate::ledger::comparable(name);
        let msg = if &item != name {
            format!(
                "the doc example `{}` at the base is gone: the example was deleted, or its item renamed or removed (examples are matched by item, never by line)",
                short(name)
            )
        } else {
            format!(
                "the test runner listed `{}` at the base and does not list it now",
                short(name)
            )
        };
        out.push(Finding {
            issue: Issue::new(RULE_REMOVED, Severity::Error, msg),
            tests: vec![(name.clone(), leaf.to_string())],
            paths: Vec::new(),
        });
    }
    for name in ledger.ignored_now {
        if ignored_base.contains(name) || skipped_static.contains(ledger_leaf(name)) {
            continue;
        }
        let (severity, msg) = if base.contains(name) {
            (
                Severity::Error,
                format!(
                    "the test runner now lists `{}` as ignored; it ran at the base",
                    short(name)
                ),
            )
        } else {
            (
                Severity::Warning,
                format!(
                    "the test runner lists new test `{}` as ignored",
                    short(name)
                ),
            )
        };
        out.push(Finding {
            issue: Issue::new(RULE_SKIP, severity, msg),
            tests: vec![(name.clone(), ledger_leaf(name).to_string())],
            paths: Vec::new(),
        });
    }
}
