//! Doctests are the base's tests too. cargo runs the code blocks of an
//! item's doc comment as tests, and those examples live in the source file
//! the change edits, so a base-tests copy that keeps the change's file
//! would run the change's examples, edited expectations included. This
//! lays the base's doc comment over each item of the change's file that
//! the base documented (the code is the change's, the examples the
//! base's), matched by item — kind, name and ordinal among same-named
//! items of the file — never by line, so an added line above an example
//! changes nothing. An item the change renamed or removed keeps no
//! example here; its doctests are missing from the run's listing and
//! reported as removed tests there.
//!
//! Reading is lexical over the blanked code ([`Source`]): items are found
//! where an item may start (after `;`, `}`, `{`, an attribute or the start
//! of the file), doc lines are `///` and `//!` comments in the gap before
//! an item (`//!` before the file's first item), so a doc-like line in a
//! string or an expression is never taken for an example.

use super::base_tests::outer_attribute;
use super::lex::{Source, Syntax};
use std::collections::HashMap;

/// One item a doc comment can document, with the doc lines before it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Owner {
    /// `fn name#0`, `impl Foo for Bar#1`, `//!#0` for the file's own docs.
    key: String,
    /// Where a doc comment for it goes when it has none: the start of the
    /// line of its first attribute or keyword.
    insert_at: usize,
    /// Its doc lines, as byte ranges of whole lines (newline included).
    docs: Vec<(usize, usize)>,
}

/// Words that may come before an item's kind.
const QUALIFIERS: &[&str] = &[
    "pub", "crate", "super", "self", "in", "async", "unsafe", "extern", "default", "auto",
];

/// Words that name an item's kind.
const KINDS: &[&str] = &[
    "fn",
    "struct",
    "enum",
    "union",
    "trait",
    "type",
    "mod",
    "const",
    "static",
    "macro_rules",
    "impl",
];

/// The items of `text` with their doc lines, each keyed by kind, name and
/// ordinal among the file's items of the same kind and name.
fn owners(text: &str) -> Vec<Owner> {
    let src = Source::new(text, Syntax::Rust);
    let mut out = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let key_of = |k: String, seen: &mut HashMap<String, usize>| {
        let n = seen.entry(k.clone()).or_default();
        *n += 1;
        format!("{k}#{}", *n - 1)
    };
    // The file's own docs (`//!`) before its first item.
    let first = src.skip_ws(0);
    let inner = doc_lines(&src, 0, first, "//!");
    if !inner.is_empty() {
        out.push(Owner {
            key: key_of("//!".into(), &mut seen),
            insert_at: 0,
            docs: inner,
        });
    }
    // `gap` is where the gap before the next possible item starts.
    let mut gap = 0;
    let mut i = 0;
    let mut item_start: Option<usize> = None;
    // The `impl`, `trait` and `mod` bodies `i` is in: where each closes,
    // and its name (a method is keyed within its `impl`: a `new` added to
    // another type moves no example).
    let mut within: Vec<(usize, String)> = Vec::new();
    while i < src.len() {
        while within.last().is_some_and(|(close, _)| *close < i) {
            within.pop();
        }
        let c = src.at(i);
        if c == b'#' {
            if let Some((_, after)) = outer_attribute(&src, i) {
                item_start.get_or_insert(i);
                i = after;
                continue;
            }
        }
        if let Some((w, e)) = src.word(i) {
            let start = *item_start.get_or_insert(i);
            if QUALIFIERS.contains(&w) || (w == "const" && next_word(&src, e) == Some("fn")) {
                i = e;
                continue;
            }
            if KINDS.contains(&w) {
                let (name, after) = item_name(&src, w, e);
                let key = match within.last() {
                    Some((_, outer)) => format!("{outer} / {w} {name}"),
                    None => format!("{w} {name}"),
                };
                out.push(Owner {
                    key: key_of(key.clone(), &mut seen),
                    insert_at: src.line_start(start),
                    docs: doc_lines(&src, gap, start, "///"),
                });
                if matches!(w, "impl" | "trait" | "mod") {
                    let mut b = after;
                    while b < src.len() && !matches!(src.at(b), b'{' | b';') {
                        b += 1;
                    }
                    if src.at(b) == b'{' {
                        within.push((src.close(b), key));
                    }
                }
                i = after;
            } else {
                i = e;
            }
            item_start = None;
            gap = i;
            // Skip to where the next item may start.
            while i < src.len() && !matches!(src.at(i), b';' | b'{' | b'}') {
                if matches!(src.at(i), b'(' | b'[') {
                    i = src.close(i);
                }
                i += 1;
            }
            if i < src.len() {
                i += 1;
                gap = i;
            }
            continue;
        }
        if matches!(c, b';' | b'{' | b'}') {
            item_start = None;
            gap = i + 1;
        } else if item_start.is_none() && c == b'(' {
            // `pub(crate)` is read with its qualifier; any other bracket
            // group outside an item is skipped whole.
            i = src.close(i);
            gap = i + 1;
        }
        i += 1;
    }
    out
}

