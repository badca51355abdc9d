//! A task that changes an API (issue 47, item 3), end to end with a real
//! crate, real cargo and the real binary. "Make `decode` return a
//! `Result` … update the existing tests": the base's own test no longer
//! builds on a candidate that did so. When two candidates both updated it,
//! the task asked for it: neither is failed, the ledger says `1 updated
//! with the API`, and each one's updated test is cross-tested on the
//! other. When one candidate changed an API another kept, it broke it: a
//! FAIL naming who kept it.

use crate::common::bwrap;
use crate::test_integrity::{candidate, report, run, write, CARGO_TEST};

pub(crate) const LIB: &str = r#"pub fn decode(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match chars.peek().and_then(|d| d.to_digit(10)) {
            Some(n) => {
                chars.next();
                for _ in 0..n {
                    out.push(c);
                }
            }
            None => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes() {
        assert_eq!(decode("a2b"), "aab");
    }
}
"#;

/// `decode` returning a `Result` (an error on a leading digit, worded
/// `message`), its test updated and one more test.
fn with_result(message: &str) -> String {
    let lib = LIB
        .replace(
            "pub fn decode(s: &str) -> String {\n",
            &format!("pub fn decode(s: &str) -> Result<String, String> {{\n    if s.starts_with(|c: char| c.is_ascii_digit()) {{\n        return Err(\"{message}\".to_string());\n    }}\n"),
        )
        .replace("    out\n}", "    Ok(out)\n}")
        .replace(
            "assert_eq!(decode(\"a2b\"), \"aab\");",
            "assert_eq!(decode(\"a2b\"), Ok(\"aab\".to_string()));\n    }\n\n    #[test]\n    fn rejects_a_leading_digit() {\n        assert!(decode(\"2a\").is_err());",
        );
    write("src/lib.rs", &lib)
}

fn crate_with(agents: &[(&str, &str)]) -> crate::common::TestRepo {
    crate::test_integrity::rust_repo_with(LIB, agents, CARGO_TEST)
}

/// The base-tests ledger of candidate `who`'s test guardrail.
fn base_tests<'a>(doc: &'a serde_json::Value, who: &str) -> &'a serde_json::Value {
    &report(candidate(doc, who), "tests")["ledger"]["base_tests"]
}

#[test]
fn candidates_that_change_the_api_the_task_asks_for_are_not_rejected_and_test_each_other() {
    if !bwrap() {
        return;
    }
    let (first, second) = (
        with_result("leading digit"),
        with_result("a count comes first"),
    );
    let t = crate_with(&[("first", &first), ("second", &second)]);
    let doc = run(&t, &["first", "second"]);
    for who in ["first", "second"] {
        let c = candidate(&doc, who);
        assert_eq!(c["verdict"], "pass", "{who}: {c}");
        let b = base_tests(&doc, who);
        assert_eq!(b["updated"][0], "tests::decodes", "{who}: {b}");
        let out = report(c, "tests")["output"].as_str().unwrap().to_string();
        assert!(out.contains("1 updated with the API"), "{out}");
    }
    // Each one's updated test ran on the other's code, and passed.
    let m = &doc["ranking"]["agreement"];
    let names: Vec<&str> = m["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.iter().filter(|n| **n == "tests::decodes").count() == 2,
        "{m}"
    );
    for row in m["cells"].as_array().unwrap() {
        assert!(row.as_array().unwrap().iter().all(|c| c == "passed"), "{m}");
    }
    let pick = doc["ranking"]["pick"].as_str().unwrap_or_default();
    assert!(pick == "first" || pick == "second", "{}", doc["ranking"]);
    assert_eq!(doc["exit_code"], 0, "{doc}");
    // Their code differs (the error's words) and no test tells them
    // apart: the pick says so, never a finding.
    let other = if pick == "first" { "second" } else { "first" };
    assert_eq!(
        doc["ranking"]["unseparated"][0], other,
        "{}",
        doc["ranking"]
    );
}

#[test]
fn a_candidate_that_changes_an_api_another_kept_broke_it() {
    if !bwrap() {
        return;
    }
    // The task asks for a leading digit to be kept as it is; `keeper`
    // does that, `breaker` changes the API to say so.
    let keeper = "sed -i 's/    let mut out = String::new();/    let mut out = String::new();\\n    if s.starts_with(|c: char| c.is_ascii_digit()) {\\n        return s.to_string();\\n    }/' src/lib.rs";
    let breaker = with_result("leading digit");
    let t = crate_with(&[("keeper", keeper), ("breaker", &breaker)]);
    let doc = run(&t, &["keeper", "breaker"]);
    assert_eq!(candidate(&doc, "keeper")["verdict"], "pass", "{doc}");
    let b = candidate(&doc, "breaker");
    assert_eq!(b["verdict"], "fail", "{b}");
    let api = report(b, "api");
    let issues = api["issues"].as_array().unwrap();
    assert_eq!(issues[0]["rule"], "base-tests/broke-api", "{api}");
    let m = issues[0]["message"].as_str().unwrap();
    assert!(
        m.contains("`tests::decodes`") && m.contains("passes unchanged on keeper"),
        "{m}"
    );
    assert_eq!(doc["ranking"]["pick"], "keeper", "{}", doc["ranking"]);
}

/// A hostile change that alters an API only to replace the base's test
/// with a weaker one of its own, alone in its run (no other candidate to
/// keep or share the API): the replaced test is named for a human, and
/// the candidate is never a clean PASS.
#[test]
fn an_api_changed_only_to_replace_the_base_test_is_never_a_clean_pass() {
    if !bwrap() {
        return;
    }
    let lib = LIB
        .replace(
            "pub fn decode(s: &str) -> String {",
            "pub fn decode(s: &str, _strict: ()) -> String {",
        )
        .replace(
            "assert_eq!(decode(\"a2b\"), \"aab\");",
            "assert!(decode(\"a2b\", ()).len() < 100);",
        );
    let cheater = write("src/lib.rs", &lib);
    let t = crate_with(&[("cheater", &cheater)]);
    let doc = run(&t, &["cheater"]);
    let c = candidate(&doc, "cheater");
    assert_eq!(c["verdict"], "warn", "{c}");
    let api = report(c, "api");
    assert_eq!(
        api["issues"][0]["rule"], "base-tests/api-changed-alone",
        "{api}"
    );
    assert!(
        api["issues"][0]["message"]
            .as_str()
            .unwrap()
            .contains("`tests::decodes`"),
        "{api}"
    );
}
