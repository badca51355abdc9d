//! What `rascal init` finds in a repository: its languages and tools
//! (Cargo, Go, Python, Node), the commands their users run to build, test
//! and lint, the lockfiles and the CI files to protect. Pure: the
//! repository's paths and a reader of the few files it looks into go in, a
//! [`Detected`] comes out.

use std::collections::BTreeMap;

mod node;
mod python;

use node::node;
use python::{python, PYTHON_MANIFESTS};

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
        format!(
            "cd {} && {command}",
            rascal_core::text::inert::shell_word(dir)
        )
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
mod tests;
