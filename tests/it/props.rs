//! Property tests: random and mutated input thrown at the parsers that read
//! what rascal does not control — config files, reviewer and judge answers,
//! agent event streams, text shown on the terminal, and paths judged by
//! the permission globs. The property is at least "no panic", and a real
//! one where it is cheap to state.
//!
//! Each target runs a quick version in the normal suite and a 1M-case
//! version that is ignored: `cargo test --release -- --ignored props`.

use proptest::prelude::*;
use proptest::test_runner::Config as ProptestConfig;
use rascal_core::config::permissions::{compile_globs, fold_path, GlobPattern, PermissionsConfig};
use rascal_core::config::spec::Task;
use rascal_core::config::{Config, RuntimeKind};
use rascal_core::model::changeset::{ChangeSet, FileChange, Operation};
use rascal_core::text::{is_hidden, sanitize};
use rascal_engine::layers::Permissions;
use rascal_exec::agents::ask::json_objects;
use rascal_exec::agents::events::parse_line;
use serde_json::{Map, Value};
use unicode_normalization::UnicodeNormalization;

/// The case count of a target's full run.
const FULL: u32 = 1_000_000;

fn cases(n: u32) -> ProptestConfig {
    ProptestConfig {
        cases: n,
        // Shrinking a 1M-case failure can take long; a few thousand steps
        // find a small example.
        max_shrink_iters: 4096,
        ..ProptestConfig::default()
    }
}

/// One target: a quick test in the suite, `props_full_NAME` ignored.
macro_rules! target {
    ($quick:ident, $full:ident, $n:expr, ($($args:tt)*) $body:block) => {
        proptest! {
            #![proptest_config(cases($n))]
            #[test]
            fn $quick($($args)*) $body
        }
        proptest! {
            #![proptest_config(cases(FULL))]
            #[test]
            #[ignore = "1M cases: cargo test --release -- --ignored props"]
            fn $full($($args)*) $body
        }
    };
}

// ------------------------------------------------------------ input makers

/// Text made of `pieces` and arbitrary characters.
fn soup(pieces: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => proptest::sample::select(pieces).prop_map(str::to_string),
        1 => any::<char>().prop_map(|c| c.to_string()),
    ];
    proptest::collection::vec(piece, 0..max).prop_map(|v| v.concat())
}

/// `seed` changed by a few edits: a piece inserted, a range cut or
/// doubled, a byte-level splice (kept UTF-8).
fn mutated(
    seeds: &'static [&'static str],
    pieces: &'static [&'static str],
) -> impl Strategy<Value = String> {
    let edit = (
        0u8..4,
        any::<proptest::sample::Index>(),
        any::<proptest::sample::Index>(),
        proptest::sample::select(pieces),
    );
    (
        proptest::sample::select(seeds),
        proptest::collection::vec(edit, 1..6),
    )
        .prop_map(|(seed, edits)| {
            let mut s = seed.to_string();
            for (op, a, b, piece) in edits {
                let bounds: Vec<usize> =
                    s.char_indices().map(|(i, _)| i).chain([s.len()]).collect();
                let (mut i, mut j) = (a.get(&bounds), b.get(&bounds));
                if i > j {
                    std::mem::swap(&mut i, &mut j);
                }
                match op {
                    0 => s.insert_str(*i, piece),
                    1 => s.replace_range(*i..*j, ""),
                    2 => {
                        let dup = s[*i..*j].to_string();
                        s.insert_str(*j, &dup);
                    }
                    _ => s.replace_range(*i..*j, piece),
                }
            }
            s
        })
}

// ------------------------------------------------------------ config loader

