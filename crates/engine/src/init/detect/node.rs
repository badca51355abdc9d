//! A Node project: its package manager (from the lockfile, else
//! `packageManager`), the install each check starts with, and its
//! `build`, `test` and `lint` scripts.

use super::{Check, Ecosystem, Listing, Project, Role};
use std::collections::BTreeMap;

/// A Node package manager, from the lockfile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Manager {
    Npm,
    Pnpm,
    Yarn,
}

/// How a check installs the packages, and the package manager's command.
struct Install {
    install: &'static str,
    pm: &'static str,
}

impl Install {
    /// The command that runs `script` on a fresh copy.
    fn run(&self, script: &str) -> String {
        let (install, pm) = (self.install, self.pm);
        match script {
            "test" => format!("{install} && {pm} test"),
            s => format!("{install} && {pm} run {s}"),
        }
    }
}

/// The package manager of the package in `dir`, and whether a lockfile
/// pins it: the install every check runs first.
fn install(repo: &Listing, dir: &str, json: &serde_json::Value) -> Install {
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
    Install { install, pm }
}

pub(super) fn node(repo: &Listing, dir: &str) -> Option<Project> {
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
    let install = install(repo, dir, &json);
    let mut checks = Vec::new();
    let mut notes = Vec::new();
    if scripts.contains_key("build") {
        checks.push(Check::new(
            Role::Build,
            "build",
            dir,
            &install.run("build"),
            "15m",
        ));
    }
    let tests = test_run(
        dir,
        &manifest,
        &text,
        &install,
        scripts.get("test"),
        &mut notes,
    );
    checks.extend(tests);
    if scripts.contains_key("lint") {
        checks.push(Check::lint(dir, "lint", &install.run("lint"), "15m"));
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
            "Node, {} ({manifest}{})",
            install.pm,
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

/// The test run of `scripts.test`: none (and why) for npm's placeholder or
/// no script; a plain check (and a note) when rascal cannot count the
/// runner's tests.
fn test_run(
    dir: &str,
    manifest: &str,
    package_json: &str,
    install: &Install,
    script: Option<&String>,
    notes: &mut Vec<String>,
) -> Option<Check> {
    match script {
        // What `npm init` writes: it always fails.
        Some(t) if t.contains("no test specified") => {
            notes.push(format!(
                "{manifest}: `scripts.test` is npm's placeholder (it always fails), so there is no test run"
            ));
            None
        }
        Some(t) => {
            let mut c = Check::new(Role::Tests, "tests", dir, &install.run("test"), "15m");
            if rascal_scan::ledger::recognise(&c.command, Some(package_json)).is_none() {
                c.tests = false;
                c.why = Some(format!(
                    "rascal does not know the runner of `{}`, so it cannot count its tests: this runs as a plain check (jest and vitest are counted)",
                    t.split_whitespace().next().unwrap_or(t)
                ));
                notes.push(format!(
                    "{manifest}: rascal cannot count the tests of `{t}`; the test script runs as a plain check"
                ));
            }
            Some(c)
        }
        None => {
            notes.push(format!(
                "{manifest}: no `scripts.test`, so there is no test run"
            ));
            None
        }
    }
}
