//! Tokens and cost an agent reported, as shown in headers and scoreboards.

use serde::{Deserialize, Serialize};

/// Tokens and cost as a stream reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl Usage {
    pub fn is_empty(&self) -> bool {
        self.input_tokens == 0
            && self.output_tokens == 0
            && self.cached_tokens == 0
            && self.cost_usd.is_none()
    }

    /// One line for headers and scoreboards: `12.3k in · 4.5k out · $0.0123`.
    pub fn short(&self) -> String {
        let mut s = format!(
            "{} in · {} out",
            human_tokens(self.input_tokens),
            human_tokens(self.output_tokens)
        );
        if self.cached_tokens > 0 {
            s.push_str(&format!(" · {} cached", human_tokens(self.cached_tokens)));
        }
        if let Some(c) = self.cost_usd {
            s.push_str(&format!(" · ${c:.4}"));
        }
        s
    }
}

fn human_tokens(n: u64) -> String {
    if n >= 10_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}
