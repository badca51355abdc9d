//! Themes: semantic style names (`pass`, `selected`, `diff_add`…) loaded
//! from `themes/*.yaml` (compiled in). The code asks for meanings, never
//! colours. NO_COLOR drops every colour and keeps modifiers, so focus and
//! selection stay visible through reverse and bold. `screen` is the base
//! colour of every cell nothing else coloured: a theme that sets it (high
//! contrast) does not depend on the terminal's own background.

use crate::error::Error;
use rascal_core::config::theme::{StyleSpec, ThemeFile};
use ratatui::style::{Color, Modifier, Style};

const PRESETS: &[(&str, &str)] = &[
    ("dark", include_str!("../themes/dark.yaml")),
    ("light", include_str!("../themes/light.yaml")),
    (
        "high-contrast",
        include_str!("../themes/high-contrast.yaml"),
    ),
];

macro_rules! styles {
    ($($name:ident),* $(,)?) => {
        /// The semantic styles of the UI.
        #[derive(Debug, Clone, PartialEq)]
        pub struct Theme {
            pub name: String,
            /// syntect theme for diff highlighting; None without colour.
            pub syntax: Option<String>,
            $(pub $name: Style,)*
        }

        impl Theme {
            /// The names of the semantic styles (checked against the file schema).
            #[cfg(test)]
            const NAMES: &[&str] = &[$(stringify!($name)),*];

            fn from_file(f: ThemeFile) -> Result<Theme, Error> {
                Ok(Theme {
                    name: f.name,
                    syntax: Some(f.syntax),
                    $($name: style(&f.styles.$name).map_err(|e| Error::Theme(format!("style `{}`: {e}", stringify!($name))))?,)*
                })
            }

            /// The same theme without colours (NO_COLOR).
            pub fn without_color(mut self) -> Theme {
                $(self.$name.fg = None; self.$name.bg = None;)*
                self.syntax = None;
                self.selected = self.selected.add_modifier(Modifier::REVERSED | Modifier::BOLD);
                self.border_focus = self.border_focus.add_modifier(Modifier::BOLD);
                self.key = self.key.add_modifier(Modifier::REVERSED);
                self.diff_add_emph = self.diff_add_emph.add_modifier(Modifier::UNDERLINED);
                self.diff_del_emph = self.diff_del_emph.add_modifier(Modifier::UNDERLINED);
                self.fail = self.fail.add_modifier(Modifier::BOLD);
                self.search_match = self.search_match.add_modifier(Modifier::REVERSED);
                self
            }
        }
    };
}

rascal_core::with_style_names!(styles);

fn color(s: &str) -> Result<Color, Error> {
    if let Some(hex) = s.strip_prefix('#') {
        if hex.len() == 6 {
            if let Ok(v) = u32::from_str_radix(hex, 16) {
                return Ok(Color::Rgb((v >> 16) as u8, (v >> 8) as u8, v as u8));
            }
        }
        return Err(Error::Theme(format!("bad colour `{s}` (expected #rrggbb)")));
    }
    s.parse::<Color>().map_err(|_| {
        Error::Theme(format!(
            "unknown colour `{s}` (a colour name like lightred, or #rrggbb)"
        ))
    })
}

fn style(spec: &StyleSpec) -> Result<Style, Error> {
    let mut st = Style::default();
    if let Some(fg) = &spec.fg {
        st = st.fg(color(fg)?);
    }
    if let Some(bg) = &spec.bg {
        st = st.bg(color(bg)?);
    }
    for (on, m) in [
        (spec.bold, Modifier::BOLD),
        (spec.dim, Modifier::DIM),
        (spec.italic, Modifier::ITALIC),
        (spec.underline, Modifier::UNDERLINED),
        (spec.reverse, Modifier::REVERSED),
    ] {
        if on {
            st = st.add_modifier(m);
        }
    }
    Ok(st)
}

