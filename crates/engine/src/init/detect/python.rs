//! A Python project: how its tests run (pytest, or the standard library's
//! unittest when it has test files and nothing of pytest), its linters
//! (ruff, flake8, mypy) and its lockfiles.

use super::{no_tests, Check, Ecosystem, Listing, Project, Role};

pub(super) const PYTHON_MANIFESTS: &[&str] =
    &["pyproject.toml", "setup.py", "setup.cfg", "requirements*"];

/// What a Python project shows of its tools: its configuration, its
/// requirements and its test files.
struct Signs<'a> {
    files: Vec<&'a str>,
    table: Option<toml::Table>,
    setup_cfg: String,
    tox_ini: String,
    /// pytest is configured, required or its layout used.
    pytest: bool,
    /// A `test_*.py` or `*_test.py` file.
    test_files: bool,
    /// What the project is known by: its manifest, its requirements, or
    /// (a plain test-files project) its first test file.
    manifest: String,
}

impl Signs<'_> {
    fn has(&self, name: &str) -> bool {
        self.files.contains(&name)
    }

    /// A `[tool.NAME]` table in pyproject.toml.
    fn tool(&self, name: &str) -> bool {
        self.table
            .as_ref()
            .and_then(|t| t.get("tool"))
            .and_then(|t| t.get(name))
            .is_some()
    }
}

/// At most this many test files are read for their style.
const TEST_FILES_READ: usize = 50;

/// A `test_*.py` or `*_test.py` file.
fn is_test_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
}

fn signs<'a>(repo: &'a Listing, dir: &'a str) -> Signs<'a> {
    let read = |name: &str| repo.read(&Listing::at(dir, name)).unwrap_or_default();
    let pyproject = read("pyproject.toml");
    let files: Vec<&str> = repo.under(dir).collect();
    let mut signs = Signs {
        table: pyproject.parse().ok(),
        setup_cfg: read("setup.cfg"),
        tox_ini: read("tox.ini"),
        pytest: false,
        test_files: false,
        manifest: String::new(),
        files,
    };
    let requirements: String = signs
        .files
        .iter()
        .filter(|p| {
            let name = p.rsplit('/').next().unwrap_or(p);
            (name.starts_with("requirements") && name.ends_with(".txt") && !p.contains('/'))
                || (p.starts_with("requirements/") && p.ends_with(".txt"))
        })
        .map(|p| read(p))
        .collect::<Vec<_>>()
        .join("\n");
    let mentions_pytest = |text: &str| {
        regex::Regex::new(r"(?m)(^|[^A-Za-z0-9_-])pytest([^A-Za-z0-9_-]|$)")
            .unwrap()
            .is_match(text)
    };
    signs.pytest = signs.tool("pytest")
        || signs.has("pytest.ini")
        || signs.has("conftest.py")
        || signs.setup_cfg.contains("[tool:pytest]")
        || signs.tox_ini.contains("[pytest]")
        || signs.files.iter().any(|p| p.starts_with("tests/"))
        || mentions_pytest(&requirements)
        || mentions_pytest(&pyproject)
        || signs
            .files
            .iter()
            .filter(|p| is_test_file(p))
            .take(TEST_FILES_READ)
            .any(|p| rascal_scan::ledger::pytest_style(&read(p)));
    signs.test_files = signs.files.iter().any(|p| is_test_file(p));
    let first_test = signs.files.iter().find(|p| {
        let name = p.rsplit('/').next().unwrap_or(p);
        name.ends_with(".py") && (name.starts_with("test") || name.ends_with("_test.py"))
    });
    signs.manifest = ["pyproject.toml", "setup.py", "setup.cfg"]
        .iter()
        .find(|m| signs.has(m))
        .map(|m| Listing::at(dir, m))
        .unwrap_or_else(|| match (requirements.is_empty(), first_test) {
            (true, Some(t)) => t.to_string(),
            _ => Listing::at(dir, "requirements.txt"),
        });
    signs
}

pub(super) fn python(repo: &Listing, dir: &str) -> Project {
    let signs = signs(repo, dir);
    let manifest = signs.manifest.clone();
    let mut checks = Vec::new();
    let mut notes = Vec::new();
    // Test files and nothing of pytest: the standard library's runner.
    let unittest = signs.test_files && !signs.pytest;
    test_run(repo, dir, &signs, unittest, &mut checks, &mut notes);
    checks.extend(linters(dir, &signs));
    let mut summary = vec![format!("Python ({manifest}")];
    if unittest {
        summary.push("unittest".into());
    } else if signs.pytest || signs.test_files {
        summary.push("pytest".into());
    }
    Project {
        ecosystem: Ecosystem::Python,
        dir: dir.to_string(),
        manifest: manifest.clone(),
        summary: format!("{})", summary.join(", ")),
        setup: "Runs with the Python on your PATH, on a copy of the change: a virtualenv inside the repository is not part of the copy, so install the test tools where PATH finds them (or prefix the commands, e.g. `uv run`, with `network: host`).",
        checks,
        lockfiles: repo.lockfiles(dir, &["poetry.lock", "uv.lock", "Pipfile.lock", "pdm.lock"]),
        notes,
    }
}

/// The test run: unittest or pytest, written commented out when there is
/// no test file yet; none (and a note) when there is nothing of either.
fn test_run(
    repo: &Listing,
    dir: &str,
    signs: &Signs,
    unittest: bool,
    checks: &mut Vec<Check>,
    notes: &mut Vec<String>,
) {
    let manifest = &signs.manifest;
    let runner = if unittest {
        "python3 -m unittest".to_string()
    } else {
        (repo.pytest)()
    };
    let mut tests = Check::new(Role::Tests, "tests", dir, &runner, "10m");
    tests.why = Some(if unittest {
        format!("`{runner}`: test files and no pytest in sight, so the standard library's runner (it discovers `test*.py` and puts the project on sys.path)")
    } else if runner.starts_with("python") {
        format!("`{runner}` (the Python that has pytest here) also puts the project on sys.path")
    } else {
        format!("`{runner}`: no `python3`/`python` on PATH can import pytest here; if imports of the project fail, set `pythonpath = [\".\"]` under [tool.pytest.ini_options]")
    });
    if signs.test_files {
        checks.push(tests);
    } else if signs.pytest {
        checks.push(tests);
        no_tests(checks, notes, manifest, "`test_*.py` file");
    } else {
        notes.push(format!(
            "{manifest}: no pytest and no test files found, so there is no test run; add one to guardrails.yaml when there are tests"
        ));
    }
}

/// The linters the project configures.
fn linters(dir: &str, signs: &Signs) -> Vec<Check> {
    let mut checks = Vec::new();
    if signs.tool("ruff") || signs.has("ruff.toml") || signs.has(".ruff.toml") {
        checks.push(Check::lint(dir, "ruff", "ruff check .", "10m"));
    }
    if signs.has(".flake8")
        || signs.setup_cfg.contains("[flake8]")
        || signs.tox_ini.contains("[flake8]")
    {
        checks.push(Check::lint(dir, "flake8", "flake8", "10m"));
    }
    if signs.tool("mypy") || signs.has("mypy.ini") || signs.setup_cfg.contains("[mypy]") {
        checks.push(Check::lint(dir, "mypy", "mypy .", "10m"));
    }
    checks
}
