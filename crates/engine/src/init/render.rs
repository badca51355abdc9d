//! The text of the `.rascal/` files `rascal init` writes: commented YAML
//! that explains itself to the person who will edit it. Pure: what was
//! detected and which agent CLIs were found go in, file texts come out;
//! every text loads with the real loaders (see the tests).

use super::clis::{self, Found, KNOWN};
use super::detect::{Check, Detected, CI_DEFAULT};
use rascal_core::config::{CONFIG_FILE, GUARDRAILS_FILE, PERMISSIONS_FILE, VERIFICATION_FILE};
use rascal_exec::agents::scripted::{FIRST_RUN, FIRST_RUN_NOTE};

/// The name of the scripted agent in config.yaml.
pub const SCRIPTED_AGENT: &str = "scripted";

/// The instruction suggested for a first run of the scripted agent.
pub const FIRST_TASK: &str = "Add a first-run note";

/// A YAML double-quoted string (a JSON string is one).
fn q(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// A flow list of quoted strings: `["a", "b"]`.
fn list<S: AsRef<str>>(items: &[S]) -> String {
    let inner: Vec<String> = items.iter().map(|s| q(s.as_ref())).collect();
    format!("[{}]", inner.join(", "))
}

/// Every file to write, in order: config, guardrails, permissions, and
/// verification when there is a reviewer.
pub fn files(detected: &Detected, found: &[Found]) -> Vec<(&'static str, String)> {
    let mut out = vec![
        (CONFIG_FILE, config_yaml(found)),
        (GUARDRAILS_FILE, guardrails_yaml(detected)),
        (PERMISSIONS_FILE, permissions_yaml(detected)),
    ];
    if let Some(v) = verification_yaml(found) {
        out.push((VERIFICATION_FILE, v));
    }
    out
}

/// The agents a `rascal run` without `--agent` uses: the real ones found,
/// else the scripted one.
pub fn strategy_agents(found: &[Found]) -> Vec<String> {
    if found.is_empty() {
        vec![SCRIPTED_AGENT.to_string()]
    } else {
        found.iter().map(|f| f.cli.program.to_string()).collect()
    }
}

/// The reviewers: every real agent, when they come from at least two
/// providers (each candidate is then reviewed by another provider).
pub fn reviewers(found: &[Found]) -> Vec<String> {
    let mut providers: Vec<String> = found.iter().map(|f| clis::provider(&f.cli)).collect();
    providers.sort();
    providers.dedup();
    if providers.len() < 2 {
        return Vec::new();
    }
    found.iter().map(|f| f.cli.program.to_string()).collect()
}

pub fn config_yaml(found: &[Found]) -> String {
    let mut y = String::new();
    y.push_str(
        "# .rascal/config.yaml: the agents rascal runs, and how. Written by `rascal init`;\n\
         # edit freely. rascal reads .rascal/ from a run's base commit, never from your\n\
         # working tree: commit your edits (or try them with --config-from-worktree).\n\
         # Reference: docs/configuration.md (and its § Using real agents).\n\nagents:\n",
    );
    for cli in KNOWN {
        let here = found.iter().find(|f| f.cli.program == cli.program);
        let p = if here.is_some() { "" } else { "# " };
        match here {
            Some(f) => y.push_str(&format!("  # Found at {}.\n", f.path.display())),
            None => y.push_str(&format!(
                "  # {} was not found on PATH. Install it, then uncomment:\n",
                cli.program
            )),
        }
        y.push_str(&format!("  {p}{}:\n", cli.program));
        y.push_str(&format!("  {p}  runtime: {}\n", cli.program));
        y.push_str(&format!(
            "  {p}  env: [{}]    # names only: values are read from your shell at launch, never stored\n",
            cli.env.join(", ")
        ));
        y.push_str(&format!("  {p}  # {}\n", cli.env_note));
        y.push_str(&format!(
            "  {p}  network: host    # the sandbox has no network otherwise; the CLI must reach its model API\n"
        ));
        let logins: Vec<&str> = here
            .map(|f| f.logins.iter().map(String::as_str).collect())
            .unwrap_or_default();
        if logins.is_empty() {
            y.push_str(&format!(
                "  {p}  # mounts: {}    # your login, read-only, if you use one instead of a key\n",
                list(cli.logins)
            ));
        } else {
            y.push_str(&format!(
                "  {p}  mounts: {}    # your login, read-only (found on this machine)\n",
                list(&logins)
            ));
        }
        y.push('\n');
    }
    y.push_str(&format!(
        "  # A scripted agent: no model, no API key, no network. It adds one line to\n\
         \x20 # {FIRST_RUN_NOTE}, to watch a change go through every layer:\n\
         \x20 #   rascal run --agent {SCRIPTED_AGENT} \"{FIRST_TASK}\"\n\
         \x20 {SCRIPTED_AGENT}:\n\
         \x20   runtime: scripted\n\
         \x20   scenario: {FIRST_RUN}\n\n"
    ));
    y.push_str(
        "# Agents run as local processes, each in bubblewrap, in a workspace of its own.\n\
         # `docker` runs them in containers instead (docs/launchers.md § Docker launcher).\n\
         launcher: process\n\n",
    );
    let agents = strategy_agents(found);
    let mode = if agents.len() > 1 {
        "compare"
    } else {
        "single"
    };
    y.push_str(&format!(
        "# The agents `rascal run` uses without --agent ({}).\n",
        if mode == "compare" {
            "compare: each one does the task; rascal ranks what they return"
        } else {
            "single: one candidate"
        }
    ));
    y.push_str(&format!(
        "strategy: {{ mode: {mode}, agents: [{}] }}\n\n",
        agents.join(", ")
    ));
    y.push_str("# How long an agent may work on a task.\ntimeout: 30m\n");
    y
}

/// The head of `guardrails.yaml`.
const GUARDRAILS_HEAD: &str =
    "# .rascal/guardrails.yaml: the checks every candidate's change must pass (Layer 2).\n\
     # Written by `rascal init`; rascal reads it from a run's base commit.\n";

/// What `guardrails.yaml` says when no build tool was found.
const NO_BUILD_TOOL: &str =
    "# No build tool was found (Cargo.toml, go.mod, pyproject.toml, package.json):\n\
     # add your build and test commands, e.g.\n\
     #   - { name: tests, command: \"make test\", tests: true, timeout: 10m }\n";

/// How the checks run, and the list's key.
const GUARDRAILS_HOW: &str =
    "# Each command runs with `sh -c` on a fresh copy of the change, in bubblewrap, without\n\
     # network unless it says `network: host`. A required check that fails fails the\n\
     # candidate (the checks after it are skipped); `required: false` only warns.\n\
     # `tests: true` marks the test run: rascal counts its tests against the base\n\
     # commit's, and a test run that runs no test is a FAIL.\n\
     guardrails:\n";

/// The built-in checks of the change itself, last.
const CHANGE_CHECKS: &str =
    "\n  # The change itself: no secret added, and a size worth a look above these limits.\n\
     \x20 - { name: secrets, builtin: secrets }\n\
     \x20 - { name: diff-size, max_lines: 800, max_files: 30, required: false }\n";

pub fn guardrails_yaml(d: &Detected) -> String {
    let mut y = String::new();
    y.push_str(GUARDRAILS_HEAD);
    if d.projects.is_empty() {
        y.push_str(NO_BUILD_TOOL);
    } else {
        let found: Vec<String> = d.projects.iter().map(|p| p.summary.clone()).collect();
        y.push_str(&format!("# Found: {}.\n", found.join("; ")));
    }
    y.push_str(GUARDRAILS_HOW);
    for p in &d.projects {
        y.push_str(&format!(
            "\n  # {}{}.\n",
            p.ecosystem.name(),
            if p.dir.is_empty() {
                String::new()
            } else {
                format!(" in {}/", p.dir)
            }
        ));
        for line in wrap(p.setup, 84) {
            y.push_str(&format!("  # {line}\n"));
        }
        for c in &p.checks {
            y.push_str(&check(c));
        }
    }
    y.push_str(CHANGE_CHECKS);
    y
}

/// One command guardrail, commented out when it is off.
fn check(c: &Check) -> String {
    let mut y = String::new();
    if let Some(why) = &c.why {
        for line in wrap(why, 84) {
            y.push_str(&format!("  # {line}\n"));
        }
    }
    let p = if c.enabled { "" } else { "# " };
    y.push_str(&format!("  {p}- name: {}\n", c.name));
    y.push_str(&format!("  {p}  command: {}\n", q(&c.command)));
    if c.tests {
        y.push_str(&format!("  {p}  tests: true\n"));
    } else if c.role == super::detect::Role::Tests {
        y.push_str(&format!("  {p}  tests: false\n"));
    }
    if !c.required {
        y.push_str(&format!("  {p}  required: false\n"));
    }
    if c.network {
        y.push_str(&format!("  {p}  network: host\n"));
    }
    y.push_str(&format!("  {p}  timeout: {}\n", c.timeout));
    y
}

pub fn permissions_yaml(d: &Detected) -> String {
    let mut ci = d.ci.clone();
    if !ci.iter().any(|c| c == CI_DEFAULT) {
        ci.insert(0, CI_DEFAULT.to_string());
    }
    let lockfiles: Vec<&String> = d.projects.iter().flat_map(|p| &p.lockfiles).collect();
    let mut y = String::new();
    y.push_str(
        "# .rascal/permissions.yaml: what a candidate's change may touch (Layer 4).\n\
         # Written by `rascal init`; rascal reads it from a run's base commit.\n\
         # A change to a denied path fails the candidate (globs follow .gitignore rules).\n\
         permissions:\n\
         \x20 mode: strict    # strict: a violation fails · advisory: it only warns\n\
         \x20 denied_paths:\n\
         \x20   # CI: an agent must not change how its work is checked.\n",
    );
    for c in &ci {
        y.push_str(&format!("    - {}\n", q(c)));
    }
    y.push_str(
        "    # rascal's own configuration (always protected; listed to say so).\n\
         \x20   - \".rascal/**\"\n",
    );
    if !lockfiles.is_empty() {
        y.push_str(
            "    # Lockfiles: dependencies change only by a human's hand (remove a line to let\n\
             \x20   # agents add or upgrade dependencies).\n",
        );
        for l in lockfiles {
            y.push_str(&format!("    - {}\n", q(l)));
        }
    }
    y
}

/// Layer 5, when agents of two providers were found.
pub fn verification_yaml(found: &[Found]) -> Option<String> {
    let reviewers = reviewers(found);
    if reviewers.is_empty() {
        return None;
    }
    Some(format!(
        "# .rascal/verification.yaml: the review of each candidate (Layer 5). Written by\n\
         # `rascal init` because agents of two providers were found; rascal reads it from a\n\
         # run's base commit.\n\
         review:\n\
         \x20 # Each candidate is reviewed by an agent of another provider than its author's\n\
         \x20 # (the scripted agent's change too: reviewers need their keys or logins).\n\
         \x20 reviewers: [{}]\n\
         \x20 on_request_changes: retry    # send the issues back to the author, or `fail`\n\
         \x20 max_retries: 2\n",
        reviewers.join(", ")
    ))
}

/// `text` in lines of at most `width` characters (words, and `code` in
/// backticks, are never cut).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut open = false;
    for w in text.split_whitespace() {
        match words.last_mut() {
            Some(last) if open => {
                last.push(' ');
                last.push_str(w);
            }
            _ => words.push(w.to_string()),
        }
        if w.matches('`').count() % 2 == 1 {
            open = !open;
        }
    }
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in &words {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::super::detect::detect;
    use super::*;
    use rascal_core::config::{Config, GuardrailKind, RuntimeKind};
    use std::collections::BTreeMap;

    fn detected(files: &[(&str, &str)]) -> Detected {
        let paths: Vec<String> = files.iter().map(|(p, _)| p.to_string()).collect();
        let map: BTreeMap<String, String> = files
            .iter()
            .map(|(p, c)| (p.to_string(), c.to_string()))
            .collect();
        detect(&super::super::detect::Input {
            paths: &paths,
            read: &|p| map.get(p).cloned(),
            pytest: &|| "python3 -m pytest".into(),
        })
    }

    fn found(programs: &[&str]) -> Vec<Found> {
        programs
            .iter()
            .map(|p| Found {
                cli: *KNOWN.iter().find(|c| c.program == *p).unwrap(),
                path: format!("/usr/local/bin/{p}").into(),
                logins: Vec::new(),
            })
            .collect()
    }

    /// Load the rendered files with the real loaders.
    fn load(files: &[(&'static str, String)]) -> Config {
        let text = |name: &str| {
            files
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, t)| t.as_str())
        };
        Config::from_texts(
            text(CONFIG_FILE),
            text(GUARDRAILS_FILE),
            text(PERMISSIONS_FILE),
        )
        .and_then(|c| c.with_verification(text(VERIFICATION_FILE)))
        .unwrap_or_else(|e| panic!("{e}\n{files:#?}"))
    }

    const MONOREPO: &[(&str, &str)] = &[
        ("Cargo.toml", "[package]\nname = \"x\"\n"),
        ("Cargo.lock", ""),
        ("src/main.rs", "fn main() {}\n"),
        (
            "web/package.json",
            r#"{"scripts": {"build": "tsc", "test": "jest", "lint": "eslint ."}}"#,
        ),
        ("web/pnpm-lock.yaml", ""),
        (".circleci/config.yml", ""),
    ];

    #[test]
    fn without_agent_clis_the_scripted_agent_is_the_strategy_and_everything_loads() {
        let files = files(&detected(MONOREPO), &[]);
        assert_eq!(files.len(), 3, "no reviewer without two providers");
        let cfg = load(&files);
        assert_eq!(cfg.agent_names(), [SCRIPTED_AGENT]);
        let a = &cfg.main.agents[SCRIPTED_AGENT];
        assert_eq!(a.runtime, RuntimeKind::Scripted);
        assert_eq!(a.scenario.as_deref(), Some(FIRST_RUN));
        assert_eq!(cfg.main.strategy.agents, [SCRIPTED_AGENT]);
        assert_eq!(
            cfg.main.launcher,
            rascal_core::config::LauncherKind::Process
        );
        // The commented examples name every known CLI.
        for cli in KNOWN {
            assert!(files[0].1.contains(&format!("  # {}:\n", cli.program)));
        }
    }

    #[test]
    fn the_guardrails_load_with_their_commands_and_the_test_run_marked() {
        let cfg = load(&files(&detected(MONOREPO), &[]));
        let g = cfg.guardrails.unwrap();
        let commands: Vec<(&str, &str, Option<bool>, bool)> = g
            .iter()
            .filter_map(|g| match &g.kind {
                GuardrailKind::Command {
                    command,
                    tests,
                    network,
                    ..
                } => Some((g.name.as_str(), command.as_str(), *tests, *network)),
                _ => None,
            })
            .collect();
        assert_eq!(
            commands,
            [
                ("rust-build", "cargo build --all-targets", None, false),
                // rust-tests is commented out: src/main.rs has no test.
                (
                    "rust-clippy",
                    "cargo clippy --all-targets -- -D warnings",
                    None,
                    false
                ),
                (
                    "web-build",
                    "cd web && pnpm install --frozen-lockfile && pnpm run build",
                    None,
                    true
                ),
                (
                    "web-tests",
                    "cd web && pnpm install --frozen-lockfile && pnpm test",
                    Some(true),
                    true
                ),
                (
                    "web-lint",
                    "cd web && pnpm install --frozen-lockfile && pnpm run lint",
                    None,
                    true
                ),
            ]
        );
        assert!(!g.iter().find(|g| g.name == "rust-clippy").unwrap().required);
        let names: Vec<&str> = g.iter().map(|g| g.name.as_str()).collect();
        assert!(names.ends_with(&["secrets", "diff-size"]), "{names:?}");
        let text = guardrails_yaml(&detected(MONOREPO));
        assert!(text.contains("  # - name: rust-tests\n"), "{text}");
        assert!(text.contains("`--offline`"), "{text}");
    }

    #[test]
    fn permissions_protect_ci_found_and_by_default_rascal_and_the_lockfiles() {
        let cfg = load(&files(&detected(MONOREPO), &[]));
        let p = cfg.permissions.unwrap();
        let denied: Vec<&str> = p.denied_paths.iter().map(|g| g.as_str()).collect();
        assert_eq!(
            denied,
            [
                ".github/**",
                ".circleci/**",
                ".rascal/**",
                "Cargo.lock",
                "web/pnpm-lock.yaml"
            ]
        );
    }

    #[test]
    fn agent_clis_found_become_agents_and_two_providers_bring_a_reviewer() {
        let mut f = found(&["claude", "codex"]);
        f[0].logins = vec!["~/.claude.json".into()];
        let files = files(&detected(MONOREPO), &f);
        let cfg = load(&files);
        assert_eq!(cfg.agent_names(), ["claude", "codex", SCRIPTED_AGENT]);
        let claude = &cfg.main.agents["claude"];
        assert_eq!(claude.runtime, RuntimeKind::Claude);
        assert_eq!(claude.env, ["ANTHROPIC_API_KEY"]);
        assert_eq!(claude.network.as_deref(), Some("host"));
        assert_eq!(claude.mounts, ["~/.claude.json"]);
        assert!(cfg.main.agents["codex"].mounts.is_empty());
        assert_eq!(cfg.main.strategy.agents, ["claude", "codex"]);
        assert_eq!(
            cfg.main.strategy.mode,
            rascal_core::config::StrategyMode::Compare
        );
        let review = cfg.verification.unwrap().review.unwrap();
        assert_eq!(review.reviewers, ["claude", "codex"]);
        // goose is a commented-out example.
        assert!(files[0].1.contains("  # goose was not found on PATH"));
    }

    #[test]
    fn one_provider_has_no_reviewer() {
        let f = found(&["claude"]);
        assert!(verification_yaml(&f).is_none());
        let cfg = load(&files(&detected(MONOREPO), &f));
        assert_eq!(cfg.main.strategy.agents, ["claude"]);
        assert_eq!(
            cfg.main.strategy.mode,
            rascal_core::config::StrategyMode::Single
        );
    }

    #[test]
    fn a_repository_without_build_tools_still_loads() {
        let cfg = load(&files(&detected(&[("README.md", "")]), &[]));
        let names: Vec<String> = cfg
            .guardrails
            .unwrap()
            .into_iter()
            .map(|g| g.name)
            .collect();
        assert_eq!(names, ["secrets", "diff-size"]);
    }

    #[test]
    fn wrap_keeps_words_whole() {
        assert_eq!(wrap("aa bb cc", 5), ["aa bb", "cc"]);
        assert_eq!(wrap("toolongword x", 4), ["toolongword", "x"]);
        assert_eq!(
            wrap("drop `required: false` now", 12),
            ["drop", "`required: false`", "now"]
        );
    }
}