impl Theme {
    /// The names of the shipped themes.
    pub fn available() -> Vec<&'static str> {
        PRESETS.iter().map(|(n, _)| *n).collect()
    }

    /// A shipped theme by name; `no_color` applies NO_COLOR.
    pub fn named(name: &str, no_color: bool) -> Result<Theme, Error> {
        let text = PRESETS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                Error::Theme(format!(
                    "unknown theme `{name}`\n  hint: available themes: {}",
                    Theme::available().join(", ")
                ))
            })?;
        let theme =
            Theme::parse(text).map_err(|e| Error::Theme(format!("themes/{name}.yaml: {e}")))?;
        Ok(if no_color {
            theme.without_color()
        } else {
            theme
        })
    }

    /// Parse a theme file's text.
    pub fn parse(text: &str) -> Result<Theme, Error> {
        let file = rascal_core::config::theme::parse(text.as_bytes())
            .map_err(|e| Error::Theme(e.to_string()))?;
        Theme::from_file(file)
    }

    /// NO_COLOR is set (to anything non-empty).
    pub fn no_color_env() -> bool {
        std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
    }
}

impl Theme {
    /// Paint `screen`'s colours on every cell of `buf` still at the
    /// terminal's default colour (including what `Clear` reset).
    pub fn fill_screen(&self, buf: &mut ratatui::buffer::Buffer) {
        let (fg, bg) = (self.screen.fg, self.screen.bg);
        if fg.is_none() && bg.is_none() {
            return;
        }
        for cell in buf.content.iter_mut() {
            if let (Some(c), Color::Reset) = (fg, cell.fg) {
                cell.fg = c;
            }
            if let (Some(c), Color::Reset) = (bg, cell.bg) {
                cell.bg = c;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_theme_parses() {
        for n in Theme::available() {
            let t = Theme::named(n, false).unwrap();
            assert_eq!(t.name, n);
        }
    }

    #[test]
    fn the_theme_file_schema_has_exactly_the_themes_styles() {
        assert_eq!(Theme::NAMES, rascal_core::config::theme::STYLE_NAMES);
    }

    #[test]
    fn a_bad_colour_names_the_style() {
        let e = Theme::parse("name: t\nsyntax: x\nstyles:\n  pass: { fg: '#12' }\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("style `pass`: bad colour `#12`"), "{e}");
    }

    #[test]
    fn unknown_theme_lists_the_available_ones() {
        let e = Theme::named("solarized", false).unwrap_err().to_string();
        assert!(e.contains("unknown theme `solarized`"), "{e}");
        assert!(e.contains("dark, light, high-contrast"), "{e}");
    }

    #[test]
    fn no_color_keeps_selection_visible() {
        let t = Theme::named("dark", true).unwrap();
        assert_eq!(t.pass.fg, None);
        assert!(t.selected.add_modifier.contains(Modifier::REVERSED));
        assert!(t.syntax.is_none());
    }

    /// WCAG relative luminance of a colour; named colours as xterm draws
    /// them (terminals differ: the themes that must be exact use #rrggbb).
    fn luminance(c: Color) -> f64 {
        let (r, g, b) = match c {
            Color::Rgb(r, g, b) => (r, g, b),
            Color::Black => (0, 0, 0),
            Color::Red => (205, 0, 0),
            Color::Green => (0, 205, 0),
            Color::Yellow => (205, 205, 0),
            Color::Blue => (0, 0, 238),
            Color::Magenta => (205, 0, 205),
            Color::Cyan => (0, 205, 205),
            Color::Gray => (229, 229, 229),
            Color::DarkGray => (127, 127, 127),
            Color::LightRed => (255, 0, 0),
            Color::LightGreen => (0, 255, 0),
            Color::LightYellow => (255, 255, 0),
            Color::LightBlue => (92, 92, 255),
            Color::LightMagenta => (255, 0, 255),
            Color::LightCyan => (0, 255, 255),
            Color::White => (255, 255, 255),
            other => panic!("no RGB for {other:?} in the contrast test"),
        };
        let lin = |v: u8| {
            let v = v as f64 / 255.0;
            if v <= 0.04045 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
    }

    fn contrast(a: Color, b: Color) -> f64 {
        let (x, y) = (luminance(a), luminance(b));
        (x.max(y) + 0.05) / (x.min(y) + 0.05)
    }

    #[test]
    fn contrast_is_computed_as_wcag_says() {
        assert!((contrast(Color::Black, Color::White) - 21.0).abs() < 1e-9);
        assert!((contrast(Color::Rgb(0x77, 0x77, 0x77), Color::White) - 4.48).abs() < 0.01);
    }

    /// Every style of every shipped theme is readable where it is drawn:
    /// text at least 4.5:1 and borders 3:1 (WCAG AA) against its own
    /// background, or the screen's, or what the theme assumes of the
    /// terminal (dark: light grey on black; light: black on white). Text
    /// on added/removed lines is checked on their tints.
    #[test]
    fn every_theme_meets_the_contrast_minima() {
        let assumed = |name: &str| match name {
            "light" => (Color::Black, Color::White),
            _ => (Color::Rgb(229, 229, 229), Color::Black),
        };
        let mut bad = Vec::new();
        for name in Theme::available() {
            let t = Theme::named(name, false).unwrap();
            let (term_fg, term_bg) = assumed(name);
            let screen_fg = t.screen.fg.unwrap_or(term_fg);
            let screen_bg = t.screen.bg.unwrap_or(term_bg);
            let styles = [
                ("text", t.text),
                ("dim", t.dim),
                ("title", t.title),
                ("border", t.border),
                ("border_focus", t.border_focus),
                ("selected", t.selected),
                ("pass", t.pass),
                ("warn", t.warn),
                ("fail", t.fail),
                ("running", t.running),
                ("pending", t.pending),
                ("off", t.off),
                ("overridden", t.overridden),
                ("diff_add", t.diff_add),
                ("diff_del", t.diff_del),
                ("diff_hunk", t.diff_hunk),
                ("line_no", t.line_no),
                ("key", t.key),
                ("status_bar", t.status_bar),
                ("dialog", t.dialog),
                ("error", t.error),
                ("stderr", t.stderr),
                ("search_match", t.search_match),
                // Text drawn on the tints: the line's own colour, the
                // default colour, and the emphasised part.
                ("diff_add on its line", t.diff_add.patch(t.diff_add_line)),
                ("diff_del on its line", t.diff_del.patch(t.diff_del_line)),
                ("text on an added line", t.text.patch(t.diff_add_line)),
                ("text on a removed line", t.text.patch(t.diff_del_line)),
                ("diff_add emphasised", t.diff_add.patch(t.diff_add_emph)),
                ("diff_del emphasised", t.diff_del.patch(t.diff_del_emph)),
            ];
            for (style, st) in styles {
                assert!(
                    !st.add_modifier.contains(Modifier::DIM),
                    "{name} {style}: the DIM modifier makes contrast unknowable"
                );
                let mut fg = st.fg.unwrap_or(screen_fg);
                let mut bg = st.bg.unwrap_or(screen_bg);
                if st.add_modifier.contains(Modifier::REVERSED) {
                    std::mem::swap(&mut fg, &mut bg);
                }
                let min = if style.starts_with("border") {
                    3.0
                } else {
                    4.5
                };
                let c = contrast(fg, bg);
                if c < min {
                    bad.push(format!(
                        "{name} {style}: {fg:?} on {bg:?} is {c:.2}:1, under {min}:1"
                    ));
                }
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    #[test]
    fn high_contrast_sets_its_own_background_everywhere() {
        let t = Theme::named("high-contrast", false).unwrap();
        macro_rules! each {
            ($($n:ident),* $(,)?) => {
                $(assert!(t.$n.bg.is_some(), "high-contrast `{}` has no background", stringify!($n));)*
            };
        }
        rascal_core::with_style_names!(each);
        let mut buf = ratatui::buffer::Buffer::empty(ratatui::layout::Rect::new(0, 0, 3, 1));
        t.fill_screen(&mut buf);
        assert!(buf.content.iter().all(|c| c.bg == Color::Rgb(0, 0, 0)));
        // The others keep the terminal's own background.
        let mut buf = ratatui::buffer::Buffer::empty(ratatui::layout::Rect::new(0, 0, 3, 1));
        Theme::named("dark", false).unwrap().fill_screen(&mut buf);
        assert!(buf.content.iter().all(|c| c.bg == Color::Reset));
    }
}
