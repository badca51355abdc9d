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

use crate::layers::test_results::Whole;
use rascal_core::model::verdict::{Issue, Severity};
use rascal_scan::ledger::{self, Listing, Runner};

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

/// Whether the base's file at `path` may hold a canary for `runner` (the
/// candidates the pipeline reads from the base's tree): for cargo every
/// package's `src/lib.rs`, `src/main.rs` and `tests/*.rs`; for Go every
/// `_test.go` (one a directory is taken, see [`plan`]).
pub fn may_hold(runner: Runner, path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let parent = path
        .strip_suffix(name)
        .map(|d| d.trim_end_matches('/'))
        .unwrap_or("");
    // Vendored crates (`cargo vendor` checks their files' checksums) and
    // third-party trees are not the project's tests.
    let vendored = path.split('/').any(|d| d == "vendor" || d == "third_party");
    match runner {
        _ if vendored => false,
        Runner::Cargo => {
            path == "src/lib.rs"
                || path == "src/main.rs"
                || path.ends_with("/src/lib.rs")
                || path.ends_with("/src/main.rs")
                || (name.ends_with(".rs") && (parent == "tests" || parent.ends_with("/tests")))
        }
        Runner::Go => name.ends_with("_test.go"),
        _ => false,
    }
}

/// The directory `python -m unittest` names modules from, when not the
/// one it runs in: `-t DIR`, else `discover`'s `-s DIR` (or its first
/// positional argument).
fn unittest_top(args: &[String]) -> Option<String> {
    let value = |short: &str, long: &str| {
        args.iter().enumerate().find_map(|(i, a)| {
            if a == short || a == long {
                args.get(i + 1).cloned()
            } else {
                a.strip_prefix(&format!("{long}="))
                    .or_else(|| a.strip_prefix(short).filter(|r| !r.is_empty()))
                    .map(str::to_string)
            }
        })
    };
    if let Some(t) = value("-t", "--top-level-directory") {
        return Some(t).filter(|t| t != ".");
    }
    if args.first().map(String::as_str) != Some("discover") {
        return None;
    }
    // `discover [start [pattern [top]]]`: positional words that are not
    // an option's value.
    let takes_value = [
        "-s",
        "-p",
        "-t",
        "-k",
        "--start-directory",
        "--pattern",
        "--top-level-directory",
    ];
    let positional = args
        .iter()
        .enumerate()
        .skip(1)
        .find(|(i, a)| !a.starts_with('-') && !takes_value.contains(&args[i - 1].as_str()))
        .map(|(_, a)| a.clone());
    let start = value("-s", "--start-directory").or(positional);
    start.filter(|s| s != ".")
}

/// At most this many canaries in one copy.
const MAX_CANARIES: usize = 32;

