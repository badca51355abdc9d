//! Unit tests for `backstop.rs`.

use super::*;

fn rules(path: &str, base: Option<&str>, new: &str) -> Vec<String> {
    let mut out = Vec::new();
    check(
        &FileVersions {
            path,
            old_path: None,
            base,
            new: Some(new),
        },
        &mut out,
    );
    out.into_iter().map(|f| f.issue.rule).collect()
}

const BASE: &str = "pub fn add(a: i32, b: i32) -> i32 { a - b }\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() { assert_eq!(add(2, 2), 4); }\n}\n";

#[test]
fn each_trick_is_found_by_its_rule() {
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "init-array",
            "src/lib.rs",
            "#[used]\n#[link_section = \".init_array\"]\nstatic I: extern \"C\" fn() = f;\n",
            RULE_RUNS_BEFORE,
        ),
        (
            "ctor",
            "src/lib.rs",
            "#[ctor::ctor]\nfn f() {}\n",
            RULE_RUNS_BEFORE,
        ),
        (
            "c-constructor",
            "native/x.c",
            "__attribute__((constructor)) static void f(void) {}\n",
            RULE_RUNS_BEFORE,
        ),
        (
            "exit-in-test",
            "src/lib.rs",
            "#[cfg(test)]\nmod more {\n    #[test]\n    fn z() { std::process::exit(0) }\n}\n",
            RULE_ENDS_RUN,
        ),
        (
            "py-exit",
            "tests/test_x.py",
            "import atexit, os\natexit.register(lambda: os._exit(0))\n",
            RULE_ENDS_RUN,
        ),
        (
            "go-exit",
            "x_test.go",
            "func TestMain(m *testing.M) { m.Run(); os.Exit(0) }\n",
            RULE_ENDS_RUN,
        ),
        (
            "forged",
            "src/lib.rs",
            "fn f() { println!(\"test tests::adds ... ok\"); }\n",
            RULE_FORGED,
        ),
        (
            "macro",
            "src/lib.rs",
            "#[cfg(test)]\nmod t {\n    macro_rules! assert_eq { ($($t:tt)*) => {} }\n}\n",
            RULE_ASSERT_MACRO,
        ),
        (
            "py-import-runner",
            "calc.py",
            "import unittest\n",
            RULE_PATCHES_RUNNER,
        ),
        (
            "py-from-pytest",
            "calc.py",
            "from _pytest import runner\n",
            RULE_PATCHES_RUNNER,
        ),
        (
            "py-setattr",
            "tests/test_x.py",
            "setattr(unittest.TestCase, 'assertEqual', lambda *a: None)\n",
            RULE_PATCHES_RUNNER,
        ),
        (
            "py-assign",
            "test_x.py",
            "unittest.TestCase.assertEqual = lambda *a, **k: None\n",
            RULE_PATCHES_RUNNER,
        ),
        (
            "py-ctypes-exit",
            "calc.py",
            "ctypes.CDLL(None)._exit(0)\n",
            RULE_PATCHES_RUNNER,
        ),
        (
            "py-sys-modules",
            "calc.py",
            "sys.modules['pytest'] = fake\n",
            RULE_PATCHES_RUNNER,
        ),
    ];
    for (name, path, added, rule) in cases {
        let new = format!("{BASE}{added}");
        let found = rules(path, Some(BASE), &new);
        assert!(
            found.iter().any(|r| r == rule),
            "{name}: want {rule}, got {found:?}"
        );
        assert!(
            rules(path, Some(&new), &new).is_empty(),
            "{name}: unchanged is clean"
        );
    }
}

#[test]
fn a_test_module_copy_of_the_code_under_test_is_shadowing() {
    let new = BASE.replace(
        "    use super::*;\n",
        "    use super::*;\n    fn add(a: i32, b: i32) -> i32 { a + b }\n",
    );
    assert_eq!(rules("src/lib.rs", Some(BASE), &new), vec![RULE_SHADOWED]);
    // A helper with a name of its own is fine.
    let helper = BASE.replace(
        "    use super::*;\n",
        "    use super::*;\n    fn two() -> i32 { 2 }\n",
    );
    assert!(rules("src/lib.rs", Some(BASE), &helper).is_empty());
}

#[test]
fn ordinary_changes_are_clean() {
    let new = BASE.replace("a - b", "a + b").replace(
            "fn adds() { assert_eq!(add(2, 2), 4); }",
            "fn adds() { assert_eq!(add(2, 2), 4); }\n    #[test]\n    fn adds_more() { assert_eq!(add(1, 2), 3); }",
        );
    assert!(rules("src/lib.rs", Some(BASE), &new).is_empty());
    let py = "import os\n\ndef test_x():\n    assert os.getcwd()\n";
    assert!(rules("tests/test_x.py", None, py).is_empty());
    // Tests import their runner and use its assertions; code may mock.
    let tests = "import unittest\nimport pytest\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        self.assertEqual(1, 1)\n        assert type(self) != unittest.TestCase\n";
    assert!(rules("tests/test_x.py", None, tests).is_empty());
    let code = "from unittest import mock\nimport sys\nsys.modules['calc_cache'] = None\n";
    let skip = "import pytest\npytest.skip(\"later\", allow_module_level=True)\n";
    assert!(!rules("tests/test_x.py", None, skip)
        .iter()
        .any(|r| r == RULE_PATCHES_RUNNER));
    assert!(rules("calc.py", None, code).is_empty());
}

const PY_BASE: &str = "import os\n\n\ndef add(a, b):\n    return a + b\n";
const GO_BASE: &str = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n";
const C_BASE: &str = "int add(int a, int b) { return a + b; }\n";

