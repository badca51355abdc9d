//! Each backstop rule finds its construct written plainly, split over lines,
//! with comments between its tokens, and reached through an alias.

use super::*;

#[test]
fn runs_before_tests_plain_split_commented_aliased() {
    let f = "static I: extern \"C\" fn() = f;\n";
    found_by(&[
            ("plain", "src/lib.rs", &format!("#[used]\n#[link_section = \".init_array\"]\n{f}"), RULE_RUNS_BEFORE),
            ("split", "src/lib.rs", &format!("#[\n  link_section\n  =\n  \".init_array.00099\"\n]\n{f}"), RULE_RUNS_BEFORE),
            ("comments", "src/lib.rs", &format!("#[ /* a */ link_section /* b */ = // c\n \".ctors\"]\n{f}"), RULE_RUNS_BEFORE),
            ("unsafe", "src/lib.rs", &format!("#[unsafe(link_section = \"__DATA,__mod_init_func\")]\n#[used]\n{f}"), RULE_RUNS_BEFORE),
            ("cfg_attr", "src/lib.rs", &format!("#[cfg_attr(all(), link_section = \".CRT$XCU\")]\n{f}"), RULE_RUNS_BEFORE),
            ("concat", "src/lib.rs", &format!("#[link_section = concat!(\".init\", \"_array\")]\n{f}"), RULE_RUNS_BEFORE),
            ("escaped", "src/lib.rs", &format!("#[link_section = \"\\x2einit_array\"]\n{f}"), RULE_RUNS_BEFORE),
            ("macro variable", "src/lib.rs", "macro_rules! put { ($s:literal) => { #[link_section = $s] #[used] static I: extern \"C\" fn() = f; } }\nput!(\".init_array\");\n", RULE_RUNS_BEFORE),
            ("destructor section", "src/lib.rs", &format!("#[link_section = \".fini_array\"]\n{f}"), RULE_RUNS_BEFORE),
            ("global_asm", "src/lib.rs", "core::arch::global_asm!(\".pushsection .init_array,\\\"aw\\\"\", \".quad {f}\", f = sym f);\n", RULE_RUNS_BEFORE),
            ("ctor", "src/lib.rs", "#[ctor]\nfn f() {}\n", RULE_RUNS_BEFORE),
            ("ctor path split", "src/lib.rs", "#[ctor\n  :: /* x */ ctor]\nfn f() {}\n", RULE_RUNS_BEFORE),
            ("ctor aliased", "src/lib.rs", "use ctor::ctor as init;\n#[init]\nfn f() {}\n", RULE_RUNS_BEFORE),
            ("raw ident", "src/lib.rs", &format!("#[r#link_section = \".init_array\"]\n{f}"), RULE_RUNS_BEFORE),
            ("c plain", "native/x.c", "__attribute__((constructor)) static void f(void) {}\n", RULE_RUNS_BEFORE),
            ("c split", "native/x.c", "__attribute__ (\n (\n  constructor\n )\n) static void f(void) {}\n", RULE_RUNS_BEFORE),
            ("c comments", "native/x.c", "__attribute__((/* a */ constructor /* b */ (101))) static void f(void) {}\n", RULE_RUNS_BEFORE),
            ("c gnu attribute", "native/x.c", "[[gnu::constructor]] static void f(void) {}\n", RULE_RUNS_BEFORE),
            ("c msvc section", "native/x.c", "#pragma section(\".CRT$XCU\", read)\n__declspec(allocate(\".CRT$XCU\")) void (*p)(void) = f;\n", RULE_RUNS_BEFORE),
        ]);
}

#[test]
fn assertion_redefined_plain_split_commented_aliased() {
    let body = "{ ($($t:tt)*) => {} }\n";
    found_by(&[
        (
            "plain",
            "src/lib.rs",
            &format!("macro_rules! assert_eq {body}"),
            RULE_ASSERT_MACRO,
        ),
        (
            "split",
            "src/lib.rs",
            &format!("macro_rules!\n    assert_eq\n{body}"),
            RULE_ASSERT_MACRO,
        ),
        (
            "comments",
            "src/lib.rs",
            &format!("macro_rules! /* x */ assert // y\n {body}"),
            RULE_ASSERT_MACRO,
        ),
        (
            "raw name",
            "src/lib.rs",
            &format!("macro_rules! r#assert_eq {body}"),
            RULE_ASSERT_MACRO,
        ),
        (
            "unreachable",
            "src/lib.rs",
            &format!("macro_rules! unreachable {body}"),
            RULE_ASSERT_MACRO,
        ),
        (
            "matches",
            "src/lib.rs",
            &format!("#[macro_export]\nmacro_rules! matches {body}"),
            RULE_ASSERT_MACRO,
        ),
        (
            "debug_assert_ne exported",
            "src/lib.rs",
            &format!("#[macro_export]\nmacro_rules! debug_assert_ne {body}"),
            RULE_ASSERT_MACRO,
        ),
        (
            "renamed",
            "src/lib.rs",
            "use some_crate::fake_assert as assert_eq;\n",
            RULE_ASSERT_MACRO,
        ),
        (
            "renamed pub(crate)",
            "src/lib.rs",
            "pub(crate) use x as\n  assert_eq;\n",
            RULE_ASSERT_MACRO,
        ),
        (
            "renamed in a group",
            "src/lib.rs",
            "use fake::{ok as /* */ assert, other};\n",
            RULE_ASSERT_MACRO,
        ),
        (
            "proc macro",
            "src/lib.rs",
            "#[proc_macro]\npub fn assert_eq(input: TokenStream) -> TokenStream { input }\n",
            RULE_ASSERT_MACRO,
        ),
    ]);
}

