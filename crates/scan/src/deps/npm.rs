//! npm's dependency declarations: package.json (the four dependency maps,
//! `npm:` aliases, `file:`/`link:`/git/URL sources, and the overrides and
//! resolutions that swap a transitive package), read with serde_json; and
//! what the settings of `.npmrc`, `.yarnrc` and `.yarnrc.yml` change about
//! where packages come from (registries, yarn's `packageExtensions`), read
//! line by line. The lockfiles are jslock's.

use super::dep::{norm_git, norm_path, Dep, Source};
use crate::Error;
use serde_json::{Map, Value};

const SECTIONS: [&str; 4] = [
    "dependencies",
    "devDependencies",
    "optionalDependencies",
    "peerDependencies",
];

pub(super) fn object(text: &str) -> Result<Map<String, Value>, Error> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(doc)) => Ok(doc),
        Ok(_) => Err(Error::Manifest("not a JSON object".into())),
        Err(e) => Err(Error::Manifest(format!(
            "not valid JSON at line {} column {}: {e}",
            e.line(),
            e.column()
        ))),
    }
}

/// The dependencies of a package.json. A dependency map that is not an
/// object is an error: npm would read something from it.
pub fn package_json(text: &str) -> Result<Vec<Dep>, Error> {
    let doc = object(text)?;
    let mut out = Vec::new();
    for section in SECTIONS {
        match doc.get(section) {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => {
                for (key, spec) in m {
                    out.push(spec_dep(key, spec, section));
                }
            }
            Some(_) => return Err(Error::Manifest(format!("`{section}` is not an object"))),
        }
    }
    if let Some(o) = doc.get("overrides") {
        overrides(o, "overrides", &mut out);
    }
    if let Some(Value::Object(r)) = doc.get("resolutions") {
        for (pattern, spec) in r {
            out.push(spec_dep(last_package(pattern), spec, "resolutions"));
        }
    }
    if let Some(o) = doc.get("pnpm").and_then(|p| p.get("overrides")) {
        overrides(o, "pnpm.overrides", &mut out);
    }
    Ok(out)
}

/// npm `overrides` (nested: `{"a": {".": "1", "b": "npm:c@1"}}`) and
/// pnpm's (flat: `{"a>b": "1"}`).
fn overrides(v: &Value, section: &str, out: &mut Vec<Dep>) {
    let Value::Object(m) = v else {
        out.push(spec_dep(section, v, section));
        return;
    };
    for (key, spec) in m {
        let name = if key == "." {
            section.rsplit('>').next().unwrap_or(section)
        } else {
            last_package(key)
        };
        match spec {
            Value::Object(_) => overrides(spec, &format!("{section}>{name}"), out),
            _ => out.push(spec_dep(name, spec, section)),
        }
    }
}

/// The package a selector ends with: `**/a/@s/b@^1` → `@s/b`, `a>b@1` → `b`.
fn last_package(pattern: &str) -> &str {
    let p = pattern.rsplit('>').next().unwrap_or(pattern);
    let segs: Vec<&str> = p.split('/').collect();
    let start = match segs.len() {
        0 | 1 => 0,
        n if segs[n - 2].starts_with('@') => n - 2,
        n => n - 1,
    };
    let tail_at = segs[..start].iter().map(|s| s.len() + 1).sum::<usize>();
    without_version(&p[tail_at..])
}

/// `name@range` → `name`, keeping a scope's leading `@`.
pub(super) fn without_version(s: &str) -> &str {
    match s.get(1..).and_then(|rest| rest.find('@')) {
        Some(i) => &s[..i + 1],
        None => s,
    }
}

/// One dependency entry: its package (an `npm:` alias names the real one)
/// and where it comes from, by the spec's protocol.
fn spec_dep(key: &str, spec: &Value, section: &str) -> Dep {
    let Value::String(spec) = spec else {
        return Dep::package(key, Source::Url(spec.to_string()), section);
    };
    let (name, source) = spec_source(key, spec.trim());
    Dep::package(name, source, section)
}

pub(super) fn spec_source(key: &str, spec: &str) -> (String, Source) {
    let lower = spec.to_ascii_lowercase();
    let has = |p: &str| lower.starts_with(p);
    if let Some(alias) = spec.strip_prefix("npm:") {
        return (
            without_version(alias.trim()).to_string(),
            Source::Registry(None),
        );
    }
    let source = if has("file:") || has("link:") || has("portal:") {
        Source::Path(norm_path(spec.split_once(':').map_or(spec, |x| x.1)))
    } else if has("workspace:") {
        Source::Local
    } else if has("git+")
        || has("git:")
        || has("git://")
        || has("github:")
        || has("gitlab:")
        || has("bitbucket:")
        || has("gist:")
    {
        Source::Git(norm_git(spec))
    } else if has("http://") || has("https://") {
        if lower
            .split(['#', '?'])
            .next()
            .unwrap_or("")
            .ends_with(".git")
        {
            Source::Git(norm_git(spec))
        } else {
            Source::Url(spec.to_string())
        }
    } else if spec.starts_with(['.', '/', '~']) {
        Source::Path(norm_path(spec))
    } else if spec
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-')))
        .is_some_and(|i| i > 0 && spec[i..].starts_with(':'))
    {
        // A protocol not modelled here (`patch:`, `catalog:`…): compared as written.
        Source::Url(spec.to_string())
    } else if spec.contains('/') {
        // `owner/repo`: a GitHub shorthand (no version range has a `/`).
        Source::Git(norm_git(&format!("github:{spec}")))
    } else {
        Source::Registry(None)
    };
    (key.to_string(), source)
}

