//! Unit tests for `runner.rs`.

use super::super::testing::{check_files, rules};
use super::super::{check, FileVersions, Input};
use super::shadowed_modules::SHADOWED;
use super::*;

fn one(path: &str, base: Option<&str>, new: Option<&str>, cmds: &[&str]) -> Vec<Issue> {
    let cmds: Vec<String> = cmds.iter().map(|s| s.to_string()).collect();
    let files = [FileVersions {
        path,
        old_path: None,
        base,
        new,
    }];
    check(&Input {
        files: &files,
        test_commands: &cmds,
        allow: &[],
        ledger: None,
        crate_words: None,
    })
}

const CARGO: &str =
    "[package]\nname = \"x\"\nversion = \"0.1.0\"\n\n[dependencies]\nserde = \"1\"\n";

#[test]
fn build_script_added_anywhere() {
    for path in ["build.rs", "crates/core/build.rs"] {
        let issues = one(path, None, Some("fn main() {}"), &[]);
        assert_eq!(
            rules(&issues),
            [("test-integrity/runner-config", Severity::Error)]
        );
        assert!(
            issues[0].message.contains("added: a build script"),
            "{}",
            issues[0].message
        );
    }
}

#[test]
fn cargo_config_anywhere() {
    for path in [".cargo/config.toml", "sub/.cargo/config"] {
        let issues = one(
            path,
            Some(""),
            Some("[build]\nrustflags = [\"--cfg\", \"x\"]\n"),
            &[],
        );
        assert_eq!(
            rules(&issues),
            [("test-integrity/runner-config", Severity::Error)]
        );
    }
    assert_eq!(
        rules(&one("src/config.toml", Some(""), Some("x = 1"), &[])),
        []
    );
}

#[test]
fn cargo_lib_test_false_appended() {
    let now = format!("{CARGO}\n[lib]\ntest = false\n");
    let issues = one("Cargo.toml", Some(CARGO), Some(&now), &[]);
    assert_eq!(
        rules(&issues),
        [("test-integrity/runner-config", Severity::Error)]
    );
    assert!(
        issues[0].message.contains("`lib.test` unset → false"),
        "{}",
        issues[0].message
    );
    let now = CARGO.replace("[package]", "[package]\nautotests = false");
    assert_eq!(
        rules(&one("Cargo.toml", Some(CARGO), Some(&now), &[])).len(),
        1
    );
    let now = format!("{CARGO}\n[[test]]\nname = \"it\"\nharness = false\n");
    assert_eq!(
        rules(&one("Cargo.toml", Some(CARGO), Some(&now), &[])).len(),
        1
    );
    let now = format!("{CARGO}\n[profile.test]\nopt-level = 3\n");
    assert_eq!(
        rules(&one("Cargo.toml", Some(CARGO), Some(&now), &[])).len(),
        1
    );
}

#[test]
fn what_the_tests_link_instead_is_runner_config() {
    // Code that runs at build time, or a crate the tests use replaced.
    for added in [
        "\n[build-dependencies]\ncc = \"1\"\n",
        "\n[lib]\nproc-macro = true\n",
        "\n[patch.crates-io]\nserde = { path = \"vendor/serde\" }\n",
        "\n[dev-dependencies]\npretty_assertions = { path = \"vendor/pa\" }\n",
    ] {
        let now = format!("{CARGO}{added}");
        assert_eq!(
            rules(&one("Cargo.toml", Some(CARGO), Some(&now), &[])),
            [("test-integrity/runner-config", Severity::Error)],
            "{added}"
        );
    }
    // A dev-dependency from the registry is an ordinary change.
    let now = format!("{CARGO}\n[dev-dependencies]\ntempfile = \"3\"\n");
    assert_eq!(rules(&one("Cargo.toml", Some(CARGO), Some(&now), &[])), []);
}