#[test]
fn ends_the_run_plain_split_commented_aliased_rust() {
    let test = |body: &str| format!("#[cfg(test)]\nmod more {{\n{body}\n}}\n");
    found_by(&[
        (
            "rust plain",
            "src/lib.rs",
            &test("#[test]\nfn z() { std::process::exit(0) }"),
            RULE_ENDS_RUN,
        ),
        (
            "rust split",
            "src/lib.rs",
            &test("#[test]\nfn z() { std::process\n    ::exit(0) }"),
            RULE_ENDS_RUN,
        ),
        (
            "rust comments",
            "src/lib.rs",
            &test("#[test]\nfn z() { std:: /* a */ process /* b */ :: exit(0) }"),
            RULE_ENDS_RUN,
        ),
        (
            "rust alias",
            "src/lib.rs",
            &test("use std::process::exit as quit;\n#[test]\nfn z() { quit(0) }"),
            RULE_ENDS_RUN,
        ),
        (
            "rust module alias",
            "src/lib.rs",
            &test("use std::process as p;\n#[test]\nfn z() { p::exit(0) }"),
            RULE_ENDS_RUN,
        ),
        (
            "rust abort",
            "tests/it.rs",
            "#[test]\nfn z() { std::process::abort() }\n",
            RULE_ENDS_RUN,
        ),
        (
            "rust libc alias",
            "tests/it.rs",
            "extern crate libc as c;\n#[test]\nfn z() { unsafe { c::_exit(0) } }\n",
            RULE_ENDS_RUN,
        ),
        (
            "rust glob",
            "tests/it.rs",
            "use std::process::*;\n#[test]\nfn z() { exit(0) }\n",
            RULE_ENDS_RUN,
        ),
    ]);
}

#[test]
fn ends_the_run_plain_split_commented_aliased_py() {
    found_by(&[
        ("py plain", "calc.py", "os._exit(0)\n", RULE_ENDS_RUN),
        (
            "py split",
            "calc.py",
            "os._exit(\n    0\n)\n",
            RULE_ENDS_RUN,
        ),
        (
            "py continued",
            "calc.py",
            "x = os \\\n    ._exit\n",
            RULE_ENDS_RUN,
        ),
        (
            "py comments",
            "calc.py",
            "os._exit(  # bye\n    0)\n",
            RULE_ENDS_RUN,
        ),
        (
            "py from-import alias",
            "calc.py",
            "from os import _exit as e\ne(0)\n",
            RULE_ENDS_RUN,
        ),
        (
            "py module alias",
            "calc.py",
            "import os as o\no._exit(0)\n",
            RULE_ENDS_RUN,
        ),
        (
            "py posix",
            "calc.py",
            "import posix\nposix._exit(0)\n",
            RULE_ENDS_RUN,
        ),
        (
            "py assigned import",
            "calc.py",
            "o = __import__('os')\no._exit(0)\n",
            RULE_ENDS_RUN,
        ),
        (
            "py getattr concatenated",
            "calc.py",
            "getattr(os, '_ex' + 'it')(0)\n",
            RULE_ENDS_RUN,
        ),
        (
            "py getattr computed",
            "calc.py",
            "getattr(os, name)(0)\n",
            RULE_ENDS_RUN,
        ),
    ]);
}

