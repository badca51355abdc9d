//! Scripted agents: deterministic "agents" that play a list of steps (print,
//! write, delete, rename, chmod, symlink, sleep, report usage, declare the
//! task impossible, exit) in their worktree.
//! They run as `rascal __scripted-agent FILE` through the real launcher, so
//! the demo and the tests exercise the same path as real agents, with no API
//! key. Built-in scenarios drive `rascal demo`.

use std::io::Write;
use std::path::Path;

/// The hidden subcommand that plays a scenario file.
pub(crate) const SUBCOMMAND: &str = "__scripted-agent";
#[cfg(test)]
use rascal_core::config::scenario::BUILTIN_NAMES;
pub use rascal_core::config::scenario::{Step, Tempo};

/// A reviewer's JSON verdict, fenced as a model would print it, echoing
/// the review's nonce (`{nonce}` is replaced when played).
fn verdict(decision: &str, issues: &str) -> Step {
    say(&format!(
        "```json\n{{\"nonce\": \"{NONCE_PLACEHOLDER}\", \"verdict\": \"{decision}\", \"issues\": [{issues}]}}\n```"
    ))
}

/// In a `say` step, replaced by `$RASCAL_REVIEW_NONCE` (set for reviewers
/// and judges only): how a scripted reviewer or judge echoes the nonce.
pub(crate) const NONCE_PLACEHOLDER: &str = "{nonce}";

/// `text` with the review nonce filled in (unchanged outside a review).
fn with_nonce(text: &str) -> std::borrow::Cow<'_, str> {
    match std::env::var(crate::agents::ask::REVIEW_NONCE_ENV) {
        Ok(n) if text.contains(NONCE_PLACEHOLDER) => text.replace(NONCE_PLACEHOLDER, &n).into(),
        _ => text.into(),
    }
}

const SHOUT_ISSUE: &str = r#"{"severity": "major", "location": "src/lib.rs:9", "description": "shout() is not covered by a test of its own"}"#;

const GOOD_LIB: &str = include_str!("scripted/good_lib.rs.txt");

/// `shout` upper-casing ASCII letters only: right for "Ada", not for
/// "Straße" — a candidate no test of either author tells from `GOOD_LIB`
/// (the contested demo's second author), with a test of its own.
fn ascii_lib() -> String {
    GOOD_LIB
        .replace(
            "greet(name).to_uppercase()",
            "greet(name).to_ascii_uppercase()",
        )
        .replace(
            "fn shouts() {\n        assert_eq!(shout(\"Ada\"), \"HELLO, ADA!\");",
            "fn shouts_a_name() {\n        assert_eq!(shout(\"Grace\"), \"HELLO, GRACE!\");",
        )
}

/// `shout` without a test of its own: what a reviewer should send back.
const UNTESTED_LIB: &str = include_str!("scripted/untested_lib.rs.txt");

const BROKEN_LIB: &str = include_str!("scripted/broken_lib.rs.txt");

/// `shout` added and the test module gone: the `greets` test it could not
/// be bothered to keep is deleted with it.
const LAZY_LIB: &str = include_str!("scripted/lazy_lib.rs.txt");

fn say(t: &str) -> Step {
    Step::Say { text: t.into() }
}

fn sleep(ms: u64) -> Step {
    Step::Sleep { ms }
}

/// The steps of a built-in scenario, played fast.
#[cfg(test)]
fn builtin(name: &str) -> Option<Vec<Step>> {
    builtin_at(name, Tempo::Fast)
}

/// The steps of a built-in scenario at `tempo`: its beats (pauses that
/// only a watcher needs) are left out when fast.
pub fn builtin_at(name: &str, tempo: Tempo) -> Option<Vec<Step>> {
    let beat = |ms: u64| match tempo {
        Tempo::Fast => sleep(0),
        Tempo::Watchable => sleep(ms),
    };
    let steps = author_demo(name, &beat)
        .or_else(|| helper_scenario(name, &beat))
        .or_else(|| test_scenario(name))?;
    Some(without_empty_beats(steps))
}

/// The author demos (`demo-*`, `first-run`): a change that passes, fails,
/// is fixed on feedback, cheats or touches what it may not; `beat` is a
/// pause only a watcher needs.
fn author_demo(name: &str, beat: &dyn Fn(u64) -> Step) -> Option<Vec<Step>> {
    Some(match name {
        "demo-good" => demo_good(beat),
        "demo-fix-on-feedback" => demo_fix_on_feedback(beat),
        "demo-ascii" => demo_ascii(beat),
        "demo-broken" => demo_broken(beat),
        "demo-lazy" => demo_lazy(beat),
        "demo-denied" => demo_denied(beat),
        FIRST_RUN => first_run(beat),
        _ => return None,
    })
}