/// The canaries for `runner` whose base lists `at_base` (its names as the
/// runner gives them; `dir` the runner's `cd` directory): none where
/// rascal plants none. `exists` says whether the copy has a file;
/// `base_files` are the base's files that [`may_hold`] one (for Go, only
/// those that [`go_file_fits`]); `args` the runner's arguments. Each
/// canary's mark is `nonce` and its number.
pub fn plan(
    runner: Runner,
    at_base: &Listing,
    dir: Option<&str>,
    nonce: &str,
    exists: &dyn Fn(&str) -> bool,
    base_files: &[String],
    args: &[String],
) -> Vec<Canary> {
    let under = |p: &str| match dir {
        Some(d) => format!("{}/{p}", d.trim_end_matches('/')),
        None => p.to_string(),
    };
    let mark = |i: usize| format!("{nonce}{i:02x}");
    // (file, what is appended, its mark)
    let placed: Vec<(String, String, String)> = match runner {
        Runner::Cargo => base_files
            .iter()
            .filter(|p| dir.is_none_or(|d| p.starts_with(&format!("{}/", d.trim_end_matches('/')))))
            .take(MAX_CANARIES)
            .enumerate()
            .map(|(i, p)| {
                let m = mark(i);
                let text = format!(
                    "\n#[cfg(test)]\nmod t_{m} {{\n    #[test]\n    fn t_{m}() {{\n        assert_eq!(0, 1, \"{m}\");\n    }}\n}}\n"
                );
                (p.clone(), text, m)
            })
            .collect(),
        Runner::Go => {
            let mut dirs = std::collections::HashSet::new();
            base_files
                .iter()
                .filter(|p| dirs.insert(p.rsplit_once('/').map_or("", |(d, _)| d).to_string()))
                .take(MAX_CANARIES)
                .enumerate()
                .map(|(i, p)| {
                    let m = mark(i);
                    let text = format!("\nfunc Test_{m}(t *testing.T) {{\n\tt.Fatal(\"{m}\")\n}}\n");
                    (p.clone(), text, m)
                })
                .collect()
        }
        Runner::Pytest => {
            // A test function of a test file (a doctest's name is dotted).
            let first = at_base.tests.iter().find(|t| {
                let last = t.rsplit("::").next().unwrap_or(t);
                let last = last.split('[').next().unwrap_or(last);
                t.contains("::") && !last.contains('.')
            });
            let (file, function) = match (first, at_base.files_only) {
                (Some(t), false) => {
                    let last = t.rsplit("::").next().unwrap_or(t);
                    (
                        t.split("::").next().unwrap_or(t).to_string(),
                        last.split('[').next().unwrap_or(last).to_string(),
                    )
                }
                (_, true) => match at_base.tests.first() {
                    Some(f) => (f.split("::").next().unwrap_or(f).to_string(), "test".into()),
                    None => return Vec::new(),
                },
                (None, false) => return Vec::new(),
            };
            let m = mark(0);
            let text = format!("\n\ndef {function}_{m}():\n    assert 0 == 1, \"{m}\"\n");
            vec![(under(&file), text, m)]
        }
        Runner::Unittest => {
            // `module.Class.method` → `module.py`, from the top directory
            // (`discover -s DIR` without `-t`: DIR).
            let Some(first) = at_base.tests.first() else {
                return Vec::new();
            };
            let parts: Vec<&str> = first.split('.').collect();
            if parts.len() < 3 {
                return Vec::new();
            }
            let module = format!("{}.py", parts[..parts.len() - 2].join("/"));
            let file = match unittest_top(args) {
                Some(top) => format!("{}/{module}", top.trim_end_matches('/')),
                None => module,
            };
            let m = mark(0);
            let text = format!(
                "\n\nimport unittest as _u{m}\n\n\nclass T{m}(_u{m}.TestCase):\n    def test_{m}(self):\n        self.assertEqual(0, 1, \"{m}\")\n"
            );
            vec![(under(&file), text, m)]
        }
        Runner::Jest | Runner::Vitest => Vec::new(),
    };
    placed
        .into_iter()
        .filter(|(p, _, _)| exists(p))
        .map(|(path, text, nonce)| Canary { nonce, path, text })
        .collect()
}

/// What the run `run` of a copy holding the canaries `cs` says of them,
/// whose runner listed `listed` there: None when the runner lists none of
/// them (they prove nothing), or reported every one it lists failing in a
/// run that exited non-zero; else the `test-run/canary` error.
pub fn verdict(cs: &[Canary], runner: Runner, listed: &Listing, run: &Whole) -> Option<Issue> {
    let listed_ones: Vec<&Canary> = cs
        .iter()
        .filter(|c| listed.tests.iter().any(|n| n.contains(&c.nonce)))
        .collect();
    if listed_ones.is_empty() {
        return None;
    }
    let file = run
        .files
        .first()
        .and_then(|f| f.as_ref())
        .map(|b| String::from_utf8_lossy(b).into_owned());
    let reported = ledger::parse_results(runner, &run.text, file.as_deref(), None);
    let about = |names: &[String], c: &Canary| names.iter().any(|n| n.contains(&c.nonce));
    let what = if let Some(c) = listed_ones.iter().find(|c| about(&reported.passed, c)) {
        format!("in `{}` was reported passing", c.path)
    } else if let Some(c) = listed_ones.iter().find(|c| !about(&reported.failed, c)) {
        format!("in `{}` has no result", c.path)
    } else if run.outcome.exit.success() {
        "was reported failing, but the run exited 0".to_string()
    } else {
        return None;
    };
    Some(Issue::new(
        RULE_CANARY,
        Severity::Error,
        format!(
            "rascal's canary — a test it wrote into the base-tests copy that always fails — {what}: the results are not the runner's (code in the test process decided them)"
        ),
    ))
}

#[cfg(test)]
mod plan_tests;