const YAML_PIECES: &[&str] = &[
    "\n",
    "\n  ",
    "\n    ",
    "  ",
    "- ",
    ": ",
    ":",
    "[",
    "]",
    "{",
    "}",
    ", ",
    "&a ",
    "*a",
    "&b ",
    "*b",
    "'",
    "\"",
    "\\",
    "# c",
    "|\n",
    ">-\n",
    "!!str ",
    "!x ",
    "? ",
    "---\n",
    "...\n",
    "~",
    "null",
    "true",
    "1",
    "0x1f",
    "1e9",
    "-",
    "\t",
    "é",
    "\u{202E}",
    "\u{0}",
    "agents",
    "runtime",
    "claude",
    "command",
    "scripted",
    "scenario",
    "demo-good",
    "name",
    "guardrails",
    "patterns",
    "permissions",
    "denied_paths",
    "allowed_paths",
    "'**/*.rs'",
    "review",
    "reviewers",
    "consensus",
    "criteria",
    "judge",
    "instruction",
    "acceptance_criteria",
    "description",
    "type",
    "check",
    "grep",
    "test",
    "constraints",
    "value",
    "max-lines",
    "no-touch-files",
    "timeout",
    "5m",
    "strategy",
    "mode",
    "compare",
    "n",
    "styles",
    "fg",
    "red",
    "syntax",
    "builtin: secrets",
    "env: [A]",
    "<<: *a",
];

const YAML_SEEDS: &[&str] = &[
    include_str!("../../.rascal/config.yaml"),
    include_str!("../../.rascal/guardrails.yaml"),
    include_str!("../../.rascal/permissions.yaml"),
    include_str!("../../crates/tui/themes/dark.yaml"),
    "agents:\n  a: { runtime: claude, model: x, args: [--v] }\n  b: { runtime: command, command: [sh, -c, 'true'], env: [HOME], timeout: 5m }\nstrategy: { mode: compare, agents: [a, b], n: 2 }\n",
    "review:\n  reviewers: [a, b]\n  consensus: 2\n  on_request_changes: fail\ncriteria:\n  test_command: cargo test {check}\n  judge: a\njudge: b\n",
    "instruction: |\n  add a health endpoint\nacceptance_criteria:\n  - description: it works\n    type: test\n    check: health\n  - { description: no dbg, type: grep, check: '!dbg!' }\nconstraints:\n  - { type: max-lines, value: 100 }\n  - { type: no-touch-files, value: 'migrations/**' }\npermissions:\n  denied_paths: ['.github/**']\n",
    "a: &a [x, y]\nb: *a\nc: &c { k: *a }\nd: [*c, *c]\n",
];

const MARKDOWN_SEEDS: &[&str] = &[
    "Add a health endpoint.\n\n## Acceptance Criteria\n- [ ] GET /health returns 200 `test: health_ok`\n- [ ] no dbg `grep: !dbg!`\n- [x] docs updated\n\n## Constraints\n- no new dependencies\n- keep it small `max-lines: 80`\n- `no-touch-files: migrations/**`\n",
];

/// Every config file kind, from one text; none may panic, and an error
/// names its file and a line inside the text.
fn load_every_kind(text: &str) {
    // YAML breaks lines at \r too (and at NEL, LS, PS), `str::lines` does not.
    let lines = text
        .chars()
        .filter(|c| matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}'))
        .count()
        + 2;
    let located = |e: &rascal_core::config::ConfigError, file: &str| {
        assert!(e.file.starts_with(file), "{} is not {file}", e.file);
        if let Some(l) = e.line {
            assert!(l <= lines, "line {l} of a {lines}-line text: {e}");
        }
    };
    let agents = Config::from_texts(
        Some("agents:\n  a: { runtime: claude }\n  b: { runtime: codex }\n"),
        None,
        None,
    )
    .expect("agents");
    for (kind, r) in [
        (
            ".rascal/config.yaml",
            Config::from_texts(Some(text), None, None).err(),
        ),
        (
            ".rascal/guardrails.yaml",
            Config::from_texts(None, Some(text), None).err(),
        ),
        (
            ".rascal/permissions.yaml",
            Config::from_texts(None, None, Some(text)).err(),
        ),
        (
            ".rascal/verification.yaml",
            agents.clone().with_verification(Some(text)).err(),
        ),
        (
            ".rascal/specs/x.yaml",
            Task::from_yaml(".rascal/specs/x.yaml", text).err(),
        ),
        ("issue.md", Task::from_markdown("issue.md", text).err()),
    ] {
        if let Some(e) = r {
            located(&e, kind);
        }
    }
    let _ = PermissionsConfig::from_yaml_file(text);
    let _ = rascal_core::config::theme::parse(text.as_bytes());
}

