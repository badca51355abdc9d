//! Mutated-expectation canaries: copies of the base's own tests, each with
//! one assertion changed so that it must fail on correct code (an expected
//! literal made another value, or the comparison inverted), run in canary
//! runs after the base-tests run. A mutated test keeps its name, file and
//! shape, so code in the test process cannot tell it from the real one by
//! what it is called or where it is. The tests are split at random per
//! run into two rounds, one canary run each: every test that can be
//! mutated is mutated in one round and left as it is in the other, so the
//! set of failures tells nothing, and a value that compares equal to
//! anything is caught wherever it is.
//!
//! What each canary run must show, for the results of the first to count:
//! - every mutated copy of a test that passed in the first run fails (a
//!   mutated copy that passes means the results are not the runner's, or
//!   the value under test compares equal to anything);
//! - every test left as it was passes, as it did in the first run;
//! - the run exits non-zero (it has failures).
//!
//! Anything else is `test-run/forged`, an error: the run's results are
//! void. What the mutation does is `test_integrity::mutate`; this module
//! plans which tests to mutate, names them as the runner does, and judges
//! each canary run.

use rascal_core::model::verdict::{Issue, Severity};
use rascal_core::text::{first_of, plural};
use rascal_scan::ledger::Runner;
use rascal_scan::test_integrity::{self, Mutant};

/// Rule: the canary run contradicts the results of the base-tests run.
pub const RULE_FORGED: &str = "test-run/forged";

/// At most this many tests are mutated in one canary run.
const MAX_MUTANTS: usize = 64;

/// How the runner names a test of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming<'a> {
    /// A runner rascal reads (its listing's names).
    Known(Runner),
    /// A JUnit results file (`classname::name`).
    Junit,
    /// `go test`: `<import path>.TestX`, the import path being the
    /// module's (`module` in its `go.mod`, at `root` from the repository's
    /// root, "" for the root itself) joined with the file's directory.
    Go { module: &'a str, root: &'a str },
}

/// The module path a `go.mod`'s text declares (`module example.com/m`,
/// quoted or not).
pub fn go_module(go_mod: &str) -> Option<&str> {
    go_mod.lines().find_map(|l| {
        let l = l.split("//").next().unwrap_or("").trim();
        let m = l.strip_prefix("module")?;
        if !m.starts_with(char::is_whitespace) && !m.starts_with('"') {
            return None;
        }
        let m = m.trim().trim_matches(|c| c == '"' || c == '`');
        (!m.is_empty()).then_some(m)
    })
}

/// A test to mutate: where it is, what changed, and the names the runner
/// gives it (several for a parametrised test).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub path: String,
    pub mutant: Mutant,
    pub names: Vec<String>,
}

/// Dots for every separator a runner puts between the parts of a name.
fn dotted(s: &str) -> String {
    s.replace("::", ".").replace('/', ".")
}

/// The name without a parameter suffix (`test_x[1-2]` → `test_x`,
/// `sums(int[])[1]` → `sums(int[])`): up to the `[` the last `]` closes.
fn unparametrised(s: &str) -> &str {
    let Some(body) = s.strip_suffix(']') else {
        return s;
    };
    let mut depth = 0usize;
    for (i, c) in body.char_indices().rev() {
        match c {
            ']' => depth += 1,
            '[' if depth == 0 => return &s[..i],
            '[' => depth -= 1,
            _ => {}
        }
    }
    s
}

