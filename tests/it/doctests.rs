//! Doctests keep their identity (issue 54): cargo names a doctest by file
//! and line, and the fix a crate really gets often adds lines above its
//! examples. A fix that does is not missing the base's doctests; a
//! candidate that edits an example's expectation to match its wrong code
//! runs the base's example in its base-tests copy and FAILs there; one
//! that deletes the example its code fails is missing a base test. Real
//! crate layout (examples above and below the changed lines, two examples
//! on one item), real cargo, the real binary (process launcher,
//! bubblewrap).

use crate::common::bwrap;
use crate::evidence::{not_passing, repo_of, rules};
use crate::test_integrity::{candidate, run, CARGO_LOCK, CARGO_TEST, CARGO_TOML};

const LIB: &str = r#"//! Small numeric helpers.
//!
//! ```
//! assert_eq!(calc::add(1, 1), 2);
//! ```

/// Adds two numbers.
///
/// ```
/// assert_eq!(calc::add(2, 3), 5);
/// ```
///
/// Large numbers too:
///
/// ```
/// assert_eq!(calc::add(10, 1), 11);
/// ```
pub fn add(a: i32, b: i32) -> i32 {
    if a > 9 { a - b } else { a + b }
}

/// Doubles a number.
///
/// ```
/// assert_eq!(calc::double(4), 8);
/// ```
pub fn double(x: i32) -> i32 {
    x * 2
}
"#;

/// `add` defined by a macro, its examples in the call, one edited to
/// agree with the wrong code.
const HIDDEN: &str = r#"//! Small numeric helpers.
//!
//! ```
//! assert_eq!(calc::add(1, 1), 2);
//! ```

macro_rules! define {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        pub fn $name(a: i32, b: i32) -> i32 {
            if a > 9 { a - b } else { a + b }
        }
    };
}

define! {
    /// Adds two numbers.
    ///
    /// ```
    /// assert_eq!(calc::add(2, 3), 5);
    /// ```
    ///
    /// Large numbers too:
    ///
    /// ```
    /// assert_eq!(calc::add(10, 1), 9);
    /// ```
    add
}

/// Doubles a number.
///
/// ```
/// assert_eq!(calc::double(4), 8);
/// ```
pub fn double(x: i32) -> i32 {
    x * 2
}
"#;

