//! What "the base's own tests" are, file by file: the test files (and the
//! data files under test directories) a base-tests run takes from the base
//! commit, and, for Rust, the `#[cfg(test)]` modules inside source files,
//! which replace the candidate's in the copy those tests run in. Pure text
//! work; the pipeline writes the tree and runs it.

use super::lex::{Source, Syntax};

/// Directory names whose every file belongs to the tests (code and data).
const TEST_DIRS: &[&str] = &[
    "tests",
    "test",
    "testdata",
    "__tests__",
    "spec",
    "fixtures",
    "__snapshots__",
];

/// Whether `path` is a test file or test data: what a base-tests run lays
/// from the base. Rust files under `src/` are not (their test modules are
/// swapped by [`with_base_test_modules`] instead).
pub fn is_test_path(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let in_test_dir = path
        .split('/')
        .rev()
        .skip(1)
        .any(|d| TEST_DIRS.contains(&d));
    if in_test_dir {
        return true;
    }
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    match ext {
        "py" => stem.starts_with("test_") || stem.ends_with("_test") || stem == "conftest",
        "go" => stem.ends_with("_test"),
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => {
            stem.contains(".test") || stem.contains(".spec")
        }
        "rs" => stem == "tests" && path.contains("src/"),
        _ => false,
    }
}

/// Source code extensions: a file with one is code, not data.
const SOURCE: &[&str] = &[
    "rs", "py", "pyi", "go", "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "java", "kt",
    "kts", "scala", "groovy", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "m", "mm", "cs", "fs",
    "rb", "php", "swift", "zig", "lua", "sh", "bash", "pl", "pm", "r", "jl", "ex", "exs", "erl",
    "hs", "ml", "dart", "vue", "svelte", "so", "dylib", "dll", "a", "o", "wasm", "pyc",
];

/// Files that build a project or run its tests, whatever their extension.
const BUILD: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    "build.rs",
    "go.mod",
    "go.sum",
    "go.work",
    "go.work.sum",
    "package.json",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "tox.ini",
    "pytest.ini",
    "requirements.txt",
    "Pipfile",
    "Pipfile.lock",
    "poetry.lock",
    "Makefile",
    "makefile",
    "GNUmakefile",
    "CMakeLists.txt",
    "pom.xml",
    "build.gradle",
    "settings.gradle",
    "Dockerfile",
    "justfile",
    "Justfile",
    "rust-toolchain",
    "rust-toolchain.toml",
    ".env",
    "conftest.py",
];

/// Whether `path` is data: not source code, not a file that builds the
/// project or runs its tests, not under a directory of tool settings
/// (`.cargo/`, `.github/`, `.rascal/`, …). A marker file, a fixture, a
/// document.
pub fn is_data(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    let in_settings = path
        .split('/')
        .rev()
        .skip(1)
        .any(|d| d.starts_with('.') && d != "." && d != "..");
    !SOURCE.contains(&ext) && !BUILD.contains(&name) && !in_settings && !name.starts_with('.')
}

/// The outer attribute `#[…]` starting at `i`: its text inside the
/// brackets with whitespace left out, and the offset after it. None for
/// anything else, an inner `#![…]` included.
pub(super) fn outer_attribute(src: &Source, i: usize) -> Option<(String, usize)> {
    let j = src.skip_ws(i + 1);
    if src.at(i) != b'#' || src.at(j) != b'[' {
        return None;
    }
    let close = src.close(j);
    let attr = src
        .code_str(j + 1, close)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    Some((attr, close + 1))
}