/// Registry settings of `.npmrc` (`registry=`, `@scope:registry=`),
/// `.yarnrc` (`registry "…"`) and `.yarnrc.yml` (`npmRegistryServer:`):
/// each says where every package (of a scope) is fetched from. In
/// `.yarnrc.yml`, every line under `packageExtensions` too: it adds
/// dependencies to other packages.
pub fn registry_settings(file: &str, text: &str) -> Vec<Dep> {
    let mut out = Vec::new();
    let mut extensions = false;
    for raw in text.lines() {
        let line = raw.trim();
        if line.starts_with(['#', ';']) || line.is_empty() {
            continue;
        }
        if file == ".yarnrc.yml" {
            if !raw.starts_with(char::is_whitespace) {
                extensions = line.starts_with("packageExtensions");
            }
            if extensions {
                out.push(Dep::index(
                    "packageExtensions",
                    Source::Url(line.to_string()),
                    "",
                ));
                continue;
            }
        }
        let split = match file {
            ".npmrc" => line.split_once('='),
            ".yarnrc.yml" => line.split_once(':'),
            _ => line.split_once(char::is_whitespace),
        };
        let Some((key, value)) = split else { continue };
        let key = key.trim().trim_matches(['"', '\'']);
        let lower = key.to_ascii_lowercase();
        if !(lower.ends_with("registry") || lower.ends_with("registryserver")) {
            continue;
        }
        let value = value.trim().trim_matches(['"', '\'']).trim();
        out.push(Dep::index(key, Source::Url(value.to_string()), ""));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(deps: Vec<Dep>) -> Vec<(String, Source)> {
        deps.into_iter().map(|d| (d.name, d.source)).collect()
    }

    #[test]
    fn every_section_and_protocol() {
        let t = r#"{
  "dependencies": {"react": "^18", "lodash": "npm:evil@1", "sc": "npm:@s/evil",
                   "l": "file:../l/", "k": "link:./k", "g": "git+https://e.example/g.git#v1",
                   "h": "owner/repo", "t": "https://e.example/t.tgz", "w": "workspace:*",
                   "p": "patch:x@npm:1#./p.patch"},
  "devDependencies": {"jest": "29"},
  "optionalDependencies": {"fsevents": "2"},
  "peerDependencies": {"react-dom": "*"}
}"#;
        assert_eq!(
            pairs(package_json(t).unwrap()),
            [
                ("g".into(), Source::Git("https://e.example/g".into())),
                ("h".into(), Source::Git("github:owner/repo".into())),
                ("k".into(), Source::Path("k".into())),
                ("l".into(), Source::Path("../l".into())),
                ("evil".into(), Source::Registry(None)),
                ("p".into(), Source::Url("patch:x@npm:1#./p.patch".into())),
                ("react".into(), Source::Registry(None)),
                ("@s/evil".into(), Source::Registry(None)),
                ("t".into(), Source::Url("https://e.example/t.tgz".into())),
                ("w".into(), Source::Local),
                ("jest".into(), Source::Registry(None)),
                ("fsevents".into(), Source::Registry(None)),
                ("react-dom".into(), Source::Registry(None)),
            ]
        );
    }

    #[test]
    fn overrides_and_resolutions_swap_packages() {
        let t = r#"{
  "overrides": {"a": {".": "1", "b@2": "npm:evil@1"}, "c": "file:./c"},
  "resolutions": {"**/x/@s/y": "git+https://e.example/y"},
  "pnpm": {"overrides": {"m>n@1": "2"}}
}"#;
        assert_eq!(
            pairs(package_json(t).unwrap()),
            [
                ("a".into(), Source::Registry(None)),
                ("evil".into(), Source::Registry(None)),
                ("c".into(), Source::Path("c".into())),
                ("@s/y".into(), Source::Git("https://e.example/y".into())),
                ("n".into(), Source::Registry(None)),
            ]
        );
    }

    #[test]
    fn malformed_package_json_is_an_error() {
        assert!(package_json("{\"dependencies\": {").is_err());
        assert!(package_json("[]").is_err());
        let e = package_json("{\"dependencies\": [\"evil\"]}").unwrap_err();
        assert!(
            e.to_string().contains("`dependencies` is not an object"),
            "{e}"
        );
    }

    #[test]
    fn registry_settings_are_package_sources() {
        let npmrc = "; c\nregistry=https://e.example/\n@s:registry = https://s.example\n//e.example/:_authToken=x\n";
        assert_eq!(
            pairs(registry_settings(".npmrc", npmrc)),
            [
                ("registry".into(), Source::Url("https://e.example/".into())),
                (
                    "@s:registry".into(),
                    Source::Url("https://s.example".into())
                ),
            ]
        );
        assert_eq!(
            pairs(registry_settings(
                ".yarnrc",
                "registry \"https://e.example\"\n"
            )),
            [("registry".into(), Source::Url("https://e.example".into()))]
        );
        assert_eq!(
            pairs(registry_settings(
                ".yarnrc.yml",
                "npmScopes:\n  s:\n    npmRegistryServer: \"https://e.example\"\n"
            )),
            [(
                "npmRegistryServer".into(),
                Source::Url("https://e.example".into())
            )]
        );
        let ext = "nodeLinker: pnp\npackageExtensions:\n  \"react@*\":\n    dependencies:\n      evil: \"1\"\n";
        assert_eq!(
            pairs(registry_settings(".yarnrc.yml", ext))
                .into_iter()
                .map(|(n, s)| format!("{n} {s}"))
                .collect::<Vec<_>>(),
            [
                "packageExtensions `packageExtensions:`",
                "packageExtensions `\"react@*\":`",
                "packageExtensions `dependencies:`",
                "packageExtensions `evil: \"1\"`",
            ]
        );
    }
}
