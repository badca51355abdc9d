//! Tests of `rascal init`'s detection: the projects, checks, lockfiles and CI
//! files it finds in sample repositories.

use super::*;

fn detect_in(files: &[(&str, &str)]) -> Detected {
    let paths: Vec<String> = files.iter().map(|(p, _)| p.to_string()).collect();
    let map: BTreeMap<String, String> = files
        .iter()
        .map(|(p, c)| (p.to_string(), c.to_string()))
        .collect();
    detect(&Input {
        paths: &paths,
        read: &|p| map.get(p).cloned(),
        pytest: &|| "python3 -m pytest".into(),
    })
}

fn commands(d: &Detected) -> Vec<(String, String, bool)> {
    d.projects
        .iter()
        .flat_map(|p| &p.checks)
        .map(|c| (c.name.clone(), c.command.clone(), c.enabled))
        .collect()
}

fn on(name: &str, command: &str) -> (String, String, bool) {
    (name.into(), command.into(), true)
}

#[test]
fn a_cargo_crate_gets_cargo_build_test_and_clippy() {
    let d = detect_in(&[
        ("Cargo.toml", "[package]\nname = \"x\"\n"),
        ("Cargo.lock", ""),
        (
            "src/lib.rs",
            "#[cfg(test)]\nmod t {\n    #[test]\n    fn a() {}\n}\n",
        ),
    ]);
    assert_eq!(
        commands(&d),
        [
            on("build", "cargo build --all-targets"),
            on("tests", "cargo test"),
            on("clippy", "cargo clippy --all-targets -- -D warnings"),
        ]
    );
    let p = &d.projects[0];
    assert_eq!(p.lockfiles, ["Cargo.lock"]);
    assert!(p.checks[1].tests && p.checks[1].required);
    assert!(!p.checks[2].required, "lint only warns");
    assert!(p.checks.iter().all(|c| !c.network));
    assert!(d.ci.is_empty());
}

#[test]
fn a_cargo_workspace_checks_every_member_and_is_one_project() {
    let d = detect_in(&[
        ("Cargo.toml", "[workspace]\nmembers = [\"a\", \"b\"]\n"),
        ("a/Cargo.toml", "[package]\nname = \"a\"\n"),
        ("a/tests/it.rs", ""),
        ("b/Cargo.toml", "[package]\nname = \"b\"\n"),
    ]);
    assert_eq!(d.projects.len(), 1, "{d:?}");
    assert_eq!(
        d.projects[0].checks[1].command, "cargo test --workspace",
        "{d:?}"
    );
    assert_eq!(d.projects[0].summary, "Cargo workspace (Cargo.toml)");
}

#[test]
fn without_a_test_the_test_run_is_written_commented_out_and_said() {
    let d = detect_in(&[
        ("Cargo.toml", "[package]\nname = \"x\"\n"),
        ("src/main.rs", "fn main() {}\n"),
    ]);
    let tests = &d.projects[0].checks[1];
    assert!(!tests.enabled);
    assert!(tests
        .why
        .as_deref()
        .unwrap()
        .contains("a test run that runs no test is a FAIL"));
    assert!(d.projects[0].notes[0].contains("no test found"), "{d:?}");
}

#[test]
fn tokio_style_test_attributes_count_as_tests() {
    let d = detect_in(&[
        ("Cargo.toml", "[package]\nname = \"x\"\n"),
        ("src/main.rs", "#[tokio::test]\nasync fn a() {}\n"),
    ]);
    assert!(d.projects[0].checks[1].enabled);
}

#[test]
fn a_go_module_gets_go_build_test_vet_and_go_sum_protected() {
    let d = detect_in(&[
        ("go.mod", "module x\n"),
        ("go.sum", ""),
        ("main.go", "package main\n"),
        ("main_test.go", "package main\n"),
    ]);
    assert_eq!(
        commands(&d),
        [
            on("build", "go build ./..."),
            on("tests", "go test ./..."),
            on("vet", "go vet ./..."),
        ]
    );
    assert_eq!(d.projects[0].lockfiles, ["go.sum"]);
}

#[test]
fn python_uses_pytest_when_configured_and_its_linters() {
    let d = detect_in(&[
            (
                "pyproject.toml",
                "[project]\nname = \"x\"\n[tool.pytest.ini_options]\naddopts = \"-q\"\n[tool.ruff]\nline-length = 100\n",
            ),
            ("poetry.lock", ""),
            ("src/x/__init__.py", ""),
            ("tests/test_x.py", "def test_a(): pass\n"),
        ]);
    assert_eq!(
        commands(&d),
        [on("tests", "python3 -m pytest"), on("ruff", "ruff check .")]
    );
    assert_eq!(d.projects[0].lockfiles, ["poetry.lock"]);
    assert_eq!(d.projects[0].summary, "Python (pyproject.toml, pytest)");
}

#[test]
fn pytest_in_requirements_counts_and_no_test_file_comments_it_out() {
    let d = detect_in(&[
        ("requirements-dev.txt", "pytest==8.0\nblack\n"),
        ("app.py", "print(1)\n"),
    ]);
    assert_eq!(
        commands(&d),
        [("tests".into(), "python3 -m pytest".into(), false)]
    );
    // pytest-cov alone is not pytest.
    let d = detect_in(&[("requirements.txt", "pytest-cov\n"), ("app.py", "")]);
    assert!(d.projects[0].checks.is_empty(), "{d:?}");
    assert!(d.projects[0].notes[0].contains("no pytest"), "{d:?}");
}

