//! Runner configuration: the files and settings that decide which tests
//! run and how, whose change is a `test-integrity/runner-config` error.
//!
//! Any change (added, changed, deleted) to these files, anywhere in the
//! tree (each is laid from the base for every check, see
//! [`decides_checks`]):
//! - Rust: `build.rs`, `.cargo/config` and `.cargo/config.toml`,
//!   `.config/nextest.toml`, `rust-toolchain`, `rust-toolchain.toml`.
//! - Python (pytest's own list): `pytest.toml` and `.pytest.toml` (pytest
//!   9), `pytest.ini` and `.pytest.ini`, `tox.ini`, `conftest.py`,
//!   `noxfile.py`; plugins by entry point: `setup.py`,
//!   `*.dist-info/entry_points.txt`, `*.egg-info/entry_points.txt`; what
//!   Python runs at start-up: `sitecustomize.py`, `usercustomize.py`,
//!   `*.pth`; and a top-level module or package (at the root, directly
//!   under `src/`, `tests/` or `test/`) named like a standard module
//!   (CPython 3.11's whole `sys.stdlib_module_names`) or the runner's own
//!   (`pytest`, `_pytest`, `pluggy`, `py`, `iniconfig`).
//! - Go: `go.work`, `go.work.sum`.
//! - JavaScript: `jest.config.*`, `vitest.config.*`, `vitest.workspace.*`,
//!   `.mocharc*`, `karma.conf*`, `playwright.config.*`, `babel.config.*`,
//!   `.babelrc*`, `.swcrc`, `.npmrc` (it can set `node-options`).
//! - Toolchain pins: `.tool-versions`, `.python-version`, `.nvmrc`,
//!   `.node-version`, `.ruby-version`, `.go-version`.
//! - Build and CI: `Makefile`/`makefile`/`GNUmakefile`/`justfile`, CI
//!   workflows (`.github/workflows/*`, `.gitlab-ci.yml`,
//!   `.circleci/config.yml`, `.travis.yml`, `azure-pipelines.yml`,
//!   `Jenkinsfile`).
//! - Any file a test command names (`sh scripts/test.sh`, `./run-tests`,
//!   `make -C sub test` → `sub/Makefile`, `cargo xtask` → `xtask/`).
//!
//! Settings compared parsed, so a reformat is not a change: in
//! `Cargo.toml`, `[lib]`/`[[test]]`/`[[bin]]`/`[[bench]]`/`[[example]]`
//! `test`, `doctest`, `harness`, `required-features`, `proc-macro`
//! (`[[test]]` also `path`), `[package]` `autotests`/`autobins`/
//! `autobenches`/`autoexamples`/`autolib`/`build`/`links`, every
//! `[profile.*]`, `[patch.*]` and `[replace]`, `[build-dependencies]`
//! (also under `[target.*]`), `[dev-dependencies]` pointed at a path or a
//! repository (also under `[target.*]`), and the workspace's
//! `members`/`exclude`/`default-members` (features are not: too common);
//! `pyproject.toml` `[tool.pytest]` (with `[tool.pytest.ini_options]`),
//! `[project.entry-points.pytest11]` and `[tool.poetry.plugins.pytest11]`;
//! `setup.cfg` `[tool:pytest]` and `[options.entry_points]` `pytest11`;
//! `package.json` `jest`, `mocha`, `ava`, `vitest` and the scripts the
//! commands run (`scripts.test`, its `pre`/`post` hooks, `npm run x` →
//! `scripts.x`). A Rust `extern crate x as std;` (or `core`, `alloc`,
//! `test`) is reported under this rule by `backstop.rs`.
//!
//! Not seen: `go.mod` (`replace` directives included), `Cargo.toml`
//! `[features]` defaults, environment variables set outside the tree
//! (`PYTEST_ADDOPTS`, `PYTEST_PLUGINS`, `RUSTFLAGS`, `NODE_OPTIONS`), an
//! installed plugin's own files outside the tree, and runner flags in files
//! no command names.

use super::{short, FileVersions, Finding, RULE_RUNNER};
use rascal_core::model::verdict::{Issue, Severity};
use settings::settings;
use shadowed_modules::shadows_runner;
use std::collections::{BTreeMap, BTreeSet};

mod settings;
mod shadowed_modules;

