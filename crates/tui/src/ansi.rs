//! Agent log lines to styled text: SGR colour sequences from the agent are
//! kept (as styles), every other control or escape sequence is made visible
//! (`ESC` → `^[`) so it can never reach the terminal, and direction
//! overrides and zero-width characters are shown as `<U+202E>`.

use rascal_core::text::{is_hidden, sanitize};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

/// Parse one log line. With `color` false, colours are dropped and only
/// modifiers (bold, underline, reverse…) are kept.
pub fn parse_line(text: &str, color: bool) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut style = Style::default();
    let mut buf = String::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\u{1b}' && text[i + 1..].starts_with('[') {
            // CSI: ESC [ params final
            let rest = &text[i + 2..];
            let end = rest
                .char_indices()
                .find(|(_, ch)| ('\u{40}'..='\u{7e}').contains(ch))
                .map(|(j, _)| j);
            if let Some(j) = end {
                let params = &rest[..j];
                let fin = rest[j..].chars().next().unwrap_or('m');
                let ok_params = params.chars().all(|ch| ch.is_ascii_digit() || ch == ';');
                if fin == 'm' && ok_params {
                    if !buf.is_empty() {
                        spans.push(Span::styled(std::mem::take(&mut buf), style));
                    }
                    style = apply_sgr(style, params, color);
                    // skip '[' + params + final
                    let skip = 1 + params.chars().count() + 1;
                    for _ in 0..skip {
                        chars.next();
                    }
                    continue;
                }
            }
        }
        if (c.is_control() && c != '\t') || is_hidden(c) {
            buf.push_str(&sanitize(&c.to_string()));
        } else if c == '\t' {
            buf.push_str("    ");
        } else {
            buf.push(c);
        }
    }
    if !buf.is_empty() {
        spans.push(Span::styled(buf, style));
    }
    Line::from(spans)
}

fn basic(n: u16) -> Color {
    match n {
        0 => Color::Black,
        1 => Color::Red,
        2 => Color::Green,
        3 => Color::Yellow,
        4 => Color::Blue,
        5 => Color::Magenta,
        6 => Color::Cyan,
        7 => Color::Gray,
        8 => Color::DarkGray,
        9 => Color::LightRed,
        10 => Color::LightGreen,
        11 => Color::LightYellow,
        12 => Color::LightBlue,
        13 => Color::LightMagenta,
        14 => Color::LightCyan,
        _ => Color::White,
    }
}

fn apply_sgr(mut style: Style, params: &str, color: bool) -> Style {
    let nums: Vec<u16> = if params.is_empty() {
        vec![0]
    } else {
        params.split(';').map(|p| p.parse().unwrap_or(0)).collect()
    };
    let mut i = 0;
    while i < nums.len() {
        let n = nums[i];
        let mut set_fg = None;
        let mut set_bg = None;
        match n {
            0 => style = Style::default(),
            1 => style = style.add_modifier(Modifier::BOLD),
            2 => style = style.add_modifier(Modifier::DIM),
            3 => style = style.add_modifier(Modifier::ITALIC),
            4 => style = style.add_modifier(Modifier::UNDERLINED),
            7 => style = style.add_modifier(Modifier::REVERSED),
            22 => style = style.remove_modifier(Modifier::BOLD | Modifier::DIM),
            23 => style = style.remove_modifier(Modifier::ITALIC),
            24 => style = style.remove_modifier(Modifier::UNDERLINED),
            27 => style = style.remove_modifier(Modifier::REVERSED),
            30..=37 => set_fg = Some(basic(n - 30)),
            39 => style.fg = None,
            40..=47 => set_bg = Some(basic(n - 40)),
            49 => style.bg = None,
            90..=97 => set_fg = Some(basic(n - 90 + 8)),
            100..=107 => set_bg = Some(basic(n - 100 + 8)),
            38 | 48 => {
                let c = match nums.get(i + 1) {
                    Some(5) => {
                        let c = nums.get(i + 2).map(|v| Color::Indexed(*v as u8));
                        i += 2;
                        c
                    }
                    Some(2) => {
                        let g = |k: usize| nums.get(i + k).copied().unwrap_or(0) as u8;
                        let c = Some(Color::Rgb(g(2), g(3), g(4)));
                        i += 4;
                        c
                    }
                    _ => None,
                };
                if n == 38 {
                    set_fg = c;
                } else {
                    set_bg = c;
                }
            }
            _ => {}
        }
        if color {
            if let Some(c) = set_fg {
                style = style.fg(c);
            }
            if let Some(c) = set_bg {
                style = style.bg(c);
            }
        }
        i += 1;
    }
    style
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(l: &Line) -> String {
        l.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn colours_are_kept_and_other_escapes_made_visible() {
        let l = parse_line("\u{1b}[31mred\u{1b}[0m ok \u{1b}[2Jclear\0", true);
        assert_eq!(plain(&l), "red ok ^[[2Jclear^@");
        assert_eq!(l.spans[0].style.fg, Some(Color::Red));
        assert_eq!(l.spans[1].style.fg, None);
    }

    #[test]
    fn no_color_keeps_modifiers_only() {
        let l = parse_line("\u{1b}[1;32mgreen", false);
        assert_eq!(l.spans[0].style.fg, None);
        assert!(l.spans[0].style.add_modifier.contains(Modifier::BOLD));
    }

    #[test]
    fn direction_overrides_and_zero_width_characters_are_shown_escaped() {
        let l = parse_line("\u{1b}[32mok\u{202E}txt.exe\u{200B}\u{1b}[0m", true);
        assert_eq!(plain(&l), "ok<U+202E>txt.exe<U+200B>");
        assert_eq!(
            l.spans[0].style.fg,
            Some(Color::Green),
            "colours still apply"
        );
    }

    /// An OSC title and a cursor move reach no terminal: no raw ESC or BEL
    /// is left, and each is shown, escaped, where it was (the text around
    /// it kept).
    #[test]
    fn osc_and_cursor_moves_cannot_reach_the_terminal() {
        let l = parse_line("a\u{1b}]0;title\u{7}b\u{1b}[10;10H", true);
        let s = plain(&l);
        assert!(!s.contains('\u{1b}') && !s.contains('\u{7}'), "{s:?}");
        assert_eq!(s, "a^[]0;title^Gb^[[10;10H");
    }
}
