//! What `rascal init` finds in a repository: its languages and tools
//! (Cargo, Go, Python, Node), the commands their users run to build, test
//! and lint, the lockfiles and the CI files to protect. Pure: the
//! repository's paths and a reader of the few files it looks into go in, a
//! [`Detected`] comes out.

use std::collections::BTreeMap;

/// A language and its tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ecosystem {
    Rust,
    Go,
    Python,
    Node,
}

impl Ecosystem {
    /// As the user says it.
    pub fn name(self) -> &'static str {
        match self {
            Ecosystem::Rust => "Rust",
            Ecosystem::Go => "Go",
            Ecosystem::Python => "Python",
            Ecosystem::Node => "Node",
        }
    }

    /// In a guardrail's name (`rust-build`).
    fn label(self) -> &'static str {
        match self {
            Ecosystem::Rust => "rust",
            Ecosystem::Go => "go",
            Ecosystem::Python => "python",
            Ecosystem::Node => "node",
        }
    }
}

/// What a check is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Build,
    Tests,
    Lint,
}

/// One command guardrail `rascal init` writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// The guardrail's name, unique in the file (set by [`detect`]).
    pub name: String,
    pub role: Role,
    /// The tool's own name for a lint (`clippy`, `ruff`); the role's otherwise.
    tool: &'static str,
    /// Run from the repository's root (`cd DIR && …` for a project below it).
    pub command: String,
    pub timeout: &'static str,
    /// `tests: true`: this command is the test run.
    pub tests: bool,
    /// False: a failure is a warning.
    pub required: bool,
    /// `network: host`.
    pub network: bool,
    /// Written commented out, with `why` above it.
    pub enabled: bool,
    /// A comment above the check: why it is off, optional or networked.
    pub why: Option<String>,
}

impl Check {
    fn new(
        role: Role,
        tool: &'static str,
        dir: &str,
        command: &str,
        timeout: &'static str,
    ) -> Self {
        Check {
            name: String::new(),
            role,
            tool,
            command: in_dir(dir, command),
            timeout,
            tests: role == Role::Tests,
            required: role != Role::Lint,
            network: false,
            enabled: true,
            why: None,
        }
    }

    /// A lint is a warning until the code is clean: a first run on a
    /// repository with old warnings should not fail every candidate.
    fn lint(dir: &str, tool: &'static str, command: &str, timeout: &'static str) -> Self {
        let mut c = Check::new(Role::Lint, tool, dir, command, timeout);
        c.why = Some(format!(
            "{tool}: a warning, not a failure, until the code is clean; then drop `required: false`"
        ));
        c
    }

    fn off(mut self, why: String) -> Self {
        self.enabled = false;
        self.why = Some(why);
        self
    }
}

/// `cd DIR && COMMAND`, or COMMAND at the root.
fn in_dir(dir: &str, command: &str) -> String {
    if dir.is_empty() {
        command.to_string()
    } else {
        format!("cd {} && {command}", crate::text::inert::shell_word(dir))
    }
}

/// One project: an ecosystem at the root or in a top-level directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    pub ecosystem: Ecosystem,
    /// `""` for the root, else the directory (`web`).
    pub dir: String,
    /// The file it was found by, from the repository's root.
    pub manifest: String,
    /// What was found, in words: `Cargo workspace (Cargo.toml)`.
    pub summary: String,
    /// A comment above its checks: how they get their dependencies.
    pub setup: &'static str,
    pub checks: Vec<Check>,
    /// Lockfiles, from the repository's root.
    pub lockfiles: Vec<String>,
    /// What the user should know (no tests found, a runner rascal cannot
    /// count).
    pub notes: Vec<String>,
}

/// Everything `rascal init` found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Detected {
    pub projects: Vec<Project>,
    /// CI configuration found, as globs (`.github/**`, `.gitlab-ci.yml`).
    pub ci: Vec<String>,
}

/// Directories that hold other people's code or build output, never a
/// project of the repository.
const NOT_SOURCE: &[&str] = &[
    "node_modules",
    "target",
    "vendor",
    "third_party",
    ".venv",
    "venv",
    "dist",
    "build",
    "__pycache__",
    ".tox",
    ".git",
];