/// The word after the blank space following `i`, if any.
fn next_word<'a>(src: &Source<'a>, i: usize) -> Option<&'a str> {
    src.word(src.skip_ws(i)).map(|(w, _)| w)
}

/// The name of an item of kind `kind` whose keyword ends at `e`, and the
/// offset after it: the identifier after the keyword, or for an `impl`
/// its header up to the `{`, blanks squeezed.
fn item_name(src: &Source, kind: &str, e: usize) -> (String, usize) {
    if kind == "impl" {
        let mut j = e;
        while j < src.len() && !matches!(src.at(j), b'{' | b';') {
            j += 1;
        }
        let header: Vec<&str> = src.code_str(e, j).split_whitespace().collect();
        return (header.join(" "), j);
    }
    let mut j = src.skip_ws(e);
    if kind == "macro_rules" && src.at(j) == b'!' {
        j = src.skip_ws(j + 1);
    }
    match src.word(j) {
        Some((name, after)) => (name.to_string(), after),
        None => (String::new(), j),
    }
}

/// The whole lines in `a..b` that are doc comments starting with `mark`
/// (`///` or `//!`; a `////` line is a plain comment).
fn doc_lines(src: &Source, a: usize, b: usize, mark: &str) -> Vec<(usize, usize)> {
    let text = src.slice(0, src.len());
    let mut out = Vec::new();
    let starts = src.line_starts();
    let from = starts.partition_point(|&s| s < a);
    for (k, &s) in starts.iter().enumerate().skip(from) {
        if s >= b {
            break;
        }
        let end = starts.get(k + 1).copied().unwrap_or(text.len());
        let line = &text[s..end];
        let at = s + (line.len() - line.trim_start().len());
        let rest = &text[at..end];
        let is_doc = rest.starts_with(mark)
            && !rest.starts_with("////")
            && src.at(at) == b' '
            && !src.inside_string(at)
            && src.string_at(at).is_none();
        if is_doc {
            out.push((s, end));
        }
    }
    out
}

/// Whether some doc line of `owner` in `text` opens a code block that
/// rustdoc runs as a test: a fence with no language, or only Rust's
/// (`rust`, `should_panic`, `no_run`, `compile_fail`, an edition, …) —
/// not `text`, `ignore`, `sh` or any other language.
fn has_code(text: &str, owner: &Owner) -> bool {
    let mut open = false;
    for &(a, b) in &owner.docs {
        let line = text[a..b]
            .trim_start()
            .trim_start_matches('/')
            .trim_start_matches('!');
        let Some(lang) = line.trim().strip_prefix("```") else {
            continue;
        };
        // A closing fence opens nothing.
        open = !open;
        if open && is_rust(lang) {
            return true;
        }
    }
    false
}

/// Whether a fence's language string is one rustdoc runs as Rust.
fn is_rust(lang: &str) -> bool {
    lang.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .all(|t| {
            matches!(
                t,
                "rust"
                    | "should_panic"
                    | "no_run"
                    | "compile_fail"
                    | "test_harness"
                    | "standalone_crate"
            ) || t.starts_with("edition")
                || (t.starts_with('E') && t[1..].chars().all(|c| c.is_ascii_digit()))
        })
}