#[test]
fn ends_the_run_py_kill_hooks_and_exits() {
    found_by(&[
        (
            "py kill self",
            "calc.py",
            "os.kill(os.getpid(), 9)\n",
            RULE_ENDS_RUN,
        ),
        (
            "py atexit anywhere",
            "calc.py",
            "import atexit\natexit.register(report)\n",
            RULE_ENDS_RUN,
        ),
        (
            "py atexit decorator",
            "calc.py",
            "import atexit as a\n@a.register\ndef bye():\n    pass\n",
            RULE_ENDS_RUN,
        ),
        (
            "py signal",
            "calc.py",
            "import signal\nsignal.signal(signal.SIGTERM, lambda *a: os._exit(0))\n",
            RULE_ENDS_RUN,
        ),
        (
            "py exec",
            "calc.py",
            "os.execv('/bin/true', ['true'])\n",
            RULE_ENDS_RUN,
        ),
        (
            "py sys.exit in a test",
            "tests/test_x.py",
            "import sys\ndef test_x():\n    sys.exit(0)\n",
            RULE_ENDS_RUN,
        ),
        (
            "py exit builtin in a test",
            "tests/test_x.py",
            "def test_x():\n    exit(0)\n",
            RULE_ENDS_RUN,
        ),
    ]);
}

#[test]
fn ends_the_run_plain_split_commented_aliased_go() {
    found_by(&[
        (
            "go plain",
            "x_test.go",
            "func TestMain(m *testing.M) { m.Run(); os.Exit(0) }\n",
            RULE_ENDS_RUN,
        ),
        (
            "go split",
            "x_test.go",
            "func TestMain(m *testing.M) { m.Run(); os.\n\tExit(0) }\n",
            RULE_ENDS_RUN,
        ),
        (
            "go comments",
            "x_test.go",
            "func TestMain(m *testing.M) { m.Run(); os. /* x */ Exit(0) }\n",
            RULE_ENDS_RUN,
        ),
        (
            "go alias",
            "x_test.go",
            "import xos \"os\"\nfunc TestMain(m *testing.M) { m.Run(); xos.Exit(0) }\n",
            RULE_ENDS_RUN,
        ),
    ]);
}

#[test]
fn forged_results_plain_split_commented_assembled() {
    found_by(&[
        (
            "rust plain",
            "src/lib.rs",
            "fn f() { println!(\"test result: ok. 3 passed\"); }\n",
            RULE_FORGED,
        ),
        (
            "rust format pieces",
            "src/lib.rs",
            "fn f() { println!(\n  \"{} {}\",\n  \"test result:\",\n  \"ok\"); }\n",
            RULE_FORGED,
        ),
        (
            "rust concat",
            "src/lib.rs",
            "fn f() { print!(concat!(\"test res\", /* x */ \"ult: ok\")); }\n",
            RULE_FORGED,
        ),
        (
            "rust stringify",
            "src/lib.rs",
            "fn f() { println!(\"{}\", stringify!(test result: ok)); }\n",
            RULE_FORGED,
        ),
        (
            "py adjacent",
            "calc.py",
            "print(\"test result\" \": ok\")\n",
            RULE_FORGED,
        ),
        (
            "py split with a comment",
            "calc.py",
            "print(\n    \"test tests::adds \"  # x\n    \"... ok\"\n)\n",
            RULE_FORGED,
        ),
        (
            "py percent",
            "calc.py",
            "print(\"--- %s: TestAdd\" % \"PASS\")\n",
            RULE_FORGED,
        ),
        (
            "go plus",
            "calc.go",
            "func f() { fmt.Println(\"--- \" + /* x */ \"PASS: TestAdd (0.00s)\") }\n",
            RULE_FORGED,
        ),
    ]);
}

