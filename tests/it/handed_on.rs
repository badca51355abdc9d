//! What rascal hands on is inert (issue 48, items 3 and 4): the PR body
//! an agent's `pr_body.md` goes into, rendered by a real CommonMark parser
//! (pulldown-cmark, with GitHub's extensions) and judged by its events —
//! no raw HTML, image or link of the agent's, no live mention or issue
//! reference, no heading that imitates rascal's, rascal's sections after
//! the agent's text; and every command rascal prints for the user to
//! paste, run through `sh -c` with a stand-in `gh` that records its argv,
//! so no `$( )`, backtick or quote in a title, branch or path runs.

use crate::common;
use common::{code, stderr, stdout, TestRepo};
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use std::path::Path;

/// What an agent writes to hide rascal's section, track the reader and
/// ping people: an unclosed comment, raw HTML, images, links, mentions,
/// issue references, a heading like rascal's own, a fence it tries to
/// close.
const HOSTILE_BODY: &str = "Fixes #123 and GH-7, thanks @octocat and @org/team.\n\n\
<!-- everything after this is hidden\n\n\
<img src=\"https://tracker.example/beacon.png\">\n\
![beacon](https://tracker.example/t.gif)\n\
[click](https://evil.example/)\n\
<details><summary>ok</summary>\n\n\
## Review\n\n\
- [x] everything passed\n\
```\n~~~\n````````\n\
</code></pre><script>alert(1)</script>\n";

/// An honest summary: quoted as it is.
const HONEST_BODY: &str = "Adds `b`, which returns 42.\n";

fn repo(body: &str, title: &str) -> TestRepo {
    let agents = format!(
        "agents:\n  good:\n    runtime: scripted\n    steps:\n      - {{ do: write, path: src/b.rs, content: \"pub fn b() -> u32 {{ 42 }}\\n\" }}\n      - {{ do: write, path: $RASCAL_ARTIFACTS_DIR/pr_body.md, content: {} }}\n      - {{ do: write, path: $RASCAL_ARTIFACTS_DIR/commit_message.txt, content: {} }}\n",
        serde_json::to_string(body).unwrap(),
        serde_json::to_string(&format!("{title}\n\nThe body.\n")).unwrap()
    );
    let t = TestRepo::new(&[
        (".rascal/config.yaml", agents.as_str()),
        ("src/a.rs", "pub fn a() {}\n"),
    ]);
    let mut cfg = t.repo.config().unwrap();
    cfg.set_str("user.name", "Tess Ter").unwrap();
    cfg.set_str("user.email", "tess@example.invalid").unwrap();
    t
}

/// Run the task (its instruction hostile too) and finalize: the printed
/// output of finalize and the PR body it wrote.
fn run_and_finalize(t: &TestRepo) -> (String, String) {
    let o = t.rascal(&[
        "run",
        "make b return 42 (see #9, cc @someone) <!--",
        "--headless",
        "--agent",
        "good",
    ]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let id = stdout(&o)
        .lines()
        .find_map(|l| l.strip_prefix("replay: rascal show "))
        .unwrap()
        .to_string();
    let o = t.rascal(&["finalize", &id]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    let path = out
        .lines()
        .find_map(|l| l.strip_prefix("PR body: "))
        .unwrap_or_else(|| panic!("{out}"));
    let body = std::fs::read_to_string(path).unwrap();
    (out, body)
}

/// The body as GitHub's renderer reads it.
fn events(md: &str) -> Vec<Event<'_>> {
    let opts = Options::ENABLE_TABLES
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_GFM;
    Parser::new_ext(md, opts).collect()
}

/// Text GitHub would turn into a notification or a link: a mention or an
/// issue reference, outside code.
fn live_reference(text: &str) -> bool {
    regex::Regex::new(r"(^|[^\w])@[A-Za-z0-9]|#[0-9]|(?i)\bgh-[0-9]")
        .unwrap()
        .is_match(text)
}

#[test]
fn a_hostile_pr_body_renders_inert_and_cannot_hide_rascals_sections() {
    let t = repo(HOSTILE_BODY, "Make b return 42");
    let (_, body) = run_and_finalize(&t);
    let evs = events(&body);
    let mut in_code = false;
    let mut headings: Vec<String> = Vec::new();
    let mut heading: Option<String> = None;
    let mut agent_code: Vec<String> = Vec::new();
    for e in &evs {
        match e {
            Event::Start(Tag::CodeBlock(_)) => in_code = true,
            Event::End(TagEnd::CodeBlock) => in_code = false,
            Event::Start(Tag::Heading { level, .. }) => {
                assert!(*level >= HeadingLevel::H2, "{body}");
                heading = Some(String::new());
            }
            Event::End(TagEnd::Heading(_)) => headings.push(heading.take().unwrap()),
            Event::Html(h) | Event::InlineHtml(h) => {
                // rascal's own seal is the only HTML: `<sub>…</sub>`.
                assert!(
                    matches!(h.trim(), "<sub>" | "</sub>"),
                    "live HTML {h:?} in:\n{body}"
                );
            }
            Event::Start(Tag::Image { dest_url, .. }) => {
                panic!("an image ({dest_url}) in:\n{body}")
            }
            Event::Start(Tag::Link { dest_url, .. }) => {
                panic!("a link ({dest_url}) in:\n{body}")
            }
            Event::Text(s) if in_code => agent_code.push(s.to_string()),
            Event::Text(s) | Event::Code(s) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(s);
                }
                assert!(!live_reference(s), "live reference in {s:?}:\n{body}");
            }
            _ => {}
        }
    }
    // The agent's text is all there, as the text of one code block.
    let quoted = agent_code.concat();
    assert!(
        quoted.contains("<!-- everything after this is hidden"),
        "{quoted}"
    );
    assert!(quoted.contains("## Review"), "{quoted}");
    // rascal's sections are real headings, after the agent's summary, and
    // the agent's imitation is not among them.
    let summary = headings
        .iter()
        .position(|h| h == "Agent's summary")
        .unwrap_or_else(|| panic!("{headings:?}"));
    assert_eq!(
        headings[summary + 1..],
        [
            "Agent",
            "Guardrails",
            "Permissions",
            "Acceptance criteria",
            "Review",
            "Decisions"
        ],
        "rascal's sections, once each, after the agent's text (its `## Review` is not live)"
    );
    // The seal closes the document.
    assert!(body
        .lines()
        .last()
        .unwrap()
        .starts_with("<sub>Written by rascal"));
}

