//! Cargo's dependency declarations, read with the toml crate: Cargo.toml
//! (every dependency table, `[patch.*]`, `[replace]`), Cargo.lock (every
//! locked package and its source) and `.cargo/config.toml` (`[patch.*]`,
//! `paths`, `[source.*]`, `[registries.*]`), which can swap a crate's code
//! without touching Cargo.toml.

use super::dep::{norm_git, norm_path, string, table, value_text, Dep, Source};

/// The dependencies of a Cargo.toml: `[dependencies]`, `[dev-dependencies]`,
/// `[build-dependencies]` (and the old `_` spellings), the same under
/// `[target.'cfg(..)']`, `[workspace.dependencies]`, and the crates that
/// `[patch.*]` and `[replace]` substitute. A renamed dependency
/// (`json = { package = "serde_json" }`) is the crate it names.
pub fn manifest(doc: &toml::Table) -> Vec<Dep> {
    let mut out = Vec::new();
    dependency_tables(doc, "", &mut out);
    if let Some(targets) = table(doc, "target") {
        for (cfg, t) in targets {
            if let Some(t) = t.as_table() {
                dependency_tables(t, &format!("target.{cfg}."), &mut out);
            }
        }
    }
    if let Some(ws) = table(doc, "workspace") {
        dependency_tables(ws, "workspace.", &mut out);
    }
    patches(doc, &mut out);
    if let Some(replace) = table(doc, "replace") {
        for (pkgid, spec) in replace {
            out.extend(specs(pkgid_name(pkgid), spec, "[replace]"));
        }
    }
    out
}

fn dependency_tables(t: &toml::Table, prefix: &str, out: &mut Vec<Dep>) {
    for (key, value) in t {
        if !key.ends_with("dependencies") {
            continue;
        }
        let Some(deps) = value.as_table() else {
            continue;
        };
        let section = format!("[{prefix}{key}]");
        for (name, spec) in deps {
            out.extend(specs(name, spec, &section));
        }
    }
}

/// `[patch.crates-io]`, `[patch."https://…"]`: each entry replaces a
/// crate of that source.
fn patches(doc: &toml::Table, out: &mut Vec<Dep>) {
    for (source, t) in table(doc, "patch").into_iter().flatten() {
        let section = format!("[patch.{source}]");
        for (name, spec) in t.as_table().into_iter().flatten() {
            out.extend(specs(name, spec, &section));
        }
    }
}

/// The crate name of a package id spec: `foo:1.0`, `foo@1.0`,
/// `https://github.com/o/foo#1.0`, `registry+https://…#foo@1.0`.
fn pkgid_name(pkgid: &str) -> &str {
    let (url, frag) = match pkgid.split_once('#') {
        Some((u, f)) => (u, Some(f)),
        None => (pkgid, None),
    };
    let named = match frag {
        Some(f) if f.starts_with(|c: char| c.is_ascii_alphabetic()) => f,
        Some(_) => url.trim_end_matches('/').rsplit('/').next().unwrap_or(url),
        None => url,
    };
    named.split(['@', ':']).next().unwrap_or(named)
}

/// One dependency entry: its crate (the `package` key when renamed), once
/// for each source it names. `workspace = true` inherits; no source key
/// is the default registry.
fn specs(key: &str, spec: &toml::Value, section: &str) -> Vec<Dep> {
    let Some(t) = spec.as_table() else {
        return vec![Dep::package(key, Source::Registry(None), section)];
    };
    let name = string(t, "package").unwrap_or(key);
    let mut sources = Vec::new();
    if t.get("workspace").and_then(toml::Value::as_bool) == Some(true) {
        sources.push(Source::Inherited);
    }
    if let Some(g) = string(t, "git") {
        sources.push(Source::Git(norm_git(g)));
    }
    if let Some(p) = string(t, "path") {
        sources.push(Source::Path(norm_path(p)));
    }
    match string(t, "registry").or_else(|| string(t, "registry-index")) {
        // crates.io by its name is the default registry.
        Some("crates-io") | None => {}
        Some(r) => sources.push(Source::Registry(Some(r.to_string()))),
    }
    // A source key that is not a string is an error for Cargo; it is
    // still a source other than the registry.
    for key in ["git", "path", "registry", "registry-index"] {
        if t.get(key).is_some_and(|v| !v.is_str()) {
            sources.push(Source::Url(format!("{key} = {}", value_text(&t[key]))));
        }
    }
    if sources.is_empty() {
        sources.push(Source::Registry(None));
    }
    sources
        .into_iter()
        .map(|s| Dep::package(name, s, section))
        .collect()
}