/// Whether the runner's `name` is test `inner` (its name within the file)
/// of file `path` (from the repository's root).
pub fn names_test(naming: Naming<'_>, name: &str, path: &str, inner: &str) -> bool {
    let module = path.strip_suffix(".py").unwrap_or(path);
    match naming {
        Naming::Known(Runner::Cargo) => {
            let test = name.rsplit_once(' ').map_or(name, |(_, t)| t);
            if test != inner {
                return false;
            }
            // The target: a file under `tests/` is its own binary; one
            // under `src/` is in the library's or a binary's.
            let label = name.rsplit_once(' ').map(|(l, _)| l);
            let target = label.and_then(|l| l.split_once(':')).map(|(_, p)| p);
            match (
                target,
                path.rsplit_once("/tests/")
                    .or_else(|| path.strip_prefix("tests/").map(|r| ("", r))),
            ) {
                (Some(t), Some((_, file))) => t == format!("tests/{file}"),
                (Some(t), None) => t.starts_with("src/"),
                (None, _) => true,
            }
        }
        Naming::Known(Runner::Pytest) => {
            let Some((file, rest)) = name.split_once("::") else {
                return false;
            };
            unparametrised(rest) == inner && (path == file || path.ends_with(&format!("/{file}")))
        }
        Naming::Known(Runner::Unittest) => {
            let inner = dotted(inner);
            let Some(module_of_name) = name.strip_suffix(&format!(".{inner}")) else {
                return false;
            };
            let file = dotted(module);
            file == module_of_name || file.ends_with(&format!(".{module_of_name}"))
        }
        Naming::Go { module, root } => {
            let Some(pkg) = name.strip_suffix(&format!(".{inner}")) else {
                return false;
            };
            let rel = match root {
                "" => Some(path),
                r => path.strip_prefix(&format!("{}/", r.trim_end_matches('/'))),
            };
            match rel.map(|r| r.rsplit_once('/').map(|(d, _)| d)) {
                Some(Some(d)) => pkg == format!("{module}/{d}"),
                Some(None) => pkg == module,
                None => false,
            }
        }
        Naming::Known(Runner::Jest | Runner::Vitest) => {
            // `file > group… > title`, the file as the runner names it
            // (relative to where it runs).
            let Some(file) = name.strip_suffix(&format!(" > {inner}")) else {
                return false;
            };
            !file.contains(" > ") && (path == file || path.ends_with(&format!("/{file}")))
        }
        Naming::Known(_) => false,
        Naming::Junit => {
            let java = path.ends_with(".java");
            let module = path.strip_suffix(".java").unwrap_or(module);
            // JUnit 5 names a Java method with its parameter types
            // (`adds()`, `pos(int)[1]`) and a nested class with a `$`.
            let name = unparametrised(name);
            let name = match name.strip_suffix(')').and_then(|n| n.rsplit_once('(')) {
                Some((n, _)) if java => n,
                _ => name,
            };
            let n = if java {
                dotted(&name.replace('$', "."))
            } else {
                dotted(name)
            };
            let inner = dotted(inner);
            let stem = module.rsplit('/').next().unwrap_or(module);
            let ends = n == inner || n.ends_with(&format!(".{inner}"));
            // A Python file's module and a Java file's class are in the
            // class name; a Rust file's binary may be named anything.
            let named = !(path.ends_with(".py") || java) || n.split('.').any(|p| p == stem);
            ends && named
        }
    }
}

/// A random draw for test `name` in a run whose mark is `nonce`: true for
/// about half of them.
fn drawn(nonce: &str, name: &str) -> bool {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (nonce, name).hash(&mut h);
    h.finish() & 1 == 1
}

/// A number from the run's mark, for the mutator's choice of assertion.
pub fn seed(nonce: &str) -> u64 {
    u64::from_str_radix(nonce.get(..16).unwrap_or(nonce), 16).unwrap_or(0x5eed)
}

/// Which tests of `files` (path, text as the base-tests copy has it) to
/// mutate, in rounds of one canary run each: the tests the mutator can
/// change whose runner names are all among `passed` (they passed in the
/// base-tests run) — or, for a runner that lists only files, the tests of
/// the `passed_files`, named from file and title — and name no other test — about half of them, drawn at
/// random by `nonce` (at least one when any can be), in the first round,
/// and the rest in the second. Every such test is mutated in one round and
/// left as it is in the other, so a value that compares equal to
/// anything is caught whichever test it is in, and code that tells a
/// canary run from the real one still cannot tell which of its tests
/// must fail. Empty when none can be.
pub fn plan(
    naming: Naming<'_>,
    files: &[(String, String)],
    passed: &[String],
    passed_files: Option<&[String]>,
    nonce: &str,
) -> Vec<Vec<Planned>> {
    let seed = seed(nonce);
    let mut all: Vec<Planned> = Vec::new();
    for (path, text) in files {
        let Some(m) = test_integrity::mutate(path, text, &|_| true, seed) else {
            continue;
        };
        for mutant in m.mutants {
            let names: Vec<String> = match passed_files {
                // The runner lists files only (jest): a mutated test of a
                // file that passed is named as the runner names it, from
                // its file and title — never only from the results the
                // code under test could have written, which might leave
                // it out.
                Some(files) => files
                    .iter()
                    .filter(|f| path == *f || path.ends_with(&format!("/{f}")))
                    .map(|f| format!("{f} > {}", mutant.test))
                    .collect(),
                None => passed
                    .iter()
                    .filter(|n| names_test(naming, n, path, &mutant.test))
                    .cloned()
                    .collect(),
            };
            if !names.is_empty() {
                all.push(Planned {
                    path: path.clone(),
                    mutant,
                    names,
                });
            }
        }
    }
    // A runner name two tests answer to would judge either by the other.
    let shared: std::collections::HashSet<String> = {
        let mut seen = std::collections::HashSet::new();
        all.iter()
            .flat_map(|p| p.names.iter())
            .filter(|n| !seen.insert(n.to_string()))
            .cloned()
            .collect()
    };
    all.retain(|p| !p.names.iter().any(|n| shared.contains(n)));
    if all.is_empty() {
        return Vec::new();
    }
    let (mut first, mut rest): (Vec<Planned>, Vec<Planned>) = all
        .into_iter()
        .partition(|p| drawn(nonce, &format!("{}\n{}", p.path, p.mutant.test)));
    if first.is_empty() {
        let at = (seed as usize) % rest.len();
        first.push(rest.remove(at));
    }
    first.truncate(MAX_MUTANTS);
    rest.truncate(MAX_MUTANTS);
    [first, rest]
        .into_iter()
        .filter(|r| !r.is_empty())
        .collect()
}