fn base_for(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, e)| e) {
        Some("py") => PY_BASE,
        Some("go") => GO_BASE,
        Some("c") => C_BASE,
        _ => BASE,
    }
}

/// Each case: a name, a path, the code added (after the path's base
/// text) and the rule it must raise; unchanged, it must raise nothing.
fn found_by(cases: &[(&str, &str, &str, &str)]) {
    for (name, path, added, rule) in cases {
        let base = base_for(path);
        let new = format!("{base}{added}");
        let found = rules(path, Some(base), &new);
        assert!(
            found.iter().any(|r| r == rule),
            "{name}: want {rule}, got {found:?}"
        );
        assert!(
            rules(path, Some(&new), &new).is_empty(),
            "{name}: unchanged is clean"
        );
    }
}

#[test]
fn honest_code_is_clean() {
    let cases: &[(&str, &str, &str)] = &[
            ("command", "src/lib.rs", "use std::process::Command;\npub fn run() -> bool { Command::new(\"ls\").status().is_ok() }\n#[cfg(test)]\nmod t {\n    #[test]\n    fn runs() { assert!(std::process::Command::new(\"true\").status().is_ok()); }\n}\n"),
            ("exit in main", "src/main.rs", "fn main() {\n    std::process::exit(run())\n}\n"),
            ("own assert helper", "src/lib.rs", "#[cfg(test)]\nmod t {\n    macro_rules! my_assert { ($e:expr) => { assert!($e) } }\n    #[test]\n    fn z() { my_assert!(true); }\n}\n"),
            ("pretty assertions", "tests/it.rs", "use pretty_assertions::assert_eq;\n#[test]\nfn z() { assert_eq!(1, 1); }\n"),
            ("libtest", "benches/b.rs", "extern crate test;\nextern crate alloc;\n"),
            ("ordinary section", "src/lib.rs", "#[link_section = \".text.hot\"]\npub fn f() {}\n"),
            ("progress message", "src/lib.rs", "pub fn f() { println!(\"Loading... done\"); eprintln!(\"all {} ok\", 3); }\n"),
            ("os.path", "calc.py", "import os\np = os.path.join('a', 'b')\nenv = os.environ.get('HOME')\n"),
            ("cli main", "cli.py", "import sys\n\n\ndef main():\n    args = sys.argv[1:]\n    sys.exit(run(args))\n\n\nif __name__ == '__main__':\n    main()\n"),
            ("pytest test", "tests/test_calc.py", "import pytest\nfrom unittest import mock\nimport unittest\n\nimport calc\n\n\ndef test_add(monkeypatch):\n    monkeypatch.setattr('calc.helper', lambda: 0)\n    with mock.patch('builtins.open'):\n        with pytest.raises(ValueError):\n            calc.add(1, 'x')\n\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        self.assertEqual(calc.add(1, 2), 3)\n"),
            ("kwargs setattr", "calc.py", "class C:\n    def __init__(self, **kw):\n        for k, v in kw.items():\n            setattr(self, k, v)\n"),
            ("own modules", "calc.py", "import sys\nfrom importlib import import_module\nj = import_module('json')\nme = sys.modules[__name__]\nhave = 'numpy' in sys.modules\nx = sys.modules.get('yaml')\n"),
            ("kill a child", "calc.py", "import os, signal\nos.kill(proc.pid, signal.SIGTERM)\n"),
            ("go test main", "x_test.go", "func TestMain(m *testing.M) { os.Exit(m.Run()) }\n"),
            ("c section", "native/x.c", "static const char *name = \".text\";\n__attribute__((unused)) static int x;\n"),
        ];
    for (name, path, text) in cases {
        let found = rules(path, None, text);
        assert!(found.is_empty(), "{name}: {found:?}");
    }
}

#[test]
fn counted_against_the_base_not_by_line() {
    let base = "import os\n\n\ndef stop():\n    os._exit(1)\n";
    // Reformatted: the same construct, now split over lines.
    let reformatted = "import os\n\n\ndef stop():\n    os._exit(\n        1,\n    )\n";
    assert!(rules("calc.py", Some(base), reformatted).is_empty());
    // A second one added is found, on its line.
    let more = format!("{base}\n\ndef again():\n    os._exit(0)\n");
    let mut out = Vec::new();
    check(
        &FileVersions {
            path: "calc.py",
            old_path: None,
            base: Some(base),
            new: Some(&more),
        },
        &mut out,
    );
    assert_eq!(
        out.len(),
        1,
        "{:?}",
        out.iter().map(|f| &f.issue).collect::<Vec<_>>()
    );
    assert_eq!(out[0].issue.line, Some(9));
    // Aliased at the base, plain now: the same construct.
    let aliased = "from os import _exit as e\n\n\ndef stop():\n    e(1)\n";
    assert!(rules("calc.py", Some(aliased), base).is_empty());
}

#[test]
fn hostile_token_streams_stay_linear() {
    const N: usize = 20_000;
    let texts = [
        "getattr(".repeat(N),
        "x: import ".repeat(N),
        "#[link_section = ".repeat(N),
        "#[cfg_attr(all(), ".repeat(N),
        "use {".repeat(N),
        "a::".repeat(N),
        "x.".repeat(N),
        "\"a\" ".repeat(N),
        "\"{}\" % ".repeat(N),
        "global_asm!(".repeat(N),
        "__attribute__((".repeat(N),
        "setattr(".repeat(N),
        "r#".repeat(N),
        "\\\n".repeat(N),
    ];
    let started = std::time::Instant::now();
    for text in &texts {
        for path in ["src/lib.rs", "tests/test_x.py", "x_test.go", "x.c"] {
            let _ = rules(path, Some(""), text);
        }
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

mod by_rule;