/// Found by the 1M run: a text whose lines break at `\r`.
#[test]
fn config_errors_count_lines_as_yaml_does() {
    load_every_kind("'\r  \r  |\n");
}

target!(config_loader_takes_random_text, props_full_config_loader_random, 4_000, (
    text in soup(YAML_PIECES, 60)
) {
    load_every_kind(&text);
});

target!(config_loader_takes_mutated_files, props_full_config_loader_mutated, 6_000, (
    text in prop_oneof![mutated(YAML_SEEDS, YAML_PIECES), mutated(MARKDOWN_SEEDS, YAML_PIECES)]
) {
    load_every_kind(&text);
});

// ------------------------------------------------------------ answers

const JSON_PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    "\"verdict\"",
    "\"approve\"",
    "\"request_changes\"",
    "\"nonce\"",
    "\"0123456789abcdef0123\"",
    "\"issues\"",
    "\"pass\"",
    "true",
    "false",
    "\"reason\"",
    "\"pick\"",
    "\"c1\"",
    "null",
    "1",
    "-0.5e3",
    "\\",
    "\\u00",
    "\\ud800",
    " ",
    "\n",
    "```json\n",
    "```",
    "é",
    "\u{0}",
];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[a-z{}\"\\\\ é]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{0,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = Map<String, Value>> {
    proptest::collection::btree_map("[a-z\"{]{0,6}", json_value(), 0..4)
        .prop_map(|m| m.into_iter().collect())
}

/// Every object `json_objects` returns is one that starts at a `{` of the
/// text: it never makes one up.
fn objects_come_from_the_text(text: &str) {
    for m in json_objects(text) {
        let found = text.match_indices('{').any(|(i, _)| {
            serde_json::Deserializer::from_str(&text[i..])
                .into_iter::<Value>()
                .next()
                .and_then(Result::ok)
                == Some(Value::Object(m.clone()))
        });
        assert!(found, "{m:?} is not in {text:?}");
    }
    let nonce = "0123456789abcdef0123";
    let _ = rascal_engine::layers::parse_review(text.as_bytes(), nonce);
    let _ = rascal_engine::layers::parse_judge(text.as_bytes(), nonce);
    let _ = rascal_engine::layers::parse_pick(text.as_bytes(), &["c1".into(), "c2".into()], nonce);
}

target!(answer_extractor_invents_nothing, props_full_answer_extractor, 10_000, (
    text in soup(JSON_PIECES, 80)
) {
    objects_come_from_the_text(&text);
});

target!(answer_extractor_finds_every_object_in_noise, props_full_answer_extractor_noise, 10_000, (
    parts in proptest::collection::vec(("[^{]{0,12}", json_object()), 0..5),
    tail in "[^{]{0,12}",
) {
    let mut text = String::new();
    for (noise, obj) in &parts {
        text.push_str(noise);
        text.push_str(&Value::Object(obj.clone()).to_string());
    }
    text.push_str(&tail);
    let want: Vec<_> = parts.into_iter().map(|(_, o)| o).collect();
    prop_assert_eq!(json_objects(&text), want);
});

// ------------------------------------------------------------ agent streams

/// The recorded streams, one line each.
fn stream_seeds() -> &'static [&'static str] {
    static LINES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    LINES.get_or_init(|| {
        [
            include_str!("../../crates/exec/tests/fixtures/streams/claude.jsonl"),
            include_str!("../../crates/exec/tests/fixtures/streams/codex.jsonl"),
            include_str!("../../crates/exec/tests/fixtures/streams/goose.jsonl"),
        ]
        .iter()
        .flat_map(|f| f.lines())
        .collect()
    })
}

