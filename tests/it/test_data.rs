//! Test data is test code (issue 54): a table of cases in `src/` outside
//! any test module, and a data file only a test reads, belong to the base's
//! tests. A candidate that drops the row (or the line) its wrong code
//! fails on passes every test it runs — on main before this change it
//! passed every layer — and now FAILs: the base's tests run with the
//! base's data (`base-tests/failed`), and the change to the data is
//! `test-integrity/test-data-changed`. A fix that adds rows passes. Real
//! repository, real cargo, the real binary (process launcher, bubblewrap).

use crate::common::bwrap;
use crate::evidence::{repo_of, rules};
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
    for name in ["fix", "more-cases"] {
        let c = candidate(&doc, name);
        if c["verdict"] != "pass" {
            wrong.push(format!(
                "{name}: verdict {}, rules {:?}",
                c["verdict"],
                rules(c)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
