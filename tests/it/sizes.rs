//! Sizes a reader can hold in their head (docs/architecture.md "Sizes"): no
//! source file of any crate over 600 lines and no function over 100, unit
//! tests included. Functions are found with a real parser, so a brace in a
//! string or a comment cannot hide one or cut one short.

use std::path::{Path, PathBuf};
use syn::spanned::Spanned;

const MAX_FILE_LINES: usize = 600;
const MAX_FN_LINES: usize = 100;

/// Every `.rs` file under the crates' `src/` folders and the root's `src/`.
fn sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("src")];
    for entry in std::fs::read_dir(root.join("crates")).expect("crates/") {
        dirs.push(entry.expect("a crate").path().join("src"));
    }
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The functions of a file longer than `MAX_FN_LINES`, as `name (lines)`,
/// counted from `fn` to the closing brace (doc comments not counted).
fn long_functions(code: &str) -> Result<Vec<String>, String> {
    let file = syn::parse_file(code).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    walk(&file.items, &mut out);
    Ok(out)
}

fn walk(items: &[syn::Item], out: &mut Vec<String>) {
    for item in items {
        match item {
            syn::Item::Fn(f) => measure(&f.sig, &f.block, out),
            syn::Item::Impl(i) => {
                for it in &i.items {
                    if let syn::ImplItem::Fn(f) = it {
                        measure(&f.sig, &f.block, out);
                    }
                }
            }
            syn::Item::Trait(t) => {
                for it in &t.items {
                    if let syn::TraitItem::Fn(syn::TraitItemFn {
                        sig,
                        default: Some(block),
                        ..
                    }) = it
                    {
                        measure(sig, block, out);
                    }
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    walk(items, out);
                }
            }
            _ => {}
        }
    }
}

fn measure(sig: &syn::Signature, block: &syn::Block, out: &mut Vec<String>) {
    let start = sig.fn_token.span().start().line;
    let end = block.brace_token.span.close().end().line;
    let lines = end + 1 - start;
    if lines > MAX_FN_LINES {
        out.push(format!("{} ({lines} lines, from line {start})", sig.ident));
    }
}

#[test]
fn no_source_file_is_over_600_lines_and_no_function_over_100() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut too_big = Vec::new();
    let files = sources();
    assert!(files.len() > 100, "read the sources: found {}", files.len());
    for path in &files {
        let code = std::fs::read_to_string(path).expect("a source file");
        let shown = path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string();
        let lines = code.lines().count();
        if lines > MAX_FILE_LINES {
            too_big.push(format!("{shown}: {lines} lines"));
        }
        for f in long_functions(&code).unwrap_or_else(|e| panic!("{shown}: {e}")) {
            too_big.push(format!("{shown}: fn {f}"));
        }
    }
    assert!(
        too_big.is_empty(),
        "over {MAX_FILE_LINES} lines a file or {MAX_FN_LINES} a function — split it by concern:\n  {}",
        too_big.join("\n  ")
    );
}

#[test]
fn a_long_function_is_found_wherever_it_is_and_braces_in_text_do_not_hide_it() {
    let body = "    let _ = 1;\n".repeat(MAX_FN_LINES);
    let planted = [
        format!("fn free() {{\n{body}}}\n"),
        format!("struct S;\nimpl S {{\n    fn method(&self) {{\n{body}    }}\n}}\n"),
        format!("trait T {{\n    fn provided() {{\n{body}    }}\n}}\n"),
        format!("#[cfg(test)]\nmod tests {{\n    #[test]\n    fn a_test() {{\n{body}    }}\n}}\n"),
        // A closing brace inside a string ends nothing.
        format!("fn quoted() {{\n    let _ = \"}}\";\n{body}}}\n"),
    ];
    for code in &planted {
        let found = long_functions(code).expect("parses");
        assert_eq!(found.len(), 1, "{code:.80}… → {found:?}");
    }
    // And one just within the limit is not flagged.
    let fits = format!(
        "fn fits() {{\n{}}}\n",
        "    let _ = 1;\n".repeat(MAX_FN_LINES - 2)
    );
    assert_eq!(long_functions(&fits).expect("parses"), Vec::<String>::new());
}