const STREAM_KEYS: &[&str] = &[
    "type",
    "subtype",
    "message",
    "content",
    "text",
    "name",
    "input",
    "id",
    "role",
    "usage",
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "total_cost_usd",
    "result",
    "is_error",
    "tool_use",
    "tool_result",
    "item",
    "command",
    "aggregated_output",
    "exit_code",
    "status",
    "changes",
    "path",
    "kind",
    "toolRequest",
    "toolResponse",
    "toolCall",
    "value",
    "arguments",
    "model",
    "tools",
    "error",
    "thread_id",
    "file_path",
];

const STREAM_TYPES: &[&str] = &[
    "system",
    "init",
    "assistant",
    "user",
    "result",
    "text",
    "tool_use",
    "tool_result",
    "thread.started",
    "turn.started",
    "turn.completed",
    "turn.failed",
    "item.started",
    "item.completed",
    "reasoning",
    "command_execution",
    "agent_message",
    "file_change",
    "error",
    "message",
    "toolRequest",
    "toolResponse",
    "finish",
    "notification",
];

/// JSON shaped like the runtimes' events: their keys and type names, any
/// values.
fn stream_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        proptest::sample::select(STREAM_TYPES).prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::String),
        "[\u{0}-\u{1f}\u{202e}\u{200b}a]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 40, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((proptest::sample::select(STREAM_KEYS), inner), 0..6)
                .prop_map(|kv| {
                    Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                }),
        ]
    })
}

fn parse_every_runtime(line: &str) {
    for rt in [RuntimeKind::Claude, RuntimeKind::Codex, RuntimeKind::Goose] {
        for ev in parse_line(rt, line).unwrap_or_default() {
            let shown = sanitize(&ev.display());
            assert!(
                !shown.chars().any(|c| c.is_control() && c != '\t'),
                "{shown:?}"
            );
        }
    }
}

target!(stream_parsers_take_event_shaped_json, props_full_stream_parsers_json, 10_000, (
    v in stream_value()
) {
    parse_every_runtime(&v.to_string());
});

target!(stream_parsers_take_mutated_lines, props_full_stream_parsers_mutated, 10_000, (
    text in mutated(stream_seeds(), JSON_PIECES)
) {
    for line in text.lines() {
        parse_every_runtime(line);
    }
});

// ------------------------------------------------------------ terminal text

const TERM_PIECES: &[&str] = &[
    "\u{1b}[",
    "\u{1b}]",
    "\u{1b}",
    "\u{9b}",
    "31",
    "38;5;",
    "48;2;1;2;3",
    ";",
    "m",
    "H",
    "J",
    "0;title\u{7}",
    "\u{7}",
    "\r",
    "\n",
    "\t",
    "\u{0}",
    "\u{7f}",
    "\u{202e}",
    "\u{2066}",
    "\u{200b}",
    "\u{200d}",
    "\u{feff}",
    "\u{61c}",
    "\u{2060}",
    "é",
    "日本",
    "👍🏽",
    "a",
];

fn shows_nothing_raw(s: &str) -> bool {
    !s.chars()
        .any(|c| (c.is_control() && c != '\t') || is_hidden(c))
}

target!(sanitiser_leaves_no_control_or_hidden_character, props_full_sanitiser, 10_000, (
    s in soup(TERM_PIECES, 40)
) {
    let out = sanitize(&s);
    prop_assert!(shows_nothing_raw(&out), "{:?} → {:?}", s, out);
    prop_assert_eq!(sanitize(&out), out.clone(), "sanitising twice changes nothing");
    if shows_nothing_raw(&s) {
        prop_assert_eq!(out, s, "clean text is left alone");
    }
});