/// CI configuration: a file or directory at the root → the glob protecting it.
const CI: &[(&str, &str)] = &[
    (".github/", ".github/**"),
    (".gitlab-ci.yml", ".gitlab-ci.yml"),
    (".gitlab/", ".gitlab/**"),
    (".circleci/", ".circleci/**"),
    (".ci/", ".ci/**"),
    (".buildkite/", ".buildkite/**"),
    (".woodpecker/", ".woodpecker/**"),
    (".woodpecker.yml", ".woodpecker.yml"),
    (".drone.yml", ".drone.yml"),
    (".travis.yml", ".travis.yml"),
    ("Jenkinsfile", "Jenkinsfile"),
    ("azure-pipelines.yml", "azure-pipelines.yml"),
    ("bitbucket-pipelines.yml", "bitbucket-pipelines.yml"),
    ("appveyor.yml", "appveyor.yml"),
    (".appveyor.yml", ".appveyor.yml"),
];

/// Protected even when absent: an agent adding a workflow is as risky as
/// one editing it.
pub const CI_DEFAULT: &str = ".github/**";

/// What [`detect`] looks at: the repository's files and how this machine
/// runs pytest.
pub struct Input<'a> {
    /// The repository's files, relative, with `/`.
    pub paths: &'a [String],
    /// The text of one of them (None when unreadable).
    pub read: &'a dyn Fn(&str) -> Option<String>,
    /// How pytest runs here (`python3 -m pytest`, `python -m pytest`,
    /// `pytest`); asked only when there is a Python project.
    pub pytest: &'a dyn Fn() -> String,
}

/// What the repository holds.
pub fn detect(input: &Input) -> Detected {
    let paths: Vec<&str> = input
        .paths
        .iter()
        .map(String::as_str)
        .filter(|p| !p.split('/').any(|c| NOT_SOURCE.contains(&c)))
        .collect();
    let repo = Listing {
        paths: &paths,
        read: input.read,
        pytest: input.pytest,
    };
    let mut projects = Vec::new();
    for dir in repo.roots(&["Cargo.toml"]) {
        projects.push(rust(&repo, &dir));
    }
    for dir in repo.roots(&["go.mod"]) {
        projects.push(go(&repo, &dir));
    }
    for dir in repo.roots(PYTHON_MANIFESTS) {
        projects.push(python(&repo, &dir));
    }
    // No manifest, but Python test files at the root or in tests/: a plain
    // unittest (or pytest) project all the same.
    let python_tests = paths.iter().any(|p| {
        let (dir, name) = p.rsplit_once('/').unwrap_or(("", p));
        (dir.is_empty() || dir == "tests")
            && name.ends_with(".py")
            && (name.starts_with("test") || name.ends_with("_test.py"))
    });
    if python_tests && !projects.iter().any(|p| p.ecosystem == Ecosystem::Python) {
        projects.push(python(&repo, ""));
    }
    for dir in repo.roots(&["package.json"]) {
        if let Some(p) = node(&repo, &dir) {
            projects.push(p);
        }
    }
    name_checks(&mut projects);
    let ci = CI
        .iter()
        .filter(|(at, _)| {
            paths
                .iter()
                .any(|p| p == at || (at.ends_with('/') && p.starts_with(at)))
        })
        .map(|(_, glob)| glob.to_string())
        .collect();
    Detected { projects, ci }
}

/// The repository as `detect` sees it.
struct Listing<'a> {
    paths: &'a [&'a str],
    read: &'a dyn Fn(&str) -> Option<String>,
    pytest: &'a dyn Fn() -> String,
}

impl Listing<'_> {
    fn has(&self, path: &str) -> bool {
        self.paths.contains(&path)
    }

    fn read(&self, path: &str) -> Option<String> {
        (self.read)(path)
    }

    /// Paths under `dir` (all of them for the root), relative to it.
    fn under<'b>(&'b self, dir: &'b str) -> impl Iterator<Item = &'b str> + 'b {
        self.paths.iter().filter_map(move |p| {
            if dir.is_empty() {
                Some(*p)
            } else {
                p.strip_prefix(dir).and_then(|r| r.strip_prefix('/'))
            }
        })
    }

    /// Where a project with one of `manifests` lives: the root when it has
    /// one (a workspace or monorepo root covers what is below it), else each
    /// top-level directory that has one.
    fn roots(&self, manifests: &[&str]) -> Vec<String> {
        let is_manifest = |name: &str| {
            manifests.iter().any(|m| match m.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix) && name.ends_with(".txt"),
                None => name == *m,
            })
        };
        if self
            .paths
            .iter()
            .any(|p| !p.contains('/') && is_manifest(p))
        {
            return vec![String::new()];
        }
        let mut dirs: Vec<String> = self
            .paths
            .iter()
            .filter_map(|p| p.split_once('/'))
            .filter(|(dir, name)| !name.contains('/') && !dir.starts_with('.') && is_manifest(name))
            .map(|(dir, _)| dir.to_string())
            .collect();
        dirs.sort();
        dirs.dedup();
        dirs
    }

    /// `dir/name` (just `name` at the root).
    fn at(dir: &str, name: &str) -> String {
        if dir.is_empty() {
            name.to_string()
        } else {
            format!("{dir}/{name}")
        }
    }

    /// The lockfiles among `names` that exist in `dir`.
    fn lockfiles(&self, dir: &str, names: &[&str]) -> Vec<String> {
        names
            .iter()
            .map(|n| Listing::at(dir, n))
            .filter(|p| self.has(p))
            .collect()
    }
}

