//! Dependency sets of manifest files (Cargo.toml, go.mod, package.json,
//! pyproject.toml, requirements*.txt), for the `no-new-deps` constraint:
//! the dependencies after the change minus those before are the added ones.
//! TOML and JSON manifests are read by their parsers; go.mod and
//! requirements files by forgiving line readers, as only names are needed.

use std::collections::BTreeSet;

/// Whether `path` is a manifest this module reads.
pub fn is_manifest(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(
        name,
        "Cargo.toml" | "go.mod" | "package.json" | "pyproject.toml"
    ) || (name.starts_with("requirements") && name.ends_with(".txt"))
}

/// The dependency names declared in manifest `path` with content `text`;
/// None when `path` is not a manifest, an error (saying where) when a TOML
/// manifest does not parse.
pub fn deps_of(path: &str, text: &str) -> Option<Result<BTreeSet<String>, String>> {
    let name = path.rsplit('/').next().unwrap_or(path);
    Some(match name {
        "Cargo.toml" => parse_toml(text).map(|doc| cargo(&doc)),
        "go.mod" => Ok(gomod(text)),
        "package.json" => Ok(package_json(text)),
        "pyproject.toml" => parse_toml(text).map(|doc| pyproject(&doc)),
        n if n.starts_with("requirements") && n.ends_with(".txt") => Ok(requirements(text)),
        _ => return None,
    })
}

/// The dependencies in `new` that are not in `old` (None = file absent).
/// A new manifest that does not parse is an error: its dependencies cannot
/// be checked. An old one that does not parse counts as empty, so every
/// dependency of the new one is reported.
pub fn added_deps(path: &str, old: Option<&str>, new: Option<&str>) -> Result<Vec<String>, String> {
    let before = old
        .and_then(|t| deps_of(path, t))
        .and_then(Result::ok)
        .unwrap_or_default();
    let after = match new.and_then(|t| deps_of(path, t)) {
        Some(r) => r?,
        None => BTreeSet::new(),
    };
    Ok(after.difference(&before).cloned().collect())
}

fn strip_comment(line: &str) -> &str {
    line.split('#').next().unwrap_or("").trim()
}

fn parse_toml(text: &str) -> Result<toml::Table, String> {
    text.parse::<toml::Table>().map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        match line {
            Some(l) => format!("not valid TOML at line {l}: {}", e.message()),
            None => format!("not valid TOML: {}", e.message()),
        }
    })
}

/// The table under `key` of `t`, if it is one.
fn table<'a>(t: &'a toml::Table, key: &str) -> Option<&'a toml::Table> {
    t.get(key).and_then(toml::Value::as_table)
}

/// The crates of `[dependencies]`, `[dev-dependencies]`,
/// `[build-dependencies]` (and their old `_` spellings), the same under
/// `[target.'cfg(..)']`, and `[workspace.dependencies]`. A renamed
/// dependency (`json = { package = "serde_json" }`) is the crate it names.
fn cargo(doc: &toml::Table) -> BTreeSet<String> {
    fn collect(t: &toml::Table, out: &mut BTreeSet<String>) {
        for (key, value) in t {
            if !key.ends_with("dependencies") {
                continue;
            }
            let Some(deps) = value.as_table() else {
                continue;
            };
            for (name, spec) in deps {
                let package = spec
                    .as_table()
                    .and_then(|s| s.get("package"))
                    .and_then(toml::Value::as_str);
                out.insert(package.unwrap_or(name).to_string());
            }
        }
    }
    let mut out = BTreeSet::new();
    collect(doc, &mut out);
    if let Some(targets) = table(doc, "target") {
        for t in targets.values().filter_map(toml::Value::as_table) {
            collect(t, &mut out);
        }
    }
    if let Some(ws) = table(doc, "workspace") {
        collect(ws, &mut out);
    }
    out
}