#[test]
fn an_honest_pr_body_is_quoted_exactly() {
    let t = repo(HONEST_BODY, "Make b return 42");
    let (_, body) = run_and_finalize(&t);
    let mut in_code = false;
    let mut quoted = String::new();
    for e in events(&body) {
        match e {
            Event::Start(Tag::CodeBlock(_)) => in_code = true,
            Event::End(TagEnd::CodeBlock) => in_code = false,
            Event::Text(s) if in_code => quoted.push_str(&s),
            _ => {}
        }
    }
    assert!(quoted.contains(HONEST_BODY), "{quoted:?}\n{body}");
}

/// A stand-in `gh` in its own folder that writes its argv, one argument
/// per NUL, to `$GH_ARGV`.
fn stand_in_gh(dir: &Path) {
    let gh = dir.join("gh");
    std::fs::write(
        &gh,
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > \"$GH_ARGV\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Paste `line` into `sh -c` in a scratch folder with the stand-in `gh`
/// first on PATH: the argv `gh` saw, and whether anything ran that the
/// line only quoted (a `pwned` file appears).
fn paste(line: &str) -> (Vec<String>, bool) {
    let bin = tempfile::tempdir().unwrap();
    stand_in_gh(bin.path());
    let scratch = tempfile::tempdir().unwrap();
    let argv = scratch.path().join("argv");
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(scratch.path())
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.path().display(),
                std::env::var("PATH").unwrap()
            ),
        )
        .env("GH_ARGV", &argv)
        .output()
        .unwrap();
    assert!(o.status.success(), "{line}: {}", stderr(&o));
    let bytes = std::fs::read(&argv).unwrap();
    let args = bytes
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8(a.to_vec()).unwrap())
        .collect();
    let ran = std::fs::read_dir(scratch.path()).unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("pwned")
    });
    (args, ran)
}

#[test]
fn every_printed_word_reaches_the_command_as_itself() {
    use rascal_core::text::inert::shell_line;
    let hostile = [
        "$(touch pwned1)",
        "`touch pwned2`",
        "it's a fix",
        "say \"hi\" $(touch pwned3)",
        "'; touch pwned4; '",
        "two\nlines $(touch pwned5)",
        "é ü 日本 — ok",
        "!! history !$",
        "back\\slash \\$(touch pwned6)",
        "rascal/fix-$(touch pwned7)-r-1",
        "-leading-dash",
        "*",
    ];
    for s in hostile {
        let args = ["gh", "pr", "create", "--head", s, "--title", s];
        let (seen, ran) = paste(&shell_line(&args));
        assert!(!ran, "a substitution ran for {s:?}");
        assert_eq!(seen, args[1..], "{s:?}");
    }
}

#[test]
fn finalizes_gh_line_is_safe_to_paste_with_a_hostile_title() {
    let title = "fix: it's $(touch pwned) `touch pwned2` \"q\" é 日本 !x";
    let t = repo(HONEST_BODY, title);
    let (out, _) = run_and_finalize(&t);
    let line = out
        .split_once("open the pull request with:\n")
        .unwrap_or_else(|| panic!("{out}"))
        .1
        .lines()
        .next()
        .unwrap()
        .trim();
    assert!(
        line.contains(" --title 'fix: it'\\''s $(touch pwned)"),
        "single quotes, a `'` as `'\\''`: {line}"
    );
    let (argv, ran) = paste(line);
    assert!(!ran, "{line}");
    assert_eq!(argv[..3], ["pr", "create", "--head"], "{argv:?}");
    assert_eq!(argv[4], "--title");
    assert_eq!(argv[5], title, "the title reaches gh as the commit has it");
    let branch = t
        .repo
        .find_reference(&format!("refs/heads/{}", argv[3]))
        .unwrap()
        .peel_to_commit()
        .unwrap();
    assert_eq!(branch.summary().unwrap(), Some(title));
}