target!(log_view_lines_carry_no_escape, props_full_log_view, 10_000, (
    s in soup(TERM_PIECES, 40),
    color in any::<bool>(),
) {
    let line = rascal_tui::ansi::parse_line(&s, color);
    let shown: String = line.spans.iter().map(|sp| sp.content.as_ref()).collect();
    prop_assert!(
        !shown.chars().any(|c| c.is_control() || is_hidden(c)),
        "{:?} → {:?}", s, shown
    );
});

// ------------------------------------------------------------ what leaves rascal

/// Escapes and controls of every family, and the Markdown, URI and
/// bracketed-paste pieces the boundaries must neutralise.
const OUT_PIECES: &[&str] = &[
    "\u{1b}[",
    "\u{1b}]",
    "\u{1b}P",
    "\u{1b}_",
    "\u{1b}^",
    "\u{1b}X",
    "\u{1b}\\",
    "\u{1b}",
    "\u{9b}",
    "\u{9d}",
    "\u{90}",
    "\u{9f}",
    "\u{85}",
    "\u{80}",
    "\u{7}",
    "\u{0}",
    "\r",
    "\n",
    "\t",
    "\u{7f}",
    "\u{202e}",
    "\u{2066}",
    "\u{200b}",
    "\u{feff}",
    "\u{61c}",
    "52;c;",
    "8;;",
    "0;title",
    "[201~",
    "[200~",
    "2J",
    "<!--",
    "-->",
    "<img src=x>",
    "@someone",
    "a@b",
    "](",
    "![",
    "[",
    "]",
    "(",
    "`",
    "```",
    "~~~",
    "#",
    "123",
    "GH-",
    "'",
    "$(",
    "!",
    "- ",
    "1. ",
    "|",
    "$",
    "&#x202E;",
    "\\",
    "%2e",
    "..",
    "/",
    "?",
    "Rascal-Run: ",
    "feat: ",
    "é",
    "日本",
    "a",
];

/// Random text: the pieces above, any characters, or any bytes read as
/// UTF-8 the way rascal reads a file (lossily).
fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => soup(OUT_PIECES, 40),
        1 => proptest::collection::vec(any::<u8>(), 0..120)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]
}

/// No control or hidden character as itself, line feeds (and tabs) aside
/// when `lines` (`tabs`) says they may stay.
fn inert(s: &str, lines: bool, tabs: bool) -> bool {
    !s.chars().any(|c| {
        !(lines && c == '\n' || tabs && c == '\t') && rascal_core::text::inert::is_unsafe(c)
    })
}

/// A `](` or `][` whose `]` is not backslash-escaped (an odd number of
/// backslashes before it escapes it).
fn live_link(md: &str) -> bool {
    let b = md.as_bytes();
    (0..b.len().saturating_sub(1)).any(|i| {
        b[i] == b']'
            && matches!(b[i + 1], b'(' | b'[')
            && b[..i].iter().rev().take_while(|c| **c == b'\\').count() % 2 == 0
    })
}

