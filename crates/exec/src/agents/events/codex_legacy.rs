//! Codex `exec --json` before 0.44 (removed in openai/codex#4525): a
//! configuration line (`{"model":…,"sandbox":…}`), the prompt
//! (`{"prompt":…}`), then `{"id":…,"msg":{"type":…}}` protocol events —
//! `agent_message`, `agent_reasoning`, `exec_command_begin`/`_end`,
//! `patch_apply_begin`/`_end`, `mcp_tool_call_begin`/`_end`, `token_count`,
//! `error`, `task_complete`. Checked against the capture in
//! `tests/fixtures/agents/codex-legacy-msg.jsonl`.

use super::{compact_input, one_line, parts_text, str_of, u64_of, AgentEvent, Usage};
use serde_json::Value;

/// The events of one line; None for a type this parser does not know.
pub(super) fn parse(v: &Value) -> Option<Vec<AgentEvent>> {
    let Some(msg) = v.get("msg").filter(|m| m.is_object()) else {
        return header(v);
    };
    let mut out = Vec::new();
    match msg.get("type")?.as_str()? {
        "task_started" => out.push(AgentEvent::Progress {
            text: "turn started".into(),
        }),
        "agent_message" => out.push(AgentEvent::Text {
            text: str_of(msg, "message").unwrap_or_default(),
        }),
        "agent_reasoning" => out.push(AgentEvent::Progress {
            text: format!(
                "thinking: {}",
                one_line(&str_of(msg, "text").unwrap_or_default(), 120)
            ),
        }),
        "exec_command_begin" => out.push(AgentEvent::ToolCall {
            name: "shell".into(),
            input: one_line(&argv(msg.get("command")), 120),
        }),
        "exec_command_end" => out.push(command_end(msg)),
        "patch_apply_begin" => out.extend(patch_begin(msg)),
        "patch_apply_end" => {
            let ok = msg.get("success").and_then(Value::as_bool).unwrap_or(false);
            let output = str_of(msg, if ok { "stdout" } else { "stderr" }).unwrap_or_default();
            out.push(AgentEvent::ToolResult { ok, output });
        }
        "mcp_tool_call_begin" => {
            let inv = msg.get("invocation").unwrap_or(&Value::Null);
            out.push(AgentEvent::ToolCall {
                name: format!(
                    "{}.{}",
                    str_of(inv, "server").unwrap_or_default(),
                    str_of(inv, "tool").unwrap_or_default()
                ),
                input: compact_input(inv.get("arguments").unwrap_or(&Value::Null)),
            });
        }
        "mcp_tool_call_end" => out.push(mcp_end(msg)),
        // One response's tokens (later builds: `info.total_token_usage`,
        // the session's running total).
        "token_count" => out.push(token_count(msg)),
        "error" | "stream_error" => out.push(AgentEvent::Error {
            message: str_of(msg, "message").unwrap_or_else(|| "error".into()),
        }),
        "background_event" => out.push(AgentEvent::Progress {
            text: one_line(&str_of(msg, "message").unwrap_or_default(), 200),
        }),
        "task_complete" => out.push(AgentEvent::Final {
            ok: true,
            text: str_of(msg, "last_agent_message").unwrap_or_default(),
        }),
        _ => return None,
    }
    Some(out)
}

/// A command's end: whether it succeeded and what it said.
fn command_end(msg: &Value) -> AgentEvent {
    let ok = match msg.get("exit_code").and_then(Value::as_i64) {
        Some(code) => code == 0,
        None => msg.get("success").and_then(Value::as_bool).unwrap_or(false),
    };
    let said = if ok { "stdout" } else { "stderr" };
    let output = str_of(msg, said)
        .filter(|s| !s.trim().is_empty())
        .or_else(|| str_of(msg, "stdout"))
        .unwrap_or_default();
    AgentEvent::ToolResult { ok, output }
}

/// A patch about to be applied: one edit per file it changes.
fn patch_begin(msg: &Value) -> Vec<AgentEvent> {
    msg.get("changes")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(path, change)| {
            let verb = match change.as_object().and_then(|c| c.keys().next()) {
                Some(k) if k == "add" => "Add",
                Some(k) if k == "delete" => "Delete",
                _ => "Edit",
            };
            AgentEvent::FileEdit {
                path: path.clone(),
                change: verb.into(),
            }
        })
        .collect()
}

/// An MCP tool call's end: its result or error.
fn mcp_end(msg: &Value) -> AgentEvent {
    let result = msg.get("result").unwrap_or(&Value::Null);
    let (ok, body) = match (result.get("Ok"), result.get("Err")) {
        (Some(r), _) => (r.get("isError").and_then(Value::as_bool) != Some(true), r),
        (None, Some(e)) => (false, e),
        _ => (true, result),
    };
    let output = body
        .get("content")
        .and_then(Value::as_array)
        .map(|parts| parts_text(parts))
        .or_else(|| body.as_str().map(String::from))
        .unwrap_or_default();
    AgentEvent::ToolResult { ok, output }
}

/// One response's tokens (later builds: `info.total_token_usage`, the
/// session's running total).
fn token_count(msg: &Value) -> AgentEvent {
    let (u, total) = match msg.get("info").and_then(|i| i.get("total_token_usage")) {
        Some(t) => (t, true),
        None => (msg, false),
    };
    AgentEvent::Usage {
        usage: Usage {
            input_tokens: u64_of(u, "input_tokens"),
            output_tokens: u64_of(u, "output_tokens"),
            cached_tokens: u64_of(u, "cached_input_tokens"),
            cost_usd: None,
        },
        total,
    }
}

/// The two lines before the events: the configuration summary and the
/// prompt. Anything else without `msg` is not this format.
fn header(v: &Value) -> Option<Vec<AgentEvent>> {
    if let Some(prompt) = str_of(v, "prompt") {
        return Some(vec![AgentEvent::Progress {
            text: format!("prompt: {}", one_line(&prompt, 120)),
        }]);
    }
    if v.get("model").is_some() && (v.get("sandbox").is_some() || v.get("provider").is_some()) {
        return Some(vec![AgentEvent::SessionStart {
            model: str_of(v, "model"),
            tools: 0,
        }]);
    }
    None
}

/// A command given as argv, shown as the shell line it runs
/// (`["bash","-lc","ls -1"]` → `ls -1`).
fn argv(cmd: Option<&Value>) -> String {
    let parts: Vec<&str> = cmd
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    match parts.as_slice() {
        [shell, flag, line] if shell.ends_with("sh") && flag.starts_with('-') => line.to_string(),
        _ => parts.join(" "),
    }
}