#[test]
fn toolchain_files_and_modules_that_shadow_the_runner() {
    for path in [
        "rust-toolchain.toml",
        "rust-toolchain",
        ".python-version",
        ".tool-versions",
        "sitecustomize.py",
        "lib/zz.pth",
        "pytest/__init__.py",
        "unittest.py",
        "src/_pytest/x.py",
    ] {
        assert_eq!(
            rules(&one(path, None, Some("x\n"), &[])),
            [("test-integrity/runner-config", Severity::Error)],
            "{path}"
        );
    }
    for path in ["src/calc/unittest.py", "docs/pytest.md", "mytest.py"] {
        let issues = one(path, None, Some("x\n"), &[]);
        let found = rules(&issues);
        assert!(
            !found.contains(&("test-integrity/runner-config", Severity::Error)),
            "{path}: {found:?}"
        );
    }
}

#[test]
fn a_new_bench_target_is_not_runner_config() {
    let now = format!("{CARGO}\n[[bench]]\nname = \"speed\"\nharness = false\n");
    assert_eq!(rules(&one("Cargo.toml", Some(CARGO), Some(&now), &[])), []);
    let base = format!("{CARGO}\n[[bench]]\nname = \"speed\"\n");
    assert_eq!(
        rules(&one("Cargo.toml", Some(&base), Some(&now), &[])).len(),
        1
    );
}

#[test]
fn cargo_dependency_or_format_change_is_not_runner_config() {
    let now = CARGO.replace(
        "serde = \"1\"",
        "serde = { version = \"1\" }\nregex = \"1\"",
    );
    assert_eq!(rules(&one("Cargo.toml", Some(CARGO), Some(&now), &[])), []);
    let base = format!("{CARGO}[lib]\ntest = false\n");
    let now = format!("lib = {{ test = false }}\n{CARGO}");
    assert_eq!(rules(&one("Cargo.toml", Some(&base), Some(&now), &[])), []);
}

#[test]
fn script_named_by_the_test_command() {
    let issues = one(
        "scripts/test.sh",
        Some("cargo test\n"),
        Some("exit 0\n"),
        &["sh scripts/test.sh"],
    );
    assert_eq!(
        rules(&issues),
        [("test-integrity/runner-config", Severity::Error)]
    );
    assert!(
        issues[0].message.contains("sh scripts/test.sh"),
        "{}",
        issues[0].message
    );
    // Not named by any command: an ordinary file.
    assert_eq!(
        rules(&one(
            "scripts/test.sh",
            Some("a"),
            Some("b"),
            &["cargo test"]
        )),
        []
    );
    for (cmd, path) in [
        ("./run-tests", "run-tests"),
        ("cd sub && make test", "sub/Makefile"),
        ("bash -c 'cd tools; ./check.sh'", "tools/check.sh"),
        ("python ci/run.py --fast", "ci/run.py"),
        ("pytest -c ci/pytest-ci.ini", "ci/pytest-ci.ini"),
    ] {
        let issues = one(path, Some("a"), Some("b"), &[cmd]);
        assert_eq!(rules(&issues).len(), 1, "{cmd}");
    }
}

#[test]
fn package_json_test_script_and_jest_key() {
    let base = r#"{"scripts": {"test": "jest", "ci": "jest --ci", "lint": "eslint"}}"#;
    let now = base.replace("\"jest\"", "\"jest --passWithNoTests -t none\"");
    assert_eq!(
        rules(&one("package.json", Some(base), Some(&now), &[])).len(),
        1
    );
    let now = base.replace("\"eslint\"", "\"eslint .\"");
    assert_eq!(rules(&one("package.json", Some(base), Some(&now), &[])), []);
    let now = base.replace("jest --ci", "true");
    assert_eq!(
        rules(&one(
            "package.json",
            Some(base),
            Some(&now),
            &["npm run ci"]
        ))
        .len(),
        1
    );
    let now = base.replace(
        "{\"scripts\"",
        "{\"jest\": {\"testMatch\": []}, \"scripts\"",
    );
    assert_eq!(
        rules(&one("package.json", Some(base), Some(&now), &[])).len(),
        1
    );
}

