//! The import scanner's spec: each language's import forms, what masking
//! hides, and hunks that start inside a string or comment.

use super::mask::mask;
use super::*;

fn mods(path: &str, lines: &[&str]) -> Vec<String> {
    let c = FileChange::new(path, Operation::Create).with_lines(lines);
    new_imports(&c).into_iter().map(|(_, m)| m).collect()
}

/// Imports of lines added in the middle of an existing file (from
/// line 10): the hunk may continue a string or comment above it.
fn mods_inserted(path: &str, lines: &[&str]) -> Vec<String> {
    let mut c = FileChange::new(path, Operation::Modify).with_lines(lines);
    for l in &mut c.added_lines {
        l.line += 9;
    }
    new_imports(&c).into_iter().map(|(_, m)| m).collect()
}

fn has(found: &[String], m: &str) -> bool {
    found.iter().any(|f| f == m)
}

#[test]
fn rust_use_trees_expand() {
    let m = mods(
        "a.rs",
        &[
            "use std::{fs, process::{Command, Stdio}};",
            "pub use ::x::y as z;",
        ],
    );
    assert_eq!(
        m,
        vec![
            "std::fs",
            "std::process::Command",
            "std::process::Stdio",
            "x::y"
        ]
    );
    let m = mods("a.rs", &["use std::{", "    process,", "};"]);
    assert_eq!(m, vec!["std::process"]);
    assert_eq!(mods("a.rs", &["use std::{process};"]), vec!["std::process"]);
    assert_eq!(mods("a.rs", &["use std as s;"]), vec!["std"]);
    assert_eq!(mods("a.rs", &["use std::*;"]), vec!["std"]);
    assert_eq!(mods("a.rs", &["extern crate std as s;"]), vec!["std"]);
    assert!(reaches_below("a.rs", "std"), "a Rust import reaches below");
    assert!(!reaches_below("a.go", "os") && reaches_below("a.py", "os.*"));
}

