//! The agent CLIs `rascal init` looks for on PATH, and what each needs to
//! run under the process launcher: the credential variables (names only),
//! the network, and the login files it may read.

use rascal_core::config::RuntimeKind;

/// One agent CLI rascal can drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentCli {
    /// The program on PATH, and the agent's name in config.yaml.
    pub program: &'static str,
    pub runtime: RuntimeKind,
    /// The variables its credentials come from (names, never values).
    pub env: &'static [&'static str],
    /// What `env` is, in words (a comment in config.yaml).
    pub env_note: &'static str,
    /// Login files under the home directory a logged-in CLI reads instead
    /// of a key (`~/…`).
    pub logins: &'static [&'static str],
}

/// The CLIs, in the order they are written.
pub const KNOWN: &[AgentCli] = &[
    AgentCli {
        program: "claude",
        runtime: RuntimeKind::Claude,
        env: &["ANTHROPIC_API_KEY"],
        env_note: "or log in with `claude` and mount the login file below",
        logins: &["~/.claude.json"],
    },
    AgentCli {
        program: "codex",
        runtime: RuntimeKind::Codex,
        env: &["OPENAI_API_KEY"],
        env_note: "or log in with `codex login` and mount ~/.codex",
        logins: &["~/.codex"],
    },
    AgentCli {
        program: "goose",
        runtime: RuntimeKind::Goose,
        env: &["GOOSE_PROVIDER", "OPENAI_API_KEY"],
        env_note: "GOOSE_PROVIDER names the model provider; list that provider's key instead of OPENAI_API_KEY if it is another",
        logins: &["~/.config/goose"],
    },
];

/// The provider an agent of this CLI belongs to, for "the reviewer is of
/// another provider" (the same rule as `config::verification::provider`).
pub fn provider(cli: &AgentCli) -> String {
    rascal_core::config::verification::provider(
        cli.program,
        &rascal_core::config::AgentConfig::new(cli.runtime),
    )
}

/// A CLI found on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub cli: AgentCli,
    /// Where PATH resolves it.
    pub path: std::path::PathBuf,
    /// The login files of `cli.logins` that exist here (mounted read-only).
    pub logins: Vec<String>,
}
