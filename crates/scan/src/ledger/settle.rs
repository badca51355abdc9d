//! Cross-checking what a run reported against the listing: each reported
//! name counts as often as the listing names it (its worst outcomes), a
//! name the listing lacks is unlisted, and the names are written as the
//! listing writes them.

use super::{cargo, comparable, listing_key, Listing, Outcome, Results, Runner};
use std::collections::HashMap;

/// Cross-checks reported outcomes against the listing and sorts them into
/// `results`. A name listed n times keeps its n worst outcomes (a forged
/// `ok` cannot hide a real `FAILED`); a name not listed is `unlisted`
/// (except a skipped one when the runner's listing leaves skipped tests
/// out, as vitest's does).
pub(super) fn settle(
    runner: Runner,
    reported: Vec<(String, Outcome)>,
    listing: Option<&Listing>,
    results: &mut Results,
) {
    // An empty listing that did not finish is no listing at all.
    let listing = listing.filter(|l| l.complete || !l.tests.is_empty());
    if listing.is_some_and(|l| !l.complete && !l.files_only) {
        results
            .notes
            .push("the listing was incomplete: results were checked against what it had".into());
    }
    let files_only = listing.is_some_and(|l| l.files_only);
    let listed = listed_counts(listing);
    // Subtests and files group many results under one listed key.
    let per_key = matches!(runner, Runner::Go) || files_only;
    let (order, mut by_name) = grouped(reported);
    let mut moved = moved_doc_tests(runner, listing, &order, &listed);
    for reported_name in order {
        let mut outcomes = by_name.remove(&reported_name).unwrap_or_default();
        outcomes.sort_by(|a, b| b.cmp(a));
        let (name, allowed) = match listing {
            None if per_key || runner != Runner::Cargo => (reported_name, 1),
            None => {
                let n = outcomes.len();
                (reported_name, n)
            }
            Some(_) => {
                let key = listing_key(runner, &reported_name, files_only);
                let (n, name) = listed_as(runner, reported_name, &key, &listed, &mut moved);
                (name, if per_key { n.min(1) } else { n })
            }
        };
        record(runner, name, outcomes, allowed, results);
    }
    let counted = results.passed.len() + results.failed.len() + results.ignored.len();
    if counted == 0 && !results.unlisted.is_empty() {
        results.notes.push(
            "no reported name is in the listing: the two were not read from the same kind of \
             output (for cargo, stdout and stderr together)"
                .into(),
        );
    }
}

/// How many times the listing names each test.
fn listed_counts(listing: Option<&Listing>) -> HashMap<&str, usize> {
    let mut listed: HashMap<&str, usize> = HashMap::new();
    if let Some(l) = listing {
        for t in &l.tests {
            *listed.entry(t.as_str()).or_default() += 1;
        }
    }
    listed
}

/// The reported names in the order first reported, and each one's
/// outcomes.
fn grouped(reported: Vec<(String, Outcome)>) -> (Vec<String>, HashMap<String, Vec<Outcome>>) {
    let mut order: Vec<String> = Vec::new();
    let mut by_name: HashMap<String, Vec<Outcome>> = HashMap::new();
    for (name, outcome) in reported {
        let seen = by_name.entry(name.clone()).or_default();
        if seen.is_empty() {
            order.push(name);
        }
        seen.push(outcome);
    }
    (order, by_name)
}

/// A cargo doc test whose line moved since the listing (the base's,
/// judging a copy where lines above an example shifted) is matched by
/// its item: as many as the listing has of that item and no more, so a
/// printed line cannot add one. By item, how many listed doc tests no
/// reported name matched as listed.
fn moved_doc_tests(
    runner: Runner,
    listing: Option<&Listing>,
    order: &[String],
    listed: &HashMap<&str, usize>,
) -> HashMap<String, usize> {
    let mut moved: HashMap<String, usize> = HashMap::new();
    if let (Runner::Cargo, Some(l)) = (runner, listing) {
        for t in l.tests.iter().filter(|t| cargo::doc_line(t).is_some()) {
            *moved.entry(comparable(t)).or_default() += 1;
        }
        for name in order.iter().filter(|n| listed.contains_key(n.as_str())) {
            if let Some(left) = moved.get_mut(&comparable(name)) {
                *left = left.saturating_sub(1);
            }
        }
    }
    moved
}

/// How many times the listing names the test reported as `name` (looked
/// up by `key`: as listed, as a moved doc test of a listed item, or by a
/// tail of its path), and the name as the listing names it: a path
/// relative to the runner's directory rather than this copy's absolute
/// one.
fn listed_as(
    runner: Runner,
    name: String,
    key: &str,
    listed: &HashMap<&str, usize>,
    moved: &mut HashMap<String, usize>,
) -> (usize, String) {
    let item = moved
        .get_mut(&comparable(key))
        .filter(|left| **left > 0 && cargo::doc_line(key).is_some());
    let (n, relative) = match (listed.get(key), item) {
        (Some(n), _) => (*n, None),
        (None, Some(left)) => {
            *left -= 1;
            (1, None)
        }
        (None, None) => js_suffix_match(runner, key, listed),
    };
    match relative {
        Some(prefix_len) => (n, name[prefix_len..].to_string()),
        None => (n, name),
    }
}

/// Sort one name's outcomes (worst first) into `results`: its `allowed`
/// worst outcomes count; with none allowed it is unlisted (or ignored,
/// when vitest only skipped it).
fn record(
    runner: Runner,
    name: String,
    outcomes: Vec<Outcome>,
    allowed: usize,
    results: &mut Results,
) {
    if allowed == 0 {
        let skipped_only = outcomes.iter().all(|o| *o == Outcome::Ignored);
        if skipped_only && runner == Runner::Vitest {
            results.ignored.push(name);
        } else {
            results.unlisted.push(name);
        }
        return;
    }
    if outcomes.len() > allowed {
        results.notes.push(format!(
            "{name}: reported {} times, listed {allowed}; the worst outcomes count",
            outcomes.len()
        ));
    }
    for o in outcomes.into_iter().take(allowed) {
        match o {
            Outcome::Passed => results.passed.push(name.clone()),
            Outcome::Failed => results.failed.push(name.clone()),
            Outcome::Ignored => results.ignored.push(name.clone()),
        }
    }
}

/// jest and vitest report absolute paths; a listing made relative with
/// [`Listing::relative_to`] (or made in another copy) names the same file
/// by a tail of that path. The count listed and how many bytes of the
/// reported key to drop.
fn js_suffix_match(
    runner: Runner,
    key: &str,
    listed: &HashMap<&str, usize>,
) -> (usize, Option<usize>) {
    if !matches!(runner, Runner::Jest | Runner::Vitest) || !key.starts_with('/') {
        return (0, None);
    }
    let file_end = key.find(" > ").unwrap_or(key.len());
    for (i, _) in key[..file_end].match_indices('/') {
        if let Some(n) = listed.get(&key[i + 1..]) {
            return (*n, Some(i + 1));
        }
    }
    (0, None)
}