fn doc_text(text: &str, owner: &Owner) -> String {
    owner.docs.iter().map(|&(a, b)| &text[a..b]).collect()
}

/// The items of `base` whose doc comment holds an example and that `now`
/// has no item for (same kind, name, place among same-named items): their
/// examples cannot be laid over the change — the item is gone or renamed,
/// or defined where this reading cannot see it (inside a macro call), so
/// the example that runs under its name would be the change's own.
pub fn unplaced(base: &str, now: &str) -> Vec<String> {
    let theirs: std::collections::HashSet<String> =
        owners(now).into_iter().map(|o| o.key).collect();
    owners(base)
        .into_iter()
        .filter(|o| has_code(base, o) && !theirs.contains(&o.key))
        .map(|o| {
            o.key
                .rsplit_once('#')
                .map_or(o.key.clone(), |(k, _)| k.to_string())
        })
        .collect()
}

/// The change's Rust file `now` with the base's doc comment (`base`) on
/// every item whose doc comment holds a code block on either side, the
/// change's code otherwise untouched. None when nothing differs.
pub fn with_base_doctests(base: &str, now: &str) -> Option<String> {
    let ours = owners(base);
    let theirs = owners(now);
    let by_key: HashMap<&str, &Owner> = ours.iter().map(|o| (o.key.as_str(), o)).collect();
    // (range of `now` to replace, replacement), in order.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for t in &theirs {
        let base_owner = by_key.get(t.key.as_str());
        let wanted = base_owner.map(|o| doc_text(base, o)).unwrap_or_default();
        let code = has_code(now, t) || base_owner.is_some_and(|o| has_code(base, o));
        if !code || doc_text(now, t) == wanted {
            continue;
        }
        let wanted = if wanted.is_empty() || wanted.ends_with('\n') {
            wanted
        } else {
            format!("{wanted}\n")
        };
        match (t.docs.first(), t.docs.last()) {
            (Some(&(a, _)), Some(&(_, b))) => {
                // Doc lines split by attributes: the base's go where the
                // first was, the rest are dropped.
                edits.push((a, b.max(a), wanted));
                for &(x, y) in &t.docs[1..] {
                    if x >= b {
                        edits.push((x, y, String::new()));
                    }
                }
            }
            _ => edits.push((t.insert_at, t.insert_at, wanted)),
        }
    }
    if edits.is_empty() {
        return None;
    }
    edits.sort_by_key(|e| (e.0, e.1));
    let mut out = String::with_capacity(now.len() + base.len() / 4);
    let mut at = 0;
    for (a, b, with) in edits {
        if a < at {
            continue;
        }
        out.push_str(&now[at..a]);
        out.push_str(&with);
        at = b;
    }
    out.push_str(&now[at..]);
    (out != now).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "//! The crate.\n//!\n//! ```\n//! assert_eq!(calc::double(2), 4);\n//! ```\n\n/// Doubles.\n///\n/// ```\n/// assert_eq!(calc::double(3), 6);\n/// ```\n///\n/// ```\n/// assert_eq!(calc::double(0), 0);\n/// ```\n#[inline]\npub fn double(x: i32) -> i32 {\n    x * 2\n}\n\npub struct S;\n\nimpl S {\n    /// ```\n    /// assert_eq!(calc::S::new().0, 1);\n    /// ```\n    pub fn new() -> Self { S }\n}\n\n/// No example here.\npub const K: i32 = 1;\n";

    #[test]
    fn items_are_keyed_by_kind_name_and_ordinal_with_their_doc_lines() {
        let o = owners(BASE);
        let keys: Vec<&str> = o.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(
            keys,
            vec![
                "//!#0",
                "fn double#0",
                "struct S#0",
                "impl S#0",
                "impl S / fn new#0",
                "const K#0"
            ]
        );
        assert_eq!(o[0].docs.len(), 5);
        assert_eq!(o[1].docs.len(), 9);
        assert_eq!(o[4].docs.len(), 3);
        assert!(o[2].docs.is_empty());
    }

    #[test]
    fn the_bases_examples_replace_the_changes_over_the_changes_code() {
        // The fix adds lines above the examples and the cheat edits one.
        let now = BASE
            .replace("x * 2", "let y = x;\n    y + y")
            .replace(
                "/// Doubles.\n",
                "/// Doubles.\n///\n/// Never overflows.\n",
            )
            .replace("double(3), 6", "double(3), 7")
            .replace("//! The crate.\n", "//! The crate.\n//! More.\n");
        let laid = with_base_doctests(BASE, &now).unwrap();
        assert!(laid.contains("y + y"), "{laid}");
        assert!(laid.contains("double(3), 6"), "{laid}");
        assert!(!laid.contains("double(3), 7"), "{laid}");
        assert!(!laid.contains("Never overflows"), "{laid}");
        assert_eq!(owners(&laid).len(), owners(BASE).len());
        // Nothing to lay when only the code changed.
        let code_only = BASE.replace("x * 2", "x + x");
        assert_eq!(with_base_doctests(BASE, &code_only), None);
    }

    #[test]
    fn a_removed_example_is_laid_back_and_a_doc_like_string_is_not_a_doc() {
        let now = BASE.replace(
            "    /// ```\n    /// assert_eq!(calc::S::new().0, 1);\n    /// ```\n",
            "",
        );
        let laid = with_base_doctests(BASE, &now).unwrap();
        assert!(laid.contains("S::new().0, 1"), "{laid}");
        let tricky =
            "pub fn f() -> &'static str {\n    \"\n/// ```\n/// assert!(false);\n/// ```\n\"\n}\n";
        let o = owners(tricky);
        assert!(o.iter().all(|o| o.docs.is_empty()), "{o:?}");
    }

    #[test]
    fn an_item_hidden_in_a_macro_call_leaves_its_examples_unplaced() {
        let hidden = BASE.replace(
            "#[inline]\npub fn double(x: i32) -> i32 {\n    x * 2\n}\n",
            "define! { double }\n",
        );
        assert_eq!(unplaced(BASE, &hidden), ["fn double"]);
        assert!(unplaced(BASE, &BASE.replace("x * 2", "x + x")).is_empty());
    }

    #[test]
    fn only_fences_rustdoc_runs_are_examples() {
        for (fence, runs) in [
            ("```", true),
            ("```rust", true),
            ("```should_panic", true),
            ("```rust,no_run", true),
            ("```edition2021", true),
            ("```text", false),
            ("```ignore", false),
            ("```sh", false),
            ("```toml", false),
        ] {
            let text = format!("/// x\n///\n/// {fence}\n/// y\n/// ```\npub fn f() {{}}\n");
            let o = owners(&text);
            assert_eq!(has_code(&text, &o[0]), runs, "{fence}");
        }
    }

    #[test]
    fn a_method_added_to_another_type_moves_no_example() {
        let now = BASE.replace(
            "pub struct S;\n",
            "pub struct T;\n\nimpl T {\n    pub fn new() -> Self { T }\n}\n\npub struct S;\n",
        );
        assert_eq!(with_base_doctests(BASE, &now), None);
    }

    #[test]
    fn a_renamed_or_new_item_runs_no_example_in_the_bases_tests() {
        let now = BASE.replace("pub fn double", "pub fn twice");
        let laid = with_base_doctests(BASE, &now).unwrap();
        // `twice` is not `double`: the base's examples are not put on it
        // and the change's are not the base's (the listing reports
        // `double`'s as gone).
        assert!(laid.contains("pub fn twice"), "{laid}");
        assert!(!laid.contains("double(3), 6"), "{laid}");
        let added = BASE.replace(
            "/// No example here.\n",
            "/// ```\n/// assert_eq!(calc::K, 1);\n/// ```\n",
        );
        let laid = with_base_doctests(BASE, &added).unwrap();
        assert!(!laid.contains("calc::K, 1"), "{laid}");
        assert!(laid.contains("/// No example here."), "{laid}");
    }
}
