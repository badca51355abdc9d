//! Syntax highlighting for the diff view with syntect: only the lines on
//! screen are highlighted, each at most once (cached), very long lines stay
//! plain. Lines are highlighted one by one (no state across lines), which
//! can miss multi-line constructs but keeps the cost per visible row.

use ratatui::style::{Color, Style};
use ratatui::text::Span;
use std::collections::HashMap;
use std::sync::OnceLock;
use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme as SynTheme, ThemeSet};
use syntect::parsing::SyntaxSet;

/// Lines longer than this (chars) are not highlighted.
pub const MAX_LINE: usize = 400;
const MAX_CACHE: usize = 50_000;

fn syntaxes() -> &'static SyntaxSet {
    static S: OnceLock<SyntaxSet> = OnceLock::new();
    S.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn themes() -> &'static ThemeSet {
    static T: OnceLock<ThemeSet> = OnceLock::new();
    T.get_or_init(ThemeSet::load_defaults)
}

#[derive(Default)]
pub struct Highlighter {
    cache: HashMap<(String, String), Vec<(Color, String)>>,
}

impl std::fmt::Debug for Highlighter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Highlighter({} cached)", self.cache.len())
    }
}

impl Highlighter {
    /// Spans for `text` from file `path` under syntect theme `theme`; None
    /// when there is nothing to highlight with (unknown syntax or theme,
    /// long line) and the caller should draw plain text.
    pub fn line(&mut self, theme: &str, path: &str, text: &str) -> Option<Vec<Span<'static>>> {
        if text.chars().count() > MAX_LINE {
            return None;
        }
        let ext = path.rsplit('.').next().unwrap_or("").to_string();
        let key = (ext, text.to_string());
        if let Some(hit) = self.cache.get(&key) {
            return Some(to_spans(hit));
        }
        let ss = syntaxes();
        let syntax = ss.find_syntax_by_extension(&key.0)?;
        let th: &SynTheme = themes().themes.get(theme)?;
        let mut h = HighlightLines::new(syntax, th);
        let regions = h.highlight_line(text, ss).ok()?;
        let parts: Vec<(Color, String)> = regions
            .into_iter()
            .map(|(st, s)| {
                (
                    Color::Rgb(st.foreground.r, st.foreground.g, st.foreground.b),
                    s.to_string(),
                )
            })
            .collect();
        if self.cache.len() >= MAX_CACHE {
            self.cache.clear();
        }
        let spans = to_spans(&parts);
        self.cache.insert(key, parts);
        Some(spans)
    }

    pub fn cached(&self) -> usize {
        self.cache.len()
    }
}

fn to_spans(parts: &[(Color, String)]) -> Vec<Span<'static>> {
    parts
        .iter()
        .map(|(c, s)| Span::styled(s.clone(), Style::default().fg(*c)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_is_coloured_long_lines_and_unknown_files_are_not() {
        let mut h = Highlighter::default();
        let spans = h
            .line(
                "base16-ocean.dark",
                "src/lib.rs",
                "pub fn shout() -> String {",
            )
            .expect("rust highlights");
        assert!(spans.len() > 1);
        assert_eq!(h.cached(), 1);
        h.line(
            "base16-ocean.dark",
            "src/lib.rs",
            "pub fn shout() -> String {",
        );
        assert_eq!(h.cached(), 1, "a line is highlighted once");
        let long = "x".repeat(MAX_LINE + 1);
        assert!(h.line("base16-ocean.dark", "a.rs", &long).is_none());
        assert!(h.line("base16-ocean.dark", "a.unknownext", "x").is_none());
    }
}
