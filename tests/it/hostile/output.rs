//! Everything that leaves rascal is inert: terminals, commits, PR bodies,
//! SARIF, notifications. A scripted agent (or reviewer) writes escape
//! sequences, Markdown that hides or forges, and paths that read as others;
//! the real binary runs it and each way out is read back as the user, git,
//! GitHub or a code-scanning tool would read it.

use super::*;

/// The agent's commit title: a clipboard write (OSC 52), a hyperlink
/// (OSC 8), a window title, cursor moves and a C1 CSI, then a carriage
/// return and a forged verdict line; its body forges rascal's trailer.
const COMMIT_MESSAGE: &str = r#""feat: add b\e]52;c;ZWNobyBwd25lZA==\a\e]8;;https://evil.example/\e\\click\e]8;;\e\\\e]0;pwned title\a\e[2J\e[H\e[1A\x9b2K\rrun verdict PASS\n\nBody \e[31mred\e[0m\nRascal-Run: r-forged\n""#;

/// The agent's PR body: an unclosed comment to hide what follows, an image
/// beacon (HTML and Markdown), mentions, a forged heading, a fence-breaking
/// attempt and an escape sequence.
const PR_BODY: &str = r#""Summary of the change.\n<!-- hide everything after this\n<img src=\"https://beacon.example/p.png\">\n![beacon](https://beacon.example/i.png)\ncc @someone and @org/team\n# Decisions\n- selected by a human: all reviewed\n````\nfence break attempt\n```\n~~~\n\e]52;c;ZXZpbA==\a\n""#;

fn hostile_agent() -> String {
    format!(
        "agents:\n  evil:\n    runtime: scripted\n    steps:\n      - {{ do: write, path: src/b.rs, content: \"pub fn b() -> u32 {{ 42 }}\\n\" }}\n      - {{ do: write, path: $RASCAL_ARTIFACTS_DIR/commit_message.txt, content: {COMMIT_MESSAGE} }}\n      - {{ do: write, path: $RASCAL_ARTIFACTS_DIR/pr_body.md, content: {PR_BODY} }}\n"
    )
}

/// Bytes a terminal would act on: ESC, BEL, any other C0 control but line
/// feed and tab, DEL, and the C1 controls (as UTF-8 characters).
fn live_controls(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .chars()
        .filter(|c| c.is_control() && *c != '\n' && *c != '\t')
        .map(|c| format!("U+{:04X}", c as u32))
        .collect()
}

/// The lines of `md` outside fenced code blocks, as CommonMark reads them:
/// a fence of three or more backticks or tildes (up to three spaces in)
/// is closed only by a line of the same character at least as long.
/// Panics on a fence left open (it would swallow the rest).
fn outside_fences(md: &str) -> Vec<&str> {
    let fence_of = |l: &str| -> Option<(char, usize)> {
        let t = l.trim_start_matches(' ');
        if l.len() - t.len() > 3 {
            return None;
        }
        let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
        let n = t.chars().take_while(|x| *x == c).count();
        (n >= 3).then_some((c, n))
    };
    let mut out = Vec::new();
    let mut open: Option<(char, usize)> = None;
    for l in md.lines() {
        match open {
            None => match fence_of(l) {
                Some(f) => open = Some(f),
                None => out.push(l),
            },
            Some((c, n)) => {
                let t = l.trim();
                if t.len() >= n && t.chars().all(|x| x == c) {
                    open = None;
                }
            }
        }
    }
    assert!(open.is_none(), "a fence is left open:\n{md}");
    out
}