#[cfg(test)]
mod verdict_tests;

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

    fn all(_: &str) -> bool {
        true
    }

    fn files(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// The canaries `runner` plants with nonce `ab12` and no arguments.
    fn at(
        runner: Runner,
        names: &[&str],
        dir: Option<&str>,
        exists: &dyn Fn(&str) -> bool,
        base: &[String],
    ) -> Vec<Canary> {
        plan(runner, &listing(names), dir, "ab12", exists, base, &[])
    }

    #[test]
    fn cargo_plants_its_canaries_in_crate_roots_and_test_files() {
        let rust = files(&["src/lib.rs", "tests/it.rs", "core/src/lib.rs"]);
        let cs = at(
            Runner::Cargo,
            &["calc:src/lib.rs tests::adds"],
            None,
            &all,
            &rust,
        );
        let paths: Vec<&str> = cs.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["src/lib.rs", "tests/it.rs", "core/src/lib.rs"]);
        assert!(cs[1].text.contains("mod t_ab1201 {"), "{}", cs[1].text);
        assert_eq!(cs[1].nonce, "ab1201");
        assert!(!cs[0].text.contains("rascal"), "{}", cs[0].text);
        let only = |p: &str| p == "app/src/main.rs";
        let cs = at(
            Runner::Cargo,
            &[],
            Some("app"),
            &only,
            &files(&["app/src/main.rs", "src/lib.rs"]),
        );
        assert_eq!(cs.len(), 1);
        assert_eq!(cs[0].path, "app/src/main.rs");
        assert!(at(Runner::Cargo, &[], None, &|_| false, &rust).is_empty());
    }

    #[test]
    fn python_runners_plant_their_canaries_in_test_files() {
        // A doctest's name is dotted: the canary goes to a test file.
        let cs = at(
            Runner::Pytest,
            &["calc.py::calc.add", "tests/check_calc.py::check_adds[1.5]"],
            None,
            &all,
            &[],
        );
        assert_eq!(cs[0].path, "tests/check_calc.py");
        assert!(
            cs[0].text.contains("def check_adds_ab1200():"),
            "{}",
            cs[0].text
        );
        let cs = at(
            Runner::Unittest,
            &["tests.test_calc.TestAdd.test_adds"],
            None,
            &all,
            &[],
        );
        assert_eq!(cs[0].path, "tests/test_calc.py");
        assert!(cs[0].text.contains("class Tab1200("), "{}", cs[0].text);
        assert_eq!(cs[0].appended_to("x = 1"), format!("x = 1\n{}", cs[0].text));
    }

    #[test]
    fn unittest_plants_its_canary_where_its_discovery_looks() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        for (a, path) in [
            (args(&["discover", "-s", "tests"]), "tests/test_calc.py"),
            (args(&["discover", "tests"]), "tests/test_calc.py"),
            (args(&["discover", "-p", "test_*.py"]), "test_calc.py"),
            (
                args(&["discover", "-s", "tests", "-t", "."]),
                "test_calc.py",
            ),
            (args(&["test_calc"]), "test_calc.py"),
        ] {
            let cs = plan(
                Runner::Unittest,
                &listing(&["test_calc.TestAdd.test_adds"]),
                None,
                "ab12",
                &all,
                &[],
                &a,
            );
            assert_eq!(cs[0].path, path, "{a:?}");
        }
    }

    #[test]
    fn go_plants_its_canaries_in_test_files_that_import_testing() {
        let go = files(&["calc_test.go", "more_test.go", "mul/mul_test.go"]);
        let cs = at(Runner::Go, &["calc.TestAdd"], None, &all, &go);
        let paths: Vec<&str> = cs.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["calc_test.go", "mul/mul_test.go"]);
        assert!(
            cs[1].text.contains("func Test_ab1201(t *testing.T) {"),
            "{}",
            cs[1].text
        );
        assert!(at(Runner::Jest, &["a.test.js"], None, &all, &[]).is_empty());
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
    fn only_files_a_runner_compiles_as_tests_may_hold_a_canary() {
        for (runner, path, holds) in [
            (Runner::Cargo, "src/lib.rs", true),
            (Runner::Cargo, "crates/a/src/main.rs", true),
            (Runner::Cargo, "crates/a/tests/it.rs", true),
            (Runner::Cargo, "tests/common/mod.rs", false),
            (Runner::Cargo, "src/util.rs", false),
            (Runner::Cargo, "vendor/regex/src/lib.rs", false),
            (Runner::Go, "mul/mul_test.go", true),
            (Runner::Go, "mul/mul.go", false),
            (Runner::Pytest, "test_x.py", false),
        ] {
            assert_eq!(may_hold(runner, path), holds, "{path}");
        }
    }

    #[test]
    fn nonces_differ() {
        assert_ne!(nonce(), nonce());
    }
}