/// What the test commands name: files, and `package.json` scripts.
#[derive(Debug, Default)]
pub(super) struct CommandFiles {
    /// Normalized path → the command that names it.
    files: BTreeMap<String, String>,
    /// Directory prefixes (`xtask/`) whose every file is runner code.
    dirs: BTreeMap<String, String>,
    /// (package.json path, script name) → command.
    scripts: BTreeMap<(String, String), String>,
}

/// Extensions of files a command argument names as configuration or a
/// script (a test file argument like `tests/test_x.py` is not config).
const CONFIG_EXTENSIONS: &[&str] = &[
    "sh", "bash", "zsh", "ini", "cfg", "toml", "json", "yaml", "yml", "mk", "conf", "ps1",
];

/// A command's words, shell-split (on whitespace when it does not parse),
/// a trailing `;` made a separator of its own.
fn words(cmd: &str) -> Vec<String> {
    let split =
        shlex::split(cmd).unwrap_or_else(|| cmd.split_whitespace().map(String::from).collect());
    // `cd x; y`: a trailing `;` is a separator of its own.
    let mut words: Vec<String> = Vec::new();
    for w in split {
        match w.strip_suffix(';') {
            Some(head) if !head.is_empty() => {
                words.push(head.to_string());
                words.push(";".to_string());
            }
            _ => words.push(w),
        }
    }
    words
}

impl CommandFiles {
    pub fn new(commands: &[String]) -> Self {
        let mut out = CommandFiles::default();
        for cmd in commands {
            out.command(cmd, cmd, "", 0);
        }
        out
    }

    fn command(&mut self, cmd: &str, shown: &str, dir: &str, depth: usize) {
        let words = words(cmd);
        let mut dir = dir.to_string();
        for simple in words.split(|w| matches!(w.as_str(), "&&" | "||" | ";" | "|" | "&")) {
            // Leading `VAR=x`, `env`, `time`, `sudo`, `exec`, `nice`.
            let simple: Vec<&str> = simple
                .iter()
                .map(String::as_str)
                .skip_while(|w| {
                    w.contains('=') && !w.starts_with('-')
                        || matches!(*w, "env" | "time" | "sudo" | "exec" | "nice" | "command")
                })
                .collect();
            let Some((&prog, args)) = simple.split_first() else {
                continue;
            };
            let shown = shown.to_string();
            let name = prog.rsplit('/').next().unwrap_or(prog);
            match name {
                "cd" => {
                    if let Some(d) = args.first() {
                        dir = join(&dir, d);
                    }
                    continue;
                }
                "make" | "gmake" => self.make(args, &dir, &shown),
                "just" => {
                    for f in ["justfile", "Justfile", ".justfile"] {
                        self.file(&join(&dir, f), &shown);
                    }
                }
                "npm" | "pnpm" | "yarn" | "bun" => self.package_script(name, args, &dir, &shown),
                "sh" | "bash" | "zsh" | "dash" => {
                    if let Some(pos) = args.iter().position(|a| *a == "-c") {
                        if let (Some(inner), true) = (args.get(pos + 1), depth < 2) {
                            self.command(inner, &shown, &dir, depth + 1);
                        }
                    } else if let Some(script) = args.iter().find(|a| !a.starts_with('-')) {
                        self.file(&join(&dir, script), &shown);
                    }
                }
                "python" | "python3" | "node" | "ruby" | "perl" | "deno" | "tsx" | "ts-node" => {
                    for a in args {
                        if matches!(*a, "-m" | "-c" | "-e") {
                            break;
                        }
                        if !a.starts_with('-') && *a != "run" {
                            self.file(&join(&dir, a), &shown);
                            break;
                        }
                    }
                }
                "cargo" if args.first() == Some(&"xtask") => {
                    self.dirs.insert(join(&dir, "xtask") + "/", shown.clone());
                }
                "cargo" if args.first() == Some(&"make") => {
                    self.file(&join(&dir, "Makefile.toml"), &shown);
                }
                _ if prog.contains('/') => self.file(&join(&dir, prog), &shown),
                _ => {}
            }
            // Configuration files named as arguments (`pytest -c ci.ini`).
            for a in args {
                let a = a.rsplit('=').next().unwrap_or(a);
                let ext = a.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
                if !a.starts_with('-') && CONFIG_EXTENSIONS.contains(&ext) {
                    self.file(&join(&dir, a), &shown);
                }
            }
        }
    }