#[test]
fn masking() {
    let m = mask(r##"let s = "a//b"; x::y(); // z::w"##, Lang::Rust).code;
    assert!(
        m.contains("x::y()") && !m.contains("z::w") && !m.contains("a//b"),
        "{m}"
    );
    let m = mask(
        r##"f(r#"std::process"#, 'x', '\n', b'y'); g::<'a>()"##,
        Lang::Rust,
    )
    .code;
    assert!(!m.contains("std") && m.contains("g::<'a>()"), "{m}");
    let m = mask(r#"x = '#'; import os # c"#, Lang::Python).code;
    assert!(m.contains("import os") && !m.contains(" c"), "{m}");
    let m = mask(r#"a = `${x}`; /* c */ require("y")"#, Lang::JavaScript);
    assert!(m.code.contains("require(") && !m.code.contains(" c "));
    assert!(!m.code_at(r#"a = `${x}`; /* c */ require(""#.len()));
    assert!(m.code_at("a = `${".len()), "a template's ${{…}} is code");
    let m = mask(r#"f"{__import__('os')}" + "{x}""#, Lang::Python);
    assert!(m.code.contains("__import__(") && !m.code.contains("{x}"));
    // Byte offsets survive non-ASCII text.
    let m = mask("s = \"é\"; import os", Lang::Python);
    assert_eq!(m.code.len(), "s = \"é\"; import os".len());
}

#[test]
fn rust_qualified_paths() {
    let m = mods(
        "a.rs",
        &[
            "let c = std::process::Command::new(\"id\");",
            "::core::ptr::null::<u8>(); x.y::<T>(); Vec::<u8>::new();",
            "my::std::process::run(); let s = \"std::fs::read\";",
        ],
    );
    assert_eq!(
        m,
        vec![
            "std::process::Command::new",
            "core::ptr::null",
            "my::std::process::run"
        ]
    );
    // A path split over lines is one path.
    let m = mods(
        "a.rs",
        &["let c = std::", "    process", "    ::Command::new(x);"],
    );
    assert!(has(&m, "std::process::Command::new"), "{m:?}");
    let m = mods("a.rs", &["std /* c */ :: process::exit(0);"]);
    assert_eq!(m, vec!["std::process::exit"]);
    // Code after a `use …;` on the same line is still read.
    let m = mods("a.rs", &["use a::b; std::process::exit(0);"]);
    assert_eq!(m, vec!["a::b", "std::process::exit"]);
    let m = mods("a.rs", &["use std::{fs::File};"]);
    assert_eq!(m, vec!["std::fs::File"], "no path is read twice");
}

#[test]
fn go_forms() {
    let m = mods(
        "a.go",
        &[
            "import \"fmt\"",
            "import (",
            "\te \"os/exec\" // run",
            "\t_ `unsafe`",
            ")",
            "\t\"net/http\"",
        ],
    );
    assert_eq!(m, vec!["fmt", "os/exec", "unsafe", "net/http"]);
}

#[test]
fn python_forms() {
    let m = mods(
        "a.py",
        &["from os import path as p, sep", "import a.b as c, d"],
    );
    assert_eq!(m, vec!["os", "os.path", "os.sep", "a.b", "d"]);
    for (line, want) in [
        ("m = __import__(\"subprocess\")", "subprocess"),
        ("m = __import__( 'subprocess' ).run", "subprocess"),
        ("m = importlib.import_module('subprocess')", "subprocess"),
        ("m = import_module(name=\"subprocess\")", "subprocess"),
        ("m = __import__(\"\"\"subprocess\"\"\")", "subprocess"),
        (
            "x = f\"{__import__('subprocess').run(['id'])}\"",
            "subprocess",
        ),
        ("exec(\"import subprocess\")", "subprocess"),
        ("eval(\"__import__('subprocess')\")", "subprocess"),
        (
            "exec('x = 1\\nfrom subprocess import run')",
            "subprocess.run",
        ),
        ("from os import *", "os.*"),
    ] {
        assert!(
            has(&mods("a.py", &[line]), want),
            "{line}: {:?}",
            mods("a.py", &[line])
        );
    }
    // Over several lines.
    let m = mods(
        "a.py",
        &["from os import (", "    path,", "    system,", ")"],
    );
    assert!(has(&m, "os.system") && has(&m, "os.path"), "{m:?}");
    let m = mods("a.py", &["from os import path, \\", "    system"]);
    assert!(has(&m, "os.system"), "{m:?}");
    let m = mods("a.py", &["m = __import__(", "    \"subprocess\"", ")"]);
    assert!(has(&m, "subprocess"), "{m:?}");
    // Strings and comments are not imports.
    let m = mods(
        "a.py",
        &[
            "s = \"import subprocess\"",
            "# __import__('subprocess')",
            "doc = \"\"\"",
            "import subprocess",
            "\"\"\"",
        ],
    );
    assert!(m.is_empty(), "{m:?}");
}

#[test]
fn js_forms() {
    let m = mods(
        "a.ts",
        &[
            "import x, { y } from 'lib/x';",
            "const cp = require(\"node:child_process\");",
            "} from \"z\";",
            "import 'side';",
            "await import(`dyn`);",
        ],
    );
    assert_eq!(m, vec!["lib/x", "child_process", "z", "side", "dyn"]);
    for lines in [
        &["import {", "  exec } from \"child_process\";"][..],
        &["import cp", "  from 'child_process'"],
        &["export * as cp from 'child_process'"],
        &["export { exec } from \"child_process\""],
        &["const cp = require(", "  'child_process'", ")"],
        &["const cp = require(/* c */ 'child_process')"],
        &["const r = require.resolve('child_process')"],
        &["const r = require?.('child_process')"],
        &["const x = `${require('child_process').execSync('id')}`"],
        &["const re = /\"/; require(\"child_process\")"],
        &["eval(\"require('child_process')\")"],
        &["const f = new Function(\"return require('child_process')\")"],
        &["const x = a", "  / require('child_process') / 2"],
        &["if (x) /\"/.test(s); require(\"child_process\"); //\""],
        &["const y = (a) / require('child_process') / 2"],
    ] {
        assert!(
            has(&mods("a.js", lines), "child_process"),
            "{lines:?}: {:?}",
            mods("a.js", lines)
        );
    }
    let m = mods(
        "a.js",
        &[
            "// require(\"child_process\")",
            "const s = \"require('child_process')\";",
            "/* import('child_process') */",
            "const t = `import x from 'child_process'`;",
            "const u = Array.from('child_process');",
        ],
    );
    assert!(m.is_empty(), "{m:?}");
}

#[test]
fn a_hunk_inside_an_existing_string_or_comment_is_also_read_as_code() {
    // The base had `let s = "…` open above; the agent closes it, runs
    // code and opens another string that the base closes below.
    let rs = mods_inserted("a.rs", &["\"; std::process::exit(0); let t = \""]);
    assert!(has(&rs, "std::process::exit"), "{rs:?}");
    let py = mods_inserted("a.py", &["\"\"\"; import subprocess; x = \"\"\""]);
    assert!(has(&py, "subprocess"), "{py:?}");
    let js = mods_inserted("a.js", &["`; require('child_process'); `"]);
    assert!(has(&js, "child_process"), "{js:?}");
    let js = mods_inserted("a.js", &["*/ require('child_process') /*"]);
    assert!(has(&js, "child_process"), "{js:?}");
    // From line 1 the state is known: a string is a string.
    assert!(mods("a.rs", &["let s = \"std::process::exit\";"]).is_empty());
}
