//! Goose `run --output-format stream-json`: `message` events carrying a
//! goose Message (text — streamed a chunk per event —, thinking,
//! toolRequest, toolResponse), `notification` (a flattened `log` or
//! `progress`), `model_change`, `error` and `complete` (the session's
//! tokens: `total_tokens`, possibly null; later builds add `input_tokens`/
//! `output_tokens` (aaif-goose/goose#8870), cache reads and cost). A tool
//! response's `value` is a list of content in early builds and `{content,
//! isError, structuredContent}` in later ones; both are read. A provider's
//! failure comes as an `error` content item (1.50). Checked against real
//! lines of goose 1.25, 1.27, 1.50.1 and 1.51.0 that other projects
//! published (tests/fixtures/agents/README.md); no whole run was found.

use super::{compact_input, parts_text, str_of, u64_of, AgentEvent, Usage};
use serde_json::Value;

/// The events of one line; None for a type this parser does not know.
pub(super) fn parse(v: &Value) -> Option<Vec<AgentEvent>> {
    let mut out = Vec::new();
    match v.get("type")?.as_str()? {
        "message" => {
            let msg = v.get("message")?;
            let assistant = msg.get("role").and_then(Value::as_str) == Some("assistant");
            for c in msg.get("content")?.as_array()? {
                match c.get("type").and_then(Value::as_str) {
                    Some("text") if assistant => out.push(AgentEvent::Text {
                        text: str_of(c, "text").unwrap_or_default(),
                    }),
                    // The prompt echoed back.
                    Some("text") => {}
                    Some("toolRequest") => out.push(tool_request(c)),
                    Some("toolResponse") => out.push(tool_response(c)),
                    Some("thinking") | Some("redactedThinking") => out.push(AgentEvent::Progress {
                        text: "thinking".into(),
                    }),
                    // A provider's failure said as content (goose 1.50:
                    // `{"type":"error","kind":"authentication","message":…}`).
                    Some("error") => out.push(AgentEvent::Error {
                        message: str_of(c, "message").unwrap_or_else(|| {
                            format!("{} error", str_of(c, "kind").unwrap_or_default())
                        }),
                    }),
                    other => out.push(AgentEvent::Progress {
                        text: format!("{} content", other.unwrap_or("untyped")),
                    }),
                }
            }
        }
        "notification" => {
            let text = str_of(v, "message")
                .or_else(|| v.get("log").and_then(|l| str_of(l, "message")))
                .or_else(|| v.get("progress").and_then(|p| str_of(p, "message")))
                .unwrap_or_default();
            out.push(AgentEvent::Progress {
                text: format!("[{}] {text}", str_of(v, "extension_id").unwrap_or_default()),
            });
        }
        "model_change" => out.push(AgentEvent::Progress {
            text: format!("model {}", str_of(v, "model").unwrap_or_default()),
        }),
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
            let input = u64_of(v, "input_tokens");
            let output = u64_of(v, "output_tokens");
            let cost = v.get("cost_usd").and_then(Value::as_f64);
            if total > 0 || input > 0 || output > 0 {
                let cached = u64_of(v, "cache_read_input_tokens");
                out.push(AgentEvent::Usage {
                    usage: Usage {
                        // Input as billed new: cache reads are `cached`.
                        input_tokens: input.saturating_sub(cached),
                        output_tokens: output.max(total.saturating_sub(input)),
                        cached_tokens: cached,
                        cost_usd: cost,
                    },
                    total: true,
                });
            }
        }
        _ => return None,
    }
    Some(out)
}

/// A tool call; a request goose could not parse is an error.
fn tool_request(c: &Value) -> AgentEvent {
    let call = c.get("toolCall");
    if call.and_then(|t| str_of(t, "status")).as_deref() == Some("error") {
        return AgentEvent::Error {
            message: call.and_then(|t| str_of(t, "error")).unwrap_or_default(),
        };
    }
    let value = call.and_then(|t| t.get("value"));
    AgentEvent::ToolCall {
        name: value
            .and_then(|t| str_of(t, "name"))
            .unwrap_or_else(|| "tool".into()),
        input: compact_input(
            value
                .and_then(|t| t.get("arguments"))
                .unwrap_or(&Value::Null),
        ),
    }
}

/// A tool's answer: failed when goose says `error` or the tool says
/// `isError` (a shell command that exited non-zero).
fn tool_response(c: &Value) -> AgentEvent {
    let result = c.get("toolResult").unwrap_or(&Value::Null);
    let value = result.get("value").unwrap_or(&Value::Null);
    let parts = value
        .as_array()
        .or_else(|| value.get("content").and_then(Value::as_array));
    let is_error = value.get("isError").and_then(Value::as_bool) == Some(true);
    let ok = str_of(result, "status").as_deref() == Some("success") && !is_error;
    let output = parts
        .map(|parts| parts_text(parts))
        .or_else(|| str_of(result, "error"))
        .unwrap_or_default();
    AgentEvent::ToolResult { ok, output }
}