    /// `make`: the makefile it reads (`-f`), in the directory it runs in
    /// (`-C`), or the default makefile names there.
    fn make(&mut self, args: &[&str], dir: &str, shown: &str) {
        let mut mdir = dir.to_string();
        let mut file = None;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match *a {
                "-C" | "--directory" => {
                    if let Some(d) = it.next() {
                        mdir = join(&mdir, d);
                    }
                }
                "-f" | "--file" | "--makefile" => file = it.next().copied(),
                _ => {
                    if let Some(f) = a.strip_prefix("--file=") {
                        file = Some(f);
                    }
                }
            }
        }
        match file {
            Some(f) => self.file(&join(&mdir, f), shown),
            None => {
                for f in ["Makefile", "makefile", "GNUmakefile"] {
                    self.file(&join(&mdir, f), shown);
                }
            }
        }
    }

    /// `npm test`, `npm run x`, `yarn x`…: the `package.json` script it runs,
    /// with its `pre`/`post` hooks.
    fn package_script(&mut self, name: &str, args: &[&str], dir: &str, shown: &str) {
        let rest: Vec<&str> = args
            .iter()
            .copied()
            .filter(|a| !a.starts_with('-'))
            .collect();
        let script = match rest.as_slice() {
            ["test" | "t", ..] if name != "bun" => Some("test"),
            ["run" | "run-script", s, ..] => Some(*s),
            [s, ..] if matches!(name, "yarn" | "pnpm") => Some(*s),
            _ => None,
        };
        if let Some(s) = script {
            let pkg = join(dir, "package.json");
            for h in [format!("pre{s}"), s.to_string(), format!("post{s}")] {
                self.scripts.insert((pkg.clone(), h), shown.to_string());
            }
        }
    }

    fn file(&mut self, path: &str, cmd: &str) {
        if !path.is_empty() {
            self.files
                .entry(path.to_string())
                .or_insert_with(|| cmd.to_string());
        }
    }

    /// The command that names `path`, if one does.
    fn names(&self, path: &str) -> Option<&str> {
        let p = join("", path);
        self.files
            .get(&p)
            .or_else(|| {
                self.dirs
                    .iter()
                    .find(|(d, _)| p.starts_with(d.as_str()))
                    .map(|(_, c)| c)
            })
            .map(String::as_str)
    }
}

