//! `rascal doctor`, the checks part: each command guardrail's toolchain
//! program (`cargo`, `python3`, `npm`, `go`, …) is asked `--version` once
//! inside the sandbox, seeing exactly the variables a check sees (the
//! basic set, the toolchain locations, the guardrail's `env:`) with the
//! network off — so a toolchain the sandbox cannot see (`cargo` failing
//! because `RUSTUP_HOME` is not set, a program installed only under a
//! hidden folder) is found by doctor, not by a run whose checks all fail.
//! A program that is not a known toolchain (the project's own script) is
//! never run.

use rascal_core::config::{Config, GuardrailKind};
use std::path::PathBuf;

/// Toolchain programs doctor may ask `--version`: nothing else is run.
const TOOLCHAINS: &[&str] = &[
    "cargo", "rustc", "go", "python", "python3", "pytest", "node", "npm", "npx", "yarn", "pnpm",
    "deno", "bun", "make", "java", "mvn", "gradle", "dotnet", "ruby", "bundle", "php", "uv",
    "poetry", "tox",
];

/// One guardrail's program, as the sandbox sees it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CheckProbe {
    pub guardrail: String,
    pub program: String,
    /// What `--version` printed in the sandbox.
    pub version: Option<String>,
    /// Why the check would not run, and what to set.
    pub problem: Option<String>,
}

/// The toolchain programs a guardrail's command starts: the first word of
/// each `&&`, `||`, `;` or `|` part (after `VAR=value` words and `cd`),
/// when it is a known toolchain.
pub fn programs_of(command: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in command.split(['&', '|', ';']) {
        let words = shlex::split(part).unwrap_or_default();
        let first = words
            .iter()
            .find(|w| !w.contains('=') || w.starts_with('-'))
            .map(String::as_str);
        if let Some(p) = first.filter(|p| *p != "cd" && TOOLCHAINS.contains(p)) {
            if !out.iter().any(|o| o == p) {
                out.push(p.to_string());
            }
        }
    }
    out
}

/// Why `program` may fail in the sandbox here: the toolchain variables
/// that are not set (the sandbox shows a toolchain under your home only
/// through them).
fn unset_toolchain_vars(extra: &[String]) -> Vec<String> {
    rascal_exec::exec::env::TOOLCHAIN_ENV
        .iter()
        .map(|s| s.to_string())
        .chain(extra.iter().cloned())
        .filter(|v| std::env::var_os(v).is_none())
        .collect()
}

/// Ask each command guardrail's toolchain program `--version` in the
/// sandbox, as its check would run it. Nothing without bubblewrap.
pub async fn probe(config: &Config, hide: &[PathBuf]) -> Vec<CheckProbe> {
    let mut out = Vec::new();
    if rascal_exec::exec::sandbox::available().is_err() {
        return out;
    }
    for g in config.guardrails.as_deref().unwrap_or(&[]) {
        let GuardrailKind::Command {
            command,
            env,
            local,
            ..
        } = &g.kind
        else {
            continue;
        };
        if *local {
            continue;
        }
        let extra: Vec<String> = rascal_exec::exec::env::TOOLCHAIN_ENV
            .iter()
            .map(|s| s.to_string())
            .chain(env.iter().cloned())
            .collect();
        for program in programs_of(command) {
            let r =
                crate::doctor::agents::sandboxed_version_with(&program, hide, &[], &extra).await;
            let (version, problem) = match r {
                Ok(v) => (Some(v), None),
                Err(why) => {
                    let unset = unset_toolchain_vars(env);
                    (
                        None,
                        Some(format!(
                            "guardrail `{}`: `{program} --version` fails in the sandbox its check runs in: {why}{}",
                            g.name,
                            if unset.is_empty() {
                                " — is it installed where the sandbox shows it (the system folders, or a toolchain named by CARGO_HOME, RUSTUP_HOME, GOROOT, GOPATH, PYENV_ROOT or NVM_DIR)?".to_string()
                            } else {
                                format!(
                                    " — not set here: {}; export the one that names where {program} lives (the sandbox shows a toolchain under your home only through them), or list it in the guardrail's `env:`",
                                    unset.join(", ")
                                )
                            }
                        )),
                    )
                }
            };
            out.push(CheckProbe {
                guardrail: g.name.clone(),
                program,
                version,
                problem,
            });
        }
    }
    out
}

/// What doctor prints for them.
pub fn lines(probes: &[CheckProbe]) -> Vec<String> {
    probes
        .iter()
        .map(|p| match (&p.version, &p.problem) {
            (_, Some(why)) => format!("✗ checks: {why}"),
            (Some(v), None) => format!(
                "✓ checks: guardrail `{}` runs `{}` in the sandbox: {v}",
                p.guardrail, p.program
            ),
            (None, None) => format!(
                "checks: guardrail `{}`: `{}` not asked",
                p.guardrail, p.program
            ),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commands_toolchain_programs_are_found_and_nothing_else() {
        assert_eq!(programs_of("cargo test --offline"), ["cargo"]);
        assert_eq!(programs_of("cd web && npm ci && npm test"), ["npm"]);
        assert_eq!(
            programs_of("RUST_LOG=info cargo build; python3 -m pytest -q"),
            ["cargo", "python3"]
        );
        assert!(
            programs_of("./scripts/check.sh").is_empty(),
            "the project's own script"
        );
        assert!(programs_of("sh -c 'rm -rf x'").is_empty());
    }
}
