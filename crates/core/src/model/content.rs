//! What a changed file's bytes are to the layers: text, read line by line by
//! banned patterns, imports, line counts and the secret scanner; or binary,
//! read byte by byte by the secret scanner only.
//!
//! Text is decided so that content cannot be hidden by calling it binary: a
//! file is text when it is UTF-8 (control bytes allowed: a NUL in a comment
//! does not make a Rust file binary), when it has no NUL byte at all (git's
//! own rule: Latin-1 text stays text), or when its name or `#!` line says it
//! is a script or source file, whatever its bytes (bash skips NULs, Python
//! honours a `coding:` line). Only the rest — images, archives, compiled
//! objects — is binary.

/// Is `bytes`, the content (or the first part of the content) of the file at
/// `path`, text?
pub fn is_text(path: &str, bytes: &[u8]) -> bool {
    utf8_except_cut_end(bytes)
        || !bytes.contains(&0)
        || bytes.starts_with(b"#!")
        || is_source_path(path)
}

/// UTF-8, allowing a character cut at the very end (the content may be
/// only the first part of a file).
fn utf8_except_cut_end(bytes: &[u8]) -> bool {
    match std::str::from_utf8(bytes) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    }
}

/// File name extensions (lower case) of source, script and configuration
/// files: some tool reads them as text whatever bytes they hold.
const SOURCE_EXTENSIONS: &[&str] = &[
    "bash",
    "bat",
    "c",
    "cc",
    "cfg",
    "cjs",
    "clj",
    "cmake",
    "cmd",
    "conf",
    "cpp",
    "cs",
    "css",
    "cts",
    "cxx",
    "dart",
    "env",
    "erl",
    "ex",
    "exs",
    "fish",
    "go",
    "gradle",
    "groovy",
    "h",
    "hcl",
    "hh",
    "hpp",
    "hs",
    "htm",
    "html",
    "ini",
    "java",
    "jl",
    "js",
    "json",
    "jsx",
    "kt",
    "kts",
    "ksh",
    "lua",
    "m",
    "mjs",
    "mk",
    "ml",
    "mm",
    "mts",
    "nix",
    "php",
    "pl",
    "pm",
    "properties",
    "ps1",
    "py",
    "pyi",
    "pyw",
    "r",
    "rb",
    "rs",
    "scala",
    "scss",
    "sh",
    "sql",
    "svelte",
    "swift",
    "tf",
    "toml",
    "ts",
    "tsx",
    "vue",
    "xml",
    "yaml",
    "yml",
    "zsh",
];

/// File names (lower case) of build and configuration files without an
/// extension.
const SOURCE_NAMES: &[&str] = &[
    "dockerfile",
    "makefile",
    "gnumakefile",
    "justfile",
    "rakefile",
    "gemfile",
    "vagrantfile",
    "jenkinsfile",
    "containerfile",
    ".bashrc",
    ".profile",
    ".zshrc",
    ".envrc",
    ".env",
];

/// Does `path` name a source, script or configuration file?
pub fn is_source_path(path: &str) -> bool {
    let name = path
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(path)
        .to_ascii_lowercase();
    if SOURCE_NAMES.contains(&name.as_str()) || name.starts_with(".env.") {
        return true;
    }
    name.rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && SOURCE_EXTENSIONS.contains(&ext))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_binary() {
        assert!(is_text("src/a.rs", b"// \0 a comment\nfn main() {}\n"));
        assert!(is_text("notes.txt", b"caf\xe9 au lait\n"));
        assert!(is_text("run", b"#!/bin/sh\n\xff\0\necho hi\n"));
        assert!(is_text("x.py", b"# coding: latin-1\n\xff\0\nimport os\n"));
        assert!(is_text("cut.txt", "é".as_bytes().split_at(1).0));
        assert!(!is_text("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"));
        assert!(!is_text("a.bin", b"\xff\xfe\0\x01"));
        assert!(is_text("empty", b""));
    }

    #[test]
    fn source_paths() {
        for p in [
            "src/lib.rs",
            "a/B.PY",
            "Dockerfile",
            "deploy/.env",
            ".env.local",
            "x.yaml",
        ] {
            assert!(is_source_path(p), "{p}");
        }
        for p in ["logo.png", "a.bin", ".rs", "data"] {
            assert!(!is_source_path(p), "{p}");
        }
    }
}