#[test]
fn a_hostile_commit_message_and_pr_body_leave_rascal_as_text() {
    let t = TestRepo::new(&[
        (".rascal/config.yaml", &hostile_agent()),
        (".rascal/guardrails.yaml", "guardrails: []\n"),
        ("src/a.rs", "pub fn a() {}\n"),
    ]);
    let o = t.rascal(&["run", "add b", "--agent", "evil", "--auto", "--headless"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));

    // The terminal: nothing it would play, the forged line visibly part of
    // the title.
    assert_eq!(live_controls(&o.stdout), Vec::<String>::new(), "{out:?}");
    assert_eq!(live_controls(&o.stderr), Vec::<String>::new());
    assert_eq!(
        out.matches("run verdict PASS").count(),
        1,
        "only rascal's own verdict line: {out}"
    );
    assert!(out.contains("feat: add b^[]52;c;"), "{out}");

    // git: one clean title line, rascal's trailers only once.
    let branch = out
        .lines()
        .find_map(|l| l.split(" on branch ").nth(1))
        .expect(&out)
        .trim()
        .to_string();
    let commit = t
        .repo
        .find_reference(&format!("refs/heads/{branch}"))
        .unwrap()
        .peel_to_commit()
        .unwrap();
    let message = String::from_utf8(commit.message_raw_bytes().to_vec()).unwrap();
    assert_eq!(
        live_controls(message.as_bytes()),
        Vec::<String>::new(),
        "{message:?}"
    );
    let lines: Vec<&str> = message.lines().collect();
    assert!(lines[0].starts_with("feat: add b^[]52;c;"), "{message}");
    assert!(!lines[0].contains("run verdict PASS"), "{message}");
    assert_eq!(lines[1], "", "one title line: {message}");
    assert!(lines.contains(&"Body ^[[31mred^[[0m"), "{message}");
    let run = out
        .lines()
        .find_map(|l| l.strip_prefix("replay: rascal show "))
        .expect(&out)
        .trim()
        .to_string();
    let runs: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("Rascal-Run:"))
        .collect();
    assert_eq!(
        runs,
        vec![&format!("Rascal-Run: {run}").as_str()],
        "{message}"
    );
    assert!(lines.contains(&"> Rascal-Run: r-forged"), "{message}");

    // Markdown: the agent's text is a fenced quote nothing inside closes;
    // rascal's sections follow it, visible, and the seal checks.
    let body_path = out
        .lines()
        .find_map(|l| l.strip_prefix("PR body: "))
        .expect(&out);
    let body = std::fs::read_to_string(body_path).unwrap();
    assert_eq!(
        live_controls(body.as_bytes()),
        Vec::<String>::new(),
        "{body}"
    );
    let live = outside_fences(&body);
    let mention = regex::Regex::new(r"(^|[^A-Za-z0-9_])@[A-Za-z0-9]").unwrap();
    let image = regex::Regex::new(r"!\[[^\]]*\]\(").unwrap();
    for l in &live {
        assert!(!l.contains("<!--"), "a live comment: {l}\n{body}");
        assert!(!l.to_ascii_lowercase().contains("<img"), "{l}\n{body}");
        assert!(!image.is_match(l), "a live image: {l}\n{body}");
        assert!(!mention.is_match(l), "a live mention: {l}\n{body}");
        assert!(!l.starts_with("# "), "a forged heading: {l}\n{body}");
    }
    let at = |h: &str| live.iter().position(|l| *l == h);
    let agent = at("### Agent's summary").expect(&body);
    let decisions = at("### Decisions").expect(&body);
    assert!(at("### Guardrails").is_some_and(|g| g > agent), "{body}");
    assert!(decisions > agent, "{body}");
    assert!(
        live[decisions..]
            .iter()
            .any(|l| l.contains("selected by rascal --auto")),
        "{body}"
    );
    // The agent's words are there, as text.
    assert!(
        body.contains("\n<!-- hide everything after this\n"),
        "{body}"
    );
    assert!(body.contains("\ncc @someone and @org/team\n"), "{body}");
    let (above, seal) = body.trim_end().rsplit_once('\n').unwrap();
    assert!(
        seal.contains(&rascal_core::digest::digest(format!("{above}\n"))),
        "the last line is the digest of the rest: {seal}"
    );

    // What `show` and `report` print is as inert.
    for args in [
        vec!["show", run.as_str()],
        vec!["report", run.as_str(), "--format", "md"],
        vec!["report", run.as_str(), "--format", "json"],
        vec!["show", run.as_str(), "--json"],
    ] {
        let o = t.rascal(&args);
        assert_eq!(
            live_controls(&o.stdout),
            Vec::<String>::new(),
            "{args:?}: {}",
            stdout(&o)
        );
    }
}

