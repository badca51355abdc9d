//! Text: what leaves rascal is inert ([`inert`], the one output policy:
//! terminal, git, Markdown, SARIF, notifications, clipboard), and the
//! width of text on a terminal, in columns: CJK and most emoji take two,
//! combining marks none, so columns are measured with [`width`] and cut,
//! padded, shortened or wrapped with [`fit`], [`pad`], [`pad_left`],
//! [`ellipsis`] and [`wrap`], never by bytes or chars.

pub mod inert;

pub use inert::{is_hidden, sanitize};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// The last `max` bytes of `s`, cut at a char boundary, with a marker.
pub fn tail(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &s[start..])
}

/// `s` cut to at most `max` bytes at a char boundary, with a marker. A
/// storage budget, not a display width: see [`ellipsis`] for that.
pub fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…[{} bytes cut]", &s[..end], s.len() - end)
}

/// The columns one grapheme takes, as ratatui draws it: control characters
/// are not drawn at all.
fn grapheme_width(g: &str) -> usize {
    if g.contains(char::is_control) {
        0
    } else {
        g.width()
    }
}

/// The columns `s` takes on a terminal.
pub fn width(s: &str) -> usize {
    s.graphemes(true).map(grapheme_width).sum()
}

/// The longest start of `s` that fits in `max` columns, and its width (which
/// can be `max - 1` when a two-column character would straddle the edge).
pub fn fit(s: &str, max: usize) -> (&str, usize) {
    let mut used = 0;
    for (i, g) in s.grapheme_indices(true) {
        let w = grapheme_width(g);
        if used + w > max {
            return (&s[..i], used);
        }
        used += w;
    }
    (s, used)
}

/// `s` cut to at most `max` columns, ending in `…` when cut.
pub fn ellipsis(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let (head, _) = fit(s, max - 1);
    format!("{head}…")
}

