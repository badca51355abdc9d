//! `python -m unittest`: the standard library's runner has no listing mode
//! and no results file, so rascal runs it through two small programs of
//! its own, given to the same interpreter with `-c` and the guardrail's
//! arguments (`discover …`, named modules): one that loads the tests exactly
//! as `python -m unittest ARGS` would and prints their ids instead of
//! running them, one that runs them with unittest's own runner and writes
//! each test's outcome to the results file. Ids are unittest's
//! (`tests.test_calc.TestAdd.test_adds`).

use super::{Listing, Outcome, Parsed, Results};

/// Loads the tests as `python -m unittest ARGS` would, prints their ids.
pub(super) const LIST: &str = r#"import sys, unittest
class Lister:
    def __init__(self, *a, **k):
        pass
    def run(self, test):
        def walk(s):
            for t in s:
                if isinstance(t, unittest.TestSuite):
                    walk(t)
                else:
                    print("rascal-unittest:", t.id())
        walk(test)
        print("rascal-unittest-end")
        return unittest.TestResult()
sys.argv = ["python -m unittest"] + sys.argv[1:]
unittest.main(module=None, testRunner=Lister, exit=False)
"#;

/// Runs the tests as `python -m unittest ARGS` would (same output, same
/// exit status) and writes each outcome to the file named first.
pub(super) const RUN: &str = r#"import json, sys, unittest
out = sys.argv[1]
class Result(unittest.TextTestResult):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.seen = []
    def addSuccess(self, t):
        super().addSuccess(t)
        self.seen.append([t.id(), "passed"])
    def addFailure(self, t, e):
        super().addFailure(t, e)
        self.seen.append([t.id(), "failed"])
    def addError(self, t, e):
        super().addError(t, e)
        self.seen.append([t.id(), "failed"])
    def addSkip(self, t, r):
        super().addSkip(t, r)
        self.seen.append([t.id(), "skipped"])
    def addExpectedFailure(self, t, e):
        super().addExpectedFailure(t, e)
        self.seen.append([t.id(), "failed"])
    def addUnexpectedSuccess(self, t):
        super().addUnexpectedSuccess(t)
        self.seen.append([t.id(), "failed"])
    def addSubTest(self, t, st, e):
        super().addSubTest(t, st, e)
        if e is not None:
            self.seen.append([t.id(), "failed"])
class Runner(unittest.TextTestRunner):
    resultclass = Result
    def run(self, test):
        r = super().run(test)
        with open(out, "w") as f:
            json.dump({"tests": r.seen, "complete": True}, f)
        return r
sys.argv = ["python -m unittest"] + sys.argv[2:]
unittest.main(module=None, testRunner=Runner)
"#;

/// What the listing program printed. A module that did not import is
/// listed by unittest as a `_FailedTest`: the listing is not complete.
pub(super) fn parse_listing(out: &str) -> Listing {
    let mut tests = Vec::new();
    let mut ended = false;
    let mut failed_import = false;
    for line in out.lines() {
        let line = line.trim_end_matches('\r');
        if line == "rascal-unittest-end" {
            ended = true;
        } else if let Some(id) = line.strip_prefix("rascal-unittest: ") {
            failed_import |= id.starts_with("unittest.loader._FailedTest");
            tests.push(id.to_string());
        }
    }
    Listing {
        tests,
        complete: ended && !failed_import,
        files_only: false,
    }
}

/// The results file the run program wrote: `{"tests": [[id, outcome]…],
/// "complete": true}`. Expected failures and unexpected successes count as
/// failures (a test marked to fail proves nothing).
pub(super) fn parse_results(json: &str) -> Parsed {
    let mut results = Results::default();
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(json) else {
        results
            .notes
            .push("the results file is not the JSON rascal's runner writes".into());
        return (Vec::new(), results);
    };
    let mut reported = Vec::new();
    for t in doc["tests"].as_array().into_iter().flatten() {
        let (Some(id), Some(outcome)) = (t[0].as_str(), t[1].as_str()) else {
            continue;
        };
        let o = match outcome {
            "passed" => Outcome::Passed,
            "skipped" => Outcome::Ignored,
            _ => Outcome::Failed,
        };
        reported.push((id.to_string(), o));
    }
    results.complete = doc["complete"].as_bool() == Some(true);
    (reported, results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_ends_with_its_marker_and_a_failed_import_makes_it_incomplete() {
        let out = "rascal-unittest: test_calc.TestAdd.test_adds\nrascal-unittest: test_calc.TestAdd.test_zero\nrascal-unittest-end\n";
        let l = parse_listing(out);
        assert_eq!(
            l.tests,
            vec!["test_calc.TestAdd.test_adds", "test_calc.TestAdd.test_zero"]
        );
        assert!(l.complete);
        assert!(!parse_listing("rascal-unittest: a.b.c\n").complete);
        let broken =
            "rascal-unittest: unittest.loader._FailedTest.test_calc\nrascal-unittest-end\n";
        assert!(!parse_listing(broken).complete);
    }

    #[test]
    fn outcomes_are_read_from_the_file_and_an_expected_failure_fails() {
        let (reported, r) = parse_results(
            r#"{"tests": [["m.T.a", "passed"], ["m.T.b", "failed"], ["m.T.c", "skipped"], ["m.T.d", "expected"]], "complete": true}"#,
        );
        assert!(r.complete);
        assert_eq!(
            reported,
            vec![
                ("m.T.a".to_string(), Outcome::Passed),
                ("m.T.b".to_string(), Outcome::Failed),
                ("m.T.c".to_string(), Outcome::Ignored),
                ("m.T.d".to_string(), Outcome::Failed),
            ]
        );
        assert!(!parse_results("not json").1.complete);
    }
}