#[test]
fn moved_doctests_stay_the_bases_and_edited_examples_fail() {
    if !bwrap() {
        return;
    }
    // The upstream-style fix: a note added above every example, and a
    // plain comment (not laid from the base) that moves them all.
    let fix = "sed -i 's/if a > 9 { a - b } else { a + b }/a + b/; s|^/// Adds two numbers.$|/// Adds two numbers.\\n///\\n/// Wraps on overflow in release builds.|; s|^//! Small numeric helpers.$|//! Small numeric helpers.\\n//! No allocation.|' src/lib.rs && sed -i '1i // Helpers.' src/lib.rs";
    // Wrong code, the example that shows it changed to agree.
    let edit = "sed -i 's|^/// assert_eq!(calc::add(10, 1), 11);$|/// assert_eq!(calc::add(10, 1), 9);|' src/lib.rs";
    // Wrong code, the example that shows it gone (and lines moved).
    let drop = "sed -i '/^\\/\\/\\/ Large numbers too:$/,+4d' src/lib.rs";
    // Wrong code, `add` made by a macro whose call carries an edited
    // example: an item the base documented that no reading finds.
    let hide = crate::test_integrity::write("src/lib.rs", HIDDEN);
    let agents = [
        ("fix", fix),
        ("edit", edit),
        ("drop", drop),
        ("hide", hide.as_str()),
    ];
    let t = repo_of(
        &[
            ("Cargo.toml", CARGO_TOML),
            ("Cargo.lock", CARGO_LOCK),
            (".gitignore", "/target\n"),
            ("src/lib.rs", LIB),
        ],
        &agents,
        CARGO_TEST,
    );
    let doc = run(&t, &["fix", "edit", "drop", "hide"]);
    let mut wrong = not_passing(&doc, &["fix"]);
    for (name, rule) in [
        ("edit", "base-tests/failed"),
        ("drop", "test-integrity/removed-test"),
        ("hide", "test-integrity/removed-test"),
    ] {
        let c = candidate(&doc, name);
        let found = rules(c);
        if c["verdict"] != "fail" || !found.iter().any(|r| r == rule) {
            wrong.push(format!("{name}: verdict {}, rules {found:?}", c["verdict"]));
        }
    }
    let drop = candidate(&doc, "drop")["reports"].to_string();
    if !drop.contains("the doc example `src/lib.rs - add (line 15)` at the base is gone") {
        wrong.push(format!("drop: the gone example is not named: {drop}"));
    }
    let edit = candidate(&doc, "edit")["reports"].to_string();
    if !edit.contains("add") {
        wrong.push(format!("edit: the failing doctest is not named: {edit}"));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// api_change's `decode`, documented with an example and without its
/// test module: the example is its only test.
fn decode() -> String {
    let lib = crate::api_change::LIB;
    let code = &lib[..lib.find("\n#[cfg(test)]").unwrap_or(lib.len())];
    format!("/// Expands counts: `a2b` is `aab`.\n///\n/// ```\n/// assert_eq!(calc::decode(\"a2b\"), \"aab\");\n/// ```\n{}\n", code.trim_end())
}

/// `decode` returning a `Result` (an error on a leading digit, worded
/// `message`), its example updated below a line more of docs.
fn decode_result(message: &str) -> String {
    let lib = decode()
        .replace(
            "pub fn decode(s: &str) -> String {\n",
            &format!("pub fn decode(s: &str) -> Result<String, String> {{\n    if s.starts_with(|c: char| c.is_ascii_digit()) {{\n        return Err(\"{message}\".to_string());\n    }}\n"),
        )
        .replace("    out\n}", "    Ok(out)\n}")
        .replace(
            "/// Expands counts: `a2b` is `aab`.\n",
            "/// Expands counts: `a2b` is `aab`.\n///\n/// A leading digit is an error.\n",
        )
        .replace(
            "assert_eq!(calc::decode(\"a2b\"), \"aab\");",
            "assert_eq!(calc::decode(\"a2b\").unwrap(), \"aab\");",
        );
    crate::test_integrity::write("src/lib.rs", &lib)
}

#[test]
fn an_example_updated_for_an_api_the_task_changes_is_not_a_failure() {
    if !bwrap() {
        return;
    }
    let (first, second) = (
        decode_result("leading digit"),
        decode_result("a count comes first"),
    );
    let t = repo_of(
        &[
            ("Cargo.toml", CARGO_TOML),
            ("Cargo.lock", CARGO_LOCK),
            (".gitignore", "/target\n"),
            ("src/lib.rs", &decode()),
        ],
        &[("first", &first), ("second", &second)],
        CARGO_TEST,
    );
    let doc = run(&t, &["first", "second"]);
    for who in ["first", "second"] {
        let c = candidate(&doc, who);
        assert_eq!(c["verdict"], "pass", "{who}: {:?} {c}", rules(c));
        let b = &crate::test_integrity::report(c, "tests")["ledger"]["base_tests"];
        let updated = b["updated"].to_string();
        assert!(updated.contains("decode"), "{who}: {b}");
    }
}

/// A README included as the crate's docs holds doctests: its examples are
/// the base's tests too. Changing one to agree with wrong code FAILs (the
/// base's README is laid in the base-tests copy); a fix passes.
#[test]
fn examples_of_a_readme_included_as_docs_are_the_bases() {
    if !bwrap() {
        return;
    }
    let lib = "#![doc = include_str!(\"../README.md\")]\n\npub fn add(a: i32, b: i32) -> i32 {\n    if a > 9 { a - b } else { a + b }\n}\n";
    let readme =
        "# calc\n\n```\nassert_eq!(calc::add(2, 3), 5);\nassert_eq!(calc::add(10, 1), 11);\n```\n";
    let fix = "sed -i 's/if a > 9 { a - b } else { a + b }/a + b/' src/lib.rs";
    let edit =
        "sed -i 's/assert_eq!(calc::add(10, 1), 11);/assert_eq!(calc::add(10, 1), 9);/' README.md";
    let t = repo_of(
        &[
            ("Cargo.toml", CARGO_TOML),
            ("Cargo.lock", CARGO_LOCK),
            (".gitignore", "/target\n"),
            ("src/lib.rs", lib),
            ("README.md", readme),
        ],
        &[("fix", fix), ("edit", edit)],
        CARGO_TEST,
    );
    let doc = run(&t, &["fix", "edit"]);
    let mut wrong = not_passing(&doc, &["fix"]);
    let c = candidate(&doc, "edit");
    let found = rules(c);
    if c["verdict"] != "fail"
        || !found.iter().any(|r| r == "base-tests/failed")
        || !found
            .iter()
            .any(|r| r == "test-integrity/test-data-changed")
    {
        wrong.push(format!("edit: verdict {}, rules {found:?}", c["verdict"]));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
