//! Claude Code `-p --output-format stream-json --verbose`: one JSON object a
//! line — `system` (the `init` handshake, and since 2.1 `hook_*`, `status`,
//! `compact_boundary`…), `assistant`/`user` messages with one content block
//! per line, `stream_event` deltas (`--include-partial-messages`) and the
//! closing `result` with `usage`, `modelUsage` and `total_cost_usd`. Checked
//! against the real captures in `tests/fixtures/agents/`.

use super::{compact_input, one_line, parts_text, str_of, u64_of, AgentEvent, Usage};
use serde_json::Value;

/// The events of one line; None for a type this parser does not know.
pub(super) fn parse(v: &Value) -> Option<Vec<AgentEvent>> {
    let mut out = Vec::new();
    match v.get("type")?.as_str()? {
        "system" => out.push(system(v)?),
        "assistant" => {
            let msg = v.get("message")?;
            // A failed request (expired login, overload) comes back as an
            // assistant message flagged `is_api_error_message`: its text is
            // the error.
            let api_error = v.get("is_api_error_message").and_then(Value::as_bool) == Some(true);
            for block in msg.get("content")?.as_array()? {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") if api_error => out.push(AgentEvent::Error {
                        message: str_of(block, "text")
                            .or_else(|| str_of(v, "error"))
                            .unwrap_or_default(),
                    }),
                    Some("text") => out.push(AgentEvent::Text {
                        text: str_of(block, "text").unwrap_or_default(),
                    }),
                    Some("thinking") | Some("redacted_thinking") => {
                        out.push(AgentEvent::Progress {
                            text: "thinking".into(),
                        })
                    }
                    Some("tool_use") | Some("server_tool_use") => out.push(AgentEvent::ToolCall {
                        name: str_of(block, "name").unwrap_or_else(|| "tool".into()),
                        input: compact_input(block.get("input").unwrap_or(&Value::Null)),
                    }),
                    other => out.push(AgentEvent::Progress {
                        text: format!("{} block", other.unwrap_or("untyped")),
                    }),
                }
            }
        }
        "user" => {
            let content = v.get("message")?.get("content")?;
            // The prompt itself (or a replayed user message) is plain text.
            if let Some(text) = content.as_str() {
                out.push(AgentEvent::Progress {
                    text: format!("user: {}", one_line(text, 120)),
                });
            }
            for block in content.as_array().into_iter().flatten() {
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_result") => out.push(tool_result(block)),
                    Some("text") => out.push(AgentEvent::Progress {
                        text: format!(
                            "user: {}",
                            one_line(&str_of(block, "text").unwrap_or_default(), 120)
                        ),
                    }),
                    _ => {}
                }
            }
        }
        "stream_event" => out.push(stream_event(v.get("event")?)?),
        "result" => {
            let ok = !v.get("is_error").and_then(Value::as_bool).unwrap_or(false)
                && v.get("subtype")
                    .and_then(Value::as_str)
                    .unwrap_or("success")
                    == "success";
            let text = str_of(v, "result")
                .or_else(|| {
                    // An error result names its errors, else only its subtype.
                    v.get("errors").and_then(Value::as_array).map(|e| {
                        e.iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join("; ")
                    })
                })
                .filter(|t| !t.is_empty())
                .or_else(|| str_of(v, "subtype"))
                .unwrap_or_default();
            out.push(AgentEvent::Final { ok, text });
            out.push(AgentEvent::Usage {
                usage: result_usage(v),
                total: true,
            });
        }
        _ => return None,
    }
    Some(out)
}

