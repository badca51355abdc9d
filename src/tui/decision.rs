//! What a dialog produces: a human decision about a candidate or the run.
//! Shaped like the pipeline's `Decision` so the shell can hand it over as is.

use crate::verdict::Layer;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DecisionKind {
    Select,
    Override {
        layer: Layer,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        check: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule: Option<String>,
    },
    Escalate,
    Retry {
        feedback: String,
    },
    Cancel,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// None: the whole run.
    pub candidate: Option<String>,
    pub kind: DecisionKind,
    pub who: String,
    pub reason: String,
    pub at_ms: i64,
}

impl DecisionKind {
    pub fn label(&self) -> &'static str {
        match self {
            DecisionKind::Select => "select",
            DecisionKind::Override { .. } => "override",
            DecisionKind::Escalate => "escalate",
            DecisionKind::Retry { .. } => "retry",
            DecisionKind::Cancel => "cancel",
        }
    }
}

/// `Name <email>` from git config, or `$USER`, or "unknown".
pub fn author() -> String {
    if let Ok(cfg) = git2::Config::open_default() {
        let name = cfg.get_string("user.name").ok();
        let email = cfg.get_string("user.email").ok();
        match (name, email) {
            (Some(n), Some(e)) => return format!("{n} <{e}>"),
            (Some(n), None) => return n,
            (None, Some(e)) => return e,
            _ => {}
        }
    }
    std::env::var("USER").unwrap_or_else(|_| "unknown".into())
}
