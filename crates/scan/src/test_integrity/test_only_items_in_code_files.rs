//! Unit tests: test-only items (a `#[cfg(test)]` const, a top-level `#[test]`
//! fn) inside code files.

use super::*;

/// shlex's layout (found by the real-crate benchmark): a `#[cfg(test)]`
/// const and a top-level `#[test]` function that reads it, in a source
/// file. A fix elsewhere in the file must not read as "code now names"
/// the const — the word count takes both for code, at the base too —
/// while a new reference from the code must.
#[test]
fn a_cfg_test_item_read_by_a_top_level_test_is_no_new_use() {
    let base = "pub fn split(s: &[u8]) -> Vec<u8> {\n    s.to_vec()\n}\n\n#[cfg(test)]\nconst INVALID_UTF8: &[u8] = b\"\\xa1\";\n\n#[test]\nfn test_invalid_utf8() {\n    assert!(core::str::from_utf8(INVALID_UTF8).is_err());\n}\n";
    let mut words = Words::default();
    words.add("src/bytes.rs", base);
    let found = |now: &str| super::testing::data_findings("src/bytes.rs", base, now, &words);
    let fix = base.replace(
        "s.to_vec()",
        "s.iter().filter(|&&c| c != b'\\n').copied().collect()",
    );
    assert!(found(&fix).is_empty(), "{:?}", found(&fix));
    let reads = base.replace(
        "s.to_vec()",
        "if s == INVALID_UTF8 { Vec::new() } else { s.to_vec() }",
    );
    assert!(
        found(&reads)
            .iter()
            .any(|m| m.starts_with("code under test now names `INVALID_UTF8`")),
        "{:?}",
        found(&reads)
    );
}