/// `system` lines: the handshake starts the session; the others (hooks,
/// status pings, compaction, API retries) are progress — a hook that failed
/// is an error. An unknown subtype is still progress, never a broken line.
fn system(v: &Value) -> Option<AgentEvent> {
    let subtype = v.get("subtype").and_then(Value::as_str).unwrap_or("");
    let hook = || {
        str_of(v, "hook_name")
            .or_else(|| str_of(v, "hook_event"))
            .unwrap_or_default()
    };
    Some(match subtype {
        "init" => AgentEvent::SessionStart {
            model: str_of(v, "model"),
            tools: v
                .get("tools")
                .and_then(Value::as_array)
                .map(Vec::len)
                .unwrap_or(0),
        },
        "hook_response" => {
            let code = v.get("exit_code").and_then(Value::as_i64).unwrap_or(0);
            let failed = code != 0 || str_of(v, "outcome").is_some_and(|o| o == "error");
            if failed {
                AgentEvent::Error {
                    message: format!(
                        "hook {} exited {code}: {}",
                        hook(),
                        str_of(v, "stderr")
                            .or_else(|| str_of(v, "output"))
                            .unwrap_or_default()
                    ),
                }
            } else {
                AgentEvent::Progress {
                    text: format!("hook {} done", hook()),
                }
            }
        }
        "hook_started" | "hook_progress" => AgentEvent::Progress {
            text: format!("hook {}", hook()),
        },
        "compact_boundary" => {
            let meta = v.get("compact_metadata").unwrap_or(&Value::Null);
            let before = u64_of(meta, "pre_tokens");
            AgentEvent::Progress {
                text: if before > 0 {
                    format!("context compacted ({before} tokens before)")
                } else {
                    "context compacted".into()
                },
            }
        }
        "status" => AgentEvent::Progress {
            text: format!(
                "status {}",
                str_of(v, "status").unwrap_or_else(|| "changed".into())
            ),
        },
        "" => return None,
        other => AgentEvent::Progress {
            text: format!("system {other}"),
        },
    })
}

/// A `tool_result` block: its text, and whether the tool failed.
fn tool_result(block: &Value) -> AgentEvent {
    let output = match block.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts_text(parts),
        _ => String::new(),
    };
    let is_error = block
        .get("is_error")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    AgentEvent::ToolResult {
        ok: !is_error,
        output,
    }
}

/// A `stream_event` (`--include-partial-messages`): the raw Messages API
/// stream. The finished `assistant` line follows with the whole message, so
/// deltas are progress only — text a fragment at a time.
fn stream_event(e: &Value) -> Option<AgentEvent> {
    let kind = e.get("type")?.as_str()?;
    let delta = e.get("delta").unwrap_or(&Value::Null);
    let text = match (kind, delta.get("type").and_then(Value::as_str)) {
        ("content_block_delta", Some("text_delta")) => {
            format!(
                "… {}",
                one_line(&str_of(delta, "text").unwrap_or_default(), 120)
            )
        }
        ("content_block_delta", Some("thinking_delta")) => format!(
            "thinking… {}",
            one_line(&str_of(delta, "thinking").unwrap_or_default(), 120)
        ),
        ("content_block_start", _) => format!(
            "{} block started",
            e.get("content_block")
                .and_then(|b| str_of(b, "type"))
                .unwrap_or_default()
        ),
        (other, Some(d)) => format!("stream {other} {d}"),
        (other, None) => format!("stream {other}"),
    };
    Some(AgentEvent::Progress { text })
}

/// The run's totals. `modelUsage` covers every model the run used (the
/// helper model too, which `usage` leaves out), so it wins when present.
/// Input counts what was billed as new input: plain input and cache writes;
/// cache reads are `cached`.
fn result_usage(v: &Value) -> Usage {
    let cost_usd = v.get("total_cost_usd").and_then(Value::as_f64);
    if let Some(models) = v
        .get("modelUsage")
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty())
    {
        let mut u = Usage {
            cost_usd,
            ..Usage::default()
        };
        // Saturating: a hostile line must not overflow.
        for m in models.values() {
            u.input_tokens = u
                .input_tokens
                .saturating_add(u64_of(m, "inputTokens"))
                .saturating_add(u64_of(m, "cacheCreationInputTokens"));
            u.output_tokens = u.output_tokens.saturating_add(u64_of(m, "outputTokens"));
            u.cached_tokens = u
                .cached_tokens
                .saturating_add(u64_of(m, "cacheReadInputTokens"));
        }
        if !(u.input_tokens == 0 && u.output_tokens == 0 && u.cached_tokens == 0) {
            return u;
        }
    }
    let u = v.get("usage").unwrap_or(&Value::Null);
    Usage {
        input_tokens: u64_of(u, "input_tokens")
            .saturating_add(u64_of(u, "cache_creation_input_tokens")),
        output_tokens: u64_of(u, "output_tokens"),
        cached_tokens: u64_of(u, "cache_read_input_tokens"),
        cost_usd,
    }
}
