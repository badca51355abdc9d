//! Agent event streams: each real runtime's JSON-lines output (Claude Code
//! `stream-json`, Codex `exec --json`, Goose `stream-json`) parsed into
//! readable `AgentEvent`s with token and cost figures. A line that is not
//! JSON, or an event this parser does not know, is `None`: the caller shows
//! it raw — never dropped, never a crash.

use crate::config::RuntimeKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::model::usage::Usage;

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
    crate::text::ellipsis(&joined.join(" "), max)
}

fn str_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

fn u64_of(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// A tool's input in a few words: the path, command or pattern when there
/// is one, else compact JSON.
pub fn compact_input(input: &Value) -> String {
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
        RuntimeKind::Claude | RuntimeKind::Scripted => claude(&v),
        RuntimeKind::Codex => codex(&v),
        RuntimeKind::Goose => goose(&v),
        _ => None,
    }?;
    Some(events).filter(|e| !e.is_empty())
}

/// Claude Code `-p --output-format stream-json --verbose`.
fn claude(v: &Value) -> Option<Vec<AgentEvent>> {
    let mut out = Vec::new();
    match v.get("type")?.as_str()? {
        "system" if v.get("subtype").and_then(Value::as_str) == Some("init") => {
            out.push(AgentEvent::SessionStart {
                model: str_of(v, "model"),
                tools: v
                    .get("tools")
                    .and_then(Value::as_array)
                    .map(Vec::len)
                    .unwrap_or(0),
            });
        }
        "assistant" => {
            let msg = v.get("message")?;
            for block in msg.get("content")?.as_array()? {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => out.push(AgentEvent::Text {
                        text: str_of(block, "text").unwrap_or_default(),
                    }),
                    Some("thinking") => out.push(AgentEvent::Progress {
                        text: "thinking".into(),
                    }),
                    Some("tool_use") => out.push(AgentEvent::ToolCall {
                        name: str_of(block, "name").unwrap_or_else(|| "tool".into()),
                        input: compact_input(block.get("input").unwrap_or(&Value::Null)),
                    }),
                    _ => return None,
                }
            }
        }
        "user" => {
            for block in v.get("message")?.get("content")?.as_array()? {
                if block.get("type").and_then(Value::as_str) != Some("tool_result") {
                    continue;
                }
                let content = match block.get("content") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Array(parts)) => parts
                        .iter()
                        .filter_map(|p| str_of(p, "text"))
                        .collect::<Vec<_>>()
                        .join(" "),
                    _ => String::new(),
                };
                let is_error = block
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                out.push(AgentEvent::ToolResult {
                    ok: !is_error,
                    output: content,
                });
            }
        }
        "result" => {
            let ok = !v.get("is_error").and_then(Value::as_bool).unwrap_or(false)
                && v.get("subtype")
                    .and_then(Value::as_str)
                    .unwrap_or("success")
                    == "success";
            out.push(AgentEvent::Final {
                ok,
                text: str_of(v, "result")
                    .or_else(|| str_of(v, "subtype"))
                    .unwrap_or_default(),
            });
            let u = v.get("usage").cloned().unwrap_or(Value::Null);
            out.push(AgentEvent::Usage {
                usage: Usage {
                    input_tokens: u64_of(&u, "input_tokens"),
                    output_tokens: u64_of(&u, "output_tokens"),
                    cached_tokens: u64_of(&u, "cache_read_input_tokens"),
                    cost_usd: v.get("total_cost_usd").and_then(Value::as_f64),
                },
                total: true,
            });
        }
        _ => return None,
    }
    Some(out)
}

