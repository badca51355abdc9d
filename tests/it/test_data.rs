//! Test data is test code (issue 54): a table of cases in `src/` outside
//! any test module, and a data file only a test reads, belong to the base's
//! tests. A candidate that drops the row (or the line) its wrong code
//! fails on passes every test it runs — on main before this change it
//! passed every layer — and now FAILs: the base's tests run with the
//! base's data (`base-tests/failed`), and the change to the data is
//! `test-integrity/test-data-changed`. A fix that adds rows passes. Real
//! repository, real cargo, the real binary (process launcher, bubblewrap).

use crate::common::bwrap;
use crate::evidence::{not_passing, repo_of, rules};
use crate::test_integrity::{candidate, run, CARGO_LOCK, CARGO_TEST, CARGO_TOML};

const LIB: &str = r#"pub fn add(a: i32, b: i32) -> i32 {
    if a > 9 { a - b } else { a + b }
}

/// The cases `add` is checked on.
pub const CASES: &[(i32, i32, i32)] = &[
    (1, 1, 2),
    (2, 3, 5),
    (10, 1, 11),
];

pub fn parse(s: &str) -> i32 {
    s.parse().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_every_case() {
        for &(a, b, sum) in CASES {
            assert_eq!(add(a, b), sum, "add({a}, {b})");
        }
    }

    #[test]
    fn parses_the_golden_file() {
        for line in include_str!("../data/numbers.txt").lines() {
            let (text, want) = line.split_once('=').unwrap();
            assert_eq!(parse(text), want.parse::<i32>().unwrap(), "{text:?}");
        }
    }
}
"#;

#[test]
fn a_dropped_row_or_golden_line_fails_and_added_rows_pass() {
    if !bwrap() {
        return;
    }
    let fix_add = "sed -i 's/if a > 9 { a - b } else { a + b }/a + b/' src/lib.rs";
    let fix_parse = "sed -i 's/s.parse()/s.trim().parse()/' src/lib.rs";
    let drop_row = format!("sed -i '/(10, 1, 11),/d' src/lib.rs && {fix_parse}");
    let drop_line = format!("sed -i '/^ 7=7$/d' data/numbers.txt && {fix_add}");
    let fix = format!("{fix_add} && {fix_parse}");
    let more = format!(
        "{fix} && sed -i 's/    (10, 1, 11),/    (10, 1, 11),\\n    (20, 2, 22),/' src/lib.rs"
    );
    let agents = [
        ("drop-row", drop_row.as_str()),
        ("drop-line", drop_line.as_str()),
        ("fix", fix.as_str()),
        ("more-cases", more.as_str()),
    ];
    let t = repo_of(
        &[
            ("Cargo.toml", CARGO_TOML),
            ("Cargo.lock", CARGO_LOCK),
            (".gitignore", "/target\n"),
            ("src/lib.rs", LIB),
            ("data/numbers.txt", " 7=7\n12=12\n-3=-3\n"),
        ],
        &agents,
        CARGO_TEST,
    );
    let doc = run(&t, &["drop-row", "drop-line", "fix", "more-cases"]);
    let mut wrong = Vec::new();
    for (name, what) in [("drop-row", "`CASES`"), ("drop-line", "`data/numbers.txt`")] {
        let c = candidate(&doc, name);
        let found = rules(c);
        let said = c["reports"].to_string();
        if c["verdict"] != "fail"
            || !found
                .iter()
                .any(|r| r == "test-integrity/test-data-changed")
            || !found.iter().any(|r| r == "base-tests/failed")
            || !said.contains(what)
        {
            wrong.push(format!("{name}: verdict {}, rules {found:?}", c["verdict"]));
        }
    }
    wrong.extend(not_passing(&doc, &["fix", "more-cases"]));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

const CALC_PY: &str = "CASES = [\n    (1, 1, 2),\n    (2, 3, 5),\n    (10, 1, 11),\n]\n\n\ndef add(a, b):\n    if a > 9:\n        return a - b\n    return a + b\n";

const TEST_CALC_PY: &str = "import unittest\nfrom calc import CASES, add\n\n\nclass TestAdd(unittest.TestCase):\n    def test_every_case(self):\n        for a, b, s in CASES:\n            self.assertEqual(add(a, b), s)\n";

/// The same in Python (`python3 -m unittest`): the table of cases lives in
/// the module under test, only the test imports it.
#[test]
fn a_dropped_row_of_a_python_table_fails_and_an_added_one_passes() {
    if !bwrap() || !crate::test_integrity::toolchain("python3", &["-c", "import unittest"]) {
        return;
    }
    let fix = "sed -i 's/    if a > 9:/    if False:/' calc.py";
    let drop_row = "sed -i '/    (10, 1, 11),/d' calc.py";
    let more = format!(
        "{fix} && sed -i 's/    (10, 1, 11),/    (10, 1, 11),\\n    (20, 2, 22),/' calc.py"
    );
    let agents = [
        ("drop-row", drop_row),
        ("fix", fix),
        ("more-cases", more.as_str()),
    ];
    let t = repo_of(
        &[("calc.py", CALC_PY), ("test_calc.py", TEST_CALC_PY)],
        &agents,
        "guardrails:\n  - { name: tests, command: \"python3 -m unittest\" }\n",
    );
    let doc = run(&t, &["drop-row", "fix", "more-cases"]);
    let mut wrong = Vec::new();
    let c = candidate(&doc, "drop-row");
    let found = rules(c);
    if c["verdict"] != "fail"
        || !found
            .iter()
            .any(|r| r == "test-integrity/test-data-changed")
        || !found.iter().any(|r| r == "base-tests/failed")
    {
        wrong.push(format!(
            "drop-row: verdict {}, rules {found:?}",
            c["verdict"]
        ));
    }
    wrong.extend(not_passing(&doc, &["fix", "more-cases"]));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