target!(every_boundary_lets_no_escape_out, props_full_every_boundary, 6_000, (
    s in hostile_text(),
    t in hostile_text(),
) {
    use rascal_core::text::inert::*;
    // The terminal, one line and many; JSON documents.
    prop_assert!(inert(&sanitize(&s), false, true));
    prop_assert!(inert(&terminal(&s), true, true));
    let doc = serde_json::to_string_pretty(&serde_json::json!({ "s": s })).unwrap();
    let safe = json(&doc);
    prop_assert!(inert(&safe, true, false), "{:?}", safe);
    let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
    prop_assert_eq!(back["s"].as_str().unwrap(), s.as_str(), "JSON stays the same document");
    // git.
    let title = commit_title(&s);
    prop_assert!(inert(&title, false, false) && !title.contains('\n'), "{:?}", title);
    prop_assert!(rascal_core::text::width(&title) <= TITLE_COLUMNS);
    let body = commit_body(&s);
    prop_assert!(inert(&body, true, true), "{:?}", body);
    let trailer = regex::Regex::new(r"(?i)^\s*rascal-[a-z0-9-]*\s*:").unwrap();
    prop_assert!(!body.lines().any(|l| trailer.is_match(l)), "{:?}", body);
    prop_assert!(inert(&commit_trailer(&s), false, false));
    let summary = rascal_core::model::summary::RunSummary::new();
    let msg = rascal_engine::finalize::commit_message(&summary, &t, Some(&format!("feat: {s}\n\n{t}")));
    prop_assert!(inert(&msg, true, true), "{:?}", msg);
    prop_assert_eq!(msg.lines().filter(|l| trailer.is_match(l)).count(), 2, "{:?}", msg);
    // Markdown.
    let inline = markdown_inline(&s);
    prop_assert!(inert(&inline, false, true) && !inline.contains('\n'), "{:?}", inline);
    prop_assert!(!inline.contains('<'), "{:?}", inline);
    prop_assert!(!live_link(&inline), "a live link or image in {:?}", inline);
    let chars: Vec<char> = inline.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if *c == '@' {
            let after: String = chars[i + 1..].iter().take(7).collect();
            let word_before = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
            prop_assert!(word_before || after == "&#8203;", "a live mention in {:?}", inline);
        }
    }
    // A shell word is one word, read back as the text it quotes.
    let word = shell_word(&s);
    let shown: String = s.split('\n').map(sanitize).collect::<Vec<_>>().join("\n");
    prop_assert_eq!(shlex::split(&word), Some(vec![shown]), "{:?}", word);
    prop_assert!(word.starts_with('\'') || !word.contains(['$', '`', '"', '\\', '!', ' ']), "{:?}", word);
    let reference = regex::Regex::new(r"(?i)(^|[^&])#[0-9]|gh-[0-9]").unwrap();
    prop_assert!(!reference.is_match(&inline), "a live issue reference in {:?}", inline);
    let lines = markdown_lines(&s);
    prop_assert!(inert(&lines, true, true), "{:?}", lines);
    prop_assert!(!lines.contains('<'));
    let quoted = markdown_quote(&s, 20);
    prop_assert!(inert(&quoted, true, true), "{:?}", quoted);
    // The fence opens on the first line and only the fence rascal wrote
    // closes it.
    let ql: Vec<&str> = quoted.lines().collect();
    let fence = ql[0].trim_end_matches("text");
    prop_assert!(fence.len() >= 3 && fence.chars().all(|c| c == '`'));
    let close = ql[1..]
        .iter()
        .position(|l| {
            let l = l.trim();
            l.len() >= fence.len() && l.chars().all(|c| c == '`')
        })
        .map(|i| i + 1);
    let shown = s.lines().count().clamp(1, 20);
    prop_assert_eq!(close, Some(shown + 1), "{:?}", quoted);
    let sealed = markdown_seal(&format!("{lines}\n{quoted}"));
    prop_assert!(inert(&sealed, true, true));
    // SARIF.
    if let Some(uri) = sarif_uri(&s) {
        prop_assert!(uri.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~%/".contains(&b)), "{:?}", uri);
        let decoded: Vec<String> = uri.split('/').map(|seg| {
            let mut out = Vec::new();
            let b = seg.as_bytes();
            let mut i = 0;
            while i < b.len() {
                if b[i] == b'%' {
                    out.push(u8::from_str_radix(&seg[i + 1..i + 3], 16).unwrap());
                    i += 3;
                } else {
                    out.push(b[i]);
                    i += 1;
                }
            }
            String::from_utf8(out).unwrap()
        }).collect();
        prop_assert!(!decoded.iter().any(|seg| seg == ".." || seg == "." || seg.is_empty()));
        prop_assert_eq!(decoded.join("/"), s.clone(), "the URI names the same path");
    }
    prop_assert!(inert(&sarif_text(&s), true, true));
    // Notifications, OSC strings, the clipboard, links.
    let env = env_value(&s);
    prop_assert!(inert(&env, false, false) && !env.contains('\n'), "{:?}", env);
    let osc = osc_text(&s, 200);
    prop_assert!(inert(&osc, false, false) && !osc.contains(';'), "{:?}", osc);
    let clip = clipboard(&s);
    prop_assert!(inert(&clip, true, true) && !clip.contains("\u{1b}[201~"), "{:?}", clip);
    let link = osc8_link(&s, &t);
    let inner = link
        .strip_prefix("\u{1b}]8;;")
        .and_then(|l| l.strip_suffix("\u{1b}]8;;\u{1b}\\"))
        .expect("rascal's own framing");
    let (uri, text) = inner.split_once("\u{1b}\\").expect("one separator");
    prop_assert!(inert(uri, false, false) && inert(text, false, false), "{:?}", link);
    prop_assert!(uri.bytes().all(|b| b.is_ascii_graphic()), "{:?}", uri);
});