/// The byte ranges of the top-level `#[cfg(test)]` modules of a Rust file
/// (from the first attribute of the item to its closing brace or `;`).
pub fn rust_test_modules(text: &str) -> Vec<(usize, usize)> {
    let src = Source::new(text, Syntax::Rust);
    let mut out = Vec::new();
    // Where the attributes before the current item start, and whether one
    // of them is `cfg(test)`.
    let mut item_start: Option<usize> = None;
    let mut cfg_test = false;
    let mut i = 0;
    while i < src.len() {
        let c = src.at(i);
        match c {
            b'#' => {
                let Some((attr, after)) = outer_attribute(&src, i) else {
                    // An inner attribute's brackets are skipped below.
                    i += 1;
                    continue;
                };
                item_start.get_or_insert(i);
                cfg_test |= attr == "cfg(test)";
                i = after;
            }
            b'{' => {
                i = src.close(i) + 1;
                item_start = None;
                cfg_test = false;
            }
            b'(' | b'[' => i = src.close(i) + 1,
            b';' => {
                i += 1;
                item_start = None;
                cfg_test = false;
            }
            _ if super::lex::is_ident_byte(c) => {
                let Some((word, e)) = src.word(i) else {
                    i += 1;
                    continue;
                };
                if word == "mod" && cfg_test {
                    let start = item_start.unwrap_or(i);
                    let mut k = e;
                    while k < src.len() && src.at(k) != b'{' && src.at(k) != b';' {
                        k += 1;
                    }
                    let end = if src.at(k) == b'{' { src.close(k) } else { k };
                    let end = (end + 1).min(text.len());
                    out.push((start, end));
                    i = end;
                    item_start = None;
                    cfg_test = false;
                    continue;
                }
                i = e;
            }
            _ => i += 1,
        }
    }
    out
}

/// The names of a Rust file's out-of-line test modules
/// (`#[cfg(test)] mod helpers;`).
fn out_of_line_test_modules(text: &str) -> Vec<String> {
    rust_test_modules(text)
        .into_iter()
        .filter_map(|(a, b)| {
            let item = text[a..b].trim_end().strip_suffix(';')?;
            let name = item.rsplit("mod ").next()?.trim();
            let ok =
                !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
            ok.then(|| name.to_string())
        })
        .collect()
}

/// Whether the Rust file at `path` belongs to a module the base declares
/// `#[cfg(test)]` out of line (`#[cfg(test)] mod helpers;` in `src/lib.rs`
/// makes `src/helpers.rs` and everything under `src/helpers/` test code),
/// reading the declaring files with `read_base`.
pub fn in_rust_test_module(path: &str, read_base: &dyn Fn(&str) -> Option<String>) -> bool {
    if !path.ends_with(".rs") {
        return false;
    }
    let parts: Vec<&str> = path.split('/').collect();
    for i in (0..parts.len()).rev() {
        let name = parts[i].strip_suffix(".rs").unwrap_or(parts[i]);
        if matches!(name, "mod" | "lib" | "main") {
            continue;
        }
        let dir = parts[..i].join("/");
        let within = |f: &str| {
            if dir.is_empty() {
                f.to_string()
            } else {
                format!("{dir}/{f}")
            }
        };
        let mut declaring = vec![within("mod.rs"), within("lib.rs"), within("main.rs")];
        if !dir.is_empty() {
            declaring.push(format!("{dir}.rs"));
        }
        let declared = declaring
            .iter()
            .filter_map(|d| read_base(d))
            .any(|text| out_of_line_test_modules(&text).iter().any(|m| m == name));
        if declared {
            return true;
        }
    }
    false
}