#[test]
fn patches_runner_plain_split_commented_aliased() {
    found_by(&[
            ("import alias", "calc.py", "import pytest as p\n", RULE_PATCHES_RUNNER),
            ("from _pytest alias", "calc.py", "from _pytest import reports as r\n", RULE_PATCHES_RUNNER),
            ("from unittest TestCase", "calc.py", "from unittest import mock, TestCase\n", RULE_PATCHES_RUNNER),
            ("import_module concatenated", "calc.py", "import importlib\nimportlib.import_module(\"py\" + \"test\")\n", RULE_PATCHES_RUNNER),
            ("import_module concatenated in a test", "tests/test_x.py", "import importlib\nm = importlib.import_module(\"py\" + \"test\")\n", RULE_PATCHES_RUNNER),
            ("__import__ computed", "calc.py", "m = __import__(name)\n", RULE_PATCHES_RUNNER),
            ("sys.modules by a variable", "calc.py", "import sys\nm = sys.modules[name]\n", RULE_PATCHES_RUNNER),
            ("sys.modules walked", "calc.py", "import sys\nfor m in sys.modules.values():\n    pass\n", RULE_PATCHES_RUNNER),
            ("sys.modules aliased", "calc.py", "from sys import modules as m\nx = m[k]\n", RULE_PATCHES_RUNNER),
            ("gc", "tests/test_x.py", "import gc\nfor o in gc.get_objects():\n    pass\n", RULE_PATCHES_RUNNER),
            ("gc referrers aliased", "calc.py", "from gc import get_referrers as g\ng(x)\n", RULE_PATCHES_RUNNER),
            ("TestReport", "tests/test_x.py", "def test_x(request):\n    TestReport.outcome = 'passed'\n", RULE_PATCHES_RUNNER),
            ("pluginmanager", "tests/test_x.py", "def test_x(request):\n    request.config.pluginmanager.unregister(name='terminalreporter')\n", RULE_PATCHES_RUNNER),
            ("config.hook split", "tests/test_x.py", "def test_x(request):\n    request.config\\\n        .hook.pytest_runtest_logreport(report=r)\n", RULE_PATCHES_RUNNER),
            ("TestResult", "calc.py", "import unittest\nunittest.TestResult.addFailure = unittest.TestResult.addSuccess\n", RULE_PATCHES_RUNNER),
            ("builtins", "calc.py", "import builtins\nbuiltins.open = fake_open\n", RULE_PATCHES_RUNNER),
            ("builtins aliased", "calc.py", "import builtins as b\nb.print = quiet\n", RULE_PATCHES_RUNNER),
            ("__builtins__ item", "calc.py", "__builtins__['open'] = fake_open\n", RULE_PATCHES_RUNNER),
            ("setattr computed", "calc.py", "setattr(getattr(obj, a), name, value)\n", RULE_PATCHES_RUNNER),
            ("setattr split with comments", "tests/test_x.py", "setattr(\n    unittest.TestCase,  # x\n    'assertEqual',\n    lambda *a: None,\n)\n", RULE_PATCHES_RUNNER),
            ("TestCase via getattr", "tests/test_x.py", "getattr(unittest, 'Test' + 'Case').assertEqual = f\n", RULE_PATCHES_RUNNER),
            ("TestCase via __import__", "tests/test_x.py", "setattr(getattr(__import__('unit' + 'test'), 'TestCase'), 'assertEqual', f)\n", RULE_PATCHES_RUNNER),
            ("TestCase aliased", "tests/test_x.py", "from unittest import TestCase as T\nT.assertEqual = lambda *a: None\n", RULE_PATCHES_RUNNER),
            ("unittest aliased, augmented", "tests/test_x.py", "import unittest as u\nu.TestCase.maxDiff += 1\n", RULE_PATCHES_RUNNER),
            ("monkeypatch a runner path", "tests/test_x.py", "def test_x(monkeypatch):\n    monkeypatch.setattr('unittest.TestCase.assertEqual', f)\n", RULE_PATCHES_RUNNER),
            ("mock.patch.object", "tests/test_x.py", "from unittest import mock\nmock.patch.object(unittest.TestCase, 'assertEqual', f).start()\n", RULE_PATCHES_RUNNER),
            ("sys.modules runner in a test", "tests/test_x.py", "import sys\nsys.modules['_pytest.runner'] = fake\n", RULE_PATCHES_RUNNER),
            ("ctypes libc", "calc.py", "import ctypes\nlibc = ctypes.CDLL(None)\n", RULE_PATCHES_RUNNER),
            ("ctypes aliased exit", "calc.py", "import ctypes as c\nc.cdll.LoadLibrary('libc.so.6')\n", RULE_PATCHES_RUNNER),
            ("ctypes pythonapi", "calc.py", "import ctypes\nctypes.pythonapi.Py_Exit(0)\n", RULE_PATCHES_RUNNER),
            ("faulthandler", "calc.py", "import faulthandler\nfaulthandler._sigsegv()\n", RULE_PATCHES_RUNNER),
        ]);
}

#[test]
fn std_renamed_is_runner_config() {
    let runner = super::super::super::RULE_RUNNER;
    found_by(&[
        (
            "extern crate as std",
            "src/lib.rs",
            "extern crate fake as std;\n",
            runner,
        ),
        (
            "split with comments",
            "src/lib.rs",
            "extern crate\n  fake /* x */ as\n  core;\n",
            runner,
        ),
        (
            "self as std",
            "src/lib.rs",
            "extern crate self as std;\n",
            runner,
        ),
        (
            "as test",
            "src/lib.rs",
            "extern crate fake as test;\n",
            runner,
        ),
        ("use as alloc", "src/lib.rs", "use fake as alloc;\n", runner),
        (
            "mod std",
            "src/lib.rs",
            "mod std { pub use fake::*; }\n",
            runner,
        ),
    ]);
}