/// The change that passes: `shout` with a test of its own.
fn demo_good(beat: &dyn Fn(u64) -> Step) -> Vec<Step> {
    vec![
        say("reading src/lib.rs"),
        sleep(300),
        beat(1200),
        say("plan: add `shout` next to `greet`, with a test"),
        sleep(300),
        beat(1200),
        Step::Write {
            path: "src/lib.rs".into(),
            content: GOOD_LIB.into(),
        },
        say("▸ Edit src/lib.rs"),
        sleep(200),
        beat(800),
        say("done: added shout() and a test"),
    ]
}

/// A first attempt without a test, fixed on the reviewer's feedback.
fn demo_fix_on_feedback(beat: &dyn Fn(u64) -> Step) -> Vec<Step> {
    vec![
        say("reading src/lib.rs"),
        sleep(200),
        beat(1400),
        Step::When {
            attempt: 1,
            then: vec![
                say("plan: add `shout` next to `greet`"),
                beat(1400),
                Step::Write {
                    path: "src/lib.rs".into(),
                    content: UNTESTED_LIB.into(),
                },
                say("▸ Edit src/lib.rs"),
                beat(900),
                say("done: added shout()"),
            ],
            otherwise: vec![
                say("reading the feedback: shout() needs its own test"),
                beat(1200),
                Step::Write {
                    path: "src/lib.rs".into(),
                    content: GOOD_LIB.into(),
                },
                say("▸ Edit src/lib.rs"),
                beat(700),
                say("done: added a test for shout()"),
            ],
        },
    ]
}

/// A plausible `shout` that upper-cases ASCII only, with a test of its own.
fn demo_ascii(beat: &dyn Fn(u64) -> Step) -> Vec<Step> {
    vec![
        say("reading src/lib.rs"),
        sleep(250),
        beat(1500),
        say("plan: shout() upper-cases greet(); ASCII is enough for names"),
        beat(1100),
        Step::Write {
            path: "src/lib.rs".into(),
            content: ascii_lib(),
        },
        say("▸ Edit src/lib.rs"),
        sleep(150),
        beat(700),
        say("done: added shout() and a test"),
    ]
}

/// A change that does not build.
fn demo_broken(beat: &dyn Fn(u64) -> Step) -> Vec<Step> {
    vec![
        say("reading src/lib.rs"),
        sleep(400),
        beat(1600),
        say("plan: shout() is greet() in upper case; no need to build"),
        beat(1000),
        Step::Write {
            path: "src/lib.rs".into(),
            content: BROKEN_LIB.into(),
        },
        say("▸ Edit src/lib.rs"),
        sleep(200),
        beat(600),
        say("done (did not run the build)"),
    ]
}

/// A change that deletes the tests in its way.
fn demo_lazy(beat: &dyn Fn(u64) -> Step) -> Vec<Step> {
    vec![
        say("reading src/lib.rs"),
        sleep(250),
        beat(900),
        say("the tests are in the way; removing them so everything is green"),
        beat(700),
        Step::Write {
            path: "src/lib.rs".into(),
            content: LAZY_LIB.into(),
        },
        say("▸ Edit src/lib.rs"),
        sleep(150),
        beat(400),
        say("done: all tests pass"),
    ]
}

/// A change that touches the CI and rascal's own guardrails.
fn demo_denied(beat: &dyn Fn(u64) -> Step) -> Vec<Step> {
    vec![
        say("reading src/lib.rs and the CI setup"),
        sleep(350),
        beat(2200),
        Step::Write {
            path: "src/lib.rs".into(),
            content: GOOD_LIB.into(),
        },
        say("▸ Edit src/lib.rs"),
        beat(1200),
        Step::Write {
            path: ".github/workflows/ci.yml".into(),
            content: "on: push\njobs: {}\n".into(),
        },
        say("▸ Edit .github/workflows/ci.yml (skipping CI to go faster)"),
        beat(1000),
        Step::Write {
            path: ".rascal/guardrails.yaml".into(),
            content: "guardrails: []\n".into(),
        },
        say("▸ Edit .rascal/guardrails.yaml (no checks, please)"),
        beat(500),
        say("done"),
    ]
}