/// Every `[[package]]` of a Cargo.lock (and the old `[root]`), with its
/// source: a registry, a git repository, or none (a path or workspace
/// crate).
pub fn lock(doc: &toml::Table) -> Vec<Dep> {
    let packages = doc
        .get("package")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(toml::Value::as_table)
        .chain(table(doc, "root"));
    let mut out = Vec::new();
    for p in packages {
        let Some(name) = string(p, "name") else {
            continue;
        };
        let source = match string(p, "source") {
            None => Source::Local,
            Some(s) => match s.split_once('+') {
                Some(("registry" | "sparse", _)) => Source::Registry(Some(s.to_string())),
                Some(("git", url)) => Source::Git(norm_git(url)),
                Some(("path", p)) => Source::Path(norm_path(p)),
                _ => Source::Url(s.to_string()),
            },
        };
        out.push(Dep::package(name, source, "[[package]]"));
    }
    out
}

/// What a `.cargo/config.toml` changes about where crates come from:
/// `[patch.*]` entries, `paths` overrides, `[source.*]` replacements,
/// `[registries.*]` and `[registry]`.
pub fn config(doc: &toml::Table) -> Vec<Dep> {
    let mut out = Vec::new();
    patches(doc, &mut out);
    for p in doc
        .get("paths")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
    {
        let path = norm_path(&value_text(p));
        out.push(Dep::index("paths", Source::Path(path), "paths"));
    }
    for (name, s) in table(doc, "source").into_iter().flatten() {
        let setting = format!("source.{name}");
        let Some(s) = s.as_table() else {
            out.push(Dep::index(&setting, Source::Url(value_text(s)), ""));
            continue;
        };
        for (key, value) in s {
            let v = value_text(value);
            let source = match key.as_str() {
                "replace-with" | "registry" => Source::Registry(Some(v)),
                "local-registry" | "directory" => Source::Path(norm_path(&v)),
                "git" => Source::Git(norm_git(&v)),
                // branch / tag / rev pick a revision of `git`.
                "branch" | "tag" | "rev" => continue,
                _ => Source::Url(format!("{key} = {v}")),
            };
            out.push(Dep::index(&setting, source, ""));
        }
    }
    for (name, r) in table(doc, "registries").into_iter().flatten() {
        if let Some(index) = r.as_table().and_then(|r| string(r, "index")) {
            out.push(Dep::index(
                format!("registries.{name}.index"),
                Source::Registry(Some(index.to_string())),
                "",
            ));
        }
    }
    if let Some(r) = table(doc, "registry") {
        for key in ["default", "index"] {
            if let Some(v) = string(r, key) {
                out.push(Dep::index(
                    format!("registry.{key}"),
                    Source::Registry(Some(v.to_string())),
                    "",
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::dep::parse_toml;
    use super::*;
    use std::collections::BTreeSet;

    fn names(deps: Vec<Dep>) -> BTreeSet<String> {
        deps.into_iter().map(|d| d.name).collect()
    }

    fn set(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn cargo(text: &str) -> Vec<Dep> {
        manifest(&parse_toml(text).unwrap())
    }

    #[test]
    fn sections_and_tables() {
        let t = "[package]\nname = \"x\"\n\n[dependencies]\nserde = \"1\"\ntokio = { version = \"1\" }\n\n[dev-dependencies]\ntempfile = \"3\"\n\n[dependencies.regex]\nversion = \"1\"\n\n[target.'cfg(unix)'.dependencies]\nlibc = \"0.2\"\n";
        assert_eq!(
            names(cargo(t)),
            set(&["libc", "regex", "serde", "tempfile", "tokio"])
        );
    }

    #[test]
    fn inline_tables_dotted_keys_renames_and_workspaces() {
        let t = r#"
[package]
name = "x"
dependencies = "not a table"

[dependencies]
local = { path = "../local" }   # a comment with = and [brackets]
json = { package = "serde_json", version = "1" }
anyhow.version = "1"
anyhow.features = ["std"]
"quoted-name" = "1"

[dependencies.renamed]
package = "real-crate"
version = "1"

[build-dependencies]
cc = "1"

[target."cfg(windows)".dev-dependencies]
winapi = "0.3"

[workspace.dependencies]
tokio = { version = "1", features = ["full"] }

[package.metadata.docs]
rustdoc-dependencies = "ignored: not a dependency table"

[features]
default = ["json"]
"#;
        assert_eq!(
            names(cargo(t)),
            set(&[
                "anyhow",
                "cc",
                "local",
                "quoted-name",
                "real-crate",
                "serde_json",
                "tokio",
                "winapi"
            ])
        );
    }

    #[test]
    fn sources_are_read() {
        let t = r#"
dependencies = { a = { path = "./a/" }, b = { git = "https://github.com/o/b.git", rev = "1" } }
dev-dependencies.c.registry = "corp"
dev-dependencies.d.workspace = true

[patch.crates-io]
serde = { path = "vendor/serde" }

[replace]
"rand:0.8.5" = { git = "https://e.example/rand" }
"#;
        let deps = cargo(t);
        let source = |n: &str| {
            deps.iter()
                .filter(|d| d.name == n)
                .map(|d| (d.source.clone(), d.section.as_str()))
                .collect::<Vec<_>>()
        };
        assert_eq!(source("a"), [(Source::Path("a".into()), "[dependencies]")]);
        assert_eq!(
            source("b"),
            [(
                Source::Git("https://github.com/o/b".into()),
                "[dependencies]"
            )]
        );
        assert_eq!(
            source("c"),
            [(Source::Registry(Some("corp".into())), "[dev-dependencies]")]
        );
        assert_eq!(source("d"), [(Source::Inherited, "[dev-dependencies]")]);
        assert_eq!(
            source("serde"),
            [(Source::Path("vendor/serde".into()), "[patch.crates-io]")]
        );
        assert_eq!(
            source("rand"),
            [(Source::Git("https://e.example/rand".into()), "[replace]")]
        );
        assert_eq!(pkgid_name("https://github.com/o/foo#1.0"), "foo");
        assert_eq!(
            pkgid_name("registry+https://github.com/rust-lang/crates.io-index#foo@1.0"),
            "foo"
        );
        assert_eq!(pkgid_name("foo@1.0"), "foo");
    }

    #[test]
    fn lockfile_packages_and_their_sources() {
        let t = r#"
version = 4

[[package]]
name = "app"
version = "0.1.0"

[[package]]
name = "serde"
version = "1.0.0"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "evil"
version = "0.1.0"
source = "git+https://e.example/evil?branch=main#0123456789"
"#;
        let deps = lock(&parse_toml(t).unwrap());
        assert_eq!(
            deps.iter()
                .map(|d| (d.name.as_str(), d.source.clone()))
                .collect::<Vec<_>>(),
            [
                ("app", Source::Local),
                (
                    "serde",
                    Source::Registry(Some(
                        "registry+https://github.com/rust-lang/crates.io-index".into()
                    ))
                ),
                ("evil", Source::Git("https://e.example/evil".into())),
            ]
        );
    }

    #[test]
    fn cargo_config_sources() {
        let t = r#"
paths = ["../evil"]
[patch.crates-io]
serde = { git = "https://e.example/serde" }
[source.crates-io]
replace-with = "mirror"
[source.mirror]
registry = "sparse+https://e.example/index/"
[registries.corp]
index = "https://corp.example/index"
"#;
        let deps = config(&parse_toml(t).unwrap());
        let got: BTreeSet<(String, Source)> =
            deps.into_iter().map(|d| (d.name, d.source)).collect();
        for want in [
            ("paths", Source::Path("../evil".into())),
            ("serde", Source::Git("https://e.example/serde".into())),
            ("source.crates-io", Source::Registry(Some("mirror".into()))),
            (
                "source.mirror",
                Source::Registry(Some("sparse+https://e.example/index/".into())),
            ),
            (
                "registries.corp.index",
                Source::Registry(Some("https://corp.example/index".into())),
            ),
        ] {
            assert!(
                got.contains(&(want.0.to_string(), want.1.clone())),
                "{want:?} in {got:?}"
            );
        }
    }
}
