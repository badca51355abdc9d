//! The lockfiles of JavaScript package managers: what is installed, after
//! every alias and transitive dependency is resolved — a second look at
//! what package.json declared. package-lock.json / npm-shrinkwrap.json are
//! read with serde_json; yarn.lock (v1 and berry) and pnpm-lock.yaml by
//! line readers of their entry keys, which name each package and version.

use super::dep::{norm_git, norm_path, Dep, Source};
use super::npm::{object, spec_source, without_version};
use crate::Error;
use serde_json::Value;

/// Every package a package-lock.json or npm-shrinkwrap.json installs
/// (`packages`, or the older nested `dependencies`), with where it was
/// fetched from: the registry's host, a git repository, a local path.
pub fn lock(text: &str) -> Result<Vec<Dep>, Error> {
    let doc = object(text)?;
    let mut out = Vec::new();
    if let Some(Value::Object(packages)) = doc.get("packages") {
        for (key, p) in packages {
            if key.is_empty() {
                continue; // the project itself
            }
            let Value::Object(p) = p else { continue };
            let dir_name = key.rsplit("node_modules/").next().unwrap_or(key);
            let name = p.get("name").and_then(Value::as_str).unwrap_or(dir_name);
            let source = if p.get("link").and_then(Value::as_bool) == Some(true)
                || !key.contains("node_modules/")
            {
                Source::Path(norm_path(
                    p.get("resolved").and_then(Value::as_str).unwrap_or(key),
                ))
            } else {
                resolved(p.get("resolved").and_then(Value::as_str))
            };
            out.push(Dep::package(name, source, "packages"));
        }
    } else if let Some(deps) = doc.get("dependencies") {
        nested(deps, &mut out);
    }
    Ok(out)
}

/// lockfileVersion 1: `dependencies` nested by install location.
fn nested(deps: &Value, out: &mut Vec<Dep>) {
    for (name, d) in deps.as_object().into_iter().flatten() {
        let version = d.get("version").and_then(Value::as_str).unwrap_or("");
        let (name, source) = match version.strip_prefix("npm:") {
            Some(alias) => (without_version(alias), Source::Registry(None)),
            None if version.contains(':') || version.contains('/') => {
                (name.as_str(), spec_source(name, version).1)
            }
            None => (
                name.as_str(),
                resolved(d.get("resolved").and_then(Value::as_str)),
            ),
        };
        out.push(Dep::package(name, source, "dependencies"));
        if let Some(sub) = d.get("dependencies") {
            nested(sub, out);
        }
    }
}

/// Where a locked package was fetched from: a tarball's host stands for
/// its registry (the rest of the URL names the version).
fn resolved(url: Option<&str>) -> Source {
    let Some(url) = url else {
        return Source::Local;
    };
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("git") {
        return Source::Git(norm_git(url));
    }
    if let Some(rest) = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"))
    {
        let host = rest.split('/').next().unwrap_or(rest);
        return Source::Registry(Some(host.to_string()));
    }
    if let Some(p) = url.strip_prefix("file:") {
        return Source::Path(norm_path(p));
    }
    Source::Url(url.to_string())
}

/// In a lockfile, only a git or path source is kept beside the name: a
/// registry range or a protocol's spelling changes with every version.
fn locked(name: &str, range: &str, section: &str) -> Dep {
    let range = match range.strip_prefix("npm:") {
        // `npm:^4.17.21` is a registry range; `npm:evil@1` an alias.
        Some(r) if !r.get(1..).is_some_and(|x| x.contains('@')) => "",
        _ => range,
    };
    let (name, source) = spec_source(name, range);
    let source = match source {
        s @ (Source::Git(_) | Source::Path(_)) => s,
        _ => Source::Registry(None),
    };
    Dep::package(name, source, section)
}

/// A yarn.lock: each entry's descriptors (`"a@^1", a@^1.2:`), and berry's
/// `resolution:` lines, which name the package an alias resolved to.
pub fn yarn(text: &str) -> Vec<Dep> {
    let mut out = Vec::new();
    for raw in text.lines() {
        if raw.starts_with('#') || raw.trim().is_empty() {
            continue;
        }
        let line = raw.trim();
        if !raw.starts_with(char::is_whitespace) {
            let Some(keys) = line.strip_suffix(':') else {
                continue;
            };
            for desc in keys.split(',') {
                let desc = desc.trim().trim_matches('"');
                if desc.is_empty() || desc == "__metadata" {
                    continue;
                }
                let name = without_version(desc);
                let range = desc[name.len()..].strip_prefix('@').unwrap_or("");
                out.push(locked(name, range, "yarn.lock"));
            }
        } else if let Some(res) = line.strip_prefix("resolution:") {
            let res = res.trim().trim_matches('"');
            let name = without_version(res);
            let range = res[name.len()..].strip_prefix('@').unwrap_or("");
            out.push(locked(name, range, "yarn.lock"));
        }
    }
    out
}

