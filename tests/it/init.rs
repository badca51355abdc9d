//! `rascal init` as a user runs it: the real binary on real repositories
//! (Cargo, Go, Python, Node, a monorepo), with a PATH it controls — empty,
//! or with stand-in `claude`/`codex` executables. Every file it writes is
//! loaded with the real loaders; `--commit` leaves the user's other work
//! alone; and on a fresh crate, `init --commit` then a run of its scripted
//! agent passes.

use crate::common;
use common::{code, stderr, stdout, TestRepo};
use rascal_core::config::{Config, GuardrailKind, RuntimeKind, StrategyMode};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

/// A directory of stand-in executables (`name` → `#!/bin/sh` body) to be
/// the whole PATH.
fn bin_dir(programs: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (name, body) in programs {
        let p = d.path().join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    d
}

/// A credential's value in rascal's environment: it must never be written.
const KEY_VALUE: &str = "sk-ant-test-never-written-0123456789";

/// `rascal ARGS` in `dir` with `PATH` set to `path`, HOME to an empty
/// directory (no login files found) and a credential set.
fn init_with_path(dir: &Path, path: &Path, args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    Command::new(common::bin())
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .env("HOME", home.path())
        .env("ANTHROPIC_API_KEY", KEY_VALUE)
        .env("NO_COLOR", "1")
        .output()
        .expect("running rascal")
}

/// `rascal init ARGS` with no agent CLI on PATH (only a `python3` that can
/// run pytest, so the Python command is the same on every machine).
fn init(t: &TestRepo, args: &[&str]) -> Output {
    let bin = bin_dir(&[("python3", "exit 0")]);
    let mut all = vec!["init"];
    all.extend_from_slice(args);
    init_with_path(t.path(), bin.path(), &all)
}

/// The `.rascal/` of the working tree, through the real loaders.
fn load(dir: &Path) -> Config {
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
    let (main, guard, perm, verif) = (
        read(rascal_core::config::CONFIG_FILE),
        read(rascal_core::config::GUARDRAILS_FILE),
        read(rascal_core::config::PERMISSIONS_FILE),
        read(rascal_core::config::VERIFICATION_FILE),
    );
    Config::from_texts(main.as_deref(), guard.as_deref(), perm.as_deref())
        .and_then(|c| c.with_verification(verif.as_deref()))
        .unwrap_or_else(|e| panic!("generated .rascal/ does not load: {e}"))
}

/// (name, command, tests, network) of each command guardrail.
fn commands(cfg: &Config) -> Vec<(String, String, Option<bool>, bool)> {
    cfg.guardrails
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .filter_map(|g| match &g.kind {
            GuardrailKind::Command {
                command,
                tests,
                network,
                ..
            } => Some((g.name.clone(), command.clone(), *tests, *network)),
            _ => None,
        })
        .collect()
}

fn cmd(
    name: &str,
    command: &str,
    tests: Option<bool>,
    network: bool,
) -> (String, String, Option<bool>, bool) {
    (name.into(), command.into(), tests, network)
}

fn denied(cfg: &Config) -> Vec<String> {
    cfg.permissions
        .as_ref()
        .unwrap()
        .denied_paths
        .iter()
        .map(|g| g.as_str().to_string())
        .collect()
}

fn init_ok(t: &TestRepo, args: &[&str]) -> String {
    let o = init(t, args);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    stdout(&o)
}

const LIB_RS: &str = "pub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn it_works() {\n        assert_eq!(add(2, 2), 4);\n    }\n}\n";

#[test]
fn a_cargo_crate_gets_cargo_commands_and_its_lockfile_protected() {
    let t = TestRepo::new(&[
        (
            "Cargo.toml",
            "[package]\nname = \"adder\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        ),
        ("Cargo.lock", "version = 3\n"),
        ("src/lib.rs", LIB_RS),
        (".github/workflows/ci.yml", "on: push\n"),
    ]);
    let out = init_ok(&t, &[]);
    assert!(out.contains("  Cargo (Cargo.toml)"), "{out}");
    assert!(out.contains("git add .rascal && git commit"), "{out}");
    let cfg = load(t.path());
    assert_eq!(
        commands(&cfg),
        [
            cmd("build", "cargo build --all-targets", None, false),
            cmd("tests", "cargo test", Some(true), false),
            cmd(
                "clippy",
                "cargo clippy --all-targets -- -D warnings",
                None,
                false
            ),
        ]
    );
    assert_eq!(denied(&cfg), [".github/**", ".rascal/**", "Cargo.lock"]);
    let names: Vec<&str> = cfg
        .guardrails
        .as_deref()
        .unwrap()
        .iter()
        .map(|g| g.name.as_str())
        .collect();
    assert!(names.ends_with(&["secrets", "diff-size"]), "{names:?}");
    // No CLI on PATH: the scripted agent alone, and the strategy runs it.
    assert_eq!(cfg.agent_names(), ["scripted"]);
    assert_eq!(cfg.main.strategy.agents, ["scripted"]);
    assert!(
        cfg.verification.is_none(),
        "no reviewer without two providers"
    );
}

#[test]
fn a_go_module_gets_go_commands() {
    let t = TestRepo::new(&[
        ("go.mod", "module example.com/x\n\ngo 1.21\n"),
        ("go.sum", ""),
        ("x.go", "package x\n"),
        ("x_test.go", "package x\n"),
        (".gitlab-ci.yml", "test: {}\n"),
    ]);
    init_ok(&t, &[]);
    let cfg = load(t.path());
    assert_eq!(
        commands(&cfg),
        [
            cmd("build", "go build ./...", None, false),
            cmd("tests", "go test ./...", Some(true), false),
            cmd("vet", "go vet ./...", None, false),
        ]
    );
    assert_eq!(
        denied(&cfg),
        [".github/**", ".gitlab-ci.yml", ".rascal/**", "go.sum"]
    );
}

#[test]
fn a_python_project_gets_pytest_and_its_linters() {
    let t = TestRepo::new(&[
        (
            "pyproject.toml",
            "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n\n[tool.ruff]\nline-length = 100\n",
        ),
        ("uv.lock", ""),
        ("x/__init__.py", ""),
        ("tests/test_x.py", "def test_x():\n    assert True\n"),
    ]);
    let out = init_ok(&t, &[]);
    assert!(out.contains("Python (pyproject.toml, pytest)"), "{out}");
    let cfg = load(t.path());
    assert_eq!(
        commands(&cfg),
        [
            cmd("tests", "python3 -m pytest", Some(true), false),
            cmd("ruff", "ruff check .", None, false),
        ]
    );
    assert_eq!(denied(&cfg), [".github/**", ".rascal/**", "uv.lock"]);
}

#[test]
fn a_node_package_runs_the_scripts_it_has_with_its_package_manager() {
    let t = TestRepo::new(&[
        (
            "package.json",
            r#"{"name": "x", "scripts": {"build": "tsc", "test": "jest", "start": "node ."}}"#,
        ),
        ("yarn.lock", ""),
        (".circleci/config.yml", "version: 2.1\n"),
    ]);
    init_ok(&t, &[]);
    let cfg = load(t.path());
    assert_eq!(
        commands(&cfg),
        [
            cmd(
                "build",
                "yarn install --frozen-lockfile && yarn run build",
                None,
                true
            ),
            cmd(
                "tests",
                "yarn install --frozen-lockfile && yarn test",
                Some(true),
                true
            ),
        ]
    );
    assert_eq!(
        denied(&cfg),
        [".github/**", ".circleci/**", ".rascal/**", "yarn.lock"]
    );
}

#[test]
fn a_monorepo_gets_guardrails_for_each_language() {
    let t = TestRepo::new(&[
        (
            "Cargo.toml",
            "[workspace]\nmembers = [\"crates/a\"]\nresolver = \"2\"\n",
        ),
        ("Cargo.lock", "version = 3\n"),
        (
            "crates/a/Cargo.toml",
            "[package]\nname = \"a\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        ),
        ("crates/a/src/lib.rs", LIB_RS),
        (
            "web/package.json",
            r#"{"scripts": {"build": "vite build", "lint": "eslint ."}}"#,
        ),
        ("web/package-lock.json", "{}"),
    ]);
    let out = init_ok(&t, &[]);
    assert!(out.contains("Cargo workspace (Cargo.toml)"), "{out}");
    assert!(
        out.contains("Node, npm (web/package.json: scripts build, lint)"),
        "{out}"
    );
    assert!(out.contains("web/package.json: no `scripts.test`"), "{out}");
    let cfg = load(t.path());
    assert_eq!(
        commands(&cfg),
        [
            cmd(
                "rust-build",
                "cargo build --workspace --all-targets",
                None,
                false
            ),
            cmd("rust-tests", "cargo test --workspace", Some(true), false),
            cmd(
                "rust-clippy",
                "cargo clippy --workspace --all-targets -- -D warnings",
                None,
                false
            ),
            cmd(
                "web-build",
                "cd web && npm ci --no-audit --no-fund && npm run build",
                None,
                true
            ),
            cmd(
                "web-lint",
                "cd web && npm ci --no-audit --no-fund && npm run lint",
                None,
                true
            ),
        ]
    );
    assert_eq!(
        denied(&cfg),
        [
            ".github/**",
            ".rascal/**",
            "Cargo.lock",
            "web/package-lock.json"
        ]
    );
}

#[test]
fn agent_clis_on_path_become_agents_and_two_providers_bring_a_reviewer() {
    let t = TestRepo::new(&[("README.md", "# x\n")]);
    let bin = bin_dir(&[("claude", "exit 0"), ("codex", "exit 0")]);
    let o = init_with_path(t.path(), bin.path(), &["init"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(
        out.contains(&format!(
            "claude    {}/claude (credentials: $ANTHROPIC_API_KEY)",
            bin.path().display()
        )),
        "{out}"
    );
    assert!(out.contains("goose     not on PATH"), "{out}");
    assert!(out.contains(".rascal/verification.yaml"), "{out}");
    let cfg = load(t.path());
    assert_eq!(cfg.agent_names(), ["claude", "codex", "scripted"]);
    let claude = &cfg.main.agents["claude"];
    assert_eq!(claude.runtime, RuntimeKind::Claude);
    assert_eq!(claude.env, ["ANTHROPIC_API_KEY"]);
    assert_eq!(claude.network.as_deref(), Some("host"));
    let codex = &cfg.main.agents["codex"];
    assert_eq!(codex.runtime, RuntimeKind::Codex);
    assert_eq!(codex.env, ["OPENAI_API_KEY"]);
    assert_eq!(cfg.main.strategy.mode, StrategyMode::Compare);
    assert_eq!(cfg.main.strategy.agents, ["claude", "codex"]);
    let review = cfg.verification.unwrap().review.unwrap();
    assert_eq!(review.reviewers, ["claude", "codex"]);
    let text = std::fs::read_to_string(t.path().join(".rascal/config.yaml")).unwrap();
    assert!(text.contains("  # goose:\n"), "goose is an example: {text}");
    // Credentials by name only: the value set in rascal's environment is
    // in no file.
    for f in std::fs::read_dir(t.path().join(".rascal")).unwrap() {
        let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
        assert!(!text.contains(KEY_VALUE), "{text}");
    }
}

#[test]
fn one_cli_is_a_single_strategy_without_a_reviewer() {
    let t = TestRepo::new(&[("README.md", "# x\n")]);
    let bin = bin_dir(&[("codex", "exit 0")]);
    let o = init_with_path(t.path(), bin.path(), &["init"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let cfg = load(t.path());
    assert_eq!(cfg.main.strategy.mode, StrategyMode::Single);
    assert_eq!(cfg.main.strategy.agents, ["codex"]);
    assert!(cfg.verification.is_none());
}

#[test]
fn existing_files_are_not_overwritten_without_force() {
    let t = TestRepo::new(&[
        (".rascal/config.yaml", "agents: {}\n"),
        (".rascal/permissions.yaml", "permissions: {}\n"),
        ("README.md", "# x\n"),
    ]);
    let o = init(&t, &[]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("2 files already exist: .rascal/config.yaml, .rascal/permissions.yaml"),
        "{err}"
    );
    assert!(err.contains("--force"), "{err}");
    assert_eq!(
        std::fs::read_to_string(t.path().join(".rascal/config.yaml")).unwrap(),
        "agents: {}\n"
    );
    assert!(
        !t.path().join(".rascal/guardrails.yaml").exists(),
        "nothing written"
    );

    // A file only in HEAD (deleted in the working tree) counts too.
    std::fs::remove_file(t.path().join(".rascal/config.yaml")).unwrap();
    std::fs::remove_file(t.path().join(".rascal/permissions.yaml")).unwrap();
    let o = init(&t, &[]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("2 files already exist"),
        "{}",
        stderr(&o)
    );

    init_ok(&t, &["--force"]);
    assert_eq!(load(t.path()).agent_names(), ["scripted"]);
}

#[test]
fn dry_run_prints_the_files_and_writes_nothing() {
    let t = TestRepo::new(&[("go.mod", "module x\n"), ("x_test.go", "package x\n")]);
    let out = init_ok(&t, &["--dry-run"]);
    assert!(out.contains("── .rascal/guardrails.yaml ──"), "{out}");
    assert!(out.contains("    command: \"go test ./...\""), "{out}");
    assert!(
        out.contains("dry run: nothing written; rascal init would write 3 files"),
        "{out}"
    );
    assert!(!t.path().join(".rascal").exists());
}

#[test]
fn outside_a_git_repository_is_a_clear_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let bin = bin_dir(&[]);
    let o = init_with_path(dir.path(), bin.path(), &["init"]);
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert!(err.contains("is not inside a git repository"), "{err}");
    assert!(err.contains("git init"), "{err}");
    assert!(!dir.path().join(".rascal").exists());
}

#[test]
fn commit_commits_only_the_rascal_files_and_leaves_the_users_changes_alone() {
    let t = TestRepo::new(&[
        ("a.txt", "a\n"),
        ("b.txt", "b\n"),
        (
            "Cargo.toml",
            "[package]\nname = \"x\"\nversion = \"0.1.0\"\n",
        ),
    ]);
    {
        let mut cfg = t.repo.config().unwrap();
        cfg.set_str("user.name", "Ada Lovelace").unwrap();
        cfg.set_str("user.email", "ada@example.invalid").unwrap();
    }
    let before = t.head();
    // Staged: a.txt changed and new.txt added. Unstaged: b.txt. Untracked: c.txt.
    t.write("a.txt", "a staged\n");
    t.write("new.txt", "new staged\n");
    let mut index = t.repo.index().unwrap();
    index.add_path(Path::new("a.txt")).unwrap();
    index.add_path(Path::new("new.txt")).unwrap();
    index.write().unwrap();
    t.write("a.txt", "a staged, then edited again\n");
    t.write("b.txt", "b unstaged\n");
    t.write("c.txt", "untracked\n");
    let staged_a = t
        .repo
        .index()
        .unwrap()
        .get_path(Path::new("a.txt"), 0)
        .unwrap()
        .id;

    let out = init_ok(&t, &["--commit"]);
    assert!(out.contains("committed "), "{out}");
    assert!(!out.contains("git add .rascal"), "{out}");

    let head = t.repo.head().unwrap().peel_to_commit().unwrap();
    assert_eq!(head.parent_ids().collect::<Vec<_>>(), [before]);
    assert_eq!(head.author().name().unwrap(), "Ada Lovelace");
    assert_eq!(head.author().email().unwrap(), "ada@example.invalid");
    assert!(head.summary().unwrap().unwrap().contains(".rascal/"));
    // The commit adds exactly the .rascal/ files.
    let old_tree = t.repo.find_commit(before).unwrap().tree().unwrap();
    let diff = t
        .repo
        .diff_tree_to_tree(Some(&old_tree), Some(&head.tree().unwrap()), None)
        .unwrap();
    let changed: Vec<String> = diff
        .deltas()
        .map(|d| d.new_file().path().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        changed,
        [
            ".rascal/config.yaml",
            ".rascal/guardrails.yaml",
            ".rascal/permissions.yaml"
        ]
    );
    // The user's work is as it was: staged stays staged (same content),
    // unstaged and untracked untouched, and the new files are clean.
    let index = t.repo.index().unwrap();
    assert_eq!(index.get_path(Path::new("a.txt"), 0).unwrap().id, staged_a);
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true);
    let status: std::collections::BTreeMap<String, git2::Status> = t
        .repo
        .statuses(Some(&mut opts))
        .unwrap()
        .iter()
        .map(|s| (s.path().unwrap().to_string(), s.status()))
        .collect();
    assert_eq!(
        status.get("a.txt"),
        Some(&(git2::Status::INDEX_MODIFIED | git2::Status::WT_MODIFIED))
    );
    assert_eq!(status.get("new.txt"), Some(&git2::Status::INDEX_NEW));
    assert_eq!(status.get("b.txt"), Some(&git2::Status::WT_MODIFIED));
    assert_eq!(status.get("c.txt"), Some(&git2::Status::WT_NEW));
    assert!(
        !status.keys().any(|p| p.starts_with(".rascal")),
        "the committed files are clean: {status:?}"
    );
    assert_eq!(
        std::fs::read_to_string(t.path().join("a.txt")).unwrap(),
        "a staged, then edited again\n"
    );
}

#[test]
fn commit_in_a_repository_without_commits_makes_the_first_one() {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    std::fs::write(dir.path().join("go.mod"), "module x\n").unwrap();
    let bin = bin_dir(&[]);
    let o = init_with_path(dir.path(), bin.path(), &["init", "--commit"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(
        out.contains("note: go.mod is not committed yet"),
        "agents start from the commit: {out}"
    );
    let head = repo.head().unwrap().peel_to_commit().unwrap();
    assert_eq!(head.parent_count(), 0);
    assert!(head.tree().unwrap().get_path(Path::new("go.mod")).is_err());
}

#[test]
fn a_fresh_crate_init_commit_then_the_scripted_agent_passes() {
    if !common::bwrap() {
        return;
    }
    // What `cargo new --lib adder` and a first commit leave.
    let t = TestRepo::new(&[
        (
            "Cargo.toml",
            "[package]\nname = \"adder\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
        ),
        (".gitignore", "/target\n"),
        ("src/lib.rs", LIB_RS),
    ]);
    // No agent CLI may be found: the run is the scripted agent's alone.
    let o = init_with_path(t.path(), Path::new("/usr/bin:/bin"), &["init", "--commit"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let o = t.rascal(&[
        "run",
        "--headless",
        "--agent",
        "scripted",
        "Add a first-run note",
    ]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    for check in [
        "build",
        "tests",
        "clippy",
        "secrets",
        "diff-size",
        "test-integrity",
    ] {
        assert!(
            out.contains(&format!("✓ guardrails/{check} pass")),
            "{check}: {out}"
        );
    }
    assert!(out.contains("✓ permissions/permissions pass"), "{out}");
    assert!(
        out.contains("[scripted] verdict PASS · 1 file, 1 line changed"),
        "{out}"
    );
}