/// `s` in lines of at most `max` columns, for text that must be read
/// whole: broken at spaces, a word wider than a line broken where it
/// reaches the edge. Never empty (an empty `s` is one empty line).
pub fn wrap(s: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in s.split_whitespace() {
        let mut word = word;
        let used = width(&line);
        if !line.is_empty() && used + 1 + width(word) > max {
            lines.push(std::mem::take(&mut line));
        } else if !line.is_empty() {
            line.push(' ');
        }
        loop {
            let room = max - width(&line);
            let (head, _) = fit(word, room);
            if head.len() == word.len() {
                line.push_str(word);
                break;
            }
            // At least one grapheme a line, however narrow the line is.
            let head = if head.is_empty() && line.is_empty() {
                word.graphemes(true).next().unwrap_or(word)
            } else {
                head
            };
            line.push_str(head);
            lines.push(std::mem::take(&mut line));
            word = &word[head.len()..];
            if word.is_empty() {
                break;
            }
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// `s` followed by spaces up to `w` columns (a wider `s` is left whole).
pub fn pad(s: &str, w: usize) -> String {
    let n = w.saturating_sub(width(s));
    format!("{s}{}", " ".repeat(n))
}

/// Spaces up to `w` columns, then `s` (a wider `s` is left whole).
pub fn pad_left(s: &str, w: usize) -> String {
    let n = w.saturating_sub(width(s));
    format!("{}{s}", " ".repeat(n))
}

/// `n thing` or `n things`: `1 file`, `2 files`, `2 matches`, `0
/// criteria`. The one way counts are written, in every output.
pub fn plural(n: impl Into<u64>, thing: &str) -> String {
    match n.into() {
        1 => format!("1 {thing}"),
        n => format!("{n} {}", plural_of(thing)),
    }
}

/// The first `n` of `items`, comma-separated, then how many more: `a, b
/// and 3 more`. The one way a list of names is cut short in a message.
pub fn first_of(items: &[String], n: usize) -> String {
    let shown: Vec<&str> = items.iter().take(n).map(String::as_str).collect();
    match items.len().saturating_sub(shown.len()) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// The plural of a noun rascal counts: `criterion` → `criteria`, `match`
/// → `matches`, else an `s`; a phrase's last word takes it (`test-related
/// file` → `test-related files`).
fn plural_of(thing: &str) -> String {
    if let Some(head) = thing.strip_suffix("criterion") {
        return format!("{head}criteria");
    }
    let es = ["s", "x", "ch", "sh"].iter().any(|e| thing.ends_with(e));
    format!("{thing}{}", if es { "es" } else { "s" })
}

/// A message of several lines (an error and its `hint:`) as one line, for
/// a place that shows one: the lines trimmed and joined by ` — `, never a
/// raw newline (which would print as `^J`).
pub fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" — ")
}

/// The size of a change in words: `1 file, 10 lines`.
pub fn change_size(files: u64, lines: u64) -> String {
    format!("{}, {}", plural(files, "file"), plural(lines, "line"))
}

/// A branch-safe slug of the task's first line.
pub fn slug(instruction: &str) -> String {
    let mut out = String::new();
    for c in instruction.lines().next().unwrap_or("").chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
        if out.len() >= 40 {
            break;
        }
    }
    let s = out.trim_matches('-').to_string();
    if s.is_empty() {
        "task".into()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_joins_an_error_and_its_hint() {
        assert_eq!(
            one_line("`./fix.sh` could not be started: entity not found\n  hint: install it\n"),
            "`./fix.sh` could not be started: entity not found — hint: install it"
        );
        assert_eq!(one_line("plain"), "plain");
    }

    #[test]
    fn plural_says_one_thing_or_many() {
        assert_eq!(plural(1u64, "file"), "1 file");
        assert_eq!(plural(0u64, "file"), "0 files");
        assert_eq!(plural(2u64, "match"), "2 matches");
        assert_eq!(
            plural(3u64, "acceptance criterion"),
            "3 acceptance criteria"
        );
        assert_eq!(
            plural(1u64, "acceptance criterion"),
            "1 acceptance criterion"
        );
        assert_eq!(plural(2u64, "test-related file"), "2 test-related files");
    }

    #[test]
    fn change_size_counts_in_words() {
        assert_eq!(change_size(1, 1), "1 file, 1 line");
        assert_eq!(change_size(3, 21), "3 files, 21 lines");
    }

    #[test]
    fn width_counts_columns_not_chars_or_bytes() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("日本語"), 6);
        assert_eq!(width("ok ✅"), 5);
        assert_eq!(width("🚀 go"), 5);
        assert_eq!(width("e\u{301}"), 1, "a combining accent takes no column");
        assert_eq!(width("👍🏽"), 2, "an emoji with a skin tone is one picture");
        assert_eq!(width("a\tb"), 2, "control characters are not drawn");
        assert_eq!(width("…−│"), 3);
    }

    #[test]
    fn ellipsis_cuts_by_columns() {
        assert_eq!(ellipsis("abcdef", 4), "abc…");
        assert_eq!(ellipsis("abcd", 4), "abcd");
        assert_eq!(ellipsis("日本語テキスト", 7), "日本語…");
        assert_eq!(width(&ellipsis("日本語テキスト", 7)), 7);
        // A wide character that would straddle the edge is left out.
        assert_eq!(ellipsis("日本語テキスト", 6), "日本…");
        assert_eq!(width(&ellipsis("日本語テキスト", 6)), 5);
        assert_eq!(ellipsis("🚀🚀🚀", 4), "🚀…");
        assert_eq!(
            ellipsis("👍🏽👍🏽", 3),
            "👍🏽…",
            "grapheme clusters are not split"
        );
        assert_eq!(ellipsis("abc", 0), "");
        assert_eq!(ellipsis("日本", 1), "…");
        for s in ["agent-日本", "ü̈ber", "✅ passed 🚀", "x"] {
            for max in 0..12 {
                assert!(width(&ellipsis(s, max)) <= max, "{s} {max}");
            }
        }
    }

    #[test]
    fn fit_and_pad_keep_columns_aligned() {
        assert_eq!(fit("日本語", 5), ("日本", 4));
        assert_eq!(fit("日本語", 6), ("日本語", 6));
        assert_eq!(fit("ab日", 3), ("ab", 2));
        assert_eq!(pad("日本", 6), "日本  ");
        assert_eq!(pad_left("日本", 6), "  日本");
        assert_eq!(pad("✅", 3), "✅ ");
        assert_eq!(pad("toolong", 3), "toolong");
        for s in ["claude", "日本語エージェント", "🚀rocket", "e\u{301}te"] {
            assert_eq!(width(&pad(&ellipsis(s, 8), 9)), 9, "{s}");
            assert_eq!(width(&pad_left(&ellipsis(s, 5), 6)), 6, "{s}");
        }
    }

    #[test]
    fn wrap_keeps_every_word_and_fits_the_width() {
        let msg = "guardrails build: src/lib.rs:11:5: error[E0308]: mismatched types";
        let lines = wrap(msg, 20);
        assert_eq!(
            lines,
            [
                "guardrails build:",
                "src/lib.rs:11:5:",
                "error[E0308]:",
                "mismatched types"
            ]
        );
        assert_eq!(wrap("abcdefgh ij", 3), ["abc", "def", "gh", "ij"]);
        assert_eq!(wrap("日本語テキスト", 5), ["日本", "語テ", "キス", "ト"]);
        assert_eq!(wrap("", 5), [""]);
        for (s, max) in [(msg, 7), ("日本語 text 🚀 done", 3), ("x", 1)] {
            let lines = wrap(s, max);
            assert!(
                lines.iter().all(|l| width(l) <= max),
                "{s} {max}: {lines:?}"
            );
            let joined: String = lines.concat().split_whitespace().collect();
            let whole: String = s.split_whitespace().collect();
            assert_eq!(joined, whole, "nothing is lost");
        }
    }

    #[test]
    fn tail_and_cut_respect_char_boundaries() {
        assert_eq!(tail("ééé", 3), "…é");
        assert_eq!(cut("ééé", 3), "é…[4 bytes cut]");
        assert_eq!(cut("abc", 5), "abc");
    }
}