fn gomod(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut block = false;
    for raw in text.lines() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if block {
            if line.starts_with(')') {
                block = false;
            } else if let Some(m) = line.split_whitespace().next() {
                out.insert(m.to_string());
            }
        } else if let Some(rest) = line.strip_prefix("require") {
            let rest = rest.trim();
            if rest.starts_with('(') {
                block = true;
            } else if let Some(m) = rest.split_whitespace().next() {
                out.insert(m.to_string());
            }
        }
    }
    out
}

fn package_json(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if let Ok(serde_json::Value::Object(doc)) = serde_json::from_str::<serde_json::Value>(text) {
        for key in [
            "dependencies",
            "devDependencies",
            "peerDependencies",
            "optionalDependencies",
        ] {
            if let Some(serde_json::Value::Object(m)) = doc.get(key) {
                out.extend(m.keys().cloned());
            }
        }
    }
    out
}

/// A requirement string like `requests>=2; python_version>"3"` → `requests`.
fn req_name(s: &str) -> Option<String> {
    let s = s.trim().trim_matches(['"', '\'', ',']).trim();
    if s.is_empty() || s.starts_with('-') {
        return None;
    }
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(s.len());
    let name = &s[..end];
    (!name.is_empty()).then(|| name.to_ascii_lowercase().replace('_', "-"))
}

fn requirements(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| req_name(strip_comment(l)))
        .collect()
}

