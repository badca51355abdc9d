//! Untrusted text (agent logs, command output, diffs) made safe to show:
//! control and escape sequences can never reach the terminal.

/// Replace every control character except tab with a visible caret form
/// (`ESC` → `^[`, NUL → `^@`, DEL → `^?`); C1 controls become `�`.
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
            _ => out.push(c),
        }
    }
    out
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

/// `s` cut to at most `max` bytes at a char boundary, with a marker.
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

/// `s` cut to at most `max` characters, ending in `…` when cut.
pub fn ellipsis(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The size of a change in words: `1 file, 10 lines`.
pub fn change_size(files: u64, lines: u64) -> String {
    let s = |n: u64| if n == 1 { "" } else { "s" };
    format!("{files} file{}, {lines} line{}", s(files), s(lines))
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
    fn change_size_counts_in_words() {
        assert_eq!(change_size(1, 1), "1 file, 1 line");
        assert_eq!(change_size(3, 21), "3 files, 21 lines");
    }

    #[test]
    fn tail_and_cut_respect_char_boundaries() {
        assert_eq!(tail("ééé", 3), "…é");
        assert_eq!(cut("ééé", 3), "é…[4 bytes cut]");
        assert_eq!(cut("abc", 5), "abc");
    }
}
