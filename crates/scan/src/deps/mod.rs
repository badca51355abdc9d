//! Dependencies declared by manifests and lockfiles, for the `no-new-deps`
//! constraint: every declaration after the change that no declaration
//! before it matches — same package name AND same source — is added. So a
//! new name is new, and so is an old name whose code now comes from a
//! path, a git repository, another registry or another package; a lockfile
//! that gains a package shows what a rename in a manifest tried to hide.
//! Each format is read by a real parser (toml, serde_json) or, for the
//! line formats (go.mod, requirements, setup.cfg, .npmrc), by a reader of
//! that grammar. The new side of a manifest that cannot be read is an
//! error, never an empty list.

mod cargo;
mod dep;
mod gomod;
mod jslock;
mod npm;
mod python;

pub use dep::{Added, Dep, Kind, Source};

use crate::Error;
use dep::parse_toml;
use std::collections::BTreeSet;

/// The manifest formats read here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    CargoToml,
    CargoLock,
    CargoConfig,
    GoMod,
    GoWork,
    GoSum,
    PackageJson,
    NpmLock,
    YarnLock,
    PnpmLock,
    NpmSettings,
    Pyproject,
    UvToml,
    Pipfile,
    PythonLock,
    Requirements,
    SetupCfg,
}

/// The format of `path`, by its file name (case-insensitively: on a
/// case-insensitive file system `CARGO.TOML` is the manifest).
fn format_of(path: &str) -> Option<Format> {
    let lower = path.replace('\\', "/").to_ascii_lowercase();
    let mut parts = lower.rsplit('/');
    let name = parts.next().unwrap_or("");
    let parent = parts.next().unwrap_or("");
    Some(match name {
        "cargo.toml" => Format::CargoToml,
        "cargo.lock" => Format::CargoLock,
        "config.toml" | "config" if parent == ".cargo" => Format::CargoConfig,
        "go.mod" => Format::GoMod,
        "go.work" => Format::GoWork,
        "go.sum" | "go.work.sum" => Format::GoSum,
        "package.json" => Format::PackageJson,
        "package-lock.json" | "npm-shrinkwrap.json" => Format::NpmLock,
        "yarn.lock" => Format::YarnLock,
        "pnpm-lock.yaml" => Format::PnpmLock,
        ".npmrc" | ".yarnrc" | ".yarnrc.yml" => Format::NpmSettings,
        "pyproject.toml" => Format::Pyproject,
        "pipfile" => Format::Pipfile,
        "poetry.lock" | "uv.lock" => Format::PythonLock,
        "setup.cfg" => Format::SetupCfg,
        "uv.toml" => Format::UvToml,
        // requirements.txt, dev-requirements.in, requirements/test.txt…
        n if (n.ends_with(".txt") || n.ends_with(".in"))
            && (n.contains("requirement")
                || n.starts_with("constraints")
                || matches!(parent, "requirements" | "reqs")) =>
        {
            Format::Requirements
        }
        _ => return None,
    })
}

/// Whether `path` is a manifest or lockfile this module reads.
pub fn is_manifest(path: &str) -> bool {
    format_of(path).is_some()
}

/// The declarations of manifest `path` with content `text`; None when
/// `path` is not a manifest, an error (saying where) when it cannot be read.
pub fn deps_of(path: &str, text: &str) -> Option<Result<Vec<Dep>, Error>> {
    let format = format_of(path)?;
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    Some(match format {
        Format::CargoToml => parse_toml(text).map(|d| cargo::manifest(&d)),
        Format::CargoLock => parse_toml(text).map(|d| cargo::lock(&d)),
        Format::CargoConfig => parse_toml(text).map(|d| cargo::config(&d)),
        Format::GoMod => gomod::gomod(text),
        Format::GoWork => gomod::gowork(text),
        Format::GoSum => Ok(gomod::gosum(text)),
        Format::PackageJson => npm::package_json(text),
        Format::NpmLock => jslock::lock(text),
        Format::YarnLock => Ok(jslock::yarn(text)),
        Format::PnpmLock => Ok(jslock::pnpm(text)),
        Format::NpmSettings => Ok(npm::registry_settings(&name.to_ascii_lowercase(), text)),
        Format::Pyproject => parse_toml(text).map(|d| python::pyproject(&d)),
        Format::UvToml => parse_toml(text).map(|d| python::uv_toml(&d)),
        Format::Pipfile => parse_toml(text).map(|d| python::pipfile(&d)),
        Format::PythonLock => parse_toml(text).map(|d| python::lock(&d)),
        Format::Requirements => Ok(python::requirements(text)),
        Format::SetupCfg => Ok(python::setup_cfg(text)),
    })
}

