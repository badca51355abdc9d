//! Agent event streams: each real runtime's JSON-lines output (Claude Code
//! `stream-json`, Codex `exec --json`, Goose `stream-json`) parsed into
//! readable `AgentEvent`s with token and cost figures. A line that is not
//! JSON, or an event this parser does not know, is `None`: the caller shows
//! it raw — never dropped, never a crash.

use rascal_core::config::RuntimeKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use rascal_core::model::usage::Usage;

mod claude;
mod codex;
mod codex_legacy;
mod goose;

/// One readable thing an agent did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AgentEvent {
    SessionStart {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        tools: usize,
    },
    Text {
        text: String,
    },
    ToolCall {
        name: String,
        input: String,
    },
    ToolResult {
        ok: bool,
        output: String,
    },
    FileEdit {
        path: String,
        change: String,
    },
    Error {
        message: String,
    },
    /// The agent's final message.
    Final {
        ok: bool,
        text: String,
    },
    /// Something happened that needs no detail (a turn started, thinking).
    Progress {
        text: String,
    },
    /// Token/cost figures. `total: true` when they are the session's totals
    /// (replace), false when they are one turn's (add).
    Usage {
        usage: Usage,
        total: bool,
    },
}

impl AgentEvent {
    /// The readable log line.
    pub fn display(&self) -> String {
        match self {
            AgentEvent::SessionStart { model, tools } => format!(
                "● session started{}{}",
                model
                    .as_ref()
                    .map(|m| format!(" · model {m}"))
                    .unwrap_or_default(),
                if *tools > 0 {
                    format!(" · {tools} tools")
                } else {
                    String::new()
                }
            ),
            AgentEvent::Text { text } => one_line(text, 300),
            AgentEvent::ToolCall { name, input } => {
                if input.is_empty() {
                    format!("▸ {name}")
                } else {
                    format!("▸ {name} {input}")
                }
            }
            AgentEvent::ToolResult { ok, output } => {
                format!("{} {}", if *ok { "✓" } else { "✗" }, one_line(output, 200))
            }
            AgentEvent::FileEdit { path, change } => format!("▸ {change} {path}"),
            AgentEvent::Error { message } => format!("✗ error: {}", one_line(message, 300)),
            AgentEvent::Final { ok, text } => {
                let how = if *ok { "done" } else { "failed" };
                if text.trim().is_empty() {
                    format!("■ {how}")
                } else {
                    format!("■ {how}: {}", one_line(text, 300))
                }
            }
            AgentEvent::Progress { text } => format!("· {}", one_line(text, 200)),
            AgentEvent::Usage { usage, .. } => format!("Σ {}", usage.short()),
        }
    }
}

fn one_line(s: &str, max: usize) -> String {
    let joined: Vec<&str> = s.split_whitespace().collect();
    rascal_core::text::ellipsis(&joined.join(" "), max)
}

fn str_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// The `text` of each content part, joined by spaces (MCP and tool
/// results in every runtime's stream).
fn parts_text(parts: &[Value]) -> String {
    parts
        .iter()
        .filter_map(|p| str_of(p, "text"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn u64_of(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// A tool's input in a few words: the path, command or pattern when there
/// is one, else compact JSON.
pub(crate) fn compact_input(input: &Value) -> String {
    for key in [
        "file_path",
        "path",
        "command",
        "cmd",
        "pattern",
        "url",
        "query",
    ] {
        if let Some(s) = input.get(key).and_then(Value::as_str) {
            return one_line(s, 120);
        }
    }
    match input {
        Value::Null => String::new(),
        Value::Object(m) if m.is_empty() => String::new(),
        v => one_line(&v.to_string(), 120),
    }
}

/// Whether `runtime`'s output has events to parse (else every line is
/// shown raw and not looked at).
pub fn parses(runtime: RuntimeKind) -> bool {
    matches!(
        runtime,
        RuntimeKind::Claude | RuntimeKind::Scripted | RuntimeKind::Codex | RuntimeKind::Goose
    )
}

/// Parse one output line of `runtime`. None: show it raw.
pub fn parse_line(runtime: RuntimeKind, line: &str) -> Option<Vec<AgentEvent>> {
    let t = line.trim();
    if !t.starts_with('{') {
        return None;
    }
    let v: Value = serde_json::from_str(t).ok()?;
    let events = match runtime {
        // Scripted agents speak Claude Code's stream-json when they print
        // events (a `usage` step), so tests exercise the same parser.
        RuntimeKind::Claude | RuntimeKind::Scripted => claude::parse(&v),
        RuntimeKind::Codex => codex::parse(&v),
        RuntimeKind::Goose => goose::parse(&v),
        _ => return None,
    };
    match events {
        Some(events) => Some(events).filter(|e| !e.is_empty()),
        None => unread(&v),
    }
}

/// An event of a kind no parser reads (a newer CLI's `rate_limit_event`,
/// say): named in one short line, its content folded away — never the raw
/// JSON in the log. None when the line has no kind at all.
fn unread(v: &Value) -> Option<Vec<AgentEvent>> {
    let kind = v
        .get("type")
        .and_then(Value::as_str)
        .or_else(|| v.get("msg")?.get("type")?.as_str())?;
    let kind: String = kind.chars().filter(|c| !c.is_control()).take(60).collect();
    Some(vec![AgentEvent::Progress {
        text: format!("{kind} (an event rascal does not read; folded)"),
    }])
}

/// Fold usage events: session totals replace, per-turn figures add.
pub fn add_usage(acc: &mut Usage, ev: &AgentEvent) {
    if let AgentEvent::Usage { usage, total } = ev {
        if *total {
            *acc = *usage;
        } else {
            acc.input_tokens += usage.input_tokens;
            acc.output_tokens += usage.output_tokens;
            acc.cached_tokens += usage.cached_tokens;
            if let Some(c) = usage.cost_usd {
                acc.cost_usd = Some(acc.cost_usd.unwrap_or(0.0) + c);
            }
        }
    }
}
