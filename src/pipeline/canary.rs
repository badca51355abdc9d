//! A canary in the base-tests run: a test rascal writes into the copy, with
//! a name nobody could know in advance, that always fails. The code under
//! test runs in the runner's own process, so it can print a runner's
//! result lines, end the process with status 0 or patch the runner's
//! reports — and then every test "passes", the base's among them. It
//! cannot do that and still report the canary's failure without knowing
//! it is there: if the runner lists the canary, its result must be a
//! failure and the run must exit non-zero; a canary that passed, that has
//! no result, or a run that exited 0 with it failed is `test-run/canary`,
//! an error. A canary the runner does not list (a filter in the command,
//! a crate without `src/lib.rs`) proves nothing and says nothing.
//!
//! Where it goes: Rust, a `#[cfg(test)]` module at the end of the root
//! package's `src/lib.rs` (else `src/main.rs`), in the same test binary as
//! the library's own tests; pytest, a function named after a test of the
//! base's first test file, in that file (so it matches the project's
//! `python_functions`); unittest, a `TestCase` in the file of the base's
//! first test. Go and JavaScript get none.

use crate::layers::ledger::{self, Listing, Runner};
use crate::layers::test_results::Whole;
use crate::model::verdict::{Issue, Severity};

/// Rule: the canary was not reported failing.
pub const RULE_CANARY: &str = "test-run/canary";

/// A canary to plant: what it adds to which file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canary {
    /// The mark in its name (and message): random per run.
    pub nonce: String,
    /// The file it is appended to, from the repository's root.
    pub path: String,
    /// What is appended.
    pub text: String,
}

impl Canary {
    /// `text` (the file as the copy has it) with the canary after it.
    pub fn appended_to(&self, text: &str) -> String {
        let sep = if text.ends_with('\n') || text.is_empty() {
            ""
        } else {
            "\n"
        };
        format!("{text}{sep}{}", self.text)
    }
}

/// A fresh random mark (16 hex digits).
pub fn nonce() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    format!("{:016x}", h.finish())
}

/// Whether a Go test file takes a canary as written: it imports
/// `testing` under its own name.
pub fn go_file_fits(text: &str) -> bool {
    text.lines().any(|l| {
        let t = l.trim();
        t == "\"testing\"" || t == "import \"testing\""
    }) && text.contains("*testing.T)")
}

/// The canary for `runner` whose base lists `at_base` (its names as the
/// runner gives them; `dir` the runner's `cd` directory), or None where
/// rascal plants none. `exists` says whether the copy has a file;
/// `go_file` is a test file of the base that [`go_file_fits`].
pub fn plan(
    runner: Runner,
    at_base: &Listing,
    dir: Option<&str>,
    nonce: &str,
    exists: &dyn Fn(&str) -> bool,
    go_file: Option<String>,
) -> Option<Canary> {
    let under = |p: &str| match dir {
        Some(d) => format!("{}/{p}", d.trim_end_matches('/')),
        None => p.to_string(),
    };
    let (path, text) = match runner {
        Runner::Cargo => {
            let path = ["src/lib.rs", "src/main.rs"]
                .into_iter()
                .map(under)
                .find(|p| exists(p))?;
            let text = format!(
                "\n#[cfg(test)]\nmod rascal_canary_{nonce} {{\n    #[test]\n    fn canary() {{\n        assert_eq!(0, 1, \"rascal canary {nonce}\");\n    }}\n}}\n"
            );
            (path, text)
        }
        Runner::Pytest => {
            let first = at_base.tests.first()?;
            let file = ledger::test_files(
                runner,
                &Listing {
                    tests: vec![first.clone()],
                    ..at_base.clone()
                },
            )
            .into_iter()
            .next()?;
            let function = if at_base.files_only {
                "test"
            } else {
                let last = first.rsplit("::").next().unwrap_or(first);
                last.split('[').next().unwrap_or(last)
            };
            let text = format!(
                "\n\ndef {function}_rascal_canary_{nonce}():\n    assert 0 == 1, \"rascal canary {nonce}\"\n"
            );
            (under(&file), text)
        }
        Runner::Unittest => {
            // `module.Class.method` → `module.py`.
            let first = at_base.tests.first()?;
            let parts: Vec<&str> = first.split('.').collect();
            if parts.len() < 3 {
                return None;
            }
            let file = format!("{}.py", parts[..parts.len() - 2].join("/"));
            let text = format!(
                "\n\nimport unittest as _rascal_canary_unittest\n\n\nclass RascalCanary{nonce}(_rascal_canary_unittest.TestCase):\n    def test_rascal_canary(self):\n        self.assertEqual(0, 1, \"rascal canary {nonce}\")\n"
            );
            (under(&file), text)
        }
        Runner::Go => {
            let text = format!(
                "\nfunc TestRascalCanary{nonce}(t *testing.T) {{\n\tt.Fatal(\"rascal canary {nonce}\")\n}}\n"
            );
            (go_file?, text)
        }
        Runner::Jest | Runner::Vitest => return None,
    };
    exists(&path).then(|| Canary {
        nonce: nonce.to_string(),
        path,
        text,
    })
}

