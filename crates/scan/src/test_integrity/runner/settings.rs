//! The test settings of a manifest (`Cargo.toml`, `pyproject.toml`,
//! `setup.cfg`, `package.json`) as flat `key → value` text, so a reformat is
//! not a change.

use super::{file_name, join, CommandFiles};
use crate::Error;
use std::collections::BTreeMap;
use std::collections::BTreeSet;

/// The test settings of a manifest as flat `key → value` text.
pub(super) fn settings(
    path: &str,
    text: Option<&str>,
    named: &CommandFiles,
) -> Result<BTreeMap<String, String>, Error> {
    let mut out = BTreeMap::new();
    let Some(text) = text else {
        return Ok(out);
    };
    match file_name(path) {
        "Cargo.toml" => cargo(&parse_toml(text)?, &mut out),
        "pyproject.toml" => pyproject(&parse_toml(text)?, &mut out),
        "setup.cfg" => setup_cfg(text, &mut out),
        "package.json" => package_json(path, text, named, &mut out)?,
        _ => {}
    }
    Ok(out)
}

/// `pyproject.toml`: `[tool.pytest]` and the plugins loaded by entry point.
fn pyproject(doc: &toml::Table, out: &mut BTreeMap<String, String>) {
    let at = |path: &[&str]| {
        path.iter()
            .try_fold(doc, |t, k| t.get(*k).and_then(toml::Value::as_table))
    };
    // `[tool.pytest]` and `[tool.pytest.ini_options]` (one table).
    if let Some(v) = at(&["tool"]).and_then(|t| t.get("pytest")) {
        out.insert("tool.pytest".into(), value(v));
    }
    // Plugins the run loads by entry point (`pytest11`).
    for (table, key) in [
        (
            &["project", "entry-points"][..],
            "project.entry-points.pytest11",
        ),
        (
            &["tool", "poetry", "plugins"][..],
            "tool.poetry.plugins.pytest11",
        ),
    ] {
        if let Some(v) = at(table).and_then(|t| t.get("pytest11")) {
            out.insert(key.into(), value(v));
        }
    }
}

/// `setup.cfg`: `[tool:pytest]` and the `pytest11` entry points.
fn setup_cfg(text: &str, out: &mut BTreeMap<String, String>) {
    let mut section = String::new();
    let mut lines = Vec::new();
    // `[options.entry_points]` `pytest11 = …` and its continuation
    // lines: plugins the run loads.
    let mut plugins = Vec::new();
    let mut in_plugins = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') && t.ends_with(']') {
            section = t[1..t.len() - 1].trim().to_string();
            in_plugins = false;
        } else if section == "tool:pytest" && !t.is_empty() && !t.starts_with(['#', ';']) {
            lines.push(t);
        } else if section == "options.entry_points" && !t.is_empty() && !t.starts_with(['#', ';']) {
            let continued = line.starts_with([' ', '\t']);
            if !continued {
                in_plugins = t.split(['=', ':']).next().map(str::trim) == Some("pytest11");
            }
            if in_plugins {
                plugins.push(t);
            }
        }
    }
    if !lines.is_empty() {
        out.insert("[tool:pytest]".into(), lines.join("; "));
    }
    if !plugins.is_empty() {
        out.insert("[options.entry_points] pytest11".into(), plugins.join("; "));
    }
}

/// `package.json`: the runners' own sections and the scripts the test
/// commands run.
fn package_json(
    path: &str,
    text: &str,
    named: &CommandFiles,
    out: &mut BTreeMap<String, String>,
) -> Result<(), Error> {
    let doc: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| Error::Manifest(format!("is not valid JSON (line {}): {e}", e.line())))?;
    for key in ["jest", "mocha", "ava", "vitest"] {
        if let Some(v) = doc.get(key) {
            out.insert(key.to_string(), v.to_string());
        }
    }
    let pkg = join("", path);
    let mut scripts: BTreeSet<String> = ["pretest", "test", "posttest"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    scripts.extend(
        named
            .scripts
            .keys()
            .filter(|(p, _)| *p == pkg)
            .map(|(_, s)| s.clone()),
    );
    for s in scripts {
        if let Some(v) = doc.get("scripts").and_then(|x| x.get(&s)) {
            out.insert(format!("scripts.{s}"), v.to_string());
        }
    }
    Ok(())
}

fn parse_toml(text: &str) -> Result<toml::Table, Error> {
    text.parse::<toml::Table>().map_err(|e| {
        let line = e
            .span()
            .map(|s| text.get(..s.start).unwrap_or("").matches('\n').count() + 1);
        Error::Manifest(match line {
            Some(l) => format!("is not valid TOML at line {l}"),
            None => "is not valid TOML".to_string(),
        })
    })
}

