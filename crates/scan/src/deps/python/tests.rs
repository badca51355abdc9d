//! The Python readers' spec: pyproject, uv.toml, Pipfile, the lockfiles,
//! requirements files and setup.cfg.

use super::super::dep::parse_toml;
use super::*;
use std::collections::BTreeSet;

fn pairs(deps: Vec<Dep>) -> BTreeSet<(String, Source)> {
    deps.into_iter().map(|d| (d.name, d.source)).collect()
}

fn reg(n: &str) -> (String, Source) {
    (n.to_string(), Source::Registry(None))
}

fn names(deps: Vec<Dep>) -> BTreeSet<String> {
    deps.into_iter().map(|d| d.name).collect()
}

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn pep508_names_and_urls() {
    let d = pep508("attrs[extras] >= 22 ; python_version > '3.8'", "");
    assert_eq!(
        (d.name.as_str(), d.source),
        ("attrs", Source::Registry(None))
    );
    let d = pep508(
        "Evil_Pkg @ git+https://e.example/evil.git@v1 ; os_name=='nt'",
        "",
    );
    assert_eq!(
        (d.name.as_str(), d.source),
        ("evil-pkg", Source::Git("https://e.example/evil".into()))
    );
    let d = pep508("x@https://e.example/x-1.whl", "");
    assert_eq!(d.source, Source::Url("https://e.example/x-1.whl".into()));
    let d = pep508("y @ file:///opt/y", "");
    assert_eq!(d.source, Source::Path("/opt/y".into()));
}

/// A pyproject.toml with a dependency in every table a tool reads.
const PYPROJECT: &str = r#"
[project]
dependencies = ["attrs[extras] >= 22 ; python_version > '3.8'", 'Click', "helper @ file:///./helper"]

[project.optional-dependencies]
docs = ["sphinx"]
test = [
"pytest", # comment, with "quotes"
"pytest_cov",
]

[dependency-groups]
lint = ["ruff", { include-group = "typing" }]
typing = ["mypy"]

[build-system]
requires = ["setuptools>=61", "evil-build"]

[tool.poetry.dependencies]
python = "^3.10"
numpy = "*"
local = { path = "../local" }
forked = [{ git = "https://e.example/forked.git", python = "<3.11" }, { version = "1", python = ">=3.11" }]

[tool.poetry.dev-dependencies]
Black = "*"

[tool.poetry.group.ci.dependencies]
tox = { version = "^4", optional = true }

[[tool.poetry.source]]
name = "mirror"
url = "https://e.example/simple"

[tool.uv.sources]
requests = { git = "https://e.example/requests" }

[tool.uv]
dev-dependencies = ["hypothesis"]
extra-index-url = ["https://e.example/extra"]

[[tool.uv.index]]
name = "corp"
url = "https://corp.example/simple"

[tool.pdm.dev-dependencies]
lint = ["flake8"]

[tool.hatch.envs.test]
dependencies = ["coverage"]

[tool.setuptools.dynamic]
dependencies = { file = ["requirements.in"] }
"#;

#[test]
fn pyproject_every_table() {
    let t = PYPROJECT;
    let got = pairs(pyproject(&parse_toml(t).unwrap()));
    for want in [
        reg("attrs"),
        reg("click"),
        ("helper".into(), Source::Path("/helper".into())),
        reg("sphinx"),
        reg("pytest"),
        reg("pytest-cov"),
        reg("ruff"),
        reg("mypy"),
        reg("setuptools"),
        reg("evil-build"),
        reg("numpy"),
        ("local".into(), Source::Path("../local".into())),
        (
            "forked".into(),
            Source::Git("https://e.example/forked".into()),
        ),
        reg("forked"),
        reg("black"),
        reg("tox"),
        (
            "tool.poetry.source mirror".into(),
            Source::Url("https://e.example/simple".into()),
        ),
        (
            "requests".into(),
            Source::Git("https://e.example/requests".into()),
        ),
        reg("hypothesis"),
        (
            "tool.uv.extra-index-url".into(),
            Source::Url("https://e.example/extra".into()),
        ),
        (
            "tool.uv.index corp".into(),
            Source::Url("https://corp.example/simple".into()),
        ),
        reg("flake8"),
        reg("coverage"),
        (
            "tool.setuptools.dynamic file".into(),
            Source::Path("requirements.in".into()),
        ),
    ] {
        assert!(got.contains(&want), "{want:?} missing from {got:?}");
    }
    assert!(
        !got.iter().any(|(n, _)| n == "python" || n == "typing"),
        "{got:?}"
    );
}

