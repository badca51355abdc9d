//! The keys table of docs/guide.md is generated from the command table
//! (the same list the `?` help overlay shows): this test renders it and
//! fails when the guide's copy differs. `UPDATE_DOCS=1 cargo test
//! keys_table` rewrites the guide's table between its markers.

use rascal_tui::draw::help::{entries, MOUSE};

const GUIDE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/guide.md");
const BEGIN: &str = "<!-- keys:begin";
const END: &str = "<!-- keys:end -->";

/// The table, one row per help entry (key, where, what), the mouse last.
fn table() -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = String::from("| key | where | what |\n|---|---|---|\n");
    for (place, key, what) in entries() {
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            cell(key),
            cell(&place),
            cell(what)
        ));
    }
    out.push_str(&format!("| {} | dashboard | {} |\n", MOUSE.0, MOUSE.1));
    out
}

#[test]
fn keys_table_in_the_guide_is_the_command_table() {
    let doc = std::fs::read_to_string(GUIDE).unwrap();
    let begin = doc
        .find(BEGIN)
        .expect("docs/guide.md has no keys:begin marker");
    let start = begin + doc[begin..].find('\n').unwrap() + 1;
    let end = doc.find(END).expect("docs/guide.md has no keys:end marker");
    assert!(start <= end, "the keys markers are out of order");
    let want = table();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(GUIDE, format!("{}{want}{}", &doc[..start], &doc[end..])).unwrap();
        return;
    }
    assert_eq!(
        &doc[start..end],
        want,
        "docs/guide.md's keys table is not the command table's: run `UPDATE_DOCS=1 cargo test keys_table`"
    );
}

#[test]
fn every_command_of_the_table_is_in_the_generated_rows() {
    // The table cannot drop a key: each command's label is in a row of its
    // screens, or covered by an earlier row's label (`p` after `n/p`).
    let t = table();
    for c in rascal_tui::commands::COMMANDS {
        assert!(
            t.lines().any(|l| l.contains(&format!("`{}`", c.label))
                || l.split('`')
                    .nth(1)
                    .is_some_and(|k| k.split('/').any(|p| p == c.label))),
            "{} is in no row",
            c.label
        );
    }
}