// ------------------------------------------------------------ path globs

const GLOB_PIECES: &[&str] = &[
    "a", "B", "é", "e\u{301}", "É", "ß", "/", "*", "**", "?", "[", "]", "[!", "{", "}", ",", ".",
    "..", "\\", "-", "src", ".GitHub", "ǅ", "İ", " ",
];

const PATH_PIECES: &[&str] = &[
    "a", "b", "B", "é", "e\u{301}", "É", "E\u{301}", "/", ".", "src", "SRC", ".github", ".GitHub",
    "x.rs", "X.RS", "ǅ", "ß",
];

/// Swap the case of ASCII letters only: unlike full Unicode case mapping,
/// folding undoes it exactly.
fn ascii_swapcase(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_lowercase() {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

fn rules(p: &Permissions, path: &str) -> Vec<String> {
    let mut cs = ChangeSet::default();
    cs.files.push(FileChange::new(path, Operation::Modify));
    let mut r: Vec<String> = p.check(&cs).into_iter().map(|i| i.rule).collect();
    r.sort();
    r
}

/// Random globs, kept when valid; a fixed one when none is.
fn globs_of(raw: Vec<String>) -> Vec<GlobPattern> {
    let mut globs: Vec<GlobPattern> = raw
        .into_iter()
        .filter_map(|g| GlobPattern::try_from(g).ok())
        .collect();
    if globs.is_empty() {
        // Most random globs are invalid; test the matcher all the same.
        globs.push(GlobPattern::try_from("**/é*/B?").expect("a valid glob"));
    }
    globs
}

target!(path_globs_ignore_case_and_normal_form, props_full_path_globs, 10_000, (
    raw in proptest::collection::vec(soup(GLOB_PIECES, 8), 1..4),
    path in soup(PATH_PIECES, 10),
) {
    let globs = globs_of(raw);
    let Ok(set) = compile_globs(&globs, false) else { return Ok(()) };
    let hit = |p: &str| set.is_match(fold_path(p, false).as_ref());
    let nfd: String = path.nfd().collect();
    prop_assert_eq!(hit(&path), hit(&nfd), "NFC vs NFD of {:?}", path);
    prop_assert_eq!(hit(&path), hit(&ascii_swapcase(&path)), "case of {:?}", path);
});

// The whole permissions layer compiles its own sets (self-protection
// included), which is slow in a debug build: fewer cases in the suite,
// each with several paths.
target!(permission_layer_ignores_case_and_normal_form, props_full_permission_layer, 4_000, (
    raw in proptest::collection::vec(soup(GLOB_PIECES, 8), 1..4),
    paths in proptest::collection::vec(soup(PATH_PIECES, 10), 1..6),
) {
    let cfg = PermissionsConfig { denied_paths: globs_of(raw), ..PermissionsConfig::default() };
    let layer = Permissions::compile(&cfg).expect("valid globs compile");
    for path in &paths {
        let base = rules(&layer, path);
        let nfd: String = path.nfd().collect();
        prop_assert_eq!(&base, &rules(&layer, &nfd), "NFC vs NFD of {:?}", path);
        prop_assert_eq!(&base, &rules(&layer, &ascii_swapcase(path)), "case of {:?}", path);
    }
});
