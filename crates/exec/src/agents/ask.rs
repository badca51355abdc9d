//! Asking a helper agent (reviewer, criteria judge, comparator judge) one
//! question: it runs in an empty scratch directory, never in a candidate's
//! workspace, and its answer text is read from its output. `json_objects`
//! is the one place an agent's JSON answer is pulled out of free text.

use crate::agents::{self, LaunchContext};
use crate::exec::confine::{expand_home, Confinement};
use crate::exec::runner::{self, CommandSpec, Env, Stream};
use rascal_core::config::{AgentConfig, RuntimeKind};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The environment variable carrying a call's nonce to a reviewer or judge
/// process (real CLIs read it from the prompt; scripted ones from here).
pub const REVIEW_NONCE_ENV: &str = "RASCAL_REVIEW_NONCE";

/// Answers above this size are refused (an answer is small).
pub const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// Every top-level JSON object in `text`, in order (objects nested in an
/// object are part of it, not separate).
pub fn json_objects(text: &str) -> Vec<Map<String, Value>> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'{' {
            i += 1;
            continue;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(Value::Object(m))) => {
                i += stream.byte_offset().max(1);
                out.push(m);
            }
            _ => i += 1,
        }
    }
    out
}

/// The top-level JSON objects in `text` that answer with `key` and carry
/// this call's `nonce` as `"nonce"` — the contract every helper agent's
/// answer is held to (reviewers, the criteria judge, the comparator's
/// judge). Objects with `key` but without the nonce are ignored: they can
/// be copied from the diff or the prompt, so they never count. `Err` says
/// why nothing usable was found.
pub fn signed_answers(
    text: &str,
    key: &str,
    nonce: &str,
) -> Result<Vec<Map<String, Value>>, crate::Error> {
    if nonce.len() < 16 {
        return Err(crate::Error::Agent(
            "internal error: no nonce for this call".into(),
        ));
    }
    let answers: Vec<Map<String, Value>> = json_objects(text)
        .into_iter()
        .filter(|o| o.contains_key(key))
        .collect();
    let unsigned = answers.len();
    let signed: Vec<Map<String, Value>> = answers
        .into_iter()
        .filter(|o| o.get("nonce").and_then(Value::as_str) == Some(nonce))
        .collect();
    match (signed.len(), unsigned) {
        (0, 0) => Err(crate::Error::Agent(format!("no JSON answer with `{key}` in the output"))),
        (0, n) => Err(crate::Error::Agent(format!(
            "{n} answer{} with `{key}` without this call's nonce (ignored: an answer copied from the diff or the prompt never counts); the answer must carry `\"nonce\"`",
            if n == 1 { "" } else { "s" }
        ))),
        _ => Ok(signed),
    }
}

/// Where a helper agent (reviewer, judge) runs from: its files go under
/// `dir`; it works in an empty temporary directory outside the repository
/// (removed afterwards) — never in the author's worktree.
#[derive(Debug, Clone)]
pub struct Site {
    pub run: String,
    pub candidate: String,
    /// The candidate's run directory (`.git/rascal/runs/<run>/<candidate>`).
    pub dir: PathBuf,
    pub rascal_exe: PathBuf,
    pub attempt: u32,
    /// Host paths the helper must not see (the user's repository, rascal's
    /// files): it runs in bubblewrap like an author.
    pub hide: Vec<PathBuf>,
    /// How fast a scripted helper's built-in scenario plays.
    pub tempo: rascal_core::config::scenario::Tempo,
    /// More host paths the helper may read (never write): the planner's
    /// copy of the base commit.
    pub read_only: Vec<PathBuf>,
}

/// What a helper agent answered.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The answer text (stdout; for claude/codex the text of their
    /// stream-json messages).
    pub text: Vec<u8>,
    /// Why the run is not a clean answer (could not start, timed out,
    /// exited non-zero).
    pub problem: Option<String>,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub command: String,
    /// The last output lines, for the report.
    pub tail: String,
}