/// A TOML value as compact text (JSON, which TOML maps onto).
fn value(v: &toml::Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The settings of a `Cargo.toml` target that decide how its tests run.
const TARGET_KEYS: &[&str] = &[
    "test",
    "doctest",
    "harness",
    "required-features",
    "path",
    "proc-macro",
    "proc_macro",
];

/// The test settings of `Cargo.toml`.
fn cargo(doc: &toml::Table, out: &mut BTreeMap<String, String>) {
    let table = |k: &str| doc.get(k).and_then(toml::Value::as_table);
    cargo_dependencies(doc, out);
    cargo_targets(doc, out);
    if let Some(pkg) = table("package") {
        for k in [
            "autotests",
            "autobins",
            "autobenches",
            "autoexamples",
            "autolib",
            "build",
            "links",
        ] {
            if let Some(v) = pkg.get(k) {
                out.insert(format!("package.{k}"), value(v));
            }
        }
    }
    if let Some(profiles) = table("profile") {
        for (name, v) in profiles {
            out.insert(format!("profile.{name}"), value(v));
        }
    }
    if let Some(ws) = table("workspace") {
        for k in ["members", "exclude", "default-members"] {
            if let Some(v) = ws.get(k) {
                out.insert(format!("workspace.{k}"), value(v));
            }
        }
    }
}

/// What `Cargo.toml` builds or links for the tests: build dependencies,
/// `[patch]`/`[replace]`, and dev-dependencies pointed at a path or a
/// repository (also under `[target.*]`).
fn cargo_dependencies(doc: &toml::Table, out: &mut BTreeMap<String, String>) {
    let table = |k: &str| doc.get(k).and_then(toml::Value::as_table);
    // Code that runs at build time: a build dependency added, or a crate
    // made a procedural macro, can rewrite the tests as they compile.
    for section in ["build-dependencies", "build_dependencies"] {
        if let Some(deps) = table(section) {
            for (name, v) in deps {
                out.insert(format!("[{section}] {name}"), value(v));
            }
        }
    }
    // What the tests link instead of the crates they name: a `[patch]` or
    // `[replace]`, or a dev-dependency pointed at a path or a repository
    // (the assertion crate the tests use, rewritten).
    for section in ["patch", "replace"] {
        if let Some(v) = doc.get(section) {
            out.insert(format!("[{section}]"), value(v));
        }
    }
    for section in ["dev-dependencies", "dev_dependencies"] {
        if let Some(deps) = table(section) {
            for (name, v) in deps {
                let local = v
                    .as_table()
                    .is_some_and(|t| t.contains_key("path") || t.contains_key("git"));
                if local {
                    out.insert(format!("[{section}] {name}"), value(v));
                }
            }
        }
    }
    if let Some(targets) = table("target") {
        for (cfg, t) in targets {
            for section in ["build-dependencies", "build_dependencies"] {
                if let Some(deps) = t.get(section).and_then(toml::Value::as_table) {
                    for (name, v) in deps {
                        out.insert(format!("[target.{cfg}.{section}] {name}"), value(v));
                    }
                }
            }
            // As for `[dev-dependencies]`: one pointed at a path or a
            // repository.
            for section in ["dev-dependencies", "dev_dependencies"] {
                if let Some(deps) = t.get(section).and_then(toml::Value::as_table) {
                    for (name, v) in deps {
                        let local = v
                            .as_table()
                            .is_some_and(|t| t.contains_key("path") || t.contains_key("git"));
                        if local {
                            out.insert(format!("[target.{cfg}.{section}] {name}"), value(v));
                        }
                    }
                }
            }
        }
    }
}

/// The test settings of `Cargo.toml`'s `[lib]` and `[[test]]`/`[[bin]]`/
/// `[[bench]]`/`[[example]]` targets.
fn cargo_targets(doc: &toml::Table, out: &mut BTreeMap<String, String>) {
    let table = |k: &str| doc.get(k).and_then(toml::Value::as_table);
    if let Some(lib) = table("lib") {
        for k in TARGET_KEYS.iter().filter(|k| **k != "path") {
            if let Some(v) = lib.get(*k) {
                out.insert(format!("lib.{k}"), value(v));
            }
        }
    }
    for kind in ["test", "bin", "bench", "example"] {
        let Some(targets) = doc.get(kind).and_then(toml::Value::as_array) else {
            continue;
        };
        for (n, t) in targets.iter().filter_map(toml::Value::as_table).enumerate() {
            let name = t
                .get("name")
                .and_then(toml::Value::as_str)
                .map_or_else(|| format!("#{n}"), str::to_string);
            // Declared, so that settings of a target new to the manifest
            // can be told from settings added to one that was there.
            out.insert(format!("[[{kind}]] {name}"), String::new());
            for k in TARGET_KEYS {
                // A target's path only matters for test targets.
                if *k == "path" && kind != "test" {
                    continue;
                }
                if let Some(v) = t.get(*k) {
                    out.insert(format!("[[{kind}]] {name}.{k}"), value(v));
                }
            }
        }
    }
}
