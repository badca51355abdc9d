//! Untrusted text (agent logs, command output, diffs) made safe to show:
//! control and escape sequences can never reach the terminal. And the
//! width of text on a terminal, in columns: CJK and most emoji take two,
//! combining marks none, so columns are measured with [`width`] and cut,
//! padded or shortened with [`fit`], [`pad`], [`pad_left`] and [`ellipsis`],
//! never by bytes or chars.

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Replace every control character except tab with a visible caret form
/// (`ESC` → `^[`, NUL → `^@`, DEL → `^?`); C1 controls become `�`; the
/// invisible characters that reorder or hide text ([`is_hidden`]) are
/// shown as their code point, `<U+202E>`.
pub fn sanitize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\t' => out.push(c),
            '\u{0}'..='\u{1f}' => {
                out.push('^');
                out.push((c as u8 + b'@') as char);
            }
            '\u{7f}' => out.push_str("^?"),
            '\u{80}'..='\u{9f}' => out.push('\u{fffd}'),
            c if is_hidden(c) => out.push_str(&format!("<U+{:04X}>", c as u32)),
            _ => out.push(c),
        }
    }
    out
}

/// Bidirectional overrides, embeddings and isolates, zero-width characters,
/// the word joiner and the byte order mark: they take no column but can
/// make text read differently from what it is ("Trojan Source"), so they
/// are shown escaped wherever untrusted text is shown.
pub fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200B}'..='\u{200F}'
        | '\u{2060}'
        | '\u{FEFF}'
        | '\u{061C}')
}

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

/// The size of a change in words: `1 file, 10 lines`.
pub fn change_size(files: u64, lines: u64) -> String {
    format!("{}, {}", plural(files, "file"), plural(lines, "line"))
}

#[cfg(test)]
mod tests {
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
    fn tail_and_cut_respect_char_boundaries() {
        assert_eq!(tail("ééé", 3), "…é");
        assert_eq!(cut("ééé", 3), "é…[4 bytes cut]");
        assert_eq!(cut("abc", 5), "abc");
    }
}