/// The first run: one harmless line added to a note.
fn first_run(beat: &dyn Fn(u64) -> Step) -> Vec<Step> {
    vec![
        say("scripted agent (no model, no API key): one small, harmless change, to watch it go through every layer"),
        beat(800),
        Step::Append {
            path: FIRST_RUN_NOTE.into(),
            content: "- rascal's scripted agent added this line to show a change going through the verification layers; safe to delete.\n".into(),
        },
        say(&format!("▸ Edit {FIRST_RUN_NOTE}")),
        say(&format!("done: added a line to {FIRST_RUN_NOTE}; nothing else changed")),
    ]
}

/// The reviewer and judge scenarios.
fn helper_scenario(name: &str, beat: &dyn Fn(u64) -> Step) -> Option<Vec<Step>> {
    Some(match name {
        "review-approve" => vec![
            say("Read the task and the diff; hunting for problems."),
            beat(1500),
            say("Nothing blocking found."),
            verdict("approve", ""),
        ],
        "review-request-once" => vec![
            say("Read the task and the diff; hunting for problems."),
            beat(1500),
            Step::When {
                attempt: 1,
                then: vec![verdict("request_changes", SHOUT_ISSUE)],
                otherwise: vec![say("The earlier problem is fixed."), verdict("approve", "")],
            },
        ],
        "review-reject" => vec![
            say("Read the task and the diff; hunting for problems."),
            beat(1500),
            verdict("request_changes", SHOUT_ISSUE),
        ],
        "review-garbled" => vec![
            say("Looks great to me, ship it!"),
            say("{\"verdict\": \"approve\", \"issues\": ["),
        ],
        "review-hang" => vec![say("reviewing very carefully…"), sleep(24 * 3600 * 1000)],
        "probe-shout" => vec![
            say("Reading both changes: each makes shout() upper-case greet()."),
            beat(1200),
            say(&probe_shout()),
        ],
        "judge-pass" => vec![say(
            r#"{"nonce": "{nonce}", "pass": true, "reason": "the change does what the criterion asks"}"#,
        )],
        "judge-fail" => vec![say(
            r#"{"nonce": "{nonce}", "pass": false, "reason": "the criterion is not met by the diff"}"#,
        )],
        _ => return None,
    })
}

/// The contested demo's discriminator: a probe (an example of the demo's
/// crate, run with cargo) that calls `shout` on names of its choosing and
/// prints each output in the form rascal reads.
fn probe_shout() -> String {
    let probe = "//! A probe: shout() on names of the discriminator's choosing.\n\nfn main() {\n    for name in [\"Ada\", \"Straße\", \"Zoë\"] {\n        println!(\"PROBE {nonce} shout({name:?}) => {:?}\", greeter::shout(name));\n    }\n}\n";
    serde_json::json!({
        "nonce": NONCE_PLACEHOLDER,
        "file": "examples/probe.rs",
        "content": probe,
        "command": ["cargo", "run", "--offline", "--quiet", "--example", "probe"],
    })
    .to_string()
}

/// Scenarios for rascal's own tests: an agent that hangs, floods its
/// output, or does nothing.
fn test_scenario(name: &str) -> Option<Vec<Step>> {
    Some(match name {
        "hang" => vec![say("thinking very hard…"), sleep(24 * 3600 * 1000)],
        "noisy" => vec![
            say("about to print garbage"),
            Step::Garbage { bytes: 4096 },
            Step::LongLine {
                bytes: 10 * 1024 * 1024,
            },
            Step::Write {
                path: "NOTES.md".into(),
                content: "noise\n".into(),
            },
            say("still alive"),
        ],
        "nothing" => vec![say("nothing to do")],
        _ => return None,
    })
}

/// The built-in scenario `rascal init` gives its scripted agent: it adds
/// one line to a note under `docs/`, which passes any repository's checks.
pub const FIRST_RUN: &str = "first-run";

/// The file the `first-run` scenario adds its line to.
pub const FIRST_RUN_NOTE: &str = "docs/rascal-first-run.md";

/// `steps` without the zero-length pauses a fast tempo leaves.
fn without_empty_beats(steps: Vec<Step>) -> Vec<Step> {
    steps
        .into_iter()
        .filter(|s| *s != Step::Sleep { ms: 0 })
        .map(|s| match s {
            Step::When {
                attempt,
                then,
                otherwise,
            } => Step::When {
                attempt,
                then: without_empty_beats(then),
                otherwise: without_empty_beats(otherwise),
            },
            s => s,
        })
        .collect()
}

/// The line Claude Code's `stream-json` ends a session with: its final
/// result, with the session's tokens and cost.
pub(crate) fn claude_result(input_tokens: u64, output_tokens: u64, usd: Option<f64>) -> String {
    let mut line = serde_json::json!({
        "type": "result",
        "subtype": "success",
        "is_error": false,
        "result": "",
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    });
    if let Some(c) = usd {
        line["total_cost_usd"] = serde_json::json!(c);
    }
    line.to_string()
}

