//! Dependency sets of manifest files (Cargo.toml, go.mod, package.json,
//! pyproject.toml, requirements*.txt), for the `no-new-deps` constraint:
//! the dependencies after the change minus those before are the added ones.
//! Line-based readers, deliberately forgiving: they only need names.

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
/// None when `path` is not a manifest.
pub fn deps_of(path: &str, text: &str) -> Option<BTreeSet<String>> {
    let name = path.rsplit('/').next().unwrap_or(path);
    Some(match name {
        "Cargo.toml" => cargo(text),
        "go.mod" => gomod(text),
        "package.json" => package_json(text),
        "pyproject.toml" => pyproject(text),
        n if n.starts_with("requirements") && n.ends_with(".txt") => requirements(text),
        _ => return None,
    })
}

/// The dependencies in `new` that are not in `old` (None = file absent).
pub fn added_deps(path: &str, old: Option<&str>, new: Option<&str>) -> Vec<String> {
    let before = old.and_then(|t| deps_of(path, t)).unwrap_or_default();
    let after = new.and_then(|t| deps_of(path, t)).unwrap_or_default();
    after.difference(&before).cloned().collect()
}

fn strip_comment(line: &str) -> &str {
    line.split('#').next().unwrap_or("").trim()
}

fn toml_key(line: &str) -> Option<String> {
    let (k, _) = line.split_once('=')?;
    let k = k.trim().trim_matches('"').trim_matches('\'');
    let k = k.split('.').next().unwrap_or(k);
    (!k.is_empty()).then(|| k.to_string())
}

fn cargo(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut in_deps = false;
    for raw in text.lines() {
        let line = strip_comment(raw);
        if let Some(h) = line.strip_prefix('[') {
            let h = h.trim_start_matches('[').trim_end_matches(']').trim();
            let parts: Vec<&str> = h.split('.').collect();
            // [dependencies], [dev-dependencies], [target.'x'.dependencies],
            // [workspace.dependencies] — or [dependencies.NAME].
            in_deps = false;
            if let Some(i) = parts.iter().position(|p| p.ends_with("dependencies")) {
                if i + 1 < parts.len() {
                    out.insert(parts[i + 1].trim_matches('"').to_string());
                } else {
                    in_deps = true;
                }
            }
            continue;
        }
        if in_deps {
            if let Some(k) = toml_key(line) {
                out.insert(k);
            }
        }
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

fn pyproject(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut section = String::new();
    let mut in_array = false;
    for raw in text.lines() {
        let line = strip_comment(raw);
        if !in_array && line.starts_with('[') {
            section = line.trim_matches(['[', ']']).trim().to_string();
            continue;
        }
        if in_array {
            for item in line.split(',') {
                let item = item.trim().trim_end_matches(']');
                if item.starts_with('"') || item.starts_with('\'') {
                    out.extend(req_name(item));
                }
            }
            if line.contains(']') {
                in_array = false;
            }
            continue;
        }
        let poetry = section.starts_with("tool.poetry") && section.ends_with("dependencies");
        if poetry {
            if let Some(k) = toml_key(line) {
                if k != "python" {
                    out.insert(k.to_ascii_lowercase());
                }
            }
            continue;
        }
        let list_key = (section == "project" && line.starts_with("dependencies"))
            || section == "project.optional-dependencies"
            || section == "dependency-groups";
        if list_key {
            if let Some((_, v)) = line.split_once('=') {
                let v = v.trim();
                if let Some(rest) = v.strip_prefix('[') {
                    for item in rest.split(',') {
                        let item = item.trim().trim_end_matches(']');
                        if item.starts_with('"') || item.starts_with('\'') {
                            out.extend(req_name(item));
                        }
                    }
                    in_array = !v.contains(']');
                }
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

    #[test]
    fn cargo_sections_and_tables() {
        let t = "[package]\nname = \"x\"\n\n[dependencies]\nserde = \"1\"\ntokio = { version = \"1\" }\n\n[dev-dependencies]\ntempfile = \"3\"\n\n[dependencies.regex]\nversion = \"1\"\n\n[target.'cfg(unix)'.dependencies]\nlibc = \"0.2\"\n";
        assert_eq!(
            cargo(t),
            set(&["libc", "regex", "serde", "tempfile", "tokio"])
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
            added_deps("web/package.json", Some(old), Some(new)),
            vec!["b", "c"]
        );
        assert!(added_deps("package.json", Some(new), Some(old)).is_empty());
        assert_eq!(
            added_deps("requirements-dev.txt", None, Some("x\n")),
            vec!["x"]
        );
        assert!(added_deps("README.md", None, Some("x")).is_empty());
    }
}
