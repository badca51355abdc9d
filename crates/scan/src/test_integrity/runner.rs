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
use crate::model::verdict::{Issue, Severity};
use std::collections::{BTreeMap, BTreeSet};

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

/// Python modules a test run can import by name: CPython 3.11's
/// `sys.stdlib_module_names` (`python3 -c "import sys;
/// print(sorted(sys.stdlib_module_names))"`) and the runner's own
/// (`pytest`, `_pytest`, `pluggy`, `py`, `iniconfig`), sorted by bytes for
/// a binary search. A top-level module or package of the change with one
/// of these names is imported instead.
const SHADOWED: &[&str] = &[
    "__future__",
    "_abc",
    "_aix_support",
    "_ast",
    "_asyncio",
    "_bisect",
    "_blake2",
    "_bootsubprocess",
    "_bz2",
    "_codecs",
    "_codecs_cn",
    "_codecs_hk",
    "_codecs_iso2022",
    "_codecs_jp",
    "_codecs_kr",
    "_codecs_tw",
    "_collections",
    "_collections_abc",
    "_compat_pickle",
    "_compression",
    "_contextvars",
    "_crypt",
    "_csv",
    "_ctypes",
    "_curses",
    "_curses_panel",
    "_datetime",
    "_dbm",
    "_decimal",
    "_elementtree",
    "_frozen_importlib",
    "_frozen_importlib_external",
    "_functools",
    "_gdbm",
    "_hashlib",
    "_heapq",
    "_imp",
    "_io",
    "_json",
    "_locale",
    "_lsprof",
    "_lzma",
    "_markupbase",
    "_md5",
    "_msi",
    "_multibytecodec",
    "_multiprocessing",
    "_opcode",
    "_operator",
    "_osx_support",
    "_overlapped",
    "_pickle",
    "_posixshmem",
    "_posixsubprocess",
    "_py_abc",
    "_pydecimal",
    "_pyio",
    "_pytest",
    "_queue",
    "_random",
    "_scproxy",
    "_sha1",
    "_sha256",
    "_sha3",
    "_sha512",
    "_signal",
    "_sitebuiltins",
    "_socket",
    "_sqlite3",
    "_sre",
    "_ssl",
    "_stat",
    "_statistics",
    "_string",
    "_strptime",
    "_struct",
    "_symtable",
    "_thread",
    "_threading_local",
    "_tkinter",
    "_tokenize",
    "_tracemalloc",
    "_typing",
    "_uuid",
    "_warnings",
    "_weakref",
    "_weakrefset",
    "_winapi",
    "_zoneinfo",
    "abc",
    "aifc",
    "antigravity",
    "argparse",
    "array",
    "ast",
    "asynchat",
    "asyncio",
    "asyncore",
    "atexit",
    "audioop",
    "base64",
    "bdb",
    "binascii",
    "bisect",
    "builtins",
    "bz2",
    "cProfile",
    "calendar",
    "cgi",
    "cgitb",
    "chunk",
    "cmath",
    "cmd",
    "code",
    "codecs",
    "codeop",
    "collections",
    "colorsys",
    "compileall",
    "concurrent",
    "configparser",
    "contextlib",
    "contextvars",
    "copy",
    "copyreg",
    "crypt",
    "csv",
    "ctypes",
    "curses",
    "dataclasses",
    "datetime",
    "dbm",
    "decimal",
    "difflib",
    "dis",
    "distutils",
    "doctest",
    "email",
    "encodings",
    "ensurepip",
    "enum",
    "errno",
    "faulthandler",
    "fcntl",
    "filecmp",
    "fileinput",
    "fnmatch",
    "fractions",
    "ftplib",
    "functools",
    "gc",
    "genericpath",
    "getopt",
    "getpass",
    "gettext",
    "glob",
    "graphlib",
    "grp",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "http",
    "idlelib",
    "imaplib",
    "imghdr",
    "imp",
    "importlib",
    "iniconfig",
    "inspect",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "keyword",
    "lib2to3",
    "linecache",
    "locale",
    "logging",
    "lzma",
    "mailbox",
    "mailcap",
    "marshal",
    "math",
    "mimetypes",
    "mmap",
    "modulefinder",
    "msilib",
    "msvcrt",
    "multiprocessing",
    "netrc",
    "nis",
    "nntplib",
    "nt",
    "ntpath",
    "nturl2path",
    "numbers",
    "opcode",
    "operator",
    "optparse",
    "os",
    "ossaudiodev",
    "pathlib",
    "pdb",
    "pickle",
    "pickletools",
    "pipes",
    "pkgutil",
    "platform",
    "plistlib",
    "pluggy",
    "poplib",
    "posix",
    "posixpath",
    "pprint",
    "profile",
    "pstats",
    "pty",
    "pwd",
    "py",
    "py_compile",
    "pyclbr",
    "pydoc",
    "pydoc_data",
    "pyexpat",
    "pytest",
    "queue",
    "quopri",
    "random",
    "re",
    "readline",
    "reprlib",
    "resource",
    "rlcompleter",
    "runpy",
    "sched",
    "secrets",
    "select",
    "selectors",
    "shelve",
    "shlex",
    "shutil",
    "signal",
    "site",
    "smtpd",
    "smtplib",
    "sndhdr",
    "socket",
    "socketserver",
    "spwd",
    "sqlite3",
    "sre_compile",
    "sre_constants",
    "sre_parse",
    "ssl",
    "stat",
    "statistics",
    "string",
    "stringprep",
    "struct",
    "subprocess",
    "sunau",
    "symtable",
    "sys",
    "sysconfig",
    "syslog",
    "tabnanny",
    "tarfile",
    "telnetlib",
    "tempfile",
    "termios",
    "textwrap",
    "this",
    "threading",
    "time",
    "timeit",
    "tkinter",
    "token",
    "tokenize",
    "tomllib",
    "trace",
    "traceback",
    "tracemalloc",
    "tty",
    "turtle",
    "turtledemo",
    "types",
    "typing",
    "unicodedata",
    "unittest",
    "urllib",
    "uu",
    "uuid",
    "venv",
    "warnings",
    "wave",
    "weakref",
    "webbrowser",
    "winreg",
    "winsound",
    "wsgiref",
    "xdrlib",
    "xml",
    "xmlrpc",
    "zipapp",
    "zipfile",
    "zipimport",
    "zlib",
    "zoneinfo",
];