/// The candidate's Rust file `now` with its `#[cfg(test)]` modules
/// replaced by the base's (`base`): the code is the candidate's, the tests
/// the base's. None when neither side has a test module (nothing to swap).
pub fn with_base_test_modules(base: &str, now: &str) -> Option<String> {
    let theirs = rust_test_modules(now);
    let ours = rust_test_modules(base);
    if theirs.is_empty() && ours.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(now.len() + base.len() / 2);
    let mut at = 0;
    for (a, b) in &theirs {
        out.push_str(&now[at..*a]);
        at = *b;
    }
    out.push_str(&now[at..]);
    for (a, b) in &ours {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
        out.push_str(&base[*a..*b]);
        out.push('\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_paths_are_test_files_and_test_data() {
        for p in [
            "tests/it.rs",
            "tests/data/expected.json",
            "pkg/testdata/golden.txt",
            "test_add.py",
            "pkg/add_test.py",
            "conftest.py",
            "add_test.go",
            "src/add.test.ts",
            "src/__tests__/x.js",
            "src/parse/tests.rs",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in [
            "src/lib.rs",
            "add.py",
            "add.go",
            "src/add.ts",
            "Cargo.toml",
            "data/x.json",
        ] {
            assert!(!is_test_path(p), "{p}");
        }
    }

    #[test]
    fn data_is_what_is_neither_code_nor_a_build_or_runner_file() {
        for p in [
            "marker.txt",
            "data/cases.json",
            "fixtures/x.bin",
            "docs/notes.md",
            "MARKER",
        ] {
            assert!(is_data(p), "{p}");
        }
        for p in [
            "src/lib.rs",
            "calc.py",
            "Cargo.toml",
            "sub/package.json",
            "pytest.ini",
            ".cargo/config.toml",
            ".env",
            "Makefile",
            "tools/run.sh",
        ] {
            assert!(!is_data(p), "{p}");
        }
    }

    const BASE: &str = "pub fn add(a: u8, b: u8) -> u8 { a + b }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(1, 2), 3); }\n}\n";

    #[test]
    fn the_candidates_test_module_gives_way_to_the_bases() {
        let now = "pub fn add(a: u8, b: u8) -> u8 { a.wrapping_add(b) }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_ne!(super::add(1, 2), 3); }\n    macro_rules! assert_eq { ($($t:tt)*) => {} }\n}\n";
        let swapped = with_base_test_modules(BASE, now).unwrap();
        assert!(swapped.contains("a.wrapping_add(b)"), "{swapped}");
        assert!(
            swapped.contains("assert_eq!(super::add(1, 2), 3)"),
            "{swapped}"
        );
        assert!(!swapped.contains("assert_ne!"), "{swapped}");
        assert!(!swapped.contains("macro_rules!"), "{swapped}");
    }

    #[test]
    fn test_modules_are_found_with_their_attributes_and_out_of_line() {
        let text = "use x;\n#[cfg(test)]\n#[allow(unused)]\nmod tests { fn a() { let s = \"}\"; } }\n#[cfg(test)] mod more;\nfn keep() {}\n#[cfg(not(test))]\nmod real {}\n";
        let spans = rust_test_modules(text);
        let parts: Vec<&str> = spans.iter().map(|(a, b)| &text[*a..*b]).collect();
        assert_eq!(
            parts,
            vec![
                "#[cfg(test)]\n#[allow(unused)]\nmod tests { fn a() { let s = \"}\"; } }",
                "#[cfg(test)] mod more;"
            ]
        );
    }

    #[test]
    fn files_of_out_of_line_test_modules_are_test_code() {
        let base = |p: &str| match p {
            "src/lib.rs" => Some("pub mod calc;\n#[cfg(test)]\nmod helpers;\n".to_string()),
            "src/calc.rs" => Some("pub fn f() {}\n#[cfg(test)] mod checks;\n".to_string()),
            _ => None,
        };
        for p in [
            "src/helpers.rs",
            "src/helpers/mod.rs",
            "src/helpers/deep/x.rs",
            "src/calc/checks.rs",
        ] {
            assert!(in_rust_test_module(p, &base), "{p}");
        }
        for p in [
            "src/calc.rs",
            "src/lib.rs",
            "src/other.rs",
            "src/helpers.txt",
        ] {
            assert!(!in_rust_test_module(p, &base), "{p}");
        }
    }

    #[test]
    fn a_test_module_the_candidate_removed_comes_back_and_one_it_added_goes() {
        let now = "pub fn add(a: u8, b: u8) -> u8 { a + b }\n";
        let swapped = with_base_test_modules(BASE, now).unwrap();
        assert!(swapped.contains("fn adds()"), "{swapped}");
        let added =
            "pub fn f() {}\n#[cfg(test)]\nmod tests { #[test] fn t() { std::process::exit(0) } }\n";
        let swapped = with_base_test_modules("pub fn f() {}\n", added).unwrap();
        assert!(!swapped.contains("exit"), "{swapped}");
        assert_eq!(with_base_test_modules("fn a() {}", "fn b() {}"), None);
    }
}