#[test]
fn python_runner_files() {
    for path in ["pytest.ini", "tests/conftest.py", "tox.ini", "noxfile.py"] {
        let issues = one(path, Some("a"), Some("b"), &[]);
        assert_eq!(
            rules(&issues),
            [("test-integrity/runner-config", Severity::Error)],
            "{path}"
        );
    }
    let base = "[tool.pytest.ini_options]\naddopts = \"-q\"\n";
    let now = "[tool.pytest.ini_options]\naddopts = \"-q -k 'not slow'\"\n";
    assert_eq!(
        rules(&one("pyproject.toml", Some(base), Some(now), &[])).len(),
        1
    );
    let base = "[metadata]\nname = x\n[tool:pytest]\naddopts = -q\n";
    let now = "[metadata]\nname = y\n[tool:pytest]\naddopts = -q\n";
    assert_eq!(rules(&one("setup.cfg", Some(base), Some(now), &[])), []);
    let now = "[metadata]\nname = x\n[tool:pytest]\naddopts = -q --deselect tests/a.py\n";
    assert_eq!(
        rules(&one("setup.cfg", Some(base), Some(now), &[])).len(),
        1
    );
}

#[test]
fn js_and_ci_files() {
    for path in [
        "jest.config.js",
        "web/vitest.config.ts",
        ".mocharc.yml",
        "karma.conf.js",
        ".github/workflows/ci.yml",
        ".gitlab-ci.yml",
        ".circleci/config.yml",
        "Makefile",
        "justfile",
    ] {
        let issues = one(path, Some("a"), Some("b"), &[]);
        assert_eq!(rules(&issues).len(), 1, "{path}");
    }
}

#[test]
fn manifest_that_stops_parsing_is_a_warning() {
    let issues = one("Cargo.toml", Some(CARGO), Some("[lib\n"), &[]);
    assert_eq!(
        rules(&issues),
        [("test-integrity/runner-config", Severity::Warning)]
    );
}

#[test]
fn renamed_config_is_reported() {
    let issues = check_files(&[FileVersions {
        path: "old_conftest.py.bak",
        old_path: Some("conftest.py"),
        base: Some("x"),
        new: Some("x"),
    }]);
    assert_eq!(
        rules(&issues),
        [("test-integrity/runner-config", Severity::Error)]
    );
}

#[test]
fn join_normalizes() {
    assert_eq!(join("a/b", "../c/./d.sh"), "a/c/d.sh");
    assert_eq!(join("", "./run"), "run");
    assert_eq!(join("x", "/abs/p"), "abs/p");
}

#[test]
fn config_paths_table() {
    let none = CommandFiles::new(&[]);
    let cases: &[(&str, bool)] = &[
        // pytest's configuration files and plugins.
        ("pytest.ini", true),
        ("sub/.pytest.ini", true),
        ("pytest.toml", true),
        (".pytest.toml", true),
        ("tox.ini", true),
        ("pkg/tests/conftest.py", true),
        ("setup.py", true),
        ("vendor/x-1.0.dist-info/entry_points.txt", true),
        ("x.egg-info/entry_points.txt", true),
        ("docs/entry_points.txt", false),
        // Python start-up and modules that shadow the runner or stdlib.
        ("sitecustomize.py", true),
        ("usercustomize.py", true),
        ("site-packages/evil.pth", true),
        ("json.py", true),
        ("src/json.py", true),
        ("tests/json.py", true),
        ("test/typing.py", true),
        ("logging/__init__.py", true),
        ("src/email/parser.py", true),
        ("tests/unittest/__init__.py", true),
        ("iniconfig.py", true),
        ("pluggy/__init__.py", true),
        ("_ssl.cpython-311-x86_64-linux-gnu.so", true),
        ("src/parser.py", false),
        ("tests/test_json_parsing.py", false),
        ("mypkg/json_utils.py", false),
        ("mypkg/json.py", false),
        ("tests/helpers/json.py", false),
        ("test.py", false),
        ("tests/test_x.py", false),
        ("html/index.html", false),
        ("email/README.md", false),
        ("__main__.py", false),
        (".pythonrc", false),
        // Cargo.
        (".cargo/config", true),
        ("a/b/.cargo/config.toml", true),
        ("rust-toolchain", true),
        ("rust-toolchain.toml", true),
        ("crates/x/build.rs", true),
        (".config/nextest.toml", true),
        ("clippy.toml", false),
        ("rustfmt.toml", false),
        // Go.
        ("go.work", true),
        ("go.work.sum", true),
        ("go.mod", false),
        ("pkg/main_test.go", false),
        // JavaScript.
        ("jest.config.ts", true),
        ("web/vitest.workspace.ts", true),
        (".mocharc.json", true),
        ("karma.conf.cjs", true),
        ("playwright.config.ts", true),
        ("babel.config.js", true),
        (".babelrc", true),
        ("web/.babelrc.json", true),
        (".swcrc", true),
        (".npmrc", true),
        ("tsconfig.json", false),
        ("src/setupTests.ts", false),
        (".env", false),
    ];
    for (path, want) in cases {
        assert_eq!(decides_checks(path, &none), *want, "{path}");
    }
}