fn rust(repo: &Listing, dir: &str) -> Project {
    let manifest = Listing::at(dir, "Cargo.toml");
    let text = repo.read(&manifest).unwrap_or_default();
    let parsed: Option<toml::Table> = text.parse().ok();
    let workspace = parsed.as_ref().is_some_and(|t| t.contains_key("workspace"));
    let all = if workspace { " --workspace" } else { "" };
    let mut checks = vec![
        Check::new(
            Role::Build,
            "build",
            dir,
            &format!("cargo build{all} --all-targets"),
            "20m",
        ),
        Check::new(
            Role::Tests,
            "tests",
            dir,
            &format!("cargo test{all}"),
            "20m",
        ),
        Check::lint(
            dir,
            "clippy",
            &format!("cargo clippy{all} --all-targets -- -D warnings"),
            "20m",
        ),
    ];
    let mut notes = Vec::new();
    if !rust_has_tests(repo, dir) {
        no_tests(&mut checks, &mut notes, &manifest, "`#[test]`");
    }
    Project {
        ecosystem: Ecosystem::Rust,
        dir: dir.to_string(),
        manifest: manifest.clone(),
        summary: format!(
            "{} ({manifest})",
            if workspace { "Cargo workspace" } else { "Cargo" }
        ),
        setup: "No network: crates come from your ~/.cargo cache (`cargo fetch` fills it). Not `--offline`: with it, cargo settles a missing or stale Cargo.lock with whatever versions happen to be cached; without network it keeps to Cargo.lock and fails naming what it could not download. Add `network: host` to a check to let it download.",
        checks,
        lockfiles: repo.lockfiles(dir, &["Cargo.lock"]),
        notes,
    }
}

/// A `#[test]` (or `#[tokio::test]`, …) anywhere in the project's Rust
/// sources, or a `tests/` directory with Rust files.
fn rust_has_tests(repo: &Listing, dir: &str) -> bool {
    let rs: Vec<&str> = repo.under(dir).filter(|p| p.ends_with(".rs")).collect();
    if rs
        .iter()
        .any(|p| p.starts_with("tests/") || p.contains("/tests/"))
    {
        return true;
    }
    let attr = regex::Regex::new(r"#\[\s*(?:[A-Za-z_][A-Za-z0-9_]*::)*test\s*[\](]").unwrap();
    rs.iter().any(|p| {
        repo.read(&Listing::at(dir, p))
            .is_some_and(|t| attr.is_match(&t))
    })
}

/// The test run is written commented out when there is no test yet: a
/// test run that runs no test is a FAIL, which would fail every candidate.
fn no_tests(checks: &mut [Check], notes: &mut Vec<String>, manifest: &str, what: &str) {
    for c in checks.iter_mut().filter(|c| c.role == Role::Tests) {
        *c = c.clone().off(format!(
            "No test found yet (no {what}): a test run that runs no test is a FAIL. Uncomment once there is one."
        ));
    }
    notes.push(format!(
        "{manifest}: no test found, so the test run is commented out in guardrails.yaml"
    ));
}

fn go(repo: &Listing, dir: &str) -> Project {
    let manifest = Listing::at(dir, "go.mod");
    let mut checks = vec![
        Check::new(Role::Build, "build", dir, "go build ./...", "10m"),
        Check::new(Role::Tests, "tests", dir, "go test ./...", "10m"),
        Check::lint(dir, "vet", "go vet ./...", "10m"),
    ];
    let mut notes = Vec::new();
    if !repo.under(dir).any(|p| p.ends_with("_test.go")) {
        no_tests(&mut checks, &mut notes, &manifest, "`_test.go` file");
    }
    Project {
        ecosystem: Ecosystem::Go,
        dir: dir.to_string(),
        manifest: manifest.clone(),
        summary: format!("Go module ({manifest})"),
        setup: "No network: modules come from your module cache (`go mod download` fills it) or vendor/. Add `network: host` to a check to let it download.",
        checks,
        lockfiles: repo.lockfiles(dir, &["go.sum"]),
        notes,
    }
}

