//! An agent's sandbox limits (`limits: { pids: 512, memory: 2g }`): how many
//! processes and how much memory its bubblewrap sandboxes may use — the
//! agent's own, its candidate's checks, and a reviewer's or judge's.
//! Defaults apply when the key is absent; only raising them is a choice.

use super::container::ByteSize;
use serde::{Deserialize, Serialize};

/// The `limits:` key of an agent, as written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsSetting {
    /// Processes (and threads) at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids: Option<u64>,
    /// Memory, counting the sandbox's private tmpfs mounts (`512m`, `2g`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<ByteSize>,
}

/// The limits a sandbox runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub pids: u64,
    pub memory: u64,
}

pub const DEFAULT_PIDS: u64 = 512;
pub const DEFAULT_MEMORY: u64 = 2 << 30;
/// Below this not even a shell and bubblewrap start.
pub const MIN_PIDS: u64 = 8;
pub const MIN_MEMORY: u64 = 16 << 20;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            pids: DEFAULT_PIDS,
            memory: DEFAULT_MEMORY,
        }
    }
}

impl Limits {
    /// An agent's limits: its `limits:`, else its container `pids:`/`memory:`
    /// (one number for both launchers), else the defaults.
    pub fn of(agent: &super::AgentConfig) -> Limits {
        let set = agent.limits.unwrap_or_default();
        Limits {
            pids: set
                .pids
                .or(agent.pids.and_then(|p| u64::try_from(p).ok()))
                .unwrap_or(DEFAULT_PIDS),
            memory: set
                .memory
                .or(agent.memory)
                .map_or(DEFAULT_MEMORY, ByteSize::get),
        }
    }

    /// `512 processes`: what a sandbox over its process limit reports.
    pub fn pids_reason(&self) -> String {
        format!("{} processes", self.pids)
    }

    /// `memory 2 GiB`: what a sandbox over its memory limit reports.
    pub fn memory_reason(&self) -> String {
        format!("memory {}", human(self.memory))
    }
}

/// `2 GiB`, `512 MiB`, `1.5 GiB`.
pub fn human(bytes: u64) -> String {
    bytesize::ByteSize::b(bytes)
        .display()
        .iec()
        .to_string()
        .replace(".0 ", " ")
}

/// What is wrong with an agent's `limits:`, if anything.
pub fn problem(a: &super::AgentConfig) -> Option<String> {
    let set = a.limits?;
    if let Some(p) = set.pids {
        if p < MIN_PIDS {
            return Some(format!(
                "`limits: {{ pids: {p} }}` is too low: a sandbox needs at least {MIN_PIDS} processes"
            ));
        }
    }
    if let Some(m) = set.memory {
        if m.get() < MIN_MEMORY {
            return Some(format!(
                "`limits: {{ memory: {} }}` is too low: a sandbox needs at least 16m",
                m.human()
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{AgentConfig, Config};

    fn agent(yaml: &str) -> Result<AgentConfig, String> {
        let text = format!(
            "agents:\n  a:\n    runtime: command\n    command: [true]\n{}",
            yaml.lines()
                .map(|l| format!("    {l}\n"))
                .collect::<String>()
        );
        Config::from_texts(Some(&text), None, None)
            .map(|c| c.main.agents["a"].clone())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn limits_default_to_512_processes_and_2_gib() {
        let a = agent("").unwrap();
        assert_eq!(Limits::of(&a), Limits::default());
        assert_eq!(Limits::default().pids_reason(), "512 processes");
        assert_eq!(Limits::default().memory_reason(), "memory 2 GiB");
    }

    #[test]
    fn limits_parse_per_agent_and_fall_back_to_container_settings() {
        let a = agent("limits: { pids: 100, memory: 256m }").unwrap();
        assert_eq!(
            Limits::of(&a),
            Limits {
                pids: 100,
                memory: 256 << 20
            }
        );
        let a = agent("limits:\n  memory: 1g").unwrap();
        assert_eq!(Limits::of(&a).pids, DEFAULT_PIDS);
        assert_eq!(Limits::of(&a).memory_reason(), "memory 1 GiB");
        // The docker keys count when `limits:` does not say.
        let a = agent("pids: 64\nmemory: 512m").unwrap();
        assert_eq!(
            Limits::of(&a),
            Limits {
                pids: 64,
                memory: 512 << 20
            }
        );
    }

    #[test]
    fn bad_limits_say_what_is_wrong() {
        let e = agent("limits: { pids: 2 }").unwrap_err();
        assert!(e.contains("agent `a`") && e.contains("at least 8"), "{e}");
        let e = agent("limits: { memory: 1m }").unwrap_err();
        assert!(e.contains("at least 16m"), "{e}");
        let e = agent("limits: { cpus: 2 }").unwrap_err();
        assert!(e.contains("cpus"), "{e}");
        let e = agent("limits: { memory: lots }").unwrap_err();
        assert!(e.contains("size"), "{e}");
    }
}