/// A pnpm-lock.yaml: the keys of `packages:` and `snapshots:`
/// (`name@1.0.0`, `'@s/n@1.0.0(peer@2)'`, the older `/name/1.0.0`).
pub fn pnpm(text: &str) -> Vec<Dep> {
    let mut out = Vec::new();
    let mut in_packages = false;
    for raw in text.lines() {
        if raw.trim().is_empty() || raw.trim_start().starts_with('#') {
            continue;
        }
        if !raw.starts_with(char::is_whitespace) {
            in_packages = matches!(raw.trim_end(), "packages:" | "snapshots:");
            continue;
        }
        let indent = raw.len() - raw.trim_start().len();
        if !in_packages || indent != 2 {
            continue;
        }
        let key = raw.trim();
        let key = key.split_once(": ").map_or(key, |(k, _)| k);
        let key = key.trim_end_matches(':').trim_matches(['"', '\'']);
        let key = key.strip_prefix('/').unwrap_or(key);
        let key = key.split('(').next().unwrap_or(key);
        let name = if key.get(1..).is_some_and(|k| k.contains('@')) {
            without_version(key)
        } else {
            // `/name/1.0.0`: the last segment is the version.
            key.rsplit_once('/').map_or(key, |(n, _)| n)
        };
        out.push(Dep::package(name, Source::Registry(None), "packages"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn pairs(deps: Vec<Dep>) -> BTreeSet<(String, Source)> {
        deps.into_iter().map(|d| (d.name, d.source)).collect()
    }

    fn reg(n: &str) -> (String, Source) {
        (n.to_string(), Source::Registry(None))
    }

    #[test]
    fn lockfiles_list_installed_packages() {
        let t = r#"{"lockfileVersion": 3, "packages": {
  "": {"name": "app"},
  "node_modules/react": {"version": "18.0.0", "resolved": "https://registry.npmjs.org/react/-/react-18.0.0.tgz"},
  "node_modules/lodash": {"name": "evil", "version": "1.0.0", "resolved": "https://registry.npmjs.org/evil/-/evil-1.0.0.tgz"},
  "node_modules/a/node_modules/g": {"resolved": "git+ssh://git@github.com/o/g.git#abc"},
  "node_modules/l": {"resolved": "libs/l", "link": true},
  "libs/l": {"name": "l"}
}}"#;
        assert_eq!(
            pairs(lock(t).unwrap()),
            BTreeSet::from([
                ("l".into(), Source::Path("libs/l".into())),
                ("g".into(), Source::Git("ssh://git@github.com/o/g".into())),
                ("l".into(), Source::Path("libs/l".into())),
                (
                    "evil".into(),
                    Source::Registry(Some("registry.npmjs.org".into()))
                ),
                (
                    "react".into(),
                    Source::Registry(Some("registry.npmjs.org".into()))
                ),
            ])
        );
        let v1 = r#"{"lockfileVersion": 1, "dependencies": {
  "a": {"version": "1.0.0", "resolved": "https://registry.npmjs.org/a/-/a-1.0.0.tgz",
        "dependencies": {"b": {"version": "npm:evil@1.0.0"}}}
}}"#;
        assert_eq!(
            pairs(lock(v1).unwrap()),
            BTreeSet::from([
                (
                    "a".into(),
                    Source::Registry(Some("registry.npmjs.org".into()))
                ),
                ("evil".into(), Source::Registry(None)),
            ])
        );
    }

    #[test]
    fn yarn_and_pnpm_lockfiles_name_their_packages() {
        let v1 = "# yarn lockfile v1\n\n\"@babel/core@^7.0.0\", \"@babel/core@^7.1.0\":\n  version \"7.1.0\"\n  dependencies:\n    lodash \"^4\"\n\nlodash@npm:evil@1:\n  version \"1.0.0\"\n\ng@git+https://e.example/g.git#abc:\n  version \"1.0.0\"\n";
        assert_eq!(
            pairs(yarn(v1)),
            BTreeSet::from([
                reg("@babel/core"),
                reg("evil"),
                ("g".into(), Source::Git("https://e.example/g".into())),
            ])
        );
        let berry = "__metadata:\n  version: 6\n\n\"lodash@npm:^4.17.21\":\n  version: 4.17.21\n  resolution: \"lodash@npm:4.17.21\"\n\n\"x@npm:evil@^1\":\n  resolution: \"evil@npm:1.0.0\"\n\n\"app@workspace:.\":\n  resolution: \"app@workspace:.\"\n";
        assert_eq!(
            pairs(yarn(berry)),
            BTreeSet::from([reg("lodash"), reg("evil"), reg("app")])
        );
        let pnpm_lock = "lockfileVersion: '9.0'\n\nimporters:\n  .:\n    dependencies:\n      lodash:\n        specifier: npm:evil@1\n        version: evil@1.0.0\n\npackages:\n\n  evil@1.0.0:\n    resolution: {integrity: sha512-x}\n\n  '@s/n@2.0.0':\n    resolution: {integrity: sha512-y}\n\n  /old/1.0.0:\n    resolution: {integrity: sha512-z}\n\nsnapshots:\n\n  p@1.0.0(react@18.0.0): {}\n";
        assert_eq!(
            pairs(pnpm(pnpm_lock)),
            BTreeSet::from([reg("evil"), reg("@s/n"), reg("old"), reg("p")])
        );
    }
}
