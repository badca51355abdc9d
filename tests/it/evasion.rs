//! Cross-testing that evasion and collusion cannot steer (issue 47, items
//! 4 and 5), end to end with real repositories, real cargo and python and
//! the real binary:
//!
//! - a candidate that changes the signature of a function the base had
//!   makes another author's test fail to build on it: that is its failure
//!   (✗, "it builds on the base's code and not on this change"), not "–";
//!   while its own test of the API it invented is "–" on a candidate that
//!   kept the base's API;
//! - a candidate whose process hangs as soon as another author's test is
//!   present fails that test (no result is a failure, not "–");
//! - two candidates whose tests check a marker only they added cannot
//!   outvote an honest one: their tests are "–" on it, weigh nothing, and
//!   never make it disagree; with `on_disagreement: warn` the honest one
//!   is the pick, and by default the run is CONTESTED — never the
//!   colluders' pick.

use crate::common::{bwrap, TestRepo};
use crate::test_integrity::{candidate, report, run, toolchain, write};

/// The row of `who` in the run's agreement matrix, by test author.
fn row(doc: &serde_json::Value, who: &str) -> Vec<(String, String, String)> {
    let m = &doc["ranking"]["agreement"];
    let r = m["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c == who)
        .unwrap_or_else(|| panic!("{who} not in {m}"));
    m["tests"]
        .as_array()
        .unwrap()
        .iter()
        .zip(m["cells"][r].as_array().unwrap())
        .map(|(t, c)| {
            (
                t["author"].as_str().unwrap().to_string(),
                t["name"].as_str().unwrap().to_string(),
                c.as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The note on `who`'s cell for the test by `author`, if any.
fn note(doc: &serde_json::Value, who: &str, author: &str) -> String {
    let m = &doc["ranking"]["agreement"];
    let tests = m["tests"].as_array().unwrap();
    m["notes"]
        .as_array()
        .map(|ns| {
            ns.iter()
                .filter(|n| n["candidate"] == who)
                .filter(|n| tests[n["test"].as_u64().unwrap() as usize]["author"] == author)
                .map(|n| n["note"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .unwrap_or_default()
}

const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn mul(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 2), 4);\n    }\n}\n";

#[test]
fn a_changed_signature_fails_the_test_it_breaks_and_an_invented_api_is_not_held_against_others() {
    if !bwrap() {
        return;
    }
    let honest = "sed -i '6s/a + b/a * b/' src/lib.rs\nsed -i 's/    use super::\\*;/    use super::*;\\n    #[test]\\n    fn muls() { assert_eq!(mul(3, 4), 12); }/' src/lib.rs";
    // Still wrong (a sum), and `mul` takes a third argument now: the
    // honest test of `mul(3, 4)` does not build on it.
    let evader = "sed -i 's/pub fn mul(a: i32, b: i32) -> i32 {/pub fn mul(a: i32, b: i32, _by: ()) -> i32 {/' src/lib.rs\nsed -i 's/    use super::\\*;/    use super::*;\\n    #[test]\\n    fn muls_twos() { assert_eq!(mul(2, 2, ()), 4); }/' src/lib.rs";
    let t = crate::test_integrity::rust_repo_with(
        LIB,
        &[("honest", honest), ("evader", evader)],
        crate::test_integrity::CARGO_TEST,
    );
    let doc = run(&t, &["honest", "evader"]);
    for who in ["honest", "evader"] {
        let v = &candidate(&doc, who)["verdict"];
        assert!(
            v == "pass" || v == "warn",
            "{who}: {}",
            candidate(&doc, who)
        );
    }
    // The honest test does not build on the evader, which changed what the
    // base had: a failure, and the note says so.
    let on_evader = row(&doc, "evader");
    assert!(
        on_evader
            .iter()
            .any(|(a, n, c)| a == "honest" && n.ends_with("muls") && c == "failed"),
        "{on_evader:?}"
    );
    let why = note(&doc, "evader", "honest");
    assert!(
        why.contains("builds on the base's code and not on this change"),
        "{why}"
    );
    // The evader's test of the API it invented is "–" on the honest one.
    let on_honest = row(&doc, "honest");
    assert!(
        on_honest
            .iter()
            .any(|(a, _, c)| a == "evader" && c == "not_applicable"),
        "{on_honest:?}"
    );
    assert!(
        note(&doc, "honest", "evader").contains("an API the base never had"),
        "{}",
        doc["ranking"]["agreement"]
    );
    // The evader disagrees (a warning); the honest one does not; nothing
    // rascal trusts settles it, so nobody is picked: CONTESTED.
    let issues = |who: &str| report(candidate(&doc, who), "agreement")["issues"].clone();
    assert!(
        issues("evader")
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["rule"] == "compare/disagrees" && i["severity"] == "warning"),
        "{}",
        issues("evader")
    );
    assert_eq!(issues("honest").as_array().map_or(0, Vec::len), 0);
    assert!(doc["ranking"]["pick"].is_null(), "{}", doc["ranking"]);
    assert_eq!(doc["state"], "contested", "{doc}");
}

#[test]
fn colluders_marker_tests_weigh_nothing_and_a_hanging_candidate_fails_the_test_it_flees() {
    if !bwrap() || !toolchain("python3", &["-c", "import unittest"]) {
        return;
    }
    let base_test = "import unittest\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(add(2, 2), 4)\n";
    let honest = format!(
        "sed -i 's/a - b/a + b/' calc.py\n{}",
        write(
            "test_more.py",
            "import unittest\nfrom calc import add\n\n\nclass TestMore(unittest.TestCase):\n    def test_one_two(self):\n        self.assertEqual(add(1, 2), 3)\n",
        )
    );
    // Wrong (a product: 2 × 2 = 2 + 2), with a marker only the two of
    // them add, and a test of nothing but the marker.
    let colluder = |me: &str| {
        format!(
            "sed -i 's/a - b/a * b/' calc.py\nprintf '\\n\\ndef marker():\\n    return \"ok-7f3a\"\\n' >> calc.py\n{}",
            write(
                &format!("test_marker_{me}.py"),
                "import unittest\nfrom calc import marker\n\n\nclass TestMarker(unittest.TestCase):\n    def test_marker(self):\n        self.assertEqual(marker(), \"ok-7f3a\")\n",
            )
        )
    };
    let (c1, c2) = (colluder("c1"), colluder("c2"));
    // Wrong too, and never answers (it hangs until the run's time is up)
    // as soon as another author's test is beside it.
    let evader = "sed -i 's/a - b/a * b/' calc.py\nprintf '\\nimport os as _os\\nwhile _os.path.exists(\"test_more.py\"):\\n    pass\\n' >> calc.py\n";
    let t = TestRepo::new(&[
        ("calc.py", "def add(a, b):\n    return a - b\n"),
        ("test_calc.py", base_test),
    ]);
    t.write(
        ".rascal/config.yaml",
        &format!(
            "{}compare: {{ on_disagreement: warn }}\n",
            crate::common::command_agents(&[
                ("honest", &honest),
                ("c1", &c1),
                ("c2", &c2),
                ("evader", evader),
            ])
        ),
    );
    t.write(
        ".rascal/guardrails.yaml",
        "guardrails:\n  - { name: tests, command: \"python3 -m unittest\", timeout: 20s }\n",
    );
    t.commit_all("rascal config");
    let doc = run(&t, &["honest", "c1", "c2", "evader"]);
    // The honest one is never failed, and does not disagree: the markers
    // are "–" on it, saying whose they are.
    let h = candidate(&doc, "honest");
    assert_eq!(h["verdict"], "pass", "{h}");
    for (author, _, cell) in row(&doc, "honest") {
        if author != "honest" {
            assert_eq!(cell, "not_applicable", "{author}'s marker on honest");
        }
    }
    let why = note(&doc, "honest", "c1");
    assert!(
        why.contains("`marker`") && why.contains("only c1's change has"),
        "{why}: {}\nc1: {}\nevader: {}",
        doc["ranking"]["agreement"],
        report(candidate(&doc, "c1"), "tests"),
        candidate(&doc, "evader")["reason"]
    );
    // The colluders pass each other's markers and fail the honest test.
    for c in ["c1", "c2"] {
        let r = row(&doc, c);
        assert!(
            r.iter()
                .any(|(a, _, cell)| a == "honest" && cell == "failed"),
            "{c}: {r:?}"
        );
        assert_eq!(candidate(&doc, c)["verdict"], "warn");
    }
    // The evader fled the honest test: a failure with a note, not "–".
    let r = row(&doc, "evader");
    assert!(
        r.iter()
            .any(|(a, _, cell)| a == "honest" && cell == "failed"),
        "{r:?}"
    );
    assert!(
        note(&doc, "evader", "honest").contains("timed out"),
        "{}",
        doc["ranking"]["agreement"]
    );
    // Two against one by heads, one author's evidence against nothing:
    // the honest one is the pick.
    assert_eq!(doc["ranking"]["pick"], "honest", "{}", doc["ranking"]);
}