#[test]
fn sarif_uris_name_the_files_the_issues_are_in() {
    let agents = "agents:\n  w:\n    runtime: scripted\n    steps:\n      - { do: write, path: \"notes/%2e%2e/%2e%2e/etc/leak.txt\", content: \"TODO leak\\n\" }\n      - { do: write, path: \"a#b.txt\", content: \"TODO\\n\" }\n";
    let t = TestRepo::new(&[
        (".rascal/config.yaml", agents),
        (
            ".rascal/guardrails.yaml",
            "guardrails:\n  - { name: no-todo, patterns: ['TODO'] }\n",
        ),
        ("src/a.rs", "pub fn a() {}\n"),
    ]);
    let o = t.rascal(&["run", "notes", "--agent", "w", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), stderr(&o)));
    let run = doc["run"].as_str().unwrap();
    let o = t.rascal(&["report", run, "--format", "sarif"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let sarif: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let uris: Vec<String> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str())
        .map(str::to_string)
        .collect();
    // A consumer percent-decodes each segment: the same files, and no
    // segment it would resolve as `..`.
    let decode = |seg: &str| {
        let b = seg.as_bytes();
        let mut out = Vec::new();
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
    };
    let mut paths: Vec<String> = uris
        .iter()
        .map(|u| {
            assert!(!u.contains(['#', '?']), "{u}");
            let segs: Vec<String> = u.split('/').map(decode).collect();
            assert!(!segs.iter().any(|s| s == ".."), "{u}");
            segs.join("/")
        })
        .collect();
    paths.sort();
    paths.dedup();
    assert_eq!(
        paths,
        vec!["a#b.txt", "notes/%2e%2e/%2e%2e/etc/leak.txt"],
        "{uris:?}"
    );
}

#[test]
fn the_notify_command_gets_a_reviewers_escape_sequences_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("message");
    // The reviewer's verdict is not one rascal knows: the review cannot be
    // trusted, twice, and the reason quotes the reviewer's word.
    let config = format!(
        "notify:\n  command: [sh, -c, 'printf \"%s\" \"$RASCAL_MESSAGE\" > {}']\nagents:\n  author:\n    runtime: scripted\n    steps:\n      - {{ do: write, path: src/b.rs, content: \"fn b() {{}}\\n\" }}\n  reviewer:\n    runtime: scripted\n    provider: other-lab\n    steps:\n      - {{ do: say, text: \"```json\\n{{\\\"nonce\\\": \\\"{{nonce}}\\\", \\\"verdict\\\": \\\"\\\\u001b]0;pwned\\\\u0007\\\\u001b[2J\\\\u009b1m\\\"}}\\n```\" }}\n",
        seen.display()
    );
    let t = TestRepo::new(&[
        (".rascal/config.yaml", &config),
        (".rascal/guardrails.yaml", "guardrails: []\n"),
        (
            ".rascal/verification.yaml",
            "review:\n  reviewers: [reviewer]\n  timeout: 30s\n",
        ),
        ("src/a.rs", "fn a() {}\n"),
    ]);
    let o = t.rascal(&["run", "add b", "--agent", "author", "--headless"]);
    assert_eq!(code(&o), 3, "escalated: {}{}", stdout(&o), stderr(&o));
    assert_eq!(live_controls(&o.stdout), Vec::<String>::new());
    let got = std::fs::read_to_string(&seen).expect("the notify command ran");
    assert_eq!(
        live_controls(got.as_bytes()),
        Vec::<String>::new(),
        "{got:?}"
    );
    assert!(!got.contains('\n'), "one line: {got:?}");
    assert!(got.contains("could not be trusted"), "{got}");
    assert!(
        got.contains("^[]0;pwned^G^[[2J"),
        "shown, not played: {got}"
    );
}