/// `dir/rel`, normalized: no `.`, `..` resolved, no leading `./` or `/`.
fn join(dir: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    let start: &str = if rel.starts_with('/') { "" } else { dir };
    for p in start.split('/').chain(rel.split('/')) {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Files that configure a test runner wherever they are, by name.
fn config_kind(path: &str) -> Option<&'static str> {
    let name = file_name(path);
    let parent = path.rsplit('/').nth(1).unwrap_or("");
    let prefixed = |p: &str| name.starts_with(p);
    Some(match name {
        "build.rs" => "a build script can change how tests compile",
        "config" | "config.toml" if parent == ".cargo" => {
            "cargo configuration can change how tests build and run"
        }
        "nextest.toml" if parent == ".config" => "nextest configuration decides which tests run",
        "pytest.ini" | ".pytest.ini" | "pytest.toml" | ".pytest.toml" | "tox.ini" | "noxfile.py" => {
            "it configures how the Python tests run"
        }
        "conftest.py" => "conftest.py hooks can skip, deselect or rewrite tests",
        "setup.py" => "it can register pytest plugins (`pytest11` entry points) the test run loads",
        "entry_points.txt" if parent.ends_with(".dist-info") || parent.ends_with(".egg-info") => {
            "it registers plugins (`pytest11` entry points) the test run loads"
        }
        "go.work" | "go.work.sum" => "it picks the Go modules the tests build against",
        ".npmrc" => "it can set the options node runs the tests with (`node-options`)",
        ".swcrc" => "it configures how the JavaScript tests compile",
        "Makefile" | "makefile" | "GNUmakefile" | "justfile" | "Justfile" | ".justfile" => {
            "it can change what the test targets run"
        }
        "Jenkinsfile" | ".gitlab-ci.yml" | ".travis.yml" | "azure-pipelines.yml" => {
            "CI configuration decides which tests run"
        }
        "config.yml" if parent == ".circleci" => "CI configuration decides which tests run",
        _ if path.contains(".github/workflows/") => "CI configuration decides which tests run",
        "rust-toolchain" | "rust-toolchain.toml" => {
            "it picks the Rust toolchain every cargo command runs (a `path` toolchain runs a program of the change)"
        }
        ".tool-versions" | ".python-version" | ".nvmrc" | ".node-version" | ".ruby-version"
        | ".go-version" => "it picks the toolchain the checks run with",
        "sitecustomize.py" | "usercustomize.py" => "Python runs it before any test",
        _ if name.ends_with(".pth") => "Python runs the lines of a .pth file at start-up",
        _ if shadows_runner(path) => {
            "it shadows the test runner or the standard library the checks import"
        }
        _ if prefixed("jest.config.")
            || prefixed("vitest.config.")
            || prefixed("vitest.workspace.")
            || prefixed(".mocharc")
            || prefixed("karma.conf")
            || prefixed("playwright.config.") =>
        {
            "it configures how the JavaScript tests run"
        }
        _ if prefixed("babel.config.") || prefixed(".babelrc") => {
            "it configures how the JavaScript tests compile"
        }
        _ => return None,
    })
}

/// Manifests whose test settings are compared key by key.
fn manifest(path: &str) -> bool {
    matches!(
        file_name(path),
        "Cargo.toml" | "pyproject.toml" | "setup.cfg" | "package.json"
    )
}

/// Whether `path` is runner configuration (see the module doc).
pub(super) fn is_config(path: &str, named: &CommandFiles) -> bool {
    config_kind(path).is_some() || manifest(path) || named.names(path).is_some()
}

/// Whether `path` is runner configuration that is a whole file (see
/// [`super::decides_checks`]).
pub(super) fn decides_checks(path: &str, named: &CommandFiles) -> bool {
    config_kind(path).is_some() || named.names(path).is_some()
}

pub(super) fn check(f: &FileVersions, named: &CommandFiles, out: &mut Vec<Finding>) {
    let old_path = f.old_path.unwrap_or(f.path);
    let change = match (f.base, f.new) {
        (None, Some(_)) => "added",
        (Some(_), None) => "deleted",
        (Some(a), Some(b)) if a != b => "changed",
        (Some(_), Some(_)) if old_path != f.path => "renamed",
        _ => return,
    };
    let shown = short(f.path);
    let report = |out: &mut Vec<Finding>, msg: String| {
        out.push(Finding::file(
            Issue::new(RULE_RUNNER, Severity::Error, msg).at(f.path, None),
            &[f.path, old_path],
        ));
    };
    if let Some(why) = config_kind(f.path).or_else(|| config_kind(old_path)) {
        report(out, format!("`{shown}` {change}: {why}"));
        return;
    }
    if let Some(cmd) = named.names(f.path).or_else(|| named.names(old_path)) {
        report(
            out,
            format!(
                "`{shown}` {change}: the test command `{}` runs it",
                short(cmd)
            ),
        );
        return;
    }
    if !manifest(f.path) {
        return;
    }
    let (before, after) = match settings(f.path, f.base, named) {
        Ok(before) => match settings(f.path, f.new, named) {
            Ok(after) => (before, after),
            Err(e) => {
                let msg = format!("`{shown}` {e}: its test settings could not be compared");
                out.push(Finding::file(
                    Issue::new(RULE_RUNNER, Severity::Warning, msg).at(f.path, None),
                    &[f.path, old_path],
                ));
                return;
            }
        },
        // A base that does not parse: compare against nothing set.
        Err(_) => (
            BTreeMap::new(),
            settings(f.path, f.new, named).unwrap_or_default(),
        ),
    };
    let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    // A bin, bench or example target new to the manifest runs no existing
    // test; a new or removed declaration alone is not a setting.
    let new_target = |k: &str| {
        ["[[bin]] ", "[[bench]] ", "[[example]] "]
            .iter()
            .any(|p| k.starts_with(p))
            && k.rsplit_once('.')
                .is_some_and(|(target, _)| !before.contains_key(target))
    };
    let changed: Vec<String> = keys
        .into_iter()
        .filter(|k| before.get(*k) != after.get(*k))
        .filter(|k| {
            !after
                .get(*k)
                .or(before.get(*k))
                .is_some_and(String::is_empty)
        })
        .filter(|k| !new_target(k))
        .map(|k| {
            let show = |v: Option<&String>| v.map_or("unset".to_string(), |v| short(v));
            format!("`{k}` {} → {}", show(before.get(k)), show(after.get(k)))
        })
        .collect();
    if changed.is_empty() {
        return;
    }
    const SHOWN: usize = 4;
    let mut list = changed[..changed.len().min(SHOWN)].join(", ");
    if changed.len() > SHOWN {
        list.push_str(&format!(" and {} more", changed.len() - SHOWN));
    }
    report(out, format!("`{shown}`: test settings changed: {list}"));
}

#[cfg(test)]
mod tests;
