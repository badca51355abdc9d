//! Codex `exec --json` since 0.44: `thread.started`, `turn.*` (usage on
//! `turn.completed`), and `item.started`/`item.updated`/`item.completed`
//! carrying an item — `agent_message`, `reasoning`, `command_execution`,
//! `file_change`, `mcp_tool_call`, `web_search`, `todo_list`, `error`.
//! The first builds (`--experimental-json`, 0.4x) named the item kind
//! `item_type` and the answer `assistant_message`; both spellings are read.
//! The `{"id","msg"}` stream before it is `codex_legacy`. Checked against the
//! real captures in `tests/fixtures/agents/`.

use super::{compact_input, one_line, parts_text, str_of, u64_of, AgentEvent, Usage};
use serde_json::Value;

/// The events of one line; None for a type this parser does not know.
pub(super) fn parse(v: &Value) -> Option<Vec<AgentEvent>> {
    if v.get("msg").is_some_and(Value::is_object) || v.get("type").is_none() {
        return super::codex_legacy::parse(v);
    }
    let mut out = Vec::new();
    match v.get("type")?.as_str()? {
        "thread.started" | "session.created" => out.push(AgentEvent::SessionStart {
            model: str_of(v, "model"),
            tools: 0,
        }),
        "turn.started" => out.push(AgentEvent::Progress {
            text: "turn started".into(),
        }),
        phase @ ("item.started" | "item.updated" | "item.completed") => {
            item(v.get("item")?, phase, &mut out)?
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

/// One item event. `phase` is `item.started`, `item.updated` or
/// `item.completed`; a command or tool call is shown when it starts and its
/// outcome when it completes.
fn item(item: &Value, phase: &str, out: &mut Vec<AgentEvent>) -> Option<()> {
    let done = phase == "item.completed";
    let started = phase == "item.started";
    let kind = item
        .get("type")
        .or_else(|| item.get("item_type"))
        .and_then(Value::as_str)?;
    match kind {
        "agent_message" | "assistant_message" if done => out.push(AgentEvent::Text {
            text: str_of(item, "text").unwrap_or_default(),
        }),
        "reasoning" if done => out.push(AgentEvent::Progress {
            text: format!(
                "thinking: {}",
                one_line(&str_of(item, "text").unwrap_or_default(), 120)
            ),
        }),
        "command_execution" if done => {
            let cmd = str_of(item, "command").unwrap_or_default();
            let code = item.get("exit_code").and_then(Value::as_i64);
            let ok = code == Some(0) && str_of(item, "status").as_deref() != Some("failed");
            let mut output = format!(
                "{} (exit {})",
                one_line(&cmd, 80),
                code.map(|c| c.to_string()).unwrap_or("?".into())
            );
            // A failed command says why.
            let said = str_of(item, "aggregated_output").unwrap_or_default();
            if !ok && !said.trim().is_empty() {
                output.push_str(": ");
                output.push_str(said.trim());
            }
            out.push(AgentEvent::ToolResult { ok, output });
        }
        "command_execution" if started => out.push(AgentEvent::ToolCall {
            name: "shell".into(),
            input: one_line(&str_of(item, "command").unwrap_or_default(), 120),
        }),
        "file_change" if done => {
            for c in item
                .get("changes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                out.push(AgentEvent::FileEdit {
                    path: str_of(c, "path").unwrap_or_default(),
                    change: change_verb(&str_of(c, "kind").unwrap_or_default()),
                });
            }
            if str_of(item, "status").as_deref() == Some("failed") {
                out.push(AgentEvent::ToolResult {
                    ok: false,
                    output: "patch failed".into(),
                });
            }
        }
        "mcp_tool_call" if started => out.push(AgentEvent::ToolCall {
            name: mcp_name(item),
            input: compact_input(item.get("arguments").unwrap_or(&Value::Null)),
        }),
        "mcp_tool_call" if done => out.push(mcp_result(item)),
        "web_search" if started => out.push(AgentEvent::ToolCall {
            name: "web_search".into(),
            input: str_of(item, "query").unwrap_or_default(),
        }),
        "todo_list" => out.push(AgentEvent::Progress { text: plan(item) }),
        "error" => out.push(AgentEvent::Error {
            message: str_of(item, "message").unwrap_or_default(),
        }),
        "agent_message" | "assistant_message" | "reasoning" | "command_execution"
        | "file_change" | "mcp_tool_call" | "web_search" => out.push(AgentEvent::Progress {
            text: format!("{kind} {}", phase.trim_start_matches("item.")),
        }),
        _ => return None,
    }
    Some(())
}

/// `add`/`update`/`delete` as the readable view's verbs (`▸ Edit src/x.rs`).
fn change_verb(kind: &str) -> String {
    match kind {
        "add" => "Add".into(),
        "update" => "Edit".into(),
        "delete" => "Delete".into(),
        "" => "Edit".into(),
        other => other.to_string(),
    }
}

/// `server.tool`; older builds nest both under `invocation`.
fn mcp_name(item: &Value) -> String {
    let inv = item.get("invocation").unwrap_or(item);
    format!(
        "{}.{}",
        str_of(inv, "server")
            .or_else(|| str_of(item, "server"))
            .unwrap_or_default(),
        str_of(inv, "tool")
            .or_else(|| str_of(item, "tool"))
            .unwrap_or_default()
    )
}

/// A finished MCP call: failed when its status, its error or its result
/// says so; the output is the result's text, else the error's message.
fn mcp_result(item: &Value) -> AgentEvent {
    let result = item.get("result").unwrap_or(&Value::Null);
    let error = item.get("error").filter(|e| !e.is_null());
    let ok = str_of(item, "status").as_deref() != Some("failed")
        && error.is_none()
        && result.get("is_error").and_then(Value::as_bool) != Some(true);
    let text = result
        .get("content")
        .and_then(Value::as_array)
        .map(|parts| parts_text(parts))
        .filter(|t| !t.is_empty())
        .or_else(|| {
            error.and_then(|e| str_of(e, "message").or_else(|| e.as_str().map(String::from)))
        })
        .unwrap_or_default();
    AgentEvent::ToolResult {
        ok,
        output: format!("{}: {}", mcp_name(item), text.trim()),
    }
}

/// The agent's plan: how far it is and the next step.
fn plan(item: &Value) -> String {
    let steps = item
        .get("items")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let done = steps
        .iter()
        .filter(|s| s.get("completed").and_then(Value::as_bool) == Some(true))
        .count();
    let next = steps
        .iter()
        .find(|s| s.get("completed").and_then(Value::as_bool) != Some(true))
        .and_then(|s| str_of(s, "text"));
    match next {
        Some(n) => format!("plan {done}/{}: next {}", steps.len(), one_line(&n, 100)),
        None => format!("plan {done}/{} done", steps.len()),
    }
}