#[test]
fn requirements_files_as_pip_reads_them() {
    let t = "# c\nrequests==2.0 # pinned\n-r other.txt\n--constraint=c.txt\nurllib3 ; python_version<'3'\n\
             -e git+https://e.example/e.git@main#egg=Editable_Pkg\n--extra-index-url https://e.example/simple\n\
             -ihttps://e.example/main\n./local/pkg\nhttps://e.example/w-1.whl\nlong \\\n  >= 1\n--hash=sha256:00\n\
             name @ git+https://e.example/n#frag\n";
    let got = pairs(requirements(t));
    let want: BTreeSet<(String, Source)> = [
        reg("requests"),
        ("--requirement".into(), Source::Path("other.txt".into())),
        ("--constraint".into(), Source::Path("c.txt".into())),
        reg("urllib3"),
        (
            "editable-pkg".into(),
            Source::Git("https://e.example/e".into()),
        ),
        (
            "--extra-index-url".into(),
            Source::Url("https://e.example/simple".into()),
        ),
        (
            "--index-url".into(),
            Source::Url("https://e.example/main".into()),
        ),
        ("./local/pkg".into(), Source::Path("local/pkg".into())),
        (
            "https://e.example/w-1.whl".into(),
            Source::Url("https://e.example/w-1.whl".into()),
        ),
        reg("long"),
        ("name".into(), Source::Git("https://e.example/n".into())),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want);
}

#[test]
fn pipfile_locks_and_setup_cfg() {
    let pip = "[[source]]\nname = \"pypi\"\nurl = \"https://pypi.org/simple\"\n\n[packages]\nrequests = \"*\"\nevil = { git = \"https://e.example/evil\" }\n\n[dev-packages]\npytest = \"*\"\n\n[requires]\npython_version = \"3.11\"\n";
    assert_eq!(
        names(pipfile(&parse_toml(pip).unwrap())),
        set(&["evil", "pytest", "requests", "source pypi"])
    );
    let poetry = "[[package]]\nname = \"Evil\"\nversion = \"1\"\n[package.source]\ntype = \"git\"\nurl = \"https://e.example/evil.git\"\nreference = \"main\"\n\n[[package]]\nname = \"six\"\nversion = \"1\"\n";
    assert_eq!(
        pairs(lock(&parse_toml(poetry).unwrap())),
        [
            (
                "evil".to_string(),
                Source::Git("https://e.example/evil".into())
            ),
            reg("six")
        ]
        .into_iter()
        .collect()
    );
    let uv = "[[package]]\nname = \"a\"\nsource = { registry = \"https://pypi.org/simple\" }\n[[package]]\nname = \"b\"\nsource = { editable = \"libs/b\" }\n";
    assert_eq!(
        pairs(lock(&parse_toml(uv).unwrap())),
        [
            (
                "a".to_string(),
                Source::Registry(Some("https://pypi.org/simple".into()))
            ),
            ("b".to_string(), Source::Path("libs/b".into())),
        ]
        .into_iter()
        .collect()
    );
    let cfg = "[metadata]\nname = x\n\n[options]\npackages = find:\ninstall_requires =\n    requests>=2\n    Evil_Pkg @ https://e.example/e.whl ; python_version>'3'\nsetup_requires = wheel\n\n[options.extras_require]\ntest =\n    pytest\n";
    assert_eq!(
        pairs(setup_cfg(cfg)),
        [
            reg("requests"),
            (
                "evil-pkg".into(),
                Source::Url("https://e.example/e.whl".into())
            ),
            reg("wheel"),
            reg("pytest"),
        ]
        .into_iter()
        .collect()
    );
}
