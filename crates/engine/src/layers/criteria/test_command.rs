//! The test command a `test` criterion runs: the repository's default
//! template, the shell-quoted filter, and the count of tests a run reports.

use super::*;
use crate::Error;

/// Quote `s` as one word for `sh` (left bare when it needs no quoting). A
/// NUL byte cannot be passed to a shell at all, so it is an error.
pub fn shell_quote(s: &str) -> Result<String, Error> {
    shlex::try_quote(s).map(|q| q.into_owned()).map_err(|e| {
        Error::Verification(match e {
            shlex::QuoteError::Nul => {
                format!(
                    "`{}` contains a NUL byte, which cannot be passed to a shell",
                    s.escape_default()
                )
            }
            e => format!("`{}` cannot be quoted for a shell: {e}", s.escape_default()),
        })
    })
}

/// The listing command of `command` as a message shows it: itself, or,
/// where rascal lists through a program of its own (unittest's lister, a
/// script of many lines), what it lists.
pub fn shown_listing(rec: &Recognised, command: &str) -> String {
    let listing = ledger::listing_command(rec, command);
    if listing.contains('\n') {
        format!("rascal's listing of the tests `{command}` runs")
    } else {
        listing
    }
}

/// The test command template from the project's own test run: the
/// guardrail marked `tests: true` (or, unmarked, the first whose command
/// is a runner rascal knows), with the runner's filter option added —
/// `pytest -q` → `pytest -q -k {check}`, `python3 -m unittest` →
/// `python3 -m unittest -k {check}`, `cargo test --workspace` → `cargo
/// test --workspace {check}`, `go test ./...` → `go test -v -run {check}
/// ./...`, `npx jest` → `npx jest -t {check}`. None when there is no such
/// guardrail or its runner is not recognised (a `npm test` script, say).
pub fn template_from_guardrails(guardrails: &[rascal_core::config::Guardrail]) -> Option<String> {
    use rascal_core::config::GuardrailKind;
    // The runners among the guardrails, each with whether it is marked.
    let runs: Vec<(ledger::Recognised, bool)> = guardrails
        .iter()
        .filter_map(|g| match &g.kind {
            GuardrailKind::Command { command, tests, .. } if *tests != Some(false) => {
                Some((ledger::recognise(command, None)?, *tests == Some(true)))
            }
            _ => None,
        })
        .collect();
    let marked = runs.iter().position(|(_, m)| *m).unwrap_or(0);
    let (rec, _) = runs.into_iter().nth(marked)?;
    let mut words: Vec<String> = rec.env.clone();
    words.extend(rec.program.iter().cloned());
    // Arguments after a lone `--` go to the test binary (cargo): the
    // filter goes before them.
    let split = rec
        .args
        .iter()
        .position(|a| a == "--")
        .unwrap_or(rec.args.len());
    let (before, after) = rec.args.split_at(split);
    match rec.runner {
        ledger::Runner::Cargo => {
            words.extend(before.iter().cloned());
            words.push("{check}".into());
        }
        ledger::Runner::Go => {
            words.extend(["-v".into(), "-run".into(), "{check}".into()]);
            words.extend(before.iter().filter(|a| *a != "-v").cloned());
        }
        ledger::Runner::Pytest | ledger::Runner::Unittest => {
            words.extend(before.iter().cloned());
            words.extend(["-k".into(), "{check}".into()]);
        }
        ledger::Runner::Jest | ledger::Runner::Vitest => {
            words.extend(before.iter().cloned());
            words.extend(["-t".into(), "{check}".into()]);
        }
    }
    words.extend(after.iter().cloned());
    let template = words
        .iter()
        .map(|w| {
            if w == "{check}" {
                w.clone()
            } else {
                shell_quote(w).unwrap_or_else(|_| w.clone())
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    Some(match &rec.dir {
        Some(dir) => format!(
            "cd {} && {template}",
            shell_quote(dir).unwrap_or_else(|_| dir.clone())
        ),
        None => template,
    })
}

/// The default test command template for a repository, from the files of
/// its base commit (a candidate adding a `Cargo.toml` cannot switch it):
/// what `rascal init` detects. Python with pytest anywhere in sight
/// (`pyproject.toml`, `pytest.ini`, `setup.py`, `setup.cfg`, `tox.ini`,
/// `conftest.py`, a `requirements*.txt` naming it, a `tests/` folder, test
/// files only pytest runs) runs pytest; other Python test files run the
/// standard library's unittest.
pub fn default_test_command(origin: &Path, base: git2::Oid) -> Option<&'static str> {
    let repo = git2::Repository::discover(origin).ok()?;
    let tree = repo.find_commit(base).ok()?.tree().ok()?;
    let has = |name: &str| tree.get_name(name).is_some();
    let read = |name: &str| {
        tree.get_name(name)
            .and_then(|e| repo.find_blob(e.id()).ok())
            .map(|b| String::from_utf8_lossy(b.content()).into_owned())
            .unwrap_or_default()
    };
    let names: Vec<String> = tree
        .iter()
        .filter_map(|e| e.name().ok().map(str::to_string))
        .collect();
    let requirements_name_pytest = names
        .iter()
        .filter(|n| n.starts_with("requirements") && n.ends_with(".txt"))
        .any(|n| {
            read(n)
                .lines()
                .any(|l| l.trim_start().starts_with("pytest"))
        });
    let in_tests: Vec<String> = tree
        .get_name("tests")
        .and_then(|e| repo.find_tree(e.id()).ok())
        .map(|t| {
            t.iter()
                .filter_map(|e| e.name().ok().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let top_tests: Vec<&String> = names
        .iter()
        .filter(|n| n.ends_with(".py") && (n.starts_with("test") || n.ends_with("_test.py")))
        .collect();
    let test_files = !top_tests.is_empty() || in_tests.iter().any(|n| n.ends_with(".py"));
    // What `rascal init` reads too: a `tests/` folder, or test files only
    // pytest runs (top-level test functions, pytest imported).
    let pytest_tests = in_tests.iter().any(|n| n.ends_with(".py"))
        || top_tests.iter().any(|n| ledger::pytest_style(&read(n)));
    if has("Cargo.toml") {
        Some("cargo test {check}")
    } else if has("go.mod") {
        Some("go test -v -run {check} ./...")
    } else if [
        "pyproject.toml",
        "pytest.ini",
        "setup.py",
        "setup.cfg",
        "tox.ini",
        "conftest.py",
    ]
    .iter()
    .any(|f| has(f))
        || requirements_name_pytest
        || pytest_tests
    {
        Some("pytest -k {check}")
    } else if has("package.json") {
        Some("npx jest -t {check}")
    } else if test_files {
        Some("python3 -m unittest -k {check}")
    } else {
        None
    }
}

/// Count the tests a runner reports as run, from one output line (cargo,
/// go -v, pytest, jest). Counting needs positive evidence: a filter that
/// matched nothing leaves it at 0.
pub fn tests_ran_in(line: &str) -> u64 {
    let l = line.trim();
    // cargo / libtest: "running 3 tests"
    if let Some(rest) = l.strip_prefix("running ") {
        if let Some(n) = rest
            .strip_suffix(" tests")
            .or_else(|| rest.strip_suffix(" test"))
            .and_then(|n| n.parse::<u64>().ok())
        {
            return n;
        }
    }
    // go test -v: "=== RUN   TestX"
    if l.starts_with("=== RUN") {
        return 1;
    }
    // pytest: "==== 2 passed, 1 failed in 0.1s ====" ; jest: "Tests: 1 failed, 2 passed, 3 total"
    let pytest = l.starts_with('=') && l.ends_with('=');
    let jest = l.starts_with("Tests:");
    if pytest || jest {
        let words: Vec<&str> = l
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| !w.is_empty())
            .collect();
        let mut n = 0;
        for w in words.windows(2) {
            if matches!(w[1], "passed" | "failed" | "error" | "errors") {
                n += w[0].parse::<u64>().unwrap_or(0);
            }
        }
        return n;
    }
    0
}

/// The command a `test`, `holdout` or `command` criterion runs, and whether
/// it is a test run (the template with the shell-quoted filter).
pub(super) fn criterion_command(
    c: &Criterion,
    template: Option<&str>,
) -> Result<(String, bool), Error> {
    if !matches!(c.kind, CriterionKind::Test | CriterionKind::Holdout) {
        return Ok((c.check.clone(), false));
    }
    let Some(t) = template else {
        return Err(Error::Verification(format!(
            "no test command: the repository has no Cargo.toml, go.mod, pyproject.toml or package.json; set `criteria: {{test_command: \"… {{check}}\"}}` in {VERIFICATION_FILE}"
        )));
    };
    let q =
        shell_quote(&c.check).map_err(|e| Error::Verification(format!("the test filter {e}")))?;
    let cmd = if t.contains("{check}") {
        t.replace("{check}", &q)
    } else {
        format!("{t} {q}")
    };
    Ok((cmd, true))
}

#[cfg(test)]
mod from_guardrails {
    use super::template_from_guardrails;
    use rascal_core::config::Config;

    fn template(yaml: &str) -> Option<String> {
        let config = Config::from_texts(None, Some(yaml), None).expect("guardrails parse");
        template_from_guardrails(config.guardrails.as_deref().unwrap_or_default())
    }

    #[test]
    fn the_projects_own_test_run_gets_its_runners_filter() {
        let g = |command: &str| {
            format!("guardrails:\n  - {{ name: tests, command: \"{command}\", tests: true }}\n")
        };
        assert_eq!(
            template(&g("pytest -q")).as_deref(),
            Some("pytest -q -k {check}")
        );
        assert_eq!(
            template(&g("python3 -m unittest")).as_deref(),
            Some("python3 -m unittest -k {check}")
        );
        assert_eq!(
            template(&g("cargo test --workspace -- --nocapture")).as_deref(),
            Some("cargo test --workspace {check} -- --nocapture")
        );
        assert_eq!(
            template(&g("go test ./...")).as_deref(),
            Some("go test -v -run {check} ./...")
        );
        assert_eq!(
            template(&g("cd py && pytest")).as_deref(),
            Some("cd py && pytest -k {check}")
        );
        // Not a runner rascal knows: the repository's default applies.
        assert_eq!(template(&g("make check")), None);
    }

    #[test]
    fn a_marked_test_run_wins_over_an_earlier_runner_and_a_marked_off_one_never_counts() {
        let yaml = "guardrails:\n  - { name: smoke, command: \"cargo test smoke\" }\n  - { name: tests, command: \"pytest\", tests: true }\n";
        assert_eq!(template(yaml).as_deref(), Some("pytest -k {check}"));
        let off = "guardrails:\n  - { name: quick, command: \"pytest -x\", tests: false }\n";
        assert_eq!(template(off), None);
    }
}

#[cfg(test)]
mod by_repository {
    use super::default_test_command;

    /// A repository of `files` committed once; its commit.
    fn commit(dir: &std::path::Path, files: &[(&str, &str)]) -> git2::Oid {
        let repo = git2::Repository::init(dir).unwrap();
        let mut index = repo.index().unwrap();
        for (path, text) in files {
            std::fs::write(dir.join(path), text).unwrap();
            index.add_path(std::path::Path::new(path)).unwrap();
        }
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        repo.commit(Some("HEAD"), &sig, &sig, "base", &tree, &[])
            .unwrap()
    }

    #[test]
    fn python_test_files_choose_the_runner_init_chooses() {
        let pytest_style = tempfile::tempdir().unwrap();
        let base = commit(
            pytest_style.path(),
            &[("test_calc.py", "def test_add():\n    assert 1 + 1 == 2\n")],
        );
        assert_eq!(
            default_test_command(pytest_style.path(), base),
            Some("pytest -k {check}")
        );
        let unittest_style = tempfile::tempdir().unwrap();
        let base = commit(
            unittest_style.path(),
            &[(
                "test_calc.py",
                "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        pass\n",
            )],
        );
        assert_eq!(
            default_test_command(unittest_style.path(), base),
            Some("python3 -m unittest -k {check}")
        );
    }
}