/// The content of one side of a manifest as text: a new side that is not
/// UTF-8 cannot be read the way its tool reads it.
fn text_of(bytes: &[u8]) -> Result<&str, Error> {
    std::str::from_utf8(bytes)
        .map_err(|e| Error::Manifest(format!("not valid UTF-8 (byte {})", e.valid_up_to())))
}

/// The declarations in `new` that none in `old` matches (None = file
/// absent), sorted. A new side that cannot be read is an error: its
/// dependencies cannot be checked. An old side that cannot be read counts
/// as empty, so every declaration of the new one is reported.
pub fn added_deps(path: &str, old: Option<&[u8]>, new: Option<&[u8]>) -> Result<Vec<Added>, Error> {
    let before: Vec<Dep> = old
        .and_then(|b| text_of(b).ok())
        .and_then(|t| deps_of(path, t))
        .and_then(Result::ok)
        .unwrap_or_default();
    let after = match new {
        Some(b) if is_manifest(path) => deps_of(path, text_of(b)?).unwrap_or(Ok(Vec::new()))?,
        _ => Vec::new(),
    };
    let mut added = BTreeSet::new();
    for d in after {
        if before.iter().any(|b| d.same_as(b)) {
            continue;
        }
        let was = before
            .iter()
            .find(|b| b.kind == d.kind && b.name == d.name)
            .map(|b| b.source.clone());
        added.insert(Added { dep: d, was });
    }
    // One report per name and source, whichever section it came first in.
    let mut seen = BTreeSet::new();
    Ok(added
        .into_iter()
        .filter(|a| seen.insert((a.dep.kind, a.dep.name.clone(), a.dep.source.clone())))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names added from `old` to `new` in `path`.
    fn added(path: &str, old: &str, new: &str) -> Result<Vec<String>, Error> {
        added_deps(path, Some(old.as_bytes()), Some(new.as_bytes()))
            .map(|v| v.into_iter().map(|a| a.dep.name).collect())
    }

    const CARGO_BASE: &str =
        "[package]\nname = \"app\"\n\n[dependencies]\nhelper = { path = \"helper\" }\nserde = \"1\"\n";

    #[test]
    fn hidden_cargo_dependencies_are_found() {
        let cases: &[(&str, &str)] = &[
            // A top-level inline table is the [dependencies] table.
            (
                "dependencies = { helper = { path = \"helper\" }, serde = \"1\", evil = { path = \"evil\" } }\n[package]\nname = \"app\"\n",
                "evil",
            ),
            // A rename: the package is the dependency, not the key.
            (
                "[package]\nname = \"app\"\n[dependencies]\nhelper = { path = \"evil\", package = \"evil\" }\nserde = \"1\"\n",
                "evil",
            ),
            // The same name from somewhere else.
            (
                "[package]\nname = \"app\"\n[dependencies]\nhelper = { path = \"evil\" }\nserde = \"1\"\n",
                "helper",
            ),
            (
                "[package]\nname = \"app\"\n[dependencies]\nhelper = { path = \"helper\" }\nserde = { git = \"https://e.example/serde\" }\n",
                "serde",
            ),
            (
                "[package]\nname = \"app\"\n[dependencies]\nhelper = { path = \"helper\" }\nserde = { version = \"1\", registry = \"evil\" }\n",
                "serde",
            ),
            // Dotted keys.
            (
                "[package]\nname = \"app\"\n[dependencies]\nhelper.path = \"helper\"\nserde = \"1\"\nevil.path = \"x\"\n",
                "evil",
            ),
            (
                "dependencies.evil.path = \"x\"\n[package]\nname = \"app\"\n",
                "evil",
            ),
            // Target, dev and build tables, the workspace, patch and replace.
            (
                "[package]\nname = \"app\"\n[target.'cfg(unix)'.build-dependencies]\nevil = \"1\"\n",
                "evil",
            ),
            ("[workspace.dependencies]\nevil = \"1\"\n", "evil"),
            (
                "[package]\nname = \"app\"\n[dependencies]\nhelper = { path = \"helper\" }\nserde = \"1\"\n[patch.crates-io]\nserde = { path = \"evil-serde\" }\n",
                "serde",
            ),
            (
                "[package]\nname = \"app\"\n[dependencies]\nhelper = { path = \"helper\" }\nserde = \"1\"\n[replace]\n\"serde:1.0.0\" = { git = \"https://e.example/serde\" }\n",
                "serde",
            ),
        ];
        for (new, want) in cases {
            assert_eq!(
                added("Cargo.toml", CARGO_BASE, new).as_deref(),
                Ok(&[want.to_string()][..]),
                "{new}"
            );
        }
    }

    #[test]
    fn what_is_not_new() {
        let same: &[(&str, &str, &str)] = &[
            (
                "Cargo.toml",
                "[dependencies]\nserde_json = \"1\"\n",
                "[dependencies]\njson = { package = \"serde_json\", version = \"1\" }\n",
            ),
            (
                "Cargo.toml",
                "[dependencies]\nserde = \"1\"\n",
                "[dependencies]\nserde = { version = \"1.0.200\", features = [\"derive\"] }\n",
            ),
            (
                "Cargo.toml",
                "[dependencies]\nhelper = { path = \"./helper/\" }\n",
                "[dev-dependencies]\nhelper = { path = \"helper\", version = \"0.1\" }\n",
            ),
            (
                "Cargo.toml",
                "[dependencies]\nb = { git = \"https://e.example/b\", rev = \"1\" }\n",
                "[dependencies]\nb = { git = \"https://e.example/b.git\", branch = \"main\" }\n",
            ),
            (
                "crates/x/Cargo.toml",
                "[dependencies]\nserde = \"1\"\n",
                "[dependencies]\nserde.workspace = true\n",
            ),
            (
                "Cargo.toml",
                "[dependencies]\nserde = \"1\"\n",
                "[dependencies]\nserde = { version = \"1\", registry = \"crates-io\" }\n",
            ),
            (
                "package.json",
                "{\"dependencies\": {\"a\": \"1\"}}",
                "{\"devDependencies\": {\"a\": \"^2\"}}",
            ),
            (
                "go.mod",
                "module m\nrequire a.example/b v1.0.0\n",
                "module m\nrequire a.example/b v1.2.0\n",
            ),
            ("requirements.txt", "Flask_Login==1\n", "flask-login>=2\n"),
        ];
        for (path, old, new) in same {
            assert_eq!(added(path, old, new), Ok(vec![]), "{path}: {new}");
        }
    }

    #[test]
    fn a_changed_source_says_what_it_was() {
        let a = added_deps(
            "Cargo.toml",
            Some(CARGO_BASE.as_bytes()),
            Some(b"[dependencies]\nhelper = { path = \"evil\" }\nserde = \"1\"\n"),
        )
        .unwrap();
        assert_eq!(a.len(), 1);
        let m = a[0].message("Cargo.toml");
        assert_eq!(
            m,
            "dependency `helper` in Cargo.toml [dependencies] now comes from path `evil` (was path `helper`): a new source is a new dependency"
        );
        let a = added_deps("Cargo.toml", None, Some(b"[dependencies]\nx = \"1\"\n")).unwrap();
        assert_eq!(
            a[0].message("Cargo.toml"),
            "new dependency `x` from the default registry in Cargo.toml [dependencies]"
        );
    }

    #[test]
    fn lockfiles_show_new_packages() {
        let base = "version = 4\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\n\n[[package]]\nname = \"helper\"\nversion = \"0.1.0\"\n";
        let new = format!("{base}\n[[package]]\nname = \"evil\"\nversion = \"0.1.0\"\n");
        assert_eq!(added("Cargo.lock", base, &new), Ok(vec!["evil".into()]));
        let bumped = base.replace("0.1.0", "0.2.0");
        assert_eq!(added("Cargo.lock", base, &bumped), Ok(vec![]));
        let lock = "{\"packages\": {\"\": {}, \"node_modules/a\": {\"resolved\": \"https://registry.npmjs.org/a/-/a-1.tgz\"}}}";
        let evil = "{\"packages\": {\"\": {}, \"node_modules/a\": {\"name\": \"evil\", \"resolved\": \"https://registry.npmjs.org/evil/-/evil-1.tgz\"}}}";
        assert_eq!(
            added("package-lock.json", lock, evil),
            Ok(vec!["evil".into()])
        );
        assert_eq!(
            added(
                "go.sum",
                "a.example/b v1 h1:x=\n",
                "a.example/b v2 h1:y=\nevil.example/c v1 h1:z=\n"
            ),
            Ok(vec!["evil.example/c".into()])
        );
    }

    /// Per ecosystem: a manifest (path, before, after) that renames a
    /// dependency or points it at another source, and the name it reports.
    const RENAMES_AND_SOURCES: &[(&str, &str, &str, &str)] = &[
        (
            "package.json",
            "{\"dependencies\": {\"lodash\": \"^4\"}}",
            "{\"dependencies\": {\"lodash\": \"npm:evil@^1\"}}",
            "evil",
        ),
        (
            "web/package.json",
            "{\"dependencies\": {\"react\": \"18\"}}",
            "{\"dependencies\": {\"react\": \"file:../evil\"}}",
            "react",
        ),
        (
            "package.json",
            "{\"dependencies\": {\"react\": \"git+https://github.com/facebook/react.git\"}}",
            "{\"dependencies\": {\"react\": \"git+https://e.example/react.git\"}}",
            "react",
        ),
        (
            "package.json",
            "{}",
            "{\"overrides\": {\"minimist\": \"npm:evil@1\"}}",
            "evil",
        ),
        (".npmrc", "", "registry=https://e.example/\n", "registry"),
        (
            "go.mod",
            "module m\nrequire a.example/b v1.0.0\n",
            "module m\nrequire a.example/b v1.0.0\nreplace a.example/b => ./evil\n",
            "a.example/b",
        ),
        (
            "go.mod",
            "module m\nrequire a.example/b v1.0.0\n",
            "module m\nrequire a.example/b v1.0.0\nreplace a.example/b v1.0.0 => evil.example/b v1.0.0\n",
            "a.example/b",
        ),
        ("go.work", "go 1.22\nuse ./a\n", "go 1.22\nuse (\n ./a\n ./evil\n)\n", "evil"),
        (
            ".cargo/config.toml",
            "",
            "[patch.crates-io]\nserde = { path = \"evil\" }\n",
            "serde",
        ),
        (
            "pyproject.toml",
            "[project]\ndependencies = [\"requests\"]\n",
            "[project]\ndependencies = [\"requests @ git+https://e.example/requests\"]\n",
            "requests",
        ),
        (
            "pyproject.toml",
            "[project]\ndependencies = [\"requests\"]\n",
            "[project]\ndependencies = [\"requests\"]\n[tool.uv.sources]\nrequests = { path = \"evil\" }\n",
            "requests",
        ),
        (
            "pyproject.toml",
            "[tool.poetry.dependencies]\npython = \"^3.10\"\n",
            "[tool.poetry.dependencies]\npython = \"^3.10\"\nEvil_Pkg = \"*\"\n",
            "evil-pkg",
        ),
        (
            "requirements-dev.txt",
            "pytest\n",
            "pytest\n--extra-index-url https://e.example/simple\n",
            "--extra-index-url",
        ),
        ("requirements/base.in", "a\n", "a\n-r ../evil.txt\n", "--requirement"),
        (
            "setup.cfg",
            "[options]\ninstall_requires =\n    a\n",
            "[options]\ninstall_requires =\n    a\n    evil\n",
            "evil",
        ),
        ("CARGO.TOML", "", "[dependencies]\nevil = \"1\"\n", "evil"),
        (
            "uv.toml",
            "",
            "[sources]\nrequests = { path = \"evil\" }\n",
            "requests",
        ),
        (
            "yarn.lock",
            "a@^1:\n  version \"1.0.0\"\n",
            "a@^1:\n  version \"1.2.0\"\n\nlodash@npm:evil@1:\n  version \"1.0.0\"\n",
            "evil",
        ),
        // JSON's last duplicate key wins, for npm as for serde_json.
        (
            "package.json",
            "{\"dependencies\": {\"a\": \"1\"}}",
            "{\"dependencies\": {\"a\": \"1\"}, \"dependencies\": {\"a\": \"1\", \"evil\": \"1\"}}",
            "evil",
        ),
    ];

    #[test]
    fn every_ecosystem_catches_renames_and_sources() {
        for (path, old, new, want) in RENAMES_AND_SOURCES {
            assert_eq!(
                added(path, old, new).as_deref(),
                Ok(&[want.to_string()][..]),
                "{path}: {new}"
            );
        }
    }

    #[test]
    fn a_manifest_that_cannot_be_read_is_an_error_saying_where() {
        let e = added("Cargo.toml", "", "[dependencies]\nserde = \n").unwrap_err();
        assert!(e.to_string().contains("not valid TOML at line 2"), "{e}");
        let e = deps_of("pyproject.toml", "[project\n")
            .unwrap()
            .unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
        let e = added("package.json", "{}", "{\"dependencies\": {\"a\": \"1\",}}").unwrap_err();
        assert!(e.to_string().contains("not valid JSON at line 1"), "{e}");
        let e = added(
            "go.mod",
            "module m\n",
            "module m\nrequire (\n  evil.example/x v1\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("never closed"), "{e}");
        let e = added_deps(
            "Cargo.toml",
            None,
            Some(b"[dependencies]\nevil = \"\xff\"\n"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("not valid UTF-8"), "{e}");
        assert_eq!(
            added("Cargo.toml", "[[[", "[dependencies]\na = \"1\"\n"),
            Ok(vec!["a".to_string()]),
            "an old manifest that does not parse counts as empty"
        );
    }

    #[test]
    fn added_is_new_minus_old() {
        let old = "{\"dependencies\": {\"a\": \"1\"}}";
        let new =
            "{\"dependencies\": {\"a\": \"1\", \"b\": \"2\"}, \"devDependencies\": {\"c\": \"1\"}}";
        assert_eq!(added("web/package.json", old, new).unwrap(), vec!["b", "c"]);
        assert!(added("package.json", new, old).unwrap().is_empty());
        assert_eq!(
            added_deps("requirements-dev.txt", None, Some(b"x\n"))
                .unwrap()
                .into_iter()
                .map(|a| a.dep.name)
                .collect::<Vec<_>>(),
            vec!["x"]
        );
        assert!(added("README.md", "", "x").unwrap().is_empty());
        assert!(is_manifest("a/.cargo/config.toml") && !is_manifest("config.toml"));
        for m in [
            "requirements/prod.txt",
            "constraints.txt",
            "dev-requirements.in",
            "test_requirements.txt",
            "sub/uv.toml",
            "web/yarn.lock",
        ] {
            assert!(is_manifest(m), "{m}");
        }
        assert!(!is_manifest("notes.txt") && !is_manifest("uv.lock.txt"));
    }
}