/// PEP 621 `[project] dependencies` and `optional-dependencies`, PEP 735
/// `[dependency-groups]` (includes of other groups are not names), and
/// Poetry's `[tool.poetry.dependencies]`, `dev-dependencies` and
/// `[tool.poetry.group.NAME.dependencies]` (without `python`).
fn pyproject(doc: &toml::Table) -> BTreeSet<String> {
    fn requirement_list(v: &toml::Value, out: &mut BTreeSet<String>) {
        for item in v.as_array().into_iter().flatten() {
            out.extend(item.as_str().and_then(req_name));
        }
    }
    fn poetry_keys(t: &toml::Table, out: &mut BTreeSet<String>) {
        for (key, value) in t {
            if key.ends_with("dependencies") {
                for name in value.as_table().into_iter().flat_map(|d| d.keys()) {
                    if name != "python" {
                        out.extend(req_name(name));
                    }
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    if let Some(project) = table(doc, "project") {
        if let Some(deps) = project.get("dependencies") {
            requirement_list(deps, &mut out);
        }
        for list in table(project, "optional-dependencies")
            .into_iter()
            .flat_map(|t| t.values())
        {
            requirement_list(list, &mut out);
        }
    }
    for list in table(doc, "dependency-groups")
        .into_iter()
        .flat_map(|t| t.values())
    {
        requirement_list(list, &mut out);
    }
    if let Some(poetry) = table(doc, "tool").and_then(|t| table(t, "poetry")) {
        poetry_keys(poetry, &mut out);
        for group in table(poetry, "group").into_iter().flat_map(|g| g.values()) {
            if let Some(group) = group.as_table() {
                poetry_keys(group, &mut out);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn cargo(text: &str) -> BTreeSet<String> {
        super::cargo(&parse_toml(text).unwrap())
    }

    fn pyproject(text: &str) -> BTreeSet<String> {
        super::pyproject(&parse_toml(text).unwrap())
    }

    #[test]
    fn cargo_sections_and_tables() {
        let t = "[package]\nname = \"x\"\n\n[dependencies]\nserde = \"1\"\ntokio = { version = \"1\" }\n\n[dev-dependencies]\ntempfile = \"3\"\n\n[dependencies.regex]\nversion = \"1\"\n\n[target.'cfg(unix)'.dependencies]\nlibc = \"0.2\"\n";
        assert_eq!(
            cargo(t),
            set(&["libc", "regex", "serde", "tempfile", "tokio"])
        );
    }

    #[test]
    fn cargo_inline_tables_dotted_keys_renames_and_workspaces() {
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
            cargo(t),
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
    fn a_renamed_dependency_is_not_a_new_one() {
        let old = "[dependencies]\nserde_json = \"1\"\n";
        let new = "[dependencies]\njson = { package = \"serde_json\", version = \"1\" }\n";
        assert_eq!(added_deps("Cargo.toml", Some(old), Some(new)), Ok(vec![]));
        let new = "[dependencies]\nserde_json = { package = \"simd-json\", version = \"1\" }\n";
        assert_eq!(
            added_deps("Cargo.toml", Some(old), Some(new)),
            Ok(vec!["simd-json".to_string()])
        );
    }

    #[test]
    fn a_manifest_that_does_not_parse_is_an_error_saying_where() {
        let e = added_deps("Cargo.toml", Some(""), Some("[dependencies]\nserde = \n")).unwrap_err();
        assert!(e.contains("not valid TOML at line 2"), "{e}");
        let e = deps_of("pyproject.toml", "[project\n")
            .unwrap()
            .unwrap_err();
        assert!(e.contains("line 1"), "{e}");
        assert_eq!(
            added_deps(
                "Cargo.toml",
                Some("[[["),
                Some("[dependencies]\na = \"1\"\n")
            ),
            Ok(vec!["a".to_string()]),
            "an old manifest that does not parse counts as empty"
        );
    }

    #[test]
    fn gomod_single_and_block() {
        let t = "module m\n\ngo 1.22\n\nrequire github.com/a/b v1.0.0\nrequire (\n\tgithub.com/c/d v0.1.0 // indirect\n\tgolang.org/x/e v0.2.0\n)\n";
        assert_eq!(
            gomod(t),
            set(&["github.com/a/b", "github.com/c/d", "golang.org/x/e"])
        );
    }

    #[test]
    fn python_files() {
        let t = "[project]\nname = \"x\"\ndependencies = [\n  \"requests>=2\",\n  \"Flask_Login\",\n]\n\n[tool.poetry.dependencies]\npython = \"^3.10\"\nnumpy = \"*\"\n";
        assert_eq!(pyproject(t), set(&["flask-login", "numpy", "requests"]));
        let t = r#"
[project]
dependencies = ["attrs[extras] >= 22 ; python_version > '3.8'", 'Click']

[project.optional-dependencies]
docs = ["sphinx"]
test = [
    "pytest", # comment, with "quotes"
    "pytest_cov",
]

[dependency-groups]
lint = ["ruff", { include-group = "typing" }]
typing = ["mypy"]

[tool.poetry.dev-dependencies]
Black = "*"

[tool.poetry.group.ci.dependencies]
tox = { version = "^4", optional = true }
python = "^3.10"
"#;
        assert_eq!(
            pyproject(t),
            set(&[
                "attrs",
                "black",
                "click",
                "mypy",
                "pytest",
                "pytest-cov",
                "ruff",
                "sphinx",
                "tox"
            ])
        );
        assert_eq!(
            requirements("# c\nrequests==2.0\n-r other.txt\nurllib3 ; python_version<'3'\n"),
            set(&["requests", "urllib3"])
        );
    }

    #[test]
    fn added_is_new_minus_old() {
        let old = "{\"dependencies\": {\"a\": \"1\"}}";
        let new =
            "{\"dependencies\": {\"a\": \"1\", \"b\": \"2\"}, \"devDependencies\": {\"c\": \"1\"}}";
        assert_eq!(
            added_deps("web/package.json", Some(old), Some(new)).unwrap(),
            vec!["b", "c"]
        );
        assert!(added_deps("package.json", Some(new), Some(old))
            .unwrap()
            .is_empty());
        assert_eq!(
            added_deps("requirements-dev.txt", None, Some("x\n")).unwrap(),
            vec!["x"]
        );
        assert!(added_deps("README.md", None, Some("x")).unwrap().is_empty());
    }
}