/// Whether `path` is a top-level Python module or package named like the
/// runner or a standard module: at the root, directly under `src/`, or
/// directly under `tests/` or `test/` (pytest's default import mode puts a
/// test directory without `__init__.py` first on `sys.path`). Only Python
/// files count (`.py`, `.pyc`, and extension modules `.so`/`.pyd`), so a
/// directory named `html/` or `email/` holding no Python is not one.
fn shadows_runner(path: &str) -> bool {
    let python = [".py", ".pyc", ".so", ".pyd"]
        .iter()
        .any(|e| path.ends_with(e));
    if !python {
        return false;
    }
    ["", "src/", "tests/", "test/"].iter().any(|prefix| {
        let Some(rest) = path.strip_prefix(prefix) else {
            return false;
        };
        let first = rest.split('/').next().unwrap_or(rest);
        let module = if rest.contains('/') {
            first
        } else {
            // `json.py`, `_ssl.cpython-311-x86_64-linux-gnu.so`.
            first.split('.').next().unwrap_or(first)
        };
        SHADOWED.binary_search(&module).is_ok()
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

/// The test settings of a manifest as flat `key → value` text.
fn settings(
    path: &str,
    text: Option<&str>,
    named: &CommandFiles,
) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    let Some(text) = text else {
        return Ok(out);
    };
    match file_name(path) {
        "Cargo.toml" => cargo(&parse_toml(text)?, &mut out),
        "pyproject.toml" => {
            let doc = parse_toml(text)?;
            let at = |path: &[&str]| {
                path.iter()
                    .try_fold(&doc, |t, k| t.get(*k).and_then(toml::Value::as_table))
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
        "setup.cfg" => {
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
                } else if section == "options.entry_points"
                    && !t.is_empty()
                    && !t.starts_with(['#', ';'])
                {
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
        "package.json" => {
            let doc: serde_json::Value = serde_json::from_str(text)
                .map_err(|e| format!("is not valid JSON (line {}): {e}", e.line()))?;
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
        }
        _ => {}
    }
    Ok(out)
}

fn parse_toml(text: &str) -> Result<toml::Table, String> {
    text.parse::<toml::Table>().map_err(|e| {
        let line = e
            .span()
            .map(|s| text.get(..s.start).unwrap_or("").matches('\n').count() + 1);
        match line {
            Some(l) => format!("is not valid TOML at line {l}"),
            None => "is not valid TOML".to_string(),
        }
    })
}

/// A TOML value as compact text (JSON, which TOML maps onto).
fn value(v: &toml::Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn cargo(doc: &toml::Table, out: &mut BTreeMap<String, String>) {
    const TARGET_KEYS: &[&str] = &[
        "test",
        "doctest",
        "harness",
        "required-features",
        "path",
        "proc-macro",
        "proc_macro",
    ];
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

#[cfg(test)]
mod tests {
    use super::super::testing::{check_files, rules};
    use super::super::{check, FileVersions, Input};
    use super::*;

    fn one(path: &str, base: Option<&str>, new: Option<&str>, cmds: &[&str]) -> Vec<Issue> {
        let cmds: Vec<String> = cmds.iter().map(|s| s.to_string()).collect();
        let files = [FileVersions {
            path,
            old_path: None,
            base,
            new,
        }];
        check(&Input {
            files: &files,
            test_commands: &cmds,
            allow: &[],
            ledger: None,
            crate_words: None,
        })
    }

    const CARGO: &str =
        "[package]\nname = \"x\"\nversion = \"0.1.0\"\n\n[dependencies]\nserde = \"1\"\n";

    #[test]
    fn build_script_added_anywhere() {
        for path in ["build.rs", "crates/core/build.rs"] {
            let issues = one(path, None, Some("fn main() {}"), &[]);
            assert_eq!(
                rules(&issues),
                [("test-integrity/runner-config", Severity::Error)]
            );
            assert!(
                issues[0].message.contains("added: a build script"),
                "{}",
                issues[0].message
            );
        }
    }

    #[test]
    fn cargo_config_anywhere() {
        for path in [".cargo/config.toml", "sub/.cargo/config"] {
            let issues = one(
                path,
                Some(""),
                Some("[build]\nrustflags = [\"--cfg\", \"x\"]\n"),
                &[],
            );
            assert_eq!(
                rules(&issues),
                [("test-integrity/runner-config", Severity::Error)]
            );
        }
        assert_eq!(
            rules(&one("src/config.toml", Some(""), Some("x = 1"), &[])),
            []
        );
    }

    #[test]
    fn cargo_lib_test_false_appended() {
        let now = format!("{CARGO}\n[lib]\ntest = false\n");
        let issues = one("Cargo.toml", Some(CARGO), Some(&now), &[]);
        assert_eq!(
            rules(&issues),
            [("test-integrity/runner-config", Severity::Error)]
        );
        assert!(
            issues[0].message.contains("`lib.test` unset → false"),
            "{}",
            issues[0].message
        );
        let now = CARGO.replace("[package]", "[package]\nautotests = false");
        assert_eq!(
            rules(&one("Cargo.toml", Some(CARGO), Some(&now), &[])).len(),
            1
        );
        let now = format!("{CARGO}\n[[test]]\nname = \"it\"\nharness = false\n");
        assert_eq!(
            rules(&one("Cargo.toml", Some(CARGO), Some(&now), &[])).len(),
            1
        );
        let now = format!("{CARGO}\n[profile.test]\nopt-level = 3\n");
        assert_eq!(
            rules(&one("Cargo.toml", Some(CARGO), Some(&now), &[])).len(),
            1
        );
    }

    #[test]
    fn what_the_tests_link_instead_is_runner_config() {
        // Code that runs at build time, or a crate the tests use replaced.
        for added in [
            "\n[build-dependencies]\ncc = \"1\"\n",
            "\n[lib]\nproc-macro = true\n",
            "\n[patch.crates-io]\nserde = { path = \"vendor/serde\" }\n",
            "\n[dev-dependencies]\npretty_assertions = { path = \"vendor/pa\" }\n",
        ] {
            let now = format!("{CARGO}{added}");
            assert_eq!(
                rules(&one("Cargo.toml", Some(CARGO), Some(&now), &[])),
                [("test-integrity/runner-config", Severity::Error)],
                "{added}"
            );
        }
        // A dev-dependency from the registry is an ordinary change.
        let now = format!("{CARGO}\n[dev-dependencies]\ntempfile = \"3\"\n");
        assert_eq!(rules(&one("Cargo.toml", Some(CARGO), Some(&now), &[])), []);
    }

    #[test]
    fn toolchain_files_and_modules_that_shadow_the_runner() {
        for path in [
            "rust-toolchain.toml",
            "rust-toolchain",
            ".python-version",
            ".tool-versions",
            "sitecustomize.py",
            "lib/zz.pth",
            "pytest/__init__.py",
            "unittest.py",
            "src/_pytest/x.py",
        ] {
            assert_eq!(
                rules(&one(path, None, Some("x\n"), &[])),
                [("test-integrity/runner-config", Severity::Error)],
                "{path}"
            );
        }
        for path in ["src/calc/unittest.py", "docs/pytest.md", "mytest.py"] {
            let issues = one(path, None, Some("x\n"), &[]);
            let found = rules(&issues);
            assert!(
                !found.contains(&("test-integrity/runner-config", Severity::Error)),
                "{path}: {found:?}"
            );
        }
    }

    #[test]
    fn a_new_bench_target_is_not_runner_config() {
        let now = format!("{CARGO}\n[[bench]]\nname = \"speed\"\nharness = false\n");
        assert_eq!(rules(&one("Cargo.toml", Some(CARGO), Some(&now), &[])), []);
        let base = format!("{CARGO}\n[[bench]]\nname = \"speed\"\n");
        assert_eq!(
            rules(&one("Cargo.toml", Some(&base), Some(&now), &[])).len(),
            1
        );
    }

    #[test]
    fn cargo_dependency_or_format_change_is_not_runner_config() {
        let now = CARGO.replace(
            "serde = \"1\"",
            "serde = { version = \"1\" }\nregex = \"1\"",
        );
        assert_eq!(rules(&one("Cargo.toml", Some(CARGO), Some(&now), &[])), []);
        let base = format!("{CARGO}[lib]\ntest = false\n");
        let now = format!("lib = {{ test = false }}\n{CARGO}");
        assert_eq!(rules(&one("Cargo.toml", Some(&base), Some(&now), &[])), []);
    }

    #[test]
    fn script_named_by_the_test_command() {
        let issues = one(
            "scripts/test.sh",
            Some("cargo test\n"),
            Some("exit 0\n"),
            &["sh scripts/test.sh"],
        );
        assert_eq!(
            rules(&issues),
            [("test-integrity/runner-config", Severity::Error)]
        );
        assert!(
            issues[0].message.contains("sh scripts/test.sh"),
            "{}",
            issues[0].message
        );
        // Not named by any command: an ordinary file.
        assert_eq!(
            rules(&one(
                "scripts/test.sh",
                Some("a"),
                Some("b"),
                &["cargo test"]
            )),
            []
        );
        for (cmd, path) in [
            ("./run-tests", "run-tests"),
            ("cd sub && make test", "sub/Makefile"),
            ("bash -c 'cd tools; ./check.sh'", "tools/check.sh"),
            ("python ci/run.py --fast", "ci/run.py"),
            ("pytest -c ci/pytest-ci.ini", "ci/pytest-ci.ini"),
        ] {
            let issues = one(path, Some("a"), Some("b"), &[cmd]);
            assert_eq!(rules(&issues).len(), 1, "{cmd}");
        }
    }

    #[test]
    fn package_json_test_script_and_jest_key() {
        let base = r#"{"scripts": {"test": "jest", "ci": "jest --ci", "lint": "eslint"}}"#;
        let now = base.replace("\"jest\"", "\"jest --passWithNoTests -t none\"");
        assert_eq!(
            rules(&one("package.json", Some(base), Some(&now), &[])).len(),
            1
        );
        let now = base.replace("\"eslint\"", "\"eslint .\"");
        assert_eq!(rules(&one("package.json", Some(base), Some(&now), &[])), []);
        let now = base.replace("jest --ci", "true");
        assert_eq!(
            rules(&one(
                "package.json",
                Some(base),
                Some(&now),
                &["npm run ci"]
            ))
            .len(),
            1
        );
        let now = base.replace(
            "{\"scripts\"",
            "{\"jest\": {\"testMatch\": []}, \"scripts\"",
        );
        assert_eq!(
            rules(&one("package.json", Some(base), Some(&now), &[])).len(),
            1
        );
    }

    #[test]
    fn python_runner_files() {
        for path in ["pytest.ini", "tests/conftest.py", "tox.ini", "noxfile.py"] {
            let issues = one(path, Some("a"), Some("b"), &[]);
            assert_eq!(
                rules(&issues),
                [("test-integrity/runner-config", Severity::Error)],
                "{path}"
            );
        }
        let base = "[tool.pytest.ini_options]\naddopts = \"-q\"\n";
        let now = "[tool.pytest.ini_options]\naddopts = \"-q -k 'not slow'\"\n";
        assert_eq!(
            rules(&one("pyproject.toml", Some(base), Some(now), &[])).len(),
            1
        );
        let base = "[metadata]\nname = x\n[tool:pytest]\naddopts = -q\n";
        let now = "[metadata]\nname = y\n[tool:pytest]\naddopts = -q\n";
        assert_eq!(rules(&one("setup.cfg", Some(base), Some(now), &[])), []);
        let now = "[metadata]\nname = x\n[tool:pytest]\naddopts = -q --deselect tests/a.py\n";
        assert_eq!(
            rules(&one("setup.cfg", Some(base), Some(now), &[])).len(),
            1
        );
    }

    #[test]
    fn js_and_ci_files() {
        for path in [
            "jest.config.js",
            "web/vitest.config.ts",
            ".mocharc.yml",
            "karma.conf.js",
            ".github/workflows/ci.yml",
            ".gitlab-ci.yml",
            ".circleci/config.yml",
            "Makefile",
            "justfile",
        ] {
            let issues = one(path, Some("a"), Some("b"), &[]);
            assert_eq!(rules(&issues).len(), 1, "{path}");
        }
    }

    #[test]
    fn manifest_that_stops_parsing_is_a_warning() {
        let issues = one("Cargo.toml", Some(CARGO), Some("[lib\n"), &[]);
        assert_eq!(
            rules(&issues),
            [("test-integrity/runner-config", Severity::Warning)]
        );
    }

    #[test]
    fn renamed_config_is_reported() {
        let issues = check_files(&[FileVersions {
            path: "old_conftest.py.bak",
            old_path: Some("conftest.py"),
            base: Some("x"),
            new: Some("x"),
        }]);
        assert_eq!(
            rules(&issues),
            [("test-integrity/runner-config", Severity::Error)]
        );
    }

    #[test]
    fn join_normalizes() {
        assert_eq!(join("a/b", "../c/./d.sh"), "a/c/d.sh");
        assert_eq!(join("", "./run"), "run");
        assert_eq!(join("x", "/abs/p"), "abs/p");
    }

    #[test]
    fn config_paths_table() {
        let none = CommandFiles::new(&[]);
        let cases: &[(&str, bool)] = &[
            // pytest's configuration files and plugins.
            ("pytest.ini", true),
            ("sub/.pytest.ini", true),
            ("pytest.toml", true),
            (".pytest.toml", true),
            ("tox.ini", true),
            ("pkg/tests/conftest.py", true),
            ("setup.py", true),
            ("vendor/x-1.0.dist-info/entry_points.txt", true),
            ("x.egg-info/entry_points.txt", true),
            ("docs/entry_points.txt", false),
            // Python start-up and modules that shadow the runner or stdlib.
            ("sitecustomize.py", true),
            ("usercustomize.py", true),
            ("site-packages/evil.pth", true),
            ("json.py", true),
            ("src/json.py", true),
            ("tests/json.py", true),
            ("test/typing.py", true),
            ("logging/__init__.py", true),
            ("src/email/parser.py", true),
            ("tests/unittest/__init__.py", true),
            ("iniconfig.py", true),
            ("pluggy/__init__.py", true),
            ("_ssl.cpython-311-x86_64-linux-gnu.so", true),
            ("src/parser.py", false),
            ("tests/test_json_parsing.py", false),
            ("mypkg/json_utils.py", false),
            ("mypkg/json.py", false),
            ("tests/helpers/json.py", false),
            ("test.py", false),
            ("tests/test_x.py", false),
            ("html/index.html", false),
            ("email/README.md", false),
            ("__main__.py", false),
            (".pythonrc", false),
            // Cargo.
            (".cargo/config", true),
            ("a/b/.cargo/config.toml", true),
            ("rust-toolchain", true),
            ("rust-toolchain.toml", true),
            ("crates/x/build.rs", true),
            (".config/nextest.toml", true),
            ("clippy.toml", false),
            ("rustfmt.toml", false),
            // Go.
            ("go.work", true),
            ("go.work.sum", true),
            ("go.mod", false),
            ("pkg/main_test.go", false),
            // JavaScript.
            ("jest.config.ts", true),
            ("web/vitest.workspace.ts", true),
            (".mocharc.json", true),
            ("karma.conf.cjs", true),
            ("playwright.config.ts", true),
            ("babel.config.js", true),
            (".babelrc", true),
            ("web/.babelrc.json", true),
            (".swcrc", true),
            (".npmrc", true),
            ("tsconfig.json", false),
            ("src/setupTests.ts", false),
            (".env", false),
        ];
        for (path, want) in cases {
            assert_eq!(decides_checks(path, &none), *want, "{path}");
        }
    }

    #[test]
    fn shadowed_names_are_sorted_for_binary_search() {
        assert!(SHADOWED.windows(2).all(|w| w[0] < w[1]));
        for m in [
            "pytest",
            "_pytest",
            "pluggy",
            "py",
            "iniconfig",
            "cProfile",
            "zoneinfo",
        ] {
            assert!(SHADOWED.binary_search(&m).is_ok(), "{m}");
        }
    }

    #[test]
    fn plugin_entry_points_and_cargo_links_are_settings() {
        let base = "[project]\nname = \"x\"\n";
        for now in [
            "[project]\nname = \"x\"\n\n[project.entry-points.pytest11]\nx = \"x.plugin\"\n",
            "[project]\nname = \"x\"\n\n[project.entry-points.\"pytest11\"]\nx = \"x.plugin\"\n",
            "[project]\nname = \"x\"\n\n[tool.pytest]\naddopts = [\"-p\", \"x.plugin\"]\n",
            "[project]\nname = \"x\"\n\n[tool.poetry.plugins.\"pytest11\"]\nx = \"x.plugin\"\n",
        ] {
            assert_eq!(
                rules(&one("pyproject.toml", Some(base), Some(now), &[])),
                [("test-integrity/runner-config", Severity::Error)],
                "{now}"
            );
        }
        let other =
            "[project]\nname = \"x\"\n\n[project.entry-points.console_scripts]\nx = \"x:main\"\n";
        assert_eq!(
            rules(&one("pyproject.toml", Some(base), Some(other), &[])),
            []
        );
        let cfg =
            "[metadata]\nname = x\n[options.entry_points]\nconsole_scripts =\n    x = x:main\n";
        let now = format!("{cfg}pytest11 =\n    x = x.plugin\n");
        assert_eq!(
            rules(&one("setup.cfg", Some(cfg), Some(&now), &[])).len(),
            1
        );
        let now = cfg.replace("x = x:main", "x = x:cli");
        assert_eq!(rules(&one("setup.cfg", Some(cfg), Some(&now), &[])), []);
        for added in [
            "\n[package.metadata]\n",
            "\n[replace]\n\"serde:1.0.0\" = { path = \"vendor/serde\" }\n",
            "\n[target.'cfg(unix)'.dev-dependencies]\npa = { path = \"vendor/pa\" }\n",
        ] {
            let now = format!("{CARGO}{added}");
            let want = usize::from(!added.contains("metadata"));
            assert_eq!(
                rules(&one("Cargo.toml", Some(CARGO), Some(&now), &[])).len(),
                want,
                "{added}"
            );
        }
        let now = CARGO.replace("[package]", "[package]\nlinks = \"z\"");
        assert_eq!(
            rules(&one("Cargo.toml", Some(CARGO), Some(&now), &[])).len(),
            1
        );
    }
}