/// The text of file `path` with the planned mutants of it made (None when
/// none is in it).
pub fn mutated(planned: &[Planned], path: &str, text: &str, nonce: &str) -> Option<String> {
    let tests: Vec<&str> = planned
        .iter()
        .filter(|p| p.path == path)
        .map(|p| p.mutant.test.as_str())
        .collect();
    if tests.is_empty() {
        return None;
    }
    test_integrity::mutate(path, text, &|t| tests.contains(&t), seed(nonce)).map(|m| m.text)
}

/// The texts of `files` (path, text) for one canary round: each file with
/// `planned`'s mutants of it made, or as it is (so a file mutated in the
/// other round is laid back whole).
pub fn round<'a>(
    planned: &'a [Planned],
    files: &'a [(String, String)],
    nonce: &'a str,
) -> impl Iterator<Item = (&'a str, String)> + 'a {
    files.iter().map(move |(path, text)| {
        let m = mutated(planned, path, text, nonce);
        (path.as_str(), m.unwrap_or_else(|| text.clone()))
    })
}

/// How many mutated tests failed as they must across the canary `rounds`
/// (none are counted when any round found the results `forged`).
pub fn failed_as_they_must(rounds: &[Vec<Planned>], forged: &[Issue]) -> usize {
    if forged.is_empty() {
        rounds.iter().map(Vec::len).sum()
    } else {
        0
    }
}

/// How one test came out of the canary run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    Failed,
    NoResult,
}

/// What the canary run says of the base-tests run: `planned` mutants
/// must fail, the tests that `passed` there and were left as they were
/// must pass, and the run (`exited_ok`) must not exit 0. `outcome` gives
/// each name's result in the canary run.
pub fn verdict(
    planned: &[Planned],
    passed: &[String],
    outcome: &dyn Fn(&str) -> Outcome,
    exited_ok: bool,
) -> Vec<Issue> {
    let mut out = Vec::new();
    let issue = |what: String| {
        Issue::new(
            RULE_FORGED,
            Severity::Error,
            format!("results forged: {what} — the base-tests run's results are void"),
        )
    };
    for p in planned {
        let m = &p.mutant;
        let bad = p.names.iter().find_map(|n| match outcome(n) {
            Outcome::Failed => None,
            o => Some((n, o)),
        });
        if let Some((n, o)) = bad {
            let said = if o == Outcome::Passed {
                "passed"
            } else {
                "has no result"
            };
            out.push(issue(format!(
                "a mutated copy of `{n}` {said} ({}, {}:{}): with that assertion changed the test must fail — the results are not the runner's, or the value it checks compares equal to anything",
                m.how, p.path, m.line
            )));
        }
    }
    let mutated: std::collections::HashSet<&str> = planned
        .iter()
        .flat_map(|p| p.names.iter().map(String::as_str))
        .collect();
    let changed: Vec<String> = passed
        .iter()
        .filter(|n| !mutated.contains(n.as_str()) && outcome(n) != Outcome::Passed)
        .cloned()
        .collect();
    if !changed.is_empty() {
        out.push(issue(format!(
            "{} passed in the base-tests run but did not pass, unchanged, in a canary run where other tests were mutated: {} — results that depend on which other tests fail are not the runner's (or the tests are flaky)",
            plural(changed.len() as u64, "test"),
            first_of(&changed, 5)
        )));
    }
    if exited_ok && !planned.is_empty() {
        out.push(issue(format!(
            "a canary run exited 0 although {} in it must fail",
            plural(planned.len() as u64, "mutated test")
        )));
    }
    out
}

#[cfg(test)]
mod tests;