/// Run agent `name` on `prompt` in an empty scratch directory; its prompt,
/// scenario and output log are kept under `dir`. `extra_env` is added to
/// the agent's environment (e.g. the review nonce, for scripted reviewers).
#[allow(clippy::too_many_arguments)]
pub async fn ask(
    name: &str,
    agent_cfg: &AgentConfig,
    prompt: &str,
    extra_env: &[(String, String)],
    dir: &Path,
    site: &Site,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Answer {
    let mut answer = Answer {
        text: Vec::new(),
        problem: None,
        exit_code: None,
        duration_ms: 0,
        command: String::new(),
        tail: String::new(),
    };
    if let Err(e) = std::fs::create_dir_all(dir) {
        answer.problem = Some(format!("could not create {}: {e}", dir.display()));
        return answer;
    }
    let scratch = match tempfile::Builder::new().prefix("rascal-review-").tempdir() {
        Ok(t) => t,
        Err(e) => {
            answer.problem = Some(format!("could not create a scratch directory: {e}"));
            return answer;
        }
    };
    // A helper agent is confined like an author: bubblewrap unless it says
    // `sandbox: none` (or, for rascal's scripted agents, bwrap is missing).
    let confined = agent_cfg.sandbox != Some(rascal_core::config::SandboxKind::None)
        && crate::exec::sandbox::available().is_ok();
    let ctx = LaunchContext {
        run: &site.run,
        candidate: &site.candidate,
        run_dir: dir,
        rascal_exe: &site.rascal_exe,
        attempt: site.attempt,
        sandboxed: confined,
        artifacts: None,
        inputs: None,
        tempo: site.tempo,
        criteria: None,
    };
    let mut inv = match agents::invocation(name, agent_cfg, prompt, &ctx) {
        Ok(inv) => inv,
        Err(e) => {
            answer.problem = Some(format!("could not be prepared: {e}"));
            return answer;
        }
    };
    inv.env.extend(extra_env.iter().cloned());
    answer.command = inv.argv.join(" ");
    let mut spec = CommandSpec::new(inv.argv.clone(), scratch.path().to_path_buf(), timeout);
    spec.env = Env::Only(inv.env.clone());
    let (tx, rx) = crate::exec::runner::log_channel();
    // A reviewer with a network allowlist reaches its API through the
    // same egress proxy as an agent (its decisions land in its log).
    let egress = crate::exec::launch::egress::ProcessEgress::new(
        std::sync::Arc::new(crate::egress::proxy::SystemResolver),
        site.rascal_exe.clone(),
    );
    let proxy = match egress.attach_agent(agent_cfg, name, confined, &tx) {
        Ok(p) => p,
        Err(e) => {
            answer.problem = Some(format!("could not be started: {e}"));
            return answer;
        }
    };
    if confined {
        if let Err(e) = confine(&mut spec, &inv, agent_cfg, site, dir, proxy.as_ref()) {
            answer.problem = Some(format!("could not be sandboxed: {e}"));
            return answer;
        }
    }
    spec.stdin = inv.stdin;
    spec.max_line = MAX_ANSWER_BYTES + 1;
    let collect = tokio::spawn(collect_output(rx));
    let result = runner::run(&spec, Some(tx), cancel).await;
    drop(proxy.map(|p| p.close()));
    let (out, log) = collect.await.unwrap_or_default();
    let _ = std::fs::write(dir.join("output.log"), &log);
    answer.read_exit(result, confined, timeout);
    answer.text = answer_text(agent_cfg.runtime, out);
    answer
}

/// Confine the helper like an author: bubblewrap over its scratch
/// directory (`spec.cwd`), `dir` and its mounts read-only, `site.hide`
/// hidden, its network through the egress proxy when it has one.
fn confine(
    spec: &mut CommandSpec,
    inv: &agents::Invocation,
    agent_cfg: &AgentConfig,
    site: &Site,
    dir: &Path,
    proxy: Option<&crate::exec::launch::egress::SandboxAttached>,
) -> Result<(), crate::Error> {
    let confine = Confinement {
        workspace: spec.cwd.clone(),
        writable: Vec::new(),
        hide: site.hide.clone(),
        read_only: std::iter::once(dir.to_path_buf())
            .chain(site.read_only.iter().cloned())
            .chain(agent_cfg.mounts.iter().map(|m| expand_home(m)))
            .collect(),
        network: agent_cfg.network.as_deref() == Some("host"),
        limits: rascal_core::config::limits::Limits::of(agent_cfg),
    };
    spec.limits = Some(confine.limits);
    let wrapped = match proxy {
        Some(p) => {
            let (argv, env, confine) =
                p.wrap(&site.rascal_exe, &inv.argv, inv.env.clone(), &confine);
            confine.command(&argv, env)
        }
        None => confine.command(&inv.argv, inv.env.clone()),
    };
    let (argv, env) = wrapped?;
    spec.argv = argv;
    spec.env = Env::Only(env);
    Ok(())
}

/// The helper's output: its stdout (the answer) and its whole log, each
/// capped.
async fn collect_output(mut rx: crate::exec::runner::LogRx) -> (Vec<u8>, Vec<u8>) {
    let mut out = Vec::new();
    let mut log = Vec::new();
    while let Some(batch) = rx.recv().await {
        for l in batch {
            if l.stream == Stream::Stdout && out.len() <= MAX_ANSWER_BYTES {
                out.extend_from_slice(l.text.as_bytes());
                out.push(b'\n');
            }
            if log.len() <= 4 * MAX_ANSWER_BYTES {
                log.extend_from_slice(l.text.as_bytes());
                log.push(b'\n');
            }
        }
    }
    (out, log)
}

impl Answer {
    /// How the helper exited: its code, duration and last lines, and why
    /// it is not a clean answer when it is not.
    fn read_exit(
        &mut self,
        result: Result<runner::Outcome, runner::RunError>,
        confined: bool,
        timeout: Duration,
    ) {
        match result {
            Ok(mut o) => {
                if confined {
                    crate::exec::confine::signal_from_status(&mut o.exit);
                }
                self.exit_code = o.exit.code;
                self.duration_ms = o.exit.duration_ms;
                self.tail = o.tail;
                if let Some(p) = o.exit.problem(timeout) {
                    self.problem = Some(p);
                } else if !o.exit.success() {
                    self.problem = Some(format!(
                        "exited with code {}",
                        o.exit.code.map(|c| c.to_string()).unwrap_or("?".into())
                    ));
                }
            }
            Err(e) => self.problem = Some(format!("could not start: {e}")),
        }
    }
}

/// claude, codex and goose print JSON event streams; the answer is the
/// text of their final messages (goose: the last assistant message). Other
/// runtimes answer on stdout as is.
fn answer_text(runtime: RuntimeKind, stdout: Vec<u8>) -> Vec<u8> {
    if !matches!(
        runtime,
        RuntimeKind::Claude | RuntimeKind::Codex | RuntimeKind::Goose
    ) {
        return stdout;
    }
    let text = String::from_utf8_lossy(&stdout);
    let mut out = String::new();
    // goose: the text of the last assistant message (its parts may come in
    // several events carrying the same message id).
    let mut goose_last: Option<(Option<String>, String)> = None;
    for line in text.lines() {
        let Ok(Value::Object(ev)) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if runtime == RuntimeKind::Goose {
            if let Some((id, t)) = goose_assistant_text(&ev) {
                match &mut goose_last {
                    Some((last_id, acc)) if id.is_some() && *last_id == id => acc.push_str(&t),
                    _ => goose_last = Some((id, t)),
                }
            }
            continue;
        }
        // claude: {"type":"result","result":"..."}
        if ev.get("type").and_then(Value::as_str) == Some("result") {
            if let Some(Value::String(s)) = ev.get("result") {
                out.push_str(s);
                out.push('\n');
            }
        }
        // codex: {"type":"item.completed","item":{"type":"agent_message","text":"..."}}
        if let Some(Value::Object(item)) = ev.get("item") {
            if item.get("type").and_then(Value::as_str) == Some("agent_message") {
                if let Some(Value::String(s)) = item.get("text") {
                    out.push_str(s);
                    out.push('\n');
                }
            }
        }
    }
    if let Some((_, t)) = goose_last {
        out = t;
        out.push('\n');
    }
    if out.trim().is_empty() {
        stdout
    } else {
        out.into_bytes()
    }
}

/// goose: {"type":"message","message":{"id":..,"role":"assistant","content":[{"type":"text","text":"..."}]}}
/// → (message id, its text), for an assistant message with text.
fn goose_assistant_text(ev: &Map<String, Value>) -> Option<(Option<String>, String)> {
    if ev.get("type").and_then(Value::as_str) != Some("message") {
        return None;
    }
    let msg = ev.get("message")?;
    if msg.get("role").and_then(Value::as_str) != Some("assistant") {
        return None;
    }
    let text: String = msg
        .get("content")?
        .as_array()?
        .iter()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    if text.is_empty() {
        return None;
    }
    let id = msg.get("id").and_then(Value::as_str).map(String::from);
    Some((id, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goose_answer_is_the_last_assistant_message_of_a_recorded_stream() {
        let stream = include_bytes!("../../tests/fixtures/streams/goose.jsonl").to_vec();
        let got = answer_text(RuntimeKind::Goose, stream);
        assert_eq!(
            String::from_utf8(got).unwrap(),
            "The endpoint is in place.\n"
        );
    }

    #[test]
    fn goose_parts_of_one_message_are_joined_and_tool_calls_are_not_answers() {
        let stream = concat!(
            r#"{"type":"message","message":{"id":"a","role":"assistant","content":[{"type":"text","text":"thinking about it"}]}}"#,
            "\n",
            r#"{"type":"message","message":{"id":"b","role":"assistant","content":[{"type":"text","text":"{\"verdict\": "}]}}"#,
            "\n",
            r#"{"type":"message","message":{"id":"b","role":"assistant","content":[{"type":"text","text":"\"approve\"}"}]}}"#,
            "\n",
            r#"{"type":"message","message":{"id":"c","role":"user","content":[{"type":"text","text":"user text"}]}}"#,
            "\n",
            r#"{"type":"complete","total_tokens":10}"#,
            "\n"
        );
        let got = answer_text(RuntimeKind::Goose, stream.as_bytes().to_vec());
        assert_eq!(
            String::from_utf8(got).unwrap(),
            "{\"verdict\": \"approve\"}\n"
        );
    }
}