/// Codex `exec --json`.
fn codex(v: &Value) -> Option<Vec<AgentEvent>> {
    let mut out = Vec::new();
    match v.get("type")?.as_str()? {
        "thread.started" => out.push(AgentEvent::SessionStart {
            model: str_of(v, "model"),
            tools: 0,
        }),
        "turn.started" => out.push(AgentEvent::Progress {
            text: "turn started".into(),
        }),
        "item.started" | "item.updated" | "item.completed" => {
            let item = v.get("item")?;
            let done = v["type"] == "item.completed";
            match item.get("type").and_then(Value::as_str)? {
                "agent_message" if done => out.push(AgentEvent::Text {
                    text: str_of(item, "text").unwrap_or_default(),
                }),
                "reasoning" if done => out.push(AgentEvent::Progress {
                    text: format!(
                        "thinking: {}",
                        one_line(&str_of(item, "text").unwrap_or_default(), 120)
                    ),
                }),
                "command_execution" => {
                    let cmd = str_of(item, "command").unwrap_or_default();
                    if done {
                        let code = item.get("exit_code").and_then(Value::as_i64);
                        out.push(AgentEvent::ToolResult {
                            ok: code == Some(0),
                            output: format!(
                                "{} (exit {})",
                                one_line(&cmd, 80),
                                code.map(|c| c.to_string()).unwrap_or("?".into())
                            ),
                        });
                    } else if v["type"] == "item.started" {
                        out.push(AgentEvent::ToolCall {
                            name: "shell".into(),
                            input: one_line(&cmd, 120),
                        });
                    }
                }
                "file_change" if done => {
                    for c in item
                        .get("changes")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        out.push(AgentEvent::FileEdit {
                            path: str_of(c, "path").unwrap_or_default(),
                            change: str_of(c, "kind").unwrap_or_else(|| "edit".into()),
                        });
                    }
                }
                "mcp_tool_call" if !done => out.push(AgentEvent::ToolCall {
                    name: format!(
                        "{}.{}",
                        str_of(item, "server").unwrap_or_default(),
                        str_of(item, "tool").unwrap_or_default()
                    ),
                    input: String::new(),
                }),
                "web_search" if !done => out.push(AgentEvent::ToolCall {
                    name: "web_search".into(),
                    input: str_of(item, "query").unwrap_or_default(),
                }),
                "error" => out.push(AgentEvent::Error {
                    message: str_of(item, "message").unwrap_or_default(),
                }),
                "agent_message" | "reasoning" | "file_change" | "mcp_tool_call" | "web_search"
                | "todo_list" => out.push(AgentEvent::Progress {
                    text: format!(
                        "{} {}",
                        item["type"].as_str().unwrap_or(""),
                        v["type"].as_str().unwrap_or("")
                    ),
                }),
                _ => return None,
            }
        }
        "turn.completed" => {
            let u = v.get("usage").cloned().unwrap_or(Value::Null);
            out.push(AgentEvent::Usage {
                usage: Usage {
                    input_tokens: u64_of(&u, "input_tokens"),
                    output_tokens: u64_of(&u, "output_tokens"),
                    cached_tokens: u64_of(&u, "cached_input_tokens"),
                    cost_usd: None,
                },
                total: false,
            });
        }
        "turn.failed" => out.push(AgentEvent::Error {
            message: v
                .get("error")
                .and_then(|e| str_of(e, "message"))
                .unwrap_or_else(|| "turn failed".into()),
        }),
        "error" => out.push(AgentEvent::Error {
            message: str_of(v, "message").unwrap_or_default(),
        }),
        _ => return None,
    }
    Some(out)
}

/// Goose `run --output-format stream-json`: `message` events carrying a
/// goose Message (text, toolRequest, toolResponse content), `notification`,
/// `error` and `complete` (with total tokens).
fn goose(v: &Value) -> Option<Vec<AgentEvent>> {
    let mut out = Vec::new();
    match v.get("type")?.as_str()? {
        "message" => {
            let msg = v.get("message")?;
            for c in msg.get("content")?.as_array()? {
                match c.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if msg.get("role").and_then(Value::as_str) == Some("assistant") {
                            out.push(AgentEvent::Text {
                                text: str_of(c, "text").unwrap_or_default(),
                            });
                        }
                    }
                    Some("toolRequest") => {
                        let call = c.get("toolCall").and_then(|t| t.get("value"));
                        out.push(AgentEvent::ToolCall {
                            name: call
                                .and_then(|t| str_of(t, "name"))
                                .unwrap_or_else(|| "tool".into()),
                            input: compact_input(
                                call.and_then(|t| t.get("arguments"))
                                    .unwrap_or(&Value::Null),
                            ),
                        });
                    }
                    Some("toolResponse") => {
                        let result = c.get("toolResult");
                        let ok = result
                            .and_then(|r| str_of(r, "status"))
                            .map(|s| s == "success")
                            .unwrap_or(false);
                        let text = result
                            .and_then(|r| r.get("value"))
                            .and_then(Value::as_array)
                            .map(|parts| {
                                parts
                                    .iter()
                                    .filter_map(|p| str_of(p, "text"))
                                    .collect::<Vec<_>>()
                                    .join(" ")
                            })
                            .or_else(|| result.and_then(|r| str_of(r, "error")))
                            .unwrap_or_default();
                        out.push(AgentEvent::ToolResult { ok, output: text });
                    }
                    Some("thinking") | Some("redactedThinking") => out.push(AgentEvent::Progress {
                        text: "thinking".into(),
                    }),
                    _ => return None,
                }
            }
        }
        "notification" => {
            out.push(AgentEvent::Text {
                text: format!(
                    "[{}] {}",
                    str_of(v, "extension_id").unwrap_or_default(),
                    str_of(v, "message").unwrap_or_default()
                ),
            });
        }
        "error" => out.push(AgentEvent::Error {
            message: str_of(v, "error")
                .or_else(|| str_of(v, "message"))
                .unwrap_or_default(),
        }),
        "complete" => {
            out.push(AgentEvent::Final {
                ok: true,
                text: "session complete".into(),
            });
            let total = u64_of(v, "total_tokens");
            if total > 0 {
                out.push(AgentEvent::Usage {
                    usage: Usage {
                        input_tokens: u64_of(v, "input_tokens"),
                        output_tokens: u64_of(v, "output_tokens")
                            .max(total.saturating_sub(u64_of(v, "input_tokens"))),
                        cached_tokens: 0,
                        cost_usd: None,
                    },
                    total: true,
                });
            }
        }
        _ => return None,
    }
    Some(out)
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