#[test]
fn shadowed_names_are_sorted_for_binary_search() {
    assert!(SHADOWED.windows(2).all(|w| w[0] < w[1]));
    for m in [
        "pytest",
        "_pytest",
        "pluggy",
        "py",
        "iniconfig",
        "cProfile",
        "zoneinfo",
    ] {
        assert!(SHADOWED.binary_search(&m).is_ok(), "{m}");
    }
}

#[test]
fn plugin_entry_points_and_cargo_links_are_settings() {
    let base = "[project]\nname = \"x\"\n";
    for now in [
        "[project]\nname = \"x\"\n\n[project.entry-points.pytest11]\nx = \"x.plugin\"\n",
        "[project]\nname = \"x\"\n\n[project.entry-points.\"pytest11\"]\nx = \"x.plugin\"\n",
        "[project]\nname = \"x\"\n\n[tool.pytest]\naddopts = [\"-p\", \"x.plugin\"]\n",
        "[project]\nname = \"x\"\n\n[tool.poetry.plugins.\"pytest11\"]\nx = \"x.plugin\"\n",
    ] {
        assert_eq!(
            rules(&one("pyproject.toml", Some(base), Some(now), &[])),
            [("test-integrity/runner-config", Severity::Error)],
            "{now}"
        );
    }
    let other =
        "[project]\nname = \"x\"\n\n[project.entry-points.console_scripts]\nx = \"x:main\"\n";
    assert_eq!(
        rules(&one("pyproject.toml", Some(base), Some(other), &[])),
        []
    );
    let cfg = "[metadata]\nname = x\n[options.entry_points]\nconsole_scripts =\n    x = x:main\n";
    let now = format!("{cfg}pytest11 =\n    x = x.plugin\n");
    assert_eq!(
        rules(&one("setup.cfg", Some(cfg), Some(&now), &[])).len(),
        1
    );
    let now = cfg.replace("x = x:main", "x = x:cli");
    assert_eq!(rules(&one("setup.cfg", Some(cfg), Some(&now), &[])), []);
    for added in [
        "\n[package.metadata]\n",
        "\n[replace]\n\"serde:1.0.0\" = { path = \"vendor/serde\" }\n",
        "\n[target.'cfg(unix)'.dev-dependencies]\npa = { path = \"vendor/pa\" }\n",
    ] {
        let now = format!("{CARGO}{added}");
        let want = usize::from(!added.contains("metadata"));
        assert_eq!(
            rules(&one("Cargo.toml", Some(CARGO), Some(&now), &[])).len(),
            want,
            "{added}"
        );
    }
    let now = CARGO.replace("[package]", "[package]\nlinks = \"z\"");
    assert_eq!(
        rules(&one("Cargo.toml", Some(CARGO), Some(&now), &[])).len(),
        1
    );
}