/// Where a step's `path` is: in the workspace `dir`, or under the
/// artifacts directory when it starts with `$RASCAL_ARTIFACTS_DIR/`
/// (how a scenario leaves a commit message or PR body, like a real agent).
fn place(dir: &Path, path: &str) -> std::path::PathBuf {
    let var = format!("${}/", crate::agents::ARTIFACTS_ENV);
    match (
        path.strip_prefix(&var),
        std::env::var_os(crate::agents::ARTIFACTS_ENV),
    ) {
        (Some(rest), Some(artifacts)) => Path::new(&artifacts).join(rest),
        _ => dir.join(path),
    }
}

/// The attempt this agent plays ($RASCAL_ATTEMPT; 1 when unset).
fn current_attempt() -> u32 {
    std::env::var("RASCAL_ATTEMPT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

/// Play `steps` in `dir`. Returns the exit code.
pub fn play(steps: &[Step], dir: &Path) -> i32 {
    let stdout = std::io::stdout();
    for step in steps {
        if let Step::When {
            attempt,
            then,
            otherwise,
        } = step
        {
            let branch = if current_attempt() == *attempt {
                then
            } else {
                otherwise
            };
            let code = play(branch, dir);
            if code != 0 {
                return code;
            }
            continue;
        }
        if let Err(e) = play_step(step, dir, &stdout) {
            eprintln!("scripted agent: step {step:?} failed: {e}");
            return 1;
        }
    }
    0
}

/// Play one step (not a `When`) in `dir`.
fn play_step(step: &Step, dir: &Path, stdout: &std::io::Stdout) -> std::io::Result<()> {
    match step {
        Step::Say { text } => {
            let mut o = stdout.lock();
            writeln!(o, "{}", with_nonce(text))?;
            o.flush()?;
        }
        Step::Warn { text } => eprintln!("{text}"),
        Step::Write { path, content } => {
            let p = place(dir, path);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(p, content)?;
        }
        Step::Append { path, content } => {
            let p = place(dir, path);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(p)?;
            f.write_all(content.as_bytes())?;
        }
        Step::Delete { path } => std::fs::remove_file(place(dir, path))?,
        Step::Rename { from, to } => {
            let t = place(dir, to);
            if let Some(parent) = t.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::rename(place(dir, from), t)?
        }
        Step::Chmod { path, executable } => {
            use std::os::unix::fs::PermissionsExt;
            let mode = if *executable { 0o755 } else { 0o644 };
            std::fs::set_permissions(place(dir, path), std::fs::Permissions::from_mode(mode))?
        }
        Step::Symlink { path, target } => {
            let p = place(dir, path);
            let _ = std::fs::remove_file(&p);
            std::os::unix::fs::symlink(target, p)?
        }
        Step::Sleep { ms } => std::thread::sleep(std::time::Duration::from_millis(*ms)),
        Step::Garbage { bytes } => garbage(&mut stdout.lock(), *bytes)?,
        Step::LongLine { bytes } => {
            let mut o = stdout.lock();
            o.write_all(&vec![b'x'; *bytes])?;
            o.write_all(b"\n")?;
            o.flush()?;
        }
        Step::Exit { code } => std::process::exit(*code),
        Step::Impossible { reason } => {
            let dir = std::env::var_os(crate::exec::env::ARTIFACTS_ENV).ok_or_else(|| {
                std::io::Error::other(format!("${} is not set", crate::exec::env::ARTIFACTS_ENV))
            })?;
            std::fs::write(
                Path::new(&dir).join(rascal_core::model::impossible::FILE),
                reason,
            )?;
        }
        Step::Usage {
            input_tokens,
            output_tokens,
            usd,
        } => {
            let mut o = stdout.lock();
            writeln!(o, "{}", claude_result(*input_tokens, *output_tokens, *usd))?;
            o.flush()?;
        }
        Step::When { .. } => {}
    }
    Ok(())
}

/// `bytes` of terminal garbage (escape sequences, then noise), on one line.
fn garbage(o: &mut impl Write, bytes: usize) -> std::io::Result<()> {
    let mut x: u32 = 0x1234_5678;
    let mut buf = Vec::with_capacity(bytes + 8);
    buf.extend_from_slice(b"\x1b[2J\x1b]0;pwned\x07\0");
    for _ in 0..bytes {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        buf.push((x & 0xff) as u8);
    }
    buf.push(b'\n');
    o.write_all(&buf)?;
    o.flush()
}

#[cfg(test)]
mod builtin_tests;