/// What the run `run` of a copy holding canary `c` says of it, whose
/// runner listed `listed` there: None when the runner does not list the
/// canary (it proves nothing) or reported it failing in a run that exited
/// non-zero; else the `test-run/canary` error.
pub fn verdict(c: &Canary, runner: Runner, listed: &Listing, run: &Whole) -> Option<Issue> {
    let mine = |n: &String| n.contains(&c.nonce);
    if !listed.tests.iter().any(mine) {
        return None;
    }
    let file = run
        .files
        .first()
        .and_then(|f| f.as_ref())
        .map(|b| String::from_utf8_lossy(b).into_owned());
    let reported = ledger::parse_results(runner, &run.text, file.as_deref(), None);
    let what = if reported.failed.iter().any(mine) {
        if !run.outcome.exit.success() {
            return None;
        }
        "was reported failing, but the run exited 0"
    } else if reported.passed.iter().any(mine) {
        "was reported passing"
    } else {
        "has no result"
    };
    Some(Issue::new(
        RULE_CANARY,
        Severity::Error,
        format!(
            "rascal's canary — a test it wrote into the base-tests copy that always fails — {what}: the results are not the runner's (code in the test process decided them)"
        ),
    ))
}

/// `at_base` with the canary's listed name(s) from `listed` left out.
pub fn without(listed: &Listing, c: &Canary) -> Listing {
    Listing {
        tests: listed
            .tests
            .iter()
            .filter(|n| !n.contains(&c.nonce))
            .cloned()
            .collect(),
        ..listed.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(tests: &[&str]) -> Listing {
        Listing {
            tests: tests.iter().map(|s| s.to_string()).collect(),
            complete: true,
            files_only: false,
        }
    }

    #[test]
    fn each_runner_plants_its_canary_where_its_tests_are() {
        let all = |_: &str| true;
        let at = |runner, names: &[&str], dir, exists: &dyn Fn(&str) -> bool, go| {
            plan(runner, &listing(names), dir, "ab12", exists, go)
        };
        let c = at(
            Runner::Cargo,
            &["calc:src/lib.rs tests::adds"],
            None,
            &all,
            None,
        )
        .unwrap();
        assert_eq!(c.path, "src/lib.rs");
        assert!(c.text.contains("mod rascal_canary_ab12 {"), "{}", c.text);
        let only_main = |p: &str| p == "app/src/main.rs";
        let c = at(Runner::Cargo, &[], Some("app"), &only_main, None).unwrap();
        assert_eq!(c.path, "app/src/main.rs");
        assert_eq!(at(Runner::Cargo, &[], None, &|_| false, None), None);
        let c = at(
            Runner::Pytest,
            &["tests/check_calc.py::check_adds[1]"],
            None,
            &all,
            None,
        )
        .unwrap();
        assert_eq!(c.path, "tests/check_calc.py");
        assert!(
            c.text.contains("def check_adds_rascal_canary_ab12():"),
            "{}",
            c.text
        );
        let c = at(
            Runner::Unittest,
            &["tests.test_calc.TestAdd.test_adds"],
            None,
            &all,
            None,
        )
        .unwrap();
        assert_eq!(c.path, "tests/test_calc.py");
        assert!(c.text.contains("class RascalCanaryab12("), "{}", c.text);
        assert_eq!(c.appended_to("x = 1"), format!("x = 1\n{}", c.text));
        assert_eq!(at(Runner::Go, &["calc.TestAdd"], None, &all, None), None);
        let c = at(
            Runner::Go,
            &["calc.TestAdd"],
            None,
            &all,
            Some("calc_test.go".into()),
        )
        .unwrap();
        assert!(
            c.text.contains("func TestRascalCanaryab12(t *testing.T) {"),
            "{}",
            c.text
        );
        assert_eq!(at(Runner::Jest, &["a.test.js"], None, &all, None), None);
        assert!(go_file_fits(
            "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n"
        ));
        assert!(go_file_fits(
            "import (\n\t\"fmt\"\n\t\"testing\"\n)\nfunc TestA(t *testing.T) {}\n"
        ));
        assert!(!go_file_fits(
            "import tt \"testing\"\nfunc TestA(t *tt.T) {}\n"
        ));
    }

    #[test]
    fn nonces_differ() {
        assert_ne!(nonce(), nonce());
    }
}
