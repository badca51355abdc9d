//! What a candidate's network was and what rascal's egress proxy did for
//! it: carried by the agent's report, so the TUI, `show` and every report
//! format say the mode, the allowed hosts and the refused count.

use crate::config::network::OnRefused;
use serde::{Deserialize, Serialize};

/// One candidate's network in its last attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkSummary {
    /// `allowlist`, `none`, `bridge`, `host` or a network's name.
    pub mode: String,
    /// The allowlist as written (runtime defaults expanded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Connections the proxy let through.
    pub allowed: u64,
    /// Requests the proxy refused.
    pub refused: u64,
    /// Outbound connections the proxy opened (only ever for allowed ones).
    pub opened: u64,
    pub on_refused: OnRefused,
    /// Why the host's own services stayed reachable from the agent's
    /// network (rascal could not install its host firewall); None when
    /// they were closed, or there was nothing to close.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_open: Option<String>,
}