const PYTHON_MANIFESTS: &[&str] = &["pyproject.toml", "setup.py", "setup.cfg", "requirements*"];

fn python(repo: &Listing, dir: &str) -> Project {
    let read = |name: &str| repo.read(&Listing::at(dir, name)).unwrap_or_default();
    let pyproject = read("pyproject.toml");
    let table: Option<toml::Table> = pyproject.parse().ok();
    let tool = |name: &str| {
        table
            .as_ref()
            .and_then(|t| t.get("tool"))
            .and_then(|t| t.get(name))
            .is_some()
    };
    let files: Vec<&str> = repo.under(dir).collect();
    let has = |name: &str| files.contains(&name);
    let requirements: String = files
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
    let setup_cfg = read("setup.cfg");
    let tox_ini = read("tox.ini");
    let pytest = tool("pytest")
        || has("pytest.ini")
        || has("conftest.py")
        || setup_cfg.contains("[tool:pytest]")
        || tox_ini.contains("[pytest]")
        || files.iter().any(|p| p.starts_with("tests/"))
        || mentions_pytest(&requirements)
        || mentions_pytest(&pyproject);
    let test_files = files.iter().any(|p| {
        let name = p.rsplit('/').next().unwrap_or(p);
        name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
    });
    let mut checks = Vec::new();
    let mut notes = Vec::new();
    // What the project is known by: its manifest, its requirements, or
    // (a plain test-files project) its first test file.
    let first_test = files.iter().find(|p| {
        let name = p.rsplit('/').next().unwrap_or(p);
        name.ends_with(".py") && (name.starts_with("test") || name.ends_with("_test.py"))
    });
    let manifest = ["pyproject.toml", "setup.py", "setup.cfg"]
        .iter()
        .find(|m| has(m))
        .map(|m| Listing::at(dir, m))
        .unwrap_or_else(|| match (requirements.is_empty(), first_test) {
            (true, Some(t)) => t.to_string(),
            _ => Listing::at(dir, "requirements.txt"),
        });
    // Test files and nothing of pytest: the standard library's runner.
    let unittest = test_files && !pytest;
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
    if test_files {
        checks.push(tests);
    } else if pytest {
        checks.push(tests);
        no_tests(&mut checks, &mut notes, &manifest, "`test_*.py` file");
    } else {
        notes.push(format!(
            "{manifest}: no pytest and no test files found, so there is no test run; add one to guardrails.yaml when there are tests"
        ));
    }
    if tool("ruff") || has("ruff.toml") || has(".ruff.toml") {
        checks.push(Check::lint(dir, "ruff", "ruff check .", "10m"));
    }
    if has(".flake8") || setup_cfg.contains("[flake8]") || tox_ini.contains("[flake8]") {
        checks.push(Check::lint(dir, "flake8", "flake8", "10m"));
    }
    if tool("mypy") || has("mypy.ini") || setup_cfg.contains("[mypy]") {
        checks.push(Check::lint(dir, "mypy", "mypy .", "10m"));
    }
    let mut summary = vec![format!("Python ({manifest}")];
    if unittest {
        summary.push("unittest".into());
    } else if pytest || test_files {
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

/// A Node package manager, from the lockfile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Manager {
    Npm,
    Pnpm,
    Yarn,
}

fn node(repo: &Listing, dir: &str) -> Option<Project> {
    let manifest = Listing::at(dir, "package.json");
    let text = repo.read(&manifest)?;
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let scripts: BTreeMap<String, String> = json
        .get("scripts")
        .and_then(|s| s.as_object())
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect()
        })
        .unwrap_or_default();
    let has = |name: &str| repo.has(&Listing::at(dir, name));
    let declared = json
        .get("packageManager")
        .and_then(|v| v.as_str())
        .unwrap_or("");
    let (manager, lock) = if has("pnpm-lock.yaml") {
        (Manager::Pnpm, true)
    } else if has("yarn.lock") {
        (Manager::Yarn, true)
    } else if has("package-lock.json") || has("npm-shrinkwrap.json") {
        (Manager::Npm, true)
    } else if declared.starts_with("pnpm") {
        (Manager::Pnpm, false)
    } else if declared.starts_with("yarn") {
        (Manager::Yarn, false)
    } else {
        (Manager::Npm, false)
    };
    let berry = has(".yarnrc.yml") || repo.has(".yarnrc.yml");
    let install = match (manager, lock) {
        (Manager::Npm, true) => "npm ci --no-audit --no-fund",
        (Manager::Npm, false) => "npm install --no-audit --no-fund",
        (Manager::Pnpm, true) => "pnpm install --frozen-lockfile",
        (Manager::Pnpm, false) => "pnpm install",
        (Manager::Yarn, true) if berry => "yarn install --immutable",
        (Manager::Yarn, true) => "yarn install --frozen-lockfile",
        (Manager::Yarn, false) => "yarn install",
    };
    let pm = match manager {
        Manager::Npm => "npm",
        Manager::Pnpm => "pnpm",
        Manager::Yarn => "yarn",
    };
    let run = |script: &str| match script {
        "test" => format!("{install} && {pm} test"),
        s => format!("{install} && {pm} run {s}"),
    };
    let mut checks = Vec::new();
    let mut notes = Vec::new();
    if scripts.contains_key("build") {
        checks.push(Check::new(Role::Build, "build", dir, &run("build"), "15m"));
    }
    match scripts.get("test") {
        // What `npm init` writes: it always fails.
        Some(t) if t.contains("no test specified") => notes.push(format!(
            "{manifest}: `scripts.test` is npm's placeholder (it always fails), so there is no test run"
        )),
        Some(t) => {
            let mut c = Check::new(Role::Tests, "tests", dir, &run("test"), "15m");
            if crate::layers::ledger::recognise(&c.command, Some(&text)).is_none() {
                c.tests = false;
                c.why = Some(format!(
                    "rascal does not know the runner of `{}`, so it cannot count its tests: this runs as a plain check (jest and vitest are counted)",
                    t.split_whitespace().next().unwrap_or(t)
                ));
                notes.push(format!(
                    "{manifest}: rascal cannot count the tests of `{t}`; the test script runs as a plain check"
                ));
            }
            checks.push(c);
        }
        None => notes.push(format!(
            "{manifest}: no `scripts.test`, so there is no test run"
        )),
    }
    if scripts.contains_key("lint") {
        checks.push(Check::lint(dir, "lint", &run("lint"), "15m"));
    }
    for c in &mut checks {
        c.network = true;
    }
    let found: Vec<&str> = ["build", "test", "lint"]
        .into_iter()
        .filter(|s| scripts.contains_key(*s))
        .collect();
    Some(Project {
        ecosystem: Ecosystem::Node,
        dir: dir.to_string(),
        manifest: manifest.clone(),
        summary: format!(
            "Node, {pm} ({manifest}{})",
            if found.is_empty() {
                String::new()
            } else {
                format!(": scripts {}", found.join(", "))
            }
        ),
        setup: "A check runs on a fresh copy of the change, without node_modules: each one installs first, so it needs the registry (`network: host`). To keep checks offline, drop `network: host` and vendor node_modules, or use the docker launcher with an image that has them.",
        checks,
        lockfiles: repo.lockfiles(
            dir,
            &[
                "package-lock.json",
                "npm-shrinkwrap.json",
                "pnpm-lock.yaml",
                "yarn.lock",
            ],
        ),
        notes,
    })
}

/// Give every check a unique guardrail name: `build`, `tests`, `clippy`
/// for one project; prefixed by the ecosystem (`rust-build`) or the
/// directory (`web-build`) when there are several.
fn name_checks(projects: &mut [Project]) {
    let several = projects.len() > 1;
    let prefix = |p: &Project| {
        if p.dir.is_empty() {
            p.ecosystem.label().to_string()
        } else {
            p.dir.clone()
        }
    };
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for p in projects.iter() {
        *seen.entry(prefix(p)).or_default() += 1;
    }
    for p in projects.iter_mut() {
        let mut pre = prefix(p);
        if seen[&pre] > 1 {
            pre = format!("{pre}-{}", p.ecosystem.label());
        }
        for c in &mut p.checks {
            c.name = if several {
                format!("{pre}-{}", c.tool)
            } else {
                c.tool.to_string()
            };
        }
    }
}

#[cfg(test)]
mod tests {
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
}