#[test]
fn test_functions_at_the_top_of_a_module_are_pytest_even_with_nothing_configured() {
    // unittest would find no test in either file ("Ran 0 tests").
    for test in [
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        "import pytest\n\n\n@pytest.mark.parametrize('a', [1])\nasync def test_add(a):\n    pass\n",
    ] {
        let d = detect_in(&[
            ("calc.py", "def add(a, b):\n    return a + b\n"),
            ("test_calc.py", test),
        ]);
        assert_eq!(commands(&d), [on("tests", "python3 -m pytest")], "{test}");
        assert_eq!(d.projects[0].summary, "Python (test_calc.py, pytest)");
    }
    // A method of a TestCase is indented: still unittest.
    let d = detect_in(&[
        ("calc.py", ""),
        (
            "test_calc.py",
            "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        pass\n",
        ),
    ]);
    assert_eq!(commands(&d), [on("tests", "python3 -m unittest")]);
}

#[test]
fn a_plain_unittest_repository_runs_unittest() {
    let d = detect_in(&[
        ("calc.py", "def add(a, b):\n    return a + b\n"),
        ("test_calc.py", "import unittest\n"),
    ]);
    assert_eq!(commands(&d), [on("tests", "python3 -m unittest")]);
    assert_eq!(d.projects[0].summary, "Python (test_calc.py, unittest)");
    // Test files with pytest configured stay pytest.
    let d = detect_in(&[
        ("requirements.txt", "pytest\n"),
        ("test_calc.py", "def test_x():\n    pass\n"),
    ]);
    assert_eq!(commands(&d), [on("tests", "python3 -m pytest")]);
}

#[test]
fn node_runs_only_the_scripts_that_exist_with_the_lockfiles_manager() {
    let pkg = r#"{"scripts": {"build": "tsc", "test": "vitest run", "dev": "vite"}}"#;
    let d = detect_in(&[("package.json", pkg), ("pnpm-lock.yaml", "")]);
    assert_eq!(
        commands(&d),
        [
            on("build", "pnpm install --frozen-lockfile && pnpm run build"),
            on("tests", "pnpm install --frozen-lockfile && pnpm test"),
        ]
    );
    let p = &d.projects[0];
    assert!(
        p.checks.iter().all(|c| c.network),
        "installing needs the registry"
    );
    assert!(p.checks[1].tests, "vitest is a runner rascal counts");
    assert_eq!(p.lockfiles, ["pnpm-lock.yaml"]);

    let pkg = r#"{"scripts": {"test": "jest", "lint": "eslint ."}}"#;
    let d = detect_in(&[("package.json", pkg), ("package-lock.json", "{}")]);
    assert_eq!(
        commands(&d),
        [
            on("tests", "npm ci --no-audit --no-fund && npm test"),
            on("lint", "npm ci --no-audit --no-fund && npm run lint"),
        ]
    );
    let d = detect_in(&[("package.json", pkg), ("yarn.lock", "")]);
    assert_eq!(
        d.projects[0].checks[1].command,
        "yarn install --frozen-lockfile && yarn run lint"
    );
}

#[test]
fn nodes_placeholder_test_script_and_unknown_runners_are_not_the_test_run() {
    let pkg = r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#;
    let d = detect_in(&[("package.json", pkg)]);
    assert!(d.projects[0].checks.is_empty());
    assert!(d.projects[0].notes[0].contains("placeholder"));

    let pkg = r#"{"scripts": {"test": "mocha"}}"#;
    let d = detect_in(&[("package.json", pkg)]);
    let c = &d.projects[0].checks[0];
    assert!(c.enabled && !c.tests, "{c:?}");
    assert!(c.why.as_deref().unwrap().contains("`mocha`"));
}

#[test]
fn a_monorepo_gets_checks_for_each_project_with_distinct_names() {
    let d = detect_in(&[
        ("Cargo.toml", "[package]\nname = \"x\"\n"),
        ("src/lib.rs", "#[test]\nfn a() {}\n"),
        (
            "web/package.json",
            r#"{"scripts": {"build": "vite build"}}"#,
        ),
        ("web/package-lock.json", "{}"),
        ("node_modules/left-pad/package.json", "{}"),
        (".github/workflows/ci.yml", ""),
        (".gitlab-ci.yml", ""),
    ]);
    let names: Vec<String> = commands(&d).into_iter().map(|c| c.0).collect();
    assert_eq!(
        names,
        ["rust-build", "rust-tests", "rust-clippy", "web-build"]
    );
    assert_eq!(
        d.projects[1].checks[0].command,
        "cd web && npm ci --no-audit --no-fund && npm run build"
    );
    assert_eq!(d.projects[1].lockfiles, ["web/package-lock.json"]);
    assert_eq!(d.ci, [".github/**", ".gitlab-ci.yml"]);
}

#[test]
fn two_ecosystems_in_one_directory_are_told_apart() {
    let d = detect_in(&[
        ("svc/go.mod", "module x\n"),
        ("svc/x_test.go", ""),
        ("svc/package.json", r#"{"scripts": {"lint": "eslint ."}}"#),
    ]);
    let names: Vec<String> = commands(&d).into_iter().map(|c| c.0).collect();
    assert_eq!(
        names,
        [
            "svc-go-build",
            "svc-go-tests",
            "svc-go-vet",
            "svc-node-lint"
        ]
    );
}

#[test]
fn an_empty_repository_has_no_project() {
    let d = detect_in(&[("README.md", "# x\n")]);
    assert!(d.projects.is_empty());
}
